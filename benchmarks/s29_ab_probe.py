"""Session 29's two GEMM rules on fresh random draws, each against itself switched off, in GPU time (CUDA-graph replay)
× eager (cuBLAS, then the epilogue in torch; allow_tf32 off). Every output is checked against the fp64 reference with
the tolerance table before it is timed.

* --family fewtile: fp32 products with both operands aligned whose tensor-core tiles make more than half and at most
  one wave of tiles: policy_fp32.FP32_TC_SPLIT_WAVE (K split up to one wave, was half) and FP32_TC_WIDE_SPLIT (128x64
  tiles to 6 programs per SM) off ("old"), on ("new"), the first alone ("one wave, 4/SM"), and the new split halved
  and doubled. Only draws the rules change are kept.
* --family gemv: fp32 decode rows (1-3) against an aligned N-major B of at most 1024 columns:
  policy_gemv.GEMV_NMAJOR_NARROW (narrow, deep, pipelined GEMV tiles) off and on.

    PYTHONPATH=.:benchmarks python benchmarks/s29_ab_probe.py --family fewtile --seed 1 -n 12 --json f.json
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from typing import Any

import torch
import triton
from triton.testing import do_bench_cudagraph

from gemm_misaligned_probe import log_uniform
from rocm_triton_doctor.kernels import gemm, policy, policy_fp32, policy_gemv
from rocm_triton_doctor.kernels.gemm_cases import make_case
from rocm_triton_doctor.kernels.tolerances import tolerance

SMS = 132
NMAJOR_ONLY = False  # --nmajor: fewtile draws against an N-major B only (128x64 tiles)


def set_rules(fewtile: bool = True, narrow: bool = True, wide: bool = True) -> None:
    policy_fp32.FP32_TC_SPLIT_WAVE = fewtile
    policy_fp32.FP32_TC_WIDE_SPLIT = wide
    policy_gemv.GEMV_NMAJOR_NARROW = narrow
    policy.gemm_config.cache_clear()  # type: ignore[attr-defined]
    policy_gemv.gemv_config.cache_clear()
    gemm.clear_plans()


def tc_config(M: int, N: int, K: int, bt: bool) -> dict[str, Any]:
    t = policy.target_from_name("sm_90")
    return policy.gemm_config(t, M, N, K, 4, cus=SMS, b_nmajor=not bt, tc=True, aligned=True)


def draw(family: str, r: random.Random) -> tuple[int, int, int, str, bool]:
    epi = r.choice(("none", "none", "bias", "bias_relu"))
    if family == "gemv":
        return r.randint(1, 3), 4 * log_uniform(r, 4, 2048), 4 * log_uniform(r, 4, 256), epi, False
    while True:
        M, N, K = log_uniform(r, 17, 4096), 4 * log_uniform(r, 8, 1024), 4 * log_uniform(r, 128, 4096)
        bt = r.random() < 0.5 and not NMAJOR_ONLY
        if M <= 16 or 2.0 * M * N * K > 2e11:
            continue
        t = policy.target_from_name("sm_90")
        if policy.gemm_fp32_precision(t, M, not bt, K, N, True) == "ieee":  # the rule is for tensor-core tiles
            continue
        set_rules(fewtile=False, wide=False)
        old = tc_config(M, N, K, bt)
        set_rules(fewtile=True)
        new = tc_config(M, N, K, bt)
        if old.get("SPLIT_K") != new.get("SPLIT_K"):
            return M, K, N, epi, bt


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--family", choices=("fewtile", "gemv"), required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-n", type=int, default=12)
    ap.add_argument("--nmajor", action="store_true", help="fewtile: N-major B only")
    ap.add_argument("--sweep", action="store_true", help="fewtile: also 64x64 and 128x64 tiles at splits 4, 6, 8")
    ap.add_argument("--json")
    args = ap.parse_args()
    global NMAJOR_ONLY
    NMAJOR_ONLY = args.nmajor
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(0)
    r = random.Random(args.seed)
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, triton {triton.__version__}", flush=True)
    rows: list[dict[str, Any]] = []
    for _ in range(args.n):
        M, K, N, epi, bt = draw(args.family, r)
        case = make_case(M, K, N, torch.float32, epi, transposed_b=bt)
        x = case.setup(dev, gen)
        ref = case.reference(x).double()
        tol = tolerance("float32")
        row: dict[str, Any] = {"name": case.name, "us": {}, "wrong": []}
        row["us"]["eager"] = 1000 * float(do_bench_cudagraph(lambda: case.eager(x), rep=20))
        arms: list[tuple[str, dict[str, bool], dict[str, Any] | None]] = [
            ("old", {"fewtile": False, "narrow": False, "wide": False}, None), ("new", {}, None)]
        if args.family == "fewtile":
            arms.append(("one wave, 4/SM", {"wide": False}, None))
        if args.family == "fewtile":
            new = tc_config(M, N, K, bt)
            row["tiles"] = {k: new[k] for k in ("BLOCK_M", "BLOCK_N", "SPLIT_K")}
            for lab, s in (("new/2", max(1, new["SPLIT_K"] // 2)), ("new*2", new["SPLIT_K"] * 2)):
                arms.append((lab, {}, {k: v for k, v in new.items() if k != "GROUP_M"} | {"SPLIT_K": s}))
            if args.sweep:
                for bm, w, st in ((64, 4, 4), (128, 4, 4), (128, 8, 3)):
                    for s in (4, 6, 8):
                        arms.append((f"{bm}x64w{w}k{s}", {}, {"BLOCK_M": bm, "BLOCK_N": 64, "BLOCK_K": 32,
                                                              "num_warps": w, "num_stages": st, "SPLIT_K": s}))
        for label, rules, config in arms:
            set_rules(**rules)
            def f(c: Any = config) -> torch.Tensor:
                return gemm.gemm(x["a"], x["b"], x["bias"], epi, config=c)
            y = f()
            if not torch.allclose(y.double(), ref, atol=tol.atol, rtol=tol.rtol):
                row["wrong"].append(label)
                print(f"  WRONG {label}: {(y.double() - ref).abs().max().item():.3g}", flush=True)
                continue
            row["us"][label] = 1000 * float(do_bench_cudagraph(f, rep=20))
        set_rules()
        e = row["us"]["eager"]
        row["x_eager"] = {k: e / v for k, v in row["us"].items() if k != "eager"}
        rows.append(row)
        print(f"{case.name:40s} eager {e:7.1f}us | " + " ".join(f"{k} {v:.2f}" for k, v in row["x_eager"].items())
              + (f"  tiles {row.get('tiles')}" if "tiles" in row else ""), flush=True)
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                           "triton": triton.__version__, "family": args.family, "seed": args.seed, "rows": rows},
                          fh, indent=1)
    for arm in ("old", "new"):
        v = [row["x_eager"][arm] for row in rows if arm in row["x_eager"]]
        if v:
            print(f"{arm}: median {statistics.median(v):.2f} worst {min(v):.2f} over {len(v)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
