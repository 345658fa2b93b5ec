"""row_grads_cols.py: many wide rows in the norm backwards — the row sums, then column tiles that keep the parameter
terms in registers — against fp64 autograd in the interpreter, in the interpreter's plan and an H200's."""

from __future__ import annotations

import pytest
import torch

from rocm_triton_doctor.kernels import layernorm, policy, rmsnorm, row_grads, row_grads_cols
from tests.kernels.grads import assert_grads


@pytest.fixture
def taken(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The OPs the column-tile path ran for."""
    seen: list[int] = []
    real = row_grads_cols.cols_backward

    def spy(op: int, *a: object, **k: object) -> torch.Tensor:
        seen.append(op)
        return real(op, *a, **k)  # type: ignore[arg-type]
    monkeypatch.setattr(row_grads_cols, "cols_backward", spy)
    return seen


@pytest.mark.parametrize("M,N,dtype,layout,units", [
    (5, 20000, torch.float32, "", 1),         # one program a column block, every row
    (37, 16500, torch.float32, "t", 132),     # an H200's groups: 2 row groups of 19 and 18 rows, transposed x
    (3, 33000, torch.bfloat16, "w", 132),     # fewer rows than COLS_MIN_ROWS: one group; a strided weight
    (20, 16385, torch.float16, "", 132),      # one column past a power of two: a 1-lane last block
])
def test_wide_rows_take_column_tiles_and_give_the_gradients(M: int, N: int, dtype: torch.dtype, layout: str,
                                                           units: int, taken: list[int],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(row_grads, "units_of", lambda x: units)
    if units == 132:  # an H200's plan (its 8192-lane chunks for 16-bit rows past 16384), run in the interpreter
        monkeypatch.setattr(row_grads, "target_of", lambda x: policy.Target("cuda", "sm_90", 32))
    g = torch.Generator().manual_seed(M + N)
    x = torch.randn(N, M, generator=g).to(dtype).t() if layout == "t" else torch.randn(M, N, generator=g).to(dtype)
    x = (x * 2 + 1).requires_grad_()
    wb = torch.randn(2 * N, generator=g).to(dtype)
    w = (wb[::2] if layout == "w" else wb[:N]).detach().requires_grad_()  # "w": a strided view as the leaf
    b = torch.randn(N, generator=g).to(dtype).requires_grad_()
    dy = torch.randn(M, N, generator=g).to(dtype)
    got = torch.autograd.grad(layernorm.layernorm_autograd(x, w, b), (x, w, b), dy)
    assert_grads(lambda xd, wd, bd: torch.nn.functional.layer_norm(xd, (N,), wd, bd, 1e-5), (x, w, b), dy, got)
    got = torch.autograd.grad(rmsnorm.rmsnorm_autograd(x, w), (x, w), dy)
    assert_grads(lambda xd, wd: rmsnorm.reference(xd, wd), (x, w), dy, got)
    assert taken == [2, 1]


def test_rows_in_one_block_and_a_callers_config_keep_the_one_kernel(taken: list[int]) -> None:
    x, w = torch.randn(8, 300), torch.randn(300)
    rmsnorm.rmsnorm_backward(torch.randn(8, 300), x, w, torch.ones(8))
    x, w = torch.randn(4, 20000), torch.randn(20000)
    rmsnorm.rmsnorm_backward(torch.randn(4, 20000), x, w, torch.ones(4), config={"BLOCK": 4096})
    assert taken == []


def test_cols_config_fills_the_gpu_and_keeps_partial_rows_small() -> None:
    cfg = row_grads_cols.cols_config(22213, 5296, 132)
    groups = -(-5296 // cfg["RPP"])
    assert cfg["BLOCK_N"] == row_grads_cols.COLS_BLOCK
    assert 22 * groups >= row_grads_cols.COLS_PROGRAMS_PER_UNIT * 132  # 22 column blocks x the row groups
    assert cfg["RPP"] >= row_grads_cols.COLS_MIN_ROWS
    assert row_grads_cols.cols_config(30000, 10, 132)["RPP"] == 10  # few rows: one group


def test_layernorm_rows_in_one_block_take_the_tiles_from_8193_wide_on_nvidia_only() -> None:
    block = {"LOOPED": False}
    assert row_grads_cols.takes({"LOOPED": True}, 3, 20000, 1, "hip")  # looped rows: every target, both norms
    assert row_grads_cols.takes(block, 1061, 12897, 2, "cuda")
    assert not row_grads_cols.takes(block, 8192, 8192, 2, "cuda")  # the block stayed ahead at 8192
    assert not row_grads_cols.takes(block, 1061, 12897, 1, "cuda")  # RMSNorm's block stayed ahead
    assert not row_grads_cols.takes(block, 1061, 12897, 2, "hip")  # not timed on AMD
    assert not row_grads_cols.takes(block, 100, 12897, 2, "cuda")  # few rows: the planned block


def test_an_h200s_layernorm_plan_for_wide_rows_in_one_block(taken: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(row_grads, "target_of", lambda x: policy.Target("cuda", "sm_90", 32))
    monkeypatch.setattr(row_grads, "units_of", lambda x: 132)
    monkeypatch.setattr(row_grads_cols, "BLOCK_MIN_ROWS", 8)  # the rule at an interpreter's size
    g = torch.Generator().manual_seed(9)
    x = torch.randn(9, 9000, generator=g).requires_grad_()
    w, b = (torch.randn(9000, generator=g).requires_grad_() for _ in range(2))
    dy = torch.randn(9, 9000, generator=g)
    got = torch.autograd.grad(layernorm.layernorm_autograd(x, w, b), (x, w, b), dy)
    assert_grads(lambda xd, wd, bd: torch.nn.functional.layer_norm(xd, (9000,), wd, bd, 1e-5), (x, w, b), dy, got)
    assert taken == [2]
