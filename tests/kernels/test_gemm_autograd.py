"""The GEMM epilogues' backward (kernels/gemm_autograd.py) in the interpreter: ∂a, ∂b, ∂bias against fp64 autograd of
the same function, with the dropout mask the forward drew (read off a forward whose pre-activations are all > 0)."""

from __future__ import annotations

from collections.abc import Callable

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
    mask = _mask(M, K, N, p, 5, dtype)

    def fn(*ts: torch.Tensor) -> torch.Tensor:
        return _reference(epilogue, mask.to(ts[0].dtype))(*ts)

    if dtype == torch.float32:
        assert_grads(fn, inputs, dy, [t.grad for t in inputs])
        return
    _assert_within_torch_16_bit(fn, inputs, dy)


def _assert_within_torch_16_bit(fn: Callable[..., torch.Tensor], inputs: list[torch.Tensor], dy: torch.Tensor) -> None:
    """16-bit gradients: ∂a and ∂b are sums of K or N products of 16-bit rounded factors (the output gradient is
    rounded to 16 bits before the two GEMMs, as torch's own 16-bit autograd does). Judge against that: our error from
    fp64 autograd of fn must be within twice the error of torch's 16-bit autograd of fn, plus one ulp of the largest
    gradient (the interpreter's fp32 -> bf16 conversion can round a result one ulp further than a GPU's
    round-to-nearest: seen 0.12 against torch's 0.06 on values near 30)."""
    ref64 = [t.detach().double().requires_grad_() for t in inputs]
    fn(*ref64).backward(dy.double())
    ref16 = [t.detach().clone().requires_grad_() for t in inputs]
    fn(*ref16).backward(dy)
    for i, (t, r64, r16) in enumerate(zip(inputs, ref64, ref16)):
        assert t.grad is not None and t.grad.dtype == t.dtype and r64.grad is not None and r16.grad is not None
        assert torch.isfinite(t.grad).all(), f"input {i}: non-finite gradient"
        ours = (t.grad.double() - r64.grad).abs().max().item()
        torch16 = (r16.grad.double() - r64.grad).abs().max().item()
        ulp = (2.0**-7 if dy.dtype == torch.bfloat16 else 2.0**-10) * r64.grad.abs().max().item()
        assert ours <= 2 * torch16 + ulp, f"input {i}: error {ours:.4g} vs torch 16-bit autograd's {torch16:.4g}"


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


@pytest.mark.parametrize("N,p", [(37, 0.3), (64, 0.3), (40, 0.3), (72, 0.0)])
def test_bias_gelu_keeps_the_fused_epilogues_values_and_mask_and_its_gradients(N: int, p: float) -> None:
    """Under autograd bias_gelu keeps its pre-activation (GEMM + bias, then gelu_forward) instead of the fused launch:
    the same y as gemm()'s fused epilogue for the seed (mask and values), on both forms of the GELU kernels (row tiles
    for N = 37 with dropout and N = 64; one flat stretch for N = 40 with dropout and N = 72), and its gradients."""
    gen = torch.Generator().manual_seed(N)
    M, K = 29, 24
    a, b = leaf(torch.randn(M, K, generator=gen), torch.float32), leaf(torch.randn(K, N, generator=gen), torch.float32)
    bias = leaf(torch.randn(N, generator=gen), torch.float32)
    y = gemm_autograd(a, b, bias, "bias_gelu", p, seed=9)
    fused = gemm.gemm(a.detach(), b.detach(), bias.detach(), "bias_gelu", p, 9)
    assert torch.equal(y == 0, fused == 0)
    torch.testing.assert_close(y.detach(), fused, rtol=1e-5, atol=1e-5)
    dy = dy_like(y, gen)
    y.backward(dy)
    assert_grads(_reference("bias_gelu", _mask(M, K, N, p, 9, torch.float32)), [a, b, bias], dy,
                 [a.grad, b.grad, bias.grad])


def test_the_gelu_kernels_take_both_forms_over_these_widths() -> None:
    """The test above covers the row tiles and the flat stretch (gelu_flat's rule), forward and backward."""
    forms = {gemm_autograd_module.gelu_flat(N, p) for N, p in [(37, 0.3), (64, 0.3), (40, 0.3), (72, 0.0)]}
    assert forms == {True, False}
    assert not gemm_autograd_module.gelu_flat(37, 0.3)  # dropout at N % 8 != 0: only the tiles draw the GEMM's mask


def test_a_16_bit_pre_activation_past_its_range_gives_the_fused_output_and_finite_gradients() -> None:
    """fp16 a @ b = ±90000 overflows pre to ±inf (65504 is fp16's largest): GELU of -inf is -inf · 0 = NaN and its
    slope at ±inf 0 · inf = NaN, where the fused epilogue (from the fp32 sum) gives -0 and inf, and the slopes are 0
    and 1."""
    a = torch.full((4, 1), 300.0, dtype=torch.float16, requires_grad=True)
    b = (torch.tensor([[1.0, -1.0] * 4]) * 300.0).to(torch.float16).requires_grad_()
    bias = torch.zeros(8, dtype=torch.float16, requires_grad=True)
    y = gemm_autograd(a, b, bias, "bias_gelu")
    fused = gemm.gemm(a.detach(), b.detach(), bias.detach(), "bias_gelu")
    assert torch.equal(y.detach(), fused) and torch.isinf(fused[:, 0::2]).all() and (fused[:, 1::2] == 0).all()
    dy = torch.ones_like(y)
    y.backward(dy)
    assert bias.grad is not None and a.grad is not None and b.grad is not None
    assert torch.equal(bias.grad, torch.tensor([4.0, 0.0] * 4, dtype=torch.float16))  # slopes 1 and 0, four rows
    assert torch.isfinite(a.grad).all() and torch.isfinite(b.grad).all()


