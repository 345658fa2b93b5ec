"""fp32 GEMMs with a short K (17-200) and a large output: the policy's 3xTF32 tiles against other tilings, IEEE FMA
tiles and cuBLAS SGEMM (allow_tf32 off). Hunts had them at 0.44-0.67x cuBLAS (H200 seed 9: 2864x11124x132 against an
N-major B; 12507x4095x25 B^T; session 18: 4282x3649x25). GPU time by CUDA-graph replay; every output checked against
an fp64 product (normalised by |A|·|B|) before it is timed.

    PYTHONPATH=. python benchmarks/fp32_shortk_probe.py [--seed S -n N] [--json PATH]
    PYTHONPATH=. python benchmarks/fp32_shortk_probe.py --shape 1949,52,1815 --shape 1949,52,1815,0,1  (session 22)
    PYTHONPATH=. python benchmarks/fp32_shortk_probe.py --set s23 [--small S -n N] [--shape ...]  (session 23: short K
        against an N-major B at small outputs, more tilings and the aligned copy of B forced; --small draws N-major
        shapes with M, N 512-4096 and K 33-96, misaligned or not)
    PYTHONPATH=. python benchmarks/fp32_shortk_probe.py --set s27 [--seed S -n N]  (session 27: short K against
        K-major weights at mid outputs, fixed rows (S27_SHAPES says what they are) and draws, 16-deep K blocks among
        the tilings)
"""

from __future__ import annotations

import argparse
import json
import random
from typing import Any

import torch
from triton.testing import do_bench_cudagraph

from rocm_triton_doctor.kernels import gemm

SHAPES = [(2864, 132, 11124, False), (12507, 25, 4095, True), (4282, 25, 3649, False), (8000, 64, 8000, False),
          (5000, 100, 6000, True), (3000, 200, 9000, False)]
T3 = "tf32x3"
VARIANTS: list[tuple[str, str, dict[str, Any] | None]] = [
    ("policy", "auto", None),
    ("t3 128x64x32 s4", T3, {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 4}),
    ("t3 128x128x32 w8 s3", T3, {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "num_warps": 8, "num_stages": 3}),
    ("t3 128x128x16 w8 s3", T3, {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 16, "num_warps": 8, "num_stages": 3}),
    ("t3 64x128x32 s3", T3, {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "num_warps": 4, "num_stages": 3}),
    ("t3 64x64x32 s3", T3, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 3}),
    ("ieee 64x128x32", "ieee", {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "num_warps": 4, "num_stages": 3}),
    ("ieee 128x128x16 w8", "ieee", {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 16, "num_warps": 8, "num_stages": 3}),
]


# Session 23: seed 15's 1949x52x1815 (N-major B, rows not 16-byte aligned) ran 0.25x cuBLAS on the policy's 3xTF32
# 64x64x32 s4 tiles and 0.75x on IEEE 64x128x32. "copy" forces gemm's aligned copy of B (policy_align's bounds at 0).
S23_SHAPES = [(1949, 52, 1815, False), (1949, 52, 1816, False), (1949, 64, 1815, False), (1949, 48, 1815, False),
              (1949, 52, 1815, True), (4000, 52, 4001, False), (1000, 40, 999, False), (3000, 96, 2047, False)]
S23_VARIANTS: list[tuple[str, str, dict[str, Any] | None]] = [
    ("policy", "auto", None),
    ("t3 policy", T3, None),  # the 3xTF32 tiles the policy ran before session 23's rule
    ("copy", "auto", None),
    ("t3 64x64x64 s2", T3, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "num_warps": 4, "num_stages": 2}),
    ("t3 128x64x32 s3", T3, {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 3}),
    ("t3 64x64x32 s2", T3, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 2}),
    ("ieee 64x128x32", "ieee", {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "num_warps": 4, "num_stages": 3}),
    ("ieee 64x64x32", "ieee", {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 3}),
    ("ieee 32x128x32", "ieee", {"BLOCK_M": 32, "BLOCK_N": 128, "BLOCK_K": 32, "num_warps": 4, "num_stages": 3}),
    ("ieee 128x128x32 w8", "ieee", {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "num_warps": 8, "num_stages": 3}),
]


# Session 27: meant as hunt 21's (H200, seed 21) fp32 GEMM rows under 0.9x cuBLAS, but the hunt names a shape M x K x
# N and these tuples are (M, K, N): the first five have the hunt's K and N swapped (2637x20x1697 B^T is M 2637, K 20,
# N 1697), so they are five more short-K shapes, as timed (docs/measurements/2026-11-29-h200-s27-fp32-s27.json);
# gemm_misaligned_probe.py --hunt has the hunt's own rows. Then K-major short-K draws (draw_s27).
S27_SHAPES = [(2637, 20, 1697, True), (5341, 71, 111, True), (5487, 1076, 261, False), (428, 91, 157, True),
              (47, 216, 694, False), (12507, 25, 4095, True)]
S27_VARIANTS: list[tuple[str, str, dict[str, Any] | None]] = [
    ("policy", "auto", None),
    ("t3 128x128x32 w8 s3", T3, {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "num_warps": 8, "num_stages": 3}),
    ("t3 64x64x32 s4", T3, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 4}),
    ("t3 64x128x32 s3", T3, {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "num_warps": 4, "num_stages": 3}),
    ("t3 128x64x32 s3", T3, {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 3}),
    ("t3 64x64x16 s3", T3, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 16, "num_warps": 4, "num_stages": 3}),
    ("t3 128x128x16 w8 s2", T3, {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 16, "num_warps": 8, "num_stages": 2}),
    ("ieee 64x128x32", "ieee", {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "num_warps": 4, "num_stages": 3}),
    ("ieee 64x64x32", "ieee", {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 3}),
    ("ieee 128x64x16", "ieee", {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 16, "num_warps": 4, "num_stages": 3}),
]


