"""Session 26: the window forms of softmax, RMSNorm and LayerNorm (rows_window.py) on odd widths nobody tuned for.

Seeded random shapes: an op, a dtype, a width of 257-16383 that is not a multiple of 16 bytes, a tensor of 1 MiB -
1 GiB. Each against the plain kernels at the policy's earlier config ("plain", forced through config=), the policy
("auto"), the window form at 4/8/16 warps with the parameters from their shifted tables (T1) or read at their shift
(T0), eager torch and Liger-Kernel. GPU time (CUDA-graph replay), each output checked against an fp64 reference
first; host µs per call (no graphs) for plain, auto and eager on the small shapes.

    PYTHONPATH=/tmp/site:.:benchmarks python benchmarks/window_rows_probe.py --seed 1 --count 24 --json w.json
    ... --over: widths just past a power of two (hunt 22's LayerNorm bf16 2027x9303 ran at 24 % of copy in a
    16384-lane window), the one-block windows against looped ones in half- and quarter-block chunks (session 28 ran
    it: only LayerNorm's 8192-lane windows gained); --ops layernorm draws that op alone
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from typing import Any

import torch
import torch.nn.functional as F
import triton
from triton.testing import do_bench_cudagraph

from rocm_triton_doctor.kernels import layernorm, policy, rmsnorm, softmax
from rocm_triton_doctor.kernels.tolerances import tolerance
from rocm_triton_doctor.smoke import baselines

DTYPES = (torch.bfloat16, torch.float16, torch.float32)


def run(op: str, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, cfg: dict[str, Any] | None) -> torch.Tensor:
    if op == "rmsnorm":
        return rmsnorm.rmsnorm(x, w, 1e-6, config=cfg)
    if op == "layernorm":
        return layernorm.layernorm(x, w, b, 1e-5, config=cfg)
    return softmax.softmax(x, config=cfg)


def eager(op: str, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if op == "rmsnorm":
        return F.rms_norm(x, (x.shape[1],), w, 1e-6)
    if op == "layernorm":
        return F.layer_norm(x, (x.shape[1],), w, b, 1e-5)
    return torch.softmax(x, -1)


def baseline_fns(op: str, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, plain: dict[str, Any]) -> dict[str, Any]:
    """eager, the plain kernels at `plain`, the policy ("auto") and Liger-Kernel where it has the op."""
    fns: dict[str, Any] = {"eager": lambda: eager(op, x, w, b), "plain": lambda: run(op, x, w, b, plain),
                           "auto": lambda: run(op, x, w, b, None)}
    lf, _ = baselines.liger_fn(op)
    if lf is not None:
        inputs = {"x": x, "w": w, "b": b}
        fns["liger"] = lambda: lf(inputs)
    return fns


def checked_times(op: str, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, fns: dict[str, Any]) -> dict[str, Any]:
    """A row of the table: each of fns checked against an fp64 reference (up to 2^26 elements; not Liger's, whose
    precision is its own) and then timed by graph replay (µs), or why it was not."""
    M, N = x.shape
    ref = eager(op, x.double(), w.double(), b.double()) if x.numel() <= 1 << 26 else None
    tol = tolerance(str(x.dtype).replace("torch.", ""))
    row: dict[str, Any] = {"op": op, "dtype": str(x.dtype).replace("torch.", ""), "M": M, "N": N, "us": {},
                           "wrong": [], "errors": {}}
    for k, f in fns.items():
        try:
            y = f()
            if ref is not None and k != "liger" and not torch.allclose(y.double(), ref, atol=tol.atol, rtol=tol.rtol):
                row["wrong"].append(k)
                print(f"  WRONG {k}: max err {(y.double() - ref).abs().max().item():.3g}", flush=True)
                continue
            row["us"][k] = 1000 * float(do_bench_cudagraph(f, rep=25))
        except Exception as exc:  # noqa: BLE001 - a baseline that refuses the shape drops out
            row["errors"][k] = str(exc).splitlines()[0][:160]
    return row


def announce(dev: torch.device) -> float:
    """Print the device and software, then the device's copy rate (copy_rate), and return that rate."""
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, triton {triton.__version__}", flush=True)
    copy_gbps = copy_rate(dev)
    print(f"copy {copy_gbps:.0f} GB/s", flush=True)
    return copy_gbps


