"""Attention backward (FlashAttention-2, Dao 2023 Algorithm 2; the layout of Triton's tutorial 06-fused-attention):
the gradients of O = softmax(s·Q·Kᵀ [+ causal mask])·V from dO, the forward's O and its per-row log2-sum-exp
(attention(..., lse=) with STATS), never materialising the S_q×S_k matrices.

With P = softmax rows recomputed as exp2(s'·Q'·Kᵀ - lse) (Q' = sign(s)·Q and s' = |s|·log2 e, the forward's own
folding, so P matches the forward's to rounding, for any sign of s), Δ = rowsum(dO∘O), dS = P∘(dO·Vᵀ - Δ):
    dV = Pᵀ·dO,   dK = |s|·dSᵀ·Q',   dQ = s·dS·K        (s = 0: P uniform, dQ = dK = 0).
Three kernels: attn_bwd_preprocess_kernel (Δ), attn_bwd_dkdv_kernel (one program per key block of a KV head,
looping over the query blocks of every query head of its group, so GQA/MQA dK/dV are summed in-program: no atomics,
deterministic) and attn_bwd_dq_kernel (one program per query block, looping over key blocks: deterministic, where
FA2's reference adds dQ with atomics). Causal (top-left, as the forward): the dK/dV program skips query blocks wholly
above the diagonal; the dQ program stops at the diagonal and masks only the blocks it crosses. Any strides in; fp32
accumulation; dQ, dK, dV in the input dtype, laid out like q, k, v (empty_like). FLOPs 2.5× the forward's
(5 matmuls of S_q·S_k·D against 2); the dK/dV program recomputes P, the dQ program recomputes P and dP again.
DQ_ATOMIC (the policy's choice on NVIDIA at head dims 160-256, and at any head dim when the dQ kernel's grid would be
small: policy_attention.attention_backward_dq_atomic; never in torch's deterministic mode): FA2's way
instead — the dK/dV kernel adds dS·K into an fp32 dQ accumulator the Δ kernel zeroed, and attn_bwd_dq_out_kernel
scales and casts it (5 matmuls in all; the order of the fp32 additions varies between runs). The custom ops and the
eager Function around these: attention_autograd.py."""

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels.launch_site import DYN, Site
from rocm_triton_doctor.kernels import argcheck, call_plans, policy
from rocm_triton_doctor.kernels.attention import LOG2E, fp32_dots, kernel_scale, row_strides
from rocm_triton_doctor.kernels.attention_blocks import _bhs, _key_ranges, _signed  # the forward's own blocks
from rocm_triton_doctor.kernels.base import cdiv, device_cus, upcast_dots


