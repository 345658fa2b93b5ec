"""Where the host time of one training step goes (issue #17: at the tiny-llama size the step is host-bound), per form:
the step's enqueue time (host, no sync) beside its total (synchronised), the kernel launches and host syncs per step
(torch.profiler), the ops with the most host time, and for the `ours` form a cProfile of our Python.

Usage (GPU): python benchmarks/model_profile.py [--preset tiny-llama] [--forms sdpa,liger,ours] [--dtypes float32,bfloat16]
             [--json PATH] [--cprofile N]
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import pstats
import sys
import time
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rocm_triton_doctor.smoke import model as M  # noqa: E402
from rocm_triton_doctor.smoke import model_forms as mf  # noqa: E402

LAUNCH_NAMES = ("cudaLaunchKernel", "cuLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernelEx", "hipLaunchKernel",
                "hipModuleLaunchKernel", "hipExtModuleLaunchKernel")
SYNC_NAMES = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "hipStreamSynchronize",
              "hipDeviceSynchronize")


def profile_form(name: str, preset: str, dtype: str, cprof: int) -> dict[str, Any]:
    dev = torch.device("cuda")
    cfg = mf.PRESETS[preset]
    form = M.FORMS[name]
    torch.manual_seed(0)
    with dev:
        model = mf.TinyLlama(cfg, form.ops())
    opt = M.make_optimizer(form.optimizer, model.parameters(), cfg.lr)
    torch._dynamo.reset()
    fn = model if form.compile_mode is None else torch.compile(model, fullgraph=True, mode=form.compile_mode)
    batches = [(x.to(dev), y.to(dev)) for x, y in mf.make_batches(cfg, 4, 0)]
    amp = torch.autocast("cuda", dtype=getattr(torch, dtype)) if dtype != "float32" else contextlib.nullcontext()

    def step(i: int) -> None:
        M.train_step(torch, form, fn, opt, amp, *batches[i % len(batches)])

    for i in range(8 if form.compile_mode else 5):
        step(i)
    torch.cuda.synchronize()
    enq, tot = [], []
    for i in range(10):
        t0 = time.perf_counter()
        step(i)
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        enq.append((t1 - t0) * 1e3)
        tot.append((t2 - t0) * 1e3)
    enq.sort()
    tot.sort()
    r: dict[str, Any] = {"form": name, "dtype": dtype, "enqueue_ms_p50": round(enq[5], 3), "total_ms_p50": round(tot[5], 3)}
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for i in range(2):
            step(i)
        torch.cuda.synchronize()
    ev = prof.key_averages()
    launches = sum(e.count for e in ev if e.key in LAUNCH_NAMES) / 2
    syncs = {e.key: e.count / 2 for e in ev if e.key in SYNC_NAMES or "Memcpy" in e.key}
    gpu_us = sum(getattr(e, "self_device_time_total", getattr(e, "self_cuda_time_total", 0)) for e in ev
                 if getattr(e, "device_type", None) is not None and "CUDA" in str(e.device_type)) / 2
    r.update(launches_per_step=launches, syncs_per_step=syncs, gpu_kernel_ms=round(gpu_us / 1e3, 3))
    def dev_us(e: Any) -> float:
        return float(getattr(e, "self_device_time_total", getattr(e, "self_cuda_time_total", 0)))

    kern = sorted((e for e in ev if dev_us(e) > 0 and e.self_cpu_time_total == 0), key=dev_us, reverse=True)[:30]
    r["top_gpu"] = [(e.key[:90], e.count // 2, round(dev_us(e) / 2 / 1e3, 4)) for e in kern]
    top = sorted(ev, key=lambda e: e.self_cpu_time_total, reverse=True)[:25]
    r["top_cpu"] = [(e.key, e.count // 2, round(e.self_cpu_time_total / 2 / 1e3, 3)) for e in top]
    if cprof:
        pr = cProfile.Profile()
        torch.cuda.synchronize()
        pr.enable()
        for i in range(cprof):
            step(i)
        pr.disable()
        torch.cuda.synchronize()
        s = io.StringIO()
        pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(40)
        r["cprofile_tottime"] = s.getvalue()
        s = io.StringIO()
        pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(60)
        r["cprofile_cumulative"] = s.getvalue()
    return r


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="tiny-llama")
    ap.add_argument("--forms", default="sdpa,liger,ours")
    ap.add_argument("--dtypes", default="float32,bfloat16")
    ap.add_argument("--json")
    ap.add_argument("--cprofile", type=int, default=3)
    ap.add_argument("--gpu-top", type=int, default=0, help="print the N kernels with the most GPU time per form")
    a = ap.parse_args()
    rows = []
    for dt in a.dtypes.split(","):
        for f in a.forms.split(","):
            try:
                r = profile_form(f, a.preset, dt, a.cprofile if f == "ours" else 0)
            except Exception as exc:  # noqa: BLE001 - a form that cannot run here (liger not installed) is reported
                r = {"form": f, "dtype": dt, "error": f"{type(exc).__name__}: {exc}"}
            rows.append(r)
            if "top_cpu" in r:
                print(f"\n== {f} {dt}: top host ops (name, calls/step, self ms/step)")
                for k, c, ms in r["top_cpu"][:15]:
                    print(f"  {ms:8.3f} ms  {c:5d}x  {k}")
            if "top_gpu" in r and a.gpu_top:
                print(f"\n== {f} {dt}: top GPU kernels (name, calls/step, device ms/step)")
                for k, c, ms in r["top_gpu"][:a.gpu_top]:
                    print(f"  {ms:8.4f} ms  {c:5d}x  {k}")
            if "cprofile_tottime" in r:
                print(r["cprofile_tottime"][:6000])
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    print("\nform     dtype     enqueue ms  total ms  gpu-kernel ms  launches/step  syncs/step")
    for r in rows:
        if "error" in r:
            print(f"{r['form']:8} {r['dtype']:9} {r['error'][:80]}")
            continue
        print(f"{r['form']:8} {r['dtype']:9} {r['enqueue_ms_p50']:10.2f} {r['total_ms_p50']:9.2f} {r['gpu_kernel_ms']:13.2f}"
              f" {r['launches_per_step']:14.0f}  {r['syncs_per_step']}")


if __name__ == "__main__":
    main()
