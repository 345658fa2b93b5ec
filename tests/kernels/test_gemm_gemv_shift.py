"""The GEMV kernel reading an N-major B in shifted 16-byte windows (gemm_kernels.gemv_kernel's SHIFT, gemm._gemv_plan,
policy_gemv.gemv_shift) in Triton's interpreter: hypothesis properties over rows, K (tails and K splits), widths,
row strides, base offsets, dtypes, epilogues and special values against an fp64 reference; the dropout mask; the
refusals; the policy's rule per target and the auto path's use of it."""

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


def _weight(K: int, N: int, pad: int, offset: int, dtype: torch.dtype, g: torch.Generator) -> torch.Tensor:
    """A (K, N) row-major weight inside a wider one: row stride N + pad, starting `offset` elements in (so neither
    its rows nor its base need be 16-byte aligned)."""
    big = torch.randn(K, N + pad + offset, generator=g) / max(K, 1) ** 0.5
    return big.to(dtype)[:, offset:offset + N]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(M=st.integers(1, 19), K=st.integers(1, 100), extra=st.integers(0, 40), pad=st.integers(0, 9),
       offset=st.integers(0, 7), dtype=st.sampled_from(DTYPES), epilogue=st.sampled_from(list(gemm.EPILOGUES)),
       bm=st.sampled_from([1, 2, 8]), bn=st.sampled_from([16, 32]), deep=st.booleans(), split=st.integers(1, 4),
       stages=st.sampled_from([1, 3]), special=st.sampled_from([None, "nan", "inf"]), seed=st.integers(0, 2**31 - 1))
