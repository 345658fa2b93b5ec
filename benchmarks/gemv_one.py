"""One GEMM call on the GPU, for a profiler to attach to (ncu --kernel-name gemv_kernel): M K N dtype layout kernel
[config as JSON]. Layout "n": B is a (K, N) row-major tensor; "t": B^T of an (N, K) one.

    PYTHONPATH=. ncu --clock-control none --kernel-name regex:gemv --launch-count 1 \\
        python benchmarks/gemv_one.py 28 6016 26517 float32 n gemv '{"STAGES": 1}'
"""
import json
import sys

import torch

from rocm_triton_doctor.kernels import gemm

M, K, N = (int(x) for x in sys.argv[1:4])
dt = getattr(torch, sys.argv[4])
a = torch.randn(M, K, device="cuda", dtype=dt)
b = torch.randn(N, K, device="cuda", dtype=dt).t() if sys.argv[5] == "t" else torch.randn(K, N, device="cuda", dtype=dt)
cfg = json.loads(sys.argv[7]) if len(sys.argv) > 7 else None
kw = {"kernel": sys.argv[6]}
if cfg:
    from rocm_triton_doctor.kernels import policy
    t = policy.target_for_device("cuda")
    base = dict(policy.gemv_config(t, M, N, K, a.element_size(), sys.argv[5] == "t",
                                   torch.cuda.get_device_properties(0).multi_processor_count)) if sys.argv[6] == "gemv" else {}
    kw["config"] = {**base, **cfg}
for _ in range(3):
    y = gemm.gemm(a, b, **kw)
torch.cuda.synchronize()
print("max err", float((y.double() - a.double() @ b.double()).abs().max()), kw)