def draw_s27(seed: int, n: int) -> list[tuple[int, int, int, bool]]:
    """K-major (nn.Linear) fp32 products with a short K (9-96) and 1-30 million outputs."""
    r = random.Random(seed)
    out = []
    for _ in range(n):
        m = int(2 ** r.uniform(8, 13.5))
        nn = max(129, int(2 ** r.uniform(20, 24.9)) // m)
        out.append((m, r.randint(9, 96), nn, True))
    return out


def forced_copy(on: bool) -> None:
    """gemm's aligned copy of misaligned operands at any size (on) or by the policy's bounds (off)."""
    from rocm_triton_doctor.kernels import policy_align

    for name, low in (("ALIGN_COPY_MIN_FLOPS", 0), ("ALIGN_COPY_MIN_REUSE", 0)):
        orig = getattr(forced_copy, name, None) or getattr(policy_align, name)
        setattr(forced_copy, name, orig)
        setattr(policy_align, name, low if on else orig)
    gemm.clear_plans()


def draw_small(seed: int, n: int, hi: float = 12) -> list[tuple[int, int, int, bool]]:
    r = random.Random(seed)
    return [(int(2 ** r.uniform(9, hi)), r.randint(33, 96), int(2 ** r.uniform(9, hi)), False) for _ in range(n)]


def draw(seed: int, n: int, k_max: int = 200, nmajor: bool = False, k_min: int = 17) -> list[tuple[int, int, int, bool]]:
    r = random.Random(seed)
    return [(int(2 ** r.uniform(10.5, 14)), r.randint(k_min, k_max), int(2 ** r.uniform(11, 13.8)),
             not nmajor and r.random() < 0.5) for _ in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int)
    ap.add_argument("-n", type=int, default=8)
    ap.add_argument("--json")
    ap.add_argument("--verify", action="store_true", help="N-major draws with K 17-48 only: policy, old split, IEEE")
    ap.add_argument("--kmin", type=int, default=17, help="--verify: K drawn from kmin to kmax")
    ap.add_argument("--kmax", type=int, default=48)
    ap.add_argument("--shape", action="append", default=[], metavar="M,K,N[,bt[,at]]",
                    help="time these shapes only (bt 1: B K-major; at 1: A column-major), e.g. a hunt's row")
    ap.add_argument("--set", choices=["s23", "s27"])
    ap.add_argument("--small", type=int, metavar="SEED", help="--set s23: also N draws of small N-major shapes")
    ap.add_argument("--small-max", type=float, default=12, help="--small: M and N drawn from 2^9 to 2^this")
    ap.add_argument("--only-draws", action="store_true", help="--set s23: the draws alone, not the fixed rows")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    g = torch.Generator(device="cuda").manual_seed(0)
    rows = []
    shapes = draw(args.seed or 0, args.n, args.kmax, True, args.kmin) if args.verify else SHAPES + (
        draw(args.seed, args.n) if args.seed is not None else [])
    variants = [v for v in VARIANTS if v[0] in ("policy", "t3 128x64x32 s4", "ieee 64x128x32")] if args.verify \
        else VARIANTS
    if args.set == "s23":
        drawn = draw_small(args.small, args.n, args.small_max) if args.small is not None else []
        shapes, variants = ([] if args.only_draws else S23_SHAPES) + drawn, S23_VARIANTS
    if args.set == "s27":
        shapes, variants = S27_SHAPES + (draw_s27(args.seed, args.n) if args.seed is not None else []), S27_VARIANTS
    if args.shape:
        shapes = [tuple(int(x) for x in (sh.split(",") + ["0", "0"])[:5]) for sh in args.shape]  # type: ignore[misc]
    for M, K, N, bt, *at in shapes:
        a = torch.randn(K, M, generator=g, device="cuda").t() if at and at[0] else torch.randn(M, K, generator=g, device="cuda")
        b = torch.randn(N, K, generator=g, device="cuda").t() if bt else torch.randn(K, N, generator=g, device="cuda")
        ref = (a.double() @ b.double())
        scale = a.abs().double() @ b.abs().double()
        row: dict[str, Any] = {"shape": f"{M}x{N}x{K}{' B^T' if bt else ''}{' A^T' if at and at[0] else ''}"}
        row["cublas"] = float(do_bench_cudagraph(lambda: a @ b, rep=20)) * 1e3
        for label, prec, cfg in variants:
            try:
                forced_copy(label == "copy")
                out = gemm.gemm(a, b, precision=prec, config=cfg)
                err = float(((out.double() - ref).abs() / scale.clamp_min(1e-30)).max())
                row[label] = (float(do_bench_cudagraph(lambda: gemm.gemm(a, b, precision=prec, config=cfg), rep=20))
                              * 1e3 if err < 1e-5 else f"err {err:.1e}")
            except Exception as exc:  # noqa: BLE001 - a tiling this shape cannot take is reported
                row[label] = f"error {str(exc).splitlines()[0][:40]}"
            finally:
                forced_copy(False)
        rows.append(row)
        cells = " | ".join(f"{k} {row['cublas'] / v:.2f}" if isinstance(v, float) else f"{k} {v}"
                           for k, v in row.items() if k not in ("shape", "cublas"))
        print(f"{row['shape']:22} cuBLAS {row['cublas']:7.1f}us | {cells}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
