"""Session 31: what a backward costs besides its kernel — the parameter sums after the row backwards, and host time.

--set sums: the row backwards (LayerNorm, RMSNorm, bias+GELU+residual) with their (G, N) fp32 partial rows summed
  by row_grads.param_sums (one launch) against torch's `p.sum(0).to(dtype)` (two launches a buffer), A/B in one
  process: the backward alone in GPU time (CUDA-graph replay of autograd.grad with the graph retained), forward +
  backward x the best of eager autograd and Liger, and host us per backward call.
--set host: small training calls of every op with a backward, host us per forward + backward call (back-to-back,
  no sync between calls, best of 5) for ours, eager autograd and Liger; how many Triton launches ours makes; a
  cProfile of ours (the three slowest printed).

    PYTHONPATH=/tmp/site:.:benchmarks python benchmarks/backward_host_probe.py --set sums|host [--json PATH]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import sys
import types
from typing import Any
from collections.abc import Callable

import torch
import triton
from triton.testing import do_bench_cudagraph

import backward_hunt as bh
from launch_profile import per_call_us
from rocm_triton_doctor.kernels import attention_backward, row_grads

SUMS_ROWS = [("layernorm", "fp16", 967, 60), ("layernorm", "fp16", 1322, 451), ("layernorm", "fp16", 417, 2948),
             ("layernorm", "bf16", 1, 25672), ("layernorm", "fp32", 8, 3466), ("layernorm", "bf16", 4096, 4096),
             ("layernorm", "fp32", 8192, 8192), ("layernorm", "bf16", 16, 152064), ("layernorm", "bf16", 50000, 64),
             ("rmsnorm", "fp16", 967, 60), ("rmsnorm", "bf16", 4096, 4096), ("rmsnorm", "bf16", 2, 152064),
             ("rmsnorm", "bf16", 992949, 39), ("rmsnorm", "fp32", 3, 164034)]
GELU_ROWS = [("bf16", 4096, 3072), ("fp16", 97, 300), ("fp32", 20000, 1000)]
HOST_ROWS: list[tuple[str, Callable[[], bh.Draw]]] = [
    ("rmsnorm bf16 8x4096", lambda: bh.row_problem("rmsnorm", "bf16", 8, 4096)),
    ("layernorm fp32 8x3466", lambda: bh.row_problem("layernorm", "fp32", 8, 3466)),
    ("layernorm bf16 64x1024", lambda: bh.row_problem("layernorm", "bf16", 64, 1024)),
    ("softmax bf16 64x1000", lambda: bh.row_problem("softmax", "bf16", 64, 1000)),
    ("swiglu bf16 16x11008", lambda: bh.row_problem("swiglu", "bf16", 16, 11008)),
    ("bias_gelu bf16 32x3072", lambda: gelu_draw("bf16", 32, 3072)),
    ("attention bf16 B1 H8 S128 D64 causal", lambda: attention_draw(1, 8, 128, 64, True)),
    ("gemm bf16 16x4096x4096 bias", lambda: gemm_draw("bf16", 16, 4096, 4096, "bias")),
]


def gelu_draw(dts: str, m: int, n: int) -> bh.Draw:
    from rocm_triton_doctor.kernels import bias_gelu_dropout_residual as bg
    import torch.nn.functional as F
    dt = bh.DT[dts]
    return bh.Draw(f"bias_gelu_residual {dts} {m}x{n}", dt, [bh._t((m, n), dt), bh._t((n,), dt), bh._t((m, n), dt)],
                   lambda x, b, res: bg.bias_gelu_dropout_residual_autograd(x, b, res, 0.0),
                   lambda x, b, res: res + F.gelu(x + b, approximate="tanh"))


def attention_draw(b: int, h: int, s: int, d: int, causal: bool) -> bh.Draw:
    from rocm_triton_doctor.kernels import attention
    import torch.nn.functional as F
    dt = torch.bfloat16
    mk = bh._t((b, h, s, d), dt)
    return bh.Draw(f"attention bf16 B{b} H{h} S{s} D{d}", dt, [mk, mk, mk],
                   lambda q, k, v: attention.autograd_op(q, k, v, causal),
                   lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal))


def gemm_draw(dts: str, m: int, k: int, n: int, epi: str) -> bh.Draw:
    from rocm_triton_doctor.kernels import gemm, gemm_autograd
    dt = bh.DT[dts]
    return bh.Draw(f"gemm {dts} {m}x{k}x{n} {epi}", dt, [bh._t((m, k), dt), bh._t((k, n), dt, t=True), bh._t((n,), dt)],
                   lambda a, b, c: gemm_autograd.gemm_autograd(a, b, c, epi),
                   lambda a, b, c: gemm.eager(a, b, c, epi, 0.0))


def old_stats(M: int, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """LayerNorm's statistics buffers before session 31: filled (two launches a forward)."""
    return (torch.zeros(M, dtype=torch.float32, device=x.device),
            torch.full((M,), 1e-5 ** -0.5, dtype=torch.float32, device=x.device))


