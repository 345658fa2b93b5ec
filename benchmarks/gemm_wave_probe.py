"""Tile size against wave quantisation for mid-size GEMMs (issue #16: fp16 3000x5120x3000 at 0.65x cuBLAS in graph
replay on an H100, 288 tiles of 128x256 on 132 SMs = 2.2 waves). GPU time by CUDA-graph replay of our GEMM with a
few tilings, pointer and TMA kernels, against torch.matmul, over shapes whose tile counts land at different points
of a wave.

    PYTHONPATH=. python benchmarks/gemm_wave_probe.py [--dtype float16] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import math

import torch
import triton.testing as tt

from rocm_triton_doctor.kernels import gemm

SHAPES = [(3000, 5120, 3000), (2048, 4096, 2048), (2304, 4096, 2304), (3072, 4096, 3072), (1536, 8192, 1536),
          (4000, 4096, 4000), (2048, 4096, 5120), (5000, 2048, 5000), (1000, 8192, 1000), (6144, 4096, 3000)]


def cfg(bm: int, bn: int, warps: int, stages: int, bk: int = 64, split: int = 1) -> dict[str, int]:
    return {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, "SPLIT_K": split, "num_warps": warps,
            "num_stages": stages}


POLICY_KERNELS = {"pointer": ("pointer", None), "tma": ("tma", None)}  # the policy's tiles on either kernel
CANDIDATES = {
    "p128x256w8s4": ("pointer", cfg(128, 256, 8, 4)),
    "p128x128w8s4": ("pointer", cfg(128, 128, 8, 4)),
    "p128x128w4s4": ("pointer", cfg(128, 128, 4, 4)),
    "p256x128w8s4": ("pointer", cfg(256, 128, 8, 4)),
    "t128x256w8s3": ("tma", cfg(128, 256, 8, 3)),
    "t128x128w8s4": ("tma", cfg(128, 128, 8, 4)),
}


# Small grids (fewer than 64 tiles of 128x256 and a K too short for policy_waves' split-K): the policy's 64x128
# tiles leave half an H100 idle at 768x4096x768 (72 tiles; 0.68x cuBLAS, inductor's Triton 0.76x, session 6 probe).
SMALL_GRID = {
    "p64x128w4s4": ("pointer", cfg(64, 128, 4, 4)),
    "p64x64w4s4": ("pointer", cfg(64, 64, 4, 4)),
    "p64x64w4s6": ("pointer", cfg(64, 64, 4, 6)),
    "p64x128w4s6": ("pointer", cfg(64, 128, 4, 6)),
    "p128x64w4s4": ("pointer", cfg(128, 64, 4, 4)),
    "p64x128w4s4k2": ("pointer", cfg(64, 128, 4, 4, split=2)),
    "p64x64w4s4k2": ("pointer", cfg(64, 64, 4, 4, split=2)),
    "p128x128w8s4k4": ("pointer", cfg(128, 128, 8, 4, split=4)),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtype", default="float16")
    ap.add_argument("--json")
    ap.add_argument("--only-auto", action="store_true", help="time the policy's choice and torch only")
    ap.add_argument("--kernels", action="store_true", help="the policy's tiles on the pointer and the TMA kernel")
    ap.add_argument("--shapes", help="MxKxN,... instead of the built-in list")
    ap.add_argument("--small-grid", action="store_true", help="the SMALL_GRID candidates instead of CANDIDATES")
    args = ap.parse_args()
    dt = getattr(torch, args.dtype)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    g = torch.Generator(device="cuda").manual_seed(0)
    out = []
    shapes = [tuple(int(v) for v in x.split("x")) for x in args.shapes.split(",")] if args.shapes else SHAPES
    cands = (POLICY_KERNELS if args.kernels else {} if args.only_auto else SMALL_GRID if args.small_grid
             else CANDIDATES)
    for M, K, N in shapes:
        a = torch.randn((M, K), generator=g, device="cuda").to(dt)
        b = (torch.randn((K, N), generator=g, device="cuda") * K ** -0.5).to(dt)
        ref = a.float() @ b.float()
        auto_err = float((gemm.gemm(a, b).float() - ref).abs().max() / ref.abs().max())
        row = {"shape": f"{M}x{K}x{N}", "torch": tt.do_bench_cudagraph(lambda: a @ b, rep=40) * 1e3,
               "auto": tt.do_bench_cudagraph(lambda: gemm.gemm(a, b), rep=40) * 1e3 if auto_err < 2e-2 else
               f"wrong {auto_err:.1e}", "auto_err": auto_err}
        for name, (kern, c) in cands.items():
            try:
                o = gemm.gemm(a, b, kernel=kern, config=c)
                err = float((o.float() - ref).abs().max() / ref.abs().max())
                if err > 2e-2:
                    row[name] = f"wrong {err:.1e}"
                    continue
                row[name] = tt.do_bench_cudagraph(lambda: gemm.gemm(a, b, kernel=kern, config=c), rep=40) * 1e3
            except Exception as exc:  # noqa: BLE001 - a config the compiler refuses is reported
                row[name] = f"error {str(exc)[:40]}"
        row["tiles_128x256"] = math.ceil(M / 128) * math.ceil(N / 256) / sms
        row["tiles_128x128"] = math.ceil(M / 128) * math.ceil(N / 128) / sms
        out.append(row)
    names = ["torch", "auto", *cands]
    print(f"{'shape':18} {'waves256':>8} {'waves128':>8} " + " ".join(f"{n:>13}" for n in names))
    for r in out:
        cells = []
        for n in names:
            v = r[n]
            cells.append(f"{v:8.1f} {r['torch'] / v:4.2f}" if isinstance(v, float) else f"{v[:13]:>13}")
        print(f"{r['shape']:18} {r['tiles_128x256']:8.2f} {r['tiles_128x128']:8.2f} " + " ".join(cells))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
