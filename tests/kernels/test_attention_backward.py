"""Attention backward (issue #17) in the interpreter: dQ, dK, dV of attention.autograd_op against fp64 torch autograd
of SDPA's math (attention.reference), causal and not, GQA/MQA, S_q != S_k, padded head dims, the model's transposed
layout, any scale sign, GQA parts, planned calls, and dQ added with atomics (DQ_ATOMIC) or by its own kernel under
torch's deterministic mode. The custom ops' registrations and torch.compile: test_attention_autograd.py."""

from __future__ import annotations

import pytest
import torch

from rocm_triton_doctor.kernels import attention, attention_autograd, attention_backward, call_plans, policy
from tests.kernels.grads import assert_grads

# (B, H, H_kv, S_q, S_k, D, causal, dtype, model_layout): tiny, the interpreter runs every program in Python.
GRAD_CASES = [
    (1, 2, 2, 20, 20, 16, False, torch.float32, False),
    (1, 2, 2, 37, 37, 32, True, torch.float32, False),
    (1, 4, 2, 24, 40, 80, True, torch.float16, True),  # GQA 4:2, keys longer, D=80 padded to 128, (B, S, H, D)
    (1, 4, 1, 30, 18, 16, True, torch.bfloat16, False),  # MQA, queries longer than keys (causal top-left)
    (2, 2, 1, 17, 33, 128, False, torch.float32, True),
    (1, 2, 2, 33, 21, 32, False, torch.bfloat16, True),
    # head dims whose rows are 16-byte aligned but whose strides are not multiples of 16 (DIV = 8, session 16)
    (1, 4, 2, 19, 27, 40, True, torch.bfloat16, True),
    (1, 2, 1, 23, 23, 72, False, torch.float16, False),
]


def _leaves(B: int, H: int, H_kv: int, S_q: int, S_k: int, D: int, dtype: torch.dtype, model_layout: bool,
            seed: int = 0) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)

    def make(h: int, s: int) -> torch.Tensor:
        if model_layout:  # (B, S, H, D) as a projection makes it, read through .transpose(1, 2)
            return torch.randn(B, s, h, D, generator=gen).to(dtype).transpose(1, 2).requires_grad_()
        return torch.randn(B, h, s, D, generator=gen).to(dtype).requires_grad_()

    q, k, v = make(H, S_q), make(H_kv, S_k), make(H_kv, S_k)
    return q, k, v, torch.randn(B, H, S_q, D, generator=gen).to(dtype)


@pytest.mark.parametrize("B,H,H_kv,S_q,S_k,D,causal,dtype,model_layout", GRAD_CASES,
                         ids=[f"H{c[1]}-{c[2]} S{c[3]}x{c[4]} D{c[5]}{' causal' if c[6] else ''} "
                              f"{str(c[7])[6:]}{' BSHD' if c[8] else ''}" for c in GRAD_CASES])
def test_gradients_match_fp64_autograd(B: int, H: int, H_kv: int, S_q: int, S_k: int, D: int, causal: bool,
                                       dtype: torch.dtype, model_layout: bool) -> None:
    q, k, v, do = _leaves(B, H, H_kv, S_q, S_k, D, dtype, model_layout)
    out = attention.autograd_op(q, k, v, causal)
    assert out.dtype == dtype and out.shape == q.shape
    out.backward(do)
    assert_grads(lambda qd, kd, vd: attention.reference(qd, kd, vd, causal), (q, k, v), do, (q.grad, k.grad, v.grad))


@pytest.mark.parametrize("scale", [-0.7, 0.0, 2.5])
def test_any_finite_scale_sign_gives_the_gradient(scale: float) -> None:
    # The kernels fold the scale's sign into Q (dQ = s·dS·K, dK = |s|·dSᵀ·Q'); scale 0: uniform P, dQ = dK = 0.
    q, k, v, do = _leaves(1, 2, 1, 19, 23, 16, torch.float32, False, seed=1)
    attention.autograd_op(q, k, v, True, sm_scale=scale).backward(do)
    assert_grads(lambda qd, kd, vd: attention.reference(qd, kd, vd, True, scale), (q, k, v), do,
                 (q.grad, k.grad, v.grad))


