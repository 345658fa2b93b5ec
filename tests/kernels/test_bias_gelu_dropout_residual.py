"""bias+GELU+dropout+residual in the interpreter: the smoke cases, the dropout contract, input validation."""

from __future__ import annotations

import pytest
import torch

from rocm_triton_doctor.kernels import bias_gelu_dropout_residual
from rocm_triton_doctor.kernels.base import Case
from tests.kernels.helpers import check_in_interpreter, interpreter_cases

CASES = interpreter_cases(bias_gelu_dropout_residual.KERNEL)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_in_interpreter(case: Case) -> None:
    check_in_interpreter(case)


def test_dropout_keep_rate_binomial_bound() -> None:
    from rocm_triton_doctor.smoke import correctness

    x = torch.randn(64, 1024) + 5.0  # never ~0, so every element is decided
    res = torch.zeros_like(x)
    p = 0.2
    out = bias_gelu_dropout_residual.bias_gelu_dropout_residual(x, torch.zeros(1024), res, p=p, seed=11)
    n, k = out.numel(), int((out != 0).sum())
    z = (k - n * (1 - p)) / (n * p * (1 - p)) ** 0.5
    assert abs(z) < correctness.Z_BOUND


# --- every input computed right or refused (issue #16; kernel-edge-cases.md) ---------------------------------------

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from rocm_triton_doctor.kernels import gemm  # noqa: E402
from tests.kernels.helpers import assert_matches, param_vector, row_inputs, strided_tensor, layouts  # noqa: E402

# Shrinking re-runs interpreter launches for minutes: report the failing example as drawn (CI time bound).
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)
bgdr = bias_gelu_dropout_residual.bias_gelu_dropout_residual


def _ref(x: torch.Tensor, bias: torch.Tensor, res: torch.Tensor) -> torch.Tensor:
    return res.double() + bias_gelu_dropout_residual.reference_undropped(x, bias)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], phases=NO_SHRINK)
@given(st.data())
def test_property_any_shape_layout_dtype_and_value(data: st.DataObject) -> None:
    r = row_inputs(data.draw, max_n=150)
    x, dtype = r["x"], r["dtype"]
    res = strided_tensor(tuple(x.shape), dtype, r["gen"], **layouts(data.draw, x.dim()))
    bias = param_vector(data.draw, r["N"], dtype, r["gen"])
    assert_matches(bgdr(x, bias, res), _ref(x, bias, res), dtype)


@pytest.mark.parametrize("shape", [(4, 0), (2, 3, 0), (0, 8), (2, 0, 16)])
def test_empty_inputs_give_empty_outputs(shape: tuple[int, ...]) -> None:
    # Edge case #14: H = 0 crashed with ZeroDivisionError.
    x = torch.ones(shape)
    out = bgdr(x, torch.ones(shape[-1]), torch.ones(shape), p=0.1)
    assert out.shape == shape


def test_three_leading_dims_are_read_in_place_and_four_refused_naming_every_input_s_strides() -> None:
    # x contiguous, the residual permuted so its three leading dims do not merge: read through its strides.
    x = torch.randn(5, 5, 33, 16)
    residual = torch.randn(33, 5, 5, 16).permute(2, 1, 0, 3)
    bias = torch.randn(16)
    torch.testing.assert_close(bias_gelu_dropout_residual.bias_gelu_dropout_residual(x, bias, residual),
                               residual + torch.nn.functional.gelu(x + bias, approximate="tanh"), atol=1e-5, rtol=1e-5)
    # four leading dims apart in the residual: the refusal shows both layouts (it had named x's strides alone)
    x = torch.randn(5, 3, 2, 4, 6)
    residual = torch.randn(2, 3, 4, 5, 6).permute(3, 1, 0, 2, 4)
    with pytest.raises(ValueError, match=r"\(5, 3, 2, 4, 6\) inputs with strides \(144, 48, 24, 6, 1\), "
                                         r"\(6, 120, 360, 30, 1\) do not fold into three; call .contiguous\(\) first"):
        bias_gelu_dropout_residual.bias_gelu_dropout_residual(x, torch.randn(6), residual)


def test_0_dim_input_is_refused_clearly() -> None:
    with pytest.raises(ValueError, match="0-dim"):  # edge case #15: IndexError
        bgdr(torch.tensor(1.0), torch.ones(1), torch.tensor(1.0))


@pytest.mark.parametrize("seed,exc", [(1.5, TypeError), ("7", TypeError), (True, TypeError), (2**64, ValueError)])
def test_bad_seeds_are_refused_clearly(seed: object, exc: type) -> None:
    x = torch.randn(4, 16)
    with pytest.raises(exc, match="seed"):  # edge case #19: nested InterpreterError / OverflowError
        bgdr(x, torch.zeros(16), torch.zeros_like(x), p=0.5, seed=seed)  # type: ignore[arg-type]


