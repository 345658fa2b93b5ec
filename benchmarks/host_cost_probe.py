"""Where one small call's host time goes (issue #16 item 4), on a GPU: (1) the hunts' worst event-timed rows, host µs
per call ours against eager, and ours with every launch Site (launch_site.py) sent through launch() as before them,
interleaved in one process; (2) the anatomy of one cached launch: the
generated binder, the device and stream lookups, and the compiled kernel's launcher called with tensors against the
same call with the tensors' addresses as ints (Triton's C launcher calls data_ptr() and cuPointerGetAttribute for a
tensor, not for an int).

Usage (GPU): PYTHONPATH=.:benchmarks python benchmarks/host_cost_probe.py [--calls N] [--json PATH]
Host µs per call = wall time of N back-to-back calls (no sync between them) / N, best of 5.
"""

from __future__ import annotations

import argparse
import cProfile
import inspect
import io
import json
import pstats
from typing import Any
from collections.abc import Callable

import torch
import torch.nn.functional as F

from launch_profile import LaunchTimer, per_call_us
from rocm_triton_doctor.kernels import attention, gemm, launch as fast, launch_site, rmsnorm

BF, FP, F32 = torch.bfloat16, torch.float16, torch.float32


def hunt_rows(dev: torch.device) -> dict[str, tuple[Callable[[], Any], Callable[[], Any]]]:
    """name -> (ours, eager): H200 hunt seed 11's worst event-timed GEMM and attention rows, and a few more."""
    g = torch.Generator(device=dev).manual_seed(0)

    def r(*shape: int, dt: torch.dtype = BF) -> torch.Tensor:
        return torch.randn(shape, generator=g, device=dev).to(dt)

    out: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {}
    for M, K, N, dt, epi, bt in ((2, 184, 726, BF, "none", False), (42, 23, 6311, BF, "none", True),
                                 (201, 457, 20, BF, "bias", False), (46, 4584, 400, FP, "none", True),
                                 (350, 612, 53, BF, "bias", True), (1, 339, 898, FP, "bias_gelu", False),
                                 (64, 256, 128, FP, "bias_relu", False), (119, 20, 2851, F32, "none", False)):
        a = r(M, K, dt=dt)
        b = r(N, K, dt=dt).t() if bt else r(K, N, dt=dt)
        bias = r(N, dt=dt) if epi != "none" else None

        def ours(a: torch.Tensor = a, b: torch.Tensor = b, bias: Any = bias, epi: str = epi) -> Any:
            return gemm.gemm(a, b, bias, epi)

        def eager(a: torch.Tensor = a, b: torch.Tensor = b, bias: Any = bias, epi: str = epi) -> Any:
            return gemm.eager(a, b, bias, epi, 0.0)

        out[f"gemm {str(dt)[6:]} {M}x{K}x{N} {epi}{' B^T' if bt else ''}"] = (ours, eager)
    for B, H, Hk, S, D, causal in ((2, 16, 8, 83, 64, False), (2, 32, 1, 76, 64, True), (12, 8, 8, 351, 64, True),
                                   (4, 32, 32, 128, 128, False)):
        q, k, v = r(B, H, S, D), r(B, Hk, S, D), r(B, Hk, S, D)

        def ours_a(q: torch.Tensor = q, k: torch.Tensor = k, v: torch.Tensor = v, c: bool = causal) -> Any:
            return attention.attention(q, k, v, c)

        def eager_a(q: torch.Tensor = q, k: torch.Tensor = k, v: torch.Tensor = v, c: bool = causal) -> Any:
            return F.scaled_dot_product_attention(q, k, v, is_causal=c, enable_gqa=True)

        out[f"attention B{B} H{H}/{Hk} S{S} D{D}{' causal' if causal else ''}"] = (ours_a, eager_a)
    x, w = r(16, 4096), r(4096)
    out["rmsnorm 16x4096"] = (lambda: rmsnorm.rmsnorm(x, w), lambda: F.rms_norm(x, (4096,), w))
    return out


