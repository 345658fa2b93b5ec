"""Session 25: how many rows the split row kernels (rows_split.py) should take. policy_rows.row_split splits a looped
row only among at most ROW_SPLIT_MAX_ROWS (32) rows, so 33-300 rows of a vocabulary's width run one program a row:
hunt seed 19's worst row was softmax fp16 108x149371 at 0.74x eager (26 % of copy; docs/measurements/
2026-11-28-h200-s25-hunt19.json). This times softmax and RMSNorm on such rows at SPLIT 1, 2, 4 and 8 (the policy's
BLOCK and warps otherwise) beside eager torch, in GPU time (CUDA-graph replay, where the second launch costs no host
time: the policy splits rows under ROW_SPLIT_EAGER_MIN_COLS only then), each output checked first.

    PYTHONPATH=.:benchmarks python benchmarks/row_split_rows_probe.py --json split-rows.json
    PYTHONPATH=.:benchmarks python benchmarks/row_split_rows_probe.py --verify --json verify.json
    PYTHONPATH=.:benchmarks python benchmarks/row_split_rows_probe.py --rows 72,96,120 --cols 50257,65536,100000

--verify: fresh row counts and widths, the policy (auto; graph capture lets it split) against SPLIT 1 (what it ran
before session 25's rule).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import torch
import torch.nn.functional as F
from triton.testing import do_bench_cudagraph

from rocm_triton_doctor.kernels import policy, rmsnorm, softmax
from rocm_triton_doctor.kernels.tolerances import tolerance

ROWS = (33, 64, 108, 200)
COLS = (32000, 128256, 149371)
DTYPES = (torch.bfloat16, torch.float32)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    ap.add_argument("--verify", action="store_true", help="fresh shapes: the policy against SPLIT 1")
    ap.add_argument("--rows", default=None, help="comma-separated row counts instead of the defaults")
    ap.add_argument("--cols", default=None, help="comma-separated widths instead of the defaults")
    args = ap.parse_args()
    row_counts, widths = ((40, 50, 72, 96, 120, 130), (50257, 100000, 151936, 262143)) if args.verify else (ROWS, COLS)
    row_counts = tuple(int(v) for v in args.rows.split(",")) if args.rows else row_counts
    widths = tuple(int(v) for v in args.cols.split(",")) if args.cols else widths
    dev = torch.device("cuda")
    t = policy.target_for_device("cuda")
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}", flush=True)
    copy_src = torch.empty(1 << 28, dtype=torch.uint8, device=dev)
    copy_dst = torch.empty_like(copy_src)
    copy_gbps = 2 * copy_src.numel() / float(do_bench_cudagraph(lambda: copy_dst.copy_(copy_src), rep=30)) / 1e6
    rows = []
    for kern in ("softmax", "rmsnorm"):
        for dt in DTYPES:
            for n in widths:
                for m in row_counts:
                    x = torch.randn(m, n, device=dev, dtype=dt)
                    w = torch.randn(n, device=dev, dtype=dt)
                    cfg = dict(policy.row_config(t, n, dt.itemsize, policy.row_class(n, m)))
                    base = {k: cfg[k] for k in ("BLOCK", "ROWS", "num_warps")}
                    chunks = -(-n // base["BLOCK"])
                    if kern == "softmax":
                        ours = lambda c: softmax.softmax(x, config=c)  # noqa: E731
                        eager = lambda: torch.softmax(x, -1)  # noqa: E731
                    else:
                        ours = lambda c: rmsnorm.rmsnorm(x, w, 1e-6, config=c)  # noqa: E731
                        eager = lambda: F.rms_norm(x, (n,), w, 1e-6)  # noqa: E731
                    ref = eager().double()
                    tol = tolerance(str(dt).removeprefix("torch."))
                    t_eager = float(do_bench_cudagraph(eager, rep=20))
                    row: dict[str, Any] = {"kernel": kern, "dtype": str(dt), "rows": m, "cols": n,
                                           "block": base["BLOCK"], "eager_ms": t_eager,
                                           "policy_split": policy.row_split(t, n, dt.itemsize, policy.split_class(m))}
                    variants: list[tuple[str, dict[str, Any] | None]] = (
                        [("s1", {**base, "SPLIT": 1}), ("auto", None)] if args.verify else
                        [(f"s{s}", {**base, "SPLIT": s}) for s in sorted({1, 2, 4, 8, chunks}) if s <= chunks])
                    for label, c in variants:
                        y = ours(c).double()
                        ok = bool(((y - ref).abs() <= tol.atol + tol.rtol * ref.abs()).all())
                        ms = float(do_bench_cudagraph(lambda c=c: ours(c), rep=20))
                        row[label] = {"ms": ms, "x": t_eager / ms, "ok": ok,
                                        "pct_copy": 100 * 2 * x.numel() * dt.itemsize / (ms * 1e6) / copy_gbps}
                    rows.append(row)
                    print(f"{kern:8s} {str(dt)[6:]:9s} {m:4d}x{n:<7d} eager {t_eager * 1e3:6.1f} us | " + " | ".join(
                        f"{k} {v['x']:.2f} ({v['pct_copy']:.0f}%){'' if v['ok'] else ' WRONG'}"
                        for k, v in row.items() if isinstance(v, dict)), flush=True)
    wrong = sum(1 for r in rows for v in r.values() if isinstance(v, dict) and not v["ok"])
    print(f"\ncopy {copy_gbps:.0f} GB/s; {len(rows)} shapes, {wrong} wrong")
    print("kernel dtype rows x cols | x eager at " + ("SPLIT 1 / auto" if args.verify else "SPLIT 1 / 2 / 4 / 8")
          + " | best")
    for r in rows:
        xs = {k: v["x"] for k, v in r.items() if isinstance(v, dict)}
        print(f"{r['kernel']} {r['dtype'][6:]} {r['rows']}x{r['cols']} | "
              + " / ".join(f"{xs[k]:.2f}" for k in xs) + f" | {max(xs, key=lambda k: xs[k])}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "copy_gbps": copy_gbps,
                       "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