def test_without_a_seed_every_call_draws_a_new_mask_and_manual_seed_reproduces() -> None:
    # Edge case #10: seed=0 by default gave one fixed mask for every call.
    x = torch.randn(32, 256) + 5.0
    zero, res = torch.zeros(256), torch.zeros_like(x)
    first, second = bgdr(x, zero, res, p=0.5), bgdr(x, zero, res, p=0.5)
    assert not torch.equal(first != 0, second != 0)
    torch.manual_seed(123)
    a = bgdr(x, zero, res, p=0.5)
    torch.manual_seed(123)
    assert torch.equal(a, bgdr(x, zero, res, p=0.5))
    assert torch.equal(bgdr(x, zero, res, p=0.5, seed=-1), bgdr(x, zero, res, p=0.5, seed=-1))
    assert not torch.equal(bgdr(x, zero, res, p=0.5, seed=5) != 0, bgdr(x, zero, res, p=0.5, seed=2**32 + 5) != 0)


def test_the_two_dropout_kernels_draw_different_masks_for_one_seed() -> None:
    # Edge case #10: gemm's mask equalled this kernel's for the same seed and shape.
    M, N = 64, 128
    a, b = torch.eye(M), torch.ones(M, N) + 4.0
    from_gemm = gemm.gemm(a, b, None, "none", p=0.5, seed=7) != 0
    from_here = bgdr(torch.ones(M, N) + 4.0, torch.zeros(N), torch.zeros(M, N), p=0.5, seed=7) != 0
    agree = float((from_gemm == from_here).float().mean())
    assert 0.4 < agree < 0.6, agree  # independent masks agree on about half the elements at p=0.5


@pytest.mark.parametrize("s1,s2", [(0, 2**31 - 1), (-1, 2**31 - 2), (5, 5 + 3 * (2**31 - 1)), (0, 2**62), (7, 7 - 2**63)])
def test_distinct_seeds_draw_distinct_masks(s1: int, s2: int) -> None:
    # Fuzz round 4: the stream key was (seed·c + stream·d + 1) mod (2^31 - 1), so seed and seed + k·(2^31 - 1) (0 and
    # INT32_MAX) drew one mask. The key is now a 64-bit bijective mix.
    x, b, r = torch.randn(32, 128), torch.randn(128), torch.zeros(32, 128)
    m1 = bgdr(x, b, r, p=0.5, seed=s1) != 0
    m2 = bgdr(x, b, r, p=0.5, seed=s2) != 0
    assert 0.35 < float((m1 == m2).float().mean()) < 0.65


def test_mask_depends_on_the_logical_element_not_the_layout() -> None:
    x = torch.randn(40, 96) + 5.0
    xt = x.t().contiguous().t()  # the same values, column-major
    res = torch.randn(96, 40).t()
    bias = torch.randn(192)[::2]
    one = bgdr(x, bias, res.contiguous(), p=0.3, seed=11)
    other = bgdr(xt, bias, res, p=0.3, seed=11)
    assert torch.equal(one, other)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_16_bit_activations_with_an_fp32_bias(dtype: torch.dtype) -> None:
    x, res, bias = torch.randn(3, 7, 130).to(dtype), torch.randn(3, 7, 130).to(dtype), torch.randn(130)
    assert_matches(bgdr(x, bias, res), _ref(x, bias, res), dtype)


def test_in_place_on_the_residual_works_and_overlapping_bias_is_refused() -> None:
    x, res, bias = torch.randn(5, 64), torch.randn(5, 64), torch.randn(64)
    ref = _ref(x, bias, res)
    assert_matches(bgdr(x, bias, res, out=res), ref, torch.float32)
    buf = torch.randn(5, 64)
    with pytest.raises(ValueError, match="out overlaps bias"):
        bgdr(torch.randn(5, 64), buf[0], torch.randn(5, 64), out=buf)
    with pytest.raises(ValueError, match="no backward"):
        bgdr(torch.randn(5, 64, requires_grad=True), bias, res)


# === backward (issue #17): gradients of every input against fp64 torch autograd, in the interpreter ==================

import torch.nn.functional as F  # noqa: E402

from tests.kernels.grads import assert_grads, dy_like, leaf  # noqa: E402

K = bias_gelu_dropout_residual
# (shape, x dtype, bias dtype, p): odd widths, mixed precision, with and without dropout.
BWD = [((2, 5, 33), torch.float32, torch.float32, 0.0), ((3, 70), torch.float32, torch.float32, 0.3),
       ((2, 3, 45), torch.bfloat16, torch.float32, 0.2), ((5, 101), torch.float16, torch.float16, 0.1),
       ((4, 64), torch.bfloat16, torch.bfloat16, 0.3), ((3, 2, 17001), torch.float16, torch.float32, 0.1)]


