"""Session 27: the flat forms of softmax, RMSNorm and LayerNorm (rows_flat.py) on narrow rows whose width is not a
multiple of 16 bytes.

Seeded random shapes (an op, a dtype, a width of 3-511 off 16-byte multiples, a tensor of 1 MiB - 1 GiB), or with
--fixed the hunts' (seeds 18-21) narrow rows of 64 MiB and more under 85 % of copy. Each against the plain kernels at
the policy's config without the flat form ("plain", forced through config=), the policy ("auto"), the flat form at
other tile sizes (fLANESwWARPS: R rows of W lanes, R·W = LANES), eager torch and Liger-Kernel. GPU time (CUDA-graph
replay), each output checked against an fp64 reference first; host µs per call (no graphs) for plain, auto and eager
on the small shapes.

    PYTHONPATH=/tmp/site:.:benchmarks python benchmarks/flat_rows_probe.py --seed 1 --count 24 --json f.json
    PYTHONPATH=/tmp/site:.:benchmarks python benchmarks/flat_rows_probe.py --fixed --json f.json
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

from rocm_triton_doctor.kernels import policy
from rocm_triton_doctor.kernels.tolerances import tolerance
from rocm_triton_doctor.smoke import baselines
from window_rows_probe import eager, run

DTYPES = (torch.bfloat16, torch.float16, torch.float32)
BF, FP, F32 = torch.bfloat16, torch.float16, torch.float32
# The hunts' narrow rows (seeds 18-21, docs/measurements/2026-11-2[89]-h200-s2[456]-hunt*.json) of 64 MiB and more
# under 85 % of copy whose width is not a multiple of 16 bytes.
FIXED = [("rmsnorm", FP, 9780223, 23), ("layernorm", BF, 4012566, 5), ("softmax", BF, 6367216, 3),
         ("rmsnorm", FP, 552429, 36), ("rmsnorm", F32, 19238098, 7), ("layernorm", F32, 331663, 401),
         ("layernorm", FP, 1080301, 247), ("rmsnorm", BF, 7039531, 3), ("rmsnorm", BF, 3058421, 54),
         ("softmax", BF, 49053079, 9), ("rmsnorm", F32, 20349958, 5), ("rmsnorm", BF, 3610961, 13),
         ("softmax", FP, 1047799, 207), ("layernorm", F32, 71417, 174), ("layernorm", F32, 1447933, 13),
         ("layernorm", F32, 10044712, 5), ("softmax", F32, 777319, 19), ("softmax", FP, 209653, 215),
         ("layernorm", FP, 458059, 150), ("softmax", BF, 64322598, 3), ("softmax", BF, 8192, 197)]
VARIANTS = ((1024, 4), (2048, 8), (4096, 4), (4096, 8))


def draw(r: random.Random) -> tuple[str, torch.dtype, int, int]:
    op = r.choice(("softmax", "rmsnorm", "layernorm"))
    dt = r.choice(DTYPES)
    n = 0
    while n * dt.itemsize % 16 == 0:
        n = int(round(math.exp(r.uniform(math.log(3), math.log(511)))))
    total = int(math.exp(r.uniform(math.log(1 << 20), math.log(1 << 30)))) // dt.itemsize
    return op, dt, max(1, total // n), n


def copy_rate(dev: torch.device) -> float:
    """GB/s of a 256 MiB device-to-device copy (bytes read + written), graph-replayed."""
    src = torch.empty(1 << 28, dtype=torch.uint8, device=dev)
    dst = torch.empty_like(src)
    return 2 * src.numel() / float(do_bench_cudagraph(lambda: dst.copy_(src), rep=30)) / 1e6


def host_us(fn: Any) -> float:
    return baselines.host_us_per_call(fn, torch.cuda.synchronize, calls=200, warm=20)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=24)
    ap.add_argument("--fixed", action="store_true", help="the hunts' narrow rows instead of random draws")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    dev = torch.device("cuda")
    t = policy.target_for_device("cuda")
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, triton {triton.__version__}", flush=True)
    copy_gbps = copy_rate(dev)
    print(f"copy {copy_gbps:.0f} GB/s", flush=True)
    r = random.Random(args.seed)
    shapes = FIXED if args.fixed else [draw(r) for _ in range(args.count)]
    rows: list[dict[str, Any]] = []
    for op, dt, m, n in shapes:
        x = torch.randn(m, n, device=dev, dtype=dt)
        w = torch.randn(n, device=dev, dtype=dt)
        b = torch.randn(n, device=dev, dtype=dt)
        old = policy.row_config(t, n, dt.itemsize, policy.row_class(n, m))
        plain = {k: old[k] for k in ("BLOCK", "ROWS", "num_warps")}
        fns: dict[str, Any] = {"eager": lambda: eager(op, x, w, b), "plain": lambda: run(op, x, w, b, plain),
                               "auto": lambda: run(op, x, w, b, None)}
        lf, _ = baselines.liger_fn(op)
        if lf is not None:
            inputs = {"x": x, "w": w, "b": b}
            fns["liger"] = lambda: lf(inputs)
        for lanes, warps in VARIANTS:
            cfg = {"BLOCK": 1, "ROWS": max(8, lanes // triton.next_power_of_2(n)), "num_warps": warps, "FLAT": 1}
            fns[f"f{lanes}w{warps}"] = lambda c=cfg: run(op, x, w, b, c)
        ref = eager(op, x.double(), w.double(), b.double()) if x.numel() <= 1 << 26 else None
        tol = tolerance(str(dt).replace("torch.", ""))
        row: dict[str, Any] = {"op": op, "dtype": str(dt).replace("torch.", ""), "M": m, "N": n, "us": {},
                               "wrong": [], "errors": {}}
        for k, f in fns.items():
            try:
                y = f()
                if ref is not None and k != "liger" and not torch.allclose(y.double(), ref, atol=tol.atol,
                                                                           rtol=tol.rtol):
                    row["wrong"].append(k)
                    print(f"  WRONG {k}: max err {(y.double() - ref).abs().max().item():.3g}", flush=True)
                    continue
                row["us"][k] = 1000 * float(do_bench_cudagraph(f, rep=25))
            except Exception as exc:  # noqa: BLE001 - a baseline that refuses the shape drops out
                row["errors"][k] = str(exc).splitlines()[0][:160]
        del ref
        mib = 2 * x.numel() * x.element_size() / 2**20
        row["mib"] = mib
        row["pct_copy"] = {k: 100 * mib * 2**20 / (us * 1e-6) / (copy_gbps * 1e9) for k, us in row["us"].items()}
        if mib <= 16:
            row["host_us"] = {k: host_us(fns[k]) for k in ("plain", "auto", "eager")}
        torch.cuda.empty_cache()
        u = row["us"]
        base = min(u[k] for k in ("eager", "liger") if k in u)
        flats = {k: v for k, v in u.items() if k.startswith("f") or k == "auto"}
        best = min(flats, key=flats.get) if flats else None
        row["x_best_base"] = {k: base / u[k] for k in ("plain", "auto") if k in u}
        row["best_flat"] = best
        rows.append(row)
        print(f"{op:9s} {row['dtype']:8s} {m}x{n} ({mib:.0f} MiB): " + "  ".join(f"{k} {v:.1f}" for k, v in u.items())
              + (f"  host {row['host_us']}" if "host_us" in row else ""), flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                       "triton": triton.__version__, "copy_gbps": copy_gbps, "seed": None if args.fixed else args.seed,
                       "rows": rows}, fh, indent=1)
    print("\nop        dtype    shape            MiB   x best baseline: plain  auto | % copy: plain auto best-flat")
    for row in rows:
        p, xb = row["pct_copy"], row["x_best_base"]
        bf = row["best_flat"]
        print(f"{row['op']:9s} {row['dtype']:8s} {row['M']}x{row['N']:<7d} {row['mib']:6.0f}   "
              f"{xb.get('plain', 0):5.2f} {xb.get('auto', 0):5.2f} | {p.get('plain', 0):4.0f} {p.get('auto', 0):4.0f} "
              f"{p.get(bf, 0):4.0f} {bf}" + (" WRONG " + ",".join(row["wrong"]) if row["wrong"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
