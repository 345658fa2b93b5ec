"""Rows read and written in 16-byte windows (rows_window.py: the window forms of softmax, RMSNorm and LayerNorm) in
Triton's interpreter: against fp64 references over widths, rows, row strides, dtypes, parameter tables and special
values, with NaN in the memory between and after the rows (the windows read whole 16-byte groups there and must drop
it); the saved statistics; a plain kernel where x or the output is off a 16-byte boundary; planned calls; the
policy (policy_rows.window_config)."""

from __future__ import annotations

import os

os.environ["TRITON_INTERPRET"] = "1"  # before any @triton.jit function is created

from collections.abc import Iterator
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from hypothesis import assume, HealthCheck, given, settings
from hypothesis import strategies as st

from rocm_triton_doctor.kernels import call_plans, layernorm, policy, policy_rows, rmsnorm, rows_window, softmax
from tests.kernels.test_gemm import assert_matches

DTYPES = (torch.float16, torch.bfloat16, torch.float32)


def _vec(dtype: torch.dtype) -> int:
    return 16 // torch.empty((), dtype=dtype).element_size()


def _block(N: int, dtype: torch.dtype) -> int:
    return 1 << (N + _vec(dtype) - 2).bit_length()


def _poisoned_rows(M: int, N: int, pad: int, dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    """(M, N) values at row stride N + pad inside a buffer of NaN that also runs one 16-byte group past the last row."""
    V = _vec(dtype)
    buf = torch.full((M * (N + pad) + V,), float("nan"), dtype=dtype)
    x = buf[:M * (N + pad)].view(M, N + pad)[:, :N]
    x.copy_((torch.randn(M, N, generator=gen) * 2 + 0.5).to(dtype))
    return x


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Which kernel each WindowSite call ran: 'window' or 'plain'."""
    ran: list[str] = []
    real = rows_window.WindowSite._args

    def args(self: rows_window.WindowSite, dyn: tuple[Any, ...], planned: bool) -> Any:
        a = real(self, dyn, planned)
        ran.append("plain" if a is None else "window")
        return a
    monkeypatch.setattr(rows_window.WindowSite, "_args", args)
    yield ran


def _three(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, cfg: dict[str, Any]
           ) -> list[tuple[torch.Tensor, torch.Tensor]]:
    N = x.shape[-1]
    return [(softmax.softmax(x, config=cfg), torch.softmax(x.double(), -1)),
            (rmsnorm.rmsnorm(x, w, 1e-6, config=cfg), F.rms_norm(x.double(), (N,), w.double(), 1e-6)),
            (layernorm.layernorm(x, w, b, 1e-5, config=cfg),
             F.layer_norm(x.double(), (N,), w.double(), b.double(), 1e-5))]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(M=st.integers(1, 9), N=st.integers(1, 700), pad_groups=st.integers(0, 2), dtype=st.sampled_from(DTYPES),
       table=st.booleans(), warps=st.sampled_from([1, 4]), seed=st.integers(0, 2**16))
def test_windows_match_fp64(spy: list[str], M: int, N: int, pad_groups: int, dtype: torch.dtype, table: bool,
                            warps: int, seed: int) -> None:
    spy.clear()  # the fixture lives across hypothesis's examples
    g = torch.Generator().manual_seed(seed)
    x = _poisoned_rows(M, N, pad_groups * _vec(dtype), dtype, g)
    w = torch.randn(N, generator=g).to(dtype)
    b = torch.randn(N, generator=g).to(dtype)
    cfg = {"BLOCK": _block(N, dtype), "num_warps": warps, "WINDOW": 1, "TABLE": int(table)}
    for out, ref in _three(x, w, b, cfg):
        assert_matches(out, ref, dtype)
    assert spy == ["window"] * 3


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(M=st.integers(1, 6), N=st.integers(1, 600), pad_groups=st.integers(0, 2), dtype=st.sampled_from(DTYPES),
       block=st.sampled_from([16, 32, 128]), special=st.sampled_from(["", "-inf", "nan", "row -inf", "inf"]),
       seed=st.integers(0, 2**16))
def test_looped_softmax_windows_match_fp64(spy: list[str], M: int, N: int, pad_groups: int, dtype: torch.dtype,
                                           block: int, special: str, seed: int) -> None:
    """Softmax's looped window form (rows wider than BLOCK lanes, chunk by chunk): online max and sum, then the
    chunks in reverse, the edges stored once."""
    spy.clear()
    g = torch.Generator().manual_seed(seed)
    x = _poisoned_rows(M, N, pad_groups * _vec(dtype), dtype, g)
    if special == "-inf":
        x[..., N // 3] = float("-inf")
    elif special == "nan":
        x[0, N - 1] = float("nan")
    elif special == "row -inf":
        x[-1] = float("-inf")
    elif special == "inf":
        x[0, N // 2] = float("inf")
    out = softmax.softmax(x, config={"BLOCK": block, "WINDOW": 1})
    assert_matches(out, torch.softmax(x.double(), -1), dtype)
    assert spy == ["window"]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(M=st.integers(1, 5), N=st.integers(1, 600), pad_groups=st.integers(0, 2), dtype=st.sampled_from(DTYPES),
       block=st.sampled_from([16, 32, 128]), table=st.booleans(), offset=st.sampled_from([0.0, 1000.0]),
       seed=st.integers(0, 2**16))
def test_looped_norm_windows_match_fp64(spy: list[str], M: int, N: int, pad_groups: int, dtype: torch.dtype,
                                        block: int, table: bool, offset: float, seed: int) -> None:
    """RMSNorm's and LayerNorm's looped window forms: the statistics chunk by chunk (LayerNorm's chunks merged with
    the row's elements each chunk holds, an offset row keeping its digits), the saved mean and rstd as the plain
    kernels', the parameters from their tables or at the shift."""
    assume(M * -(-N // block) <= 48)  # CI time: chunks walked in all (the interpreter runs each in Python, 4 times)
    spy.clear()
    g = torch.Generator().manual_seed(seed)
    x = _poisoned_rows(M, N, pad_groups * _vec(dtype), dtype, g)
    if offset:
        x += offset
    w, b = torch.randn(N, generator=g).to(dtype), torch.randn(N, generator=g).to(dtype)
    cfg = {"BLOCK": block, "WINDOW": 1, "TABLE": int(table)}
    r, rs = rmsnorm._forward(x, w, 1e-6, config=cfg, stats=True)
    assert_matches(r, F.rms_norm(x.double(), (N,), w.double(), 1e-6), dtype)
    y, mean, rstd = layernorm._forward(x, w, b, 1e-5, config=cfg, stats=True)
    assert_matches(y, F.layer_norm(x.double(), (N,), w.double(), b.double(), 1e-5), dtype)
    _, rs0 = rmsnorm._forward(x, w, 1e-6, config={"BLOCK": block}, stats=True)
    _, mean0, rstd0 = layernorm._forward(x, w, b, 1e-5, config={"BLOCK": block}, stats=True)
    assert rs is not None and rs0 is not None and mean is not None and mean0 is not None
    torch.testing.assert_close(rs, rs0, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(mean, mean0, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(rstd, rstd0, rtol=1e-4, atol=1e-5)
    assert spy == ["window", "window"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_shift_and_both_edges(spy: list[str], dtype: torch.dtype) -> None:
    """An odd width visits every shift 0..V-1 over V rows; widths of one element, less than a group, and one more
    than a group put the first and last partial groups in the same group or next to each other."""
    g = torch.Generator().manual_seed(1)
    V = _vec(dtype)
    for N in (1, 3, V - 1, V + 1, 2 * V + 3):  # (wider odd widths: the property tests below)
        x = _poisoned_rows(2 * V + 1, N, 0, dtype, g)
        w, b = torch.randn(N, generator=g).to(dtype), torch.randn(N, generator=g).to(dtype)
        for table in (0, 1):
            for out, ref in _three(x, w, b, {"BLOCK": _block(N, dtype), "WINDOW": 1, "TABLE": table}):
                assert_matches(out, ref, dtype)
    assert set(spy) == {"window"}


def test_special_values_as_the_plain_rows(spy: list[str]) -> None:
    """-inf columns, a NaN, a row of -inf: the window form gives what the plain kernel gives (and torch)."""
    g = torch.Generator().manual_seed(2)
    x = _poisoned_rows(5, 301, 8, torch.float16, g)
    x[0, 17] = float("-inf")
    x[1, 300] = float("nan")
    x[2] = float("-inf")
    x[3, 0] = float("inf")
    win = softmax.softmax(x, config={"BLOCK": 512, "WINDOW": 1})
    plain = softmax.softmax(x, config={"BLOCK": 512})
    assert_matches(win, torch.softmax(x.double(), -1), torch.float16)
    assert torch.equal(win.isnan(), plain.isnan())
    assert spy == ["window"]


def test_layernorm_keeps_an_offset_rows_digits(spy: list[str]) -> None:
    """Rows like 1000 + randn: the statistics of x minus the row's first element, as the plain kernel's."""
    g = torch.Generator().manual_seed(3)
    x = (torch.randn(6, 1001, generator=g) + 1000).float()
    w, b = torch.randn(1001, generator=g), torch.randn(1001, generator=g)
    out = layernorm.layernorm(x, w, b, config={"BLOCK": 2048, "WINDOW": 1})
    assert_matches(out, F.layer_norm(x.double(), (1001,), w.double(), b.double(), 1e-5), torch.float32)
    assert spy == ["window"]


@pytest.mark.parametrize("table", [0, 1])
def test_saved_statistics_and_mixed_parameters(spy: list[str], table: int) -> None:
    """The forward that saves mean/rstd for the backward; fp32 parameters under 16-bit rows (the table then fp32)
    and an expanded (stride-0) weight."""
    g = torch.Generator().manual_seed(4)
    x = _poisoned_rows(7, 555, 0, torch.bfloat16, g)
    w = torch.randn(555, generator=g)
    b = torch.randn(555, generator=g).to(torch.bfloat16)
    cfg = {"BLOCK": 1024, "WINDOW": 1, "TABLE": table}
    y, mean, rstd = layernorm._forward(x, w, b, 1e-5, config=cfg, stats=True)
    y0, mean0, rstd0 = layernorm._forward(x, w, b, 1e-5, config={"BLOCK": 1024}, stats=True)
    assert mean is not None and rstd is not None and mean0 is not None and rstd0 is not None
    torch.testing.assert_close(mean, mean0)
    torch.testing.assert_close(rstd, rstd0)
    assert_matches(y, y0, torch.bfloat16)
    one = torch.full((1,), 0.5).expand(555)
    r, rs = rmsnorm._forward(x, one, 1e-6, config=cfg, stats=True)
    assert rs is not None
    assert_matches(r, F.rms_norm(x.double(), (555,), one.double(), 1e-6), torch.bfloat16)
    assert spy == ["window", "window"]  # the plain-config call runs no WindowSite


def test_off_boundary_x_or_out_runs_the_plain_kernel(spy: list[str]) -> None:
    """x one element past a 16-byte boundary (or an out= that is): the windows' groups would not be whole aligned
    groups, so that call runs the plain kernel; in-place (out=x) runs the window form."""
    g = torch.Generator().manual_seed(5)
    buf = torch.randn(4 * 333 + 1, generator=g).half()
    x = buf[1:].view(4, 333)
    cfg = {"BLOCK": 512, "WINDOW": 1}
    assert_matches(softmax.softmax(x, config=cfg), torch.softmax(x.double(), -1), torch.float16)
    aligned = torch.randn(4, 333, generator=g).half()
    out = torch.empty(4 * 333 + 1, dtype=torch.float16)[1:].view(4, 333)
    softmax.softmax(aligned, out=out, config=cfg)
    assert_matches(out, torch.softmax(aligned.double(), -1), torch.float16)
    ref = torch.softmax(aligned.double(), -1)
    softmax.softmax(aligned, out=aligned, config=cfg)
    assert_matches(aligned, ref, torch.float16)
    assert spy == ["plain", "plain", "window"]


def test_layouts_the_windows_do_not_take() -> None:
    """A row stride that moves each row's shift away from the output's, a column stride, folded leading dims or a
    split: the plain kernels. A block narrower than N + V - 1 takes the looped window form."""
    from rocm_triton_doctor.kernels.rows import prepare
    x = torch.randn(4, 8, 333).half()
    assert prepare("softmax", x, {}, None, {"BLOCK": 512, "WINDOW": 1}).window is not None  # contiguous: one dim
    assert prepare("softmax", torch.randn(4, 340).half()[:, :333], {}, None, {"BLOCK": 512, "WINDOW": 1}).window is None
    assert prepare("softmax", torch.randn(4, 341).half()[:, :333], {}, None, {"BLOCK": 512, "WINDOW": 1}).window
    assert prepare("softmax", torch.randn(333, 4).half().t(), {}, None, {"BLOCK": 512, "WINDOW": 1}).window is None
    assert prepare("softmax", torch.randn(4, 8, 340).half()[:, :, :333], {}, None,
                   {"BLOCK": 512, "WINDOW": 1}).window is None
    narrow = prepare("softmax", torch.randn(4, 333).half(), {}, None, {"BLOCK": 256, "WINDOW": 1}).window
    assert narrow is not None and narrow["LOOPED"]
    assert prepare("softmax", torch.randn(4, 333).half(), {}, None, {"BLOCK": 128, "WINDOW": 1, "SPLIT": 2}).window is None


@pytest.fixture
def planned(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Plans on CPU tensors, and the H200's window policy in the interpreter."""
    monkeypatch.setattr(call_plans, "GPU_ONLY", False)
    h200 = policy.target_from_name("sm_90")
    monkeypatch.setattr(policy, "window_config",
                        lambda t, n, e, m, p=1: policy_rows._window_config(h200, n, e, m >= 30, p))
    call_plans.clear()
    yield
    call_plans.clear()


def test_planned_calls_choose_per_call(spy: list[str], planned: None) -> None:
    """The policy's window form kept as a plan: later calls with the same signature skip the checks, build their
    tables, and take the plain kernel for an x off a 16-byte boundary (same shape and strides)."""
    g = torch.Generator().manual_seed(6)
    M, N = 30, 515  # from 30 rows here (as from WINDOW_TABLE_MIN_BYTES on a GPU): the parameters' tables
    buf = torch.randn(M * N + 8, generator=g).half()
    w, b = torch.randn(N, generator=g).half(), torch.randn(N, generator=g).half()
    for x in (buf[:M * N].view(M, N), buf[8:].view(M, N), buf[1:M * N + 1].view(M, N)):
        for out, ref in ((rmsnorm.rmsnorm(x, w), F.rms_norm(x.double(), (N,), w.double(), 1e-6)),
                         (layernorm.layernorm(x, w, b), F.layer_norm(x.double(), (N,), w.double(), b.double(), 1e-5)),
                         (softmax.softmax(x), torch.softmax(x.double(), -1))):
            assert_matches(out, ref, torch.float16)
    assert spy == ["window"] * 6 + ["plain"] * 3
    assert len(rmsnorm._PLANS) == len(layernorm._PLANS) == len(softmax._PLANS) == 1


def test_policy_takes_odd_single_pass_rows_on_nvidia() -> None:
    h200, mi300 = policy.target_from_name("sm_90"), policy.target_from_name("gfx942")
    cfg = policy.window_config(h200, 6163, 2, 20189)
    assert cfg == {"BLOCK": 8192, "num_warps": 8, "num_stages": 1, "V": 8, "TABLE": True, "LOOPED": False}
    assert policy.window_config(h200, 6163, 2, 100)["TABLE"] is False  # 1.2 MiB: no table's host time
    assert policy.window_config(h200, 12799, 2, 8192, params=0)["num_warps"] == 4  # softmax, 12805 of 16384 lanes
    assert policy.window_config(h200, 9285, 2, 2078, params=0)["num_warps"] == 8  # ... 9291: 8 (session 28)
    for n, m, params in ((8659, 5995, 1), (10049, 781, 1), (9835, 4560, 2), (10353, 751, 2)):  # 16-bit norms, 8+ MiB
        cfg = policy.window_config(h200, n, 2, m, params=params)
        assert (cfg["BLOCK"], cfg["num_warps"], cfg["LOOPED"]) == (4096, 8, True), (n, m)
    assert not policy.window_config(h200, 9843, 2, 99, params=2)["LOOPED"]  # 1.9 MiB: one block
    assert policy.window_config(h200, 5511, 2, 65372, params=2)["num_warps"] == 4  # LayerNorm from tables (session 28)
    assert policy.window_config(h200, 4825, 2, 31626, params=1)["num_warps"] == 8  # RMSNorm keeps 8
    assert policy.window_config(h200, 5511, 2, 100, params=2)["num_warps"] == 8  # no tables: as before
    assert policy.window_config(h200, 10989, 2, 300, params=2)["num_warps"] == 8  # parameters at the shift
    assert policy.window_config(h200, 25747, 2, 325)["num_warps"] == 16
    assert policy.window_config(h200, 2209, 4, 10846) == {"BLOCK": 4096, "num_warps": 4, "num_stages": 1, "V": 4,
                                                          "TABLE": False, "LOOPED": False}  # fp32 RMSNorm's weight
    assert policy.window_config(h200, 2209, 4, 10846, params=2)["TABLE"] is True  # LayerNorm's two, to 32 KiB
    assert policy.window_config(h200, 12581, 4, 10846, params=2)["TABLE"] is False
    assert policy.window_config(h200, 8691, 4, 6007)["num_warps"] == 8
    assert policy.window_config(h200, 6168, 2, 20189) is None  # even: 4- or 8-byte loads already
    assert policy.window_config(h200, 291, 2, 76822) is None  # narrow
    wide = policy.window_config(h200, 50257, 2, 4096)  # softmax's looped form
    assert wide is not None and wide["LOOPED"] and wide["BLOCK"] == policy.ROW_CHUNK and wide["num_warps"] == 16
    assert policy.window_config(h200, 183670, 2, 4096) is not None  # 4k + 2: 4-byte loads before
    ln = policy.window_config(h200, 56241, 4, 430, params=2)
    assert ln is not None and ln["num_warps"] == 8 and ln["TABLE"]
    assert policy.window_config(h200, 183672, 2, 4096) is None
    assert policy.window_config(h200, 28142, 4, 4096) is None
    assert policy.window_config(mi300, 6163, 2, 20189) is None  # not timed on AMD
    assert policy.window_config(policy.Target("interpreter", "cpu", 32), 6163, 2, 20189) is None


def test_a_backward_config_drops_the_window_keys() -> None:
    """A forward's config with WINDOW/TABLE handed to a backward (one row a program, read as it is): the keys are
    dropped, as ROWS and SPLIT are, so the backward's launcher never passes them to its kernel; the forward's check
    keeps them for rows.prepare."""
    from rocm_triton_doctor.kernels import argcheck
    cfg = {"BLOCK": 512, "WINDOW": 1, "TABLE": 0}
    assert argcheck.check_row_config("row backward", cfg, rows=False) == {"BLOCK": 512, "num_warps": 4}
    assert argcheck.check_row_config("rmsnorm", cfg)["WINDOW"] == 1
    g = torch.Generator().manual_seed(8)
    x, w = torch.randn(3, 333, generator=g), torch.randn(333, generator=g)
    dy = torch.randn(3, 333, generator=g)
    _, rstd = rmsnorm._forward(x, w, 1e-6, stats=True)
    assert rstd is not None
    plain = rmsnorm.rmsnorm_backward(dy, x, w, rstd, config={"BLOCK": 512})
    for a, b in zip(plain, rmsnorm.rmsnorm_backward(dy, x, w, rstd, config=cfg)):
        assert torch.equal(a, b)
