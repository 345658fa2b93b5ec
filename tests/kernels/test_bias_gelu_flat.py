"""The flat form of bias+GELU+dropout+residual (bias_gelu_flat.py) in the interpreter, through the op: bit for bit
against the row tiles, against fp64, its columns at every block size, its dropout mask one for every layout, and
where policy.bias_flat takes it."""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from rocm_triton_doctor.kernels import bias_gelu_dropout_residual
from tests.kernels.helpers import assert_matches, layouts, param_vector, row_inputs, strided_tensor

# Shrinking re-runs interpreter launches for minutes: report the failing example as drawn (CI time bound).
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)
bgdr = bias_gelu_dropout_residual.bias_gelu_dropout_residual


def _ref(x: torch.Tensor, bias: torch.Tensor, res: torch.Tensor) -> torch.Tensor:
    return res.double() + bias_gelu_dropout_residual.reference_undropped(x, bias)


def _both_forms(x: torch.Tensor, b: torch.Tensor, r: torch.Tensor, p: float,
                seed: int = 5) -> tuple[torch.Tensor, torch.Tensor]:
    from rocm_triton_doctor.kernels import call_plans, policy

    outs = []
    for flat in (True, False):
        policy.BIAS_FLAT = flat
        call_plans.clear()
        try:
            outs.append(bgdr(x, b, r, p, seed=seed))
        finally:
            policy.BIAS_FLAT = None
            call_plans.clear()
    return outs[0], outs[1]


@pytest.mark.parametrize("shape,dtype,p", [
    ((2, 7, 129), torch.float32, 0.0),  # odd width, several rows a block (col = flat index mod N)
    ((1, 5, 3), torch.float16, 0.0),
    ((2, 17000), torch.bfloat16, 0.0),  # BLOCK <= N in the interpreter: ONE_WRAP, a block across a row end
    ((2, 17000), torch.float32, 0.0),
    ((3, 11, 64), torch.bfloat16, 0.2),  # dropout at N % 8 == 0: the same mask as the row tiles
    ((2, 300, 40), torch.float32, 0.3),
    ((3, 16384 + 8), torch.float16, 0.5),
    ((9, 1), torch.float32, 0.0),
])
def test_flat_form_equals_the_row_tiles_bit_for_bit(shape: tuple[int, ...], dtype: torch.dtype, p: float) -> None:
    g = torch.Generator().manual_seed(3)
    x, r = torch.randn(shape, generator=g).to(dtype), torch.randn(shape, generator=g).to(dtype)
    b = torch.randn(shape[-1], generator=g)  # fp32 bias under 16-bit activations too
    flat, tiles = _both_forms(x, b, r, p)
    assert torch.equal(flat, tiles)
    if p == 0:
        assert_matches(flat, _ref(x, b, r), dtype)


def test_flat_form_is_taken_where_the_row_tiles_are_slow() -> None:
    from rocm_triton_doctor.kernels import policy

    assert policy.bias_flat(4481)  # odd: the row tiles read one element at a time
    assert policy.bias_flat(392)  # even, but not a multiple of 16: the same
    assert policy.bias_flat(4176)  # a multiple of 16 that leaves a 512-wide tile's lanes idle
    assert not policy.bias_flat(8192)  # the tiles fit the row and read whole vectors
    assert not policy.bias_flat(64)
    assert not policy.bias_flat(64, dropout=True)
    for switch in (None, False):  # dropout at N % 8 != 0: flat whatever the switch says (the mask's octets cross rows)
        policy.BIAS_FLAT = switch
        try:
            assert policy.bias_flat(4481, dropout=True) and policy.bias_flat(12, dropout=True)
            assert not policy.bias_flat(4480, dropout=True) or switch is None
        finally:
            policy.BIAS_FLAT = None


def test_flat_form_reads_a_strided_bias_and_a_wide_row() -> None:
    x, r = torch.randn(3, 17001), torch.randn(3, 17001)
    b = torch.randn(2 * 17001)[::2]
    assert_matches(bgdr(x, b, r), _ref(x, b, r), torch.float32)


