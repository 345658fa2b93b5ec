"""The GEMV against a K-major weight read by residue class of columns in whole vectors (gemv_kshift.py, gemm's
SHIFT for a K-major B) in Triton's interpreter: hypothesis properties over rows, K (windows before, inside and past
it), widths, row strides, base offsets, dtypes, epilogues, K splits and special values against an fp64 reference,
with the memory around the weight poisoned with NaN (a window's masked reads must not reach it); the refusals; the
policy's rule per target and the auto path's use of it."""

from __future__ import annotations

import os

os.environ["TRITON_INTERPRET"] = "1"  # before any @triton.jit function is created

import pytest
import torch
from hypothesis import assume, HealthCheck, given, settings
from hypothesis import strategies as st

from rocm_triton_doctor.kernels import gemm, policy, policy_gemv
from tests.kernels.test_gemm import DTYPES, assert_matches

H200 = policy.Target("cuda", "sm_90", 32)


@pytest.fixture(autouse=True)
def _fresh_launch_plans() -> None:
    gemm.clear_plans()


def _weight_t(N: int, K: int, pad: int, offset: int, dtype: torch.dtype, g: torch.Generator) -> torch.Tensor:
    """B = W^T for an (N, K) weight W inside a NaN-filled buffer: row stride K + pad, starting `offset` elements in,
    so neither its columns nor its base need be 16-byte aligned and every element around it is NaN."""
    buf = torch.full((N * (K + pad) + offset + 16,), float("nan"), dtype=dtype)
    w = buf[offset:offset + N * (K + pad)].view(N, K + pad)[:, :K]
    w.copy_((torch.randn(N, K, generator=g) / max(K, 1) ** 0.5).to(dtype))
    return w.t()


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])  # CI time: 20 took ~50 s
@given(M=st.integers(1, 11), K=st.integers(2, 90), N=st.integers(1, 40), pad=st.integers(0, 9),
       offset=st.integers(0, 7), dtype=st.sampled_from(DTYPES), epilogue=st.sampled_from(list(gemm.EPILOGUES)),
       bm=st.sampled_from([1, 2, 4, 8]), bn=st.sampled_from([16, 32]), deep=st.booleans(), split=st.integers(1, 4),
       special=st.sampled_from([None, "nan", "inf"]), seed=st.integers(0, 2**31 - 1))
