"""Long K over a handful of output tiles (issue #16, session 32's hunt 8: fp32 169x81x15545 at 0.68x cuBLAS forward):
the policy caps its K split at 16 (policy_waves.LATENCY_SPLIT_MAX), so a grid of 6 tiles runs 96 programs on 132 SMs,
each walking about a thousand elements of K. This probe times the policy's own tiles at its split and at 2, 4 and 8
times it (graph replay, against torch.matmul at the same precision: IEEE fp32, no TF32), each checked against an
fp64 product first, and prints, per row, every split's ratio to cuBLAS.

    PYTHONPATH=. python benchmarks/gemm_longk_probe.py [--json PATH]
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import torch
import triton.testing as tt

from rocm_triton_doctor.kernels import gemm

# (dtype, M, N, K, layout of B): few output tiles, long K; aligned and misaligned rows, N-major and K-major B.
ROWS: list[tuple[str, int, int, int, str]] = [
    ("float32", 169, 81, 15545, "N"), ("float32", 48, 115, 2398, "N"), ("float32", 128, 128, 16384, "N"),
    ("float32", 100, 300, 30000, "N"), ("float32", 256, 64, 8192, "T"), ("float32", 77, 200, 12345, "T"),
    ("float32", 300, 180, 6000, "N"), ("float32", 64, 64, 65536, "N"), ("float32", 520, 96, 20000, "T"),
    ("bfloat16", 169, 81, 15545, "N"), ("bfloat16", 200, 200, 20000, "N"), ("bfloat16", 86, 659, 5763, "T"),
    ("float16", 64, 96, 50000, "N"), ("bfloat16", 128, 256, 32768, "T"), ("float16", 333, 120, 9999, "N"),
]
KEYS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_warps", "num_stages")


def operands(dt: torch.dtype, M: int, N: int, K: int, layout: str, g: torch.Generator) -> tuple[torch.Tensor, ...]:
    a = torch.randn((M, K), generator=g, device="cuda").to(dt)
    w = (torch.randn((N, K) if layout == "T" else (K, N), generator=g, device="cuda") * K ** -0.5).to(dt)
    return a, (w.t() if layout == "T" else w)


def policy_plan(a: torch.Tensor, b: torch.Tensor) -> tuple[dict[str, Any], int, int]:
    """The policy's tiles for this call (its cached plan's first part), its split and how many parts it runs."""
    gemm.clear_plans()
    gemm.gemm(a, b)
    plan = next(iter(gemm._PLANS.values()))
    part = plan.parts[0]
    return {k: part.kw[k] for k in KEYS if k in part.kw}, part.split, len(plan.parts)


def row(spec: tuple[str, int, int, int, str], g: torch.Generator) -> dict[str, Any]:
    name, M, N, K, layout = spec
    dt = getattr(torch, name)
    a, b = operands(dt, M, N, K, layout, g)
    ref = a.double() @ b.double()
    tiles, split, parts = policy_plan(a, b)
    out: dict[str, Any] = {"row": f"{name} {M}x{N}x{K} {'B^T' if layout == 'T' else ''}".strip(), "tiles": tiles,
                           "split": split, "parts": parts,
                           "torch_us": tt.do_bench_cudagraph(lambda: a @ b, rep=40) * 1e3,
                           "policy_us": tt.do_bench_cudagraph(lambda: gemm.gemm(a, b), rep=40) * 1e3}
    tol = 1e-4 if dt == torch.float32 else 2e-2
    for mult in (1, 2, 4, 8):
        s = split * mult
        if K // s < tiles["BLOCK_K"]:
            continue
        cfg = {**tiles, "SPLIT_K": s}
        err = float((gemm.gemm(a, b, config=cfg).double() - ref).abs().max() / ref.abs().max())
        out[f"s{s}"] = (tt.do_bench_cudagraph(lambda: gemm.gemm(a, b, config=cfg), rep=40) * 1e3 if err < tol
                        else f"wrong {err:.1e}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False  # cuBLAS's fp32 as a model gets it by default: IEEE products
    g = torch.Generator(device="cuda").manual_seed(0)
    rows = []
    for spec in ROWS:
        r = row(spec, g)
        rows.append(r)
        t = r["torch_us"]
        splits = " ".join(f"{k}={t / v:.2f}" if isinstance(v, float) else f"{k}={v}"
                          for k, v in r.items() if k.startswith("s") and k[1:].isdigit())
        print(f"{r['row']:28} {r['tiles']['BLOCK_M']}x{r['tiles']['BLOCK_N']}x{r['tiles']['BLOCK_K']} parts {r['parts']} "
              f"cuBLAS {t:7.1f} us  policy {t / r['policy_us']:.2f} (split {r['split']})  {splits}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
