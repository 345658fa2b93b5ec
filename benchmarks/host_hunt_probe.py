"""Session 29: host time of the GEMM calls hunt 23 found slowest event-timed (do_bench, no graphs): fp16 58x2262x1858
bias_relu took 221 µs a call event-timed against 13.7 µs of GPU time. Host µs per call (back-to-back calls, no sync
between them, best of 5) for ours (twice, around the next arm), ours with the plan's aligned copies sent through
launch() as before session 29's CopyPlan, and eager; how many kernel launches one call makes, and a cProfile of ours.

    PYTHONPATH=.:benchmarks python benchmarks/host_hunt_probe.py [--calls 200] [--json PATH]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import sys
from typing import Any

import torch
import triton

from launch_profile import per_call_us
from rocm_triton_doctor.kernels import gemm
from rocm_triton_doctor.kernels.aligned_copy import CopyPlan, aligned_copy
from rocm_triton_doctor.kernels.gemm_cases import make_case

DT = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
# hunt 23's (docs/measurements/2026-11-29-h200-s28-hunt23.json) GEMM rows whose event time passed the GPU time by
# more than 30 µs, and one small row as the floor: (dtype, M, K, N, epilogue, B^T)
ROWS = [("fp16", 58, 2262, 1858, "bias_relu", False), ("fp16", 887, 480, 2090, "none", False),
        ("fp16", 21, 2214, 907, "none", False), ("bf16", 59, 249, 2844, "bias", False),
        ("bf16", 70, 3051, 87, "bias_gelu", False), ("fp16", 437, 203, 23274, "none", False),
        ("fp16", 77, 830, 15423, "none", True), ("bf16", 3, 3466, 4385, "none", True),
        ("fp32", 452, 196, 6217, "bias_relu", False), ("fp16", 2, 97, 37, "bias", True)]


class Launches:
    """Counts calls of CompiledKernel.run-like launchers: every Triton launch goes through JITFunction.run or a
    launch Site's compiled-kernel call; counting the driver's launch function catches both."""

    def __init__(self) -> None:
        self.n = 0

    def __enter__(self) -> Launches:
        from triton.backends.nvidia import driver

        self.cls = driver.CudaLauncher
        self.orig = self.cls.__call__
        me = self

        def call(s: Any, *a: Any, **k: Any) -> Any:
            me.n += 1
            return me.orig(s, *a, **k)

        self.cls.__call__ = call  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: Any) -> None:
        self.cls.__call__ = self.orig  # type: ignore[method-assign]


def describe(plan: Any) -> dict[str, Any]:
    return {"copy_a": plan.copy_a is not None, "copy_b": plan.copy_b is not None,
            "parts": [{"rows": (p.lo, p.hi), "split": p.split, "kernel": getattr(p.kern, "__name__", str(p.kern)),
                       "grid": p.grid, "kw": {k: v for k, v in p.kw.items() if k.isupper() or k.startswith("num_")}}
                      for p in plan.parts]}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--json")
    args = ap.parse_args()
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(0)
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, triton {triton.__version__}", flush=True)
    out = []
    for dt, M, K, N, epi, bt in ROWS:
        case = make_case(M, K, N, DT[dt], epi, transposed_b=bt)
        x = case.setup(dev, gen)

        def ours(c: Any = case, xx: Any = x) -> Any:
            return c.run(xx, None)

        def eager(c: Any = case, xx: Any = x) -> Any:
            return c.eager(xx)

        ours()
        eager()
        torch.cuda.synchronize()
        row: dict[str, Any] = {"name": case.name, "ours_us": per_call_us(ours, args.calls),
                               "eager_us": per_call_us(eager, args.calls)}
        # A/B in this process: the plan's copies through launch() (aligned_copy) as before session 29's CopyPlan
        orig = CopyPlan.__call__
        CopyPlan.__call__ = lambda self, t: aligned_copy(t)  # type: ignore[method-assign]
        try:
            ours()
            row["ours_copies_via_launch_us"] = per_call_us(ours, args.calls)
        finally:
            CopyPlan.__call__ = orig  # type: ignore[method-assign]
        row["ours_again_us"] = per_call_us(ours, args.calls)
        try:
            with Launches() as counter:
                ours()
            row["launches"] = counter.n
        except Exception as exc:  # noqa: BLE001 - a count is a nicety
            row["launches"] = f"n/a: {exc}"[:80]
        key = (DT[dt], DT[dt], M, N, K)
        row["plan"] = [describe(p) for k, p in gemm._PLANS.items() if k[1:6] == key][:1]
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(args.calls):
            ours()
        prof.disable()
        torch.cuda.synchronize()
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(14)
        row["profile"] = s.getvalue()[-4000:]
        out.append(row)
        print(f"{case.name:40s} ours {row['ours_us']:7.1f} / {row['ours_again_us']:7.1f} us  copies via launch() "
              f"{row['ours_copies_via_launch_us']:7.1f} us  eager {row['eager_us']:6.1f} us  launches {row['launches']}",
              flush=True)
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                           "triton": triton.__version__, "rows": out}, fh, indent=1)
    for row in out[:3]:
        print(f"\n== {row['name']}\n{row['profile'][-2500:]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