def row_inputs(t: Any, dt: torch.dtype, m: int, n: int,
               dev: torch.device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, dict[str, Any]]:
    """x (m, n), a weight and a bias of n, and the plain kernels' config the policy gives (BLOCK, ROWS, warps)."""
    x = torch.randn(m, n, device=dev, dtype=dt)
    w = torch.randn(n, device=dev, dtype=dt)
    b = torch.randn(n, device=dev, dtype=dt)
    old = policy.row_config(t, n, dt.itemsize, policy.row_class(n, m))
    return x, w, b, {k: old[k] for k in ("BLOCK", "ROWS", "num_warps")}


def copy_rate(dev: torch.device) -> float:
    """GB/s of a 256 MiB device-to-device copy (bytes read + written), graph-replayed."""
    src = torch.empty(1 << 28, dtype=torch.uint8, device=dev)
    dst = torch.empty_like(src)
    return 2 * src.numel() / float(do_bench_cudagraph(lambda: dst.copy_(src), rep=30)) / 1e6


def summarise(row: dict[str, Any], x: torch.Tensor, fns: dict[str, Any], copy_gbps: float, best_key: str,
              candidate: Any, host_mib: float) -> None:
    """Fill in a timed row (checked_times): MiB moved, % of copy per variant, host µs per call up to host_mib,
    plain's and auto's ratio to the best of eager and Liger, and under best_key the fastest variant `candidate` (a
    predicate on its label) accepts; then print it."""
    mib = 2 * x.numel() * x.element_size() / 2**20
    row["mib"] = mib
    row["pct_copy"] = {k: 100 * mib * 2**20 / (us * 1e-6) / (copy_gbps * 1e9) for k, us in row["us"].items()}
    if mib <= host_mib:
        row["host_us"] = {k: host_us(fns[k]) for k in ("plain", "auto", "eager")}
    torch.cuda.empty_cache()
    u = row["us"]
    base = min(u[k] for k in ("eager", "liger") if k in u)
    mine = {k: v for k, v in u.items() if candidate(k)}
    row["x_best_base"] = {k: base / u[k] for k in ("plain", "auto") if k in u}
    row[best_key] = min(mine, key=mine.get) if mine else None
    print(f"{row['op']:9s} {row['dtype']:8s} {row['M']}x{row['N']} ({mib:.0f} MiB): "
          + "  ".join(f"{k} {v:.1f}" for k, v in u.items())
          + (f"  host {row['host_us']}" if "host_us" in row else ""), flush=True)


def report(rows: list[dict[str, Any]], best_key: str, path: str | None, copy_gbps: float, seed: int | None) -> None:
    """The rows as JSON at path (if given) and as a table: ratios to the best baseline, % of copy."""
    if path:
        with open(path, "w") as fh:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                       "triton": triton.__version__, "copy_gbps": copy_gbps, "seed": seed, "rows": rows}, fh,
                      indent=1)
    label = best_key.replace("_", "-")
    print(f"\nop        dtype    shape            MiB   x best baseline: plain  auto | % copy: plain auto {label}")
    for row in rows:
        p, xb = row["pct_copy"], row["x_best_base"]
        b = row[best_key]
        print(f"{row['op']:9s} {row['dtype']:8s} {row['M']}x{row['N']:<7d} {row['mib']:6.0f}   "
              f"{xb.get('plain', 0):5.2f} {xb.get('auto', 0):5.2f} | {p.get('plain', 0):4.0f} {p.get('auto', 0):4.0f} "
              f"{p.get(b, 0):4.0f} {b}" + (" WRONG " + ",".join(row["wrong"]) if row["wrong"] else ""))


