python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:.:benchmarks
timeout 200 python benchmarks/s29_ab_probe.py --family fewtile --nmajor --seed 3 -n 8 --json $OUT/fewtile-nmajor.json > $OUT/fewtile-nmajor.txt 2>&1
timeout 330 python benchmarks/shape_hunt.py --seed 24 --seconds 230 --per-class 40 --attention-dims 32,48,64,80,96,112,128,160,192,256 --json $OUT/hunt24.json > $OUT/hunt24.txt 2>&1
cat $OUT/fewtile-nmajor.txt; tail -60 $OUT/hunt24.txt