@pytest.mark.parametrize("tiles", [{"BLOCK_M1": 32, "BLOCK_N1": 16, "BLOCK_M2": 16, "BLOCK_N2": 32},
                                   {"BLOCK_M1": 16, "BLOCK_N1": 64, "BLOCK_M2": 64, "BLOCK_N2": 16}])
def test_tile_shapes_either_way_round(tiles: dict[str, int]) -> None:
    # The causal dK/dV start (the query block holding the key block's first key) and the dQ stop at the diagonal,
    # with query tiles taller and shorter than key tiles, lengths not multiples of either.
    q, k, v, do = _leaves(1, 2, 2, 45, 38, 32, torch.float32, False, seed=2)
    with torch.no_grad():
        lse = torch.empty(1, 2, 45)
        o = attention.attention(q, k, v, True, lse=lse)
    grads = attention_backward.attention_backward(do, q.detach(), k.detach(), v.detach(), o, lse, True, 32 ** -0.5,
                                                  config={**tiles, "num_warps": 4, "num_stages": 1})
    assert_grads(lambda qd, kd, vd: attention.reference(qd, kd, vd, True), (q, k, v), do, grads)


def test_gqa_sum_is_deterministic() -> None:
    # dK/dV of a KV head sum its query heads inside one program (no atomics): two runs agree bit for bit.
    runs = []
    for _ in range(2):
        q, k, v, do = _leaves(1, 4, 1, 21, 21, 16, torch.float32, False, seed=3)
        attention.autograd_op(q, k, v, False).backward(do)
        runs.append((q.grad, k.grad, v.grad))
    for a, b in zip(*runs):
        assert a is not None and b is not None and torch.equal(a, b)


def test_no_keys_gives_zero_gradients_and_no_queries_too() -> None:
    # S_k = 0: every row sees no key (the only fully masked rows top-left causal attention has): O = 0, dQ = 0.
    q, k, v, do = _leaves(1, 2, 2, 5, 0, 16, torch.float32, False)
    out = attention.autograd_op(q, k, v, True)
    out.backward(do)
    assert torch.equal(out, torch.zeros_like(out)) and q.grad is not None and torch.equal(q.grad, torch.zeros_like(q))
    assert k.grad is not None and k.grad.shape == k.shape
    q, k, v, do = _leaves(1, 2, 2, 0, 7, 16, torch.float32, False)
    attention.autograd_op(q, k, v).backward(do)
    assert k.grad is not None and v.grad is not None and not k.grad.any() and not v.grad.any()


def test_bad_scales_are_refused_clearly() -> None:
    q, k, v, _ = _leaves(1, 1, 1, 4, 4, 16, torch.float32, False)
    with pytest.raises(TypeError, match="sm_scale"):
        attention.autograd_op(q, k, v, sm_scale=True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="finite"):
        attention.autograd_op(q, k, v, sm_scale=float("inf"))


def test_expanded_output_gradient_and_the_widest_head_dim() -> None:
    # out.sum() hands the backward a dO of stride 0 everywhere (read in place); D=256 is the largest head dim.
    q, k, v, _ = _leaves(1, 2, 1, 20, 24, 256, torch.float32, False, seed=6)
    attention.autograd_op(q, k, v, True).sum().backward()
    assert_grads(lambda qd, kd, vd: attention.reference(qd, kd, vd, True), (q, k, v), torch.ones(1, 2, 20, 256),
                 (q.grad, k.grad, v.grad))


def test_the_backward_policy_takes_larger_tiles_for_long_sequences_on_nvidia_only() -> None:
    from rocm_triton_doctor.kernels import policy

    h100, mi300 = policy.Target("cuda", "sm_90", 32), policy.Target("hip", "gfx942", 64)
    long = policy.attention_backward_config(h100, 128, 2, True, True)
    assert (long["BLOCK_M1"], long["BLOCK_N1"], long["num_warps"]) == (64, 128, 8)
    assert policy.attention_backward_config(h100, 128, 2, True)["BLOCK_N1"] == 64  # S < 4096: unchanged
    assert policy.attention_backward_config(h100, 64, 2, True, True)["BLOCK_M1"] == 64  # D <= 64: its own tiles
    assert policy.attention_backward_config(mi300, 128, 2, True, True) == policy.attention_backward_config(mi300, 128, 2)


