"""row_grads.py: the row backwards' plan (ROWS narrow rows at a time, how many programs) and the GPU's plans run in
the interpreter against fp64 autograd (the CPU tests otherwise run the interpreter's own few-program plan)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch

from rocm_triton_doctor.kernels import call_plans, layernorm, policy, rmsnorm, row_grads, row_grads_split, softmax
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


def test_wide_one_block_rows_take_one_program_a_unit_on_nvidia_only() -> None:
    # One-block rows of 8192+ lanes: one partial-sum row an SM on NVIDIA (measured 5-18 % faster than two); two
    # elsewhere, and for narrower, looped or packed rows.
    wide = row_grads._config(SM90, 13823, 2, policy.row_class(13823, 3067))
    assert not wide["LOOPED"] and wide["ROWS"] == 1 and wide["BLOCK"] >= row_grads.WIDE_ONE_BLOCK
    assert row_grads.per_unit(wide, "cuda") == 1 and row_grads.per_unit(wide, "hip") == 2
    assert row_grads.gpu_programs(3067, wide, 2, 132, row_grads.per_unit(wide, "cuda")) == 132
    narrower = row_grads._config(SM90, 4096, 2, policy.row_class(4096, 10000))
    assert row_grads.per_unit(narrower, "cuda") == 2
    looped = row_grads._config(SM90, 200000, 4, 64)
    assert looped["LOOPED"] and row_grads.per_unit(looped, "cuda") == 2

    # the norms' one-block kernel: a 16384-lane block up to 15/16 full takes 8 warps on NVIDIA (16 at fuller rows
    # whose width is a multiple of 16, as the forward; a caller's config and other targets as given)
    x = torch.empty(2, 4)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(row_grads, "target_of", lambda t: SM90)
        assert wide["BLOCK"] == 16384 and wide["num_warps"] == 16
        assert row_grads.kernel_cfg(wide, 13823, x, None)["num_warps"] == 8 and wide["num_warps"] == 16  # a copy
        assert row_grads.kernel_cfg(wide, 13823, x, {"BLOCK": 16384, "num_warps": 16}) is wide
        full = row_grads._config(SM90, 16000, 2, policy.row_class(16000, 2048))
        assert row_grads.kernel_cfg(full, 16000, x, None)["num_warps"] == 16
        # past 15/16 full a width that is not a multiple of 16 takes 8 too (session 33: bf16 4428x15816 6.48 -> 9.08)
        for n, warps in ((15816, 8), (15500, 8), (16383, 8), (15872, 16), (16384, 16)):
            cfg = row_grads._config(SM90, n, 2, policy.row_class(n, 4428))
            assert cfg["BLOCK"] == 16384 and row_grads.kernel_cfg(cfg, n, x, None)["num_warps"] == warps, n
        mp.setattr(row_grads, "target_of", lambda t: policy.Target("hip", "gfx942", 64))
        assert row_grads.kernel_cfg(wide, 13823, x, None) is wide


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


@pytest.mark.parametrize("G,N", [(1, 1), (1, 60), (5, 7), (33, 257), (300, 60), (4, 1000)])
@pytest.mark.parametrize("dtypes", [(torch.float32,), (torch.bfloat16, torch.float16)])
@pytest.mark.parametrize("units", [1, 132])
def test_param_sums_equal_torchs_sum_and_cast(G: int, N: int, dtypes: tuple[torch.dtype, ...], units: int,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # One launch for one or two partial buffers, in the interpreter's plan and with an H200's 132 SMs (narrower
    # column blocks); row blocks of G that do not divide it, columns past a block.
    monkeypatch.setattr(row_grads, "sum_config", lambda n, g, _u, f=row_grads.sum_config: f(n, g, units))
    gen = torch.Generator().manual_seed(G * 1000 + N)
    parts = tuple(torch.randn((G, N), generator=gen) * 3 for _ in dtypes)
    got = row_grads.param_sums(parts, dtypes)
    for p, d, g in zip(parts, dtypes, got):
        assert g.dtype == d and g.shape == (N,)
        want = p.double().sum(0)
        tol = torch.finfo(d).eps * 4 * want.abs().max().item() + 1e-5
        torch.testing.assert_close(g.double(), want.to(d).double(), rtol=0, atol=tol)


def test_param_sums_of_empty_buffers_are_zeros() -> None:
    w, b = row_grads.param_sums((torch.empty((0, 5)), torch.empty((0, 5))), (torch.float16, torch.float32))
    assert w.dtype == torch.float16 and b.dtype == torch.float32 and not w.any() and not b.any() and w.shape == (5,)
    assert row_grads.param_sums((torch.empty((3, 0)),), (torch.float32,))[0].shape == (0,)


def test_sum_config_fills_the_gpu_with_column_blocks() -> None:
    assert row_grads.sum_config(4096, 264, 132)["BLOCK_N"] == 32  # 128 programs, not 16
    assert row_grads.sum_config(152064, 264, 132)["BLOCK_N"] == 256
    cfg = row_grads.sum_config(60, 3, 132)
    assert cfg["BLOCK_N"] == 32 and cfg["BLOCK_G"] == 4  # no taller than G
    assert row_grads.sum_config(60, 3, 1)["BLOCK_N"] == 64  # the interpreter: no wider than the row


@pytest.fixture
def planned(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(call_plans, "GPU_ONLY", False)  # plan CPU tensors too: the interpreter runs the plan's Sites
    call_plans.clear()
    yield
    call_plans.clear()


@pytest.mark.parametrize("op", ["rmsnorm", "layernorm", "softmax"])
@pytest.mark.parametrize("M,N,dtype,kept", [(300, 5, torch.float32, True), (70, 130, torch.float16, True),
                                            (3, 20000, torch.float32, False)])
def test_a_planned_backward_gives_the_checked_paths_gradients(op: str, M: int, N: int, dtype: torch.dtype, kept: bool,
                                                              planned: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # The first call checks, plans and keeps its launches (rows in one block only: looped rows are not kept); the
    # second, with the checked path's policy step made to fail, runs from the plan and must give the same gradients.
    check_backward(op, M, N, dtype, 5)
    assert len(row_grads._PLANS) == int(kept)
    if kept:
        monkeypatch.setattr(row_grads, "config", lambda *a: pytest.fail("the checked path ran for a planned call"))
    check_backward(op, M, N, dtype, 6)  # other values, the same signature


def test_plans_key_layout_and_options(planned: None) -> None:
    gen = torch.Generator().manual_seed(2)
    x, w = torch.randn(40, 24, generator=gen), torch.randn(24, generator=gen)
    dy, r = torch.randn(40, 24, generator=gen), _rstd(x)
    dx, dw, y = rmsnorm.rmsnorm_backward_with_output(dy, x, w, r)
    dx2, dw2 = rmsnorm.rmsnorm_backward(dy, x, w, r)  # without y: its own plan
    xt = x.t().contiguous().t()  # the same values in a column-major layout: another signature
    dx3, dw3 = rmsnorm.rmsnorm_backward(dy, xt, w, r)
    assert len(row_grads._PLANS) == 3
    torch.testing.assert_close(y, (x * r[:, None] * w).to(y.dtype))
    for a, b in ((dx, dx2), (dx, dx3), (dw, dw2), (dw, dw3)):
        torch.testing.assert_close(a, b)
    with pytest.raises(ValueError, match="rstd must be fp32"):
        rmsnorm.rmsnorm_backward(dy, x, w, r.double())  # not planned: checked
