"""kernels/aligned_copy.py: which operands are misaligned, and the one-launch padded copy (interpreter)."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rocm_triton_doctor.kernels import aligned_copy as ac

DTYPES = (torch.float16, torch.bfloat16, torch.float32)


def _padding(c: torch.Tensor) -> torch.Tensor:
    """The buffer behind copy `c`, past its unit-stride dimension's end."""
    inner, outer = (0, 1) if c.shape[0] > 1 and c.stride(0) == 1 else (1, 0)
    whole = torch.as_strided(c, (c.shape[outer], c.stride(outer)), (c.stride(outer), 1))
    return whole[:, c.shape[inner]:]


@st.composite
def operands(draw: Any) -> torch.Tensor:
    """2-D views as GEMM operands come: row- or column-major, offset by a few elements, strided rows, sliced."""
    dtype = draw(st.sampled_from(DTYPES))
    rows, cols = draw(st.integers(1, 70)), draw(st.integers(1, 300))
    extra, off = draw(st.integers(0, 9)), draw(st.integers(0, 3))
    layout = draw(st.sampled_from(("row", "col", "step")))
    if layout == "col":  # the transpose of a (cols, rows + extra) buffer, sliced
        base = torch.randn(cols * (rows + extra) + off).to(dtype)
        return base[off:].view(cols, rows + extra)[:, :rows].t()
    step = 2 if layout == "step" else 1
    base = torch.randn(rows * (cols * step + extra) + off).to(dtype)
    return base[off:].view(rows, cols * step + extra)[:, : cols * step : step]


@settings(max_examples=60, deadline=None)
@given(operands())
def test_the_copy_is_exact_aligned_and_zero_padded(t: torch.Tensor) -> None:
    c = ac.aligned_copy(t)
    assert c.shape == t.shape and c.dtype == t.dtype and torch.equal(c, t)
    assert not ac.misaligned(c)
    for d in (0, 1):  # a unit-stride dimension stays one
        if t.shape[d] > 1 and t.stride(d) == 1:
            assert c.stride(d) == 1
    assert (_padding(c) == 0).all()


def test_the_copy_is_one_launch_of_the_pad_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []
    real = ac.launch

    def spy(kernel: Any, grid: Any, *args: Any, **kw: Any) -> None:
        calls.append({"kernel": kernel, "grid": grid, **kw})
        real(kernel, grid, *args, **kw)

    monkeypatch.setattr(ac, "launch", spy)
    t = torch.randn(40, 4097).bfloat16()[:, :1001]  # 1001-element rows: padded to 1008, a multiple of 16 -> DIV 16
    c = ac.aligned_copy(t)
    assert torch.equal(c, t) and c.stride(0) == 1008
    assert len(calls) == 1 and calls[0]["kernel"] is ac.pad_copy_kernel and calls[0]["DIV"] == 16
    assert calls[0]["BLOCK_C"] * calls[0]["BLOCK_R"] == ac.COPY_TILE and not calls[0]["INT64"]
    # rows of 2 KiB and more start on 128-byte lines: 4097 bf16 -> 4160 elements, 513 fp32 -> 544
    assert ac.aligned_copy(torch.randn(3, 4097).bfloat16()).stride(0) == 4160
    assert ac.aligned_copy(torch.randn(3, 513)).stride(0) == 544 and ac.aligned_copy(torch.randn(3, 511)).stride(0) == 512


def test_empty_operands_copy_without_a_launch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ac, "launch", lambda *a, **k: pytest.fail("launched for an empty operand"))
    for t in (torch.empty(0, 7), torch.empty(5, 0, dtype=torch.float16)):
        c = ac.aligned_copy(t)
        assert c.shape == t.shape


def test_misaligned_reads_the_layout_not_the_values() -> None:
    buf = torch.randn(10, 4097).bfloat16()
    assert ac.misaligned(buf[:, :64]) and not ac.misaligned(torch.empty(10, 64, dtype=torch.bfloat16))
    assert ac.misaligned(torch.empty(10, 64, dtype=torch.bfloat16)[:, 1:])  # base one element off
    assert not ac.misaligned(torch.empty(10, 1000, dtype=torch.float16)[:, :8])  # 2000-byte rows: aligned
    assert ac.misaligned(torch.empty(64, 64)[::2, ::2]) and not ac.misaligned(torch.empty(1, 1)[:, :1])


@settings(max_examples=30, deadline=None)
@given(operands())
def test_a_planned_copy_equals_the_copy_for_every_tensor_of_its_signature(t: torch.Tensor) -> None:
    # gemm's plan keeps one CopyPlan per signature and calls it with each call's operand (a launch Site)
    plan = ac.CopyPlan(t)
    other = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype).copy_(t * 2)  # same signature, new values
    for x in (t, other):
        c, want = plan(x), ac.aligned_copy(x)
        assert torch.equal(c, x) and c.stride() == want.stride() and c.shape == want.shape
        assert (_padding(c) == 0).all()


def test_a_planned_gemm_copies_through_its_copy_plans() -> None:
    from rocm_triton_doctor.kernels import gemm

    gemm.clear_plans()
    g = torch.Generator().manual_seed(29)
    a = torch.randn(9, 37, generator=g)[:, :35]  # rows of 37 floats: misaligned
    b = torch.randn(35, 21, generator=g)
    for _ in range(2):  # a config's plan is built per call: both run through CopyPlan
        y = gemm.gemm(a, b, config={"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 16, "ALIGN_COPY": True})
        torch.testing.assert_close(y.double(), a.double() @ b.double(), atol=1e-4, rtol=1e-4)
    gemm.clear_plans()
