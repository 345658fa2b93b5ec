"""Session 25: is the hardware tanh (tanh.approx.f32) safe in the GEMM's bias_gelu epilogue for 16-bit outputs?
(1) tanh.approx against torch.tanh over u in [-200, 200]: the largest absolute error, and whether it saturates to
exactly +-1 (GELU = 0.5 x (1 + tanh u): an error left at large negative x would be multiplied by |x|);
(2) gemm(..., "bias_gelu") in fp16 and bf16 with pre-activations spread over about [-60, 60], on the plans the
policy runs (short K, a square GEMM, a K-split decode step, the GEMV), against an fp32 reference, with the tolerance
table; (3) short_k_probe's timings follow in the same device call.

    PYTHONPATH=.:benchmarks python benchmarks/fast_gelu_check.py
"""

from __future__ import annotations

import sys

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels import gemm
from rocm_triton_doctor.kernels.tolerances import tolerance


@triton.jit
def _tanh_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = tl.inline_asm_elementwise("tanh.approx.f32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(y_ptr + offs, y, mask=offs < n)


def main() -> int:
    dev = torch.device("cuda")
    u = torch.linspace(-200, 200, 40_000_001, device=dev)
    t = torch.empty_like(u)
    _tanh_kernel[(triton.cdiv(u.numel(), 1024),)](u, t, u.numel(), BLOCK=1024)
    err = (t.double() - torch.tanh(u.double())).abs()
    big = u.abs() > 9
    print(f"tanh.approx: max abs error {err.max().item():.3g} (at u = {u[err.argmax()].item():.4g}); "
          f"|u| > 9: max abs error {err[big].max().item():.3g}, exactly +-1: {bool((t[big].abs() == 1).all())}; "
          f"first u where it is exactly -1: {u[(t == -1)].max().item():.4g}")
    bad = 0
    for M, K, N, bt in ((4096, 24, 8192, True), (2048, 4096, 2048, False), (16, 4096, 4096, True), (2, 4096, 4096, True),
                        (3, 805, 13804, True), (13151, 19, 8035, True)):
        for dt in (torch.float16, torch.bfloat16):
            g = torch.Generator(device=dev).manual_seed(M + K)
            a = torch.randn(M, K, device=dev, generator=g) * (20 / K**0.5)  # a @ b ~ N(0, 20^2): |x| up to ~60
            b = torch.randn(N, K, device=dev, generator=g).t() if bt else torch.randn(K, N, device=dev, generator=g)
            bias = torch.randn(N, device=dev, generator=g)
            a, b, bias = a.to(dt), b.to(dt), bias.to(dt)
            ref = gemm.reference(a, b, bias, "bias_gelu").float()
            y = gemm.gemm(a, b, bias, "bias_gelu").float()
            tol = tolerance(str(dt).removeprefix("torch."))
            excess = ((y - ref).abs() - (tol.atol + tol.rtol * ref.abs())).max().item()
            neg = ref < -1e-3
            bad += excess > 0
            print(f"{str(dt)[6:]:9s} {M}x{K}x{N}{' B^T' if bt else ''}: max abs error {(y - ref).abs().max().item():.3g}, "
                  f"at pre-activation < -5: {(y - ref)[(a.float() @ b.float() + bias.float()) < -5].abs().max().item():.3g}, "
                  f"excess over tolerance {excess:.3g} {'OK' if excess <= 0 else 'OUT OF TOLERANCE'} "
                  f"(negative outputs: {int(neg.sum())})", flush=True)
    print(f"{bad} out of tolerance")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
