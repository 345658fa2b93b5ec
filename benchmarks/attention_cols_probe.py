"""Head dims that are not a power of two (72-96, 144-192) on attn_fwd_kernel: two column blocks (attention.column_blocks,
80 as 64 + 16, 160 as 128 + 32) against one block padded to 128 or 256, over several tilings, beside the
device-descriptor kernel and SDPA; plus pipeline depth for short key ranges (a stage a key block is the most a loop
can use). Every output is checked against an fp32 SDPA before it is timed; GPU time is CUDA-graph replay
(do_bench_cudagraph), host-inclusive time back-to-back events (do_bench).

Usage (GPU): PYTHONPATH=.:benchmarks python benchmarks/attention_cols_probe.py [--fresh SEED -n N] [--json PATH]
       ... --set s21 [--flex]: the H200 hunts' (seeds 11, 12) worst rows at D = 112-256 and causal GQA D = 128 over
       more tilings: the head dim in two equal halves (256 as 128 + 128), host descriptors at D = 256, 3-stage tiles,
       and with --flex torch's own Triton attention (flex_attention under torch.compile) beside SDPA.
       ... --set shortk: long query blocks against 17-128 keys (session 22), fewer stages and 128-key tiles, and
       "old" (the policy before its short-key rule); with --fresh SEED -n N, N random such shapes.
       ... --set grid: hunt 22's rows under 0.9 (few programs, D >= 112) over tiles that change the grid and the
       programs an SM holds, and the split-key kernel (session 28); with --fresh SEED -n N, N random shapes a class.
"""

from __future__ import annotations

import argparse
import json
import random
from typing import Any

import torch
import torch.nn.functional as F

from attention_split_probe import make, measure, sdpa_times, shape_name, timed
from rocm_triton_doctor.kernels import attention, policy, policy_attention

BF, FP = torch.bfloat16, torch.float16
# (B, H, H_kv, S_q, S_k, D, dtype, causal, model layout): the hunts' worst rows at these head dims (H200 seeds 9, 10)
FIXED = [(13, 16, 2, 950, 97, 160, BF, True, False), (7, 12, 4, 958, 958, 160, FP, False, False),
         (1, 24, 24, 903, 903, 160, BF, False, True), (10, 16, 1, 294, 2015, 160, BF, False, False),
         (14, 12, 1, 215, 79, 160, FP, False, False), (8, 32, 8, 562, 562, 192, FP, False, True),
         (2, 16, 16, 724, 724, 192, BF, False, True), (2, 40, 4, 314, 314, 160, BF, True, False),
         (9, 8, 1, 759, 759, 112, BF, False, True), (1, 12, 12, 531, 531, 80, BF, False, True),
         (6, 40, 1, 567, 567, 80, BF, True, False), (4, 8, 8, 1886, 1055, 256, FP, True, True)]


# (same fields) session 21: the hunts' worst rows, seed 11 (all classes) and seed 12 (attention only), H200
S21 = [(14, 32, 2, 325, 325, 128, BF, True, True), (3, 24, 4, 868, 868, 256, BF, True, False),
       (2, 24, 4, 1032, 1032, 192, BF, False, False), (7, 32, 32, 1065, 1065, 256, BF, True, True),
       (6, 16, 2, 565, 565, 192, BF, True, False), (9, 12, 4, 765, 765, 112, BF, True, False),
       (2, 24, 24, 3822, 3822, 144, BF, False, False), (9, 24, 1, 1415, 1415, 192, BF, False, False)]

# D = 97-127 at large sizes (64 + 64 columns saves nothing: both kernels compute 128): which kernel wins where the
# policy sends causal problems from 200 GFLOP to the device-descriptor kernel (hunt seed 13: D112 B12 H40/1 S1865
# causal 0.66x SDPA there)
D112 = [(12, 40, 1, 1865, 1865, 112, BF, True, True), (1, 40, 4, 3461, 2544, 112, FP, False, False),
        (4, 32, 8, 4096, 4096, 112, BF, True, False), (2, 32, 32, 4096, 4096, 112, FP, False, False),
        (8, 16, 2, 2048, 2048, 104, BF, True, False), (4, 32, 4, 4096, 4096, 120, BF, True, True),
        (14, 24, 4, 1329, 1329, 112, FP, True, False), (2, 64, 4, 1339, 1339, 112, BF, False, False)]

