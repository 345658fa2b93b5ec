python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:.:benchmarks
timeout 150 python benchmarks/s29_ab_probe.py --family fewtile --nmajor --seed 5 -n 10 --json $OUT/fewtile-verify.json > $OUT/fewtile-verify.txt 2>&1
timeout 60 python benchmarks/host_hunt_probe.py --json $OUT/host-after.json > $OUT/host-after.txt 2>&1
timeout 120 python -m pytest -q -m gpu tests/kernels/test_launch_site.py tests/kernels/test_policy_fp32.py -p no:cacheprovider > $OUT/gpu-tests.txt 2>&1
timeout 120 python -m rocm_triton_doctor smoke --preset quick > $OUT/smoke-quick.txt 2>&1
timeout 170 python benchmarks/shape_hunt.py --seed 25 --seconds 130 --per-class 60 --classes gemm --json $OUT/hunt25-gemm.json > $OUT/hunt25-gemm.txt 2>&1
cat $OUT/fewtile-verify.txt; head -12 $OUT/host-after.txt; tail -3 $OUT/gpu-tests.txt; tail -8 $OUT/smoke-quick.txt; tail -12 $OUT/hunt25-gemm.txt