def draw(r: random.Random, wide: bool, over: bool = False,
         ops: tuple[str, ...] = ("softmax", "rmsnorm", "layernorm"), p2_exp: int = 0) -> tuple[str, torch.dtype, int, int]:
    """wide: rows wider than one block (the looped window forms), odd widths, at least 129 rows (fewer are split
    over programs under graph capture, rows_split.py). over: odd widths up to 35 % past a power of two of 1024-8192
    elements (a one-block window then leaves up to half its lanes idle)."""
    op = r.choice(ops)
    dt = r.choice(DTYPES)
    v = 16 // dt.itemsize
    n = 0
    while n % v == 0:
        if over:
            p2 = 1 << (min(p2_exp, 13 if dt.itemsize == 2 else 12) if p2_exp else r.randint(10, 13 if dt.itemsize == 2 else 12))
            n = r.randint(p2 + 1, int(p2 * 1.35)) | 1
            continue
        if wide:
            n = int(round(math.exp(r.uniform(math.log(policy.ROW_SINGLE_BYTES // dt.itemsize), math.log(262143)))))
            continue
        n = int(round(math.exp(r.uniform(math.log(257), math.log(16383 if dt.itemsize == 4 else 32000)))))
        if triton.next_power_of_2(n + v - 1) * dt.itemsize > policy.ROW_SINGLE_BYTES:
            n = 0
    total = int(math.exp(r.uniform(math.log(1 << 26 if wide else 1 << 20), math.log(1 << 30)))) // dt.itemsize
    return op, dt, max(129 if wide else 1, total // n), n


def host_us(fn: Any) -> float:
    return baselines.host_us_per_call(fn, torch.cuda.synchronize, calls=200, warm=20)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=24)
    ap.add_argument("--json", default=None)
    ap.add_argument("--wide", action="store_true", help="rows wider than one block (the looped window forms)")
    ap.add_argument("--over", action="store_true",
                    help="widths just past a power of two, with the looped windows in half- and quarter-block chunks")
    ap.add_argument("--ops", default="softmax,rmsnorm,layernorm", help="the ops to draw, comma-separated")
    ap.add_argument("--p2", type=int, default=0, help="--over: the power of two (its exponent) the widths pass")
    args = ap.parse_args()
    dev = torch.device("cuda")
    t = policy.target_for_device("cuda")
    copy_gbps = announce(dev)
    r = random.Random(args.seed)
    rows: list[dict[str, Any]] = []
    for _ in range(args.count):
        op, dt, m, n = draw(r, args.wide, args.over, tuple(args.ops.split(",")), args.p2)
        x, w, b, plain = row_inputs(t, dt, m, n, dev)
        v = 16 // dt.itemsize
        blk = triton.next_power_of_2(n + v - 1)
        fns = baseline_fns(op, x, w, b, plain)
        for warps in (4, 8, 16):
            for table in ((0,) if op == "softmax" else (0, 1)):
                if args.wide:  # chunks of 8192 lanes
                    if warps > 4:
                        cfg = {"BLOCK": 8192, "num_warps": warps, "WINDOW": 1, "TABLE": table}
                        fns[f"c8192w{warps}T{table}"] = lambda c=cfg: run(op, x, w, b, c)
                    continue
                cfg = {"BLOCK": blk, "num_warps": warps, "WINDOW": 1, "TABLE": table}
                fns[f"w{warps}T{table}"] = lambda c=cfg: run(op, x, w, b, c)
                for chunk in ((blk // 2, blk // 4) if args.over and warps > 4 else ()):  # looped: chunks fill up
                    cfg = {"BLOCK": chunk, "num_warps": warps, "WINDOW": 1, "TABLE": table}
                    fns[f"c{chunk}w{warps}T{table}"] = lambda c=cfg: run(op, x, w, b, c)
        row = checked_times(op, x, w, b, fns)
        summarise(row, x, fns, copy_gbps, "best_window", lambda k: k.startswith(("w", "c")), 64)
        rows.append(row)
    report(rows, "best_window", args.json, copy_gbps, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
