"""The norm backwards' warps: the compile-only audit (pointers marked aligned) showed register spills at bf16 N=8192
with the forward's 8 warps (layernorm 24 bytes, rmsnorm writing y 300; sm_90, Triton 3.9) and none for layernorm and
plain rmsnorm at 16. GPU time of rmsnorm_backward and layernorm_backward (graph replay) with the policy's config and
with 4, 8, 16 and 32 warps at the policy's BLOCK, M = 4096 rows; every output checked against the policy's.

    PYTHONPATH=. python benchmarks/norm_backward_warps.py [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import torch
from triton.testing import do_bench_cudagraph

from rocm_triton_doctor.kernels import layernorm, policy, rmsnorm


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    dev = torch.device("cuda")
    target = policy.target_for_device("cuda")
    rows: list[dict[str, Any]] = []
    for dt in (torch.bfloat16, torch.float32):
        for N in (4096, 8192, 16384):
            M = 4096
            x = torch.randn(M, N, device=dev, dtype=dt)
            dy = torch.randn(M, N, device=dev, dtype=dt)
            w = torch.randn(N, device=dev, dtype=dt)
            rstd = torch.rand(M, device=dev) + 0.5
            mean = torch.randn(M, device=dev)
            base = policy.row_config(target, N, dt.itemsize)
            fns = {"rmsnorm": lambda c: rmsnorm.rmsnorm_backward(dy, x, w, rstd, config=c),
                   "rmsnorm writing y": lambda c: rmsnorm.rmsnorm_backward_with_output(dy, x, w, rstd, config=c),
                   "layernorm": lambda c: layernorm.layernorm_backward(dy, x, w, w, mean, rstd, config=c)}
            for name, fn in fns.items():
                ref = fn(None)
                row: dict[str, Any] = {"name": f"{name} backward {str(dt)[6:]} {M}x{N}", "policy_warps": base["num_warps"],
                                       "BLOCK": base["BLOCK"], "us": {}}
                for w_ in (None, 4, 8, 16, 32):
                    cfg = None if w_ is None else {"BLOCK": base["BLOCK"], "num_warps": w_}
                    out = fn(cfg)
                    ok = all(torch.allclose(a.float(), b.float(), rtol=1e-2, atol=1e-2) for a, b in zip(out, ref))
                    row["us"]["policy" if w_ is None else f"w{w_}"] = (do_bench_cudagraph(lambda c=cfg: fn(c), rep=20) * 1e3
                                                                       if ok else None)
                rows.append(row)
                print(f"{row['name']:36s} BLOCK {row['BLOCK']} policy w{row['policy_warps']}: " + " ".join(
                    f"{k} {v:.1f}" if v else f"{k} WRONG" for k, v in row["us"].items()), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
