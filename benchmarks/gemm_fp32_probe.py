"""fp32 GEMMs: IEEE FMA products (gemm's precision="ieee", no tensor cores) against the 3xTF32 split
(precision="tf32x3": a = hi + lo with hi, lo TF32, a·b ~ hi·hi + hi·lo + lo·hi on tensor cores, fp32 accumulation;
NVIDIA's CUTLASS "3xTF32", Triton's F32DotTC pass) and cuBLAS SGEMM (allow_tf32 off). For each shape: GPU time by
CUDA-graph replay (ours / cuBLAS), and the error of every variant against an fp64 product, normalised elementwise by
|A|·|B| (the scale an fp32 dot's rounding error is bounded by), so the errors of cuBLAS and ours compare directly.
Then special values (inf, NaN, values near FLT_MAX, subnormals) through each variant against cuBLAS.

    PYTHONPATH=. python benchmarks/gemm_fp32_probe.py --json fp32.json
    PYTHONPATH=. python benchmarks/gemm_fp32_probe.py --small-grid [--dtype bfloat16] --json small-grid.json
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import torch
from triton.testing import do_bench_cudagraph

from rocm_triton_doctor.kernels import gemm, policy
from rocm_triton_doctor.kernels.aligned_copy import misaligned

# (M, K, N, B transposed): the fp32 rows of the session-8 shape hunts (seeds 1-3, the worst first), then squares,
# Llama-style projections and decode sizes.
SHAPES = [(376, 1433, 325, False), (39, 8737, 2462, True), (573, 1203, 28, False), (701, 370, 327, True),
          (236, 8550, 170, False), (4415, 5669, 38, False), (5751, 4313, 86, False), (10757, 290, 30, True),
          (793, 13577, 7786, True), (140, 1399, 10426, False), (3713, 854, 212, True), (12, 390, 22761, True),
          (4364, 3802, 24463, True), (1373, 495, 616, False), (142, 457, 9845, False), (2612, 2097, 28826, False),
          (9496, 203, 838, False), (1024, 1024, 1024, False), (2048, 2048, 2048, False), (4096, 4096, 4096, False),
          (8192, 8192, 8192, False), (4096, 4096, 11008, True), (2048, 11008, 4096, True), (1, 4096, 4096, True),
          (16, 4096, 4096, True), (32, 4096, 14336, True), (64, 4096, 4096, True), (128, 4096, 4096, False)]
# Tensor-core tiles for the split (fp32 operands: BLOCK_K 32 keeps a stage at 16-32 KiB).
CANDIDATES = {
    "128x128x32 w8 s3": {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 8, "num_stages": 3},
    "128x64x32 w4 s4": {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 4},
    "64x128x32 w4 s4": {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 4},
    "128x256x32 w8 s3": {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 8, "num_stages": 3},
    "64x64x32 w4 s4": {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 4},
}


def ms(fn: Any) -> float:
    return float(do_bench_cudagraph(fn, rep=10))


def norm_err(out: torch.Tensor, ref: torch.Tensor, scale: torch.Tensor) -> tuple[float, float]:
    e = (out.double() - ref).abs() / scale.clamp_min(1e-300)
    return float(e.max()), float(e.mean())


def special_values(dev: torch.device) -> list[dict[str, Any]]:
    """Each case: A, B with planted values; every variant's inf/NaN pattern and finite values against cuBLAS."""
    g = torch.Generator(device="cpu").manual_seed(0)
    rows = []
    cases = {}
    a = torch.randn(256, 512, generator=g)
    b = torch.randn(512, 256, generator=g) * 0.5
    a1 = a.clone()
    a1[3, 5] = float("inf")
    a1[7, 9] = float("nan")
    a1[11] = 0.0
    a1[11, 0] = 3.4e38  # within 2^-11 of FLT_MAX: TF32 rounding of the high part could overflow
    a1[13] = 1e-40  # subnormals
    b1 = b.clone()
    b1[0] = 0.25
    cases["inf/nan/FLT_MAX/subnormal"] = (a1, b1)
    a2 = a * 1e18
    b2 = b * 1e18  # products near 1e36-1e38
    cases["huge magnitudes"] = (a2, b2)
    a3 = a * 1e-20
    cases["tiny magnitudes"] = (a3, b * 1e-20)
    for name, (x, y) in cases.items():
        x, y = x.to(dev), y.to(dev)
        blas = x @ y  # allow_tf32 is off (main)
        row: dict[str, Any] = {"case": name}
        for prec in ("ieee", "tf32x3"):
            try:
                out = gemm.gemm(x, y, precision=prec)
            except Exception as e:  # noqa: BLE001 - a probe records what failed
                row[prec] = f"error: {type(e).__name__}: {e}"[:200]
                continue
            same_nan = bool(torch.equal(out.isnan(), blas.isnan()))
            same_inf = bool(torch.equal(out.isinf(), blas.isinf()) and torch.equal(out.isinf() & (out > 0),
                                                                                  blas.isinf() & (blas > 0)))
            fin = out.isfinite() & blas.isfinite()
            rel = float(((out - blas).abs() / blas.abs().clamp_min(1e-38))[fin].max()) if fin.any() else 0.0
            row[prec] = {"nan_pattern_equal": same_nan, "inf_pattern_equal": same_inf, "max_rel_vs_cublas": rel,
                         "n_nan": int(out.isnan().sum()), "n_inf": int(out.isinf().sum()),
                         "cublas_n_nan": int(blas.isnan().sum()), "cublas_n_inf": int(blas.isinf().sum())}
            if name.startswith("inf"):
                row[prec]["row11"] = float(out[11, 0])
                row[prec]["cublas_row11"] = float(blas[11, 0])
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


