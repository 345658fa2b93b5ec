#!/usr/bin/env bash
# Issue #17, the optimizer (one device call): benchmarks/adamw_probe.py on the medium and tiny parameter lists, then
# `smoke --model PRESET --dtype DTYPE` with the forms in FORMS (default: every form). Usage:
#   run(command="bash benchmarks/gpu_adamw_model.sh medium bfloat16", carry=[".whl"], timeout_s=600)
# Writes under $OUT: adamw_probe.json, model-PRESET-DTYPE.json/.log.
set -u
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
PRESET=${1:-medium}; DTYPE=${2:-bfloat16}; PROBE=${PROBE:-1}
FORMS=${FORMS:-naive,sdpa,compile,compile-fused-adamw,compile-cudagraphs,liger,ours,ours-compile,ours-cudagraphs}
if ls .whl/liger_kernel-*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONPATH=$PWD:$PWD/benchmarks${PYTHONPATH:+:$PYTHONPATH}
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, torch.cuda.get_device_name(0))"
if [ "$PROBE" = 1 ]; then
  timeout 180 python3 benchmarks/adamw_probe.py --presets "$PRESET" --json "$OUT/adamw_probe.json" 2>&1 | tail -n 40
fi
timeout 400 python3 -m rocm_triton_doctor smoke --model "$PRESET" --dtype "$DTYPE" --steps 20 --forms "$FORMS" \
  --save "$OUT/model-$PRESET-$DTYPE.json" > "$OUT/model-$PRESET-$DTYPE.log" 2>&1
echo "exit $?"; tail -n 16 "$OUT/model-$PRESET-$DTYPE.log"