@pytest.mark.parametrize("causal", [False, True])
def test_a_key_holding_minus_inf_gets_zero_gradients_when_queries_pad_the_block(causal: bool) -> None:
    # Fuzz round 3: padded query rows (S_q=9 in a 16-row block) met a -inf key as 0·(-inf) = NaN and poisoned dK/dV.
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(1, 1, 9, 16, generator=gen).abs()  # positive queries: the key's score is -inf for every query
    k, v = torch.randn(1, 1, 8, 16, generator=gen), torch.randn(1, 1, 8, 16, generator=gen)
    k[0, 0, 4, 0] = float("-inf")
    qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
    dq, dk, dv = torch.autograd.grad(attention_autograd.autograd_op(qg, kg, vg, causal).sum(), (qg, kg, vg))
    qd, kd, vd = (t.double().requires_grad_() for t in (q, k, v))
    ref = torch.autograd.grad(torch.nn.functional.scaled_dot_product_attention(qd, kd, vd, is_causal=causal).sum(),
                              (qd, kd, vd))
    for got, want in zip((dk, dv), ref[1:]):
        assert not got.isnan().any()
        torch.testing.assert_close(got.double(), want, rtol=1e-4, atol=1e-4)
    # dQ's column 0 is 0·(-inf) in torch as in ours (dS is 0 for that key, K holds -inf): NaN in both, as torch has it.
    torch.testing.assert_close(dq.double(), ref[0], rtol=1e-4, atol=1e-4, equal_nan=True)


@pytest.mark.parametrize("split", [1, 2, 3, 5])
def test_gqa_parts_sum_to_the_whole_group(split: int) -> None:
    # KV_SPLIT cuts a KV head's 5 query heads into parts (2 + 2 + 1 at 3; 5 capped to 5 parts of one) whose fp32
    # partial dK/dV are summed after the kernel: the same gradients as one program over the whole group.
    q, k, v, do = _leaves(1, 5, 1, 19, 26, 16, torch.float32, True, seed=4)
    with torch.no_grad():
        lse = torch.empty(1, 5, 19)
        o = attention.attention(q, k, v, True, lse=lse)
    cfg = {"BLOCK_M1": 16, "BLOCK_N1": 16, "BLOCK_M2": 16, "BLOCK_N2": 16, "num_warps": 4, "num_stages": 1,
           "KV_SPLIT": split}
    grads = attention_backward.attention_backward(do, q.detach(), k.detach(), v.detach(), o, lse, True, 16 ** -0.5,
                                                  config=cfg)
    assert grads[1].stride() == k.stride() and grads[2].stride() == v.stride()  # laid out like k and v
    assert_grads(lambda qd, kd, vd: attention.reference(qd, kd, vd, True), (q, k, v), do, grads)


def test_the_gqa_split_fills_small_grids_only() -> None:
    from rocm_triton_doctor.kernels import policy

    h200 = policy.Target("cuda", "sm_90", 32)
    split = policy.attention_backward_kv_split
    assert split(h200, 35, 16, 132) == 16  # B1 H16/1 S2238 D32: 35 programs, every head its own part
    assert split(h200, 102, 24, 132) == 10  # B2 H24/1 S3226 D32 (the launcher makes it 8 parts of 3)
    assert split(h200, 1024, 4, 132) == 1  # a full grid keeps one program a group (split 2 lost there)
    assert split(h200, 16, 1, 132) == 1  # no GQA, nothing to split
    assert split(h200, 16, 8, 0) == 1  # SMs unknown


def test_wide_head_dims_take_64_by_64_tiles_on_nvidia() -> None:
    # D 160-256 on sm_90: 64x64 tiles at 8 warps, one stage (2.5-3.3x the spill-free 16x32 tiles' speed); the
    # tiles run in the interpreter against fp64 here, GQA and causal, at D = 160 (padded to 256).
    from rocm_triton_doctor.kernels import policy

    cfg = policy.attention_backward_config(policy.Target("cuda", "sm_90", 32), 256, 2, True)
    assert (cfg["BLOCK_M1"], cfg["BLOCK_N1"], cfg["BLOCK_M2"], cfg["BLOCK_N2"], cfg["num_warps"]) == (64, 64, 64, 64, 8)
    q, k, v, do = _leaves(1, 2, 1, 70, 66, 160, torch.float32, False, seed=5)
    with torch.no_grad():
        lse = torch.empty(1, 2, 70)
        o = attention.attention(q, k, v, True, lse=lse)
    grads = attention_backward.attention_backward(do, q.detach(), k.detach(), v.detach(), o, lse, True, 160 ** -0.5,
                                                  config={**cfg, "num_stages": 1})
    assert_grads(lambda qd, kd, vd: attention.reference(qd, kd, vd, True), (q, k, v), do, grads)


