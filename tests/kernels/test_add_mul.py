"""Fused add-multiply in the interpreter: the smoke cases and input validation."""

from __future__ import annotations

import pytest
import torch

from rocm_triton_doctor.kernels import add_mul
from rocm_triton_doctor.kernels.base import Case
from tests.kernels.helpers import check_in_interpreter, interpreter_cases

CASES = interpreter_cases(add_mul.KERNEL)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_in_interpreter(case: Case) -> None:
    check_in_interpreter(case)


def test_launcher_validates_inputs() -> None:
    with pytest.raises(TypeError, match="not supported"):
        add_mul.add_mul(*(torch.ones(4, dtype=torch.int32),) * 3)
    # A transposed input was refused ("inputs must be contiguous"); it is now read through its strides.
    x = torch.arange(16.0).reshape(4, 4).t()
    torch.testing.assert_close(add_mul.add_mul(x, torch.ones(4, 4), torch.ones(4, 4)), x + 1)
    with pytest.raises(ValueError, match="power of two"):
        add_mul.add_mul(torch.ones(8), torch.ones(8), torch.ones(8), block=100)


def test_unwritten_output_is_caught() -> None:
    """A launcher that leaves part of the poisoned output untouched must fail the check (NaN never passes)."""
    from rocm_triton_doctor.smoke import correctness
    from tests.kernels.helpers import CPU

    case = add_mul.make_case(100, torch.float32)

    def half_written(x: dict, out: torch.Tensor | None) -> torch.Tensor:
        o = out if out is not None else torch.empty(100)
        add_mul.add_mul(x["x"][:50], x["y"][:50], x["z"][:50], out=o[:50])
        return o

    lazy = case.__class__(**{**case.__dict__, "run": half_written})
    v = correctness.check_case(lazy, lazy.setup(CPU, torch.Generator().manual_seed(0)), CPU, tf32=False)
    assert not v.ok and any("NaN/unwritten" in p for p in v.problems)


# --- every input computed right or refused (issue #16; kernel-edge-cases.md) ---------------------------------------

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.kernels.helpers import assert_matches, same_shape_inputs  # noqa: E402

# Shrinking re-runs interpreter launches for minutes: report the failing example as drawn (CI time bound).
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)


def _ref(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    return (x.double() + y.double()) * z.double()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], phases=NO_SHRINK)
@given(st.data())
def test_property_any_shape_layout_dtype_and_value(data: st.DataObject) -> None:
    (x, y, z), dtype = same_shape_inputs(data.draw, 3)
    assert_matches(add_mul.add_mul(x, y, z), _ref(x, y, z), dtype)


def test_partial_overlap_of_out_and_an_input_is_refused_and_in_place_works() -> None:
    # Edge case #13: out=buf[1:], x=buf[:-1] gave wrong values at block boundaries.
    buf = torch.randn(5001)
    y, z = torch.randn(5000), torch.randn(5000)
    with pytest.raises(ValueError, match="out overlaps x"):
        add_mul.add_mul(buf[:-1], y, z, out=buf[1:], block=1024)
    x = torch.randn(5000)
    ref = _ref(x, y, z)
    assert_matches(add_mul.add_mul(x, y, z, out=x), ref, torch.float32)


@pytest.mark.parametrize("block,exc", [(0, ValueError), (2**21, ValueError), (-4, ValueError), (3.0, TypeError)])
def test_bad_block_sizes_are_refused_clearly(block: object, exc: type) -> None:
    # Edge case #16: block=0 crashed with ZeroDivisionError, 2**21 with an interpreter error.
    with pytest.raises(exc, match="block"):
        add_mul.add_mul(torch.ones(8), torch.ones(8), torch.ones(8), block=block)  # type: ignore[arg-type]


def test_non_tensors_meta_and_grad_are_refused_clearly() -> None:
    import numpy as np

    with pytest.raises(TypeError, match="torch.Tensor"):  # edge case #20
        add_mul.add_mul(np.ones(4), torch.ones(4), torch.ones(4))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="meta"):  # edge case #18
        add_mul.add_mul(*(torch.ones(4, device="meta"),) * 3)
    with pytest.raises(ValueError, match="no backward"):  # edge case #9
        add_mul.add_mul(torch.ones(4, requires_grad=True), torch.ones(4), torch.ones(4))
    with torch.no_grad():
        assert_matches(add_mul.add_mul(torch.ones(4, requires_grad=True), torch.ones(4), torch.ones(4)),
                       torch.full((4,), 2.0, dtype=torch.float64), torch.float32)


def test_expanded_and_transposed_inputs() -> None:
    x = torch.randn(1, 300).expand(7, 300)
    y = torch.randn(300, 7).t()
    z = torch.randn(7, 600)[:, ::2]
    assert_matches(add_mul.add_mul(x, y, z), _ref(x, y, z), torch.float32)


def test_four_dim_layouts_fold_three_leading_dims_and_refuse_four() -> None:
    x = torch.randn(2, 3, 5, 8).transpose(1, 2)  # (B, S, H, D) from (B, H, S, D): three leading dims apart
    y, z = torch.randn(2, 5, 3, 8), torch.randn(2, 5, 3, 8).permute(1, 0, 2, 3).contiguous().permute(1, 0, 2, 3)
    torch.testing.assert_close(add_mul.add_mul(x, y, z), (x + y) * z)
    five = torch.randn(2, 3, 4, 5, 6).permute(3, 1, 0, 2, 4)
    with pytest.raises(ValueError, match="do not fold into four dimensions; call .contiguous"):
        add_mul.add_mul(five, five, five)


def test_shapes_broadcast_as_torch_does() -> None:
    # (x + y) * z with a per-channel scale and a row vector: stride-0 views read in place, the output the broadcast
    # shape; shapes that do not broadcast are a clear error.
    g = torch.Generator().manual_seed(3)
    x, y, z = torch.randn(2, 5, 8, generator=g), torch.randn(8, generator=g), torch.randn(2, 1, 8, generator=g)
    got = add_mul.add_mul(x, y, z)
    assert got.shape == (2, 5, 8)
    torch.testing.assert_close(got, (x + y) * z)
    torch.testing.assert_close(add_mul.add_mul(y, x, torch.tensor(2.0)), (y + x) * 2.0)
    out = torch.empty(2, 5, 8)
    assert add_mul.add_mul(x, y, z, out=out) is out
    torch.testing.assert_close(out, (x + y) * z)
    with pytest.raises(ValueError, match=r"shapes \(2, 5, 8\), \(7,\), \(2, 1, 8\) do not broadcast"):
        add_mul.add_mul(x, torch.randn(7), z)
