"""Attention backward tiles on a GPU (issue #17): attention_backward.attention_backward (Δ, dK/dV, dQ) under the policy's
config and a few alternatives, bf16, against the backward of torch's SDPA (the same forward saved), do_bench medians;
each variant's gradients are checked against the policy's.

Usage (GPU): python benchmarks/tune_attention_backward.py [--json PATH]
"""

from __future__ import annotations

import argparse
import functools
import json
import math
from pathlib import Path
from typing import Any

import torch
from triton.testing import do_bench

from rocm_triton_doctor.kernels import attention, attention_backward, policy

CANDIDATES = {  # keyed by the padded head dim (D = 96 runs the 128 list)
    64: [(32, 128, 128, 32, 4, 5), (32, 128, 128, 32, 8, 3), (64, 64, 64, 64, 4, 3), (32, 64, 64, 32, 4, 3),
         (64, 128, 128, 64, 8, 2)],
    128: [(32, 128, 128, 32, 8, 3), (64, 64, 64, 64, 8, 2), (32, 64, 64, 32, 4, 4), (64, 128, 128, 64, 8, 2),
          (32, 128, 128, 32, 4, 3), (64, 64, 64, 64, 4, 3),
          # session 6, after FlexAttention's backward ran 6-13 % faster at D = 128 non-causal and D = 96
          # (docs/measurements/2026-11-23-h100-s6-triton-ceiling.json): more stages, 8 warps on 64-row tiles
          (32, 128, 128, 32, 4, 5), (32, 64, 64, 32, 4, 5), (64, 64, 64, 64, 4, 4), (64, 128, 128, 64, 8, 3),
          (64, 64, 64, 64, 8, 3), (32, 64, 64, 32, 8, 4)],
}


def cfg_of(c: tuple[int, ...]) -> dict[str, int]:
    return dict(zip(("BLOCK_M1", "BLOCK_N1", "BLOCK_M2", "BLOCK_N2", "num_warps", "num_stages"), c))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--dims", default="64,128", help="head dims, comma-separated (96: the 128 candidates, masked)")
    ap.add_argument("--seqs", default="1024,4096")
    a = ap.parse_args()
    dev = torch.device("cuda")
    t = policy.target_for_device("cuda")
    rows: list[dict[str, Any]] = []
    g = torch.Generator(device=dev).manual_seed(0)
    for S in (int(x) for x in a.seqs.split(",")):
        for D in (int(x) for x in a.dims.split(",")):
            for causal in (False, True):
                B, H = 4, 32
                q, k, v, do = (torch.randn(B, H, S, D, device=dev, generator=g, dtype=torch.bfloat16) for _ in range(4))
                lse = torch.empty(B, H, S, device=dev, dtype=torch.float32)
                o = attention.attention(q, k, v, causal, lse=lse)
                scale = 1.0 / math.sqrt(D)
                shape = f"B{B} H{H} S{S} D{D}{' causal' if causal else ''}"
                qs, ks, vs = (x.detach().requires_grad_() for x in (q, k, v))
                os_ = torch.nn.functional.scaled_dot_product_attention(qs, ks, vs, is_causal=causal)
                sdpa_ms = do_bench(lambda: torch.autograd.grad(os_, (qs, ks, vs), do, retain_graph=True), warmup=5, rep=40)
                base = attention_backward.attention_backward(do, q, k, v, o, lse, causal, scale)
                block_d = max(16, 1 << (D - 1).bit_length())
                pol = policy.attention_backward_config(t, block_d, 2, causal)
                for label, cfg in [("policy " + str(tuple(pol.values())[:6]), None)] + [
                        (str(c), cfg_of(c)) for c in CANDIDATES[block_d]]:
                    fn = functools.partial(attention_backward.attention_backward, do, q, k, v, o, lse, causal, scale,
                                           cfg)
                    try:
                        got = fn()
                        err = max(float((x.float() - y.float()).abs().max()) for x, y in zip(got, base))
                        ms = do_bench(fn, warmup=5, rep=40)
                        rows.append({"shape": shape, "variant": label, "us": round(ms * 1e3, 1),
                                     "sdpa_bwd_us": round(sdpa_ms * 1e3, 1), "x_sdpa": round(sdpa_ms / ms, 3),
                                     "max_diff_vs_policy": err})
                    except Exception as exc:  # noqa: BLE001 - a tuning run reports a failing variant and goes on
                        rows.append({"shape": shape, "variant": label, "error": str(exc)[:120]})
                    print(rows[-1], flush=True)
    print(f"\n{'shape':28} {'us':>8} {'x SDPA bwd':>10}  variant")
    best: dict[str, dict[str, Any]] = {}
    for r in rows:
        if "us" in r:
            print(f"{r['shape']:28} {r['us']:8.1f} {r['x_sdpa']:10.2f}  {r['variant']}")
            if r["shape"] not in best or r["us"] < best[r["shape"]]["us"]:
                best[r["shape"]] = r
    print("\nbest:")
    for s, r in best.items():
        print(f"{s:28} {r['us']:8.1f} {r['x_sdpa']:10.2f}  {r['variant']}")
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
