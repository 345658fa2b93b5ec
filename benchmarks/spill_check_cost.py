"""What gemm()'s spill check (policy.spill_checked, session 15) costs a caller: the wall time of the FIRST call of a
GEMM over misaligned operands (compiling included, a fresh Triton cache per run) with the check on and off, and of
the calls after it. Each (shape, mode) runs in its own process, so nothing is cached in memory either.

    PYTHONPATH=. python benchmarks/spill_check_cost.py --json cost.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

SHAPES = ("bfloat16:3648x75x1182:t", "float16:8452x113x226:t", "bfloat16:91x31x24363:t", "float16:332x6995x75:t",
          "bfloat16:3426x93x673:n", "float16:613x432x78:n")

_CHILD = r"""
import sys, time, torch
from rocm_triton_doctor.kernels import gemm, policy, policy_misaligned
dt, shape, lay, on = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
policy_misaligned.SPILL_CHECK = on
M, K, N = (int(v) for v in shape.split("x"))
d = getattr(torch, dt)
a = torch.randn(M, K, device="cuda", dtype=d)
b = torch.randn(N, K, device="cuda", dtype=d).t() if lay == "t" else torch.randn(K, N, device="cuda", dtype=d)
torch.cuda.synchronize()
t0 = time.perf_counter(); gemm.gemm(a, b); torch.cuda.synchronize(); first = time.perf_counter() - t0
t0 = time.perf_counter()
for _ in range(20):
    gemm.gemm(a, b)
torch.cuda.synchronize()
print("RESULT", first, (time.perf_counter() - t0) / 20)
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    rows = []
    for spec in SHAPES:
        dt, shape, lay = spec.split(":")
        row = {"shape": spec}
        for mode in ("off", "on"):
            with tempfile.TemporaryDirectory() as cache:
                env = {**os.environ, "TRITON_CACHE_DIR": cache, "RTD_TUNE_CACHE": "off"}
                out = subprocess.run([sys.executable, "-c", _CHILD, dt, shape, lay, "1" if mode == "on" else "0"],
                                     capture_output=True, text=True, env=env, timeout=300)
            vals = [ln.split()[1:] for ln in out.stdout.splitlines() if ln.startswith("RESULT")]
            if vals:
                row[f"first_s_{mode}"], row[f"next_ms_{mode}"] = float(vals[0][0]), 1e3 * float(vals[0][1])
            else:
                row[f"error_{mode}"] = out.stderr[-300:]
        rows.append(row)
        print(f"{spec:28s} first call off {row.get('first_s_off', 0):.2f} s, on {row.get('first_s_on', 0):.2f} s; "
              f"later calls {row.get('next_ms_off', 0):.3f} / {row.get('next_ms_on', 0):.3f} ms", flush=True)
    if args.json:
        import torch

        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
