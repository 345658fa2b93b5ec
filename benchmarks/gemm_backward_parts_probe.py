"""The two products of a GEMM's backward, one at a time (issue #16, session 33's hunt 9: fp32 GEMM rows whose forward
ran at cuBLAS's speed or better but whose backward ran at 0.56-0.70x of eager autograd's): dA = dY·Bᵀ and dB = Aᵀ·dY,
each through gemm() with the operand views GemmFunction.backward passes, against torch.matmul on the same views
(graph replay, IEEE fp32 as torch's default), with the policy's plan (tiles, split, precision) and the fp32 products
forced to each precision. Every output is checked against an fp64 product first.

    PYTHONPATH=. python benchmarks/gemm_backward_parts_probe.py [--json PATH]

--splits (session 34): the dB = Aᵀ·dY products of the GEMM rows whose backward stayed under eager's after bias_gelu
kept its pre-activation (…-s34-split2.json: 0.6-0.8x cuBLAS on a long K over a small output), each at the policy's
plan, at its tiles with 2, 4 and 8 times its K split, and with no operand copied (the policy's tiles for that).
"""

from __future__ import annotations

import argparse
from typing import Any

import torch
import triton.testing as tt

from gemm_longk_probe import planned, save  # the launch plan gemm() keeps, and the rows' JSON
from rocm_triton_doctor.kernels import gemm, policy
from rocm_triton_doctor.kernels.gemm_kernels import gemm_kernel

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


# (dtype, M, K, N, B^T) of gemm_backward_split_probe.ROWS whose dB lost to cuBLAS in session 34's run
DB_ROWS = [("bfloat16", 15449, 74, 610, False), ("bfloat16", 9230, 42, 1943, True), ("bfloat16", 11997, 558, 43, True),
           ("bfloat16", 5858, 27, 5239, True), ("bfloat16", 2834, 4613, 69, True), ("float16", 10317, 215, 1932, False),
           ("bfloat16", 2290, 182, 1077, False), ("bfloat16", 8054, 29, 27063, False), ("float32", 607, 728, 1241, True),
           ("float32", 11315, 30, 2042, False)]


ALIGN_COPY_RULE = policy.gemm_align_copy


def draw_db(n: int, seed: int) -> list[tuple[str, int, int, int, bool]]:
    """n random GEMM backward shapes (M, K, N of the forward, log-uniform; at least one of K and N off 16-byte
    multiples, so dB = Aᵀ·dY has a misaligned operand), for dB."""
    import math
    import random

    r = random.Random(seed)
    rows = []
    while len(rows) < n:
        name = r.choice(("bfloat16", "bfloat16", "float16", "float32"))
        M, K, N = (int(math.exp(r.uniform(math.log(lo), math.log(hi)))) for lo, hi in ((512, 20000), (17, 4096),
                                                                                          (17, 8192)))
        v = 16 // getattr(torch, name).itemsize
        if (K % v or N % v) and M * (K + N) < 2**27:
            rows.append((name, M, K, N, False))
    return rows


def split_variants(x: torch.Tensor, y: torch.Tensor, copies: bool = False) -> dict[str, Any]:
    """The product x·y at the policy's plan, at its first part's tiles with 2-8 times its split, and uncopied.
    copies: instead of the splits, the policy with only A or only B copied (where misaligned)."""
    ref = x.double() @ y.double()
    plan = planned(x, y)
    out: dict[str, Any] = {"shape": f"{x.shape[0]}x{y.shape[1]}x{x.shape[1]}", "plan": plan_of(x, y, "auto"),
                           "torch_us": tt.do_bench_cudagraph(lambda: x @ y, rep=30) * 1e3, "us": {}}
    variants: dict[str, dict[str, Any] | None] = {"policy": None, "no copy": {"ALIGN_COPY": False}}
    if copies:
        for name, pair in (("A only", (True, False)), ("B only", (False, True))):
            policy.gemm_align_copy = lambda *_a, pair=pair, **_k: pair  # type: ignore[misc]
            gemm.clear_plans()
            try:
                err = float((gemm.gemm(x, y).double() - ref).abs().max() / ref.abs().max())
                out["us"][name] = (f"wrong {err:.1e}" if err > (1e-4 if x.dtype == torch.float32 else 2e-2) else
                                   tt.do_bench_cudagraph(lambda: gemm.gemm(x, y), rep=30) * 1e3)
            finally:
                policy.gemm_align_copy = ALIGN_COPY_RULE
                gemm.clear_plans()
    elif plan is not None and plan.parts[0].kern is gemm_kernel:
        kw, split = plan.parts[0].kw, plan.parts[0].split
        tiles = {k: kw[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_warps", "num_stages")}
        for f in (2, 4, 8):
            if split * f <= 64 and x.shape[1] // (split * f) >= 2 * tiles["BLOCK_K"]:
                variants[f"s{split * f}"] = {**tiles, "SPLIT_K": split * f,
                                             "ALIGN_COPY": plan.copy_a is not None or plan.copy_b is not None}
    for name, cfg in variants.items():
        err = float((gemm.gemm(x, y, config=cfg).double() - ref).abs().max() / ref.abs().max())
        if err > (1e-4 if x.dtype == torch.float32 else 2e-2):
            out["us"][name] = f"wrong {err:.1e}"
            continue
        out["us"][name] = tt.do_bench_cudagraph(lambda cfg=cfg: gemm.gemm(x, y, config=cfg), rep=30) * 1e3
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    ap.add_argument("--splits", action="store_true", help="DB_ROWS' dB products at more K splits (see above)")
    ap.add_argument("--copies", action="store_true", help="DB_ROWS' dB products with only A or only B copied")
    ap.add_argument("--draws", type=int, default=0,
                    help="with --copies: this many random dB products (seed --seed) instead of DB_ROWS")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    g = torch.Generator(device="cuda").manual_seed(0)
    rows = []
    if args.splits or args.copies:
        for name, M, K, N, bt in (draw_db(args.draws, args.seed) if args.draws else DB_ROWS):
            dt = getattr(torch, name)
            a = torch.randn((M, K), generator=g, device="cuda").to(dt)
            dy = torch.randn((M, N), generator=g, device="cuda").to(dt)
            row = {"row": f"{name} {M}x{K}x{N}{' B^T' if bt else ''} dB", **split_variants(a.t(), dy, args.copies)}
            rows.append(row)
            t = row["torch_us"]
            print(f"{row['row']:32} {row['shape']:16} torch {t:7.1f} us [{row['plan']}]  " + "  ".join(
                f"{k} {t / v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in row["us"].items()), flush=True)
        save(args.json, rows)
        return 0
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