# the seed preset's causal D = 128 row (fp16 B1 H32 S2048, 34 GFLOP: under TMA_ATTENTION_MIN_FLOPS, so the pointer
# kernel's mid tiles) and problems of its size
SEED = [(1, 32, 32, 2048, 2048, 128, FP, True, False), (2, 16, 16, 2048, 2048, 128, BF, True, False),
        (4, 32, 32, 1024, 1024, 128, BF, True, False), (1, 32, 8, 2048, 2048, 128, BF, True, True),
        (2, 32, 32, 1500, 1500, 128, FP, True, False)]

# session 22: long query blocks against a short key range (S_k <= 128, one or two key blocks; hunt seed 14: bf16 B5
# H40/1 S4455 D128 S_k 89 0.43x SDPA, B14 H8/4 S2319 D96 S_k 89 causal 0.63x): Q read and O written dominate
SHORTK = [(5, 40, 1, 4455, 89, 128, BF, False, True), (14, 8, 4, 2319, 89, 96, BF, True, False),
          (2, 40, 2, 3551, 92, 48, FP, False, True), (8, 32, 8, 2048, 64, 128, BF, False, False),
          (4, 16, 16, 4096, 128, 64, FP, False, False), (2, 32, 4, 8192, 100, 128, BF, True, False),
          (1, 32, 32, 4096, 33, 128, BF, False, False), (3, 24, 8, 3000, 120, 80, FP, False, True),
          (6, 16, 2, 2500, 70, 160, BF, False, False), (2, 8, 1, 6000, 17, 64, BF, True, True)]


# session 28: hunt 22's (seed 22) attention rows under 0.9x SDPA, most with few programs: with 64-row tiles (the
# policy's small_grid tiles at D > 160) bf16 B1 H4 S2655 S_k 1789 D256 makes 168 programs on 132 SMs, and at 160 KiB
# of shared memory a program one fits an SM: two waves, the second a quarter full
GRID = [(1, 4, 4, 2655, 1789, 256, BF, False, False), (2, 12, 4, 495, 495, 256, BF, False, False),
        (10, 32, 4, 248, 248, 192, FP, True, False), (2, 16, 1, 1691, 1691, 192, BF, False, False),
        (1, 32, 2, 1950, 1950, 192, BF, True, False), (6, 16, 1, 836, 836, 160, FP, True, True),
        (15, 32, 8, 873, 873, 256, FP, False, True), (6, 8, 2, 2367, 2367, 112, FP, True, True),
        (10, 16, 1, 2449, 2449, 112, BF, True, False), (6, 8, 2, 4790, 4790, 256, FP, True, False)]


def p(bm: int, bn: int, w: int, s: int, split: bool = True) -> dict[str, Any]:
    return {"BLOCK_M": bm, "BLOCK_N": bn, "num_warps": w, "num_stages": s, "SPLIT_D": split}


def variants(D: int) -> list[tuple[str, str, dict[str, Any] | None]]:
    out: list[tuple[str, str, dict[str, Any] | None]] = [("auto", "auto", None), ("pad", "auto", None)]
    if D == 256:
        return out + [("p64x64w4s2", "pointer", p(64, 64, 4, 2)), ("p128x64w8s2", "pointer", p(128, 64, 8, 2)),
                      ("p128x32w8s2", "pointer", p(128, 32, 8, 2)), ("tdesc", "tma_device", None)]
    if D > 128:
        return out + [("p64x64w4s2", "pointer", p(64, 64, 4, 2)), ("p128x64w8s2", "pointer", p(128, 64, 8, 2)),
                      ("p64x32w4s2", "pointer", p(64, 32, 4, 2)), ("p128x32w8s2", "pointer", p(128, 32, 8, 2)),
                      ("p64x64w4s1", "pointer", p(64, 64, 4, 1)), ("p64x64w8s2", "pointer", p(64, 64, 8, 2)),
                      ("tdesc", "tma_device", None),
                      ("tdesc64s2", "tma_device", {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2})]
    return out + [("p128x64w8s3", "pointer", p(128, 64, 8, 3)), ("p64x64w4s3", "pointer", p(64, 64, 4, 3)),
                  ("p128x64w8s2", "pointer", p(128, 64, 8, 2)), ("p128x64w8s1", "pointer", p(128, 64, 8, 1)),
                  ("pad128x64w8s3", "pointer", p(128, 64, 8, 3, False)), ("tdesc", "tma_device", None)]


