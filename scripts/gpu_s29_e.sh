python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:.:benchmarks
timeout 80 python benchmarks/host_hunt_probe.py --json $OUT/host-ab.json > $OUT/host-ab.txt 2>&1
timeout 260 python benchmarks/shape_hunt.py --seed 26 --seconds 200 --per-class 40 --attention-dims 32,48,64,80,96,112,128,160,192,256 --json $OUT/hunt26.json > $OUT/hunt26.txt 2>&1
head -12 $OUT/host-ab.txt; tail -50 $OUT/hunt26.txt