@pytest.mark.parametrize("split", [1, 3])
def test_a_planned_backward_gives_the_checked_paths_gradients(split: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # The first call checks, plans and keeps its three launches (here with GQA parts or without); the second, with
    # the policy made to fail, runs from the plan: other values, the same signature, the same right gradients.
    monkeypatch.setattr(call_plans, "GPU_ONLY", False)  # plan CPU tensors too: the interpreter runs the plan's Sites
    monkeypatch.setattr(policy, "attention_backward_kv_split", lambda *a: split)
    attention_backward._PLANS.clear()
    for seed in (4, 5):
        q, k, v, do = _leaves(1, 5, 1, 19, 26, 16, torch.float32, True, seed=seed)
        attention.autograd_op(q, k, v, True).backward(do)
        assert_grads(lambda qd, kd, vd: attention.reference(qd, kd, vd, True), (q, k, v), do, (q.grad, k.grad, v.grad))
        assert len(attention_backward._PLANS) == 1
        monkeypatch.setattr(policy, "attention_backward_config", lambda *a: pytest.fail("planned: no policy"))
    attention_backward._PLANS.clear()


def _backward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, do: torch.Tensor, causal: bool, scale: float,
              config: dict[str, object]) -> tuple[torch.Tensor, ...]:
    with torch.no_grad():
        lse = torch.empty(q.shape[:3])
        o = attention.attention(q, k, v, causal, scale, lse=lse)
    return attention_backward.attention_backward(do, q.detach(), k.detach(), v.detach(), o, lse, causal, scale,
                                                 config=config)


ATOMIC = {"BLOCK_M1": 16, "BLOCK_N1": 32, "BLOCK_M2": 32, "BLOCK_N2": 16, "num_warps": 4, "num_stages": 1,
          "DQ_ATOMIC": True}


@pytest.mark.parametrize("causal,split", [(True, 1), (False, 2)])
def test_atomic_dq_matches_fp64(causal: bool, split: int) -> None:
    # DQ_ATOMIC: the dK/dV kernel adds dS·K into an fp32 accumulator the Δ kernel zeroed; a last kernel scales and
    # casts it into dq's layout. GQA 4:2 (with parts or not), S_q != S_k, D = 80 padded to 128, the model layout.
    q, k, v, do = _leaves(1, 4, 2, 37, 45, 80, torch.float16, True, seed=6)
    grads = _backward(q, k, v, do, causal, 80 ** -0.5, {**ATOMIC, "KV_SPLIT": split})
    assert grads[0].stride() == q.stride()
    assert_grads(lambda qd, kd, vd: attention.reference(qd, kd, vd, causal), (q, k, v), do, grads)


def test_atomic_dq_ignores_keys_past_the_end_whose_p_overflows() -> None:
    # Keys past S_k load as zeros, so their recomputed P is exp2(-lse), not 0: with every real score far below 0
    # (q·k <= -16 a pair, scale 10: below -230 in log2 units) that is inf, and inf·0 in dS·K would make dQ NaN
    # unless those rows of dSᵀ are zeroed (S_k = 40: the second 32-key block holds 24 such keys).
    gen = torch.Generator().manual_seed(7)
    q = torch.rand(1, 2, 21, 16, generator=gen) + 1
    k, v = -torch.rand(1, 2, 40, 16, generator=gen) - 1, torch.randn(1, 2, 40, 16, generator=gen)
    do = torch.randn(1, 2, 21, 16, generator=gen)
    grads = _backward(q, k, v, do, False, 10.0, ATOMIC)
    assert all(g.isfinite().all() for g in grads)
    # Scale 10 makes the fp32 gradients ill-conditioned (the dQ kernel's path is off fp64 by 7e-4 of 9 too): the
    # atomic path is held to the dQ kernel's gradients.
    for got, want in zip(grads, _backward(q, k, v, do, False, 10.0, {**ATOMIC, "DQ_ATOMIC": False})):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4 * float(want.abs().max()))


