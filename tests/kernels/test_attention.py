"""attention in Triton's interpreter against torch's SDPA math in fp64: hypothesis properties over head dims, GQA
ratios, S_q/S_k, layouts, dtypes, scales and special values, and one regression test per defect of the research
kernel-edge-cases.md (numbers in the comments)."""

from __future__ import annotations

import math
import os

os.environ["TRITON_INTERPRET"] = "1"  # before any @triton.jit function is created

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rocm_triton_doctor.kernels import launch as launch_mod
from rocm_triton_doctor.kernels import attention, attention_autograd
from rocm_triton_doctor.kernels.tolerances import tolerance
from rocm_triton_doctor.kernels.base import Case
from tests.kernels.helpers import check_in_interpreter, interpreter_cases

F = torch.nn.functional


def assert_matches(out: torch.Tensor, ref: torch.Tensor, dtype: torch.dtype) -> None:
    tol = tolerance(str(dtype).replace("torch.", ""))
    o, r = out.double(), ref.double()
    assert torch.equal(o.isnan(), r.isnan()), "NaN positions differ"
    fin = ~r.isnan()
    err = (o[fin] - r[fin]).abs() - (tol.atol + tol.rtol * r[fin].abs())
    assert err.numel() == 0 or err.max().item() <= 0, f"max excess {err.max().item():.3g}"