def variants_shortk(D: int) -> list[tuple[str, str, dict[str, Any] | None]]:
    """--set shortk: a key range of one or two blocks leaves the pipeline nothing to overlap, so fewer stages (more
    programs resident) and one 128-key block, beside the policy's tiles."""
    out: list[tuple[str, str, dict[str, Any] | None]] = [("auto", "auto", None), ("old", "auto", None)]
    out += [("p128x64w8s1", "pointer", p(128, 64, 8, 1)), ("p64x64w4s1", "pointer", p(64, 64, 4, 1)),
            ("p64x64w4s2", "pointer", p(64, 64, 4, 2)), ("p64x32w4s1", "pointer", p(64, 32, 4, 1)),
            ("p32x64w4s1", "pointer", p(32, 64, 4, 1)), ("p64x64w2s1", "pointer", p(64, 64, 2, 1))]
    if D <= 128:
        out += [("p128x128w8s1", "pointer", p(128, 128, 8, 1)), ("p64x128w4s1", "pointer", p(64, 128, 4, 1)),
                ("p128x64w4s1", "pointer", p(128, 64, 4, 1)), ("tdesc", "tma_device", None)]
    return out


def variants_s21(D: int) -> list[tuple[str, str, dict[str, Any] | None]]:
    """Session 21's tilings: "halves" runs the pointer kernel with the head dim in two equal column blocks (256 as
    128 + 128, 128 as 64 + 64: column_blocks patched for the variant), "tma" the host-descriptor kernel."""
    out: list[tuple[str, str, dict[str, Any] | None]] = [("auto", "auto", None)]
    if D > 128:
        out += [("p128x64w8s2", "pointer", p(128, 64, 8, 2)), ("p64x64w4s2", "pointer", p(64, 64, 4, 2)),
                ("p64x32w4s3", "pointer", p(64, 32, 4, 3)), ("p128x32w8s3", "pointer", p(128, 32, 8, 3))]
    else:
        out += [("p128x64w8s3", "pointer", p(128, 64, 8, 3)), ("p64x64w4s3", "pointer", p(64, 64, 4, 3)),
                ("p64x64w4s2", "pointer", p(64, 64, 4, 2)), ("p128x32w8s3", "pointer", p(128, 32, 8, 3)),
                ("tdesc", "tma_device", None)]
    if D in (128, 256):
        out += [("halves", "auto", None), ("halves128x64w8s2", "pointer", p(128, 64, 8, 2)),
                ("halves64x64w4s2", "pointer", p(64, 64, 4, 2)),
                ("tma128x64w8s2", "tma", {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 2})]
    if D == 128:
        out += [("tma", "tma", None)]
    return out


def variants_grid(D: int, causal: bool) -> list[tuple[str, str, dict[str, Any] | None]]:
    """--set grid: tiles that change how many programs a grid makes and how many fit an SM (one stage: two 64-row
    programs at D = 256), and without a causal mask the split-key kernel (attention_split.py) in 2 and 3 parts."""
    out: list[tuple[str, str, dict[str, Any] | None]] = [("auto", "auto", None)]
    out += [("p64x64w4s2", "pointer", p(64, 64, 4, 2)), ("p64x64w4s1", "pointer", p(64, 64, 4, 1)),
            ("p128x64w8s2", "pointer", p(128, 64, 8, 2)), ("p128x64w8s1", "pointer", p(128, 64, 8, 1)),
            ("p64x32w4s2", "pointer", p(64, 32, 4, 2)), ("p32x64w4s2", "pointer", p(32, 64, 4, 2)),
            ("p64x64w8s1", "pointer", p(64, 64, 8, 1))]
    if D <= 128:
        out += [("p128x64w8s3", "pointer", p(128, 64, 8, 3)), ("p64x64w4s3", "pointer", p(64, 64, 4, 3))]
    if not causal:
        out += [(f"k{n}x64x64w4s2", "pointer", {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2,
                                                 "SPLITS": n}) for n in (2, 3)]
    return out


