#!/usr/bin/env bash
# Issue #17 on one GPU, in ONE invocation (~6-8 min on an H100): the model step in every form (tiny fp32, tiny bf16,
# medium bf16), the attention forward+backward against SDPA, and the host-time profile of the kernel launches.
# Run from the repository root, e.g. with the device tool:
#   run(command="bash benchmarks/gpu_model.sh", carry=[".whl"], timeout_s=600)
# Writes under $OUT (default ./gpu-model-out): model-*.json/.log, attention_backward.json, launch_profile.json.
set -u
OUT=${OUT:-$PWD/gpu-model-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
T0=$(date +%s)
step() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
if ls .whl/liger_kernel-*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, torch.cuda.get_device_name(0))"

for spec in "tiny-llama float32 120" "tiny-llama bfloat16 120" "medium bfloat16 200"; do
  set -- $spec
  step "smoke --model $1 --dtype $2 --steps 20"
  timeout "$3" python3 -m rocm_triton_doctor smoke --model "$1" --dtype "$2" --steps 20 --save "$OUT/model-$1-$2.json" \
    > "$OUT/model-$1-$2.log" 2>&1
  echo "exit $?"; tail -n 14 "$OUT/model-$1-$2.log"
done
if [ -f benchmarks/attention_backward_bench.py ]; then
  step "attention forward+backward vs SDPA"
  timeout 60 python3 benchmarks/attention_backward_bench.py --json "$OUT/attention_backward.json" 2>&1 | tail -n 20
fi
step "host time per call"
timeout 50 python3 benchmarks/launch_profile.py --calls 300 --json "$OUT/launch_profile.json" 2>&1 | sed -n '/^call /,$p'
step "done"
