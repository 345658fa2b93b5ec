set -x
export PYTHONPATH=.:benchmarks
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 120 python benchmarks/host_hunt_probe.py --json $OUT/host.json > $OUT/host.txt 2>&1; tail -5 $OUT/host.txt
timeout 200 python benchmarks/gemm_misaligned_probe.py --gemv-small --set gemv --json $OUT/gemv.json > $OUT/gemv.txt 2>&1
timeout 220 python benchmarks/gemm_misaligned_probe.py --hunt23 --set split --json $OUT/split.json > $OUT/split.txt 2>&1
head -40 $OUT/host.txt; cat $OUT/gemv.txt $OUT/split.txt | grep -v "^ *WRONG" | cut -c1-400
