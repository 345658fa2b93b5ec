"""Mid-size attention forwards (16-60 GFLOP, where the policy's 50 GFLOP floor keeps the pointer kernel): each kernel
and a few pointer tiles against SDPA, do_bench medians (L2 flushed), outputs checked against SDPA's. Issue #16: the
seed row (fp16 B1 H32 S2048 D128 causal, 34 GFLOP) ran at 0.75x SDPA in session 6's ceiling probe.

Usage (GPU): PYTHONPATH=. python benchmarks/attention_mid_probe.py [--json PATH]
"""

from __future__ import annotations

import argparse
import json

import torch
import torch.nn.functional as F
import triton.testing as tt

from rocm_triton_doctor.kernels import attention

SHAPES = [(1, 32, 2048, 128, True, torch.float16), (4, 32, 1024, 128, True, torch.bfloat16),
          (8, 16, 1024, 128, True, torch.bfloat16), (2, 16, 2048, 128, False, torch.bfloat16),
          (1, 32, 4096, 128, True, torch.float16), (4, 32, 1024, 64, True, torch.bfloat16),
          (2, 32, 1000, 128, True, torch.bfloat16)]
VARIANTS = [("auto", "auto", None), ("tma", "tma", None), ("tma_device", "tma_device", None),
            ("p128x64w8s3", "pointer", {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3}),
            ("p64x64w4s3", "pointer", {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 3}),
            ("p64x64w4s4", "pointer", {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 4}),
            ("p64x128w4s3", "pointer", {"BLOCK_M": 64, "BLOCK_N": 128, "num_warps": 4, "num_stages": 3}),
            ("p128x128w8s3", "pointer", {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 3})]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    args = ap.parse_args()
    g = torch.Generator(device="cuda").manual_seed(0)
    rows = []
    for B, H, S, D, causal, dt in SHAPES:
        q, k, v = (torch.randn(B, H, S, D, generator=g, device="cuda").to(dt) for _ in range(3))
        ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        name = f"{str(dt)[6:]} B{B} H{H} S{S} D{D}{' causal' if causal else ''}"
        row = {"shape": name, "gflop": 4 * B * H * S * S * D * (0.5 if causal else 1) / 1e9,
               "sdpa": tt.do_bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), rep=100) * 1e3}
        for label, kern, cfg in VARIANTS:
            try:
                out = attention.attention(q, k, v, causal, kernel=kern, config=cfg)
                err = float((out.float() - ref.float()).abs().max())
                row[label] = (tt.do_bench(lambda: attention.attention(q, k, v, causal, kernel=kern, config=cfg),
                                          rep=100) * 1e3 if err < 2e-2 else f"wrong {err:.2g}")
            except Exception as exc:  # noqa: BLE001 - a variant this shape cannot take is reported
                row[label] = f"error {str(exc)[:40]}"
        rows.append(row)
    labels = ["sdpa"] + [v[0] for v in VARIANTS]
    print(f"{'shape':34} {'GF':>5} " + " ".join(f"{lab:>13}" for lab in labels))
    for r in rows:
        cells = [f"{r[lab]:7.1f} {r['sdpa'] / r[lab]:4.2f}" if isinstance(r[lab], float) else f"{str(r[lab])[:13]:>13}"
                 for lab in labels]
        print(f"{r['shape']:34} {r['gflop']:5.0f} " + " ".join(cells))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