def test_the_gelu_saving_custom_op_passes_opcheck() -> None:
    x = (torch.randn(4, 8, requires_grad=True), torch.randn(8, 6, requires_grad=True), torch.randn(6, requires_grad=True))
    torch.library.opcheck(gemm_autograd_module._gemm_gelu_saving_op, (*x, 0.0, 0))


def test_without_a_gradient_bias_gelu_is_the_one_fused_launch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keeping pre costs a pass: only when a backward can follow (grad mode on and an input that requires grad)."""
    calls: list[int] = []
    real = gemm_autograd_module.gelu_forward
    monkeypatch.setattr(gemm_autograd_module, "gelu_forward", lambda *a: calls.append(1) or real(*a))
    a, b, bias = torch.randn(6, 8, requires_grad=True), torch.randn(8, 5), torch.randn(5)
    with torch.no_grad():
        y0 = gemm_autograd(a, b, bias, "bias_gelu")
    y1 = gemm_autograd(a.detach(), b, bias, "bias_gelu")
    assert calls == [] and not y0.requires_grad and not y1.requires_grad
    y2 = gemm_autograd(a, b, bias, "bias_gelu")
    assert calls == [1] and y2.requires_grad
    torch.testing.assert_close(y2.detach(), y0, rtol=1e-5, atol=1e-5)


def test_bias_gelu_without_a_bias_is_refused_under_its_own_name() -> None:
    a = torch.randn(4, 8, requires_grad=True)
    with pytest.raises(ValueError, match="'bias_gelu' needs a bias"):
        gemm_autograd(a, torch.randn(8, 3), None, "bias_gelu")


from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], phases=NO_SHRINK)
@given(st.data())
def test_property_gradients_of_any_shape_layout_dtype_epilogue_and_dropout(data: st.DataObject) -> None:
    """∂a, ∂b, ∂bias of every epilogue, with and without dropout, for drawn shapes, dtypes (fp32 bias under 16 bits
    too), an nn.Linear-style transposed b and a non-contiguous dy (the GELU gradient's row tiles): fp32 against fp64
    autograd; 16-bit within twice torch's own 16-bit autograd error (plus one ulp, as above)."""
    M, K, N = data.draw(st.integers(1, 48)), data.draw(st.integers(1, 40)), data.draw(st.integers(1, 80))
    dtype = data.draw(st.sampled_from([torch.float32, torch.bfloat16, torch.float16]))
    epilogue = data.draw(st.sampled_from(["none", "bias", "bias_relu", "bias_gelu"]))
    p = data.draw(st.sampled_from([0.0, 0.3]))
    gen = torch.Generator().manual_seed(data.draw(st.integers(0, 2**16)))
    a = leaf(torch.randn(M, K, generator=gen), dtype)
    w = torch.randn(N, K, generator=gen) / K**0.5 if data.draw(st.booleans()) else None
    b = leaf(w, dtype) if w is not None else leaf(torch.randn(K, N, generator=gen) / K**0.5, dtype)
    bias_dtype = data.draw(st.sampled_from([dtype, torch.float32]))
    bias = leaf(torch.randn(N, generator=gen), bias_dtype) if epilogue != "none" else None
    inputs = [a, b] + ([bias] if bias is not None else [])
    y = gemm_autograd(a, b.t() if w is not None else b, bias, epilogue, p, seed=3)
    dy = torch.randn(N, M, generator=gen).to(dtype).t() if data.draw(st.booleans()) else dy_like(y, gen)
    y.backward(dy)
    mask = _mask(M, K, N, p, 3, dtype)

    def fn(a_: torch.Tensor, b_: torch.Tensor, *rest: torch.Tensor) -> torch.Tensor:
        return _reference(epilogue, mask.to(a_.dtype))(a_, b_.t() if w is not None else b_, *rest)

    if dtype == torch.float32:
        assert_grads(fn, inputs, dy, [t.grad for t in inputs])
        return
    _assert_within_torch_16_bit(fn, inputs, dy)


def test_torch_compile_traces_the_gelu_saving_op_and_its_gradients() -> None:
    """Under torch.compile, bias_gelu with a gradient is rocm_triton_doctor::gemm_gelu_saving (one graph, no break),
    its backward reading the pre-activation it kept."""
    import torch._dynamo

    torch._dynamo.reset()
    gen = torch.Generator().manual_seed(12)
    inputs = (torch.randn(6, 24, generator=gen), torch.randn(24, 16, generator=gen) / 5, torch.randn(16, generator=gen))

    def step(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return gemm_autograd(a, b, bias, "bias_gelu") * 2.0

    xs = [t.clone().requires_grad_() for t in inputs]
    explain = torch._dynamo.explain(step)(*xs)
    assert explain.graph_break_count == 0 and explain.graph_count == 1
    assert "gemm_gelu_saving" in "\n".join(str(gm.graph) for gm in explain.graphs)
    y = torch.compile(step, fullgraph=True, backend="aot_eager")(*xs)
    dy = torch.randn(y.shape, generator=gen)
    y.backward(dy)
    assert_grads(lambda a, b, bias: _reference("bias_gelu", torch.ones(1, dtype=torch.float64))(a, b, bias) * 2.0,
                 xs, dy, [x.grad for x in xs])
