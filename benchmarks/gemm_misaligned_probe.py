"""Session 27: GEMMs whose K is not a multiple of 16 bytes (the rows of a K-contiguous operand start off 16-byte
boundaries), the class of every GEMM row under 0.9x cuBLAS in hunts 18-21: the policy against its rule switched off
("old"), the aligned copies forced ("copy"), and other tilings. GPU time by CUDA-graph replay, × eager (cuBLAS and
the epilogue in torch), each output checked against the fp64 reference with the tolerance table first.

Families (--family, with --seed S -n N): "kshort" fp32 products with a misaligned K of 9-255 and 256-8192 rows
(nn.Linear weights and N-major B); "skinny" 8-32 columns against a long misaligned K (all dtypes). --hunt: hunts
18-21's GEMM rows under 0.9x.

    PYTHONPATH=.:benchmarks python benchmarks/gemm_misaligned_probe.py --hunt --family kshort --seed 1 -n 16 --json g.json
    ... --hunt23 --set split: hunt 23's fp32 rows under 0.95x over tiles and K splits (session 28 wrote it)
    ... --hunt29: hunts 24-26's worst rows over the rule set, plus "nocopy" and "gemvT" (C^T = B^T A^T on the GEMV)
    ... --gemv-small --set gemv: small fp32 decode products over the GEMV's tiles, splits and stages (session 29)
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from typing import Any

import torch
import triton
from triton.testing import do_bench_cudagraph

from rocm_triton_doctor.kernels import gemm, policy, policy_misaligned
from rocm_triton_doctor.kernels.gemm_cases import make_case
from rocm_triton_doctor.kernels.tolerances import tolerance

DT = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
# (dtype, M, K, N, epilogue, B^T): hunts 18-21's (H200, docs/measurements/2026-11-2[89]-h200-s2[456]-hunt*.json) GEMM
# rows under 0.9x, all with a K off 16-byte multiples
HUNT = [("fp32", 2637, 1697, 20, "none", True), ("fp16", 4, 12143, 95, "none", True),
        ("fp32", 5341, 111, 71, "bias_gelu", True), ("fp32", 3745, 3629, 24, "none", True),
        ("fp16", 13151, 8035, 19, "bias_gelu", True), ("fp32", 17, 677, 22320, "bias_relu", True),
        ("fp32", 25, 50, 20437, "bias_gelu", True), ("fp16", 48, 44, 793, "none", False),
        ("fp16", 6688, 17, 7649, "none", False), ("fp32", 5487, 261, 1076, "none", False),
        ("fp16", 134, 31, 19218, "none", False), ("bf16", 158, 3157, 60, "none", True),
        ("fp32", 428, 157, 91, "bias", True), ("fp32", 47, 694, 216, "none", False),
        ("fp16", 358, 380, 804, "none", True)]


# Shapes earlier rules were measured on that session 27's small tiles now take (the tests that pinned them): fp32
# against an N-major B at 17-400 rows (session 18), fp32 skinny and narrow against a misaligned weight (session 15),
# fp32 against a small misaligned B at many rows (session 12's GEMV rule), 16-bit spill-checked tiles (sessions 14-15).
PINNED = [("fp32", 28, 6016, 26517, "none", False), ("fp32", 17, 4096, 11007, "none", False),
          ("fp32", 24, 12000, 1023, "none", False), ("fp32", 96, 3000, 20001, "none", False),
          ("fp32", 13562, 209, 36, "none", True), ("fp32", 401, 3747, 76, "none", True),
          ("fp32", 229, 301, 48, "none", True), ("fp32", 333, 2107, 54, "none", True),
          ("fp32", 2542, 2671, 1, "none", True), ("fp32", 1373, 495, 616, "none", False),
          ("fp32", 2933, 1033, 34, "none", True), ("fp32", 2727, 8661, 42, "none", True), ("fp32", 8192, 4, 2047, "none", False),
          ("fp32", 4905, 8, 1367, "none", False), ("fp32", 500, 43, 43, "none", True),
          ("fp16", 3426, 93, 673, "none", False), ("fp16", 91, 31, 24363, "none", True),
          ("fp16", 76, 133, 8927, "none", False)]


# hunt 23's (session 28, …-s28-hunt23.json) GEMM rows under 0.95x, all fp32, most with aligned operands: a decode row
# against a short K, small outputs over a long K (few tiles: the split is the question), a square-ish product
HUNT23 = [("fp32", 1, 1025, 304, "none", False), ("fp32", 1213, 6172, 256, "none", True),
          ("fp32", 24, 963, 4362, "none", True), ("fp32", 1717, 6836, 3852, "none", False)]


# --gemv-small (session 29): small fp32 decode products whose GEMV splits K into a workspace and a reduce launch
# (hunt 23's 1x1025x304 at 0.51x: ~3 µs of work in two launches)
GEMV_SMALL = [("fp32", 1, 1025, 304, "none", False), ("fp32", 1, 700, 512, "none", False),
              ("fp32", 2, 1500, 300, "none", False), ("fp32", 1, 4096, 256, "none", False),
              ("fp32", 3, 800, 1000, "none", False), ("fp32", 1, 2000, 128, "none", False),
              ("fp32", 1, 1025, 304, "none", True), ("fp32", 2, 3000, 700, "bias", True)]


# --hunt29 (session 29): hunts 24-26's worst GEMM rows, 18 of 19 under 0.9x with a misaligned operand; most are fp32
# with a handful of columns against a long misaligned K, whose A (up to 300 MB) the fp32 K-major copy rule copies
HUNT29 = [("fp32", 7232, 4187, 19, "bias", False), ("fp32", 5615, 13471, 20, "none", True),
          ("fp32", 1392, 9731, 18, "bias_relu", True), ("fp32", 3427, 2194, 44, "none", True),
          ("fp32", 818, 15714, 81, "bias_gelu", True), ("fp32", 584, 9630, 200, "none", False),
          ("bf16", 15505, 788, 129, "none", True), ("fp32", 21, 2647, 25710, "none", False)]


def cfg(bm: int, bn: int, bk: int, w: int, s: int) -> dict[str, Any]:
    return {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "num_warps": w, "num_stages": s}


VARIANTS: list[tuple[str, str, dict[str, Any] | None]] = [
    ("policy", "auto", None), ("old", "auto", None), ("copy", "auto", {"ALIGN_COPY": True}),
    ("nocopy", "auto", {"ALIGN_COPY": False}), ("gemvT", "auto", None),
    ("64x64x16", "auto", cfg(64, 64, 16, 4, 3)), ("128x128x16w8", "auto", cfg(128, 128, 16, 8, 2)),
    ("32x64x16", "auto", cfg(32, 64, 16, 4, 3)), ("64x128x16", "auto", cfg(64, 128, 16, 4, 3)),
]


def split_cfg(M: int, N: int, K: int, bm: int, bn: int, bk: int) -> dict[str, Any]:
    """bm x bn x bk, 4 warps, 3 stages, K split as the policy splits its latency-bound grids (132 SMs)."""
    from rocm_triton_doctor.kernels.policy_waves import gemm_split_latency_bound

    return {**cfg(bm, bn, bk, 4, 3), "SPLIT_K": gemm_split_latency_bound(M, N, K, bm, bn, bk, 132, 132)}


# --set tiles: small tiles for operands read with scalar loads, each with the policy's latency split ("s")
TILES = ((32, 64, 16), (32, 64, 32), (64, 64, 16), (32, 128, 16), (64, 64, 32), (16, 64, 16))


def tile_variants(M: int, N: int, K: int) -> list[tuple[str, str, dict[str, Any] | None]]:
    out: list[tuple[str, str, dict[str, Any] | None]] = [("policy", "auto", None),
                                                         ("copy", "auto", {"ALIGN_COPY": True})]
    return out + [(f"{bm}x{bn}x{bk}s", "auto", split_cfg(M, N, K, bm, bn, bk)) for bm, bn, bk in TILES]


def split_variants() -> list[tuple[str, str, dict[str, Any] | None]]:
    """--set split (prepared in session 28, not run yet): tiles and K splits for few-tile products over a long K."""
    out: list[tuple[str, str, dict[str, Any] | None]] = [("policy", "auto", None)]
    for bm, bn, bk, w, s in ((64, 64, 32, 4, 4), (128, 64, 32, 8, 3), (64, 128, 32, 4, 4)):
        out += [(f"{bm}x{bn}x{bk}w{w}k{k}", "auto", {**cfg(bm, bn, bk, w, s), "SPLIT_K": k}) for k in (1, 2, 3, 4, 6)]
    return out


def gemv_variants(M: int) -> list[tuple[str, str, dict[str, Any] | None]]:
    """--set gemv: the GEMV kernel's tiles (column width x K depth) and K splits, unpipelined and 3-stage."""
    bm = min(8, 1 << (max(1, M) - 1).bit_length())
    out: list[tuple[str, str, dict[str, Any] | None]] = [("policy", "auto", None)]
    for bn, bk in ((32, 32), (32, 128), (64, 64), (128, 32)):
        for k in (1, 2, 4):
            for st in (1, 3):
                out.append((f"g{bn}x{bk}k{k}p{st}", "auto", {"GEMV": True, "BLOCK_M": bm, "BLOCK_N": bn,
                                                              "BLOCK_K": bk, "SPLIT_K": k, "STAGES": st}))
    return out


