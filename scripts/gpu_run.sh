#!/usr/bin/env bash
# The device calls of a session: bash scripts/gpu_run.sh STEP [args...] (run from the repository root, .whl carried).
set -u
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:.:benchmarks
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, torch.cuda.get_device_name(0))"
step=$1; shift
case $step in
  bwd) python3 benchmarks/backward_hunt.py "$@" ;;
  hunt) python3 benchmarks/shape_hunt.py "$@" ;;
  py) python3 "$@" ;;
  host) for s in ${SETS:-sums host}; do timeout 280 python3 benchmarks/backward_host_probe.py --set $s --json $OUT/host-$s.json > $OUT/host-$s.txt 2>&1; tail -${TAILN:-40} $OUT/host-$s.txt; done ;;
  probe) for s in ${SETS:-rows}; do timeout 250 python3 benchmarks/backward_probe.py --set $s --json $OUT/probe-$s.json > $OUT/probe-$s.txt 2>&1; tail -30 $OUT/probe-$s.txt; done ;;
esac
