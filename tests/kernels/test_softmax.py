"""Row softmax in the interpreter: the smoke cases and input validation."""

from __future__ import annotations

import pytest
import torch

from rocm_triton_doctor.kernels import softmax
from rocm_triton_doctor.kernels.base import Case
from tests.kernels.helpers import check_in_interpreter, interpreter_cases

CASES = interpreter_cases(softmax.KERNEL)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_in_interpreter(case: Case) -> None:
    check_in_interpreter(case)


def test_cpu_tensors_need_the_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    with pytest.raises(ValueError, match="TRITON_INTERPRET"):
        softmax.softmax(torch.ones(2, 8))


# --- every input computed right or refused (issue #16; kernel-edge-cases.md) ---------------------------------------

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.kernels.helpers import assert_matches, row_inputs  # noqa: E402


# Shrinking re-runs interpreter launches for minutes: report the failing example as drawn (CI time bound).
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)


@st.composite
def _inputs(draw: st.DrawFn) -> tuple[torch.Tensor, dict | None]:
    r = row_inputs(draw)
    return r["x"], r["config"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], phases=NO_SHRINK)
@given(_inputs())
def test_property_any_shape_layout_dtype_and_value(args: tuple[torch.Tensor, dict | None]) -> None:
    x, config = args
    assert_matches(softmax.softmax(x, config=config), torch.softmax(x.double(), dim=-1), x.dtype)


@pytest.mark.parametrize("N,dtype", [(152064, torch.float32), (152064, torch.bfloat16), (262144, torch.float16),
                                     (131072, torch.float32)])
def test_vocabulary_wide_rows_run_looped(N: int, dtype: torch.dtype) -> None:
    # Refused before: 1x152064 (Qwen vocabulary) in every dtype, 262144 in every dtype, fp32 131072.
    x = (torch.randn(1, N) * 4).to(dtype)
    assert_matches(softmax.softmax(x), torch.softmax(x.double(), dim=-1), dtype)


def test_looped_rows_whose_first_chunks_are_all_minus_inf() -> None:
    # The online max starts at -inf: a chunk of only -inf must add 0, not NaN (an all -inf row is NaN, as in torch).
    x = torch.full((3, 40), float("-inf"))
    x[0, 35], x[1, 0] = 1.0, 2.0
    out = softmax.softmax(x, config={"BLOCK": 8, "ROWS": 2, "num_warps": 4})
    assert_matches(out, torch.softmax(x.double(), dim=-1), torch.float32)


def test_transposed_and_sliced_inputs_are_read_through_strides() -> None:
    base = torch.randn(40, 30)
    for x in (base.t(), base[:, 3:20], base[::3], base.t()[:, ::2]):
        assert_matches(softmax.softmax(x), torch.softmax(x.double(), dim=-1), torch.float32)


def test_three_leading_dimensions_are_read_by_strides_and_four_refused_clearly() -> None:
    x = torch.randn(3, 4, 5, 6).permute(1, 0, 2, 3)[:, :, ::2]  # three leading dims, no two merge: read in place
    torch.testing.assert_close(softmax.softmax(x), torch.softmax(x, dim=-1))
    q = torch.randn(2, 3, 5, 8).transpose(1, 2)  # (B, H, S, D) as (B, S, H, D): what attention code hands on
    torch.testing.assert_close(softmax.softmax(q), torch.softmax(q, dim=-1))
    for cfg in ({"BLOCK": 4, "ROWS": 2, "num_warps": 4}, {"BLOCK": 2, "ROWS": 1, "num_warps": 4, "SPLIT": 2}):
        torch.testing.assert_close(softmax.softmax(q, config=cfg), torch.softmax(q, dim=-1))  # looped; split rows
    five = torch.randn(2, 3, 4, 5, 6).permute(3, 1, 0, 2, 4)  # four leading dims apart
    with pytest.raises(ValueError, match="do not fold into three; call .contiguous"):
        softmax.softmax(five)


# === backward (issue #17): the input gradient against fp64 torch autograd, in the interpreter ========================

from tests.kernels.grads import assert_grads, dy_like, leaf  # noqa: E402

BWD = [((7, 33), torch.float32, None), ((2, 3, 45), torch.bfloat16, None), ((5, 101), torch.float16, None),
       ((3, 200), torch.float32, {"BLOCK": 64, "ROWS": 1, "num_warps": 4}),
       ((4, 130), torch.bfloat16, {"BLOCK": 32, "ROWS": 1, "num_warps": 4})]


@pytest.mark.parametrize("shape,dt,cfg", BWD, ids=[f"{s}-{d}-{'looped' if c else 'block'}" for s, d, c in BWD])
def test_backward_matches_fp64_autograd(shape: tuple[int, ...], dt: torch.dtype, cfg: dict | None) -> None:
    gen = torch.Generator().manual_seed(3)
    x = leaf(2 * torch.randn(shape, generator=gen), dt)
    dy = dy_like(x, gen)
    # y from fp64 rounded to dt: the backward's input as the forward would have stored it
    y = torch.softmax(x.detach().double(), -1).to(dt)
    assert_grads(lambda xd: torch.softmax(xd, -1), (x,), dy, (softmax.softmax_backward(dy, y, config=cfg),))


def test_autograd_function_and_custom_op_give_the_gradient() -> None:
    gen = torch.Generator().manual_seed(4)
    for fn in (softmax.SoftmaxFunction.apply, softmax.autograd_op, softmax.custom_op_form):
        x = leaf(torch.randn(6, 40, generator=gen), torch.float32)
        dy = dy_like(x, gen)
        fn(x).backward(dy)
        assert_grads(lambda xd: torch.softmax(xd, -1), (x,), dy, (x.grad,))


def test_custom_op_opcheck() -> None:
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(4, 24, generator=gen, requires_grad=True)
    torch.library.opcheck(softmax._softmax_op, (x,))
    torch.library.opcheck(softmax._softmax_backward_op, (torch.randn(4, 24), torch.softmax(x.detach(), -1)))


def test_softmax_over_another_dim() -> None:
    # torch.softmax(x, dim) for any dim: read as the last dim of a transposed view (no copy), the result in x's shape;
    # gradients through the autograd forms; out= only with dim=-1; a bad dim is a clear error.
    g = torch.Generator().manual_seed(4)
    x = torch.randn(3, 7, 5, 4, generator=g)
    for dim in (0, 1, -2, 3, -1):
        torch.testing.assert_close(softmax.softmax(x, dim=dim), torch.softmax(x, dim=dim))
    for form in (softmax.softmax_autograd, softmax.softmax_custom_op):
        xa = x.clone().requires_grad_()
        y = form(xa, 1)
        torch.testing.assert_close(y, torch.softmax(x, 1))
        (y * torch.arange(y.numel()).reshape(y.shape)).sum().backward()
        xr = x.double().requires_grad_()
        (torch.softmax(xr, 1) * torch.arange(y.numel()).reshape(y.shape)).sum().backward()
        torch.testing.assert_close(xa.grad.double(), xr.grad, atol=1e-4, rtol=1e-4)
    with pytest.raises(ValueError, match="out= needs the softmax over the last dimension"):
        softmax.softmax(x, out=torch.empty_like(x), dim=1)
    with pytest.raises(ValueError, match="dim 4 out of range for a 4-dim input"):
        softmax.softmax(x, dim=4)
    with pytest.raises(TypeError, match="dim must be an int"):
        softmax.softmax(x, dim=1.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="expected torch.Tensor inputs"):  # not an AttributeError on .dim()
        softmax.softmax_autograd([1.0, 2.0], 0)  # type: ignore[arg-type]
