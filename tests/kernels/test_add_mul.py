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
