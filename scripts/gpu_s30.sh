#!/usr/bin/env bash
# Session 30's device calls: bash scripts/gpu_s30.sh STEP [args...] (run from the repository root, .whl carried).
set -u
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:.:benchmarks
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, torch.cuda.get_device_name(0))"
step=$1; shift
case $step in
  bwd) python3 benchmarks/backward_hunt.py "$@" ;;
  probe_bwd) SETS="wide-rows mid-d"; for s in $SETS; do timeout 240 python3 benchmarks/backward_probe.py --set $s --json $OUT/probe-$s.json > $OUT/probe-$s.txt 2>&1; tail -12 $OUT/probe-$s.txt; done; python3 benchmarks/backward_hunt.py "$@" > $OUT/bwd.txt 2>&1; tail -45 $OUT/bwd.txt ;;
  hunt) python3 benchmarks/shape_hunt.py "$@" ;;
  py) python3 "$@" ;;
  probe) for s in ${SETS:-rows gqa wide-d}; do timeout 250 python3 benchmarks/backward_probe.py --set $s --json $OUT/probe-$s.json > $OUT/probe-$s.txt 2>&1; tail -30 $OUT/probe-$s.txt; done ;;
esac
