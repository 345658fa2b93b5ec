"""The online-softmax building blocks every attention kernel is made of (the forward's pointer, device-descriptor,
host-descriptor and split-key kernels, and the backward): one key block's K/V loads, the masked online-softmax update
and the P·V product, Q with the scale's sign folded in, the key ranges that need a mask, and the stride divisor. Split
from attention.py, whose launcher and forward kernel use them, to keep one topic a file."""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def _kv_tiles(k_ptr, v_ptr, k_base, v_base, cols, offs_d, S_K, sk_s, sk_d, sv_s, sv_d, HEAD_DIM: tl.constexpr,
              D_MASKED: tl.constexpr, MASKED: tl.constexpr, UPCAST: tl.constexpr):
    """K (columns offs_d as rows, keys `cols` as columns) and V (keys as rows) of one key block, zero past S_K when
    MASKED and past HEAD_DIM when D_MASKED (a column block that runs past the head dim); fp32 when UPCAST."""
    k_ptrs = k_ptr + k_base + cols[None, :] * sk_s + offs_d[:, None] * sk_d
    v_ptrs = v_ptr + v_base + cols[:, None] * sv_s + offs_d[None, :] * sv_d
    if MASKED:
        if D_MASKED:
            k = tl.load(k_ptrs, mask=(cols[None, :] < S_K) & (offs_d[:, None] < HEAD_DIM), other=0.0)
            v = tl.load(v_ptrs, mask=(cols[:, None] < S_K) & (offs_d[None, :] < HEAD_DIM), other=0.0)
        else:
            k = tl.load(k_ptrs, mask=cols[None, :] < S_K, other=0.0)
            v = tl.load(v_ptrs, mask=cols[:, None] < S_K, other=0.0)
    else:
        if D_MASKED:
            k = tl.load(k_ptrs, mask=offs_d[:, None] < HEAD_DIM, other=0.0)
            v = tl.load(v_ptrs, mask=offs_d[None, :] < HEAD_DIM, other=0.0)
        else:
            k = tl.load(k_ptrs)
            v = tl.load(v_ptrs)
    if UPCAST:
        k = k.to(tl.float32)
        v = v.to(tl.float32)
    return k, v


@triton.jit
def _attn_block(acc, l_i, m_i, q, k_ptr, v_ptr, k_base, v_base, start_n, offs_m, offs_n, offs_d, S_K, sk_s, sk_d,
                sv_s, sv_d, qk_scale, HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, MASKED: tl.constexpr,
                UPCAST: tl.constexpr, CAUSAL: tl.constexpr, DOT_PREC: tl.constexpr):
    """One key/value block of the online softmax: update the running max m_i, sum l_i and the output accumulator.
    MASKED: the block holds keys past S_k or (causal) above the diagonal; only such blocks pay for the mask."""
    cols = start_n + offs_n
    k, v = _kv_tiles(k_ptr, v_ptr, k_base, v_base, cols, offs_d, S_K, sk_s, sk_d, sv_s, sv_d, HEAD_DIM,
                     BLOCK_D != HEAD_DIM, MASKED, UPCAST)
    return _softmax_update(acc, l_i, m_i, tl.dot(q, k, input_precision=DOT_PREC), v, offs_m, cols, S_K, qk_scale,
                           MASKED, CAUSAL, DOT_PREC)


@triton.jit
def _attn_block_cols(acc, acc2, l_i, m_i, q, q2, k_ptr, v_ptr, k_base, v_base, start_n, offs_m, offs_n, offs_d, offs_d2,
                     S_K, sk_s, sk_d, sv_s, sv_d, qk_scale, HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr,
                     BLOCK_D2: tl.constexpr, MASKED: tl.constexpr, UPCAST: tl.constexpr, CAUSAL: tl.constexpr,
                     DOT_PREC: tl.constexpr):
    """_attn_block over a head dim in two column blocks: [0, BLOCK_D) is whole (BLOCK_D < HEAD_DIM), the second
    [BLOCK_D, BLOCK_D + BLOCK_D2) is masked on D only where it runs past HEAD_DIM. The scores are the sum of the two
    blocks' products; P multiplies each block of V into its own accumulator."""
    cols = start_n + offs_n
    k, v = _kv_tiles(k_ptr, v_ptr, k_base, v_base, cols, offs_d, S_K, sk_s, sk_d, sv_s, sv_d, HEAD_DIM, False, MASKED,
                     UPCAST)
    k2, v2 = _kv_tiles(k_ptr, v_ptr, k_base, v_base, cols, offs_d2, S_K, sk_s, sk_d, sv_s, sv_d, HEAD_DIM,
                       BLOCK_D + BLOCK_D2 != HEAD_DIM, MASKED, UPCAST)
    qk = tl.dot(q2, k2, tl.dot(q, k, input_precision=DOT_PREC), input_precision=DOT_PREC)
    p, alpha, l_i, m_new = _online_softmax(l_i, m_i, qk, offs_m, cols, S_K, qk_scale, MASKED, CAUSAL)
    acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None], input_precision=DOT_PREC)
    acc2 = tl.dot(p.to(v2.dtype), v2, acc2 * alpha[:, None], input_precision=DOT_PREC)
    return acc, acc2, l_i, m_new