def log_uniform(r: random.Random, lo: float, hi: float) -> int:
    return int(round(math.exp(r.uniform(math.log(lo), math.log(hi)))))


def draw(family: str, r: random.Random) -> tuple[str, int, int, int, str, bool]:
    epi = r.choice(("none", "none", "bias", "bias_gelu"))
    if family == "mis":  # any misaligned K, mid sizes
        dt = r.choice(("bf16", "fp16", "fp32", "fp32"))
        v = 16 // DT[dt].itemsize
        k = v
        while k % v == 0:
            k = log_uniform(r, 9, 4096)
        return dt, log_uniform(r, 17, 8192), k, log_uniform(r, 17, 8192), epi, r.random() < 0.6
    if family == "mid16":  # session 29: 16-bit, 129-255 columns (A left misaligned: under ALIGN_COPY_MIN_REUSE)
        while True:
            dt = r.choice(("bf16", "fp16"))
            M, N, k = log_uniform(r, 65, 16000), log_uniform(r, 129, 255), 8
            while k % 8 == 0:
                k = log_uniform(r, 33, 2048)
            if policy_misaligned.misaligned_small_tiles(policy.target_from_name("sm_90"), M, N, k, 2, 132):
                return dt, M, k, N, epi, r.random() < 0.5
    if family == "kshort":
        k = 4
        while k % 4 == 0:
            k = r.randint(9, 255)
        return "fp32", log_uniform(r, 256, 8192), k, log_uniform(r, 129, 8192), epi, r.random() < 0.7
    dt = r.choice(("bf16", "fp16", "fp32"))
    v = 16 // DT[dt].itemsize
    k = v
    while k % v == 0:
        k = log_uniform(r, 257, 8191)
    return dt, log_uniform(r, 1024, 16384), k, r.randint(8, 32), epi, r.random() < 0.7


