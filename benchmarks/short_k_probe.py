"""Session 25: the hunts' worst GEMMs were short-K products with a large output (fp16 13151x8035x19 bias_gelu B^T
0.66x, fp32 3745x3629x24 B^T 0.62x, fp16 6688x17x7649 0.74x; docs/measurements/2026-11-28-h200-s25-hunt{19,20}
.json). This prints what gemm's plan launches for them (copies, kernel, tiles, split, precision) and times auto, the
same without the aligned copies, the epilogue left out, eager (cuBLAS + the epilogue ops) and a plain copy of C's
bytes (the output's floor), in GPU time (CUDA-graph replay), each output checked first. A diagnosis, not a rule.

    PYTHONPATH=.:benchmarks python benchmarks/short_k_probe.py
"""

from __future__ import annotations

import sys

import torch
from triton.testing import do_bench_cudagraph

from rocm_triton_doctor.kernels import gemm
from rocm_triton_doctor.kernels.tolerances import tolerance

F32, F16 = torch.float32, torch.float16
SHAPES = [(13151, 19, 8035, F16, "bias_gelu", True), (3745, 24, 3629, F32, "none", True),
          (6688, 17, 7649, F16, "none", False), (4096, 16, 8192, F16, "none", False),
          (4096, 24, 8192, F16, "bias_gelu", True)]


def main() -> int:
    dev = torch.device("cuda")
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}", flush=True)
    for M, K, N, dt, epi, bt in SHAPES:
        a = torch.randn(M, K, device=dev, dtype=dt)
        b = torch.randn(N, K, device=dev, dtype=dt).t() if bt else torch.randn(K, N, device=dev, dtype=dt)
        bias = torch.randn(N, device=dev, dtype=dt) if epi != "none" else None
        ref = gemm.reference(a, b, bias, epi)
        tol = tolerance(str(dt).removeprefix("torch."))
        gemm.clear_plans()
        y = gemm.gemm(a, b, bias, epi)
        ok = bool(((y.double() - ref.double()).abs() <= tol.atol + tol.rtol * ref.double().abs()).all())
        plans = list(gemm._PLANS.values())
        desc = "TMA (no plan)" if not plans else "; ".join(
            f"copy A {p.copy_a} B {p.copy_b} | " + " + ".join(
                f"{part.kern.__name__ if hasattr(part.kern, '__name__') else part.kern} rows {part.lo}-{part.hi} "
                f"split {part.split} " + str({k: part.kw.get(k) for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "PRECISION",
                                                                         "num_warps", "num_stages", "EVEN_K")})
                for part in p.parts) for p in plans)
        c_bytes = M * N * dt.itemsize
        src = torch.empty(c_bytes, dtype=torch.uint8, device=dev)
        dst = torch.empty_like(src)
        times = {
            "auto": do_bench_cudagraph(lambda: gemm.gemm(a, b, bias, epi), rep=30),
            "no copy": do_bench_cudagraph(lambda: gemm.gemm(a, b, bias, epi, config={"ALIGN_COPY": False}), rep=30),
            "no epilogue": do_bench_cudagraph(lambda: gemm.gemm(a, b), rep=30),
            "eager": do_bench_cudagraph(lambda: gemm.eager(a, b, bias, epi, 0.0), rep=30),
            "write C's bytes": do_bench_cudagraph(lambda: dst.copy_(src), rep=30) / 2,
        }
        name = f"{str(dt)[6:]} {M}x{K}x{N} {epi}{' B^T' if bt else ''}"
        print(f"{name}: ok={ok}\n  plan: {desc}\n  " + " | ".join(f"{k} {v * 1e3:.1f} us" for k, v in times.items()),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
