"""The GEMM epilogues' backward (kernels/gemm_autograd.py) in the interpreter: ∂a, ∂b, ∂bias against fp64 autograd of
the same function, with the dropout mask the forward drew (read off a forward whose pre-activations are all > 0)."""

from __future__ import annotations

import pytest
import torch

from rocm_triton_doctor.kernels import gemm
from rocm_triton_doctor.kernels import gemm_autograd as gemm_autograd_module
from rocm_triton_doctor.kernels.gemm_autograd import gemm_autograd
from tests.kernels.grads import assert_grads, dy_like, leaf

SQRT_2_OVER_PI = 0.7978845608028654


def _mask(M: int, K: int, N: int, p: float, seed: int, dtype: torch.dtype) -> torch.Tensor:
    """Which elements the forward's dropout kept, and their scale (the mask depends only on seed, row and column)."""
    if p == 0.0:
        return torch.ones(M, N, dtype=torch.float64)
    y = gemm.gemm(torch.zeros(M, K, dtype=dtype), torch.zeros(K, N, dtype=dtype), torch.ones(N, dtype=dtype),
                  "bias", p, seed)
    return y.double()  # 0 where dropped, 1/(1-p) where kept


def _reference(epilogue: str, mask: torch.Tensor):  # type: ignore[no-untyped-def]
    def fn(a: torch.Tensor, b: torch.Tensor, *bias: torch.Tensor) -> torch.Tensor:
        pre = a @ b + (bias[0] if bias else 0.0)
        if epilogue == "bias_relu":
            pre = torch.relu(pre)
        elif epilogue == "bias_gelu":
            pre = pre * torch.sigmoid(2.0 * SQRT_2_OVER_PI * (pre + 0.044715 * pre**3))
        return pre * mask
    return fn


@pytest.mark.parametrize("epilogue", ["none", "bias", "bias_relu", "bias_gelu"])
@pytest.mark.parametrize("p", [0.0, 0.3])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_gradients_match_fp64_autograd(epilogue: str, p: float, dtype: torch.dtype) -> None:
    gen = torch.Generator().manual_seed(3)
    M, K, N = 37, 48, 72  # odd M, N not a multiple of the tiles
    a, b = leaf(torch.randn(M, K, generator=gen), dtype), leaf(torch.randn(K, N, generator=gen), dtype)
    bias = leaf(torch.randn(N, generator=gen), dtype) if epilogue != "none" else None
    inputs = [a, b] + ([bias] if bias is not None else [])
    y = gemm_autograd(a, b, bias, epilogue, p, seed=5)
    dy = dy_like(y, gen)
    y.backward(dy)
    fn = _reference(epilogue, _mask(M, K, N, p, 5, dtype))
    if dtype == torch.float32:
        assert_grads(fn, inputs, dy, [t.grad for t in inputs])
        return
    # 16-bit: ∂a and ∂b are sums of K or N products of 16-bit rounded factors (the output gradient is rounded to bf16
    # before the two GEMMs, as torch's own bf16 autograd does). Judge against that: our error from fp64 autograd must
    # be within twice the error of torch's bf16 autograd of the same function.
    ref64 = [t.detach().double().requires_grad_() for t in inputs]
    fn(*ref64).backward(dy.double())
    ref16 = [t.detach().clone().requires_grad_() for t in inputs]
    mask16 = _mask(M, K, N, p, 5, dtype).to(dtype)
    _reference(epilogue, mask16)(*ref16).backward(dy)
    for i, (t, r64, r16) in enumerate(zip(inputs, ref64, ref16)):
        assert t.grad is not None and t.grad.dtype == t.dtype and r64.grad is not None and r16.grad is not None
        ours = (t.grad.double() - r64.grad).abs().max().item()
        torch16 = (r16.grad.double() - r64.grad).abs().max().item()
        # + one bf16 ulp of the largest gradient: the interpreter's fp32 -> bf16 conversion can round a result one ulp
        # further than a GPU's round-to-nearest (seen: 0.12 against torch's 0.06 on values near 30).
        ulp = 2.0**-7 * r64.grad.abs().max().item()
        assert ours <= 2 * torch16 + ulp, f"input {i}: error {ours:.4g} vs torch bf16 autograd's {torch16:.4g}"


