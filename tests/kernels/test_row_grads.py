"""row_grads.py: the row backwards' plan (ROWS narrow rows at a time, how many programs) and the GPU's plans run in
the interpreter against fp64 autograd (the CPU tests otherwise run the interpreter's own few-program plan)."""

from __future__ import annotations

import pytest
import torch

from rocm_triton_doctor.kernels import layernorm, policy, rmsnorm, row_grads, row_grads_split, softmax
from tests.kernels.grads import assert_grads

SM90 = policy.Target("cuda", "sm_90", 32)


def test_narrow_rows_take_the_forwards_row_packing_and_fill_the_gpu() -> None:
    cfg = row_grads._config(SM90, 5, 4, policy.row_class(5, 842345))
    assert cfg["ROWS"] > 1 and not cfg["LOOPED"]  # fp32 842345x5: many rows a step
    g = row_grads.gpu_programs(842345, cfg, 4, 132)
    assert g * cfg["num_warps"] >= row_grads.NARROW_WARPS_PER_UNIT * 132 // 2  # about 32 warps an SM, not 2
    assert g * 5 * 4 * row_grads.NARROW_PARTIAL_SHARE <= 842345 * 5 * 4  # partial rows under 1/8 of x
    wide = row_grads._config(SM90, 4096, 2, policy.row_class(4096, 10000))
    assert wide["ROWS"] == 1 and row_grads.gpu_programs(10000, wide, 2, 132) == 264  # wide rows as before
    assert row_grads._config(SM90, 200000, 4, 64)["ROWS"] == 1  # looped rows one at a time
    assert row_grads.gpu_programs(3, cfg, 4, 132) == 1  # never more programs than row tiles


@pytest.mark.parametrize("M", [1, 63, 64, 1000])
def test_launch_shape_gives_whole_row_tiles(M: int) -> None:
    grid, rpp = row_grads.launch_shape(M, 7, 16)
    assert rpp % 16 == 0 and grid[0] * rpp >= M and (grid[0] - 1) * rpp < M


@pytest.mark.parametrize("op", ["rmsnorm", "layernorm", "softmax"])
@pytest.mark.parametrize("M,N,dtype", [(300, 5, torch.float32), (257, 39, torch.bfloat16), (70, 130, torch.float16)])
@pytest.mark.parametrize("units", [132, 1])
def test_the_gpu_plan_for_narrow_rows_gives_the_gradients(op: str, M: int, N: int, dtype: torch.dtype, units: int,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # sm_90's row tiles launched in the interpreter, against fp64 autograd: with an H200's 132 SMs (a program a row
    # tile) and with one SM (each norm program walks several tiles, the last one partial), odd widths.
    monkeypatch.setattr(row_grads, "target_of", lambda x: SM90)
    monkeypatch.setattr(row_grads, "programs",
                        lambda x, M, cfg: row_grads.gpu_programs(M, cfg, x.element_size(), units))
    check_backward(op, M, N, dtype, M + N)


def check_backward(op: str, M: int, N: int, dtype: torch.dtype, seed: int) -> None:
    """op's backward (rmsnorm, layernorm, softmax) on random (M, N) rows against fp64 autograd, from forward
    statistics computed here in fp32."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(M, N, generator=gen).to(dtype).requires_grad_()
    w = torch.randn(N, generator=gen).to(dtype).requires_grad_()
    b = torch.randn(N, generator=gen).to(dtype).requires_grad_()
    dy = torch.randn(M, N, generator=gen).to(dtype)
    if op == "rmsnorm":
        got = rmsnorm.rmsnorm_backward(dy, x.detach(), w.detach(), _rstd(x))
        assert_grads(lambda xd, wd: rmsnorm.reference(xd, wd), (x, w), dy, got)
    elif op == "layernorm":
        xf = x.detach().float()
        mean, var = xf.mean(-1), xf.var(-1, unbiased=False)
        got = layernorm.layernorm_backward(dy, x.detach(), w.detach(), b.detach(), mean, torch.rsqrt(var + 1e-5))
        assert_grads(lambda xd, wd, bd: torch.nn.functional.layer_norm(xd, (N,), wd, bd, 1e-5), (x, w, b), dy, got)
    else:
        y = torch.softmax(x.detach().float(), -1).to(dtype)
        got = (softmax.softmax_backward(dy, y),)
        assert_grads(lambda xd: torch.softmax(xd, -1), (x,), dy, got)


def _rstd(x: torch.Tensor) -> torch.Tensor:
    xf = x.detach().float()
    return torch.rsqrt(xf.pow(2).mean(-1) + 1e-6)


@pytest.mark.parametrize("op", ["rmsnorm", "layernorm", "softmax"])
@pytest.mark.parametrize("M,N,dtype,sm90", [(1, 20011, torch.float32, False), (3, 40000, torch.bfloat16, True),
                                            (2, 70001, torch.float32, True)])
def test_few_wide_rows_split_over_programs_give_the_gradients(op: str, M: int, N: int, dtype: torch.dtype, sm90: bool,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # row_grads_split.py: the interpreter's own split (one looped row in 3 parts) and sm_90's (parts of whole 8192
    # chunks over 132 SMs, a graph being captured so the split is taken below ROW_SPLIT_EAGER_MIN_COLS), against fp64.
    if sm90:
        monkeypatch.setattr(row_grads, "target_of", lambda x: SM90)
        monkeypatch.setattr(row_grads.rows, "_capturing", lambda x: True)
    probe = torch.empty(M, N, dtype=dtype)
    cfg = row_grads.config(probe, N, None, M)
    split = row_grads.split_parts(probe, N, M, cfg, 32 if op == "layernorm" else policy.ROW_SPLIT_MID_ROWS)
    assert split > 1
    calls = []
    real = row_grads_split.split_backward
    monkeypatch.setattr(row_grads_split, "split_backward", lambda *a: calls.append(a[9]) or real(*a))
    check_backward(op, M, N, dtype, N)
    assert calls == [split]


def test_backward_rows_past_16384_lanes_loop_over_chunks_on_nvidia() -> None:
    # 16-bit rows of 16385-32768 (one 32768-lane block in the forward) spill the backward's fp32 parameter sums:
    # the backward loops over 8192-lane chunks there; 16384 lanes and AMD keep the forward's block.
    cfg = row_grads._config(SM90, 29822, 2, 64)
    assert (cfg["BLOCK"], cfg["num_warps"], cfg["LOOPED"], cfg["ROWS"]) == (policy.ROW_CHUNK, 16, True, 1)
    assert row_grads._config(SM90, 12897, 2, 64)["BLOCK"] == 16384
    mi300 = policy.Target("hip", "gfx942", 64)
    assert row_grads._config(mi300, 29822, 2, 64)["BLOCK"] == policy.row_config(mi300, 29822, 2, 64)["BLOCK"]
