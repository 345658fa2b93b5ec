"""The GEMM's fused epilogues timed against their tiles (session 14). The compile-only audit, with pointers marked
16-byte aligned (smoke/aot.py), showed the bias+ReLU+dropout epilogue spilling 1,088 bytes on sm_90 in the policy's
128x256 pointer tiles (312 before the mark): the dropout mask's Philox draws are live beside a 128x256 fp32
accumulator. Are those spills slow, and would smaller tiles or the persistent TMA kernel (whose epilogue runs in
subtiles) be faster? Per shape and epilogue, GPU time by CUDA-graph replay: the policy ("auto"), fixed pointer tiles
and the TMA kernel, against eager (cuBLAS + the epilogue's torch ops) and the same tiles without the epilogue; each
output checked against the case's reference (dropout: the kept elements, scaled).

    PYTHONPATH=. python benchmarks/epilogue_tiles_probe.py [--json PATH] [--quick]
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import torch
from triton.testing import do_bench_cudagraph

from rocm_triton_doctor.kernels import gemm

SHAPES = [(4096, 4096, 4096, torch.bfloat16, False), (2048, 4096, 11008, torch.bfloat16, True),
          (3000, 5120, 3000, torch.float16, False), (1024, 1024, 1024, torch.float16, False),
          (8192, 4096, 4096, torch.bfloat16, True), (1000, 4096, 1000, torch.bfloat16, True)]
EPILOGUES = [("bias_relu", 0.0), ("bias_relu", 0.1), ("bias_gelu", 0.1), ("none", 0.1)]


def tiles(bm: int, bn: int, bk: int, w: int, s: int) -> dict[str, Any]:
    return {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, "num_warps": w, "num_stages": s, "SPLIT_K": 1}


VARIANTS: dict[str, tuple[dict[str, Any] | None, str]] = {
    "auto": (None, "auto"), "128x256 w8 s4": (tiles(128, 256, 64, 8, 4), "pointer"),
    "128x256 w8 s3": (tiles(128, 256, 64, 8, 3), "pointer"), "128x128 w8 s4": (tiles(128, 128, 64, 8, 4), "pointer"),
    "128x128 w4 s4": (tiles(128, 128, 64, 4, 4), "pointer"), "64x128 w4 s4": (tiles(64, 128, 64, 4, 4), "pointer"),
    "tma 128x256": ({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3}, "tma")}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    ap.add_argument("--quick", action="store_true", help="the first three shapes")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    rows: list[dict[str, Any]] = []
    for M, K, N, dt, bt in SHAPES[:3] if args.quick else SHAPES:
        for epi, p in EPILOGUES:
            case = gemm.make_case(M, K, N, dt, epi, p, transposed_b=bt)
            x = case.setup(dev, torch.Generator(device=dev).manual_seed(0))
            ref = case.reference(x).float()
            row: dict[str, Any] = {"name": case.name, "eager_us": do_bench_cudagraph(lambda: case.eager(x), rep=20) * 1e3}
            for name, (cfg, kern) in VARIANTS.items():
                def fn(c: Any = cfg, k: str = kern) -> torch.Tensor:
                    return gemm.gemm(x["a"], x["b"], x["bias"], epi, p, x["seed"], config=c, kernel=k)
                try:
                    out = fn().float()
                except Exception as e:  # noqa: BLE001 - a config that does not launch is a row
                    row[name] = None
                    print(f"  {name}: {type(e).__name__}: {str(e)[:120]}", flush=True)
                    continue
                kept = out != 0 if p > 0 else torch.ones_like(out, dtype=torch.bool)
                want = ref / (1 - p) if p > 0 else ref
                err = ((out - want).abs() > 3e-2 + 3e-2 * want.abs()) & kept
                row[name] = do_bench_cudagraph(fn, rep=20) * 1e3 if not bool(err.any()) else None
            rows.append(row)
            print(f"{row['name']:44s} eager {row['eager_us']:8.1f} " + " ".join(
                f"{n} {row[n]:.1f}" if row[n] else f"{n} --" for n in VARIANTS), flush=True)
    print("\nx eager (cuBLAS + epilogue ops), GPU time by graph replay; best per row marked *")
    print(f"{'case':44s} " + " ".join(f"{n:>14s}" for n in VARIANTS))
    for row in rows:
        vals = {n: row["eager_us"] / row[n] for n in VARIANTS if row.get(n)}
        best = max(vals, key=vals.get) if vals else None  # type: ignore[arg-type]
        print(f"{row['name']:44s} " + " ".join(f"{vals[n]:13.2f}{'*' if n == best else ' '}" if n in vals
                                               else f"{'--':>14s}" for n in VARIANTS))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
