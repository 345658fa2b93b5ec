export PYTHONPATH=.:benchmarks
timeout 270 python benchmarks/s29_ab_probe.py --family fewtile --seed 1 -n 14 --json $OUT/fewtile.json > $OUT/fewtile.txt 2>&1
timeout 200 python benchmarks/s29_ab_probe.py --family gemv --seed 2 -n 16 --json $OUT/gemv-ab.json > $OUT/gemv-ab.txt 2>&1
cat $OUT/fewtile.txt $OUT/gemv-ab.txt
