"""SwiGLU gate in the interpreter: the smoke cases and input validation."""

from __future__ import annotations

import pytest
import torch

from rocm_triton_doctor.kernels import swiglu
from rocm_triton_doctor.kernels.base import Case
from tests.kernels.helpers import check_in_interpreter, interpreter_cases

CASES = interpreter_cases(swiglu.KERNEL)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_in_interpreter(case: Case) -> None:
    check_in_interpreter(case)


def test_launcher_validates_inputs() -> None:
    with pytest.raises(ValueError, match="shapes differ"):
        swiglu.swiglu(torch.ones(3), torch.ones(4))


# --- every input computed right or refused (issue #16; kernel-edge-cases.md) ---------------------------------------

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.kernels.helpers import assert_matches, same_shape_inputs  # noqa: E402

# Shrinking re-runs interpreter launches for minutes: report the failing example as drawn (CI time bound).
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)


def _ref(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.silu(a.double()) * b.double()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], phases=NO_SHRINK)
@given(st.data())
def test_property_any_shape_layout_dtype_and_value(data: st.DataObject) -> None:
    (a, b), dtype = same_shape_inputs(data.draw, 2)
    assert_matches(swiglu.swiglu(a, b), _ref(a, b), dtype)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_chunked_halves_are_taken_through_strides(dtype: torch.dtype) -> None:
    # h.chunk(2, -1) of (B, S, 2F): refused before ("inputs must be contiguous"); now read in place.
    h = torch.randn(2, 5, 2 * 301).to(dtype)
    a, b = h.chunk(2, -1)
    assert_matches(swiglu.swiglu(a, b), _ref(a, b), dtype)


def test_out_aliasing_is_refused_unless_exactly_in_place() -> None:
    a, b = torch.randn(100), torch.randn(100)
    ref = _ref(a, b)
    assert_matches(swiglu.swiglu(a, b, out=b), ref, torch.float32)
    buf = torch.randn(101)
    with pytest.raises(ValueError, match="out overlaps a"):
        swiglu.swiglu(buf[1:], torch.randn(100), out=buf[:-1])


# === backward (issue #17): gradients of every input against fp64 torch autograd, in the interpreter ==================

import torch.nn.functional as F  # noqa: E402

from tests.kernels.grads import assert_grads, dy_like, leaf  # noqa: E402

BWD = [((7, 33), torch.float32), ((2, 3, 45), torch.bfloat16), ((5, 101), torch.float16)]


@pytest.mark.parametrize("shape,dt", BWD, ids=[f"{s}-{d}" for s, d in BWD])
def test_backward_matches_fp64_autograd(shape: tuple[int, ...], dt: torch.dtype) -> None:
    gen = torch.Generator().manual_seed(3)
    a, b = leaf(2 * torch.randn(shape, generator=gen), dt), leaf(torch.randn(shape, generator=gen), dt)
    dy = dy_like(a, gen)
    da, db = swiglu.swiglu_backward(dy, a.detach(), b.detach())
    assert_grads(lambda ad, bd: F.silu(ad) * bd, (a, b), dy, (da, db))


def test_backward_of_chunked_halves_through_the_custom_op_and_function() -> None:
    gen = torch.Generator().manual_seed(4)
    for fn in (swiglu.SwiGLUFunction.apply, swiglu.autograd_op, swiglu.custom_op_form):
        h = leaf(torch.randn(6, 2 * 37, generator=gen), torch.float32)
        a, b = h.chunk(2, dim=-1)  # strided halves, as the model hands them
        dy = torch.randn(6, 37, generator=gen)
        fn(a, b).backward(dy)
        assert_grads(lambda hd: F.silu(hd[:, :37]) * hd[:, 37:], (h,), dy, (h.grad,))


def test_custom_op_opcheck() -> None:
    gen = torch.Generator().manual_seed(5)
    a, b = torch.randn(4, 24, generator=gen, requires_grad=True), torch.randn(4, 24, generator=gen, requires_grad=True)
    torch.library.opcheck(swiglu._swiglu_op, (a, b))
    torch.library.opcheck(swiglu._swiglu_backward_op, (torch.randn(4, 24), a.detach(), b.detach()))


@pytest.mark.parametrize("shape,dt", BWD, ids=[f"{s}-{d}" for s, d in BWD])
def test_backward_with_output_writes_the_forward_and_the_same_gradients(shape: tuple[int, ...], dt: torch.dtype
                                                                       ) -> None:
    gen = torch.Generator().manual_seed(6)
    a, b = (2 * torch.randn(shape, generator=gen)).to(dt), torch.randn(shape, generator=gen).to(dt)
    dy = torch.randn(shape, generator=gen).to(dt)
    da0, db0 = swiglu.swiglu_backward(dy, a, b)
    for into in (False, True):
        dyc = dy.clone()
        da, db, h = swiglu.swiglu_backward_with_output(dyc, a, b, da_into_dy=into)
        assert torch.equal(da, da0) and torch.equal(db, db0)
        assert torch.equal(h, swiglu.swiglu(a, b))
        assert (da.data_ptr() == dyc.data_ptr()) == into  # written over dy only when asked


def test_backward_with_output_refuses_da_into_a_dy_it_cannot_reuse() -> None:
    a = b = torch.randn(4, 8)
    with pytest.raises(ValueError, match="da_into_dy"):
        swiglu.swiglu_backward_with_output(torch.randn(8, 4).t(), a, b, da_into_dy=True)
    with pytest.raises(ValueError, match="da_into_dy"):
        swiglu.swiglu_backward_with_output(torch.randn(4, 8, dtype=torch.float64), a, b, da_into_dy=True)