@pytest.mark.parametrize("block", [64, 2048])
@pytest.mark.parametrize("N", [1, 3, 7, 41, 47, 63, 65, 97, 127, 129, 255, 257, 1000, 1023, 1025, 2047, 2049, 4095])
def test_flat_columns_over_many_blocks(monkeypatch: pytest.MonkeyPatch, N: int, block: int) -> None:
    # The device's block sizes (ONE_WRAP where block <= N, else the column by an fp32 quotient, which may be one under
    # and is corrected: at N = 41, 47 and 97 among others): every column of several blocks against the row tiles.
    from rocm_triton_doctor.kernels import policy

    monkeypatch.setattr(policy, "bias_flat_config", lambda t, n: {"BLOCK": block, "num_warps": 4})
    M = max(2, -(-3 * block // N))
    g = torch.Generator().manual_seed(N)
    x, r, b = torch.randn(M, N, generator=g), torch.randn(M, N, generator=g), torch.randn(N, generator=g)
    flat, tiles = _both_forms(x, b, r, 0.0)
    assert torch.equal(flat, tiles)


@pytest.mark.parametrize("N", [3, 50, 129, 1001])
def test_odd_width_dropout_is_one_mask_for_every_layout(N: int) -> None:
    # Dropout at N % 8 != 0 runs flat only (its octets cross rows): a column-major x and residual are copied dense for
    # it, and the row tiles are never asked, even switched on.
    x = torch.randn(N, 37).t() + 5.0
    res = torch.randn(N, 37).t()
    bias = torch.randn(2 * N)[::2]
    strided = bgdr(x, bias, res, p=0.4, seed=13)
    dense, tiles = _both_forms(x.contiguous(), bias, res.contiguous(), 0.4, seed=13)
    assert torch.equal(strided, dense) and torch.equal(dense, tiles)
    kept = float((strided != res).float().mean())
    assert 0.45 < kept < 0.75  # p = 0.4: ~60 % kept (x + 5 keeps GELU away from 0)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], phases=NO_SHRINK)
@given(st.data())
def test_property_flat_form_any_width_layout_and_dropout(data: st.DataObject) -> None:
    # Session 28's flat form at small blocks (every block boundary and row end it meets): p = 0 against fp64, and
    # with dropout, x and residual in any layout give the contiguous flat output bit for bit (one mask), and the
    # row tiles give it too where they may draw it (N % 8 == 0).
    from rocm_triton_doctor.kernels import policy

    r = row_inputs(data.draw, max_n=150)
    x, dtype, N = r["x"], r["dtype"], r["N"]
    res = strided_tensor(tuple(x.shape), dtype, r["gen"], **layouts(data.draw, x.dim()))
    bias = param_vector(data.draw, N, dtype, r["gen"])
    block = data.draw(st.sampled_from([16, 64, 256]))
    p = data.draw(st.sampled_from([0.0, 0.0, 0.3]))
    old = policy.bias_flat_config
    policy.bias_flat_config = lambda t, n: {"BLOCK": block, "num_warps": 4}  # type: ignore[assignment]
    try:
        dense = x.contiguous(), res.contiguous()
        flat, tiles = _both_forms(*dense[:1], bias, dense[1], p, seed=21)
        same = lambda a, b: torch.testing.assert_close(a, b, rtol=0, atol=0, equal_nan=True)  # noqa: E731
        if p == 0.0:
            assert_matches(flat, _ref(x, bias, res), dtype)
        else:
            same(bgdr(x, bias, res, p, seed=21), flat)
        if p == 0.0 or N % 8 == 0:
            same(flat, tiles)
    finally:
        policy.bias_flat_config = old  # type: ignore[assignment]


def test_the_fp32_column_quotient_is_true_or_one_under_for_every_narrow_width() -> None:
    # flat_columns' narrow path (N < BLOCK <= 2^14 lanes, so col < 2^15): floor(col · fp32(1 / N)) in fp32, with 1 / N
    # rounded as NVIDIA's div.full.f32 may (up to 2 ulp either way) or exactly (AMD): never over the true quotient,
    # at most one under it, which the kernel's one subtraction corrects.
    import numpy as np

    col = np.arange(1 << 15, dtype=np.int64)
    colf = col.astype(np.float32)
    for n in range(1, 1 << 14):
        exact = np.float32(1.0) / np.float32(n)
        invs = [exact]
        for toward in (np.float32(0.0), np.float32(1.0)):
            inv = exact
            for _ in range(2):
                inv = np.nextafter(inv, toward)
                invs.append(inv)
        true = col // n
        for inv in invs:
            q = (colf * inv).astype(np.int64)
            assert ((q == true) | (q == true - 1)).all(), n

