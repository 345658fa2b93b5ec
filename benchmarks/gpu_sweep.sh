#!/usr/bin/env bash
# Issue #16 items 3-4 on one GPU, in ONE invocation (budget: ~8 min on an H100; each step has its own time cap, so
# a slow step cannot starve the rest). Run from the repository root, e.g. with the device tool:
#   run(command="bash benchmarks/gpu_sweep.sh", carry=[".whl"], timeout_s=600)
# Writes under $OUT (default ./gpu-sweep-out): tests.log, sweep.json/.log/.png, launch.json/.log, bench.json/.log,
# launch_python.json, sweep.md. Prints a short table last.
#
# Time budget (H100), worst case 520 s + install: GPU tests <= 60 s; sweep: no new row after 250 s (--max-seconds),
# 300 s hard cap — ~274 rows, each ~0.2-0.4 s once compiled (5 ms warm-up + 25 ms reps per column x 3-4 columns,
# correctness, graph replay for small rows) plus compiles (~1 s per new Triton specialisation, ~2-4 s per new
# torch.compile graph; ~100-200 s over the sweep on a cold cache); launch <= 40 s; Python A/B <= 20 s; bench <= 100 s.
set -u
OUT=${OUT:-$PWD/gpu-sweep-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
SWEEP_SECONDS=${SWEEP_SECONDS:-250}
T0=$(date +%s)
step() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }

if ls .whl/liger_kernel-*.whl >/dev/null 2>&1; then
  step "installing the carried Liger-Kernel wheel into /tmp/site"
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
else
  step "no .whl/liger_kernel-*.whl: the Liger column will say 'not installed'"
fi
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, torch.cuda.get_device_name(0))"

step "GPU-marked tests (pytest -m gpu)"
timeout 60 python3 -m pytest -m gpu -q -p no:cacheprovider tests > "$OUT/tests.log" 2>&1
echo "tests exit $?: $(tail -n 1 "$OUT/tests.log")"

PLOT=()
python3 -c "import matplotlib" 2>/dev/null && PLOT=(--plot "$OUT/sweep.png")  # --plot is refused without matplotlib
step "smoke --preset sweep --compile (rows stop starting after ${SWEEP_SECONDS} s)"
timeout 300 python3 -m rocm_triton_doctor smoke --preset sweep --compile --max-seconds "$SWEEP_SECONDS" \
  --save "$OUT/sweep.json" "${PLOT[@]}" > "$OUT/sweep.log" 2>&1
echo "sweep exit $? ($(grep -c . "$OUT/sweep.log") lines of table in sweep.log)"

step "launch overhead: host µs per call, ours vs eager (smoke --preset launch)"
timeout 40 python3 -m rocm_triton_doctor smoke --preset launch --save "$OUT/launch.json" > "$OUT/launch.log" 2>&1
echo "launch exit $?"
timeout 20 python3 benchmarks/launch_overhead.py --ab --calls 2000 --json > "$OUT/launch_python.json" 2>/dev/null \
  || echo "launch_overhead.py failed (pure-Python A/B, optional)"

step "smoke --preset bench --compile"
timeout 100 python3 -m rocm_triton_doctor smoke --preset bench --compile --save "$OUT/bench.json" > "$OUT/bench.log" 2>&1
echo "bench exit $?"

step "tables"
if [ -s "$OUT/sweep.json" ]; then
  python3 benchmarks/smoke_markdown.py "$OUT/sweep.json" > "$OUT/sweep.md" 2>&1 || echo "smoke_markdown failed"
  python3 - "$OUT" <<'EOF' || true
import json, sys
out = sys.argv[1]
from rocm_triton_doctor.smoke import sweep_render as sr
d = json.load(open(f"{out}/sweep.json"))
print(f"{d['device_name']}: {len(d['results'])} sweep rows in {d['seconds']} s; ceilings {d['ceilings']}")
print(f"{'class':26} {'rows':>4} {'vs':>6} {'worst':>6} {'median':>6} {'med%':>5} {'miss':>4}  worst row")
for s in sr.summary(d["results"]):
    x = lambda v: f"{v:.2f}" if v is not None else "-"
    print(f"{s['class']:26} {s['rows']:4} {s['against']:>6} {x(s['worst_ratio']):>6} {x(s['median_ratio']):>6} "
          f"{x(s['median_pct']):>5} {s['missed']:4}  {s['worst_case']}")
for n in d["notes"]:
    if n.startswith("--max-seconds"):
        print(n[:300])
try:
    lr = json.load(open(f"{out}/launch.json"))["results"]
    print("host us/call (ours / eager):", ", ".join(
        f"{r['kernel']} {r['launch_us'].get('triton')}/{r['launch_us'].get('eager')}" for r in lr if r.get("launch_us")))
except (OSError, KeyError, ValueError) as exc:
    print("no launch table:", exc)
EOF
fi
step "done"