def pre_rows(block_d: int) -> int:
    """Rows per program of the Δ kernel (a memory-bound row dot product): 4096 elements per tile (64 rows x 128 had
    spilled on gfx942, 16 VGPRs; 32 x 128 and 16 x 256: 0)."""
    return max(1, 4096 // block_d)


@triton.jit
def attn_bwd_preprocess_kernel(o_ptr, do_ptr, delta_ptr, dqa_ptr, S_Q, so_b, so_h, so_s, so_d, sdo_b, sdo_h, sdo_s,
                               sdo_d, HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_M: tl.constexpr,
                               DIV: tl.constexpr = 1, ZERO_DQ: tl.constexpr = False):
    """Δ[b, h, i] = Σ_d dO·O in fp32, stored (B, H, S_q) contiguous. ZERO_DQ: also zero the rows' dQ accumulator
    (fp32 (B, H, S_q, BLOCK_D) contiguous) the DQ_ATOMIC dK/dV kernel adds into. DIV: as the forward's (_bhs)."""
    start_m = tl.program_id(0)
    h = tl.program_id(1).to(tl.int64)
    b = tl.program_id(2).to(tl.int64)
    so_b, so_h, so_s = _bhs(so_b, so_h, so_s, DIV)
    sdo_b, sdo_h, sdo_s = _bhs(sdo_b, sdo_h, sdo_s, DIV)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    mask = (offs_m[:, None] < S_Q) & (offs_d[None, :] < HEAD_DIM)
    o = tl.load(o_ptr + b * so_b + h * so_h + offs_m[:, None] * so_s + offs_d[None, :] * so_d, mask=mask, other=0.0)
    do = tl.load(do_ptr + b * sdo_b + h * sdo_h + offs_m[:, None] * sdo_s + offs_d[None, :] * sdo_d, mask=mask,
                 other=0.0)
    delta = tl.sum(o.to(tl.float32) * do.to(tl.float32), axis=1)
    row = (b * tl.num_programs(1) + h) * S_Q + offs_m
    tl.store(delta_ptr + row, delta, mask=offs_m < S_Q)
    if ZERO_DQ:
        tl.store(dqa_ptr + row[:, None] * BLOCK_D + offs_d[None, :], tl.zeros((BLOCK_M, BLOCK_D), tl.float32),
                 mask=offs_m[:, None] < S_Q)


@triton.jit
def attn_bwd_dq_out_kernel(dqa_ptr, dq_ptr, dq_scale, S_Q, sdq_b, sdq_h, sdq_s, sdq_d, HEAD_DIM: tl.constexpr,
                           BLOCK_D: tl.constexpr, BLOCK_M: tl.constexpr, DIV: tl.constexpr = 1):
    """dQ = dq_scale · the accumulated dS·K rows (DQ_ATOMIC), in dq's dtype and layout. Grid as the Δ kernel's."""
    start_m = tl.program_id(0)
    h = tl.program_id(1).to(tl.int64)
    b = tl.program_id(2).to(tl.int64)
    sdq_b, sdq_h, sdq_s = _bhs(sdq_b, sdq_h, sdq_s, DIV)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    row = (b * tl.num_programs(1) + h) * S_Q + offs_m
    acc = tl.load(dqa_ptr + row[:, None] * BLOCK_D + offs_d[None, :], mask=offs_m[:, None] < S_Q, other=0.0)
    mask = (offs_m[:, None] < S_Q) & (offs_d[None, :] < HEAD_DIM)
    tl.store(dq_ptr + b * sdq_b + h * sdq_h + offs_m[:, None] * sdq_s + offs_d[None, :] * sdq_d,
             (acc * dq_scale).to(dq_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _dkdv_block(dk, dv, k, v, q_ptr, do_ptr, lse_ptr, delta_ptr, dqa_ptr, q_base, do_base, row_base, start_m, offs_n,
                offs_d, S_Q, sq_s, sq_d, sdo_s, sdo_d, qk_scale, key_tail, S_K, HEAD_DIM: tl.constexpr,
                BLOCK_D: tl.constexpr, BLOCK_M: tl.constexpr, Q_SIGN: tl.constexpr, UPCAST: tl.constexpr,
                MASKED: tl.constexpr, DOT_PREC: tl.constexpr, DQ_ATOMIC: tl.constexpr):
    """One query block against the program's key block, in transposed form (keys as rows): Pᵀ, dV += Pᵀ·dO,
    dSᵀ = Pᵀ∘(V·dOᵀ - Δ), dK += dSᵀ·Q'. Query rows past S_q load as zeros and their Pᵀ columns are zeroed.
    Keys past S_k (zero K/V rows) only touch their own dK/dV rows, which are not stored. MASKED: causal diagonal.
    DQ_ATOMIC: also add dS·K of these rows into the fp32 dQ accumulator (FA2's way: 5 matmuls a block pair, not
    the 7 of a separate dQ kernel); then dSᵀ rows of keys past S_k (key_tail: this block has some) are zeroed, since
    their Pᵀ = exp2(-lse) is not 0 and may be inf."""
    offs_m = start_m + tl.arange(0, BLOCK_M)
    rows = offs_m < S_Q
    qT_mask = rows[None, :]
    do_mask = rows[:, None]
    if BLOCK_D != HEAD_DIM:
        qT_mask = qT_mask & (offs_d[:, None] < HEAD_DIM)
        do_mask = do_mask & (offs_d[None, :] < HEAD_DIM)
    qT = tl.load(q_ptr + q_base + offs_m[None, :] * sq_s + offs_d[:, None] * sq_d, mask=qT_mask, other=0.0)
    do = tl.load(do_ptr + do_base + offs_m[:, None] * sdo_s + offs_d[None, :] * sdo_d, mask=do_mask, other=0.0)
    qT = _signed(qT, Q_SIGN, UPCAST)
    if UPCAST:
        do = do.to(tl.float32)
    lse = tl.load(lse_ptr + row_base + offs_m, mask=rows, other=0.0)
    delta = tl.load(delta_ptr + row_base + offs_m, mask=rows, other=0.0)
    pT = tl.exp2(tl.dot(k, qT, input_precision=DOT_PREC) * qk_scale - lse[None, :])
    # Query rows past S_q are zeros, but a key holding ±inf makes their score inf·0 = NaN, which dO = 0 does not
    # cancel (NaN·0 = NaN): such rows are zeroed by the select (fuzz round 3: NaN dK/dV for a -inf key, S_q=9).
    if MASKED:  # top-left causal: query i sees key j <= i
        pT = tl.where((offs_m[None, :] >= offs_n[:, None]) & rows[None, :], pT, 0.0)
    elif start_m + BLOCK_M > S_Q:  # only the last, partial query block pays for the select (2-4 % at S=4096 on H100)
        pT = tl.where(rows[None, :], pT, 0.0)
    dv = tl.dot(pT.to(do.dtype), do, dv, input_precision=DOT_PREC)
    dsT = pT * (tl.dot(v, tl.trans(do), input_precision=DOT_PREC) - delta[None, :])
    if DQ_ATOMIC and key_tail:
        dsT = tl.where(offs_n[:, None] < S_K, dsT, 0.0)  # (the rows' dK is not stored either)
    dsT = dsT.to(qT.dtype)  # q and k share a dtype (both upcast together)
    if DQ_ATOMIC:
        dq = tl.dot(tl.trans(dsT), k, input_precision=DOT_PREC)
        tl.atomic_add(dqa_ptr + (row_base + offs_m[:, None]) * BLOCK_D + offs_d[None, :], dq, mask=rows[:, None],
                      sem="relaxed")
    dk = tl.dot(dsT, tl.trans(qT), dk, input_precision=DOT_PREC)
    return dk, dv


@triton.jit
def attn_bwd_dkdv_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, dqa_ptr, qk_scale, dk_scale, S_Q,
                         S_K, GROUP, sq_b, sq_h, sq_s, sq_d, sk_b, sk_h, sk_s, sk_d, sv_b, sv_h, sv_s, sv_d, sdo_b,
                         sdo_h, sdo_s, sdo_d, sdk_b, sdk_h, sdk_s, sdk_d, sdv_b, sdv_h, sdv_s, sdv_d,
                         HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, Q_SIGN: tl.constexpr, CAUSAL: tl.constexpr,
                         UPCAST: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                         DOT_PREC: tl.constexpr = "ieee", DIV: tl.constexpr = 1, KV_SPLIT: tl.constexpr = 1,
                         DQ_ATOMIC: tl.constexpr = False):
    """Grid (key blocks, H_kv·KV_SPLIT, B). dK/dV of BLOCK_N keys of KV head kh: the sum over the GROUP query heads
    kh·GROUP .. kh·GROUP+GROUP-1 (GQA) of every query block that sees them, in fp32 registers. KV_SPLIT > 1: the
    group's heads in KV_SPLIT parts, one a program, each storing its partial sums at head index kh·KV_SPLIT + part
    of fp32 dK/dV buffers the launcher sums (attention_backward). DQ_ATOMIC: dQ's dS·K terms added into dqa_ptr
    (see _dkdv_block), so no dQ kernel recomputes P. DIV: as the forward's (_bhs)."""
    start_n = tl.program_id(0)
    kh = tl.program_id(1).to(tl.int64) // KV_SPLIT
    b = tl.program_id(2).to(tl.int64)
    sq_b, sq_h, sq_s = _bhs(sq_b, sq_h, sq_s, DIV)
    sk_b, sk_h, sk_s = _bhs(sk_b, sk_h, sk_s, DIV)
    sv_b, sv_h, sv_s = _bhs(sv_b, sv_h, sv_s, DIV)
    sdo_b, sdo_h, sdo_s = _bhs(sdo_b, sdo_h, sdo_s, DIV)
    sdk_b, sdk_h, sdk_s = _bhs(sdk_b, sdk_h, sdk_s, DIV)
    sdv_b, sdv_h, sdv_s = _bhs(sdv_b, sdv_h, sdv_s, DIV)
    H = tl.num_programs(1) // KV_SPLIT * GROUP
    offs_n = start_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    kv_mask = offs_n[:, None] < S_K
    if BLOCK_D != HEAD_DIM:
        kv_mask = kv_mask & (offs_d[None, :] < HEAD_DIM)
    k = tl.load(k_ptr + b * sk_b + kh * sk_h + offs_n[:, None] * sk_s + offs_d[None, :] * sk_d, mask=kv_mask, other=0.0)
    v = tl.load(v_ptr + b * sv_b + kh * sv_h + offs_n[:, None] * sv_s + offs_d[None, :] * sv_d, mask=kv_mask, other=0.0)
    if UPCAST:
        k = k.to(tl.float32)
        v = v.to(tl.float32)
    dk = tl.zeros((BLOCK_N, BLOCK_D), dtype=tl.float32)
    dv = tl.zeros((BLOCK_N, BLOCK_D), dtype=tl.float32)
    # Causal: query blocks before the one holding query start_n·BLOCK_N see none of these keys and are skipped. One
    # loop with the mask on every block (a compare and select next to three dots), not a masked and an unmasked copy
    # of the body: the two copies made ptxas spill dK/dV at D=128 on sm_90 (112 bytes at 32x64, 8 warps; 0 with one).
    lo = (start_n * BLOCK_N) // BLOCK_M * BLOCK_M if CAUSAL else 0
    key_tail = start_n * BLOCK_N + BLOCK_N > S_K
    per_part = (GROUP + KV_SPLIT - 1) // KV_SPLIT
    g_lo = tl.program_id(1) % KV_SPLIT * per_part
    for g in range(g_lo, tl.minimum(g_lo + per_part, GROUP)):
        h = kh * GROUP + g
        q_base = b * sq_b + h * sq_h
        do_base = b * sdo_b + h * sdo_h
        row_base = (b * H + h) * S_Q
        for start_m in range(lo, S_Q, BLOCK_M):
            dk, dv = _dkdv_block(dk, dv, k, v, q_ptr, do_ptr, lse_ptr, delta_ptr, dqa_ptr, q_base, do_base, row_base,
                                 start_m, offs_n, offs_d, S_Q, sq_s, sq_d, sdo_s, sdo_d, qk_scale, key_tail, S_K,
                                 HEAD_DIM, BLOCK_D, BLOCK_M, Q_SIGN, UPCAST, CAUSAL, DOT_PREC, DQ_ATOMIC)
    dk = dk * dk_scale
    sh = tl.program_id(1).to(tl.int64)  # kh, or with KV_SPLIT its part's head in the partial buffers
    tl.store(dk_ptr + b * sdk_b + sh * sdk_h + offs_n[:, None] * sdk_s + offs_d[None, :] * sdk_d,
             dk.to(dk_ptr.dtype.element_ty), mask=kv_mask)
    tl.store(dv_ptr + b * sdv_b + sh * sdv_h + offs_n[:, None] * sdv_s + offs_d[None, :] * sdv_d,
             dv.to(dv_ptr.dtype.element_ty), mask=kv_mask)


@triton.jit
def _dq_block(dq, q, do, lse, delta, k_ptr, v_ptr, k_base, v_base, start_n, offs_m, offs_d, S_K, sk_s, sk_d, sv_s,
              sv_d, qk_scale, HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_N: tl.constexpr,
              UPCAST: tl.constexpr, MASKED: tl.constexpr, CAUSAL: tl.constexpr, DOT_PREC: tl.constexpr):
    """One key block of the dQ loop: P, dS = P∘(dO·Vᵀ - Δ), dQ += dS·K. MASKED: keys past S_k (their P would be
    exp2(-lse), not 0) or above the diagonal."""
    cols = start_n + tl.arange(0, BLOCK_N)
    kv_mask = cols[None, :] < S_K
    if BLOCK_D != HEAD_DIM:
        kv_mask = kv_mask & (offs_d[:, None] < HEAD_DIM)
    kT = tl.load(k_ptr + k_base + cols[None, :] * sk_s + offs_d[:, None] * sk_d, mask=kv_mask, other=0.0)
    vT = tl.load(v_ptr + v_base + cols[None, :] * sv_s + offs_d[:, None] * sv_d, mask=kv_mask, other=0.0)
    if UPCAST:
        kT = kT.to(tl.float32)
        vT = vT.to(tl.float32)
    p = tl.exp2(tl.dot(q, kT, input_precision=DOT_PREC) * qk_scale - lse[:, None])
    if MASKED:
        valid = cols[None, :] < S_K
        if CAUSAL:
            valid = valid & (offs_m[:, None] >= cols[None, :])
        p = tl.where(valid, p, 0.0)
    ds = p * (tl.dot(do, vT, input_precision=DOT_PREC) - delta[:, None])
    return tl.dot(ds.to(kT.dtype), tl.trans(kT), dq, input_precision=DOT_PREC)


@triton.jit
def attn_bwd_dq_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, qk_scale, dq_scale, S_Q, S_K, GROUP,
                       sq_b, sq_h, sq_s, sq_d, sk_b, sk_h, sk_s, sk_d, sv_b, sv_h, sv_s, sv_d, sdo_b, sdo_h, sdo_s,
                       sdo_d, sdq_b, sdq_h, sdq_s, sdq_d, HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr,
                       Q_SIGN: tl.constexpr, CAUSAL: tl.constexpr, UPCAST: tl.constexpr, BLOCK_M: tl.constexpr,
                       BLOCK_N: tl.constexpr, DOT_PREC: tl.constexpr = "ieee", DIV: tl.constexpr = 1):
    """Grid (query blocks, H_q, B): dQ of BLOCK_M query rows, looping over the key blocks they see (the forward's
    _key_ranges: unmasked blocks first, then those crossing the diagonal or S_k). DIV: as the forward's (_bhs)."""
    start_m = tl.program_id(0)
    h = tl.program_id(1).to(tl.int64)
    b = tl.program_id(2).to(tl.int64)
    sq_b, sq_h, sq_s = _bhs(sq_b, sq_h, sq_s, DIV)
    sk_b, sk_h, sk_s = _bhs(sk_b, sk_h, sk_s, DIV)
    sv_b, sv_h, sv_s = _bhs(sv_b, sv_h, sv_s, DIV)
    sdo_b, sdo_h, sdo_s = _bhs(sdo_b, sdo_h, sdo_s, DIV)
    sdq_b, sdq_h, sdq_s = _bhs(sdq_b, sdq_h, sdq_s, DIV)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    rows = offs_m < S_Q
    mask = rows[:, None]
    if BLOCK_D != HEAD_DIM:
        mask = mask & (offs_d[None, :] < HEAD_DIM)
    q = tl.load(q_ptr + b * sq_b + h * sq_h + offs_m[:, None] * sq_s + offs_d[None, :] * sq_d, mask=mask, other=0.0)
    do = tl.load(do_ptr + b * sdo_b + h * sdo_h + offs_m[:, None] * sdo_s + offs_d[None, :] * sdo_d, mask=mask,
                 other=0.0)
    q = _signed(q, Q_SIGN, UPCAST)
    if UPCAST:
        do = do.to(tl.float32)
    row_base = (b * tl.num_programs(1) + h) * S_Q
    lse = tl.load(lse_ptr + row_base + offs_m, mask=rows, other=0.0)
    delta = tl.load(delta_ptr + row_base + offs_m, mask=rows, other=0.0)
    k_base = b * sk_b + (h // GROUP) * sk_h
    v_base = b * sv_b + (h // GROUP) * sv_h
    dq = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)
    lo_masked, hi = _key_ranges(start_m, S_K, BLOCK_M, BLOCK_N, CAUSAL)
    for start_n in range(0, lo_masked, BLOCK_N):
        dq = _dq_block(dq, q, do, lse, delta, k_ptr, v_ptr, k_base, v_base, start_n, offs_m, offs_d, S_K, sk_s, sk_d,
                       sv_s, sv_d, qk_scale, HEAD_DIM, BLOCK_D, BLOCK_N, UPCAST, False, CAUSAL, DOT_PREC)
    for start_n in range(lo_masked, hi, BLOCK_N):
        dq = _dq_block(dq, q, do, lse, delta, k_ptr, v_ptr, k_base, v_base, start_n, offs_m, offs_d, S_K, sk_s, sk_d,
                       sv_s, sv_d, qk_scale, HEAD_DIM, BLOCK_D, BLOCK_N, UPCAST, True, CAUSAL, DOT_PREC)
    dq = dq * dq_scale
    tl.store(dq_ptr + b * sdq_b + h * sdq_h + offs_m[:, None] * sdq_s + offs_d[None, :] * sdq_d,
             dq.to(dq_ptr.dtype.element_ty), mask=mask)


LONG_SEQ = 4096  # from here the backward takes larger tiles (policy_attention.attention_backward_config)


def attention_backward(do: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, o: torch.Tensor,
                       lse: torch.Tensor, causal: bool, scale: float, config: dict[str, Any] | None = None
                       ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dQ, dK, dV) of attention(q, k, v, causal, scale) from dO (o's shape, any strides), the forward's o and its
    lse (fp32 (B, H_q, S_q) contiguous, attention(..., lse=)). scale: the resolved finite scale. The inputs are those
    attention() accepted (autograd_op checks them through the forward). config: policy.attention_backward_config's
    keys (tests). A call signature seen before (shapes, strides, dtypes, devices, causal, scale; call_plans.py)
    launches from its plan: the checks and the policy ran on its first call."""
    sig = call_plans.signature(do, q, k, v, o, lse) if config is None else None
    deterministic = torch.are_deterministic_algorithms_enabled()
    key = None if sig is None else (*sig, bool(causal), scale, deterministic)
    plan = _PLANS.get(key) if key is not None else None
    if plan is not None:
        return plan(do, q, k, v, o, lse)
    B, H, S_q, D = q.shape
    H_kv, S_k = k.shape[1], k.shape[2]
    if do.shape != q.shape:
        raise ValueError(f"attention backward: dO {tuple(do.shape)} must have q's shape {tuple(q.shape)}")
    if argcheck.max_offset(do) >= argcheck.INT32_LIMIT:  # 32-bit row offsets, as the forward's inputs
        raise ValueError(f"attention backward: dO spans 2^31 elements or more of memory (strides {do.stride()})")
    scale = kernel_scale(D, scale)  # callers passing a raw scale get the forward's rules too (finite, <= 1e30, underflow)
    if q.numel() == 0 or S_k == 0 or B * H_kv == 0:  # no query rows or no keys: every gradient is 0
        return torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
    target = policy.target_for_device(q.device.type)
    block_d = max(16, 1 << (D - 1).bit_length())
    cfg = dict(config) if config is not None else policy.attention_backward_config(
        target, block_d, q.element_size(), bool(causal), min(S_q, S_k) >= LONG_SEQ)
    if config is None and policy.attention_backward_dq_atomic(target, cdiv(S_q, cfg["BLOCK_M2"]) * H * B,
                                                              device_cus(q.device)):
        cfg["DQ_ATOMIC"] = True  # a few query blocks over many keys: the dK/dV kernel's grid adds dQ
    consts = {"HEAD_DIM": D, "BLOCK_D": block_d, "Q_SIGN": 0 if scale == 0 else (1 if scale > 0 else -1),
              "CAUSAL": bool(causal), "UPCAST": upcast_dots(target, q.dtype)}
    qk_scale = (abs(scale) if scale else 1.0) * LOG2E  # the forward's, so P is recomputed exactly
    group = H // H_kv
    split = cfg.pop("KV_SPLIT", None)
    if split is None:
        split = policy.attention_backward_kv_split(target, cdiv(S_k, cfg["BLOCK_N1"]) * H_kv * B, group,
                                                   device_cus(q.device))
    split = max(1, min(int(split), group))
    split = cdiv(group, cdiv(group, split))  # no empty part
    # dQ added by the dK/dV kernel with atomics (the order of fp32 additions varies): never under torch's
    # deterministic mode, which gets the separate dQ kernel (as SDPA's flash backward warns there).
    atomic = bool(cfg.pop("DQ_ATOMIC", False)) and not deterministic
    plan = _BackwardPlan(q, k, v, split, block_d if atomic else 0)
    dq, dk, dv, dkp, dvp, dqa = plan.outputs(q, k, v)
    # One DIV over every tensor of the three kernels (attention.row_strides): one compiled variant per layout class.
    div, st = row_strides(q, k, v, do.to(q.dtype), dkp, dvp, dq, o)
    sq, sk, sv, sdo, sdk, sdv, sdq, so = (st[i:i + 4] for i in range(0, 32, 4))
    rows = {"HEAD_DIM": D, "BLOCK_D": block_d, "BLOCK_M": pre_rows(block_d), "DIV": div}
    plan.pre = Site(attn_bwd_preprocess_kernel, (cdiv(S_q, pre_rows(block_d)), H, B), (DYN,) * 4 + (S_q, *so, *sdo),
                    {**rows, "ZERO_DQ": atomic})
    opts = {key: val for key, val in cfg.items() if not key.startswith("BLOCK_")} | fp32_dots(target, q.dtype)
    plan.dkdv = Site(attn_bwd_dkdv_kernel, (cdiv(S_k, cfg["BLOCK_N1"]), H_kv * split, B),
                     (DYN,) * 9 + (qk_scale, abs(scale), S_q, S_k, group, *sq, *sk, *sv, *sdo, *sdk, *sdv),
                     {**consts, "BLOCK_M": cfg["BLOCK_M1"], "BLOCK_N": cfg["BLOCK_N1"], "DIV": div, "KV_SPLIT": split,
                      "DQ_ATOMIC": atomic, **opts})
    if atomic:
        plan.dq = Site(attn_bwd_dq_out_kernel, (cdiv(S_q, pre_rows(block_d)), H, B), (DYN, DYN, scale, S_q, *sdq), rows)
    else:
        plan.dq = Site(attn_bwd_dq_kernel, (cdiv(S_q, cfg["BLOCK_M2"]), H, B),
                       (DYN,) * 7 + (qk_scale, scale, S_q, S_k, group, *sq, *sk, *sv, *sdo, *sdq),
                       {**consts, "BLOCK_M": cfg["BLOCK_M2"], "BLOCK_N": cfg["BLOCK_N2"], "DIV": div, **opts})
    if key is not None:
        call_plans.keep(_PLANS, key, plan)
    return plan(do, q, k, v, o, lse, (dq, dk, dv, dkp, dvp, dqa))


class _BackwardPlan:
    """The backward's launches for one call signature: the rows' dO·O (delta), dK/dV (with KV_SPLIT > 1 into fp32
    parts of each query group, summed after: deterministic), then dQ: its own kernel recomputing P, or (atomic_d > 0,
    the padded head dim) the dK/dV kernel's fp32 sums, which the Δ kernel zeroed first, scaled and cast."""

    __slots__ = ("shape", "split", "atomic_d", "pre", "dkdv", "dq")

    def __init__(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, split: int, atomic_d: int) -> None:
        self.shape, self.split = (q.shape[0], q.shape[1], q.shape[2], k.shape[1], k.shape[2], q.shape[3]), split
        self.atomic_d = atomic_d
        self.pre: Site
        self.dkdv: Site
        self.dq: Site

    def outputs(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """dq, dk, dv (laid out like q, k, v), where the dK/dV kernel writes (dk and dv, or fp32 parts), and the
        fp32 dQ accumulator (atomic) or dq again (unused)."""
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        B, H, S_q, H_kv, S_k, D = self.shape
        dqa = dq if not self.atomic_d else torch.empty((B, H, S_q, self.atomic_d), dtype=torch.float32,
                                                        device=q.device)
        if self.split == 1:
            return dq, dk, dv, dk, dv, dqa
        dkp = torch.empty((B, H_kv * self.split, S_k, D), dtype=torch.float32, device=q.device)
        return dq, dk, dv, dkp, torch.empty_like(dkp), dqa

    def __call__(self, do: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, o: torch.Tensor,
                 lse: torch.Tensor, outs: tuple[torch.Tensor, ...] | None = None
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        B, H, S_q, H_kv, S_k, D = self.shape
        dq, dk, dv, dkp, dvp, dqa = outs if outs is not None else self.outputs(q, k, v)
        do = do.to(q.dtype)
        delta = torch.empty((B, H, S_q), dtype=torch.float32, device=q.device)
        self.pre(o, do, delta, dqa)
        self.dkdv(q, k, v, do, lse, delta, dkp, dvp, dqa)
        if self.split > 1:
            dk.copy_(dkp.view(B, H_kv, self.split, S_k, D).sum(2))
            dv.copy_(dvp.view(B, H_kv, self.split, S_k, D).sum(2))
        if self.atomic_d:
            self.dq(dqa, dq)
        else:
            self.dq(q, k, v, do, lse, delta, dq)
        return dq, dk, dv


_PLANS = call_plans.table()
