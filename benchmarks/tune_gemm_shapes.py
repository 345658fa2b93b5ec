"""Issue #16 GEMM shapes on one GPU: the policy's config, a few alternatives and torch.matmul (cuBLAS/hipBLASLt),
GPU time by CUDA-graph replay (triton.testing.do_bench_cudagraph: no launch overhead), each result checked against
an fp32 torch.matmul (TF32 off).

    PYTHONPATH=. python benchmarks/tune_gemm_shapes.py [--quick] [--json out.json] [--budget 140]

Shapes: odd sizes (1000^3 fp16/bf16, 4097^3 bf16, 3000x5120x3000 fp16), short K (4096x128x4096, 8192x64x8192),
tall-skinny (65536x4096x128), decode-size M (1/8/16 x 4096x4096, 8x4096x14336, and 16x4096x4096 with B an nn.Linear
weight's transpose), and 1024^3/2048^3 bf16, 1024^3 fp32. Candidates per class are few (each new config costs a
compile, ~1 s; a TMA one ~3 s): the split-K factors around the policy's, other decode tiles, the aligned copy on/off
(ALIGN_COPY), the TMA kernel against the pointer kernel. A --budget (seconds) stops starting new candidates, so a
run stays under ~150 s on an H100; what it skipped is printed. The last thing printed is one table: shape, config,
us, x cuBLAS (>1 is faster than cuBLAS), ok (max |ours - ref| / max |ref| within the dtype's bound). Decode rows also
get an event-timed (do_bench, launch overhead included) column for the policy and torch, since issue #16 saw 175 us
event-timed at 8x4096x4096 where graph replay of 1x4096x4096 was at cuBLAS's speed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import torch

from rocm_triton_doctor.kernels import gemm, policy

BF, FP16, FP32 = torch.bfloat16, torch.float16, torch.float32
REL_TOL = {BF: 1.6e-2, FP16: 4e-3, FP32: 1e-4}  # max |err| / max |ref|: a few output roundings


def tiles(bm: int, bn: int, bk: int, warps: int, stages: int, split: int = 1, group: int = 8, **extra: Any) -> dict[str, Any]:
    return {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": group, "SPLIT_K": split, "num_warps": warps,
            "num_stages": stages, **extra}


def label(cfg: dict[str, Any] | None, kernel: str) -> str:
    if not cfg:
        return "policy" if kernel == "auto" else kernel
    if set(cfg) == {"ALIGN_COPY"}:
        return f"policy copy={'on' if cfg['ALIGN_COPY'] else 'off'}" + ("" if kernel == "auto" else f" {kernel}")
    s = f"{cfg['BLOCK_M']}x{cfg['BLOCK_N']}x{cfg['BLOCK_K']} w{cfg['num_warps']} s{cfg['num_stages']}"
    if cfg.get("SPLIT_K", 1) > 1:
        s += f" split{cfg['SPLIT_K']}"
    if "ALIGN_COPY" in cfg:
        s += f" copy={'on' if cfg['ALIGN_COPY'] else 'off'}"
    return s + ("" if kernel == "auto" else f" {kernel}")


def candidates(M: int, K: int, N: int, dtype: torch.dtype, bt: bool, quick: bool) -> list[tuple[dict[str, Any] | None, str]]:
    """(config, kernel) pairs after the policy's own (None, "auto")."""
    t = policy.target_for_device("cuda")
    elem = torch.empty((), dtype=dtype).element_size()
    cus = torch.cuda.get_device_properties(0).multi_processor_count
    pol = policy.gemm_config(t, M, N, K, elem, cus=cus, b_nmajor=not bt)
    pol_tma = elem == 2 and policy.gemm_use_tma(t, M, N, K) and not (K * elem) % 16 and not (N * elem) % 16
    keys = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "SPLIT_K", "num_warps", "num_stages")
    same = lambda c, k: (k == "tma") == pol_tma and all(c.get(x, 1) == pol.get(x, 1) for x in keys)  # noqa: E731
    return [(c, k) for c, k in _candidates(M, K, N, dtype, bt, quick, pol, elem, 2 * cus)
            if (k != "tma" or policy.tma_supported(t)) and not (c and "BLOCK_M" in c and same(c, k))]


