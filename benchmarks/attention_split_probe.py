"""Split-key attention (attention_split.py) against the one-program-a-tile kernel and SDPA, on calls whose query tiles
cannot fill the GPU (decode against a key cache, short prompts at batch 1), plus the large-head-dim small problems
where the policy picks between the pointer and device-descriptor kernels. Every output is checked against an fp32 SDPA
before it is timed; GPU time is CUDA-graph replay (do_bench_cudagraph), host-inclusive time back-to-back events.

Usage (GPU): PYTHONPATH=.:benchmarks python benchmarks/attention_split_probe.py [--json PATH] [--section decode|large_d]
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import torch
import torch.nn.functional as F
from triton.testing import do_bench, do_bench_cudagraph

from rocm_triton_doctor.kernels import attention, policy
from rocm_triton_doctor.kernels.base import device_cus

BF, FP, F32 = torch.bfloat16, torch.float16, torch.float32
# (B, H, H_kv, S_q, S_k, D, dtype, causal, model layout)
DECODE = [(1, 32, 8, 1, 4096, 128, BF, False, False), (1, 32, 8, 1, 32768, 128, BF, False, False),
          (4, 32, 8, 1, 8192, 128, BF, False, True), (1, 32, 32, 1, 8192, 128, BF, False, False),
          (2, 64, 8, 1, 16384, 128, BF, False, False), (1, 16, 16, 1, 2048, 64, FP, False, False),
          (8, 32, 8, 1, 2048, 128, BF, False, False), (1, 32, 4, 4, 8192, 128, BF, False, True),
          (1, 40, 8, 1, 8192, 80, BF, False, False), (1, 16, 2, 1, 8192, 256, BF, False, False),
          (1, 8, 8, 1, 8192, 64, F32, False, False), (3, 28, 4, 1, 5001, 128, FP, False, True),
          (1, 32, 8, 128, 8192, 128, BF, False, False), (1, 8, 8, 256, 16384, 64, BF, False, False),
          (2, 16, 4, 64, 4096, 128, FP, False, True), (1, 32, 8, 16, 8192, 128, BF, False, False),
          (1, 12, 12, 333, 7777, 96, BF, False, True)]
LARGE_D = [(7, 32, 32, 301, 106, 256, BF, True, True), (2, 40, 4, 71, 591, 192, BF, True, False),
           (12, 40, 4, 140, 140, 256, FP, False, True), (9, 12, 12, 1146, 1146, 160, BF, False, True),
           (1, 4, 1, 178, 178, 160, BF, False, False), (6, 16, 16, 142, 2968, 192, BF, False, False),
           (2, 40, 40, 500, 500, 256, BF, True, False), (4, 16, 16, 256, 256, 192, FP, False, False),
           (14, 24, 4, 1329, 1329, 112, FP, True, False), (3, 12, 4, 1193, 1193, 96, BF, False, False),
           (12, 16, 8, 1059, 1839, 96, FP, False, True), (3, 12, 2, 1930, 1930, 96, FP, False, False)]


def make(B: int, H: int, H_kv: int, S_q: int, S_k: int, D: int, dt: torch.dtype, bshd: bool,
         g: torch.Generator) -> tuple[torch.Tensor, ...]:
    def t(h: int, s: int) -> torch.Tensor:
        if bshd:
            return torch.randn(B, s, h, D, generator=g, device="cuda").to(dt).transpose(1, 2)
        return torch.randn(B, h, s, D, generator=g, device="cuda").to(dt)
    return t(H, S_q), t(H_kv, S_k), t(H_kv, S_k)


def timed(fn: Any) -> tuple[float | None, float]:
    try:
        gpu = float(do_bench_cudagraph(fn, rep=30)) * 1e3
    except Exception:  # noqa: BLE001 - a capture failure is a missing number
        gpu = None
    return gpu, float(do_bench(fn, warmup=5, rep=30, return_mode="median")) * 1e3


def shape_name(shape: tuple[Any, ...]) -> str:
    B, H, H_kv, S_q, S_k, D, dt, causal, bshd = shape
    return (f"{str(dt)[6:]} B{B} H{H}/{H_kv} Sq{S_q} Sk{S_k} D{D}{' causal' if causal else ''}"
            f"{' BSHD' if bshd else ''}")


def sdpa_times(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> list[float]:
    """SDPA's [GPU us, event us]: the faster of its GQA form and K/V repeated to every query head."""
    group = q.shape[1] // k.shape[1]
    kx, vx = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    gq = timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True))
    ex = timed(lambda: F.scaled_dot_product_attention(q, kx, vx, is_causal=causal))
    return [min(x for x in (gq[0], ex[0]) if x is not None), min(gq[1], ex[1])]


