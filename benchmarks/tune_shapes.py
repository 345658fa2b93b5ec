"""Issue #16 sweeps for tune.py (--parts gemm_decode,gemm_odd,attn_shapes): the GEMM and attention shape classes
the bench presets never had — decode-size M with split-K, odd sizes in fp16 AND bf16 side by side (the issue's
0.15x-vs-0.95x pair), and attention at S not a multiple of the block, every head dim, GQA and the model layout.
Each row: the policy's choice (and a few alternatives) against cuBLAS / SDPA in the same run."""

from __future__ import annotations

from typing import Any

import torch
from triton.testing import do_bench

from rocm_triton_doctor.kernels import attention, gemm, policy


def ms(fn) -> float:  # type: ignore[no-untyped-def]
    return float(do_bench(fn, warmup=25, rep=100, return_mode="median"))


def _row(rows: list[dict[str, Any]], text: str, **row: Any) -> None:
    rows.append(row)
    print(text, flush=True)


def tune_gemm_decode(dev: torch.device, ceil: Any, rows: list[dict[str, Any]]) -> None:
    target = policy.target_for_device("cuda")
    for dtype in (torch.float16, torch.bfloat16):
        for K, N in ((4096, 4096), (4096, 11008), (11008, 4096)):
            B = torch.randn(K, N, device=dev, dtype=dtype) / K**0.5
            for M in (1, 8, 16, 32):
                A = torch.randn(M, K, device=dev, dtype=dtype)
                t_blas = ms(lambda A=A: A @ B)
                pol = dict(policy.gemm_config(target, M, N, K, 2))
                cands = [pol] + [{**pol, "SPLIT_K": s, "BLOCK_N": bn} for s in (1, 2, 4, 8) for bn in (32, 64, 128)
                                 if (s, bn) != (pol["SPLIT_K"], pol["BLOCK_N"])]
                for cfg in cands:
                    t = ms(lambda A=A, cfg=cfg: gemm.gemm(A, B, config=cfg))
                    tag = "policy" if cfg is pol else ""
                    _row(rows, f"gemm_decode {str(dtype)[6:]} M={M} K={K} N={N} split={cfg['SPLIT_K']} BN={cfg['BLOCK_N']}"
                         f" {tag}: {t * 1e3:7.1f} us x cuBLAS {t_blas / t:.2f}", kernel="gemm_decode", dtype=str(dtype)[6:],
                         M=M, K=K, N=N, config=cfg, policy=cfg is pol, ms=t, cublas_ms=t_blas)


def tune_gemm_odd(dev: torch.device, ceil: Any, rows: list[dict[str, Any]]) -> None:
    for M, K, N in ((1023, 517, 769), (1000, 1000, 1000), (4097, 4096, 4096), (2048, 16, 4096), (8192, 4096, 28672 // 4)):
        for dtype in (torch.float16, torch.bfloat16):
            A = torch.randn(M, K, device=dev, dtype=dtype)
            B = torch.randn(K, N, device=dev, dtype=dtype) / K**0.5
            bias = torch.randn(N, device=dev, dtype=dtype)
            for epi in ("none", "bias_relu"):
                bb = bias if epi != "none" else None
                t_e = ms(lambda A=A, B=B, bb=bb: A @ B if bb is None else torch.relu(A @ B + bb))
                t = ms(lambda A=A, B=B, bb=bb, epi=epi: gemm.gemm(A, B, bb, epi))
                _row(rows, f"gemm_odd {str(dtype)[6:]:8s} {M}x{K}x{N} {epi:9s}: {t * 1e3:8.1f} us x eager {t_e / t:.2f}",
                     kernel="gemm_odd", dtype=str(dtype)[6:], M=M, K=K, N=N, epilogue=epi, ms=t, eager_ms=t_e)


def tune_attn_shapes(dev: torch.device, ceil: Any, rows: list[dict[str, Any]]) -> None:
    sdpa = torch.nn.functional.scaled_dot_product_attention
    for S in (1000, 4097):
        for D in (64, 80, 96, 128, 256):
            for H, H_kv, layout in ((32, 32, "BHSD"), (32, 8, "BSHD")):
                def make(h: int) -> torch.Tensor:
                    if layout == "BSHD":
                        return torch.randn(2, S, h, D, device=dev, dtype=torch.bfloat16).transpose(1, 2)
                    return torch.randn(2, h, S, D, device=dev, dtype=torch.bfloat16)

                q, k, v = make(H), make(H_kv), make(H_kv)
                for causal in (False, True):
                    fl = 4.0 * 2 * H * S * S * D * (0.5 if causal else 1.0)
                    ts = ms(lambda: sdpa(q, k, v, is_causal=causal, enable_gqa=H_kv != H))
                    t = ms(lambda: attention.attention(q, k, v, causal))
                    _row(rows, f"attn S={S} D={D} H={H}/{H_kv} {layout} causal={causal!s:5s}: {fl / t / 1e9:5.0f} TF/s "
                         f"x SDPA {ts / t:.2f}", kernel="attn_shapes", S=S, D=D, H=H, H_kv=H_kv, layout=layout,
                         causal=causal, ms=t, sdpa_ms=ts)


SWEEPS = {"gemm_decode": tune_gemm_decode, "gemm_odd": tune_gemm_odd, "attn_shapes": tune_attn_shapes}
