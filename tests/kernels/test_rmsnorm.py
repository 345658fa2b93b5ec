"""RMSNorm in the interpreter: the smoke cases and input validation."""

from __future__ import annotations

import pytest
import torch

from rocm_triton_doctor.kernels import rmsnorm
from rocm_triton_doctor.kernels.base import Case
from tests.kernels.helpers import check_in_interpreter, interpreter_cases

CASES = interpreter_cases(rmsnorm.KERNEL)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_in_interpreter(case: Case) -> None:
    check_in_interpreter(case)


def test_launcher_validates_inputs() -> None:
    # A transposed input was refused ("the last dimension must be contiguous"); it is now read through its strides.
    x = torch.arange(64.0).reshape(8, 8).t()
    torch.testing.assert_close(rmsnorm.rmsnorm(x, torch.ones(8)), rmsnorm.reference(x, torch.ones(8)).float())