def set_rule(on: bool) -> None:
    """Session 27's rules on (the policy as committed) or off ("old"): 16-deep K blocks for fp32 tensor-core tiles
    at a short misaligned K, and the small tiles for misaligned products (policy_misaligned.misaligned_small_tiles)."""
    if not hasattr(set_rule, "orig"):
        set_rule.orig = policy_misaligned.FP32_MISALIGNED_SHORT_K  # type: ignore[attr-defined]
    policy_misaligned.FP32_MISALIGNED_SHORT_K = set_rule.orig if on else 0  # type: ignore[attr-defined]
    policy_misaligned.MISALIGNED_SMALL_TILES = on
    policy.gemm_config.cache_clear()  # type: ignore[attr-defined]
    gemm.clear_plans()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hunt", action="store_true", help="hunts 18-21's GEMM rows under 0.9x")
    ap.add_argument("--pinned", action="store_true", help="the shapes earlier rules' tests pinned (PINNED)")
    ap.add_argument("--hunt23", action="store_true", help="hunt 23's GEMM rows under 0.95x (HUNT23)")
    ap.add_argument("--hunt29", action="store_true", help="hunts 24-26's worst GEMM rows (HUNT29)")
    ap.add_argument("--gemv-small", action="store_true", help="small fp32 decode products (GEMV_SMALL)")
    ap.add_argument("--family", choices=("kshort", "skinny", "mis", "mid16"))
    ap.add_argument("--set", choices=("rule", "tiles", "verify", "split", "gemv"), default="rule",
                    help="rule: the policy, its rule off, copies and fixed tilings; tiles: small split tilings; "
                         "verify: the policy and its rules off only")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-n", type=int, default=12)
    ap.add_argument("--json")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(0)
    r = random.Random(args.seed)
    shapes = (HUNT if args.hunt else []) + (PINNED if args.pinned else []) + (HUNT23 if args.hunt23 else [])
    shapes += GEMV_SMALL if args.gemv_small else []
    shapes += HUNT29 if args.hunt29 else []
    shapes += [draw(args.family, r) for _ in range(args.n)] if args.family else []
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, triton {triton.__version__}", flush=True)
    rows = []
    for dt, M, K, N, epi, bt in shapes:
        case = make_case(M, K, N, DT[dt], epi, transposed_b=bt)
        x = case.setup(dev, gen)
        ref = case.reference(x)
        tol = tolerance(str(DT[dt]).replace("torch.", ""))
        row: dict[str, Any] = {"name": case.name, "us": {}, "wrong": [], "errors": {}}
        row["us"]["eager"] = 1000 * float(do_bench_cudagraph(lambda: case.eager(x), rep=20))
        todo = ({"rule": VARIANTS, "verify": VARIANTS[:2], "split": split_variants(),
                 "gemv": gemv_variants(M)}.get(args.set) or tile_variants(M, N, K))
        for label, prec, config in todo:
            set_rule(label != "old")
            try:
                def f(c: Any = config, p: str = prec, lab: str = label) -> torch.Tensor:
                    if lab == "gemvT":  # C^T = B^T A^T on the GEMV kernel in row chunks, A read as a K-major "B"
                        if epi != "none":
                            raise ValueError("gemvT: epilogue none only (the bias runs along C^T's rows)")
                        c_out = torch.empty(x["a"].shape[0], x["b"].shape[1], dtype=x["a"].dtype, device=dev)
                        gemm.gemm(x["b"].t(), x["a"].t(), out=c_out.t(), kernel="gemv")
                        return c_out
                    return gemm.gemm(x["a"], x["b"], x["bias"], epi, precision=p, config=c)
                y = f()
                if not torch.allclose(y.double(), ref.double(), atol=tol.atol, rtol=tol.rtol):
                    row["wrong"].append(label)
                    print(f"  WRONG {label}: {(y.double() - ref.double()).abs().max().item():.3g}", flush=True)
                    continue
                row["us"][label] = 1000 * float(do_bench_cudagraph(f, rep=20))
            except Exception as exc:  # noqa: BLE001 - a tiling the shape cannot take is reported
                row["errors"][label] = str(exc).splitlines()[0][:120]
        set_rule(True)
        e = row["us"]["eager"]
        row["x_eager"] = {k: e / v for k, v in row["us"].items() if k != "eager"}
        rows.append(row)
        print(f"{case.name:42s} eager {e:7.1f}us | " + " ".join(f"{k} {v:.2f}" for k, v in row["x_eager"].items()),
              flush=True)
        if args.json:  # after every row: a run cut short keeps what it measured
            with open(args.json, "w") as fh:
                json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                           "triton": triton.__version__, "seed": args.seed, "family": args.family, "set": args.set, "rows": rows}, fh,
                          indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