def capture(fn: Callable[[], Any]) -> list[tuple[Any, Any, tuple[Any, ...], dict[str, Any]]]:
    """The launches one call of fn makes through kernels.launch.launch: (kernel, grid, args, kwargs) each."""
    seen: list[tuple[Any, Any, tuple[Any, ...], dict[str, Any]]] = []
    timer = LaunchTimer()
    orig = timer.orig

    def spy(kernel: Any, grid: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append((kernel, grid, args, kwargs))
        return orig(kernel, grid, *args, **kwargs)

    timer.wrapped = spy
    gemm.clear_plans()  # fresh launch Sites: their first call goes through launch()
    attention.clear_plans()
    with timer:
        fn()
    torch.cuda.synchronize()
    return seen


def legacy_sites() -> Any:
    """Site.__call__ as if every call went through launch() (the path before launch sites), to restore after."""
    orig = launch_site.Site.__call__
    launch_site.Site.__call__ = lambda self, *dyn: self.through_launch(dyn)  # type: ignore[method-assign]
    return orig


def anatomy(name: str, fn: Callable[[], Any], n: int) -> dict[str, Any]:
    """Host µs of the parts of the first launch fn makes, each called n times back to back."""
    kernel, grid, args, kwargs = capture(fn)[0]
    plan = fast._PLANS[id(kernel)]
    rt = fast._RT
    drv = rt.driver.active
    device = drv.get_current_device()
    be = plan.backends[device]
    vals, k = plan.binders[be[1]](*args, _rtd_be=be[0], **kwargs)
    key = (device, tuple([getattr(s, a) for s, a in rt.knob_reads]), plan.fn.debug, k)
    run, function, packed, ck = plan.cache[key]
    stream = drv.get_current_stream(device)
    g3 = (grid[0], grid[1] if len(grid) > 1 else 1, grid[2] if len(grid) > 2 else 1)
    ints = tuple(v.data_ptr() if isinstance(v, torch.Tensor) else v for v in vals)
    row = {
        "launch()": per_call_us(lambda: fast.launch(kernel, grid, *args, **kwargs), n),
        "binder": per_call_us(lambda: plan.binders[be[1]](*args, _rtd_be=be[0], **kwargs), n),
        "device+stream": per_call_us(lambda: drv.get_current_stream(drv.get_current_device()), n),
        "run(tensors)": per_call_us(lambda: run(*g3, stream, function, packed, None, None, None, *vals), n),
        "run(ints)": per_call_us(lambda: run(*g3, stream, function, packed, None, None, None, *ints), n),
        "data_ptr x tensors": per_call_us(lambda: [v.data_ptr() for v in vals if isinstance(v, torch.Tensor)], n),
        "args": len(vals), "tensors": sum(isinstance(v, torch.Tensor) for v in vals),
    }
    return {"name": name, "kernel": kernel.fn.__name__, **{k2: round(v, 2) if isinstance(v, float) else v
                                                          for k2, v in row.items()}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--json")
    a = ap.parse_args()
    dev = torch.device("cuda")
    import triton

    print(f"torch {torch.__version__} triton {triton.__version__} {torch.cuda.get_device_name(0)}", flush=True)
    rows, anat, profiles = [], [], {}
    with torch.no_grad():
        calls = hunt_rows(dev)
        for name, (ours, eager) in calls.items():
            for _ in range(10):
                ours()
                eager()
            torch.cuda.synchronize()
            # interleaved A/B in one process (the host's load moves between runs): Sites against launch() only
            o = old = e = float("inf")
            for _ in range(3):
                e = min(e, per_call_us(eager, a.calls))
                o = min(o, per_call_us(ours, a.calls))
                keep = legacy_sites()
                try:
                    old = min(old, per_call_us(ours, a.calls))
                finally:
                    launch_site.Site.__call__ = keep  # type: ignore[method-assign]
            launches = len(capture(ours))
            for _ in range(3):
                ours()
            rows.append({"name": name, "ours_us": round(o, 1), "no_sites_us": round(old, 1), "eager_us": round(e, 1),
                         "launches": launches})
            print(rows[-1], flush=True)
        for name in ("gemm bfloat16 2x184x726 none", "attention B2 H16/8 S83 D64", "gemm float16 64x256x128 bias_relu"):
            pr = cProfile.Profile()
            pr.enable()
            for _ in range(200):
                calls[name][0]()
            pr.disable()
            torch.cuda.synchronize()
            s = io.StringIO()
            pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(16)
            profiles[name] = s.getvalue()
        for name in ("rmsnorm 16x4096", "gemm float16 64x256x128 bias_relu", "attention B4 H32/32 S128 D128",
                     "gemm bfloat16 2x184x726 none"):
            try:
                anat.append(anatomy(name, calls[name][0], a.calls))
            except Exception as exc:  # noqa: BLE001 - a diagnostic: report and go on
                anat.append({"name": name, "error": f"{type(exc).__name__}: {exc}"[:200]})
            print(anat[-1], flush=True)
    run = fast._PLANS[id(rmsnorm.rmsnorm_kernel)]
    launcher_src = ""
    if run is not None and run.cache:
        ck = next(iter(run.cache.values()))[3]
        launcher_src = inspect.getsource(type(ck.run).__call__)
    print(launcher_src)
    for name, text in profiles.items():
        print(f"--- cProfile {name} (200 calls)\n{text}")
    print(f"{'call':42} {'ours':>7} {'no Site':>8} {'eager':>7} {'n':>3}  (host us per call)")
    for r in rows:
        print(f"{r['name']:42} {r['ours_us']:7.1f} {r['no_sites_us']:8.1f} {r['eager_us']:7.1f} {r['launches']:3}")
    print(f"{'anatomy':36} " + " ".join(f"{k:>14}" for k in ("launch()", "binder", "device+stream", "run(tensors)",
                                                               "run(ints)", "data_ptr x tensors")))
    for r in anat:
        if "error" not in r:
            print(f"{r['name']:36} " + " ".join(f"{r[k]:14.2f}" for k in ("launch()", "binder", "device+stream",
                                                                          "run(tensors)", "run(ints)",
                                                                          "data_ptr x tensors")))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "triton": triton.__version__,
                       "rows": rows, "anatomy": anat, "launcher_src": launcher_src, "profiles": profiles}, f, indent=1)


if __name__ == "__main__":
    main()
