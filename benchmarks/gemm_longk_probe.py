"""Long K over a handful of output tiles (issue #16, session 32's hunt 8: fp32 169x81x15545 at 0.68x cuBLAS forward):
the policy caps its K split at 16 (policy_waves.LATENCY_SPLIT_MAX), so a grid of 6 tiles runs 96 programs on 132 SMs,
each walking about a thousand elements of K. This probe times the policy's own tiles at its split and at 2, 4 and 8
times it (graph replay, against torch.matmul at the same precision: IEEE fp32, no TF32), each checked against an
fp64 product first, and prints, per row, every split's ratio to cuBLAS.

    PYTHONPATH=. python benchmarks/gemm_longk_probe.py [--fresh] [--json PATH]
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
    ("float32", 256, 256, 8192, "N"), ("float32", 64, 512, 10000, "T"), ("float32", 200, 200, 20000, "N"),
    ("float32", 384, 128, 4096, "N"),
    ("bfloat16", 169, 81, 15545, "N"), ("bfloat16", 200, 200, 20000, "N"), ("bfloat16", 86, 659, 5763, "T"),
    ("float16", 64, 96, 50000, "N"), ("bfloat16", 128, 256, 32768, "T"), ("float16", 333, 120, 9999, "N"),
]
# Rows the session-33 rules were not drawn from (--fresh): how the rules do on shapes they were not fitted to. (The
# session's --fresh run, …-s33-longk-fresh.json, also ran the last six rows of ROWS: a list edit had moved them.)
FRESH: list[tuple[str, int, int, int, str]] = [
    ("float32", 90, 70, 20000, "N"), ("float32", 150, 250, 12000, "T"), ("bfloat16", 100, 100, 40000, "N"),
    ("float16", 300, 64, 16000, "T"), ("float32", 33, 300, 9000, "N"), ("bfloat16", 256, 128, 12288, "N"),
    ("float32", 4096, 2048, 128, "T"), ("float32", 1000, 100, 1000, "N"), ("float32", 3000, 96, 3000, "T"),
    ("float32", 700, 120, 7000, "N"), ("bfloat16", 60, 1000, 24000, "T"), ("float32", 128, 96, 50000, "T"),
]
KEYS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_warps", "num_stages")


def operands(dt: torch.dtype, M: int, N: int, K: int, layout: str, g: torch.Generator) -> tuple[torch.Tensor, ...]:
    a = torch.randn((M, K), generator=g, device="cuda").to(dt)
    w = (torch.randn((N, K) if layout == "T" else (K, N), generator=g, device="cuda") * K ** -0.5).to(dt)
    return a, (w.t() if layout == "T" else w)


def planned(a: torch.Tensor, b: torch.Tensor, **kw: Any) -> Any:
    """The launch plan gemm(a, b, **kw) keeps for its call signature (None: the TMA kernel ran, unplanned)."""
    gemm.clear_plans()
    gemm.gemm(a, b, **kw)
    return next(iter(gemm._PLANS.values()), None)


def save(path: str | None, rows: list[dict[str, Any]]) -> None:
    if path:
        with open(path, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}, f, indent=1)


def policy_plan(a: torch.Tensor, b: torch.Tensor) -> tuple[dict[str, Any], int, int, str]:
    """The policy's tiles for this call (its cached plan's first part), its split, how many parts it runs and its
    kernel's name."""
    plan = planned(a, b)
    part = plan.parts[0]
    return {k: part.kw[k] for k in KEYS if k in part.kw}, part.split, len(plan.parts), getattr(part.kern, "__name__", str(part.kern))


def row(spec: tuple[str, int, int, int, str], g: torch.Generator) -> dict[str, Any]:
    name, M, N, K, layout = spec
    dt = getattr(torch, name)
    a, b = operands(dt, M, N, K, layout, g)
    ref = a.double() @ b.double()
    tiles, split, parts, kern = policy_plan(a, b)
    out: dict[str, Any] = {"row": f"{name} {M}x{N}x{K} {'B^T' if layout == 'T' else ''}".strip(), "tiles": tiles,
                           "split": split, "parts": parts, "kernel": kern,
                           "torch_us": tt.do_bench_cudagraph(lambda: a @ b, rep=40) * 1e3,
                           "policy_us": tt.do_bench_cudagraph(lambda: gemm.gemm(a, b), rep=40) * 1e3}
    if kern != "gemm_kernel":  # the GEMV kernel's plan: timed as the policy's only
        return out
    tol = 1e-4 if dt == torch.float32 else 2e-2
    variants = [("", tiles, s) for s in sorted({split, 8, 16, 32, 64})]
    if dt == torch.float32:  # smaller tiles, more programs: fp32 multiply-adds on CUDA cores are the bound there
        small = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 3}
        variants += [("t64x64_", small, s) for s in (16, 32, 64)]
        if N > 64:  # the skinny rule's fp32 tiles before session 33
            variants += [("t64x128x64_", {**small, "BLOCK_N": 128, "BLOCK_K": 64}, 16)]
    for tag, t, s in variants:
        if K // s < t["BLOCK_K"] or s > 64:  # gemm refuses more than 64 splits
            continue
        cfg = {**t, "SPLIT_K": s}
        err = float((gemm.gemm(a, b, config=cfg).double() - ref).abs().max() / ref.abs().max())
        out[f"{tag}s{s}"] = (tt.do_bench_cudagraph(lambda: gemm.gemm(a, b, config=cfg), rep=40) * 1e3 if err < tol
                        else f"wrong {err:.1e}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    ap.add_argument("--fresh", action="store_true", help="the rows the rules were not drawn from")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False  # cuBLAS's fp32 as a model gets it by default: IEEE products
    g = torch.Generator(device="cuda").manual_seed(0)
    rows = []
    for spec in FRESH if args.fresh else ROWS:
        r = row(spec, g)
        rows.append(r)
        t = r["torch_us"]
        splits = " ".join(f"{k}={t / v:.2f}" if isinstance(v, float) else f"{k}={v}"
                          for k, v in r.items() if k.split("_")[-1][:1] == "s" and k.split("_")[-1][1:].isdigit())
        print(f"{r['row']:28} {r['kernel']} {r['tiles'].get('BLOCK_M')}x{r['tiles'].get('BLOCK_N')}x"
              f"{r['tiles'].get('BLOCK_K')} parts {r['parts']} "
              f"cuBLAS {t:7.1f} us  policy {t / r['policy_us']:.2f} (split {r['split']})  {splits}", flush=True)
    save(args.json, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
