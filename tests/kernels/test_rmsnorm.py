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
    with pytest.raises(ValueError, match="last dimension must be contiguous"):
        rmsnorm.rmsnorm(torch.ones(8, 8).t(), torch.ones(8))