def measure(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, kern: str, cfg: dict[str, Any] | None,
            ref: torch.Tensor) -> list[float | None] | str:
    """One variant: [GPU us, event us] once its output is within 3e-2 of ref, else "wrong …" or "error …"."""
    try:
        o = attention.attention(q, k, v, causal, kernel=kern, config=cfg)
        err = float((o.float() - ref).abs().max())
        return list(timed(lambda: attention.attention(q, k, v, causal, kernel=kern, config=cfg))) \
            if err < 3e-2 else f"wrong {err:.2g}"
    except Exception as exc:  # noqa: BLE001 - a variant this shape cannot take is reported
        return f"error {str(exc).splitlines()[0][:60]}"


def variants(section: str, shape: tuple[Any, ...]) -> list[tuple[str, str, dict[str, Any] | None]]:
    B, H, H_kv, S_q, S_k, D, dt, causal, _ = shape
    t = policy.target_for_device("cuda")
    block_d = max(16, 1 << (D - 1).bit_length())
    regular = policy.attention_config(t, block_d, torch.tensor([], dtype=dt).element_size(), causal)
    out: list[tuple[str, str, dict[str, Any] | None]] = [("auto", "auto", None), ("regular", "pointer", regular)]
    if section == "large_d":
        return out + [("tma_device", "tma_device", None),
                      ("p64x64w4s2", "pointer", {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2}),
                      ("p32x64w4s3", "pointer", {"BLOCK_M": 32, "BLOCK_N": 64, "num_warps": 4, "num_stages": 3})]
    if section == "large_d_fresh":
        return out + [("tma_device", "tma_device", None),
                      ("p64x32w8s2", "pointer", {"BLOCK_M": 64, "BLOCK_N": 32, "num_warps": 8, "num_stages": 2}),
                      ("p64x64w8s2", "pointer", {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 8, "num_stages": 2})]
    pol = policy.attention_split_config(t, B, H, H_kv, S_q, S_k, block_d, torch.tensor([], dtype=dt).element_size(),
                                        device_cus(torch.device("cuda")))
    base = dict(pol) if pol else {"BLOCK_M": 16, "BLOCK_N": 64, "num_warps": 4, "num_stages": 3, "SPLITS": 8}
    sp = base["SPLITS"]
    for label, change in (("s/2", {"SPLITS": max(1, sp // 2)}), ("s*2", {"SPLITS": sp * 2}),
                          ("bn32", {"BLOCK_N": 32}), ("bn128", {"BLOCK_N": 128}), ("w8", {"num_warps": 8}),
                          ("st2", {"num_stages": 2}), ("st4", {"num_stages": 4}), ("bm32", {"BLOCK_M": 32})):
        out.append((label, "pointer", {**base, **change}))
    return out


def fresh(seed: int, n: int) -> list[tuple[Any, ...]]:
    """n random shapes per regime the session-19 rules touch: decode and a few query rows against a key cache, short
    query blocks against long keys at small batch, large head dims at small sizes, D = 96/112 non-causal."""
    import random

    r = random.Random(seed)
    out: list[tuple[Any, ...]] = []

    def heads() -> tuple[int, int]:
        h = r.choice((8, 12, 16, 24, 28, 32, 40, 64))
        return h, r.choice([x for x in (1, 2, 4, 8, h) if h % x == 0])

    for _ in range(n):  # decode / speculative decode
        h, hk = heads()
        out.append((r.choice((1, 1, 2, 3, 4, 8, 16, 32, 64)), h, hk, r.choice((1, 1, 1, 2, 4, 7)),
                    int(2 ** r.uniform(9, 15)), r.choice((64, 80, 96, 128, 128, 256)), r.choice((BF, FP)), False,
                    r.random() < 0.5))
    for _ in range(n):  # short query blocks against long keys
        h, hk = heads()
        out.append((r.choice((1, 1, 2)), h, hk, int(2 ** r.uniform(4, 8.6)), int(2 ** r.uniform(11, 14.5)),
                    r.choice((64, 96, 128)), r.choice((BF, FP)), False, r.random() < 0.5))
    for _ in range(n):  # large head dims, small to mid size
        h, hk = heads()
        s = int(2 ** r.uniform(6, 11))
        out.append((r.choice((1, 2, 4, 8)), h, hk, s, s if r.random() < 0.7 else int(2 ** r.uniform(7, 12)),
                    r.choice((160, 192, 256)), r.choice((BF, FP)), r.random() < 0.5, r.random() < 0.5))
    for _ in range(n):  # D = 96/112 non-causal, mid size
        h, hk = heads()
        s = int(2 ** r.uniform(9.5, 12))
        out.append((r.choice((1, 2, 4, 8)), h, hk, s, s, r.choice((96, 112)), r.choice((BF, FP)), False,
                    r.random() < 0.5))
    return out


def old_policy(shape: tuple[Any, ...]) -> tuple[str, dict[str, Any] | None]:
    """What session 18's policy ran for the shape: no split keys; D > 128 pointer tiles 64x32 w8 s2 and device
    descriptors from 1 GFLOP; D = 65-127 device descriptors from 200 GFLOP (causal or not)."""
    B, H, H_kv, S_q, S_k, D, dt, causal, _ = shape
    flops = 4.0 * B * H * S_q * S_k * D * (0.5 if causal else 1.0)
    if D > 128:
        return ("tma_device", None) if flops >= 1e9 else (
            "pointer", {"BLOCK_M": 64, "BLOCK_N": 32, "num_warps": 8, "num_stages": 2})
    if 64 < D < 128 and flops >= 200e9:
        return "tma_device", None
    t = policy.target_for_device("cuda")
    block_d = max(16, 1 << (D - 1).bit_length())
    if D == 128 and flops >= policy.TMA_ATTENTION_MIN_FLOPS:
        return "tma", None
    mid = flops < policy.TMA_ATTENTION_MIN_FLOPS
    return "pointer", policy.attention_config(t, block_d, torch.tensor([], dtype=dt).element_size(), causal, mid=mid)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--section", choices=("decode", "large_d", "both"), default="both")
    ap.add_argument("--fresh", type=int, metavar="SEED", help="random shapes (auto against session 18's policy)")
    ap.add_argument("-n", type=int, default=8, help="--fresh: shapes per regime")
    ap.add_argument("--large-d-fresh", type=int, metavar="SEED", help="random D > 128 shapes: pointer tiles and TMA")
    args = ap.parse_args()
    g = torch.Generator(device="cuda").manual_seed(0)
    rows = []
    sections = ("fresh",) if args.fresh is not None else ("large_d_fresh",) if args.large_d_fresh is not None else (
        ("decode", "large_d") if args.section == "both" else (args.section,))
    for section in sections:
        todo = (fresh(args.fresh, args.n) if section == "fresh" else
                fresh(args.large_d_fresh, 3 * args.n)[6 * args.n:9 * args.n] if section == "large_d_fresh" else
                DECODE if section == "decode" else LARGE_D)
        for shape in todo:
            B, H, H_kv, S_q, S_k, D, dt, causal, bshd = shape
            q, k, v = make(B, H, H_kv, S_q, S_k, D, dt, bshd, g)
            ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal, enable_gqa=True)
            name = shape_name(shape)
            row: dict[str, Any] = {"section": section, "shape": name, "sdpa": sdpa_times(q, k, v, causal)}
            for label, kern, cfg in ([("auto", "auto", None), ("old", *old_policy(shape))] if section == "fresh"
                                     else variants(section, shape)):
                row[label] = measure(q, k, v, causal, kern, cfg, ref)
            rows.append(row)
            labels = [k for k in row if k not in ("section", "shape", "sdpa")]
            cells = []
            for lab in labels:
                val = row[lab]
                if isinstance(val, list) and val[0]:
                    cells.append(f"{lab} {row['sdpa'][0] / val[0]:.2f}/{row['sdpa'][1] / val[1]:.2f}")
                else:
                    cells.append(f"{lab} {str(val)[:30]}")
            print(f"{name:48} sdpa {row['sdpa'][0]:7.1f}us | " + " | ".join(cells), flush=True)
    if args.fresh is not None:
        got = [(r["sdpa"][0] / r["auto"][0], r["sdpa"][0] / r["old"][0], r["sdpa"][1] / r["auto"][1],
                r["sdpa"][1] / r["old"][1]) for r in rows
               if isinstance(r.get("auto"), list) and isinstance(r.get("old"), list) and r["auto"][0] and r["old"][0]]
        for i, lab in enumerate(("gpu x SDPA, auto", "gpu x SDPA, session 18", "event x SDPA, auto",
                                 "event x SDPA, session 18")):
            v = sorted(x[i] for x in got)
            print(f"{lab:26} median {v[len(v) // 2]:.2f}  worst {v[0]:.2f}  under 0.9: {sum(x < 0.9 for x in v)}/{len(v)}")
        wrong = [r["shape"] for r in rows if any(str(r.get(k, "")).startswith(("wrong", "error")) for k in ("auto", "old"))]
        print("wrong or error:", wrong)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
