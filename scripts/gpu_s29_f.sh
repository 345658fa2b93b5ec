export PYTHONPATH=.:benchmarks
timeout 330 python benchmarks/gemm_misaligned_probe.py --hunt29 --json $OUT/hunt29-rows.json > $OUT/hunt29-rows.txt 2>&1
cut -c1-330 $OUT/hunt29-rows.txt
