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