def _candidates(M: int, K: int, N: int, dtype: torch.dtype, bt: bool, quick: bool, pol: dict[str, Any], elem: int,
                want: int) -> list[tuple[dict[str, Any] | None, str]]:
    out: list[tuple[dict[str, Any] | None, str]] = []
    if M <= 32:  # decode: no split and twice the policy's split, then other tiles (split for ~2 programs per SM)
        for s in (1, pol["SPLIT_K"] * 2):
            if s <= 16 and s != pol["SPLIT_K"]:
                out.append(({**pol, "SPLIT_K": s}, "auto"))
        alts = [tiles(16, 64, 128, 4, 4, group=1), tiles(16, 128, 64, 4, 4, group=1), tiles(16, 64, 256, 4, 3, group=1)]
        for alt in alts[: 2 if quick else 3]:
            if any(alt[k] != pol[k] for k in ("BLOCK_N", "BLOCK_K")):
                split = policy._split_k(M, N, K, 16, alt["BLOCK_N"], alt["BLOCK_K"], want, elem)
                out.append(({**alt, "SPLIT_K": split}, "auto"))
        return out
    if K <= 128:  # short K: the TMA kernel (policy on Hopper) against pointer tiles with 2 stages
        out += [(tiles(128, 256, 64, 8, 2), "pointer"), (tiles(128, 128, 64, 8, 2), "pointer")]
        if not quick:
            out += [(tiles(128, 128, 32, 4, 2), "pointer"), ({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8,
                                                              "num_warps": 8, "num_stages": 3}, "tma")]
        return out
    if N <= 128:  # tall-skinny
        out += [({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3}, "tma"),
                (tiles(128, 128, 64, 8, 4), "pointer")]
        if not quick:
            out += [(tiles(256, 128, 64, 8, 3), "pointer")]
        return out
    if (K * elem) % 16 or (N * elem) % 16:  # rows not 16-byte aligned: the aligned copy on/off, pointer kernel after it
        out += [({"ALIGN_COPY": False}, "auto"), ({"ALIGN_COPY": True}, "pointer")]
        if not quick:
            out += [(tiles(128, 128, 32, 8, 3, ALIGN_COPY=False), "pointer")]
        return out
    if dtype == FP32:
        return [(tiles(64, 128, 32, 4, 4), "pointer"), (tiles(128, 64, 32, 4, 4), "pointer")][: 1 if quick else 2]
    out += [(tiles(128, 128, 64, 8, 3), "pointer"), (tiles(64, 128, 64, 4, 4), "pointer"),
            (tiles(128, 256, 64, 8, 4), "pointer")]
    if not quick:
        out += [(tiles(64, 64, 64, 4, 4), "pointer"),
                ({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 4}, "tma")]
    return out


SHAPES: list[tuple[int, int, int, torch.dtype, bool]] = [  # (M, K, N, dtype, B is a Linear weight's transpose)
    (1000, 1000, 1000, FP16, False), (1000, 1000, 1000, BF, False), (4097, 4097, 4097, BF, False),
    (3000, 5120, 3000, FP16, False), (4096, 128, 4096, BF, False), (8192, 64, 8192, BF, False),
    (65536, 4096, 128, BF, False), (1, 4096, 4096, BF, False), (8, 4096, 4096, BF, False),
    (16, 4096, 4096, BF, False), (8, 4096, 14336, BF, False), (16, 4096, 4096, BF, True),
    (1024, 1024, 1024, BF, False), (2048, 2048, 2048, BF, False), (1024, 1024, 1024, FP32, False)]