_FLEX: Any = None


def flex_row(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, ref: torch.Tensor) -> Any:
    """torch's flex_attention compiled by Inductor (its own Triton kernel and H100 tiles): [GPU us, event us] once
    within 3e-2 of ref, else the reason."""
    global _FLEX
    try:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention

        if _FLEX is None:
            _FLEX = torch.compile(flex_attention, dynamic=False)
        bm = None
        if causal:
            bm = create_block_mask(lambda b, h, qi, ki: qi >= ki, None, None, q.shape[2], k.shape[2], device="cuda")
        fn = lambda: _FLEX(q, k, v, block_mask=bm, enable_gqa=q.shape[1] != k.shape[1])  # noqa: E731
        err = float((fn().float() - ref).abs().max())
        return list(timed(fn)) if err < 3e-2 else f"wrong {err:.2g}"
    except Exception as exc:  # noqa: BLE001 - a shape flex does not take is reported
        return f"error {str(exc).splitlines()[0][:60]}"


def fresh(seed: int, n: int) -> list[tuple[Any, ...]]:
    """n random shapes per head-dim class: 65-127 and 129-255 not powers of two, and 256; S from 64 to 2896."""
    r = random.Random(seed)
    out: list[tuple[Any, ...]] = []
    for dims in ((72, 80, 96, 80, 96), (144, 160, 192, 160, 192), (256,)):
        for _ in range(n):
            h = r.choice((8, 12, 16, 24, 32, 40))
            hk = r.choice([x for x in (1, 2, 4, 8, h) if h % x == 0])
            s = int(2 ** r.uniform(6, 11.5))
            out.append((r.choice((1, 2, 4, 8, 16)), h, hk, s, s if r.random() < 0.7 else int(2 ** r.uniform(6, 12)),
                        r.choice(dims), r.choice((BF, FP)), r.random() < 0.5, r.random() < 0.5))
    return out


def fresh_shortk(seed: int, n: int) -> list[tuple[Any, ...]]:
    """--set shortk --fresh SEED: n random long-query, short-key shapes (S_k 8-128, S_q 256-8192, D 32-128)."""
    r = random.Random(seed)
    out: list[tuple[Any, ...]] = []
    for _ in range(n):
        h = r.choice((8, 12, 16, 24, 32, 40))
        hk = r.choice([x for x in (1, 2, 4, 8, h) if h % x == 0])
        out.append((r.choice((1, 2, 4, 8, 16)), h, hk, int(2 ** r.uniform(8, 13)), int(2 ** r.uniform(3, 7)),
                    r.choice((32, 48, 64, 80, 96, 112, 128)), r.choice((BF, FP)), r.random() < 0.5, r.random() < 0.5))
    return out


