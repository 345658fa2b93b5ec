"""Where does copying a misaligned GEMM operand pay, now that the copy is one Triton launch (kernels/aligned_copy.py)?

Part 1, the copy itself (GPU time by CUDA-graph replay): torch's former way (empty + zero_ the padding + copy_ into
the strided buffer) against aligned_copy, and a plain clone of the same bytes (the copy ceiling).
Part 2, GEMMs against misaligned operands at M from decode size up (the range policy.gemm_align_copy never copied,
M < 256 or under 2^30 FLOPs): the policy ("auto"), the policy's tiles with nothing copied ("none"), and both copied
inside gemm ("copy": a copied N-major B read to its zero padding), x cuBLAS (a @ b, which reads them in place).
Part 3 (--band): see part_band. Every output is checked against an fp32 product; a variant whose error passes the
tolerance prints "WRONG".

    PYTHONPATH=. python benchmarks/align_copy_probe.py [--quick] [--band] [--no-copy] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import torch
from triton.testing import do_bench_cudagraph

from rocm_triton_doctor.kernels import gemm, policy
from rocm_triton_doctor.kernels.aligned_copy import aligned_copy, misaligned

DT = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
# (K, N, B transposed, dtype): misaligned weights from the random draws and odd vocabulary sizes
WEIGHTS = [(2489, 2305, True, "bf16"), (4097, 4096, True, "bf16"), (4096, 4097, False, "bf16"),
           (2696, 15562, False, "bf16"), (1723, 1691, False, "bf16"), (816, 860, True, "fp16"),
           (4097, 4096, True, "fp32"), (2333, 4824, True, "fp32"), (1346, 3001, False, "fp32")]
MS = (8, 16, 33, 48, 64, 96, 128, 200, 256, 400)
QUICK_MS = (16, 36, 64, 128, 256)


def ms(fn: Any) -> float:
    return float(do_bench_cudagraph(fn, rep=20))


def torch_copy(t: torch.Tensor) -> torch.Tensor:
    """The former aligned_copy (row-major operands only here)."""
    rows, cols = t.shape
    per = 16 // t.element_size()
    full = torch.empty((rows, -(-cols // per) * per), dtype=t.dtype, device=t.device)
    full[:, cols:].zero_()
    buf = full[:, :cols]
    buf.copy_(t)
    return buf


def part_copy(dev: torch.device) -> list[dict[str, Any]]:
    out = []
    for K, N, bt, dt in WEIGHTS:
        w = torch.randn(N, K, device=dev, dtype=DT[dt]) if bt else torch.randn(K, N, device=dev, dtype=DT[dt])
        flat = torch.randn(w.numel(), device=dev, dtype=w.dtype)
        assert torch.equal(aligned_copy(w), w) and not misaligned(aligned_copy(w))
        row = {"shape": list(w.shape), "dtype": dt, "MB": w.numel() * w.element_size() / 1e6,
               "torch_us": ms(lambda: torch_copy(w)) * 1e3, "kernel_us": ms(lambda: aligned_copy(w)) * 1e3,
               "clone_us": ms(lambda: flat.clone()) * 1e3}
        row["kernel_pct_clone"] = 100 * row["clone_us"] / row["kernel_us"]
        out.append(row)
        print(f"copy {dt} {w.shape[0]}x{w.shape[1]} {row['MB']:.1f} MB: torch {row['torch_us']:.1f} us, kernel "
              f"{row['kernel_us']:.1f} us, clone {row['clone_us']:.1f} us ({row['kernel_pct_clone']:.0f} % of clone)",
              flush=True)
    return out


def part_gemm(dev: torch.device, m_values: tuple[int, ...]) -> list[dict[str, Any]]:
    target = policy.target_for_device("cuda")
    out = []
    for K, N, bt, dt in WEIGHTS:
        dtype = DT[dt]
        b = (torch.randn(N, K, device=dev, dtype=dtype).t() if bt else torch.randn(K, N, device=dev, dtype=dtype))
        b = b / K**0.5
        for M in m_values:
            a = torch.randn(M, K, device=dev, dtype=dtype)
            ref = a.float() @ b.float()
            variants = {
                "auto": lambda: gemm.gemm(a, b),
                "none": lambda: gemm.gemm(a, b, config={"ALIGN_COPY": False}),
                "copy": lambda: gemm.gemm(a, b, config={"ALIGN_COPY": True}),  # both, a copied B read to its padding
            }
            t_blas = ms(lambda: a @ b)
            row: dict[str, Any] = {"M": M, "K": K, "N": N, "dtype": dt, "b_t": bt, "cublas_us": t_blas * 1e3,
                                   "misaligned": [misaligned(a), misaligned(b)],
                                   "policy_copy": list(policy.gemm_align_copy(target, M, N, K))}
            for name, fn in variants.items():
                err = float((fn().float() - ref).abs().max() / ref.abs().max())
                row[name] = {"us": ms(fn) * 1e3, "rel_err": err, "wrong": err > (3e-2 if dt != "fp32" else 1e-3)}
            out.append(row)
            print(f"{dt} {M}x{K}x{N}{' B^T' if bt else ''} cuBLAS {row['cublas_us']:.1f} us: " + "; ".join(
                f"{n} {row[n]['us']:.1f} ({row['cublas_us'] / row[n]['us']:.2f}x){' WRONG' if row[n]['wrong'] else ''}"
                for n in variants), flush=True)
    return out


# Part 3 (--band): the decode tiles for 33-64 rows on operands copied beforehand (the copy not timed) against the same
# product with K = 4096 (aligned as allocated): which tiles, and is an odd K (a tail block) what costs?
BAND_SHAPES = [(33, 4096, 4096), (33, 4097, 4096), (64, 4096, 4096), (64, 4097, 4096), (48, 2489, 2305),
               (36, 2489, 2305)]
BAND_CONFIGS = [None] + [{"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 1, "num_warps": w, "num_stages": st,
                          "SPLIT_K": sp}
                         for bm, bn, bk, w, st, sp in ((64, 64, 128, 4, 4, 2), (64, 64, 128, 4, 3, 4), (64, 128, 64, 4, 4, 2),
                                                       (64, 64, 128, 8, 4, 2), (32, 64, 128, 4, 4, 2), (32, 64, 128, 4, 4, 4),
                                                       (16, 64, 128, 4, 4, 4), (64, 64, 64, 4, 4, 4))]


def part_band(dev: torch.device) -> list[dict[str, Any]]:
    out = []
    for M, K, N in BAND_SHAPES:
        a = aligned_copy(torch.randn(M, K, device=dev, dtype=torch.bfloat16))
        b = aligned_copy(torch.randn(N, K, device=dev, dtype=torch.bfloat16).t() / K**0.5)
        assert not misaligned(a) and not misaligned(b)
        ref = a.float() @ b.float()
        row: dict[str, Any] = {"M": M, "K": K, "N": N, "cublas_us": ms(lambda: a @ b) * 1e3, "configs": []}
        for cfg in BAND_CONFIGS:
            err = float((gemm.gemm(a, b, config=cfg).float() - ref).abs().max() / ref.abs().max())
            us = ms(lambda cfg=cfg: gemm.gemm(a, b, config=cfg)) * 1e3
            row["configs"].append({"config": cfg, "us": us, "rel_err": err})
        out.append(row)
        print(f"band bf16 {M}x{K}x{N} B^T (copied) cuBLAS {row['cublas_us']:.1f} us: " + "; ".join(
            ("policy" if c["config"] is None else "{BLOCK_M}x{BLOCK_N}x{BLOCK_K} w{num_warps} s{num_stages} k{SPLIT_K}"
             .format(**c["config"])) + f" {c['us']:.1f}{' WRONG' if c['rel_err'] > 3e-2 else ''}"
            for c in row["configs"]), flush=True)
    return out


def part_stride(dev: torch.device) -> list[dict[str, Any]]:
    """--stride: is it the row stride or the K tail that costs? bf16 B^T, the policy's tiles and cuBLAS, for K and
    the row stride of A and B (both K-major) taken apart: (K, stride) = (4096, 4096), (4096, 4104), (4104, 4104),
    (4097, 4104), (4097 zero-padded to K 4224, 4224), (4160, 4160), (4096, 4160)."""
    out = []
    for M in (33, 64):
        for K, stride in ((4096, 4096), (4096, 4104), (4104, 4104), (4097, 4104), (4224, 4224), (4160, 4160),
                          (4096, 4160), (4096, 4352)):
            a = torch.randn(M, stride, device=dev, dtype=torch.bfloat16)[:, :K]
            b = (torch.randn(4096, stride, device=dev, dtype=torch.bfloat16) / 64)[:, :K].t()
            if K == 4224:  # 4097 real columns, the rest zeros: no K tail
                a[:, 4097:] = 0
                b[4097:, :] = 0
            ref = a.float() @ b.float()
            err = float((gemm.gemm(a, b).float() - ref).abs().max() / ref.abs().max())
            row = {"M": M, "K": K, "stride": stride, "cublas_us": ms(lambda: a @ b) * 1e3,
                   "policy_us": ms(lambda: gemm.gemm(a, b)) * 1e3, "rel_err": err}
            out.append(row)
            print(f"stride bf16 {M}x{K}x4096 B^T, rows {stride}: cuBLAS {row['cublas_us']:.1f} us, policy "
                  f"{row['policy_us']:.1f} us{' WRONG' if err > 3e-2 else ''}", flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help=f"M in {QUICK_MS} only")
    ap.add_argument("--json", default=None)
    ap.add_argument("--band", action="store_true", help="part 3 first (the 33-64-row tiles)")
    ap.add_argument("--stride", action="store_true", help="only part_stride")
    ap.add_argument("--no-copy", action="store_true", help="skip part 1")
    args = ap.parse_args()
    dev = torch.device("cuda")
    res: dict[str, Any] = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__}
    if args.stride:
        res["stride"] = part_stride(dev)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(res, f, indent=1)
        return 0
    if args.band:
        res["band"] = part_band(dev)
    if not args.no_copy:
        res["copy"] = part_copy(dev)
    if args.json:  # what ran so far, in case the run is cut short
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    res["gemm"] = part_gemm(dev, QUICK_MS if args.quick else MS)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    print(f"\n{'shape':30} {'cuBLAS us':>9} {'auto x':>7} {'none x':>7} {'copy x':>7}  best")
    for x in res["gemm"]:
        name = f"{x['dtype']} {x['M']}x{x['K']}x{x['N']}{' B^T' if x['b_t'] else ''}"
        r = {n: x["cublas_us"] / x[n]["us"] for n in ("auto", "none", "copy")}
        print(f"{name:30} {x['cublas_us']:9.1f} {r['auto']:7.2f} {r['none']:7.2f} {r['copy']:7.2f}  "
              f"{max(r, key=r.__getitem__)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
