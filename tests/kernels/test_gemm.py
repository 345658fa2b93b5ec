"""GEMM with fused epilogues in the interpreter: the smoke cases, dropout, the TMA kernel, input validation."""

from __future__ import annotations

import pytest
import torch

from rocm_triton_doctor.kernels import gemm
from rocm_triton_doctor.kernels.base import Case
from tests.kernels.helpers import check_in_interpreter, interpreter_cases

CASES = interpreter_cases(gemm.KERNEL)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_in_interpreter(case: Case) -> None:
    check_in_interpreter(case)


def _gemm_inputs(M: int = 70, K: int = 50, N: int = 90) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return (torch.randn(M, K, generator=g), torch.randn(K, N, generator=g) / 8, torch.randn(N, generator=g))


def test_dropout_same_seed_same_mask_and_tile_independent() -> None:
    a, b, bias = _gemm_inputs()
    one = gemm.gemm(a, b, bias, "bias_relu", p=0.3, seed=5)
    assert torch.equal(one, gemm.gemm(a, b, bias, "bias_relu", p=0.3, seed=5))
    # Other tiles sum K in another order (values differ in the last bits) but the MASK must be identical.
    small = {"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 16, "GROUP_M": 2, "num_warps": 4}
    tiled = gemm.gemm(a, b, bias, "bias_relu", p=0.3, seed=5, config=small)
    assert torch.equal(one != 0, tiled != 0)
    torch.testing.assert_close(one, tiled, rtol=1e-5, atol=1e-5)
    other = gemm.gemm(a, b, bias, "bias_relu", p=0.3, seed=6)
    assert not torch.equal(one != 0, other != 0)


@pytest.mark.parametrize("epilogue,p", [("none", 0.0), ("bias_gelu", 0.0), ("bias_relu", 0.3)])
def test_tma_gemm_matches_the_pointer_kernel(epilogue: str, p: float) -> None:
    # The Hopper kernel (tensor descriptors, persistent grid) in the interpreter: edge tiles rely on the descriptors'
    # zero fill (67 rows, 72 columns, K 40 are no multiples of the 32-wide tiles) and the dropout mask is the same.
    g = torch.Generator().manual_seed(1)
    a = torch.randn(67, 40, generator=g, dtype=torch.float16)
    b = (torch.randn(40, 72, generator=g) / 6).to(torch.float16)
    bias = torch.randn(72, generator=g, dtype=torch.float16)
    cfg = {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 2, "num_warps": 4}
    tma = gemm.gemm(a, b, bias, epilogue, p=p, seed=9, config=cfg, kernel="tma")
    ptr = gemm.gemm(a, b, bias, epilogue, p=p, seed=9, config=cfg, kernel="pointer")
    assert torch.equal(tma != 0, ptr != 0)
    torch.testing.assert_close(tma, ptr, rtol=1e-3, atol=1e-3)
    ref = gemm.reference(a, b, bias, epilogue).to(torch.float16)
    if p == 0.0:
        torch.testing.assert_close(tma, ref, rtol=1e-2, atol=1e-2)


def test_gemm_refuses_operands_past_32_bit_offsets() -> None:
    # Stride-0 views: 2^31 logical elements without the memory.
    a = torch.zeros(1, 1, dtype=torch.float16).expand(2**16, 2**15)
    b = torch.zeros(1, 1, dtype=torch.float16).expand(2**15, 8)
    with pytest.raises(ValueError, match="2\\^31"):
        gemm.gemm(a, b)


def test_tma_gemm_refuses_layouts_a_descriptor_cannot_describe() -> None:
    a = torch.randn(16, 45, dtype=torch.float16)  # 90-byte rows: not a multiple of 16 bytes
    with pytest.raises(ValueError, match="TMA"):
        gemm.gemm(a, torch.randn(45, 32, dtype=torch.float16), kernel="tma")
    with pytest.raises(ValueError, match="TMA"):
        gemm.gemm(torch.randn(16, 32), torch.randn(32, 32), kernel="tma")  # fp32
    with pytest.raises(ValueError, match="kernel must be"):
        gemm.gemm(torch.randn(16, 32), torch.randn(32, 32), kernel="cutlass")


def test_dropout_p0_is_the_identity_and_kept_values_are_scaled() -> None:
    a, b, bias = _gemm_inputs()
    plain = gemm.gemm(a, b, bias, "bias")
    assert torch.equal(plain, gemm.gemm(a, b, bias, "bias", p=0.0, seed=3))
    dropped = gemm.gemm(a, b, bias, "bias", p=0.25, seed=3)
    kept = dropped != 0
    torch.testing.assert_close(dropped[kept], plain[kept] / 0.75, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("p", [-0.1, 1.0, 1.5, float("nan")])
def test_invalid_dropout_probability_is_refused(p: float) -> None:
    a, b, bias = _gemm_inputs()
    with pytest.raises(ValueError, match="dropout probability"):
        gemm.gemm(a, b, bias, "bias", p=p)


def test_launchers_validate_inputs() -> None:
    a, b, bias = _gemm_inputs()
    with pytest.raises(ValueError, match="inner dimensions"):
        gemm.gemm(a, a, bias)
    with pytest.raises(ValueError, match="needs a bias"):
        gemm.gemm(a, b, None, "bias_relu")
    with pytest.raises(TypeError, match="mixed dtypes"):
        gemm.gemm(a, b.half())
