"""Where a K split's time goes in a product of a few µs (session 14): per shape and SPLIT_K, the GPU time of each
kernel the call launches (torch.profiler, CUDA activity, averaged over iterations), so the main kernel's share and
the reduce pass's show apart. The tiles are the policy's, SPLIT_K forced.

    PYTHONPATH=. python benchmarks/split_profile.py [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from typing import Any

import torch
from torch.profiler import ProfilerActivity, profile

from rocm_triton_doctor.kernels import gemm, policy

# (dtype, M, K, N, epilogue, B^T): rows of benchmarks/gemm_ab_probe.py --ab splits --tiny (seeds 50-51) where a split
# lost 2-5x (the first four) or won (the last three).
SHAPES = [(torch.float16, 613, 432, 78, "none", False), (torch.bfloat16, 114, 325, 94, "none", False),
          (torch.bfloat16, 110, 322, 486, "bias_relu", False), (torch.bfloat16, 73, 160, 209, "none", False),
          (torch.bfloat16, 81, 351, 91, "none", False), (torch.bfloat16, 40, 587, 19, "bias_gelu", True),
          (torch.bfloat16, 68, 527, 315, "bias", True)]
ITERS = 50


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    dev = torch.device("cuda")
    orig = policy.gemm_config
    rows: list[dict[str, Any]] = []
    for dt, M, K, N, epi, bt in SHAPES:
        case = gemm.make_case(M, K, N, dt, epi, transposed_b=bt)
        x = case.setup(dev, torch.Generator(device=dev).manual_seed(0))
        for split in (1, 2, 4, 8):
            def forced(*a: Any, s: int = split, **k: Any) -> dict[str, Any]:
                cfg = orig(*a, **k)
                return {**cfg, "SPLIT_K": max(1, min(s, a[3] // cfg["BLOCK_K"]))}
            policy.gemm_config = forced  # type: ignore[assignment]
            gemm.clear_plans()
            for _ in range(5):
                gemm.gemm(x["a"], x["b"], x["bias"], epi, 0.0)
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(ITERS):
                    gemm.gemm(x["a"], x["b"], x["bias"], epi, 0.0)
                torch.cuda.synchronize()
            per: dict[str, float] = defaultdict(float)
            for ev in prof.key_averages():
                t = getattr(ev, "self_device_time_total", None)
                t = getattr(ev, "self_cuda_time_total", 0.0) if t is None else t
                if t:
                    per[ev.key[:40]] += t / ITERS
            row = {"name": case.name, "split": split, "kernels_us": dict(per), "total_us": sum(per.values())}
            rows.append(row)
            print(f"{case.name:36s} split {split}: total {row['total_us']:6.2f} us  "
                  + "  ".join(f"{k} {v:.2f}" for k, v in per.items()), flush=True)
    policy.gemm_config = orig  # type: ignore[assignment]
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