def _spy_sites(mp: pytest.MonkeyPatch) -> list[str]:
    """The names of the kernels attention_backward plans a launch site for, in order, from now on (while mp holds)."""
    calls: list[str] = []
    real = attention_backward.Site

    def spy(kernel, *a, **kw):  # type: ignore[no-untyped-def]
        calls.append(kernel.fn.__name__ if hasattr(kernel, "fn") else str(kernel))
        return real(kernel, *a, **kw)
    mp.setattr(attention_backward, "Site", spy)
    return calls


def test_deterministic_mode_takes_the_dq_kernel() -> None:
    # Atomic fp32 sums vary in order from run to run; under torch.use_deterministic_algorithms the policy's
    # DQ_ATOMIC is dropped (the separate dQ kernel runs): bit-equal gradients, and the plan is keyed by the mode.
    from rocm_triton_doctor.kernels import policy

    h200 = policy.Target("cuda", "sm_90", 32)
    assert policy.attention_backward_config(h200, 256, 2, True).get("DQ_ATOMIC") is True
    assert "DQ_ATOMIC" not in policy.attention_backward_config(h200, 128, 2, True)
    assert "DQ_ATOMIC" not in policy.attention_backward_config(policy.Target("hip", "gfx942", 64), 256, 2, True)
    q, k, v, do = _leaves(1, 2, 1, 19, 23, 16, torch.float32, False, seed=8)
    prev = torch.are_deterministic_algorithms_enabled()
    try:
        torch.use_deterministic_algorithms(True)
        with pytest.MonkeyPatch.context() as mp:
            calls = _spy_sites(mp)
            runs = [_backward(q, k, v, do, True, 0.25, ATOMIC) for _ in range(2)]
    finally:
        torch.use_deterministic_algorithms(prev)
    assert "attn_bwd_dq_kernel" in calls and "attn_bwd_dq_out_kernel" not in calls
    for a, b in zip(*runs):
        assert torch.equal(a, b)
    assert_grads(lambda qd, kd, vd: attention.reference(qd, kd, vd, True, 0.25), (q, k, v), do, runs[0])


def test_few_query_blocks_over_many_keys_take_the_atomic_dq() -> None:
    # policy_attention.attention_backward_dq_atomic: a dQ grid of at most a third of the SMs (H200: 44 of 132)
    h200 = policy.Target("cuda", "sm_90", 32)
    assert policy.attention_backward_dq_atomic(h200, 8, 132) and policy.attention_backward_dq_atomic(h200, 44, 132)
    assert not policy.attention_backward_dq_atomic(h200, 45, 132)  # 80+ programs tied or lost (session 33)
    assert not policy.attention_backward_dq_atomic(h200, 8, 0)  # SMs unknown
    assert not policy.attention_backward_dq_atomic(policy.Target("hip", "gfx942", 64), 8, 304)  # AMD: not timed
    assert not policy.attention_backward_dq_atomic(policy.Target("interpreter", "cpu", 1), 1, 132)


def test_the_policy_s_atomic_dq_for_short_queries_gives_the_gradients(monkeypatch: pytest.MonkeyPatch) -> None:
    # The policy's path end to end in the interpreter: with the rule forced on (as a pretend GPU's grid would make
    # it), a query block over three key blocks runs the atomic dQ (its cast kernel launched, not the dQ kernel).
    monkeypatch.setattr(policy, "attention_backward_dq_atomic", lambda *a: True)
    q, k, v, do = _leaves(1, 4, 1, 9, 70, 32, torch.float32, True, seed=9)
    calls = _spy_sites(monkeypatch)
    attention_backward._PLANS.clear()
    with torch.no_grad():
        lse = torch.empty(q.shape[:3])
        o = attention.attention(q, k, v, False, None, lse=lse)
    grads = attention_backward.attention_backward(do, q.detach(), k.detach(), v.detach(), o, lse, False, 32 ** -0.5)
    assert "attn_bwd_dq_out_kernel" in calls and "attn_bwd_dq_kernel" not in calls
    assert_grads(lambda qd, kd, vd: attention.reference(qd, kd, vd, False), (q, k, v), do, grads)
