"""Attention forward in the interpreter: the smoke cases, the TMA kernel, input validation."""

from __future__ import annotations

import pytest
import torch

from rocm_triton_doctor.kernels import attention
from rocm_triton_doctor.kernels.base import Case
from tests.kernels.helpers import check_in_interpreter, interpreter_cases

CASES = interpreter_cases(attention.KERNEL)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_in_interpreter(case: Case) -> None:
    check_in_interpreter(case)


@pytest.mark.parametrize("causal", [False, True])
def test_tma_attention_matches_the_pointer_kernel(causal: bool) -> None:
    # The Hopper attention kernel in the interpreter: S = 100 is no multiple of the 64-row tiles, so the descriptors'
    # zero fill (reads) and clipping (the output store) are exercised.
    g = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(1, 2, 100, 64, generator=g).to(torch.float16) for _ in range(3))
    tma = attention.attention(q, k, v, causal, kernel="tma")
    ptr = attention.attention(q, k, v, causal, kernel="pointer")
    torch.testing.assert_close(tma, ptr, rtol=2e-3, atol=2e-3)
    torch.testing.assert_close(tma.double(), attention.reference(q, k, v, causal), rtol=1e-2, atol=1e-2)
    with pytest.raises(ValueError, match="TMA"):
        attention.attention(q.float(), k.float(), v.float(), causal, kernel="tma")


def test_launcher_validates_inputs() -> None:
    with pytest.raises(ValueError, match="head dim"):
        attention.attention(*(torch.ones(1, 1, 8, 48),) * 3)