def test_shifted_windows_match_fp64(M: int, K: int, extra: int, pad: int, offset: int, dtype: torch.dtype,
                                    epilogue: str, bm: int, bn: int, deep: bool, split: int, stages: int,
                                    special: str | None, seed: int) -> None:
    shift = 16 // dtype.itemsize
    N = bn + shift - 1 + extra  # the narrowest B the windows take, and wider
    programs = -(-M // bm) * -(-N // bn)  # CI time: at most 16 programs and 96 of their K steps (edges are per program)
    assume(programs * split <= 16 and programs * -(-K // (shift * (2 if deep else 1))) <= 96)
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(M, K, generator=g).to(dtype)
    b = _weight(K, N, pad, offset, dtype, g)
    if special:  # one non-finite element of B: only its own column may turn non-finite
        b[seed % K, seed % N] = float(special)
    bias = torch.randn(N, generator=g).to(dtype) if epilogue != "none" else None
    cfg = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": shift * (2 if deep else 1), "SPLIT_K": split, "STAGES": stages,
           "SHIFT": shift}
    y = gemm.gemm(a, b, bias, epilogue, kernel="gemv", config=cfg)
    assert_matches(y, gemm.reference(a, b, bias, epilogue).to(dtype), dtype)


def test_shifted_windows_cover_every_residue_and_the_last_row() -> None:
    # Row strides of every residue mod 4 (fp32) and K of one row, one block, and one past it: each column's sum
    # must gather all K rows once, B's last row (read by the masked tail) included.
    g = torch.Generator().manual_seed(3)
    for ld_pad in range(4):
        for K in (1, 4, 5, 17):
            a = torch.randn(3, K, generator=g)
            b = _weight(K, 21, ld_pad, 0, torch.float32, g)
            y = gemm.gemm(a, b, kernel="gemv", config={"BLOCK_M": 4, "BLOCK_N": 16, "BLOCK_K": 4, "SHIFT": 4})
            torch.testing.assert_close(y.double(), a.double() @ b.double(), atol=1e-5, rtol=1e-5)


def test_shifted_windows_draw_the_same_dropout_mask() -> None:
    g = torch.Generator().manual_seed(5)
    a, b = torch.randn(3, 40, generator=g), _weight(40, 37, 0, 0, torch.float32, g)
    bias = torch.randn(37, generator=g)
    cfg = {"BLOCK_M": 4, "BLOCK_N": 16, "BLOCK_K": 8, "SPLIT_K": 2}
    y = gemm.gemm(a, b, bias, "bias_relu", p=0.4, seed=99, kernel="gemv", config={**cfg, "SHIFT": 4})
    z = gemm.gemm(a, b, bias, "bias_relu", p=0.4, seed=99, kernel="gemv", config={**cfg, "SHIFT": 1})
    assert torch.equal(y == 0, z == 0)
    torch.testing.assert_close(y, z, atol=1e-5, rtol=1e-5)


def test_shift_refusals_are_clear() -> None:
    a, b = torch.randn(2, 16), torch.randn(16, 21)
    cfg = {"BLOCK_M": 2, "BLOCK_N": 16, "BLOCK_K": 8}
    with pytest.raises(ValueError, match="SHIFT=2 must be 1 or 4"):
        gemm.gemm(a, b, kernel="gemv", config={**cfg, "SHIFT": 2})
    with pytest.raises(ValueError, match="N >= BLOCK_N \\+ 3 = 19, got 18"):
        gemm.gemm(a, b[:, :18], kernel="gemv", config={**cfg, "SHIFT": 4})
    with pytest.raises(ValueError, match="rows or columns contiguous"):
        gemm.gemm(a, torch.randn(16, 42)[:, ::2], kernel="gemv", config={**cfg, "SHIFT": 4})
    with pytest.raises(ValueError, match="multiples of it, got 2 and 16"):
        gemm.gemm(a, b, kernel="gemv", config={**cfg, "BLOCK_K": 2, "SHIFT": 4})
    with pytest.raises(ValueError, match="SPLIT_K=32 makes 128 partials"):
        gemm.gemm(a, b, kernel="gemv", config={**cfg, "SPLIT_K": 32, "SHIFT": 4})
    with pytest.raises(ValueError, match="SHIFT must be an int in \\[1, 8\\]"):
        gemm.gemm(a, b, kernel="gemv", config={**cfg, "SHIFT": 16})


def test_the_policy_shifts_fp32_misaligned_row_major_weights_on_nvidia() -> None:
    # (SHIFT, SPLIT_K) for fp32 against a misaligned N-major B (bn 128, bk 16 as gemv_config gives 2 rows)
    assert policy.gemv_shift(H200, 2, 12427, 1041, 4, False, False, 128, 16, 4, 132) == (4, 4)
    # splits of 8 or more halve where the halved grid keeps two programs an SM (33 tiles x 8 = 264) ...
    assert policy.gemv_shift(H200, 1, 4097, 4096, 4, False, False, 128, 32, 16, 132) == (4, 8)
    # ... and not where it would not (3 tiles), where more than 64 partials keep the plain read
    assert policy.gemv_shift(H200, 1, 307, 9693, 4, False, False, 128, 32, 32, 132) == (1, 32)
    assert policy.gemv_shift(H200, 2, 500, 9000, 4, False, False, 128, 16, 8, 132) == (4, 8)
    # aligned rows, 16 bits (mixed on the H200), AMD (not timed), the interpreter: as they are (a K-major weight:
    # test_gemv_kshift.py)
    for t, elem, kmajor, aligned in ((H200, 4, False, True), (H200, 2, False, False),
                                     (policy.Target("hip", "gfx942", 64), 4, False, False),
                                     (policy.Target("interpreter", "", 32), 4, False, False)):
        assert policy.gemv_shift(t, 2, 12427, 1041, elem, kmajor, aligned, 128, 16, 4, 132) == (1, 4)
    # an unsplit product (the windows would add the reduce's launch), tiles the windows cannot take, or a B
    # narrower than a tile and a vector
    assert policy.gemv_shift(H200, 1, 23947, 187, 4, False, False, 128, 32, 1, 132) == (1, 1)
    assert policy.gemv_shift(H200, 8, 12427, 1041, 4, False, False, 128, 2, 4, 132)[0] == 1
    assert policy.gemv_shift(H200, 2, 130, 1041, 4, False, False, 128, 16, 4, 132)[0] == 1


def test_four_fp32_rows_take_the_gemv_where_it_shifts() -> None:
    assert policy.gemv_takes(H200, 4, 4, False, False, 1273, 19239)  # the IEEE tiles ran 0.54x there
    assert policy.gemv_takes(H200, 4, 4, False, False, 171, 1914)
    assert not policy.gemv_takes(H200, 4, 4, False, False, 6000, 1999)  # split 32: no windows, the tiles keep it
    assert not policy.gemv_takes(H200, 4, 4, True, False, 1273, 19240)  # aligned: the tiles
    assert not policy.gemv_takes(H200, 5, 4, False, False, 1273, 19239)
    assert not policy.gemv_takes(H200, 4, 4, False, False)  # no sizes, no windows


def test_auto_plans_shifted_windows_where_the_policy_says(monkeypatch: pytest.MonkeyPatch) -> None:
    # The interpreter's policy never shifts; with the GPU's answer patched in, the auto path launches the windows
    # (SHIFT 4, the reduce summing split x 4 partials) and the product stays right; where B's layout refuses them
    # it reads B as it is, with no error.
    seen: list[tuple[int, int]] = []

    def fake(t: policy.Target, M: int, N: int, K: int, elem: int, kmajor: bool, aligned: bool, bn: int, bk: int,
             split: int, cus: int) -> tuple[int, int]:
        return (4, 2) if elem == 4 and not kmajor and bk % 4 == 0 else (1, split)

    monkeypatch.setattr(policy, "gemv_shift", fake)
    real = gemm._Part.__init__

    def spy(self: gemm._Part, *args: object, **kwargs: object) -> None:
        real(self, *args, **kwargs)  # type: ignore[arg-type]
        seen.append((self.kw.get("SHIFT", 1), self.split))

    monkeypatch.setattr(gemm._Part, "__init__", spy)
    g = torch.Generator().manual_seed(2)
    a = torch.randn(2, 100, generator=g)
    for b, expect in ((_weight(100, 70, 1, 0, torch.float32, g), (4, 8)),
                      (torch.randn(100, 140, generator=g)[:, ::2], (1, None))):
        seen.clear()
        y = gemm.gemm(a, b, kernel="gemv")
        torch.testing.assert_close(y.double(), a.double() @ b.double(), atol=1e-5, rtol=1e-5)
        assert seen[0][0] == expect[0] and (expect[1] is None or seen[0][1] == expect[1])
    # a caller's K split is kept (the windows on top of it), and dropped with them past 64 partials
    for split, expect in ((4, (4, 16)), (32, (1, 32))):
        seen.clear()
        b = _weight(100, 70, 1, 0, torch.float32, g)
        cfg = {"BLOCK_M": 2, "BLOCK_N": 16, "BLOCK_K": 4, "SPLIT_K": split}
        y = gemm.gemm(a, b, kernel="gemv", config=cfg)
        torch.testing.assert_close(y.double(), a.double() @ b.double(), atol=1e-5, rtol=1e-5)
        assert seen[0] == expect
    assert policy_gemv.GEMV_FP32_SHIFT_ROWS == 4