# fp32 rows still slow after the 3xTF32 policy (shape hunts, seed 9's A/B): few output tiles, a long K, odd sizes.
SMALL_GRID = [(86, 8564, 38, True), (39, 8737, 2462, True), (236, 8550, 170, False), (4415, 5669, 38, False),
              (376, 1433, 325, False), (573, 1203, 28, False), (2906, 1314, 33, False), (165, 1765, 4640, False),
              (140, 1399, 10426, False), (2, 1661, 399, False), (12, 390, 22761, True), (1024, 4096, 64, False)]
# 16-bit rows with a misaligned weight the policy does not copy (M < 256) from seeds 9-10 and the align probe.
SMALL_GRID_16 = [(139, 5478, 51, True), (136, 1435, 8373, True), (86, 659, 5763, True), (1686, 958, 57, False),
                 (77, 1791, 29225, True), (237, 1313, 10622, True), (171, 3851, 13438, True), (120, 913, 11274, False),
                 (200, 4097, 4096, True), (128, 4096, 4096, True)]
# Decode-band rows (M <= 64, the decode tiles) with a misaligned weight: seed 12's fp16 41x1621x459 B^T ran at 0.16x.
DECODE_16 = [(41, 1621, 459, True), (1, 4097, 4096, True), (16, 4097, 4096, True), (32, 4097, 4096, True),
             (64, 4097, 4096, True), (8, 4096, 4097, False), (32, 4096, 4097, False), (16, 1537, 11009, True)]