def qkv(B: int, H: int, H_kv: int, S_q: int, S_k: int, D: int, dtype: torch.dtype, model_layout: bool | str,
        gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    if model_layout == "fused" and S_q == S_k:
        # One fused QKV projection (B, S, H + 2·H_kv, D), split into views: row strides of (H + 2·H_kv)·D, and K's and
        # V's first element H·D and (H + H_kv)·D elements in (a base the 16-byte rule may not hold for).
        x = torch.randn(B, S_q, H + 2 * H_kv, D, generator=gen).to(dtype).transpose(1, 2)
        return x[:, :H], x[:, H:H + H_kv], x[:, H + H_kv:]

    def make(h: int, s: int) -> torch.Tensor:
        if model_layout:  # (B, S, H, D) as projections give it, seen through .transpose(1, 2)
            return torch.randn(B, s, h, D, generator=gen).to(dtype).transpose(1, 2)
        return torch.randn(B, h, s, D, generator=gen).to(dtype)

    return make(H, S_q), make(H_kv, S_k), make(H_kv, S_k)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(B=st.integers(1, 2), H_kv=st.integers(1, 2), group=st.sampled_from([1, 2, 3]), S_q=st.integers(1, 80),
       S_k=st.integers(1, 80), D=st.sampled_from([3, 8, 16, 24, 32, 40, 48, 64, 72, 80, 96, 128, 160, 256]),
       dtype=st.sampled_from([torch.float32, torch.float16, torch.bfloat16]), causal=st.booleans(),
       model_layout=st.sampled_from([False, True, "fused"]), scale=st.sampled_from([None, 0.3, -0.2, 0.0]),
       special=st.sampled_from([None, "nan", "inf"]), seed=st.integers(0, 2**31 - 1))
def test_attention_matches_sdpa_in_fp64(B: int, H_kv: int, group: int, S_q: int, S_k: int, D: int,
                                        dtype: torch.dtype, causal: bool, model_layout: bool | str, scale: float | None,
                                        special: str | None, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    q, k, v = qkv(B, H_kv * group, H_kv, S_q, S_k, D, dtype, model_layout, g)
    if causal:
        # Not with a causal mask: the reference adds the mask as a -inf bias, so a NaN score or a NaN value times a
        # masked (zero) weight poisons rows that cannot see that key, where the kernel never reads it.
        special = None
    if special == "inf" and scale == 0.0:
        # 0 · inf has no value: ours gives NaN (IEEE), and torch's SDPA reference gives 0 for a single key but NaN for
        # two or more (torch 2.13, fp64 math on the CPU), so there is nothing consistent to hold the kernel to.
        special = None
    if special == "nan":
        v[0, 0, S_k // 2, 0] = float("nan")  # spreads to every query that sees that key, as in the reference
    if special == "inf":
        # An infinite score: its row's softmax is NaN in any precision. (An inf in V is not tested: a weight that
        # underflows to exactly 0 in fp32 but not in fp64 turns it into NaN here and inf in the reference.)
        k[0, 0, S_k // 2, 0] = float("inf")
    out = attention.attention(q, k, v, causal, sm_scale=scale)
    assert out.shape == q.shape and out.dtype == dtype
    assert_matches(out, attention.reference(q, k, v, causal, scale).to(dtype), dtype)


@pytest.mark.parametrize("S_q,S_k", [(40, 70), (70, 40), (1, 65), (65, 1)])
def test_causal_with_s_q_ne_s_k_is_sdpas_top_left(S_q: int, S_k: int) -> None:
    # torch's is_causal: query i sees keys j <= i (top-left), also when S_q != S_k; compared with SDPA's own call.
    g = torch.Generator().manual_seed(1)
    q, k, v = qkv(1, 2, 2, S_q, S_k, 32, torch.float32, False, g)
    ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True)
    assert_matches(attention.attention(q, k, v, True), ref, torch.float32)


@pytest.mark.parametrize("scale", [0.0, -0.125, -3.0])
@pytest.mark.parametrize("causal,S", [(True, 64), (False, 40)])
def test_scale_zero_or_negative_is_computed(scale: float, causal: bool, S: int) -> None:  # edge case 8: all NaN
    g = torch.Generator().manual_seed(2)
    q, k, v = qkv(1, 1, 1, S, S, 64, torch.float32, False, g)
    out = attention.attention(q, k, v, causal, sm_scale=scale)
    assert not out.isnan().any()
    assert_matches(out, attention.reference(q, k, v, causal, scale), torch.float32)


@pytest.mark.parametrize("scale", [float("nan"), float("inf"), 1e38, -1e300])  # 1e38: scaled scores overflow fp32
def test_non_finite_scale_is_refused(scale: float) -> None:
    q = torch.randn(1, 1, 4, 16)
    with pytest.raises(ValueError, match="sm_scale"):
        attention.attention(q, q.clone(), q.clone(), sm_scale=scale)


def test_scale_of_the_wrong_type_is_a_type_error() -> None:
    q = torch.randn(1, 1, 4, 16)
    with pytest.raises(TypeError, match="sm_scale"):
        attention.attention(q, q.clone(), q.clone(), sm_scale="0.1")  # type: ignore[arg-type]


@pytest.mark.parametrize("missing", [0, 1, 2])
@pytest.mark.parametrize("dims", [3, 4])
def test_a_missing_input_is_a_clear_type_error(missing: int, dims: int) -> None:
    """attention(None, k, v) had raised AttributeError from the shape code, and so had the autograd op (session
    24): a TypeError naming the argument instead."""
    qkv: list[torch.Tensor | None] = [torch.randn(*(1,) * (dims - 3), 2, 4, 16) for _ in range(3)]
    qkv[missing] = None
    for call in (attention.attention, attention.autograd_op):
        with pytest.raises(TypeError, match=f"attention: {'qkv'[missing]} must be a torch.Tensor, got NoneType"):
            call(*qkv)


def test_output_aliasing_an_input_is_refused() -> None:  # edge case 12: out=k or out=v gave wrong values
    q, k, v = (torch.randn(1, 2, 150, 32) for _ in range(3))
    for alias in (q, k, v):
        with pytest.raises(ValueError, match="shares memory"):
            attention.attention(q, k, v, out=alias)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("causal", [False, True])
def test_tma_kernel_is_right_with_gqa_and_the_model_layout(dtype: torch.dtype, causal: bool) -> None:  # edge case 5
    g = torch.Generator().manual_seed(3)
    q, k, v = qkv(1, 4, 2, 100, 70, 64, dtype, True, g)
    tma = attention.attention(q, k, v, causal, kernel="tma")
    assert_matches(tma, attention.reference(q, k, v, causal).to(dtype), dtype)
    torch.testing.assert_close(tma, attention.attention(q, k, v, causal, kernel="pointer"), rtol=2e-2, atol=2e-2)


def test_model_layout_is_read_in_place_and_the_output_keeps_it() -> None:
    g = torch.Generator().manual_seed(4)
    q, k, v = qkv(2, 4, 4, 33, 33, 32, torch.float16, True, g)
    out = attention.attention(q, k, v, True)
    assert out.stride() == q.stride()  # (B, S, H, D) memory: .transpose(1, 2).reshape(B, S, H·D) is free
    assert_matches(out, attention.reference(q, k, v, True).half(), torch.float16)
    strided = torch.empty(2, 4, 33, 64, dtype=torch.float16)[..., ::2]  # any out layout, written in place
    attention.attention(q, k, v, True, out=strided)
    torch.testing.assert_close(strided, out)


def test_refusals_are_clear() -> None:  # edge cases 9, 18 and shapes no kernel can compute
    q = torch.randn(1, 4, 8, 16)
    with pytest.raises(ValueError, match="multiple"):
        attention.attention(q, torch.randn(1, 3, 8, 16), torch.randn(1, 3, 8, 16))
    with pytest.raises(ValueError, match="head dim"):
        big = torch.randn(1, 1, 4, 320)
        attention.attention(big, big, big)
    with pytest.raises(ValueError, match="meta"):
        m = torch.randn(1, 1, 4, 16, device="meta")
        attention.attention(m, m, m)
    with pytest.raises(ValueError, match="requires grad"):
        attention.attention(q.requires_grad_(), q.detach(), q.detach())
    with pytest.raises(TypeError, match="mixed dtypes"):
        attention.attention(q.detach(), q.detach().half(), q.detach().half())
    with pytest.raises(ValueError, match="TMA"):
        x = torch.randn(1, 1, 8, 80, dtype=torch.float16)
        attention.attention(x, x, x, kernel="tma")  # D=80 is no power of two: pointer kernel only


def test_empty_shapes() -> None:
    q = torch.randn(1, 2, 3, 16)
    empty_keys = torch.randn(1, 2, 0, 16)
    torch.testing.assert_close(attention.attention(q, empty_keys, empty_keys), torch.zeros(1, 2, 3, 16))  # as SDPA
    assert attention.attention(torch.randn(0, 2, 3, 16), torch.randn(0, 2, 3, 16), torch.randn(0, 2, 3, 16)).shape[0] == 0


# -- the smoke cases and earlier tests (split from tests/test_kernels.py) ------------------------------------

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
        attention.attention(*(torch.ones(1, 1, 8, 320),) * 3)  # 1..256 are supported since issue #16


# -- issue #16 speed work: new tiles, causal tile order, the device-descriptor TMA kernel ----------------------------

def _cfg(bm: int, bn: int, **kw: object) -> dict[str, object]:
    return {"BLOCK_M": bm, "BLOCK_N": bn, "num_warps": 8, "num_stages": 2, **kw}


@pytest.mark.parametrize("kernel,D,cfg", [
    ("pointer", 256, _cfg(64, 32)),  # the Hopper pointer tile for D=256 (was 64x16)
    ("pointer", 96, _cfg(128, 64)),  # D=80/96 run D=128's tiles with the D mask
    ("tma_device", 256, _cfg(128, 64)), ("tma_device", 256, _cfg(128, 32)), ("tma_device", 256, _cfg(64, 64)),
    ("tma_device", 80, _cfg(128, 128)), ("tma_device", 96, _cfg(128, 64, WARP_SPECIALIZE=False)),  # 64 + 16/32
    ("tma_device", 80, _cfg(64, 64, SPLIT_D=False)),  # padded to 128 (zero-filled by the descriptors)
])
@pytest.mark.parametrize("causal", [False, True])
def test_new_tiles_match_the_reference(kernel: str, D: int, cfg: dict[str, object], causal: bool) -> None:
    # GQA 4:2, S_q != S_k and neither a multiple of a tile, the model layout: every mask and bound at once.
    g = torch.Generator().manual_seed(5)
    q, k, v = qkv(1, 4, 2, 100, 150, D, torch.float16, True, g)
    out = attention.attention(q, k, v, causal, kernel=kernel, config=cfg)
    assert_matches(out, attention.reference(q, k, v, causal).half(), torch.float16)


@pytest.mark.parametrize("kernel", ["pointer", "tma_device"])
@pytest.mark.parametrize("bm,bn", [(16, 64), (64, 16), (32, 16), (16, 32)])
@pytest.mark.parametrize("S_q,S_k", [(70, 70), (45, 90), (90, 45)])
def test_causal_diagonal_blocks_with_unequal_tiles(kernel: str, bm: int, bn: int, S_q: int, S_k: int) -> None:
    # BLOCK_M != BLOCK_N: the diagonal spans several key blocks (bm > bn) or a key block spans several query tiles
    # (bn > bm); the query tiles run heaviest-first (reversed), with a partial tile (70 % 16 != 0) among them.
    g = torch.Generator().manual_seed(6)
    q, k, v = qkv(1, 2, 1, S_q, S_k, 32, torch.float16, False, g)
    out = attention.attention(q, k, v, True, kernel=kernel, config=_cfg(bm, bn))
    assert_matches(out, attention.reference(q, k, v, True).half(), torch.float16)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(H_kv=st.integers(1, 2), group=st.sampled_from([1, 3]), S_q=st.integers(1, 80), S_k=st.integers(1, 80),
       D=st.sampled_from([16, 40, 64, 80, 96, 128, 160, 256]), dtype=st.sampled_from([torch.float16, torch.bfloat16]),
       causal=st.booleans(), model_layout=st.booleans(), scale=st.sampled_from([None, -0.2, 0.0]),
       seed=st.integers(0, 2**31 - 1))
def test_device_descriptor_kernel_matches_sdpa_in_fp64(H_kv: int, group: int, S_q: int, S_k: int, D: int,
                                                       dtype: torch.dtype, causal: bool, model_layout: bool,
                                                       scale: float | None, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    q, k, v = qkv(1, H_kv * group, H_kv, S_q, S_k, D, dtype, model_layout, g)
    out = attention.attention(q, k, v, causal, sm_scale=scale, kernel="tma_device")
    assert_matches(out, attention.reference(q, k, v, causal, scale).to(dtype), dtype)


def test_device_descriptor_kernel_refuses_what_tma_cannot_read() -> None:
    x32 = torch.randn(1, 1, 8, 64)
    with pytest.raises(ValueError, match="device-descriptor"):
        attention.attention(x32, x32, x32, kernel="tma_device")  # fp32
    x = torch.randn(1, 1, 8, 20, dtype=torch.float16)  # rows of 40 bytes: not 16-byte aligned
    with pytest.raises(ValueError, match="device-descriptor"):
        attention.attention(x, x, x, kernel="tma_device")
    with pytest.raises(ValueError, match="kernel must be"):
        attention.attention(x, x, x, kernel="flash")


def test_the_policy_picks_the_kernel_by_head_dim_size_and_layout() -> None:
    from rocm_triton_doctor.kernels import policy

    h100 = policy.Target("cuda", "sm_90", 32)
    big = 4.0 * 4 * 32 * 4096 * 4096 * 128
    assert policy.attention_kernel(policy.Target("interpreter", "cpu", 1), 128, big, True) == "pointer"
    assert policy.attention_kernel(h100, 128, big, False) == "pointer"  # a layout TMA cannot read
    assert policy.attention_kernel(policy.Target("hip", "gfx942", 64), 128, big, True) == "pointer"
    if policy.tensor_desc_device_supported(h100):  # Triton with tl.make_tensor_descriptor (3.4+)
        # The H100 tuning run (docs/measurements/2026-11-23-h100-tune-attention.json): device descriptors for D=256
        # and for D=80/96 at large sizes, host descriptors for D=128, the pointer kernel for D=64 and small problems.
        for d in (80, 96):
            assert policy.attention_kernel(h100, d, big, True) == "tma_device", d
        assert policy.attention_kernel(h100, 128, big, True) == "tma"
        assert policy.attention_kernel(h100, 64, big, True) == "pointer"
        assert policy.attention_kernel(h100, 80, 43e9, True) == "pointer"  # S=1024: under TMA_DEVICE_ATTENTION_MIN_FLOPS
        assert policy.attention_kernel(h100, 128, 1e8, True) == "pointer"  # under TMA_ATTENTION_MIN_FLOPS
        # H200 (session 19): non-causal D = 65-127 from 40 GFLOP, D > 128 from 10 GFLOP (below, the pointer kernel)
        assert policy.attention_kernel(h100, 96, 51e9, True, causal=False) == "tma_device"
        assert policy.attention_kernel(h100, 96, 51e9, True, causal=True) == "pointer"
        assert policy.attention_kernel(h100, 96, 20e9, True, causal=False) == "pointer"
        assert policy.attention_kernel(h100, 112, 103e9, True, causal=False) == "pointer"  # 64 + 64 columns: no saving
        # H200 (session 20): D > 128 on the pointer kernel at every size (two column blocks, tiles by grid)
        for d, flops in ((192, 31e9), (160, 415e9), (256, 3e9), (256, big)):
            assert policy.attention_kernel(h100, d, flops, True) == "pointer", (d, flops)
    cfg = policy.attention_config(h100, 256, 2, True, tma=True)
    assert (cfg["BLOCK_M"], cfg["BLOCK_N"]) == (128, 64)
    w4 = {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2}
    w8 = {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 2}
    assert policy.attention_config(h100, 160, 2, True) == w4  # up to 160 columns (128 + 32): 64-row tiles
    assert policy.attention_config(h100, 144, 2, False) == w4
    assert policy.attention_config(h100, 192, 2, True) == w8  # 192 and 256 columns: 128-row tiles ...
    assert policy.attention_config(h100, 256, 2, False) == w8
    assert policy.attention_config(h100, 256, 2, False, small_grid=True) == w4  # ... unless they leave SMs idle


@pytest.mark.parametrize("B,H,S_q,small", [
    # session 28 (H200, 132 SMs): 64-row tiles won where all their programs fit one wave ...
    (1, 16, 125, True), (1, 24, 172, True), (2, 8, 408, True), (1, 24, 136, True),
    # ... and lost where they did not, though 128-row tiles would have left SMs idle: the earlier rule's rows
    (1, 4, 2655, False), (2, 12, 495, False),
    (8, 32, 562, False), (16, 16, 1121, False),
])
def test_a_small_grid_is_one_wave_of_64_row_tiles(B: int, H: int, S_q: int, small: bool) -> None:
    from rocm_triton_doctor.kernels import policy

    assert policy.attention_small_grid(B, H, S_q, 132) is small
    assert policy.attention_small_grid(B, H, S_q, 0) is False  # unknown SM count (the interpreter): never small


def test_an_allocator_is_set_for_device_descriptors_unless_the_caller_set_one() -> None:
    import contextvars

    import triton
    from triton.runtime import _allocation

    from rocm_triton_doctor.kernels import attention_tma

    def fresh() -> object:
        attention_tma.ensure_allocator()
        return _allocation._allocator.get()

    assert contextvars.Context().run(fresh) is attention_tma._scratch

    def mine(size: int, alignment: int, stream: int | None) -> torch.Tensor:
        return torch.empty(size, dtype=torch.int8)

    def theirs() -> object:
        triton.set_allocator(mine)
        return fresh()

    assert contextvars.Context().run(theirs) is mine


def test_head_dims_split_into_two_power_of_two_column_blocks_where_that_saves_columns() -> None:
    from rocm_triton_doctor.kernels.attention_tma import column_blocks

    assert [column_blocks(d) for d in (80, 96, 40, 72, 160, 192)] == [(64, 16), (64, 32), (32, 16), (64, 16),
                                                                        (128, 32), (128, 64)]
    assert [column_blocks(d) for d in (64, 128, 256, 112, 24, 8)] == [(64, 0), (128, 0), (256, 0), (128, 0),
                                                                        (32, 0), (16, 0)]
    assert column_blocks(80, split=False) == (128, 0)


def test_a_cached_launch_plan_reuses_its_decisions_and_stays_right() -> None:
    # attention() keeps the pointer kernel's launch per call signature (shape, strides, dtype, alignment, options);
    # a second call with the same signature reuses it, and another layout gets its own.
    attention.clear_plans()
    g = torch.Generator().manual_seed(21)
    q, k, v = (torch.randn(1, 2, 17, 16, generator=g) for _ in range(3))
    ref = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True)
    first = attention.attention(q, k, v, True)
    assert len(attention._PLANS) == 1
    again = attention.attention(q, k, v, True)
    assert len(attention._PLANS) == 1 and torch.equal(first, again)
    qt = q.transpose(1, 2).contiguous().transpose(1, 2)  # the model's (B, S, H, D) layout: new strides, new plan
    torch.testing.assert_close(attention.attention(qt, k, v, True).double(), ref, rtol=2e-5, atol=2e-5)
    assert len(attention._PLANS) == 2
    lse = torch.empty(1, 2, 17)
    attention.attention(q, k, v, True, lse=lse)  # the statistics are part of the signature
    assert len(attention._PLANS) == 3 and torch.isfinite(lse).all()


# -- the fuzz round of 2026-11-23 (/work/staging/fuzz-s6 reproducers, summarised in the closing note) ------------------

def test_lse_must_be_what_the_kernel_writes() -> None:
    q = k = v = torch.randn(1, 2, 20, 16)
    for bad, match in ((torch.zeros(1, 2, 40)[:, :, ::2], "contiguous"), (torch.zeros(1, 2, 20, dtype=torch.float16),
                       "fp32"), (torch.zeros(1, 2, 19), "shape")):
        with pytest.raises(ValueError, match=match):
            attention.attention(q, k, v, lse=bad)


def test_a_scale_that_underflows_fp32_weighs_every_key_the_same() -> None:
    g = torch.Generator().manual_seed(5)
    q, k, v = (torch.randn(1, 1, 9, 16, generator=g) for _ in range(3))
    for scale, causal in ((1e-50, False), (-1e-50, True)):
        got = attention.attention(q, k, v, causal, sm_scale=scale)
        s = (q.double() @ k.double().transpose(-1, -2)) * scale  # by hand: torch's SDPA takes sqrt(scale)
        if causal:
            s = s.masked_fill(torch.ones(9, 9, dtype=torch.bool).triu(1), float("-inf"))
        want = torch.softmax(s, -1) @ v.double()
        torch.testing.assert_close(got.double(), want, rtol=1e-5, atol=1e-5)


def test_zero_head_dim_needs_no_scale() -> None:
    q = torch.randn(1, 2, 4, 0)
    assert attention.attention(q, q, q).shape == (1, 2, 4, 0)


def test_views_past_32_bit_offsets_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # The kernels index rows with 32-bit offsets; a view reaching 2^31 elements had segfaulted. The limit is lowered
    # here so that an ordinary tensor stands in for a 16 GB one.
    from rocm_triton_doctor.kernels import argcheck

    monkeypatch.setattr(argcheck, "INT32_LIMIT", 1000)
    attention.clear_plans()
    q = torch.randn(1, 2, 40, 16)
    with pytest.raises(ValueError, match="2\\^31 elements"):
        attention.attention(q, q, q)


def test_causal_mid_size_problems_take_half_height_tiles_on_nvidia() -> None:
    from rocm_triton_doctor.kernels import policy

    h100 = policy.Target("cuda", "sm_90", 32)
    assert policy.attention_config(h100, 128, 2, True, mid=True)["BLOCK_M"] == 64
    assert policy.attention_config(h100, 128, 2, True)["BLOCK_M"] == 128  # large problems: unchanged
    assert policy.attention_config(h100, 128, 2, False, mid=True)["BLOCK_M"] == 128  # not causal: unchanged
    assert policy.attention_config(h100, 256, 2, True, mid=True)["num_warps"] == 8  # D = 256: its own rule (grid)
    mi300 = policy.Target("hip", "gfx942", 64)
    assert policy.attention_config(mi300, 128, 2, True, mid=True) == policy.attention_config(mi300, 128, 2, True)


def test_a_short_key_range_takes_64_row_tiles_on_the_pointer_kernel_on_nvidia() -> None:
    # S_k up to SHORT_KEYS (one or two key tiles): 64x32 w4 in one stage up to SHORT_KEYS_NARROW, 64x64 w4 s2 past it
    # (D <= 64 there keeps 128x64 w8), 16 bits at D <= 128 only; and the pointer kernel, not the descriptor kernels.
    from rocm_triton_doctor.kernels import policy

    h200 = policy.Target("cuda", "sm_90", 32)
    tiles = lambda c: (c["BLOCK_M"], c["BLOCK_N"], c["num_warps"], c["num_stages"])  # noqa: E731
    assert tiles(policy.attention_config(h200, 128, 2, False, keys=89)) == (64, 32, 4, 1)
    assert tiles(policy.attention_config(h200, 96, 2, True, mid=True, keys=policy.SHORT_KEYS_NARROW)) == (64, 32, 4, 1)
    assert tiles(policy.attention_config(h200, 128, 2, True, keys=100)) == (64, 64, 4, 2)
    assert tiles(policy.attention_config(h200, 64, 2, False, keys=128)) == (128, 64, 8, 3)
    for keys in (0, policy.SHORT_KEYS + 1):  # not given, or longer: the tiles before
        assert policy.attention_config(h200, 128, 2, False, keys=keys) == policy.attention_config(h200, 128, 2, False)
    assert policy.attention_config(h200, 128, 4, False, keys=89) == policy.attention_config(h200, 128, 4, False)
    assert policy.attention_config(h200, 160, 2, False, keys=89) == policy.attention_config(h200, 160, 2, False)
    mi300 = policy.Target("hip", "gfx942", 64)
    assert policy.attention_config(mi300, 128, 2, False, keys=89) == policy.attention_config(mi300, 128, 2, False)
    big = 4.0 * 4 * 32 * 8192 * 89 * 128
    with_tma = policy.attention_kernel(h200, 128, 1e12, True)
    assert policy.attention_kernel(h200, 128, big, True, keys=89) == "pointer"
    assert policy.attention_kernel(h200, 128, 1e12, True, keys=policy.SHORT_KEYS + 1) == with_tma
    assert policy.attention_kernel(h200, 256, 1e12, True, keys=89) == policy.attention_kernel(h200, 256, 1e12, True)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("S_k", [1, 17, 89, 128])
def test_short_key_tiles_match_the_reference(causal: bool, S_k: int) -> None:
    # The short-key tiles on long query blocks: GQA, a partial last key tile, top-left causal rows with no key.
    g = torch.Generator().manual_seed(7)
    q, k, v = qkv(1, 4, 2, 150, S_k, 96, torch.float16, True, g)
    for cfg in (_cfg(64, 32), _cfg(64, 64, num_stages=2)):
        out = attention.attention(q, k, v, causal, kernel="pointer", config=cfg)
        assert_matches(out, attention.reference(q, k, v, causal).half(), torch.float16)


@pytest.mark.parametrize("bad", ["False", "no", 2, None, [True]])
def test_causal_must_be_a_bool(bad: object) -> None:
    # Fuzz round 3: causal="False" (truthy) had silently run causal attention; SDPA refuses it too.
    q = torch.randn(1, 1, 4, 8)
    for fn in (attention.attention, attention_autograd.autograd_op):
        with pytest.raises(TypeError, match="causal must be True or False"):
            fn(q, q, q, causal=bad)  # type: ignore[arg-type]
    assert torch.equal(attention.attention(q, q, q, causal=np.bool_(True)), attention.attention(q, q, q, causal=True))
    assert torch.equal(attention.attention(q, q, q, causal=0), attention.attention(q, q, q, causal=False))


def test_fp32_on_hopper_takes_two_stages_where_three_overflow_shared_memory() -> None:
    # Compile-only sm_90: fp32 D=128 in 3 stages of 128x64 tiles needs 256 KiB of shared memory (the H100 has 227).
    from rocm_triton_doctor.kernels import policy

    h100 = policy.target_from_name("sm_90")
    assert policy.attention_config(h100, 128, 4)["num_stages"] == 2
    assert policy.attention_config(h100, 128, 4, causal=True, mid=True)["num_stages"] == 2
    assert policy.attention_config(h100, 128, 2)["num_stages"] == 3 and policy.attention_config(h100, 64, 4)["num_stages"] == 3



def test_row_strides_pass_the_alignment_triton_cannot_see() -> None:
    # A head dim of 40 or 72 elements gives strides that are multiples of 8, not 16: Triton's specialisation only
    # knows "divisible by 16", and the pointer kernels had compiled to 2-byte loads (no cp.async) there, 0.45x SDPA
    # on an H100 (the session 16 shape hunt). row_strides passes the common power of two as a constexpr.
    q = torch.empty(2, 3, 17, 40)
    k = torch.empty(2, 1, 19, 40)  # MQA: the size-1 head dim's stride counts as 0
    div, st = attention.row_strides(q, k)
    assert div == 8 and st == [3 * 17 * 5, 17 * 5, 5, 1, 19 * 5, 0, 5, 1]
    bshd = torch.empty(2, 17, 5, 40).transpose(1, 2)  # the model layout: row stride H*D = 200
    assert attention.row_strides(bshd)[0] == 8
    assert attention.row_strides(torch.empty(1, 2, 9, 3))[0] == 1  # D = 3: rows start anywhere
    odd = torch.empty(1, 4, 9, 64).as_strided((1, 4, 9, 64), (7, 9 * 64, 64, 1))  # B = 1: its stride is never used
    assert attention.row_strides(odd)[0] == 16


def test_the_forward_and_backward_launch_with_the_stride_divisor_and_stay_right() -> None:
    attention.clear_plans()
    g = torch.Generator().manual_seed(16)
    q, k, v = (torch.randn(1, 17, 2, 40, generator=g).transpose(1, 2).requires_grad_() for _ in range(3))
    out = attention.autograd_op(q, k, v, True)
    plan = next(iter(attention._PLANS.values()))
    assert plan[1].kwargs["DIV"] == 8
    ref = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True)
    torch.testing.assert_close(out.double(), ref, rtol=2e-5, atol=2e-5)
    grads = torch.autograd.grad(out, (q, k, v), torch.ones_like(out))
    want = torch.autograd.grad(ref, (q, k, v), torch.ones_like(ref))
    for got, w in zip(grads, want):
        torch.testing.assert_close(got.double(), w.double(), rtol=1e-4, atol=1e-4)


def test_split_head_dims_take_128x64_tiles_in_three_stages_on_hopper() -> None:
    # H100 (docs/measurements/2026-11-28-h100-s16-tune-dims*.json): D = 72/80/96 split 0.85-0.92x SDPA at S = 4096
    # against 0.72-0.77x padded to 128; D = 160/192 0.63-0.75x against 0.54-0.63x in two stages.
    from rocm_triton_doctor.kernels import policy

    h100 = policy.target_from_name("sm_90")
    cfg = policy.attention_config(h100, 128, 2, True, tma=True, split=True)
    assert (cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["num_stages"], cfg["SPLIT_D"]) == (128, 64, 3, True)
    assert policy.attention_config(h100, 256, 2, tma=True, split=True) == cfg  # the same tiles above 128
    assert policy.attention_config(h100, 128, 2, tma=True)["BLOCK_N"] == 128  # D = 128 itself: unchanged
    assert policy.attention_config(h100, 256, 2, tma=True)["num_stages"] == 2  # D = 256 padded: two stages fit

_GPU_KERNELS = """
import json
import torch
from rocm_triton_doctor.kernels import attention, policy
from rocm_triton_doctor.kernels.tolerances import tolerance
t = policy.target_for_device("cuda")
kernels = ["auto", "pointer"] + (["tma"] if policy.tma_supported(t) else []) + (
    ["tma_device"] if policy.tensor_desc_device_supported(t) else [])
out = {}
for (B, H, Hkv, S, Sk, D, causal) in ((2, 8, 2, 1024, 768, 128, False), (2, 8, 8, 640, 1024, 128, True),
                                       (4, 32, 8, 4096, 4096, 128, False), (2, 8, 2, 333, 205, 64, True)):
    q = torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(B, Hkv, Sk, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal,
                                                           enable_gqa=Hkv != H)
    tol = tolerance("bfloat16")
    for kern in kernels:
        o = attention.attention(q, k, v, causal, kernel=kern).float()
        out[f"{kern} {(B, H, Hkv, S, Sk, D, causal)}"] = float(((o - ref).abs() / (tol.atol + tol.rtol * ref.abs())).max())
print(json.dumps(out))
"""


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_every_attention_kernel_compiles_and_matches_on_the_gpu() -> None:  # pragma: no cover - the lent GPU
    # Each kernel this GPU offers (auto, pointer, and on Hopper both TMA kernels), on GQA, S_q != S_k and the large
    # D = 128 shape whose default is the host-TMA kernel: that kernel had failed to compile on Triton 3.6 after a
    # helper got a string default (test_jit_defaults.py), and no GPU test ran it. In a subprocess (no interpreter).
    from tests.kernels.helpers import gpu_script_json

    ratios = gpu_script_json(_GPU_KERNELS)
    assert ratios and all(r <= 1.0 for r in ratios.values()), ratios


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(B=st.integers(1, 2), H_kv=st.integers(1, 2), group=st.sampled_from([1, 2, 4]), S_q=st.integers(1, 20),
       S_k=st.integers(1, 150), D=st.sampled_from([8, 24, 40, 64, 80, 128, 256]),
       dtype=st.sampled_from([torch.float32, torch.float16, torch.bfloat16]),
       model_layout=st.sampled_from([False, True, "fused"]), scale=st.sampled_from([None, 0.3, -0.2, 0.0]),
       special=st.sampled_from([None, "nan", "inf", "-inf"]), splits=st.integers(1, 6), bm=st.sampled_from([16, 32]),
       bn=st.sampled_from([16, 32]), seed=st.integers(0, 2**31 - 1))
def test_split_keys_match_sdpa_in_fp64(B: int, H_kv: int, group: int, S_q: int, S_k: int, D: int, dtype: torch.dtype,
                                       model_layout: bool | str, scale: float | None, special: str | None, splits: int,
                                       bm: int, bn: int, seed: int) -> None:
    # attention_split.py: the query heads of a group packed into one tile's rows, the keys split into chunks merged by
    # their log-sum-exp; a chunk whose scores are all -inf (a row that sees no finite key there) weighs nothing.
    g = torch.Generator().manual_seed(seed)
    q, k, v = qkv(B, H_kv * group, H_kv, S_q, S_k, D, dtype, model_layout, g)
    if special == "inf" and scale == 0.0:
        special = None  # no consistent reference (test_attention_matches_sdpa_in_fp64 says why)
    if special == "nan":
        v[0, 0, S_k // 2, 0] = float("nan")
    if special == "inf":
        k[0, 0, S_k // 2, 0] = float("inf")
    if special == "-inf" and scale:
        k[..., : S_k // 2, :] = float("-inf") if scale > 0 else float("inf")  # whole chunks of keys weigh nothing
        q = q.abs() + 0.1  # every score of those keys -inf: positive queries times the -inf keys
    lse = torch.empty(q.shape[:3])
    cfg = {"BLOCK_M": bm, "BLOCK_N": bn, "SPLITS": splits}
    out = attention.attention(q, k, v, False, sm_scale=scale, config=cfg, lse=lse)
    ref = attention.reference(q, k, v, False, scale)
    assert_matches(out, ref.to(dtype), dtype)
    lse_ref = torch.empty(q.shape[:3])
    attention.attention(q, k, v, False, sm_scale=scale, config={"BLOCK_M": 16, "BLOCK_N": 16}, lse=lse_ref)
    same = lse_ref.isfinite()
    assert torch.equal(lse.isnan(), lse_ref.isnan()) and torch.equal(lse[~same & ~lse.isnan()], lse_ref[~same & ~lse.isnan()])
    assert torch.allclose(lse[same], lse_ref[same], atol=1e-4, rtol=1e-5)


def test_split_keys_are_refused_with_a_causal_mask_or_another_kernel() -> None:
    q = torch.randn(1, 2, 3, 16)
    with pytest.raises(ValueError, match="SPLITS"):
        attention.attention(q, q, q, True, config={"BLOCK_M": 16, "BLOCK_N": 16, "SPLITS": 2})
    with pytest.raises(ValueError, match="SPLITS"):
        attention.attention(q, q, q, False, config={"BLOCK_M": 16, "BLOCK_N": 16, "SPLITS": 0})


def test_the_policy_splits_keys_only_where_the_grid_leaves_the_device_idle() -> None:
    from rocm_triton_doctor.kernels import policy, policy_attention

    h100 = policy.Target("cuda", "sm_90", 32)
    split = policy.attention_split_config
    # decode, 32 query heads over 8 key heads, 8k keys: 8 packed tiles of 4 rows, split to about one program an SM
    cfg = split(h100, 1, 32, 8, 1, 8192, 128, 2, 132)
    assert cfg is not None and cfg["BLOCK_M"] == 16 and cfg["SPLITS"] == 17
    assert split(h100, 1, 32, 32, 1, 8192, 128, 2, 132)["SPLITS"] == 5  # type: ignore[index]
    # a decode row fits a tile: packed whatever the grid, split only as the keys allow
    assert split(h100, 1, 32, 8, 1, 300, 128, 2, 132)["SPLITS"] == 1  # type: ignore[index]
    assert split(h100, 64, 32, 8, 1, 8192, 128, 2, 132)["SPLITS"] == 1  # type: ignore[index]
    # query blocks past one tile: only a grid that leaves the device idle, against long keys
    assert split(h100, 1, 32, 8, 128, 8192, 128, 2, 132)["BLOCK_M"] == 64  # type: ignore[index]
    assert split(h100, 8, 32, 8, 128, 8192, 128, 2, 132) is None  # 512 tiles already
    assert split(h100, 1, 8, 8, 128, 511, 64, 2, 132) is None and split(h100, 1, 8, 8, 128, 512, 64, 2, 132)
    assert split(h100, 1, 32, 8, 1, 8192, 128, 2, 0) is None  # device unknown
    assert split(policy.Target("interpreter", "cpu", 32), 1, 32, 8, 1, 8192, 128, 2, 132) is None
    # a split never takes fewer than SPLIT_MIN_KEYS keys
    assert split(h100, 1, 1, 1, 1, 1024, 64, 2, 132)["SPLITS"] == 1024 // policy_attention.SPLIT_MIN_KEYS  # type: ignore[index]
    mi300 = policy.Target("hip", "gfx942", 64)
    hip = split(mi300, 1, 32, 8, 1, 8192, 128, 2, 304)
    assert hip is not None and hip["num_stages"] == 1 and hip["BLOCK_N"] == 32


def test_visible_pairs_count_the_top_left_causal_mask() -> None:
    # The policy's size estimate: half of S_q·S_k had made 950 queries over 97 keys (causal) a tenth of their work.
    assert attention.visible_pairs(4, 6, False) == 24
    assert attention.visible_pairs(4, 4, True) == 10  # 1 + 2 + 3 + 4
    assert attention.visible_pairs(3, 8, True) == 6  # query i sees keys 0..i only
    assert attention.visible_pairs(6, 2, True) == 3 + 4 * 2  # rows past S_k see every key
    q = torch.randn(1, 1, 6, 8)
    k = torch.randn(1, 1, 2, 8)
    mask = torch.ones(6, 2, dtype=torch.bool).tril()
    assert int(mask.sum()) == attention.visible_pairs(6, 2, True)
    assert q.shape[2] * k.shape[2] == attention.visible_pairs(6, 2, False)


def test_split_keys_write_into_a_strided_out_and_take_the_plan_cache() -> None:
    # attention_split.SplitLaunch keeps the strides of the call it was planned for: a second call with the same
    # signature (same shapes, strides, alignment) reuses it and stays right; `out` in another layout is written in place.
    g = torch.Generator().manual_seed(3)
    q, k, v = qkv(1, 4, 2, 3, 70, 40, torch.float16, True, g)
    cfg = {"BLOCK_M": 16, "BLOCK_N": 16, "SPLITS": 3}
    out = torch.empty(1, 3, 4, 40, dtype=torch.float16).transpose(1, 2)  # (B, H, S, D) seen through a transpose
    assert attention.attention(q, k, v, out=out, config=cfg) is out
    assert_matches(out, attention.reference(q, k, v, False).to(torch.float16), torch.float16)
    out2 = torch.full((1, 4, 3, 40), float("nan"), dtype=torch.float16)
    attention.attention(q, k, v, out=out2, config=cfg)
    assert torch.equal(out2, out.contiguous())


def test_the_policy_s_split_launch_is_planned_once_and_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    from rocm_triton_doctor.kernels import policy

    monkeypatch.setattr(policy, "attention_split_config",
                        lambda *a: {"BLOCK_M": 16, "BLOCK_N": 16, "num_warps": 4, "num_stages": 1, "SPLITS": 4})
    attention.clear_plans()
    g = torch.Generator().manual_seed(4)
    q, k, v = qkv(2, 6, 2, 1, 90, 64, torch.bfloat16, False, g)
    ref = attention.reference(q, k, v, False).to(torch.bfloat16)
    first = attention.attention(q, k, v)
    plans = [p for p in attention._PLANS.values() if p[0] == "split"]
    assert len(plans) == 1
    second = attention.attention(q, k, v)  # the plan's launch, nothing re-derived
    assert_matches(first, ref, torch.bfloat16)
    assert torch.equal(first, second)
    attention.clear_plans()


@pytest.mark.parametrize("D", [72, 80, 96, 144, 160, 192])
@pytest.mark.parametrize("causal", [False, True])
def test_the_pointer_kernel_s_two_column_blocks_match_one_padded_block(D: int, causal: bool) -> None:
    # Session 20: attn_fwd_kernel computes a head dim that is not a power of two in two column blocks (160 as 128 + 32;
    # 72 as 64 + 16, whose second block is masked on D). The same inputs with the split off (one block padded to the
    # power of two above D) and the fp64 reference must agree, with GQA, the model layout, S_q != S_k, odd tiles, lse.
    from rocm_triton_doctor.kernels import policy

    assert policy.column_blocks(D)[1] > 0 and policy.pointer_column_split(policy.Target("interpreter", "cpu", 1), D)
    g = torch.Generator().manual_seed(D)
    q, k, v = qkv(1, 4, 2, 37, 70, D, torch.float32, True, g)
    ref = attention.reference(q, k, v, causal)
    outs = []
    for split in (True, False):
        lse = torch.empty(1, 4, 37)
        cfg = {"BLOCK_M": 32, "BLOCK_N": 32, "num_warps": 4, "num_stages": 1, "SPLIT_D": split}
        outs.append((attention.attention(q, k, v, causal, config=cfg, lse=lse), lse))
        assert_matches(outs[-1][0], ref, torch.float32)
    torch.testing.assert_close(outs[0][0], outs[1][0], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(outs[0][1], outs[1][1], rtol=1e-5, atol=1e-5)


def test_the_pointer_kernel_splits_head_dims_past_64_that_save_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    from rocm_triton_doctor.kernels import policy

    t = policy.Target("interpreter", "cpu", 1)
    assert not policy.pointer_column_split(t, 40) and policy.pointer_column_split(t, 80)
    seen: list[dict[str, object]] = []
    real = launch_mod.launch
    monkeypatch.setattr(launch_mod, "launch", lambda fn, grid, *a, **kw: seen.append(kw) or real(fn, grid, *a, **kw))
    for D, want in ((160, (128, 32)), (80, (64, 16)), (112, (128, 0)), (40, (64, 0)), (256, (256, 0))):
        attention.clear_plans()
        x = torch.randn(1, 2, 9, D)
        attention.attention(x, x.clone(), x.clone())
        assert (seen[-1]["BLOCK_D"], seen[-1]["BLOCK_D2"]) == want, D


def test_sdpa_shapes_with_other_leading_dims() -> None:
    # SDPA takes (H, S, D) and (..., H, S, D): the leading dims as the batch (views), the output in q's shape; GQA
    # over dim -3 as SDPA's enable_gqa reads it; out= and lse in those shapes; leading dims that do not fold refused.
    g = torch.Generator().manual_seed(11)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    q, k = torch.randn(4, 9, 16, generator=g), torch.randn(2, 7, 16, generator=g)
    v = torch.randn(2, 7, 16, generator=g)
    for causal in (False, True):
        got = attention.attention(q, k, v, causal)
        assert got.shape == q.shape
        torch.testing.assert_close(got, sdpa(q, k, v, is_causal=causal, enable_gqa=True), atol=1e-4, rtol=1e-4)
    q5, k5 = torch.randn(2, 3, 4, 9, 16, generator=g), torch.randn(2, 3, 4, 7, 16, generator=g)
    out = torch.empty_like(q5)
    lse = torch.empty(2, 3, 4, 9)
    assert attention.attention(q5, k5, k5, True, out=out, lse=lse) is out
    torch.testing.assert_close(out, sdpa(q5, k5, k5, is_causal=True), atol=1e-4, rtol=1e-4)
    scores = (q5 @ k5.transpose(-1, -2)) / 4.0 + torch.triu(torch.full((9, 7), float("-inf")), 1)
    torch.testing.assert_close(lse, torch.logsumexp(scores, -1) / math.log(2), atol=1e-4, rtol=1e-4)
    with pytest.raises(ValueError, match="leading dimensions of q .* do not fold into one batch dimension"):
        attention.attention(q5.transpose(0, 1), k5.transpose(0, 1), k5.transpose(0, 1))
    qa = q5.clone().requires_grad_()
    attention.autograd_op(qa, k5, k5, True).square().sum().backward()
    qr = q5.clone().requires_grad_()
    sdpa(qr, k5, k5, is_causal=True).square().sum().backward()
    torch.testing.assert_close(qa.grad, qr.grad, atol=1e-3, rtol=1e-3)