QUICK = [(1000, 1000, 1000, FP16, False), (4097, 4097, 4097, BF, False), (4096, 128, 4096, BF, False),
         (65536, 4096, 128, BF, False), (8, 4096, 4096, BF, False), (16, 4096, 4096, BF, False),
         (1024, 1024, 1024, BF, False)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="7 shapes, fewer candidates (~1 min)")
    ap.add_argument("--json", metavar="PATH", help="write every row (and the device, versions) as JSON here")
    ap.add_argument("--budget", type=float, default=140.0, help="start no new candidate after this many seconds")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("tune_gemm_shapes: needs a GPU (torch.cuda.is_available() is False)", file=sys.stderr)
        return 3
    import triton
    from triton.testing import do_bench, do_bench_cudagraph

    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 rows: IEEE on both sides (gemm's default precision)
    dev = torch.device("cuda")
    t0 = time.monotonic()
    rows: list[dict[str, Any]] = []
    skipped: list[str] = []
    for M, K, N, dtype, bt in (QUICK if args.quick else SHAPES):
        shape = f"{str(dtype)[6:]} {M}x{K}x{N}" + (" B^T" if bt else "")
        gen = torch.Generator(device=dev).manual_seed(0)
        a = torch.randn(M, K, device=dev, dtype=FP32, generator=gen).to(dtype)
        b = (torch.randn(N, K, device=dev, dtype=FP32, generator=gen).t() if bt else
             torch.randn(K, N, device=dev, dtype=FP32, generator=gen)) * K ** -0.5
        b = b.to(dtype)  # .to() on the transposed view keeps its layout (preserve_format)
        ref = a.float() @ b.float()
        scale = ref.abs().max().item()
        blas_us = do_bench_cudagraph(lambda: torch.matmul(a, b), rep=20, return_mode="median") * 1e3
        row = {"shape": shape, "M": M, "K": K, "N": N, "dtype": str(dtype)[6:], "bt": bt, "config": "torch.matmul",
               "us": round(blas_us, 2), "x_cublas": 1.0, "rel_err": 0.0, "ok": True}
        if M <= 32:
            row["event_us"] = round(do_bench(lambda: torch.matmul(a, b), warmup=10, rep=40, return_mode="median") * 1e3, 2)
        rows.append(row)
        print(f"{shape:28s} {'torch.matmul':36s} {blas_us:9.2f} us", flush=True)
        for cfg, kernel in [(None, "auto")] + candidates(M, K, N, dtype, bt, args.quick):
            name = label(cfg, kernel)
            if time.monotonic() - t0 > args.budget:
                skipped.append(f"{shape} {name}")
                continue
            r: dict[str, Any] = {"shape": shape, "M": M, "K": K, "N": N, "dtype": str(dtype)[6:], "bt": bt,
                                 "config": name, "params": cfg, "kernel": kernel}
            try:
                fn = lambda cfg=cfg, kernel=kernel: gemm.gemm(a, b, config=cfg, kernel=kernel)  # noqa: E731
                out = fn()
                err = ((out.float() - ref).abs().max().item() / scale) if scale else 0.0
                us = do_bench_cudagraph(fn, rep=20, return_mode="median") * 1e3
                r.update(us=round(us, 2), x_cublas=round(blas_us / us, 3), rel_err=float(f"{err:.3g}"),
                         ok=bool(err <= REL_TOL[dtype]))
                if M <= 32 and cfg is None:
                    r["event_us"] = round(do_bench(fn, warmup=10, rep=40, return_mode="median") * 1e3, 2)
            except Exception as exc:  # noqa: BLE001 - a config the compiler or the launcher refuses is that row's result
                r.update(us=None, x_cublas=None, ok=False, error=f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
                         if str(exc) else type(exc).__name__)
            rows.append(r)
            print(f"{shape:28s} {name:36s} {r['us'] if r['us'] is not None else float('nan'):9.2f} us  "
                  f"x{r['x_cublas'] or 0:.2f}  {'ok' if r['ok'] else 'FAIL ' + str(r.get('error', r.get('rel_err')))}",
                  flush=True)
    secs = time.monotonic() - t0
    dev_name = torch.cuda.get_device_name(0)
    print(f"\n{dev_name}, torch {torch.__version__}, triton {triton.__version__}, {secs:.0f} s"
          + (f"; budget reached, skipped {len(skipped)}: {', '.join(skipped)}" if skipped else ""))
    print(f"{'shape':28s} {'config':36s} {'us':>9s} {'x cuBLAS':>9s} {'ev us':>8s}  ok")
    for r in rows:
        us = f"{r['us']:9.2f}" if r.get("us") is not None else f"{'-':>9s}"
        x = f"{r['x_cublas']:9.2f}" if r.get("x_cublas") is not None else f"{'-':>9s}"
        ev = f"{r['event_us']:8.1f}" if "event_us" in r else f"{'':8s}"
        ok = "ok" if r["ok"] else f"FAIL {r.get('error') or r.get('rel_err')}"
        print(f"{r['shape']:28s} {r['config']:36s} {us} {x} {ev}  {ok}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": dev_name, "torch": torch.__version__, "triton": triton.__version__, "seconds": round(secs, 1),
                       "skipped": skipped, "rows": rows}, f, indent=1)
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