def test_transposed_inputs_and_fp32_bias_under_16_bit() -> None:
    gen = torch.Generator().manual_seed(4)
    a = leaf(torch.randn(40, 33, generator=gen), torch.float16)  # a.t() is (33, 40): a transposed view
    b = leaf(torch.randn(40, 24, generator=gen), torch.float16)
    bias = leaf(torch.randn(24, generator=gen), torch.float32)
    y = gemm_autograd(a.t(), b, bias, "bias_relu")
    dy = dy_like(y, gen)
    y.backward(dy)
    assert bias.grad is not None and bias.grad.dtype == torch.float32
    ref = [t.detach().double().requires_grad_() for t in (a, b, bias)]
    torch.relu(ref[0].t() @ ref[1] + ref[2]).backward(dy.double())
    for got, want in zip((a.grad, b.grad, bias.grad), ref):
        assert got is not None and want.grad is not None
        torch.testing.assert_close(got.double(), want.grad, rtol=1e-2, atol=1e-2)


def test_a_fresh_seed_per_call_and_the_backward_uses_the_forwards_mask() -> None:
    a = leaf(torch.randn(16, 32) + 3.0, torch.float32)
    b = leaf(torch.rand(32, 64), torch.float32)
    y1 = gemm_autograd(a, b, None, "none", 0.5)
    y2 = gemm_autograd(a, b, None, "none", 0.5)
    assert not torch.equal(y1 != 0, y2 != 0)  # a new mask each call without seed=
    y1.sum().backward()
    assert a.grad is not None
    # ∂a = (mask·scale) @ bᵀ: zero rows of the mask would give zero; compare with the mask read off y1
    kept = (y1 != 0).double() * 2.0
    torch.testing.assert_close(a.grad.double(), kept @ b.detach().double().t(), rtol=1e-4, atol=1e-4)


def test_the_custom_op_gives_the_functions_gradients_for_every_epilogue_and_passes_opcheck() -> None:
    gen = torch.Generator().manual_seed(11)
    for epilogue in ("none", "bias", "bias_relu", "bias_gelu"):
        a, b = torch.randn(5, 7, generator=gen), torch.randn(7, 3, generator=gen)
        bias = torch.randn(3, generator=gen)
        leaves = [t.clone().requires_grad_() for t in (a, b, bias)]
        y1 = gemm_autograd_module.gemm_custom_op(*leaves, epilogue)
        g1 = torch.autograd.grad(y1.sum(), leaves)
        leaves2 = [t.clone().requires_grad_() for t in (a, b, bias)]
        y2 = gemm_autograd_module.GemmFunction.apply(*leaves2, epilogue, 0.0, None)
        g2 = torch.autograd.grad(y2.sum(), leaves2)
        torch.testing.assert_close(y1, y2)
        for x, y in zip(g1, g2, strict=True):
            torch.testing.assert_close(x, y)
    x = (torch.randn(4, 8, requires_grad=True), torch.randn(8, 6, requires_grad=True), torch.randn(6, requires_grad=True))
    torch.library.opcheck(gemm_autograd_module._gemm_op, (*x, "bias_relu", 0.0, 0))


def test_autograd_takes_activations_with_leading_dims() -> None:
    g = torch.Generator().manual_seed(6)
    a = torch.randn(2, 3, 16, generator=g, dtype=torch.float64).float().requires_grad_()
    w = torch.randn(8, 16, generator=g).requires_grad_()
    for fn in (gemm_autograd, gemm_autograd_module.gemm_custom_op):
        y = fn(a, w.t())
        assert y.shape == (2, 3, 8)
        y.square().sum().backward()
        ad, wd = a.detach().double().requires_grad_(), w.detach().double().requires_grad_()
        (ad @ wd.t()).square().sum().backward()
        torch.testing.assert_close(a.grad.double(), ad.grad, atol=1e-3, rtol=1e-3)
        torch.testing.assert_close(w.grad.double(), wd.grad, atol=1e-3, rtol=1e-3)
        a.grad = w.grad = None