def fresh_grid(seed: int, n: int) -> list[tuple[Any, ...]]:
    """--set grid --fresh SEED: n random shapes a head-dim class (112-128, 144-192, 256) with few query tiles: B·H of
    4-32, S_q 400-4096."""
    r = random.Random(seed)
    out: list[tuple[Any, ...]] = []
    for dims in ((112, 128), (144, 160, 192), (256,)):
        for _ in range(n):
            h = r.choice((4, 8, 12, 16))
            hk = r.choice([x for x in (1, 2, 4, h) if h % x == 0])
            s = int(2 ** r.uniform(8.6, 12))
            out.append((r.choice((1, 1, 2)), h, hk, s, s if r.random() < 0.6 else int(2 ** r.uniform(9, 12)),
                        r.choice(dims), r.choice((BF, FP)), r.random() < 0.4, r.random() < 0.5))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--fresh", type=int, metavar="SEED", help="random shapes instead of the fixed rows")
    ap.add_argument("-n", type=int, default=8, help="--fresh: shapes per head-dim class")
    ap.add_argument("--only", help="comma-separated variant labels to run (default: all)")
    ap.add_argument("--set", choices=("s20", "s21", "d112", "seed", "shortk", "grid"), default="s20",
                    help="the fixed rows (and their variants)")
    ap.add_argument("--flex", action="store_true", help="also time torch's flex_attention (compiled)")
    args = ap.parse_args()
    g = torch.Generator(device="cuda").manual_seed(0)
    only = set(args.only.split(",")) if args.only else None
    split_rule = policy.pointer_column_split
    short_keys = policy_attention.SHORT_KEYS
    rows = []
    cb = attention.column_blocks
    halves = lambda D, split=True: (D // 2, D // 2) if split and D in (128, 256) else cb(D, split)  # noqa: E731
    fixed = {"s20": FIXED, "s21": S21, "d112": D112, "seed": SEED, "shortk": SHORTK, "grid": GRID}[args.set]
    pick = fresh_shortk if args.set == "shortk" else fresh_grid if args.set == "grid" else fresh
    for shape in pick(args.fresh, args.n) if args.fresh is not None else fixed:
        B, H, H_kv, S_q, S_k, D, dt, causal, bshd = shape
        q, k, v = make(B, H, H_kv, S_q, S_k, D, dt, bshd, g)
        ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal, enable_gqa=True)
        gflop = 4.0 * B * H * D * attention.visible_pairs(S_q, S_k, causal) / 1e9
        name = shape_name(shape)
        row: dict[str, Any] = {"shape": name, "gflop": gflop, "sdpa": sdpa_times(q, k, v, causal)}
        vs = (variants_shortk(D) if args.set == "shortk" else variants_s21(D) if args.set in ("s21", "d112", "seed")
              else variants_grid(D, causal) if args.set == "grid" else variants(D))
        for label, kern, cfg in vs:
            if only and label not in only and label not in ("auto", "pad"):
                continue
            # "pad": the policy with the pointer kernel's column split off (what ran before it existed)
            policy.pointer_column_split = (lambda t, d: False) if label == "pad" else split_rule  # type: ignore
            attention.column_blocks = halves if label.startswith("halves") else cb  # type: ignore[assignment]
            # "old": the policy before session 22's short-key rule (policy_attention.SHORT_KEYS 0)
            policy_attention.SHORT_KEYS = 0 if label == "old" else short_keys
            policy.attention_config.cache_clear()  # type: ignore[attr-defined]
            attention.clear_plans()
            row[label] = measure(q, k, v, causal, kern, cfg, ref)
            policy.pointer_column_split = split_rule  # type: ignore
            attention.column_blocks = cb  # type: ignore[assignment]
            policy_attention.SHORT_KEYS = short_keys
        if args.flex:
            row["flex"] = flex_row(q, k, v, causal, ref)
        rows.append(row)
        cells = []
        for lab in [x for x in row if x not in ("shape", "gflop", "sdpa")]:
            val = row[lab]
            if isinstance(val, list) and val[0]:
                cells.append(f"{lab} {row['sdpa'][0] / val[0]:.2f}")
            else:
                cells.append(f"{lab} {str(val)[:30]}")
        print(f"{name:46} {gflop:6.1f}GF sdpa {row['sdpa'][0]:7.1f}us | " + " | ".join(cells), flush=True)
    got = [(r["sdpa"][0] / r["auto"][0], r["sdpa"][0] / r["pad"][0], r["sdpa"][1] / r["auto"][1],
            r["sdpa"][1] / r["pad"][1]) for r in rows
           if isinstance(r.get("auto"), list) and isinstance(r.get("pad"), list) and r["auto"][0] and r["pad"][0]]
    for i, lab in enumerate(("gpu x SDPA, split", "gpu x SDPA, padded", "event x SDPA, split", "event x SDPA, padded")):
        vals = sorted(x[i] for x in got)
        if vals:
            print(f"{lab:22} median {vals[len(vals) // 2]:.2f}  worst {vals[0]:.2f}  "
                  f"under 0.9: {sum(x < 0.9 for x in vals)}/{len(vals)}")
    best: dict[str, list[float]] = {}
    for r in rows:
        for lab, val in r.items():
            if isinstance(val, list) and lab != "sdpa" and val[0]:
                best.setdefault(lab, []).append(r["sdpa"][0] / val[0])
    for lab, vals in best.items():
        vals.sort()
        print(f"  {lab:14} rows {len(vals):3}  median {vals[len(vals) // 2]:.2f}  worst {vals[0]:.2f}")
    print("wrong or error:", [(r["shape"], k) for r in rows for k, val in r.items()
                              if str(val).startswith(("wrong", "error"))])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
