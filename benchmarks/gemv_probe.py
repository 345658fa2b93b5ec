"""A few rows of A against a weight: the GEMV kernel (gemm_kernels.gemv_kernel, policy_gemv.py) against the tile
kernel's decode path (kernel="pointer") and cuBLAS (eager torch, with the same epilogue), in GPU time (CUDA-graph
replay), with variants of the GEMV policy (tiles twice and half as large, half / twice the K split) to
see whether the rule's choices hold. Shapes: LLM decode steps (M = 1-8 against 4096x4096, 4096x14336, 14336x4096
weights, nn.Linear's layout and the row-major one) and the decode rows of the random GEMM draws that ran worst
(docs/measurements/2026-11-27-h200-s9-gemm-ab-*.json). Every output is checked against an fp64 product. The weight's
read is also given as % of the copy bandwidth measured in the same run.

    PYTHONPATH=.:benchmarks python benchmarks/gemv_probe.py --json gemv.json
    PYTHONPATH=.:benchmarks python benchmarks/gemv_probe.py --longk --chunks --pipe --json pipe.json  (session 18)
    PYTHONPATH=.:benchmarks python benchmarks/gemv_probe.py --shortk --json shortk.json  (session 23: a K-major weight
        with a short K, K blocks cut to fit K and the columns widened to keep the tile)
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import torch
from triton.testing import do_bench, do_bench_cudagraph

from rocm_triton_doctor.kernels import gemm, policy
from rocm_triton_doctor.kernels.aligned_copy import misaligned
from rocm_triton_doctor.kernels.tolerances import tolerance

F32, BF16, F16 = torch.float32, torch.bfloat16, torch.float16
# (M, K, N, dtype, B^T, epilogue): the random draws' worst decode rows first, then LLM decode steps.
SHAPES: list[tuple[int, int, int, torch.dtype, bool, str]] = [
    (1, 14854, 64, F32, True, "bias_gelu"), (2, 1068, 11660, F32, True, "none"), (8, 2876, 11229, F32, True, "bias_gelu"),
    (1, 1482, 165, F32, True, "bias_relu"), (5, 1527, 1315, F32, False, "none"), (3, 1346, 31141, F32, False, "bias_relu"),
    (1, 6364, 38, F16, True, "none"), (3, 5290, 19666, BF16, True, "none"), (2, 11402, 17198, BF16, True, "bias"),
    (1, 3519, 193, BF16, False, "bias_gelu"), (4, 270, 3298, BF16, False, "bias_relu"),
    # misaligned weights in 16 bits (odd K for B^T, odd N row-major) and GPT-2's LM head (V = 50257) in fp32/bf16
    (1, 4097, 4096, BF16, True, "none"), (3, 4097, 11008, F16, True, "bias"), (2, 4096, 4097, BF16, False, "none"),
    (1, 768, 50257, F32, True, "none"), (1, 768, 50257, BF16, True, "none"), (8, 768, 50257, F32, True, "none"),
]
# --chunks: more rows than one program holds (the GEMV in chunks of 8 rows) against misaligned weights, the worst
# rows of the random draws after the GEMV rule (docs/measurements/2026-11-27-h200-s11-ab-gemv-final-*.json), and
# aligned controls.
CHUNK_SHAPES: list[tuple[int, int, int, torch.dtype, bool, str]] = [
    (89, 589, 1577, F32, True, "none"), (25, 83, 194, F32, True, "none"), (30, 2350, 7191, F32, False, "bias_relu"),
    (71, 517, 16549, F32, True, "none"), (63, 433, 1726, F32, True, "none"), (19, 4824, 2333, F32, True, "none"),
    (12, 4097, 4096, F32, True, "none"), (16, 4096, 4096, F32, True, "none"), (32, 4096, 4096, F32, True, "none"),
    (53, 2696, 15562, BF16, False, "none"), (136, 1435, 8373, BF16, True, "none"), (58, 1546, 19918, BF16, True, "bias"),
    (42, 839, 4016, BF16, True, "none"), (16, 4097, 4096, BF16, True, "none"), (12, 6721, 26166, BF16, True, "none"),
]
# --longk: fp32 against a misaligned weight with more rows than one program holds and a long K (session 17's hunt
# seed 7: 28x6016x26517 at 0.12x cuBLAS, 29x7906x2320 B^T 0.55x; seed 4: 49x2867x15547 0.45x), the small-B cliff's
# aligned rows the GEMV lost (cliff_probe.py), and short rows of both layouts.
LONGK_SHAPES: list[tuple[int, int, int, torch.dtype, bool, str]] = [
    (28, 6016, 26517, F32, False, "none"), (49, 2867, 15547, F32, False, "none"), (29, 7906, 2320, F32, True, "none"),
    (17, 4096, 11007, F32, False, "bias"), (64, 8191, 4097, F32, True, "none"), (96, 3000, 20001, F32, False, "none"),
    (3, 70, 161, F32, False, "none"), (8, 4096, 14335, F32, False, "none"), (8192, 2048, 4, F32, False, "none"),
    (8192, 2047, 4, F32, False, "none"), (1000, 32, 32, F32, False, "none"), (4905, 1367, 8, F32, False, "none"),
    (2, 4096, 4097, BF16, False, "none"), (1, 832, 27011, BF16, False, "none"),
]
# --shortk: a K-major weight with K of 8-96 (hunt seed 16's bf16 1x17x23227 B^T ran 0.40x eager on 128-deep K blocks
# of which 17 rows were real) and controls at K = 128-4096.
SHORTK_SHAPES: list[tuple[int, int, int, torch.dtype, bool, str]] = [
    (1, 17, 23227, BF16, True, "none"), (2, 19, 210, F32, True, "none"), (2, 63, 378, F32, True, "none"),
    (1, 33, 50257, F32, True, "none"), (3, 45, 11008, F16, True, "bias"), (1, 9, 65536, BF16, True, "none"),
    (8, 24, 8192, F32, True, "none"), (2, 81, 4096, BF16, True, "bias_relu"), (1, 61, 32000, F16, True, "none"),
    (4, 95, 14336, F32, True, "none"), (1, 5, 4099, F32, True, "none"), (1, 129, 8192, BF16, True, "none"),
    (2, 4097, 4096, BF16, True, "none"),
]
for _m in (1, 2, 4, 8):
    for _k, _n in ((4096, 4096), (4096, 14336), (14336, 4096)):
        SHAPES.append((_m, _k, _n, BF16, True, "none"))
    SHAPES.append((_m, 4096, 4096, BF16, False, "none"))
for _m in (1, 4, 8):
    SHAPES += [(_m, 4096, 4096, F32, True, "none"), (_m, 4096, 14336, F32, False, "none")]


def variants(t: policy.Target, M: int, N: int, K: int, elem: int, kmajor: bool, cus: int) -> dict[str, dict[str, Any]]:
    base = dict(policy.gemv_config(t, M, N, K, elem, kmajor, cus))
    out = {"gemv": base}
    big = dict(base)
    if kmajor:
        big["BLOCK_N"] *= 2
    else:
        big["BLOCK_K"] *= 2
    out["gemv 2x tile"] = big
    half = dict(base)
    if kmajor and base["BLOCK_N"] > 16:
        half["BLOCK_N"] //= 2
        out["gemv tile/2"] = half
    elif not kmajor and base["BLOCK_K"] > 1:
        half["BLOCK_K"] //= 2
        out["gemv tile/2"] = half
    if base["SPLIT_K"] > 1:
        out["gemv split/2"] = {**base, "SPLIT_K": base["SPLIT_K"] // 2}
    if base["SPLIT_K"] * 2 * base["BLOCK_K"] * 4 <= K:
        out["gemv split*2"] = {**base, "SPLIT_K": base["SPLIT_K"] * 2}
    return out


def shortk_variants(t: policy.Target, M: int, N: int, K: int, elem: int, kmajor: bool,
                    cus: int) -> dict[str, dict[str, Any]]:
    """--shortk: the policy's K-major tiles, and K blocks cut to the power of two at or above K (16 at least) with the
    columns widened to keep the tile's elements (and half that width)."""
    base = dict(policy.gemv_config(t, M, N, K, elem, kmajor, cus))
    out = {"gemv": base}
    fit = max(16, 1 << (K - 1).bit_length())
    if kmajor and fit < base["BLOCK_K"]:
        wide = base["BLOCK_N"] * base["BLOCK_K"] // fit
        out["gemv kfit"] = {**base, "BLOCK_K": fit, "BLOCK_N": wide, "SPLIT_K": 1}
        out["gemv kfit n/2"] = {**base, "BLOCK_K": fit, "BLOCK_N": max(16, wide // 2), "SPLIT_K": 1}
        out["gemv kfit n/4"] = {**base, "BLOCK_K": fit, "BLOCK_N": max(16, wide // 4), "SPLIT_K": 1}
    return out


def pipe_variants(t: policy.Target, M: int, N: int, K: int, elem: int, kmajor: bool, cus: int) -> dict[str, dict[str, Any]]:
    """--pipe: the policy's GEMV tiles with its K loop software-pipelined STAGES deep (tl.range num_stages: loads of
    the next steps in flight while this one multiplies; 1 = not pipelined, what the kernel did before), and twice
    the tile at 3 stages."""
    base = dict(policy.gemv_config(t, M, N, K, elem, kmajor, cus))
    out = {f"gemv S{s}": {**base, "STAGES": s} for s in (1, 2, 3, 4)}
    big = {**base, "STAGES": 3}
    big["BLOCK_N" if kmajor else "BLOCK_K"] *= 2
    out["gemv 2x tile S3"] = big
    if base["SPLIT_K"] * 2 * base["BLOCK_K"] * 4 <= K:
        out["gemv split*2 S3"] = {**base, "SPLIT_K": base["SPLIT_K"] * 2, "STAGES": 3}
    return out


def copy_bandwidth(dev: torch.device) -> float:
    """GB/s of a 1 GiB device-to-device copy (bytes read + written): the memory ceiling of this run."""
    src = torch.empty(1 << 28, dtype=torch.float32, device=dev)
    dst = torch.empty_like(src)
    return 2 * src.numel() * 4 / (float(do_bench(lambda: dst.copy_(src), rep=200)) * 1e-3) / 1e9


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    ap.add_argument("--quick", action="store_true", help="the policy only, no variants")
    ap.add_argument("--chunks", action="store_true", help="CHUNK_SHAPES (more than 8 rows) instead of SHAPES")
    ap.add_argument("--longk", action="store_true", help="LONGK_SHAPES (and with --chunks: both)")
    ap.add_argument("--pipe", action="store_true", help="pipe_variants: the K loop pipelined 1-4 stages deep")
    ap.add_argument("--shortk", action="store_true", help="SHORTK_SHAPES with shortk_variants")
    args = ap.parse_args()
    dev = torch.device("cuda")
    t = policy.target_for_device("cuda")
    cus = torch.cuda.get_device_properties(0).multi_processor_count
    copy_gbs = copy_bandwidth(dev)
    print(f"{torch.cuda.get_device_name(0)}, copy {copy_gbs:.0f} GB/s, {cus} SMs", flush=True)
    g = torch.Generator(device=dev).manual_seed(0)
    rows = []
    shapes = ((LONGK_SHAPES if args.longk else []) + (CHUNK_SHAPES if args.chunks else [])
              + (SHORTK_SHAPES if args.shortk else []))
    for M, K, N, dt, bt, epi in shapes or SHAPES:
        a = torch.randn(M, K, device=dev, dtype=dt, generator=g)
        b = (torch.randn(N, K, device=dev, dtype=dt, generator=g).t() if bt
             else torch.randn(K, N, device=dev, dtype=dt, generator=g)) / K**0.5
        bias = torch.randn(N, device=dev, dtype=dt, generator=g) if epi != "none" else None
        ref = gemm.reference(a.double(), b.double(), None if bias is None else bias.double(), epi)
        tol = tolerance(str(dt).removeprefix("torch."))
        name = f"{str(dt).removeprefix('torch.')} {M}x{K}x{N} {epi}{' B^T' if bt else ''}"
        t_blas = float(do_bench_cudagraph(lambda: gemm.eager(a, b, bias, epi, 0.0), rep=30))
        forms: dict[str, Any] = {"pointer": ("pointer", None)}
        vs = (pipe_variants if args.pipe else shortk_variants if args.shortk else variants)(t, M, N, K, dt.itemsize,
                                                                                           bt, cus)
        forms.update({k: ("gemv", v) for k, v in vs.items()} if not args.quick else {"gemv": ("gemv", None)})
        forms["auto"] = ("auto", None)
        takes = policy.gemv_takes(t, M, dt.itemsize, not misaligned(b), bt, K, N)
        row: dict[str, Any] = {"name": name, "cublas_ms": t_blas, "policy": policy.gemv_config(t, M, N, K, dt.itemsize, bt, cus),
                               "auto_kernel": "gemv" if takes else "tiles"}
        for label, (kern, cfg) in forms.items():
            try:
                y = gemm.gemm(a, b, bias, epi, kernel=kern, config=cfg)
                excess = float(((y.double() - ref).abs() - (tol.atol + tol.rtol * ref.abs())).max())
                ms = float(do_bench_cudagraph(lambda kern=kern, cfg=cfg: gemm.gemm(a, b, bias, epi, kernel=kern,
                                                                                    config=cfg), rep=30))
                row[label] = {"ms": ms, "x": t_blas / ms, "ok": excess <= 0, "excess": excess, "config": cfg,
                              "weight_pct_copy": 100 * K * N * dt.itemsize / (ms * 1e-3) / (copy_gbs * 1e9)}
            except Exception as exc:  # noqa: BLE001 - a probe records what failed and goes on
                row[label] = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
        # host time per call, back-to-back without graphs: ours (the default path) and eager
        row["event_us"] = {"auto": float(do_bench(lambda: gemm.gemm(a, b, bias, epi), rep=30)) * 1e3,
                           "eager": float(do_bench(lambda: gemm.eager(a, b, bias, epi, 0.0), rep=30)) * 1e3}
        rows.append(row)
        print(f"{name:42s} cuBLAS {t_blas * 1e3:7.1f} us | " + " | ".join(
            f"{k} {v['x']:.2f}x{'' if v['ok'] else ' WRONG'}" if "x" in v else f"{k} ERR {v['error'][:60]}"
            for k, v in row.items() if isinstance(v, dict) and ("x" in v or "error" in v)), flush=True)
    print("\nshape | cuBLAS us | pointer x | gemv x | auto takes | auto x | best gemv variant | gemv % copy | event us ours/eager")
    first = "gemv S1" if args.pipe else "gemv"
    for r in rows:
        gv = {k: v for k, v in r.items() if k.startswith("gemv") and isinstance(v, dict) and "x" in v}
        best = max(gv, key=lambda k: gv[k]["x"]) if gv else "-"
        print(f"{r['name']} | {r['cublas_ms'] * 1e3:.1f} | {r.get('pointer', {}).get('x', float('nan')):.2f} | "
              f"{r.get(first, {}).get('x', float('nan')):.2f} | {r['auto_kernel']} | "
              f"{r.get('auto', {}).get('x', float('nan')):.2f} | "
              f"{best} {gv.get(best, {}).get('x', float('nan')):.2f} | "
              f"{r.get(first, {}).get('weight_pct_copy', float('nan')):.0f} | "
              f"{r['event_us']['auto']:.1f}/{r['event_us']['eager']:.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                       "copy_gbs": copy_gbs, "rows": rows}, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