@triton.jit
def _softmax_update(acc, l_i, m_i, qk, v, offs_m, cols, S_K, qk_scale, MASKED: tl.constexpr, CAUSAL: tl.constexpr,
                    DOT_PREC: tl.constexpr):
    """Mask the score tile if asked (keys past S_K; above the diagonal when causal), then the online-softmax step:
    new running max and sum, the accumulator rescaled and P·V added (both attention kernels). qk_scale > 0 always
    (the launcher folds a negative or zero scale into Q's sign), so -inf stays -inf after the scaling and the max of
    the scaled scores is the scaled max (a scale <= 0 had made every masked row NaN, kernel-edge-cases.md #8)."""
    p, alpha, l_i, m_new = _online_softmax(l_i, m_i, qk, offs_m, cols, S_K, qk_scale, MASKED, CAUSAL)
    acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None], input_precision=DOT_PREC)
    return acc, l_i, m_new


@triton.jit
def _online_softmax(l_i, m_i, qk, offs_m, cols, S_K, qk_scale, MASKED: tl.constexpr, CAUSAL: tl.constexpr):
    """_softmax_update's masking and running max/sum: (P, the factor the accumulators are rescaled by, the new sum,
    the new max). attention_tma's split-head-dim kernel applies P and the factor to two accumulators."""
    if MASKED:
        valid = cols[None, :] < S_K
        if CAUSAL:
            valid = valid & (offs_m[:, None] >= cols[None, :])
        qk = tl.where(valid, qk, float("-inf"))
    # Scale inside the exponent (one FMA per score) instead of a separate multiply pass over the tile.
    m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
    # A row whose scores are all -inf so far (an -inf score in the data) subtracts 0, not -inf: exp2(-inf - -inf)
    # would be NaN where torch's SDPA gives weight 0 (and output 0 for a row that sees no finite score).
    m_base = tl.where(m_new == float("-inf"), 0.0, m_new)
    p = tl.exp2(qk * qk_scale - m_base[:, None])
    alpha = tl.exp2(m_i - m_base)
    return p, alpha, l_i * alpha + tl.sum(p, 1), m_new


@triton.jit
def _signed(x, Q_SIGN: tl.constexpr, UPCAST: tl.constexpr):
    """Q with the scale's sign folded in (the launchers pass |scale|, so the kernels always scale by a positive
    number): upcast first where asked (the interpreter negates bf16 as the raw uint16 it stores it in), then negate
    for a negative scale (exact in every dtype: scores·(-s) == (-q)·k·s), or zero for a zero scale (every visible key
    then weighs the same, as SDPA gives). Every attention kernel, forward and backward, reads Q through it."""
    if UPCAST:
        x = x.to(tl.float32)
    if Q_SIGN == -1:
        x = -x
    if Q_SIGN == 0:
        x = (x * 0.0).to(x.dtype)
    return x


@triton.jit
def _key_ranges(start_m, S_K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    """Key blocks [0, lo_masked) need no mask, [lo_masked, hi) do. Causal (top-left: query i sees keys j <= i): the
    blocks that end at or before the tile's first query row and before S_K need none, only those touching the
    diagonal or S_K do, and keys past the tile's last row are never visited (tutorial 06's two stages); otherwise only
    a last, partial block is masked. Masking every block had cost non-causal attention 12 % on an H200 (0.73 -> 0.83x
    SDPA, docs/performance.md)."""
    if CAUSAL:
        lo_masked = tl.minimum(start_m * BLOCK_M, S_K) // BLOCK_N * BLOCK_N
        hi = tl.minimum(S_K, (start_m + 1) * BLOCK_M)
    else:
        lo_masked = S_K // BLOCK_N * BLOCK_N
        hi = S_K
    return lo_masked, hi


@triton.jit
def _bhs(s_b, s_h, s_s, DIV: tl.constexpr):
    """A tensor's batch, head and row strides, which the launcher passed divided by DIV (row_strides): multiplied
    back here, so Triton knows each is a multiple of DIV and a head dim of 40 or 72 elements (rows 16-byte aligned,
    strides not multiples of 16, which is all Triton specialises on) is read with 16-byte vectors instead of one
    2-byte load per element."""
    return s_b * DIV, s_h * DIV, s_s * DIV
