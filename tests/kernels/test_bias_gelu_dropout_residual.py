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
