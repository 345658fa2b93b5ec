"""policy_lce: the chunk size and where a chunk's ∂W is added into the fp32 accumulator (inside the GEMM or after
it). Both ways must give linear_cross_entropy the same gradients; the 16-bit fused form runs on a CUDA GPU only."""

from __future__ import annotations

import os

os.environ["TRITON_INTERPRET"] = "1"  # before any @triton.jit function is created

import pytest
import torch

from rocm_triton_doctor.kernels import linear_cross_entropy as lce
from rocm_triton_doctor.kernels import policy_lce


def test_fp32_always_accumulates_in_the_gemm_and_16_bit_only_on_cuda() -> None:
    assert policy_lce.fused_accumulate(torch.empty(2, 2))
    assert not policy_lce.fused_accumulate(torch.empty(2, 2, dtype=torch.bfloat16))  # CPU: no fp32-output GEMM
    try:
        policy_lce.FUSED_ACCUMULATE = False
        assert not policy_lce.fused_accumulate(torch.empty(2, 2))
    finally:
        policy_lce.FUSED_ACCUMULATE = True


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_accumulating_in_the_gemm_or_after_it_gives_the_same_gradients(dtype: torch.dtype) -> None:
    g = torch.Generator().manual_seed(5)
    h = torch.randn(45, 24, generator=g).to(dtype)
    w = (torch.randn(301, 24, generator=g) * 0.3).to(dtype)
    y = torch.randint(0, 301, (45,), generator=g)
    fused = lce.forward_and_grads(h, w, None, y, chunk=8)  # 6 chunks: the accumulator is added into 5 times
    try:
        policy_lce.FUSED_ACCUMULATE = False
        apart = lce.forward_and_grads(h, w, None, y, chunk=8)
    finally:
        policy_lce.FUSED_ACCUMULATE = True
    ref = lce.reference(h, w, y)
    tol = 1e-5 if dtype == torch.float32 else 2e-2
    for got, other, want in zip(fused[:3], apart[:3], ref[:3]):
        assert got is not None and other is not None
        scale = float(want.abs().max())
        assert float((got.double() - want).abs().max()) <= tol * scale
        assert float((other.double() - want).abs().max()) <= tol * scale


_GPU_FUSED = r"""
import json, torch
from rocm_triton_doctor.kernels import linear_cross_entropy as lce, policy_lce
out = {}
for dt in (torch.bfloat16, torch.float16, torch.float32):
    g = torch.Generator(device="cuda").manual_seed(0)
    h = torch.randn(3001, 256, device="cuda", generator=g).to(dt)
    w = (torch.randn(5003, 256, device="cuda", generator=g) * 0.1).to(dt)
    y = torch.randint(0, 5003, (3001,), device="cuda", generator=g)
    _, _, gw, _ = lce.forward_and_grads(h, w, None, y, chunk=512)
    _, _, rw = lce.reference(h, w, y)[:3]
    out[str(dt)] = [policy_lce.fused_accumulate(h), float((gw.double() - rw).abs().max() / rw.abs().max())]
    # reduction="none" with a weight per row: its backward makes the logits again, in chunks, fused the same way
    hh, ww = h.clone().requires_grad_(), w.clone().requires_grad_()
    rg = torch.rand(3001, device="cuda", generator=g)
    (lce.linear_cross_entropy(hh, ww, y, reduction="none") * rg).sum().backward()
    hd, wd = h.double().requires_grad_(), w.double().requires_grad_()
    (torch.nn.functional.cross_entropy(hd @ wd.t(), y, reduction="none") * rg.double()).sum().backward()
    out["none " + str(dt)] = [True, max(float((a.grad.double() - b.grad).abs().max() / b.grad.abs().max())
                                        for a, b in ((hh, hd), (ww, wd)))]
print(json.dumps(out))
"""


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_fused_accumulation_on_the_gpu() -> None:  # pragma: no cover - the lent GPU
    """On an NVIDIA GPU of compute capability 8 or newer the 16-bit chunks are added inside the GEMM, and ∂W over 6
    chunks matches the fp64 reference."""
    from tests.kernels.helpers import gpu_script_json

    out = gpu_script_json(_GPU_FUSED)
    assert all(fused for fused, _ in out.values()), out
    assert all(err < (1e-4 if "float32" in k else 1e-2) for k, (_, err) in out.items()), out
