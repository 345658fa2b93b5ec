"""Session 18: two questions about the GEMM paths for few and mid-size row counts, on one GPU in one run, in GPU time
(CUDA-graph replay) against cuBLAS (eager torch), every output checked against an fp64 product.

1. fp32 against an N-major weight (a (K, N) tensor) with 17-400 rows: the tensor-core tiles' 3xTF32 split ("auto"
   there) against IEEE products (Triton's FMA dot) at the policy's tiles and three others, and the GEMV kernel. The
   hunt's worst GEMM row, 28x6016x26517 at 0.12x cuBLAS (docs/measurements/2026-11-28-h100-s17-hunt-seed7.json), is
   one of these; Nsight Compute showed its GEMV latency-bound (20 cycles an instruction, 87 % of them waiting on
   L1TEX, 265 GB/s; docs/measurements/2026-11-28-h200-s18-ncu-gemv-*.txt).
2. The GEMV kernel's K loop software-pipelined (STAGES, tl.range num_stages) on 1-8 rows: 16-bit and fp32 against
   misaligned and aligned weights of both layouts, against the tiles.

    PYTHONPATH=.:benchmarks python benchmarks/gemm_pipe_probe.py --json pipe2.json
    PYTHONPATH=.:benchmarks python benchmarks/gemm_pipe_probe.py --verify --seed 80 --json verify.json

--small-grid: 16-bit GEMMs of 17-64 rows against a narrow weight with a long K (the decode tiles, session 17's
hunt: bf16 64x12120x484 bias at 0.62x), the policy's K split (capped by its fp32 workspace at an eighth of B's
bytes) against two and four times that split and 16.

--verify: the rules those runs led to (policy_fp32.fp32_nmajor_config, policy_gemv.gemv_takes / gemv_config's
STAGES) on fresh random draws, each against what the policy did before (kept here as `old`), and the new split
halved and doubled.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import sys
from typing import Any

import torch
from triton.testing import do_bench_cudagraph

from rocm_triton_doctor.kernels import gemm, policy
from rocm_triton_doctor.kernels.tolerances import tolerance

F32, BF16, F16 = torch.float32, torch.bfloat16, torch.float16
# (M, K, N, dtype, B^T)
MID_FP32 = [(28, 6016, 26517, False), (17, 4096, 11007, False), (49, 2867, 15547, False), (96, 3000, 20001, False),
            (64, 4096, 4096, False), (33, 1000, 3001, False), (128, 2048, 8191, False), (200, 777, 5555, False),
            (391, 428, 2531, False), (24, 12000, 1023, False), (40, 4096, 14336, False), (29, 7906, 2320, True),
            (64, 8191, 4097, True), (17, 4096, 11008, True), (3, 70, 161, False), (12, 5000, 3333, False)]
DECODE_16 = [(1, 832, 27011, BF16, False), (2, 4096, 4097, BF16, False), (3, 15605, 9269, BF16, False),
             (4, 2048, 5001, F16, False), (8, 4096, 14335, BF16, False), (1, 4096, 4096, BF16, False),
             (4, 4096, 14336, F16, False), (8, 4096, 4096, BF16, False), (2, 11402, 17198, BF16, True),
             (1, 4097, 4096, BF16, True), (8, 4096, 4096, BF16, True), (4, 6000, 1999, F32, False),
             (8, 4096, 14335, F32, False), (1, 4096, 4096, F32, True), (4, 4096, 4096, F32, True)]


def tiles(bm: int, bn: int, bk: int, w: int, s: int, split: int = 1) -> dict[str, Any]:
    return {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, "num_warps": w, "num_stages": s, "SPLIT_K": split}


SMALL_GRID = [(64, 12120, 484, BF16, False, "bias"), (48, 8192, 512, BF16, False, "none"),
              (40, 16384, 640, F16, True, "none"), (64, 4096, 1000, BF16, True, "none"),
              (24, 10000, 300, BF16, False, "none"), (60, 20000, 256, F16, True, "bias"),
              (17, 6000, 777, BF16, False, "none"), (33, 30000, 1024, BF16, True, "none"),
              (64, 2048, 384, BF16, False, "none"), (56, 9000, 1536, F16, False, "none")]


def old_decode_split(M: int, N: int, K: int, cfg: dict[str, Any], cus: int) -> int:
    """policy_waves._split_k as it was before session 18 for aligned 16-bit decode tiles: two programs an SM, each
    split at least 4 K blocks, the fp32 workspace under an eighth of B's bytes."""
    from rocm_triton_doctor.kernels.policy_waves import _doubled_split

    tiles = -(-M // cfg["BLOCK_M"]) * -(-N // cfg["BLOCK_N"])
    return _doubled_split(M, N, K, tiles, min(16, K * 2 // (64 * M)), 2 * cus, 4 * cfg["BLOCK_K"])


def small_grid_draws(seed: int) -> list[tuple[int, int, int, torch.dtype, bool, str]]:
    """--small-grid --seed: 16-bit, 17-64 rows, aligned weights of both layouts, K 512-32768, N 64-8192."""
    r = random.Random(seed)

    def lu(lo: int, hi: int) -> int:
        return int(round(math.exp(r.uniform(math.log(lo), math.log(hi)))))

    return [(lu(17, 64), lu(512, 32768) // 8 * 8, max(64, lu(64, 8192) // 8 * 8), r.choice((BF16, F16)),
             r.random() < 0.5, r.choice(("none", "bias"))) for _ in range(18)]


def small_grid(cus: int, seed: int | None = None) -> list[dict[str, Any]]:
    """--small-grid rows: each shape against cuBLAS with its bias epilogue, at the policy's split and others; with a
    seed, fresh draws against the split the policy took before session 18 (`old`)."""
    dev = torch.device("cuda")
    t = policy.target_for_device("cuda")
    g = torch.Generator(device=dev).manual_seed(1)
    rows = []
    for M, K, N, dt, bt, epi in (SMALL_GRID if seed is None else small_grid_draws(seed)):
        a = torch.randn(M, K, device=dev, dtype=dt, generator=g)
        b = (torch.randn(N, K, device=dev, dtype=dt, generator=g).t() if bt
             else torch.randn(K, N, device=dev, dtype=dt, generator=g)) / K**0.5
        bias = torch.randn(N, device=dev, dtype=dt, generator=g) if epi == "bias" else None
        ref = gemm.reference(a.double(), b.double(), None if bias is None else bias.double(), epi)
        tol = tolerance(str(dt).removeprefix("torch."))
        name = f"{str(dt).removeprefix('torch.')} {M}x{K}x{N} {epi}{' B^T' if bt else ''}"
        t_blas = float(do_bench_cudagraph(lambda: gemm.eager(a, b, bias, epi, 0.0), rep=20))
        cfg = dict(policy.gemm_config(t, M, N, K, 2, cus=cus, b_nmajor=not bt))
        row: dict[str, Any] = {"name": name, "cublas_ms": t_blas, "policy": cfg}
        forms = {"auto": None, "split*2": {**cfg, "SPLIT_K": cfg["SPLIT_K"] * 2},
                 "split*4": {**cfg, "SPLIT_K": cfg["SPLIT_K"] * 4}, "split 16": {**cfg, "SPLIT_K": 16}}
        if seed is not None:
            forms = {"old": {**cfg, "SPLIT_K": old_decode_split(M, N, K, cfg, cus)} if cfg["BLOCK_M"] <= 64 else cfg,
                     "auto": None}
        for label, c in forms.items():
            try:
                y = gemm.gemm(a, b, bias, epi, config=c)
                excess = float(((y.double() - ref).abs() - (tol.atol + tol.rtol * ref.abs())).max())
                ms = float(do_bench_cudagraph(lambda c=c: gemm.gemm(a, b, bias, epi, config=c), rep=20))
                row[label] = {"ms": ms, "x": t_blas / ms, "ok": excess <= 0}
            except Exception as exc:  # noqa: BLE001 - a probe records what failed and goes on
                row[label] = {"error": f"{type(exc).__name__}: {str(exc)[:160]}"}
        rows.append(row)
        print(f"{name:34s} cuBLAS {t_blas * 1e3:6.1f} us split {cfg['SPLIT_K']:2d} | " + " | ".join(
            f"{k} {v['x']:.2f}{'' if v['ok'] else ' WRONG'}" if "x" in v else f"{k} ERR {v['error'][:40]}"
            for k, v in row.items() if isinstance(v, dict) and ("x" in v or "error" in v)), flush=True)
    return rows


def draws(seed: int) -> list[tuple[int, int, int, torch.dtype, bool, str]]:
    """(M, K, N, dtype, B^T, family): fp32 N-major with 17-400 rows (half with a misaligned N), fp32 N-major with
    4-16 rows and a misaligned N, 16-bit N-major with 1-8 rows and a misaligned N, fp32 N-major with 1-3 rows."""
    r = random.Random(seed)

    def lu(lo: int, hi: int) -> int:
        return int(round(math.exp(r.uniform(math.log(lo), math.log(hi)))))

    def odd(n: int) -> int:
        return n | 1

    out = []
    for _ in range(18):
        m, k, n = lu(17, 400), lu(64, 16384), lu(129, 32768)
        while m * k * n > 4e10:
            k = max(64, k // 2)
        out.append((m, k, odd(n) if r.random() < 0.5 else n // 16 * 16 or 144, F32, False, "mid"))
    for _ in range(6):
        out.append((lu(4, 16), lu(64, 16384), odd(lu(129, 32768)), F32, False, "fp32 4-16"))
    for _ in range(8):
        out.append((lu(1, 8), lu(64, 16384), odd(lu(129, 32768)), r.choice((BF16, F16)), False, "16-bit"))
    for _ in range(4):
        out.append((lu(1, 3), lu(64, 16384), lu(129, 32768), F32, False, "fp32 1-3"))
    return out


def old_form(t: policy.Target, M: int, K: int, N: int, dt: torch.dtype, gcfg: dict[str, Any]) -> dict[str, Any]:
    """What gemm(kernel="auto") ran before session 18 for an N-major B: the GEMV unpipelined for fp32 up to 3 rows
    and for a misaligned fp32 B up to 96 rows (32 where gemm_align_copy copies it), the tensor-core tiles for 16-bit,
    and fp32 past 16 rows on the 3xTF32 tiles."""
    aligned = (N * dt.itemsize) % 16 == 0
    if dt == F32:
        copied = policy.gemm_align_copy(t, M, N, K, 4)[1]
        if M <= 3 or (not aligned and (32 if copied else 96) >= M):
            return {"kernel": "gemv", "config": {**gcfg, "STAGES": 1}}
        return {"precision": "tf32x3" if M > 16 else "ieee", "kernel": "pointer"}
    return {"kernel": "pointer"}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    ap.add_argument("--verify", action="store_true")
    ap.add_argument("--small-grid", action="store_true")
    ap.add_argument("--seed", type=int, default=80, help="--verify's draws; with --small-grid, its own (not 80)")
    args = ap.parse_args()
    dev = torch.device("cuda")
    t = policy.target_for_device("cuda")
    cus = torch.cuda.get_device_properties(0).multi_processor_count
    print(f"{torch.cuda.get_device_name(0)}, {cus} SMs, torch {torch.__version__}", flush=True)
    if args.small_grid:
        out = small_grid(cus, args.seed if args.seed != 80 else None)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "rows": out}, f,
                          indent=1, default=str)
        return 0
    g = torch.Generator(device=dev).manual_seed(0)
    rows = []
    cases = [(m, k, n, F32, bt, "mid") for m, k, n, bt in MID_FP32] + [(m, k, n, d, bt, "decode") for m, k, n, d, bt in DECODE_16]
    if args.verify:
        cases = draws(args.seed)
    for M, K, N, dt, bt, part in cases:
        a = torch.randn(M, K, device=dev, dtype=dt, generator=g)
        b = (torch.randn(N, K, device=dev, dtype=dt, generator=g).t() if bt
             else torch.randn(K, N, device=dev, dtype=dt, generator=g)) / K**0.5
        ref = a.double() @ b.double()
        tol = tolerance(str(dt).removeprefix("torch."))
        name = f"{str(dt).removeprefix('torch.')} {M}x{K}x{N}{' B^T' if bt else ''}"
        t_blas = float(do_bench_cudagraph(lambda: torch.mm(a, b), rep=20))
        gcfg = dict(policy.gemv_config(t, M, N, K, dt.itemsize, bt, cus))
        forms: dict[str, dict[str, Any]] = {"auto": {}}
        if args.verify:
            forms["old"] = old_form(t, M, K, N, dt, gcfg)
            if part == "mid":
                cfg = dict(policy.fp32_nmajor_config(M, N, K, cus))
                forms["split/2"] = {"kernel": "pointer", "config": {**cfg, "SPLIT_K": max(1, cfg["SPLIT_K"] // 2)}}
                forms["split*2"] = {"kernel": "pointer", "config": {**cfg, "SPLIT_K": cfg["SPLIT_K"] * 2}}
            part = "verify"
        if part == "mid":
            forms["tiles tf32x3"] = {"precision": "tf32x3", "kernel": "pointer"}
            forms["tiles ieee"] = {"precision": "ieee", "kernel": "pointer"}
            sk = 4 if K >= 4096 else 1
            for label, cfg in (("ieee 32x128x32", tiles(32, 128, 32, 4, 3, sk)), ("ieee 64x64x32", tiles(64, 64, 32, 4, 3, sk)),
                               ("ieee 64x128x32 w8", tiles(64, 128, 32, 8, 3, sk)), ("ieee 32x64x32", tiles(32, 64, 32, 4, 4, sk))):
                forms[label] = {"precision": "ieee", "kernel": "pointer", "config": cfg}
            forms["gemv S1"] = {"kernel": "gemv", "config": {**gcfg, "STAGES": 1}}
            forms["gemv S3"] = {"kernel": "gemv", "config": {**gcfg, "STAGES": 3}}
        elif part == "decode":
            forms["tiles"] = {"kernel": "pointer"}
            for s in (1, 2, 3, 4):
                forms[f"gemv S{s}"] = {"kernel": "gemv", "config": {**gcfg, "STAGES": s}}
            deep = {**gcfg, "STAGES": 3}
            deep["BLOCK_N" if bt else "BLOCK_K"] *= 2
            forms["gemv 2x S3"] = {"kernel": "gemv", "config": deep}
        row: dict[str, Any] = {"name": name, "family": part, "cublas_ms": t_blas, "gemv_policy": gcfg,
                               "gemv_takes": policy.gemv_takes(t, M, dt.itemsize, False, bt, K, N)}
        for label, kw in forms.items():
            try:
                y = gemm.gemm(a, b, **kw)
                excess = float(((y.double() - ref).abs() - (tol.atol + tol.rtol * ref.abs())).max())
                ms = float(do_bench_cudagraph(lambda kw=kw: gemm.gemm(a, b, **kw), rep=20))
                row[label] = {"ms": ms, "x": t_blas / ms, "ok": excess <= 0, "excess": excess}
            except Exception as exc:  # noqa: BLE001 - a probe records what failed and goes on
                row[label] = {"error": f"{type(exc).__name__}: {str(exc)[:160]}"}
        rows.append(row)
        print(f"{name:30s} cuBLAS {t_blas * 1e3:7.1f} us | " + " | ".join(
            f"{k} {v['x']:.2f}{'' if v['ok'] else ' WRONG'}" if "x" in v else f"{k} ERR {v['error'][:50]}"
            for k, v in row.items() if isinstance(v, dict) and ("x" in v or "error" in v)), flush=True)
    if args.verify:
        print("\nshape | cuBLAS us | old x | new (auto) x | split/2 | split*2")
        for r in rows:
            print(f"{r['name']} | {r['cublas_ms'] * 1e3:.1f} | " + " | ".join(
                f"{r[k]['x']:.2f}{'' if r[k]['ok'] else ' WRONG'}" if "x" in r.get(k, {}) else "-"
                for k in ("old", "auto", "split/2", "split*2")))
        olds = [r["old"]["x"] for r in rows if "x" in r.get("old", {})]
        news = [r["auto"]["x"] for r in rows if "x" in r.get("auto", {})]
        if olds and news:
            print(f"median old {sorted(olds)[len(olds) // 2]:.2f} new {sorted(news)[len(news) // 2]:.2f}; worst old "
                  f"{min(olds):.2f} new {min(news):.2f}")
    print("\nshape | cuBLAS us | auto x | best variant x")
    for r in rows:
        vs = {k: v for k, v in r.items() if isinstance(v, dict) and "x" in v and v["ok"]}
        best = max(vs, key=lambda k: vs[k]["x"]) if vs else "-"
        print(f"{r['name']} | {r['cublas_ms'] * 1e3:.1f} | {r.get('auto', {}).get('x', float('nan')):.2f} | "
              f"{best} {vs.get(best, {}).get('x', float('nan')):.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "rows": rows}, f, indent=1,
                      default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
