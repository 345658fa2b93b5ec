"""Where the host time of one kernel call goes, on a GPU (issue #16 item 4): ours against eager, split into
Triton's JITFunction.run and everything else (our checks, policy, allocation), plus a cProfile of the heaviest calls.

Usage (GPU): python benchmarks/launch_profile.py [--calls N] [--json PATH] [--profile NAME,...]
Host µs per call = wall time of N back-to-back calls (no sync between them) / N, on shapes whose GPU time is a few
µs, so the host is the bottleneck. "triton" is the time spent inside JITFunction.run (binding, cache key, launch),
"launch" the time inside kernels.launch.launch (its cached path; a miss or a fallback also counts the JITFunction.run
inside it), "other" = ours - the larger of the two: our checks, policy and allocation.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import io
import json
import pstats
import sys
import time
from pathlib import Path
from typing import Any
from collections.abc import Callable

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))


def calls(dev: torch.device) -> dict[str, tuple[Callable[[], Any], Callable[[], Any] | None]]:
    """name -> (ours, eager) on tiny inputs (GPU time of a few µs)."""
    import torch.nn.functional as F

    from rocm_triton_doctor.kernels import (add_mul, attention, bias_gelu_dropout_residual, gemm, layernorm, rmsnorm,
                                            softmax, swiglu)

    g = torch.Generator(device=dev).manual_seed(0)
    bf = torch.bfloat16

    def r(*shape: int, dt: torch.dtype = bf) -> torch.Tensor:
        return torch.randn(shape, generator=g, device=dev).to(dt)

    x, w, b = r(16, 4096), r(4096), r(4096)
    a16, b16, bias16 = r(64, 256, dt=torch.float16), r(256, 128, dt=torch.float16), r(128, dt=torch.float16)
    a1k, b1k = r(1024, 1024), r(1024, 1024)
    d1, dw = r(8, 4096), r(4096, 4096)
    e1, e2, e3 = r(1 << 16), r(1 << 16), r(1 << 16)
    h, res, hb = r(1, 16, 4096), r(1, 16, 4096), r(4096)
    sa, sb = r(16, 11008), r(16, 11008)
    q = r(1, 4, 128, 64)
    q128 = r(4, 32, 128, 128)
    dq, dk, sq, sk = r(1, 32, 1, 128), r(1, 8, 4096, 128), r(1, 32, 128, 128), r(1, 8, 8192, 128)
    return {
        "gemm 64x256x128 fp16 bias_relu": (lambda: gemm.gemm(a16, b16, bias16, "bias_relu"),
                                           lambda: torch.relu(torch.addmm(bias16, a16, b16))),
        "gemm 1024^3 bf16": (lambda: gemm.gemm(a1k, b1k), lambda: a1k @ b1k),
        "gemm 8x4096x4096 bf16": (lambda: gemm.gemm(d1, dw), lambda: d1 @ dw),
        "add_mul 64k bf16": (lambda: add_mul.add_mul(e1, e2, e3), lambda: (e1 + e2) * e3),
        "bgdr 16x4096 p=0.1": (lambda: bias_gelu_dropout_residual.bias_gelu_dropout_residual(h, hb, res, 0.1),
                               lambda: F.dropout(F.gelu(h + hb, approximate="tanh"), 0.1) + res),
        "rmsnorm 16x4096": (lambda: rmsnorm.rmsnorm(x, w), lambda: F.rms_norm(x, (4096,), w)),
        "layernorm 16x4096": (lambda: layernorm.layernorm(x, w, b), lambda: F.layer_norm(x, (4096,), w, b)),
        "softmax 16x4096": (lambda: softmax.softmax(x), lambda: torch.softmax(x, -1)),
        "swiglu 16x11008": (lambda: swiglu.swiglu(sa, sb), lambda: F.silu(sa) * sb),
        "attention 1x4x128x64 causal": (lambda: attention.attention(q, q, q, True),
                                        lambda: F.scaled_dot_product_attention(q, q, q, is_causal=True)),
        "attention 4x32x128x128": (lambda: attention.attention(q128, q128, q128),
                                   lambda: F.scaled_dot_product_attention(q128, q128, q128)),
        # decode against a key cache: the split-key path (attention_split.py: two kernels and two scratch buffers)
        "attention decode 1x32/8 Sk4096": (lambda: attention.attention(dq, dk, dk),
                                           lambda: F.scaled_dot_product_attention(dq, dk, dk, enable_gqa=True)),
        "attention split 1x32/8 Sq128 Sk8192": (lambda: attention.attention(sq, sk, sk),
                                                lambda: F.scaled_dot_product_attention(sq, sk, sk, enable_gqa=True)),
        "rmsnorm autograd op 16x4096": (lambda: rmsnorm.autograd_op(x, w, 1e-6), None),
        "rmsnorm custom op 16x4096": (lambda: rmsnorm.custom_op_form(x, w, 1e-6), None),
        **_launch_rows(x, w),
    }


def _launch_rows(x: torch.Tensor, w: torch.Tensor) -> dict[str, tuple[Callable[[], Any], Callable[[], Any] | None]]:
    """The rmsnorm kernel launched with nothing of ours around it: kernel[grid](...) (Triton's JITFunction.run) against
    kernels.launch.launch (its compiled-kernel cache); `eager` is the bare kernel[grid] call, for the ratio."""
    from rocm_triton_doctor.kernels import launch as fast, rmsnorm, rows

    L = rows.prepare("rmsnorm", x, {"weight": w}, None)
    k, cfg = rmsnorm.rmsnorm_kernel, dict(L.cfg, DIV=L.div)
    args = (x, w, L.out, *L.args, w.stride(0), 1e-6)

    def triton_path() -> None:
        k[L.grid](*args, **cfg, rstd_ptr=None, STATS=False)

    def fast_path() -> None:
        fast.launch(k, L.grid, *args, **cfg, rstd_ptr=None, STATS=False)

    return {"rmsnorm kernel[grid] only": (triton_path, None), "rmsnorm launch() only": (fast_path, triton_path)}


class LaunchTimer:
    """Accumulates the wall time spent inside kernels.launch.launch (the fast path, or Triton's on a miss), patched
    into every kernel module that imported it."""

    def __init__(self) -> None:
        import importlib

        from rocm_triton_doctor import kernels
        from rocm_triton_doctor.kernels import launch as fast

        self.orig = fast.launch
        self.mods = [m for m in (importlib.import_module(f"rocm_triton_doctor.kernels.{s.name}") for s in kernels.REGISTRY)
                     if getattr(m, "launch", None) is self.orig] + [fast]  # launch_site.Site calls fast.launch
        self.total = 0.0
        timer = self

        def launch(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return timer.orig(*args, **kwargs)
            finally:
                timer.total += time.perf_counter() - t0

        self.wrapped = launch

    def __enter__(self) -> LaunchTimer:
        self.total = 0.0
        for m in self.mods:
            m.launch = self.wrapped  # type: ignore[attr-defined]
        return self

    def __exit__(self, *exc: Any) -> None:
        for m in self.mods:
            m.launch = self.orig  # type: ignore[attr-defined]


class TritonTimer:
    """Accumulates the wall time spent inside triton.runtime.jit.JITFunction.run."""

    def __init__(self) -> None:
        from triton.runtime.jit import JITFunction

        self.cls = JITFunction
        self.orig = JITFunction.run
        self.total = 0.0
        timer = self

        def run(self_: Any, *args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return timer.orig(self_, *args, **kwargs)
            finally:
                timer.total += time.perf_counter() - t0

        self.wrapped = run

    def __enter__(self) -> TritonTimer:
        self.total = 0.0
        self.cls.run = self.wrapped  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: Any) -> None:
        self.cls.run = self.orig  # type: ignore[method-assign]


def per_call_us(fn: Callable[[], Any], n: int) -> float:
    best = float("inf")
    for _ in range(5):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t1 = time.perf_counter()  # host time only: the queue drains afterwards
        torch.cuda.synchronize()
        best = min(best, (t1 - t0) / n * 1e6)
    return best


def gemm_probe() -> list[dict[str, Any]]:
    """GPU time (graph replay) of a few GEMM shapes the sweep found slow, under the policy config and split-K
    overrides, against torch.matmul: a first look for the GEMM work."""
    from triton.testing import do_bench_cudagraph

    from rocm_triton_doctor.kernels import gemm, policy

    dev = torch.device("cuda")
    t = policy.target_for_device("cuda")
    out = []
    for M, K, N, dt in ((8, 4096, 4096, torch.bfloat16), (1, 4096, 4096, torch.bfloat16), (16, 4096, 4096, torch.bfloat16),
                        (1000, 1000, 1000, torch.float16), (1024, 1024, 1024, torch.float16),
                        (4096, 128, 4096, torch.bfloat16)):
        a = torch.randn(M, K, device=dev, dtype=dt)
        b = torch.randn(K, N, device=dev, dtype=dt)
        ref = (a.float() @ b.float())
        base = policy.gemm_config(t, M, N, K, a.element_size())
        keys = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "SPLIT_K", "num_stages")
        variants: list[tuple[str, Any]] = [("policy " + str({k: base[k] for k in keys}), None)]
        if M <= 16:
            for sk in (1, 2, 8):
                variants.append((f"split {sk}", {**base, "SPLIT_K": sk}))
        cub = do_bench_cudagraph(lambda: a @ b, rep=20)
        for label, cfg in variants:
            try:
                fn = functools.partial(gemm.gemm, a, b, config=cfg)
                err = float(((fn().float() - ref).abs().max() / ref.abs().max()).item())
                us = do_bench_cudagraph(fn, rep=20) * 1e3
                out.append({"shape": f"{M}x{K}x{N} {dt}", "variant": label, "us": round(us, 2),
                            "cublas_us": round(cub * 1e3, 2), "x_cublas": round(cub * 1e3 / us, 3), "rel_err": err})
            except Exception as exc:  # noqa: BLE001
                out.append({"shape": f"{M}x{K}x{N} {dt}", "variant": label, "error": str(exc)[:160]})
            print(out[-1], flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--probe-only", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--profile", default="gemm 1024^3 bf16,rmsnorm 16x4096,attention 4x32x128x128,bgdr 16x4096 p=0.1")
    a = ap.parse_args()
    dev = torch.device("cuda")
    import triton

    print(f"torch {torch.__version__} triton {triton.__version__} {torch.cuda.get_device_name(0)}", flush=True)
    rows: dict[str, Any] = {}
    profiles: dict[str, str] = {}
    with torch.no_grad():
        for name, (ours, eager) in ({} if a.probe_only else calls(dev)).items():
            try:
                for _ in range(20):
                    ours()
                torch.cuda.synchronize()
                total = per_call_us(ours, a.calls)
                with TritonTimer() as tt:
                    for _ in range(a.calls):
                        ours()
                    torch.cuda.synchronize()
                triton_us = tt.total / a.calls * 1e6
                with LaunchTimer() as lt:  # kernels.launch: its hits never enter JITFunction.run
                    for _ in range(a.calls):
                        ours()
                    torch.cuda.synchronize()
                launch_us = lt.total / a.calls * 1e6
                e = per_call_us(eager, a.calls) if eager else None
                rows[name] = {"ours_us": round(total, 1), "triton_run_us": round(triton_us, 1),
                              "launch_us": round(launch_us, 1), "ours_other_us": round(total - max(triton_us, launch_us), 1),
                              "eager_us": round(e, 1) if e else None}
            except Exception as exc:  # noqa: BLE001 - a diagnostic: report and go on
                rows[name] = {"error": f"{type(exc).__name__}: {exc}"[:200]}
            print(name, rows[name], flush=True)
            if name in a.profile.split(",") and "error" not in rows[name]:
                pr = cProfile.Profile()
                pr.enable()
                for _ in range(200):
                    ours()
                pr.disable()
                torch.cuda.synchronize()
                s = io.StringIO()
                pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(14)
                profiles[name] = s.getvalue()
    probe = gemm_probe()
    for name, text in profiles.items():
        print(f"\n==== cProfile (200 calls, by tottime): {name}")
        print("\n".join(line for line in text.splitlines() if line.strip())[:3500])
    print(f"\n{'call':34} {'ours':>7} {'triton':>7} {'launch':>7} {'other':>7} {'eager':>7}  (host us per call)")
    for name, r in rows.items():
        if "error" in r:
            print(f"{name:34} {r['error']}")
        else:
            print(f"{name:34} {r['ours_us']:7.1f} {r['triton_run_us']:7.1f} {r['launch_us']:7.1f} {r['ours_other_us']:7.1f} "
                  f"{r['eager_us'] if r['eager_us'] is not None else '-':>7}")
    if a.json:
        Path(a.json).write_text(json.dumps({"rows": rows, "profiles": profiles, "gemm_probe": probe}, indent=1))


if __name__ == "__main__":
    main()
