"""Wall time of `check --no-runtime`, full `check`, and `python -m torch.utils.collect_env` (the issue #2 targets).

Usage: python benchmarks/check_speed.py [--runs 7] [--json FILE]
Each command runs --runs times in a fresh process (after one untimed warm-up); the median is reported.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time


def timed(argv: list[str], runs: int) -> dict[str, object]:
    subprocess.run(argv, capture_output=True, timeout=600)  # warm the page cache and __pycache__
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(argv, capture_output=True, timeout=600)
        times.append(time.perf_counter() - t)
    return {"argv": " ".join(argv), "median_s": round(statistics.median(times), 3),
            "min_s": round(min(times), 3), "max_s": round(max(times), 3), "runs": runs}


PHASES = """
import time
t0 = time.perf_counter(); marks = []
def mark(name):
    marks.append((name, time.perf_counter()))
import torch; mark("import torch")
ok = torch.cuda.is_available(); mark("cuda.is_available")
n = torch.cuda.device_count(); mark("device_count")
archs = torch.cuda.get_arch_list(); mark("get_arch_list")
props = [torch.cuda.get_device_properties(i) for i in range(n)]; mark("get_device_properties")
import triton; mark("import triton")
from triton.runtime import driver; mark("import triton.runtime.driver")
target = driver.active.get_current_target(); mark("driver.active.get_current_target")
prev = t0
for name, t in marks:
    print(f"  {name:36s} {t - prev:6.3f} s")
    prev = t
print(f"  {'total':36s} {prev - t0:6.3f} s")
"""


def phases(runs: int) -> None:
    """Where the runtime probe's time goes: each step it takes, timed in a fresh interpreter."""
    for i in range(runs):
        print(f"runtime-probe phases, run {i + 1}:", flush=True)
        subprocess.run([sys.executable, "-c", PHASES], timeout=600)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--json")
    ap.add_argument("--phases", action="store_true", help="also time each step of the runtime probe (GPU hosts)")
    a = ap.parse_args()
    if a.phases:
        phases(2)
    py = sys.executable
    res = {
        "no_runtime": timed([py, "-m", "rocm_triton_doctor", "check", "--no-runtime", "--json"], a.runs),
        "full": timed([py, "-m", "rocm_triton_doctor", "check", "--json"], a.runs),
        "collect_env": timed([py, "-m", "torch.utils.collect_env"], a.runs),
    }
    res["full_over_collect_env"] = round(res["full"]["median_s"] / res["collect_env"]["median_s"], 3)  # type: ignore[index]
    for k in ("no_runtime", "full", "collect_env"):
        print(f"{k:12s} median {res[k]['median_s']:.3f} s  (min {res[k]['min_s']:.3f}, max {res[k]['max_s']:.3f}, n={a.runs})")  # type: ignore[index]
    print(f"full check / collect_env = {res['full_over_collect_env']:.2f}")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(res, fh, indent=1)


if __name__ == "__main__":
    main()
