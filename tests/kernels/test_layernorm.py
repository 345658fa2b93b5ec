"""LayerNorm in the interpreter: the smoke cases and input validation."""

from __future__ import annotations

import pytest
import torch

from rocm_triton_doctor.kernels import layernorm
from rocm_triton_doctor.kernels.base import Case
from tests.kernels.helpers import check_in_interpreter, interpreter_cases

CASES = interpreter_cases(layernorm.KERNEL)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_in_interpreter(case: Case) -> None:
    check_in_interpreter(case)


def test_launcher_validates_inputs() -> None:
    with pytest.raises(ValueError, match="must have shape"):
        layernorm.layernorm(torch.ones(3, 8), torch.ones(7), torch.ones(8))
