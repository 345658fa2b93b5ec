"""Row kernels whose sweep rows trail Liger-Kernel (issue #16, H100: bf16 RMSNorm 1024x11008 0.85x, 1024x16384 0.87x,
softmax 1024x4096 0.81x, 8192x4096 0.94x): GPU time by graph replay (do_bench_cudagraph) of our RMSNorm and softmax
with the policy's config and other warp counts, against Liger's, as % of the copy bandwidth measured in the same run.

    PYTHONPATH=. python benchmarks/rows_warps_probe.py [--json PATH]
"""

from __future__ import annotations

import argparse
import json

import torch
import triton.testing as tt

from rocm_triton_doctor.kernels import policy, rmsnorm, softmax

SHAPES = [(1024, 4096), (1024, 8192), (1024, 11008), (1024, 16384), (8192, 4096), (8192, 11008), (4096, 8192)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    args = ap.parse_args()
    try:
        from liger_kernel.transformers.functional import liger_rms_norm
        from liger_kernel.ops.softmax import LigerSoftmaxFunction
    except ImportError:
        liger_rms_norm = LigerSoftmaxFunction = None
    dev = torch.device("cuda")
    target = policy.target_for_device("cuda")
    big = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
    copy_us = tt.do_bench_cudagraph(lambda: big.clone(), rep=40) * 1e3
    gbps = 2 * big.numel() / copy_us / 1e3
    out = []
    for M, N in SHAPES:
        x = torch.randn(M, N, device=dev, dtype=torch.bfloat16)
        w = torch.randn(N, device=dev, dtype=torch.bfloat16)
        moved = 2 * x.numel() * 2
        base = policy.row_config(target, N, 2, M)
        row = {"shape": f"{M}x{N}", "policy": dict(base)}
        for op, fn in (("rmsnorm", lambda cfg: rmsnorm.rmsnorm(x, w, config=cfg)),
                       ("softmax", lambda cfg: softmax.softmax(x, config=cfg))):
            for warps in sorted({base["num_warps"], 4, 8, 16, 32}):
                cfg = {**base, "num_warps": warps}
                try:
                    us = tt.do_bench_cudagraph(lambda: fn(cfg), rep=40) * 1e3
                    row[f"{op} w{warps}"] = round(100 * moved / us / 1e3 / gbps, 1)
                except Exception as exc:  # noqa: BLE001 - a config the compiler refuses is reported
                    row[f"{op} w{warps}"] = f"error {str(exc)[:30]}"
        if liger_rms_norm is not None:
            row["liger rmsnorm"] = round(100 * moved / (tt.do_bench_cudagraph(lambda: liger_rms_norm(x, w, 1e-6), rep=40)
                                                        * 1e3) / 1e3 / gbps, 1)
            row["liger softmax"] = round(100 * moved / (tt.do_bench_cudagraph(lambda: LigerSoftmaxFunction.apply(x), rep=40)
                                                        * 1e3) / 1e3 / gbps, 1)
        out.append(row)
        print(row["shape"], f"policy w{base['num_warps']} BLOCK {base['BLOCK']} ROWS {base['ROWS']}",
              {k: v for k, v in row.items() if k not in ("shape", "policy")})
    print(f"copy {gbps:.0f} GB/s; cells: % of copy bandwidth (graph replay)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"copy_gbps": gbps, "rows": out}, f, indent=1)


if __name__ == "__main__":
    main()