class arms:
    """A/B arms in one process: "fused"/"new" (this tree), "torch" (torch's sums), "old" (torch's sums, no backward
    plans (rows and attention), LayerNorm's filled statistics: the code before session 31)."""

    def __init__(self, arm: str) -> None:
        self.arm = arm

    def __enter__(self) -> None:
        from rocm_triton_doctor.kernels import call_plans, layernorm
        self.saved = (row_grads.param_sums, row_grads.PLANNED, layernorm._stats)
        call_plans.clear()
        if self.arm in ("torch", "old"):
            row_grads.param_sums = torch_sums  # type: ignore[assignment]
        if self.arm == "old":
            row_grads.PLANNED = False
            layernorm._stats = old_stats  # type: ignore[assignment]
            attention_backward.call_plans = types.SimpleNamespace(signature=lambda *a: None)  # type: ignore[assignment]

    def __exit__(self, *exc: Any) -> None:
        from rocm_triton_doctor.kernels import call_plans, layernorm
        row_grads.param_sums, row_grads.PLANNED, layernorm._stats = self.saved  # type: ignore[assignment]
        attention_backward.call_plans = call_plans  # type: ignore[assignment]
        call_plans.clear()


def torch_sums(parts: tuple[torch.Tensor, ...], dtypes: tuple[torch.dtype, ...]) -> tuple[torch.Tensor, ...]:
    return tuple(p.sum(0).to(d) for p, d in zip(parts, dtypes))


