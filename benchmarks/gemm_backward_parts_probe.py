"""The two products of a GEMM's backward, one at a time (issue #16, session 33's hunt 9: fp32 GEMM rows whose forward
ran at cuBLAS's speed or better but whose backward ran at 0.56-0.70x of eager autograd's): dA = dY·Bᵀ and dB = Aᵀ·dY,
each through gemm() with the operand views GemmFunction.backward passes, against torch.matmul on the same views
(graph replay, IEEE fp32 as torch's default), with the policy's plan (tiles, split, precision) and the fp32 products
forced to each precision. Every output is checked against an fp64 product first.

    PYTHONPATH=. python benchmarks/gemm_backward_parts_probe.py [--json PATH]
"""

from __future__ import annotations

import argparse
from typing import Any

import torch
import triton.testing as tt

from gemm_longk_probe import planned, save  # the launch plan gemm() keeps, and the rows' JSON
from rocm_triton_doctor.kernels import gemm

# (dtype, M, N, K, B given as the transpose of an (N, K) weight): hunt 9's fp32 rows, and neighbours not from a hunt
ROWS = [("float32", 654, 675, 2655, True), ("float32", 16288, 451, 64, True), ("float32", 4, 1339, 33, True),
        ("float32", 1000, 1000, 1000, True), ("float32", 3000, 700, 500, False), ("float32", 64, 4096, 4096, True),
        ("bfloat16", 654, 675, 2655, True), ("float32", 2048, 333, 1500, False)]


def plan_of(x: torch.Tensor, y: torch.Tensor, precision: str) -> str:
    plan = planned(x, y, precision=precision)
    if plan is None:
        return "tma"
    p = plan.parts[0]
    kw = p.kw
    copies = "".join(c for c, v in (("A", plan.copy_a), ("B", plan.copy_b)) if v is not None)
    return (f"{getattr(p.kern, '__name__', '?')} {kw.get('BLOCK_M')}x{kw.get('BLOCK_N')}x{kw.get('BLOCK_K')} "
            f"s{p.split} {kw.get('PRECISION', '')}{' copy ' + copies if copies else ''}")


def product(name: str, x: torch.Tensor, y: torch.Tensor) -> dict[str, Any]:
    ref = x.double() @ y.double()
    out: dict[str, Any] = {"product": name, "shape": f"{x.shape[0]}x{y.shape[1]}x{x.shape[1]}",
                           "torch_us": tt.do_bench_cudagraph(lambda: x @ y, rep=30) * 1e3, "us": {}, "plan": {}}
    precs = ("auto", "ieee", "tf32x3") if x.dtype == torch.float32 else ("auto",)
    for prec in precs:
        err = float((gemm.gemm(x, y, precision=prec).double() - ref).abs().max() / ref.abs().max())
        if err > (1e-4 if x.dtype == torch.float32 else 2e-2):
            out["us"][prec] = f"wrong {err:.1e}"
            continue
        out["plan"][prec] = plan_of(x, y, prec)
        out["us"][prec] = tt.do_bench_cudagraph(lambda: gemm.gemm(x, y, precision=prec), rep=30) * 1e3
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    g = torch.Generator(device="cuda").manual_seed(0)
    rows = []
    for name, M, N, K, bt in ROWS:
        dt = getattr(torch, name)
        a = torch.randn((M, K), generator=g, device="cuda").to(dt)
        w = torch.randn((N, K) if bt else (K, N), generator=g, device="cuda").to(dt) * K ** -0.5
        b = w.t() if bt else w
        dy = torch.randn((M, N), generator=g, device="cuda").to(dt)
        row = {"row": f"{name} {M}x{N}x{K}{' B^T' if bt else ''}",
               "parts": [product("dA = dY·Bᵀ", dy, b.t()), product("dB = Aᵀ·dY", a.t(), dy)]}
        rows.append(row)
        for p in row["parts"]:
            t = p["torch_us"]
            print(f"{row['row']:26} {p['product']:11} {p['shape']:16} torch {t:7.1f} us  " + "  ".join(
                f"{k} {t / v:.2f} [{p['plan'].get(k, '')}]" if isinstance(v, float) else f"{k} {v}"
                for k, v in p["us"].items()), flush=True)
    save(args.json, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