def test_kmajor_windows_match_fp64(M: int, K: int, N: int, pad: int, offset: int, dtype: torch.dtype, epilogue: str,
                                   bm: int, bn: int, deep: bool, split: int, special: str | None, seed: int) -> None:
    shift = 16 // dtype.itemsize
    # CI time: at most 12 programs and 48 of their K steps in all (the interpreter runs each step in Python: up to
    # 5.6 s an example before); the edges under test (residues, shifts, K tails, splits) are per program.
    programs = -(-M // bm) * -(-N // bn)
    assume(programs * split <= 12 and programs * -(-K // (shift * (2 if deep else 1))) <= 48)
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(M, K, generator=g).to(dtype)
    b = _weight_t(N, K, pad, offset, dtype, g)
    if special:  # one non-finite element of the weight: only its own column may turn non-finite
        b[seed % K, seed % N] = float(special)
    bias = torch.randn(N, generator=g).to(dtype) if epilogue != "none" else None
    cfg = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": shift * (2 if deep else 1), "SPLIT_K": split, "SHIFT": shift}
    y = gemm.gemm(a, b, bias, epilogue, kernel="gemv", config=cfg)
    assert_matches(y, gemm.reference(a, b, bias, epilogue).to(dtype), dtype)


def test_every_residue_and_k_edge() -> None:
    # Row strides of every residue mod 4 (fp32), K shorter than, equal to and one past a window, a window plus the
    # largest shift: each column's sum starts and ends where its own run does, whatever its distance past a vector.
    g = torch.Generator().manual_seed(3)
    for pad in range(4):
        for K in (2, 3, 8, 9, 11, 17):
            a = torch.randn(3, K, generator=g)
            b = _weight_t(21, K, pad, pad % 3, torch.float32, g)
            split = 1 + 2 * (pad % 2)  # unsplit and in 3 parts, each over two residues (CI time: both on all four)
            y = gemm.gemm(a, b, kernel="gemv",
                          config={"BLOCK_M": 4, "BLOCK_N": 16, "BLOCK_K": 8, "SPLIT_K": split, "SHIFT": 4})
            torch.testing.assert_close(y.double(), a.double() @ b.double(), atol=1e-5, rtol=1e-5)


def test_row_chunks_and_a_strided_activation() -> None:
    # 19 rows in chunks of 8, and A a transposed view (K-strided): the A loads follow its strides.
    g = torch.Generator().manual_seed(4)
    a = torch.randn(37, 19, generator=g).t()
    b = _weight_t(29, 37, 1, 1, torch.bfloat16, g)
    y = gemm.gemm(a.bfloat16(), b, kernel="gemv",
                  config={"BLOCK_M": 8, "BLOCK_N": 16, "BLOCK_K": 16, "SPLIT_K": 2, "SHIFT": 8})
    assert_matches(y, gemm.reference(a.bfloat16(), b, None, "none").bfloat16(), torch.bfloat16)


def test_dropout_runs_split_and_draws_the_tiles_mask() -> None:
    # Dropout goes through the workspace's reduce, so the mask is the one every other GEMV path draws.
    g = torch.Generator().manual_seed(5)
    a, b = torch.randn(3, 41, generator=g), _weight_t(37, 41, 0, 0, torch.float32, g)
    bias = torch.randn(37, generator=g)
    cfg = {"BLOCK_M": 4, "BLOCK_N": 16, "BLOCK_K": 8, "SPLIT_K": 2}
    y = gemm.gemm(a, b, bias, "bias_relu", p=0.4, seed=99, kernel="gemv", config={**cfg, "SHIFT": 4})
    z = gemm.gemm(a, b, bias, "bias_relu", p=0.4, seed=99, kernel="gemv", config={**cfg, "SHIFT": 1})
    assert torch.equal(y == 0, z == 0)
    torch.testing.assert_close(y, z, atol=1e-5, rtol=1e-5)


def test_kmajor_refusals_are_clear() -> None:
    a, b = torch.randn(2, 21), torch.randn(16, 21).t()
    cfg = {"BLOCK_M": 2, "BLOCK_N": 16, "BLOCK_K": 8}
    with pytest.raises(ValueError, match="SHIFT=8 must be 1 or 4"):
        gemm.gemm(a, b, kernel="gemv", config={**cfg, "SHIFT": 8})
    with pytest.raises(ValueError, match="BLOCK_K a multiple of it, got 2"):
        gemm.gemm(a, b, kernel="gemv", config={**cfg, "BLOCK_K": 2, "SHIFT": 4})
    with pytest.raises(ValueError, match="dropout needs SPLIT_K > 1"):
        gemm.gemm(a, b, p=0.5, kernel="gemv", config={**cfg, "SHIFT": 4})


def test_the_policy_reads_kmajor_weights_in_windows_where_measured() -> None:
    shift = policy_gemv.gemv_shift
    # 16 bits: 1-4 rows against an odd K of 64 or more (bn 32, bk 64, split 2 as gemv_config gives 4 rows)
    assert shift(H200, 4, 27698, 3813, 2, True, False, 32, 64, 2, 132) == (8, 2)
    assert shift(H200, 1, 4096, 4097, 2, True, False, 64, 128, 4, 132) == (8, 4)
    for M, K in ((5, 3813), (3, 5290), (2, 25)):  # more rows, an even K, a K with no unmasked window: as it is
        assert shift(H200, M, 4096, K, 2, True, False, 32, 64, 2, 132) == (1, 2)
    # fp32: up to 8 rows whatever K and alignment, more rows only with a short K
    assert shift(H200, 8, 11229, 2876, 4, True, True, 32, 32, 4, 132) == (4, 4)
    assert shift(H200, 50, 2248, 37, 4, True, False, 32, 32, 1, 132) == (4, 1)
    assert shift(H200, 12, 4096, 4097, 4, True, False, 32, 32, 8, 132) == (1, 8)
    # a narrow product (N under 128: each residue class's tile mostly empty): as it is
    assert shift(H200, 5, 86, 409, 4, True, False, 16, 128, 1, 132) == (1, 1)
    # AMD (not timed) and the interpreter: as it is
    for t in (policy.Target("hip", "gfx942", 64), policy.Target("interpreter", "", 32)):
        assert shift(t, 4, 27698, 3813, 2, True, False, 32, 64, 2, 132) == (1, 2)
    # the 16-bit rows the windows win are the GEMV's on NVIDIA: 4 rows against an odd K (the tiles as before at 5)
    assert policy.gemv_takes(H200, 4, 2, False, True, 3813, 27698)
    assert not policy.gemv_takes(H200, 4, 2, False, True, 3816 + 2, 27698)
    assert not policy.gemv_takes(H200, 5, 2, False, True, 3813, 27698)
    # under 128 columns against a long misaligned K: 4 rows on the GEMV reading the weight as it is (session 26)
    assert policy.gemv_takes(H200, 4, 2, False, True, 12143, 95)
    assert shift(H200, 4, 95, 12143, 2, True, False, 32, 64, 8, 132)[0] == 1
    assert not policy.gemv_takes(H200, 4, 2, False, True, 37, 95)  # K under 64: not measured, the tiles
    assert not policy.gemv_takes(policy.Target("hip", "gfx942", 64), 4, 2, False, True, 12143, 95)


def test_the_h200_plan_runs_the_window_kernel() -> None:
    # The interpreter's policy never picks the windows; the H200's plan for a 2-row fp32 product does, and that plan
    # run here (its tiles in the interpreter) computes the right product.
    from rocm_triton_doctor.kernels.gemv_kshift import gemv_kshift_kernel
    g = torch.Generator().manual_seed(6)
    a, b = torch.randn(2, 45, generator=g), _weight_t(130, 45, 0, 0, torch.float32, g)
    c = torch.empty(2, 130)
    plan = gemm._gemv_plan(a, b, c, None, "none", 0.0, None, H200, a.device)
    assert plan.parts[0].kern is gemv_kshift_kernel and plan.parts[0].kw["SHIFT"] == 4
    plan.run(a, b, c, None, 0, 0.0)
    torch.testing.assert_close(c.double(), a.double() @ b.double(), atol=1e-5, rtol=1e-5)


def test_a_column_stride_past_2_31_addresses_in_64_bits() -> None:
    # Column 1 starts 2^31 + 3 elements in (odd: every residue's window shifts): the windows' starts, the shift and
    # the masks are formed in 64 bits (INT64), as gemm_kernel's and gemv_kernel's are.
    base = torch.empty(2**31 + 256, dtype=torch.float16)  # 4 GiB of address space; only the touched pages are memory
    b = base.as_strided((40, 2), (1, 2**31 + 3))
    b.copy_((torch.randn(40, 2) / 8).half())
    a = torch.randn(3, 40).half()
    y = gemm.gemm(a, b, kernel="gemv", config={"BLOCK_M": 4, "BLOCK_N": 16, "BLOCK_K": 16, "SPLIT_K": 2, "SHIFT": 8})
    assert_matches(y, gemm.reference(a, b, None, "none").half(), torch.float16)


def test_a_strided_out_gets_the_epilogue_split_or_not() -> None:
    # C a transposed view: the direct store (split 1) and the reduce (split 2) both follow out's strides.
    g = torch.Generator().manual_seed(7)
    a, b = torch.randn(3, 41, generator=g), _weight_t(37, 41, 0, 1, torch.float32, g)
    bias = torch.randn(37, generator=g)
    for split in (1, 2):
        out = torch.empty(37, 3).t()
        y = gemm.gemm(a, b, bias, "bias_gelu", out=out, kernel="gemv",
                      config={"BLOCK_M": 4, "BLOCK_N": 16, "BLOCK_K": 8, "SPLIT_K": split, "SHIFT": 4})
        assert y.data_ptr() == out.data_ptr()
        torch.testing.assert_close(y.double(), gemm.reference(a, b, bias, "bias_gelu"), atol=1e-5, rtol=1e-5)