def gpu_kernels(fn: Callable[[], Any]) -> int:
    """GPU kernels (Triton's and torch's, memsets and fills included) one call runs, from torch's profiler."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        fn()
        torch.cuda.synchronize()
    return sum(1 for e in p.events() if e.device_type.name == "CUDA")


def gpu_ms(fn: Callable[[], Any]) -> float | None:
    try:
        return float(do_bench_cudagraph(fn, rep=20))
    except Exception:  # noqa: BLE001 - a capture failure is a missing number
        return None


def sums_row(d: bh.Draw, g: torch.Generator) -> dict[str, Any]:
    leaves = bh.leaves_of(d, g)
    with torch.no_grad():
        y0 = d.ours(*leaves)
    dy = torch.randn(y0.shape, generator=g, device="cuda", dtype=torch.float32).to(y0.dtype)
    ok, problems, _ = bh.check(d, leaves, dy)
    row: dict[str, Any] = {"name": d.name, "ok": ok, "problems": problems[:2]}
    for arm in ("fused", "torch", "fused_again"):
        with arms(arm):
            if arm == "torch":
                row["torch_ok"] = bh.check(d, leaves, dy)[0]
            row[f"fb_gpu_us_{arm}"] = 1e3 * (gpu_ms(lambda: torch.autograd.grad(d.ours(*leaves), leaves, dy))
                                             or float("nan"))
            row[f"f_gpu_us_{arm}"] = 1e3 * (gpu_ms(lambda: d.ours(*[t.detach() for t in leaves])) or float("nan"))
            row[f"bwd_gpu_us_{arm}"] = row[f"fb_gpu_us_{arm}"] - row[f"f_gpu_us_{arm}"]
            y = d.ours(*leaves)
            row[f"bwd_host_us_{arm}"] = per_call_us(lambda y=y: torch.autograd.grad(y, leaves, dy, retain_graph=True),
                                                    100)
            del y
    base = {}
    for k, f in (("eager", d.eager), ("liger", d.liger)):
        if f is None:
            continue
        ls = [t.detach().clone().requires_grad_() for t in leaves]
        dd = dy.clone()
        try:
            base[k] = 1e3 * (gpu_ms(lambda f=f, ls=ls, dd=dd: torch.autograd.grad(f(*ls), ls, dd)) or float("nan"))
        except Exception as exc:  # noqa: BLE001 - a baseline that refuses the shape drops out
            row[f"{k}_error"] = str(exc).splitlines()[0][:120]
    row["fb_gpu_us_base"] = base
    best = min((v for v in base.values() if v == v), default=None)
    if best:
        for arm in ("fused", "torch"):
            row[f"fb_x_best_{arm}"] = best / row[f"fb_gpu_us_{arm}"]
    return row


def host_row(name: str, d: bh.Draw, g: torch.Generator) -> dict[str, Any]:
    leaves = bh.leaves_of(d, g)
    with torch.no_grad():
        y0 = d.ours(*leaves)
    dy = torch.randn(y0.shape, generator=g, device="cuda", dtype=torch.float32).to(y0.dtype)
    row: dict[str, Any] = {"name": name}
    fns = {"ours": d.ours, "eager": d.eager}
    if d.liger is not None:
        fns["liger"] = d.liger
    runs = ([("ours_old", d.ours), ("ours", d.ours)] + list(fns.items())[1:]) * 3  # every arm in 3 rounds, interleaved
    for k, f in runs:
        ls = leaves if k.startswith("ours") else [t.detach().clone().requires_grad_() for t in leaves]
        dd = dy if k.startswith("ours") else dy.clone()

        def fb(f: Any = f, ls: Any = ls, dd: Any = dd) -> Any:
            return torch.autograd.grad(f(*ls), ls, dd)

        def fwd(f: Any = f, ls: Any = ls) -> Any:
            return f(*ls)

        with arms("old" if k == "ours_old" else "new"):
            fb()
            torch.cuda.synchronize()
            y = f(*ls)
            for what, fn in (("fb", fb), ("fwd", fwd),
                             ("bwd", lambda y=y, ls=ls, dd=dd: torch.autograd.grad(y, ls, dd, retain_graph=True))):
                us = per_call_us(fn, 200)
                row[f"{what}_host_us_{k}"] = min(us, row.get(f"{what}_host_us_{k}", us))  # the best of the rounds
            if k.startswith("ours") and f"launches_{k}" not in row:
                del y
                row[f"fb_gpu_us_{k}"] = 1e3 * (gpu_ms(fb) or float("nan"))
                row[f"launches_{k}"] = gpu_kernels(fb)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(200):
        torch.autograd.grad(d.ours(*leaves), leaves, dy)
    prof.disable()
    torch.cuda.synchronize()
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(22)
    row["profile"] = s.getvalue()[-5000:]
    return row


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", choices=("sums", "host"), required=True)
    ap.add_argument("--json")
    args = ap.parse_args()
    g = torch.Generator(device="cuda").manual_seed(31)
    meta = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "triton": triton.__version__}
    print(f"{meta['device']}, torch {meta['torch']}, triton {meta['triton']}", flush=True)
    out: list[dict[str, Any]] = []
    if args.set == "sums":
        draws = [bh.row_problem(op, dts, m, n) for op, dts, m, n in SUMS_ROWS] + [gelu_draw(*r) for r in GELU_ROWS]
        for d in draws:
            try:
                row = sums_row(d, g)
            except Exception as exc:  # noqa: BLE001 - a row that fails says so and the rest run
                row = {"name": d.name, "error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"}
            out.append(row)
            torch.cuda.empty_cache()
            print(json.dumps({k: v for k, v in row.items() if k != "fb_gpu_us_base"}, default=str)[:400], flush=True)
        print(f"\n{'row':36s} {'ok':>3s} {'bwd us fused/torch':>20s} {'fb x best fused/torch':>22s} "
              f"{'host us fused/torch':>20s}")
        for r in out:
            if "error" in r:
                print(f"{r['name']:36s} ERROR {r['error'][:80]}")
                continue
            print(f"{r['name']:36s} {'y' if r['ok'] else 'N':>3s} {r['bwd_gpu_us_fused']:9.1f}/{r['bwd_gpu_us_torch']:<9.1f} "
                  f"{r.get('fb_x_best_fused', 0):10.2f}/{r.get('fb_x_best_torch', 0):<10.2f} "
                  f"{r['bwd_host_us_fused']:9.1f}/{r['bwd_host_us_torch']:<9.1f}")
    else:
        for name, mk in HOST_ROWS:
            try:
                row = host_row(name, mk(), g)
            except Exception as exc:  # noqa: BLE001
                row = {"name": name, "error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"}
            out.append(row)
            print({k: v for k, v in row.items() if k != "profile"}, flush=True)
        for r in sorted([r for r in out if "profile" in r], key=lambda r: -r["fb_host_us_ours"])[:3]:
            print(f"\n== {r['name']}\n{r['profile'][-3500:]}")
        print(f"\n{'row':38s} {'fb host us old/new/eager/liger':>34s} {'bwd host old/new/eager':>24s} "
              f"{'launches old/new':>16s} {'fb gpu us old/new':>18s}")
        for r in out:
            if "error" in r:
                print(f"{r['name']:38s} ERROR {r['error'][:80]}")
                continue
            print(f"{r['name']:38s} {r['fb_host_us_ours_old']:7.1f}/{r['fb_host_us_ours']:<7.1f}/"
                  f"{r['fb_host_us_eager']:<7.1f}/{r.get('fb_host_us_liger', float('nan')):<7.1f} "
                  f"{r['bwd_host_us_ours_old']:7.1f}/{r['bwd_host_us_ours']:<7.1f}/{r['bwd_host_us_eager']:<7.1f} "
                  f"{r['launches_ours_old']:7d}/{r['launches_ours']:<7d} {r['fb_gpu_us_ours_old']:8.1f}/"
                  f"{r['fb_gpu_us_ours']:<8.1f}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({**meta, "set": args.set, "rows": out}, fh, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
