export PYTHONPATH=.:benchmarks
timeout 200 python benchmarks/gemm_misaligned_probe.py --set verify --family mid16 --seed 7 -n 14 --json $OUT/mid16.json > $OUT/mid16.txt 2>&1
cut -c1-200 $OUT/mid16.txt
