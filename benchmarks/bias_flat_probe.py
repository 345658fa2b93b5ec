"""Session 28: bias+GELU+dropout+residual as one flat stretch of M·N elements (bias_gelu_dropout_residual_flat_kernel)
against its row tiles (policy.tile2d_config), on the hunts' slow rows, the presets' shapes and seeded random ones.

Hunt 22's rows of this op ran at 47-82 % of copy bandwidth from 64 MiB: odd widths (bf16 H 4481: each row starts off
a 16-byte boundary, read one element at a time) and narrow or non-power-of-two ones (fp16 H 392 in 512-wide tiles).
Each variant's output is checked first (p = 0: against fp64 within the tolerance table; p > 0: equal to the row
tiles' bit for bit, the same mask), then timed by CUDA-graph replay (µs); % of copy counts x, residual and out.

    PYTHONPATH=.:benchmarks python benchmarks/bias_flat_probe.py --seed 1 --count 24 --json b.json
    ... --odd-dropout: hunt 23's dropout rows at N % 8 != 0 (the second change: they take the flat form too), and the
    backward against eager autograd's
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
from triton.testing import do_bench, do_bench_cudagraph

from rocm_triton_doctor.kernels import bias_gelu_dropout_residual as bg
from rocm_triton_doctor.kernels import bias_gelu_flat, call_plans, policy
from rocm_triton_doctor.kernels.base import dropout_args, stream_seed
from rocm_triton_doctor.kernels.launch import launch
from rocm_triton_doctor.kernels.tolerances import tolerance
from window_rows_probe import announce

# (B, S, H, dtype, p): hunt 22's rows under 85 % of copy and the presets' shapes
FIXED = [(1, 18447, 4481, torch.bfloat16, 0.0), (8, 16785, 392, torch.float16, 0.0), (4, 9515, 1299, torch.float32, 0.1),
         (8, 7868, 811, torch.float32, 0.0), (1, 473047, 124, torch.bfloat16, 0.0), (4, 85826, 121, torch.float16, 0.0),
         (16, 2048, 8192, torch.float32, 0.1), (16, 2048, 8192, torch.bfloat16, 0.1), (4, 512, 4096, torch.float16, 0.1),
         (8, 1024, 4096, torch.bfloat16, 0.1), (1, 165, 10288, torch.float16, 0.0), (4, 442, 1076, torch.bfloat16, 0.0),
         # session 28's first run: narrow rows (the flat form's column by an fp32 quotient) and aligned widths
         (1, 28256, 240, torch.bfloat16, 0.0), (1, 40000, 200, torch.float16, 0.1), (1, 500000, 96, torch.bfloat16, 0.0),
         (1, 900000, 48, torch.float16, 0.1), (1, 4015, 8208, torch.float32, 0.1), (1, 14861, 4176, torch.bfloat16, 0.1),
         (1, 130163, 832, torch.float32, 0.1), (1, 92266, 560, torch.float16, 0.1)]
# session 28's second change (dropout at any width takes the flat form): hunt 23's rows of it under 85 % of copy
ODD_DROPOUT = [(1, 3159, 10734, torch.bfloat16, 0.1), (2, 55486, 1218, torch.bfloat16, 0.1),
               (8, 237, 8998, torch.bfloat16, 0.1), (4, 9515, 1299, torch.float32, 0.1),
               (1, 21572, 229, torch.float16, 0.1), (1, 1388892, 31, torch.float16, 0.1)]
FLAT = ((1024, 4), (2048, 4), (2048, 8), (4096, 4), (4096, 8))


def draw(r: random.Random) -> tuple[int, int, int, torch.dtype, float]:
    dt = r.choice((torch.float16, torch.bfloat16, torch.float32))
    h = int(round(math.exp(r.uniform(math.log(16), math.log(24000)))))
    p = r.choice((0.0, 0.1))
    if p > 0 and r.random() < 0.7:
        h = max(8, h // 8 * 8)  # dropout takes the flat form only at H % 8 == 0
    n = int(math.exp(r.uniform(math.log(1 << 19), math.log(1 << 29)))) // dt.itemsize
    return 1, max(1, n // h), h, dt, p


def flat_fn(x: torch.Tensor, b: torch.Tensor, res: torch.Tensor, o: torch.Tensor, p: float, block: int,
            warps: int) -> Any:
    n, N = x.numel(), x.shape[-1]
    thr, scale = dropout_args(p)
    fast = policy.fast_tanh(policy.target_for_device("cuda"), x.element_size())

    def run() -> torch.Tensor:
        launch(bias_gelu_flat.bias_gelu_dropout_residual_flat_kernel, (triton.cdiv(n, block),), x, b, res, o, n, N, b.stride(0),
               stream_seed(7, bg.STREAM), thr, scale, HAS_DROPOUT=p > 0, BLOCK=block, ONE_WRAP=block <= N,
               FAST_TANH=fast, num_warps=warps, num_stages=1)
        return o
    return run


def tiles(x: torch.Tensor, b: torch.Tensor, res: torch.Tensor, p: float) -> torch.Tensor:
    policy.BIAS_FLAT = False
    call_plans.clear()
    try:
        return bg.bias_gelu_dropout_residual(x, b, res, p, 7)
    finally:
        policy.BIAS_FLAT = None
        call_plans.clear()


def backward_rows(shapes: list[tuple[int, int, int, torch.dtype, float]], dev: torch.device) -> None:
    """The backward (the policy's form: flat where the forward is) against eager autograd's, event-timed; % of copy
    counts dy and x read, dx written. Session 28 ran it before (…-s28-bias-odd-dropout-s3.txt: the row tiles drawing
    the mask at N % 8 != 0 two Philox an octet, since removed) and after (…-bwd.txt) the backward took the flat form."""
    print("\nbackward: dtype BxSxH p | us ours eager | % copy ours | x eager", flush=True)
    for B, S, H, dt, p in shapes:
        g = torch.Generator(device=dev).manual_seed(1)
        x = torch.randn(B, S, H, device=dev, dtype=dt, generator=g)
        b = torch.randn(H, device=dev, dtype=dt, generator=g)
        dy = torch.randn(B, S, H, device=dev, dtype=dt, generator=g)
        xe, be = x.clone().requires_grad_(), b.clone().requires_grad_()
        ye = torch.nn.functional.dropout(torch.nn.functional.gelu(xe + be, approximate="tanh"), p=p, training=True)
        # event-timed (do_bench): autograd's backward does not capture into a graph; these are large problems
        ours = float(do_bench(lambda: bg.bias_gelu_dropout_residual_backward(dy, x, b, p, 7), rep=50)) * 1e3
        eager = float(do_bench(lambda: torch.autograd.grad(ye, (xe, be), dy, retain_graph=True), rep=50)) * 1e3
        mib = 3 * x.numel() * x.element_size() / 2**20
        print(f"backward {str(dt)[6:]:8s} {B}x{S}x{H} p={p} | {ours:8.1f} {eager:8.1f} | "
              f"{100 * mib * 2**20 / (ours * 1e-6) / (COPY[0] * 1e9):4.0f} | {eager / ours:5.2f}", flush=True)


COPY = [0.0]


def strided_rows(shapes: list[tuple[int, int, int, torch.dtype, float]], dev: torch.device) -> None:
    """Dropout at N % 8 != 0 on an x that is a slice of wider rows (its rows H + 3 apart, as a chunk of a fused
    projection): the policy (since session 28, x copied dense then the flat form) against eager, its output first
    equal to the contiguous input's bit for bit; GPU time by graph replay. The session's run (…-s28-bias-strided.txt)
    also timed row tiles drawing the mask two octets a tile octet and one Philox a lane (common.dropout_tile_flat,
    since removed): copy + flat beat both on all six rows."""
    print("\nstrided: dtype BxSxH p | us eager policy | % copy (3 tensors)", flush=True)
    for B, S, H, dt, p in shapes:
        g = torch.Generator(device=dev).manual_seed(2)
        xv = torch.randn(B, S, H + 3, device=dev, dtype=dt, generator=g)[..., :H]
        res = torch.randn(B, S, H, device=dev, dtype=dt, generator=g)
        b = torch.randn(H, device=dev, dtype=dt, generator=g)
        want = bg.bias_gelu_dropout_residual(xv.contiguous(), b, res, p, 7)
        fns = {"eager": lambda: res + torch.nn.functional.dropout(
                   torch.nn.functional.gelu(xv + b, approximate="tanh"), p=p, training=True),
               "policy": lambda: bg.bias_gelu_dropout_residual(xv, b, res, p, 7)}
        us: dict[str, float] = {}
        for k, f in fns.items():
            y = f()
            if k != "eager" and not torch.equal(y, want):
                print(f"  WRONG {k}", flush=True)
                continue
            us[k] = float(do_bench_cudagraph(f, rep=25)) * 1e3
        mib = 3 * res.numel() * res.element_size() / 2**20
        pct = {k: 100 * mib * 2**20 / (v * 1e-6) / (COPY[0] * 1e9) for k, v in us.items()}
        print(f"strided {str(dt)[6:]:8s} {B}x{S}x{H} p={p} | " + " ".join(f"{k} {v:.1f}" for k, v in us.items())
              + " | " + " ".join(f"{k} {v:.0f}" for k, v in pct.items()), flush=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=24)
    ap.add_argument("--json", default=None)
    ap.add_argument("--strided", action="store_true",
                    help="only the odd-dropout rows on a sliced x, the policy against eager")
    ap.add_argument("--odd-dropout", action="store_true",
                    help="hunt 23's dropout rows at N % 8 != 0 (and their backward) in place of the fixed rows")
    args = ap.parse_args()
    dev = torch.device("cuda")
    copy_gbps = announce(dev)
    r = random.Random(args.seed)
    COPY[0] = copy_gbps
    if args.strided:
        strided_rows(ODD_DROPOUT, dev)
        return 0
    shapes = (ODD_DROPOUT if args.odd_dropout else FIXED) + [draw(r) for _ in range(args.count)]
    rows: list[dict[str, Any]] = []
    for B, S, H, dt, p in shapes:
        g = torch.Generator(device=dev).manual_seed(0)
        x = torch.randn(B, S, H, device=dev, dtype=dt, generator=g)
        res = torch.randn(B, S, H, device=dev, dtype=dt, generator=g)
        b = torch.randn(H, device=dev, dtype=dt, generator=g)
        o = torch.empty_like(x)
        tile_out = tiles(x, b, res, p)
        fns: dict[str, Any] = {"eager": lambda: res + torch.nn.functional.dropout(
            torch.nn.functional.gelu(x + b, approximate="tanh"), p=p, training=True),
            "tiles": lambda: tiles(x, b, res, p), "policy": lambda: bg.bias_gelu_dropout_residual(x, b, res, p, 7)}
        # ("tiles" is the flat form too for dropout at H % 8 != 0 since session 28's second change: only it draws
        # that mask)
        fns.update({f"f{blk}w{w}": flat_fn(x, b, res, o, p, blk, w) for blk, w in FLAT})
        ref = (res.double() + bg.reference_undropped(x, b)) if p == 0 and x.numel() <= 1 << 26 else None
        tol = tolerance(str(dt).replace("torch.", ""))
        row: dict[str, Any] = {"dtype": str(dt).replace("torch.", ""), "B": B, "S": S, "H": H, "p": p, "us": {},
                               "wrong": []}
        for k, f in fns.items():
            y = f()
            if k != "eager":
                bad = (not torch.equal(y, tile_out)) if ref is None and p > 0 else (
                    ref is not None and not torch.allclose(y.double(), ref, atol=tol.atol, rtol=tol.rtol))
                if bad:
                    row["wrong"].append(k)
                    print(f"  WRONG {k}", flush=True)
                    continue
            row["us"][k] = 1000 * float(do_bench_cudagraph(f, rep=25))
        mib = 3 * x.numel() * x.element_size() / 2**20
        row["mib"] = mib
        row["pct_copy"] = {k: 100 * mib * 2**20 / (us * 1e-6) / (copy_gbps * 1e9) for k, us in row["us"].items()}
        u = row["us"]
        flats = {k: v for k, v in u.items() if k.startswith("f")}
        row["best_flat"] = min(flats, key=flats.get) if flats else None
        rows.append(row)
        print(f"{row['dtype']:8s} {B}x{S}x{H} p={p} ({mib:.0f} MiB): " + "  ".join(f"{k} {v:.1f}" for k, v in u.items()),
              flush=True)
        fns.clear()
        torch.cuda.empty_cache()
    if args.odd_dropout:
        backward_rows(ODD_DROPOUT + [(4, 2048, 4096, torch.bfloat16, 0.1), (8, 1024, 4096, torch.float32, 0.1)], dev)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "triton": triton.__version__,
                       "copy_gbps": copy_gbps, "seed": args.seed, "rows": rows}, fh, indent=1)
    print("\ndtype    BxSxH               p     MiB | % copy: tiles policy best-flat | x eager: tiles policy best-flat")
    for row in rows:
        pc, u, bf = row["pct_copy"], row["us"], row["best_flat"]
        e = u["eager"]
        print(f"{row['dtype']:8s} {row['B']}x{row['S']}x{row['H']:<8d} {row['p']:.1f} {row['mib']:7.0f} | "
              f"{pc.get('tiles', 0):4.0f} {pc.get('policy', 0):4.0f} {pc.get(bf, 0) if bf else 0:4.0f} {bf or '-':10s} | "
              f"{e / u['tiles']:5.2f} {e / u['policy']:5.2f} {e / u[bf] if bf else 0:5.2f}"
              + (" WRONG " + ",".join(row["wrong"]) if row["wrong"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
