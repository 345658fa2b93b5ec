"""Configuration sweep on a GPU for the kernels issue #5 is about: one run, one table, JSON kept.

Usage: python benchmarks/tune.py [--quick] [--json FILE]
GEMM family (fp16/bf16, 4096^3 and 8192^3; plain, +bias+ReLU, +bias+ReLU+dropout) against eager torch, the
bias+GELU+dropout+residual kernel (16x2048x8192) against the copy ceiling and eager, and attention (bf16, B4 H32
S4096 D128) against scaled_dot_product_attention — each over a few launch configurations, with the device's copy
bandwidth and matmul rate measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import sys

import torch
from triton.testing import do_bench

from rocm_triton_doctor.kernels import attention, bias_gelu_dropout_residual, gemm
from rocm_triton_doctor.kernels.base import dropout_args
from rocm_triton_doctor.smoke.timing import measure_ceilings


def ms(fn) -> float:  # type: ignore[no-untyped-def]
    return float(do_bench(fn, warmup=25, rep=100, return_mode="median"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--parts", default="gemm,bgdr,attention", help="comma list of gemm, bgdr, attention")
    a = ap.parse_args()
    dev = torch.device("cuda")
    ceil = measure_ceilings(dev)
    rows = []
    print(f"device {torch.cuda.get_device_name(0)}; copy {ceil.copy_gbps:.0f} GB/s; matmul {ceil.matmul_tflops}", flush=True)

    gemm_cfgs = [
        {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 4},
        {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3},
    ]
    sizes = (4096,) if a.quick else (4096, 8192)
    parts = set(a.parts.split(","))
    for dtype in ((torch.float16, torch.bfloat16) if "gemm" in parts else ()):
        for n in sizes:
            A = torch.randn(n, n, device=dev, dtype=dtype)
            B = torch.randn(n, n, device=dev, dtype=dtype) / n**0.5
            bias = torch.randn(n, device=dev, dtype=dtype)
            fl = 2 * n**3
            eager = {
                "none": ms(lambda: A @ B),
                "bias_relu": ms(lambda: torch.relu(A @ B + bias)),
                "bias_relu+dropout": ms(lambda: torch.nn.functional.dropout(torch.relu(A @ B + bias), 0.1, True)),
            }
            for epi, p in (("none", 0.0), ("bias_relu", 0.0), ("bias_relu+dropout", 0.1)):
                kind = "bias_relu" if epi != "none" else "none"
                for cfg in gemm_cfgs:
                    try:
                        t = ms(lambda cfg=cfg: gemm.gemm(A, B, bias, kind, p=p, seed=1, config=cfg))
                    except Exception as exc:  # noqa: BLE001
                        print("  fail", epi, cfg, str(exc).splitlines()[0][:120], flush=True)
                        continue
                    row = {"kernel": "gemm", "dtype": str(dtype)[6:], "n": n, "epilogue": epi, "config": cfg,
                           "ms": t, "tflops": fl / t / 1e9, "eager_ms": eager[epi], "x_eager": eager[epi] / t,
                           "pct_matmul": 100 * fl / t / 1e9 / ceil.matmul_tflops[str(dtype)[6:]]}
                    rows.append(row)
                    print(f"gemm {row['dtype']} {n} {epi:18s} {cfg['BLOCK_M']}x{cfg['BLOCK_N']}x{cfg['BLOCK_K']} "
                          f"w{cfg['num_warps']} s{cfg['num_stages']}: {row['tflops']:6.0f} TF/s  x eager "
                          f"{row['x_eager']:.2f}  {row['pct_matmul']:.0f}% of matmul", flush=True)


    bgdr_cfgs = [{"BLOCK_M": bm, "BLOCK_N": bn, "num_warps": w} for bm, bn, w in
                 ((4, 1024, 4), (8, 1024, 8), (16, 512, 8), (2, 2048, 8), (32, 256, 8), (8, 512, 4))]
    B_, S_, H_ = (16, 2048, 8192)
    for dtype in ((torch.float16, torch.bfloat16, torch.float32) if "bgdr" in parts else ()):
        x = torch.randn(B_, S_, H_, device=dev, dtype=dtype)
        r = torch.randn_like(x)
        b = torch.randn(H_, device=dev, dtype=dtype)
        nbytes = (3 * x.numel() + H_) * x.element_size()
        te = ms(lambda: r + torch.nn.functional.dropout(torch.nn.functional.gelu(x + b, approximate="tanh"), 0.1, True))
        for cfg in bgdr_cfgs:
            grid = (triton_cdiv(B_ * S_, cfg["BLOCK_M"]), triton_cdiv(H_, cfg["BLOCK_N"]))
            o = torch.empty_like(x)
            thr, sc = dropout_args(0.1)

            def run(cfg=cfg, grid=grid, o=o, thr=thr, sc=sc):  # type: ignore[no-untyped-def]
                bias_gelu_dropout_residual.bgdr_kernel[grid](x, b, r, o, B_ * S_, H_, 7, thr, sc, HAS_DROPOUT=True, **cfg)

            t = ms(run)
            gbps = nbytes / t / 1e6
            row = {"kernel": "bias_gelu_dropout_residual", "dtype": str(dtype)[6:], "config": cfg, "ms": t, "gbps": gbps,
                   "pct_copy": 100 * gbps / ceil.copy_gbps, "eager_ms": te, "x_eager": te / t}
            rows.append(row)
            print(f"bgdr {row['dtype']:8s} {cfg}: {gbps:7.0f} GB/s {row['pct_copy']:5.1f}% of copy  x eager {row['x_eager']:.2f}",
                  flush=True)


    att_cfgs = [{"BLOCK_M": bm, "BLOCK_N": bn, "num_warps": w, "num_stages": s} for bm, bn, w, s in
                ((128, 64, 8, 3), (128, 64, 8, 4), (128, 128, 8, 3), (128, 128, 8, 4), (64, 64, 4, 3), (64, 64, 4, 4),
                 (64, 128, 4, 3), (128, 32, 8, 3))]
    q, k, v = (torch.randn(4, 32, 4096, 128, device=dev, dtype=torch.bfloat16) for _ in range(3))
    for causal in ((False, True) if "attention" in parts else ()):
        ts = ms(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal))
        fl = 4 * 4 * 32 * 4096 * 4096 * 128 * (0.5 if causal else 1.0)
        for cfg in att_cfgs:
            o = torch.empty_like(q)
            grid = (triton_cdiv(4096, cfg["BLOCK_M"]), 4 * 32)

            def run(cfg=cfg, grid=grid, o=o):  # type: ignore[no-untyped-def]
                attention.attn_fwd_kernel[grid](q, k, v, o, 128 ** -0.5, 32, 4096, q.stride(0), q.stride(1),
                                                q.stride(2), HEAD_DIM=128, CAUSAL=causal, UPCAST=False, **cfg)

            try:
                t = ms(run)
            except Exception as exc:  # noqa: BLE001
                print("  attention fail", cfg, str(exc).splitlines()[0][:120], flush=True)
                continue
            row = {"kernel": "attention", "causal": causal, "config": cfg, "ms": t, "tflops": fl / t / 1e9,
                   "sdpa_ms": ts, "x_sdpa": ts / t}
            rows.append(row)
            print(f"attn causal={causal!s:5s} {cfg}: {row['tflops']:5.0f} TF/s  x SDPA {row['x_sdpa']:.2f}", flush=True)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                       "ceilings": ceil.to_dict(), "rows": rows}, fh, indent=1)


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)


if __name__ == "__main__":
    sys.exit(main())