def small_grid(dev: torch.device, cus: int, dtype: torch.dtype = torch.float32, decode: bool = False
               ) -> list[dict[str, Any]]:
    """The policy's tf32x3 tiles with K split 1-16 (fp32 partial sums, then the reduce pass), with and without the
    aligned copies: where does a split pay for fp32, whose K steps cost three tensor-core products each?"""
    t = policy.target_for_device("cuda")
    rows = []
    fp32 = dtype == torch.float32
    for M, K, N, bt in SMALL_GRID if fp32 else DECODE_16 if decode else SMALL_GRID_16:
        a = torch.randn(M, K, device=dev, dtype=dtype)
        b = (torch.randn(N, K, device=dev, dtype=dtype).t() if bt else torch.randn(K, N, device=dev, dtype=dtype)) / K**0.5
        ref = a.double() @ b.double()
        scale = a.double().abs() @ b.double().abs()
        t_blas = ms(lambda: a @ b)
        pol = dict(policy.gemm_config(t, M, N, K, a.element_size(), cus=cus, b_nmajor=not bt, tc=fp32,
                                      aligned=not (misaligned(a) or misaligned(b))))
        row: dict[str, Any] = {"M": M, "K": K, "N": N, "b_t": bt, "cublas_ms": t_blas, "policy": pol, "v": {}}
        for copy in (False, True):
            for split in (1, 2, 4, 8, 16):
                cfg = {**pol, "SPLIT_K": split, "ALIGN_COPY": copy}
                name = f"split{split}{' copy' if copy else ''}"
                try:
                    err = norm_err(gemm.gemm(a, b, config=cfg), ref, scale)[0]
                    row["v"][name] = {"x": t_blas / ms(lambda c=cfg: gemm.gemm(a, b, config=c)), "err": err}
                except Exception as e:  # noqa: BLE001
                    row["v"][name] = {"error": f"{type(e).__name__}: {e}"[:160]}
        row["auto"] = t_blas / ms(lambda: gemm.gemm(a, b))
        rows.append(row)
        best = max((n for n in row["v"] if "x" in row["v"][n]), key=lambda n: row["v"][n]["x"])
        print(f"{str(dtype)[6:]} {M}x{K}x{N}{' B^T' if bt else ''}: cuBLAS {t_blas * 1e3:.1f} us; auto {row['auto']:.2f}x "
              f"({pol['BLOCK_M']}x{pol['BLOCK_N']} s{pol['SPLIT_K']}); " + " ".join(
                  f"{n}={v['x']:.2f}" for n, v in row["v"].items() if "x" in v) + f"; best {best}", flush=True)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    ap.add_argument("--limit", type=int, default=len(SHAPES))
    ap.add_argument("--small-grid", action="store_true", help="only the K-split / copy sweep of SMALL_GRID")
    ap.add_argument("--dtype", default="float32", help="--small-grid: float32 (SMALL_GRID) or bfloat16 (SMALL_GRID_16)")
    ap.add_argument("--decode", action="store_true", help="--small-grid with a 16-bit dtype: the DECODE_16 rows")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    if args.small_grid:
        rows = small_grid(dev, torch.cuda.get_device_properties(0).multi_processor_count, getattr(torch, args.dtype),
                          args.decode)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "rows": rows}, f,
                          indent=1)
        return 0
    t = policy.target_for_device("cuda")
    cus = torch.cuda.get_device_properties(0).multi_processor_count
    out: dict[str, Any] = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "rows": []}
    import triton
    out["triton"] = triton.__version__
    out["special"] = special_values(dev)
    table = []
    for M, K, N, bt in SHAPES[:args.limit]:
        a = torch.randn(M, K, device=dev)
        b = torch.randn(N, K, device=dev).t() if bt else torch.randn(K, N, device=dev)
        ref = a.double() @ b.double()
        scale = a.double().abs() @ b.double().abs()
        t_blas = ms(lambda: a @ b)
        blas_err = norm_err(a @ b, ref, scale)
        pol = policy.gemm_config(t, M, N, K, 4, cus=cus, b_nmajor=not bt)
        variants: dict[str, tuple[str, dict[str, Any] | None]] = {"ieee policy": ("ieee", None),
                                                                   "tf32x3 policy tiles": ("tf32x3", dict(pol))}
        for name, c in CANDIDATES.items():
            sk = policy.gemm_split_small_grid(M, N, K, c["BLOCK_M"], c["BLOCK_N"], cus)
            variants[f"tf32x3 {name}"] = ("tf32x3", {**c, "SPLIT_K": sk})
        row: dict[str, Any] = {"M": M, "K": K, "N": N, "b_t": bt, "cublas_ms": t_blas, "cublas_err": blas_err,
                               "policy": pol, "v": {}}
        for name, (prec, cfg) in variants.items():
            try:
                o = gemm.gemm(a, b, precision=prec, config=cfg)
                err = norm_err(o, ref, scale)
                row["v"][name] = {"ms": ms(lambda p=prec, c=cfg: gemm.gemm(a, b, precision=p, config=c)), "err": err}
            except Exception as e:  # noqa: BLE001 - a config that does not fit is a row, not the end of the probe
                row["v"][name] = {"error": f"{type(e).__name__}: {e}"[:160]}
        out["rows"].append(row)
        ok = {n: v for n, v in row["v"].items() if "ms" in v}
        best = min((n for n in ok if n.startswith("tf32x3")), key=lambda n: ok[n]["ms"], default=None)
        line = (f"{M}x{K}x{N}{' B^T' if bt else ''}: cuBLAS {t_blas * 1e3:.1f} us err {blas_err[0]:.1e}; ieee "
                f"{t_blas / ok['ieee policy']['ms']:.2f}x err {ok['ieee policy']['err'][0]:.1e}" if "ieee policy" in ok
                else f"{M}x{K}x{N}: ieee failed")
        if best:
            line += (f"; tf32x3 policy tiles {t_blas / ok['tf32x3 policy tiles']['ms']:.2f}x" if "tf32x3 policy tiles" in ok
                     else "") + f"; best {best[7:]} {t_blas / ok[best]['ms']:.2f}x err {ok[best]['err'][0]:.1e}"
        print(line, flush=True)
        table.append(line)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    print("\n".join(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
