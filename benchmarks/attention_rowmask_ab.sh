#!/usr/bin/env bash
# A/B of the attention backward's padded-row select: A = only the last partial query block, B = every block.
set -u
export PYTHONPATH=$PWD
cp rocm_triton_doctor/kernels/attention_backward.py /tmp/A.py
python3 - <<'PY'
s = open("/tmp/A.py").read()
old = "    elif start_m + BLOCK_M > S_Q:"
assert old in s
open("/tmp/B.py", "w").write(s.replace(old, "    else:"))
PY
for round in 1 2; do
  for v in A B; do
    cp /tmp/$v.py rocm_triton_doctor/kernels/attention_backward.py
    echo "== $v round $round"
    timeout 80 python3 benchmarks/attention_backward_bench.py --json $OUT/ab-$v-$round.json 2>&1 | sed -n '3,12p' | awk '{print $1,$2,$3,$4,$5,$6,$7}'
  done
done
cp /tmp/A.py rocm_triton_doctor/kernels/attention_backward.py
