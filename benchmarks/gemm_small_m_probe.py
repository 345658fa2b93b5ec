"""Small-batch GEMMs (33 <= M <= 256: prefill of a few short prompts, small training batches) against weights that
are aligned or not: the policy's tiles against the decode-style tiles (policy._decode_config: 16/32/64-row tiles,
B read 256 bytes wide, K split to fill the GPU) that M <= 32 takes. GPU time by CUDA-graph replay, ours / cuBLAS,
every output checked against an fp32 product. (bf16 41x6721x26166 B^T ran at 0.46x cuBLAS and 64x4097x4096 B^T at
0.45x in the shape hunt and the align probe, while M = 32 at the same weights ran 1.1-2.3x.)

    PYTHONPATH=. python benchmarks/gemm_small_m_probe.py --json small-m.json
"""

from __future__ import annotations

import argparse
import json
import sys

import torch
from triton.testing import do_bench_cudagraph

from rocm_triton_doctor.kernels import gemm, policy


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    dev = torch.device("cuda")
    t = policy.target_for_device("cuda")
    cus = torch.cuda.get_device_properties(0).multi_processor_count
    rows = []
    for K, N, bt in ((4096, 4096, True), (4097, 4096, True), (4096, 4097, False), (6721, 26166, True),
                     (4096, 14336, True), (14336, 4096, True)):
        b = (torch.randn(N, K, device=dev, dtype=torch.bfloat16).t() if bt
             else torch.randn(K, N, device=dev, dtype=torch.bfloat16)) / K**0.5
        for M in (33, 41, 48, 64, 96, 128, 192, 256):
            a = torch.randn(M, K, device=dev, dtype=torch.bfloat16)
            ref = a.float() @ b.float()
            t_blas = float(do_bench_cudagraph(lambda: a @ b, rep=20))
            pol = policy.gemm_config(t, M, N, K, 2, cus=cus, b_nmajor=not bt)
            variants = {"policy": None}
            for bm in (32, 64):
                if bm >= M and bm != 64:
                    continue
                d = policy._decode_config(t, 32, N, K, 2, cus, not bt)
                d = {**d, "BLOCK_M": bm,
                     "SPLIT_K": policy._split_k(M, N, K, bm, d["BLOCK_N"], d["BLOCK_K"], 2 * cus, 2)}
                variants[f"decode bm{bm} split{d['SPLIT_K']}"] = d
            row = {"M": M, "K": K, "N": N, "b_t": bt, "cublas_ms": t_blas, "policy_cfg": pol}
            for name, c in variants.items():
                err = float((gemm.gemm(a, b, config=c).float() - ref).abs().max() / ref.abs().max())
                row[name] = {"ms": float(do_bench_cudagraph(lambda c=c: gemm.gemm(a, b, config=c), rep=20)),
                             "rel_err": err, "config": c}
            rows.append(row)
            print(f"bf16 {M}x{K}x{N}{' B^T' if bt else ''} cuBLAS {t_blas * 1e3:.1f} us; policy "
                  f"{pol['BLOCK_M']}x{pol['BLOCK_N']} s{pol['SPLIT_K']}: " + "; ".join(
                      f"{n} {t_blas / row[n]['ms']:.2f}x (err {row[n]['rel_err']:.0e})" for n in variants), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