def _kept(shape: tuple[int, ...], p: float, seed: int) -> torch.Tensor:
    """The forward's dropout multiplier (0 or 1/(1-p)) per element, read off a forward of x = 1, bias 0, residual 0."""
    if p == 0:
        return torch.ones(shape, dtype=torch.float64)
    one = torch.ones(shape)
    return K.bias_gelu_dropout_residual(one, torch.zeros(shape[-1]), torch.zeros(shape), p, seed).double() / F.gelu(
        one.double(), approximate="tanh")


@pytest.mark.parametrize("flat", [True, False])  # the backward's flat form (where the forward's is) and its row tiles
@pytest.mark.parametrize("shape,dt,bdt,p", BWD, ids=[f"{s}-{d}-{b}-p{p}" for s, d, b, p in BWD])
def test_backward_matches_fp64_autograd(monkeypatch: pytest.MonkeyPatch, shape: tuple[int, ...], dt: torch.dtype,
                                        bdt: torch.dtype, p: float, flat: bool) -> None:
    from rocm_triton_doctor.kernels import policy

    gen = torch.Generator().manual_seed(3)
    x, r = leaf(torch.randn(shape, generator=gen), dt), leaf(torch.randn(shape, generator=gen), dt)
    b = leaf(torch.randn(shape[-1], generator=gen), bdt)
    dy = dy_like(x, gen)
    keep = _kept(shape, p, 11)  # the forward's mask, by the policy's form
    monkeypatch.setattr(policy, "BIAS_FLAT", flat)
    dx, db = K.bias_gelu_dropout_residual_backward(dy, x.detach(), b.detach(), p, 11)
    assert_grads(lambda xd, bd, rd: rd + keep * F.gelu(xd + bd, approximate="tanh"), (x, b, r), dy, (dx, db, dy))


def test_autograd_function_and_custom_op_give_the_gradients() -> None:
    gen = torch.Generator().manual_seed(4)
    keep = _kept((4, 50), 0.25, 5)
    assert 0 < int((keep == 0).sum()) < 200  # some dropped, most kept

    def ref(xd: torch.Tensor, bd: torch.Tensor, rd: torch.Tensor) -> torch.Tensor:
        return rd + keep * F.gelu(xd + bd, approximate="tanh")

    for fn in (K.BiasGeluDropoutResidualFunction.apply, K.autograd_op, K.custom_op_form):
        x, r = leaf(torch.randn(4, 50, generator=gen), torch.float32), leaf(torch.randn(4, 50, generator=gen), torch.float32)
        b = leaf(torch.randn(50, generator=gen), torch.float32)
        dy = dy_like(x, gen)
        fn(x, b, r, 0.25, 5).backward(dy)
        assert_grads(ref, (x, b, r), dy, (x.grad, b.grad, r.grad))


def test_custom_op_opcheck() -> None:
    gen = torch.Generator().manual_seed(5)
    x, r = torch.randn(4, 24, generator=gen, requires_grad=True), torch.randn(4, 24, generator=gen, requires_grad=True)
    b = torch.randn(24, generator=gen, requires_grad=True)
    torch.library.opcheck(K._bgdr_op, (x, b, r, 0.2, 9))
    torch.library.opcheck(K._bgdr_backward_op, (torch.randn(4, 24), x.detach(), b.detach(), 0.2, 9))


def test_backward_needs_the_forwards_seed_with_dropout() -> None:
    # A fresh seed draws another mask: dx was off by ~6 (fuzz round 2026-11-23). Zero-width input: nothing to do.
    x, bias = torch.randn(4, 32), torch.randn(32)
    with pytest.raises(ValueError, match="seed is required"):
        bias_gelu_dropout_residual.bias_gelu_dropout_residual_backward(torch.ones_like(x), x, bias, 0.5, None)
    dx, db = bias_gelu_dropout_residual.bias_gelu_dropout_residual_backward(torch.ones(3, 0), torch.ones(3, 0),
                                                                            torch.ones(0), 0.0, None)
    assert dx.shape == (3, 0) and db.shape == (0,)


def test_narrow_rows_take_a_block_as_wide_as_the_row() -> None:
    # A 512-wide block over 161 columns left 69 % of the lanes masked; the tile keeps 4096 elements either way.
    from rocm_triton_doctor.kernels import policy

    for t in ("sm_90", "gfx942", "gfx1100"):
        tg = policy.target_from_name(t)
        assert {k: policy.tile2d_config(tg, 10**5, 161)[k] for k in ("BLOCK_M", "BLOCK_N")} == {"BLOCK_M": 16, "BLOCK_N": 256}
        assert {k: policy.tile2d_config(tg, 10**5, 8192)[k] for k in ("BLOCK_M", "BLOCK_N")} == {"BLOCK_M": 8, "BLOCK_N": 512}
    x, b, r = torch.randn(300, 3), torch.randn(3), torch.randn(300, 3)  # the interpreter's narrow blocks, checked
    ref = r.double() + bias_gelu_dropout_residual.reference_undropped(x, b)
    torch.testing.assert_close(bgdr(x, b, r).double(), ref, rtol=1e-4, atol=1e-4)
