"""The GEMV against a K-major weight (an nn.Linear weight read as B^T) whose columns do not start on 16-byte
boundaries — K, the weight's row stride, not a multiple of 8 in 16 bits or of 4 in fp32 — read in whole 16-byte
vectors (gemm._gemv_plan launches it where policy_gemv.gemv_shift says so).

Why: with such a stride gemm_kernels.gemv_kernel reads the weight with 2-byte (16-bit) or 4-byte (fp32) loads, one
instruction per element, and the decode-size product is bound by the load instructions, not by DRAM (the hunt's
bf16 4x3813x27698 B^T at 0.81x cuBLAS, fp32 50x37x2248 B^T at 0.50x; docs/performance.md, sessions 23-24).

How: weight column n starts (n·stride) mod SHIFT elements past a 16-byte boundary, SHIFT = 16 bytes / element size,
and that distance depends only on n mod SHIFT. So each program owns columns of one residue class r, n = r + SHIFT·i,
which all start the same distance s past a boundary: each column is read from the boundary at or before its start, in
K windows of BLOCK_K whole vectors, and window element p holds k = p - s. The matching slice of A, a[k0 - s : k0 -
s + BLOCK_K], is then one contiguous (unaligned) load shared by all the program's columns, so the extra cost is a
small load of A per window, not a gather per element. The first window (k < 0 in it when s > 0) and the last (past K)
are masked; the windows between run unmasked, in whole vectors.
Results: straight into C with the epilogue when the product is not K-split (a dropout mask needs the pointer kernels'
contiguous column tiles, so the plan never sends dropout here unsplit), else fp32 partials into the workspace that
gemm_kernels._splitk_reduce_kernel sums and finishes."""

from __future__ import annotations

import triton
import triton.language as tl

from rocm_triton_doctor.kernels.gemm_kernels import _gemv_tile
from rocm_triton_doctor.kernels.gemm_parts import _epilogue_store, _scaled, _wide


@triton.jit
def gemv_kshift_kernel(a_ptr, b_ptr, c_ptr, bias_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                       stride_cn, stride_bias, seed, threshold, scale, EPILOGUE: tl.constexpr,
                       HAS_DROPOUT: tl.constexpr, B_KMAJOR: tl.constexpr, EVEN_N: tl.constexpr, EVEN_K: tl.constexpr,
                       INT64: tl.constexpr, SPLIT_K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_K: tl.constexpr, DIV_AM: tl.constexpr, DIV_AK: tl.constexpr, DIV_BK: tl.constexpr,
                       DIV_BN: tl.constexpr, DIV_CM: tl.constexpr, DIV_CN: tl.constexpr, DIV_N: tl.constexpr = 1,
                       STAGES: tl.constexpr = 1, SHIFT: tl.constexpr = 8):
    """gemv_kernel's arguments (B_KMAJOR, EVEN_N, EVEN_K and STAGES are accepted and unused: B is K-major with
    stride_bk 1, and every tile is masked by column). Grid: (SHIFT · cdiv(cdiv(N, SHIFT), BLOCK_N) · cdiv(M,
    BLOCK_M), SPLIT_K); program 0's axis walks the row chunks of one column tile first, as in gemv_kernel, so the
    chunks reading the same columns run side by side."""
    stride_am = _scaled(stride_am, DIV_AM, INT64)
    stride_ak = _scaled(stride_ak, DIV_AK, INT64)
    stride_bn = _scaled(stride_bn, DIV_BN, INT64)
    stride_cm = _scaled(stride_cm, DIV_CM, INT64)
    stride_cn = _scaled(stride_cn, DIV_CN, INT64)
    N = N * DIV_N
    chunks = tl.cdiv(M, BLOCK_M)
    pid_m = tl.program_id(0) % chunks
    pid_n = tl.program_id(0) // chunks
    pid_k = tl.program_id(1)
    r = pid_n % SHIFT  # this program's residue class of columns
    idx = (pid_n // SHIFT) * BLOCK_N + tl.arange(0, BLOCK_N)  # its columns' places within the class
    offs_n = r + SHIFT * idx
    mask_b = (offs_n < N)[:, None]
    row0 = pid_m * BLOCK_M
    m_left = M - row0
    lead = _wide(r, INT64) * stride_bn  # column r's first element
    s = lead % SHIFT  # how far past a 16-byte boundary every column of the class starts
    # Each column's window start, written SHIFT · (...) so the compiler knows it is a whole vector from B's base.
    starts = SHIFT * (lead // SHIFT + _wide(idx, INT64) * stride_bn)
    offs_k = tl.arange(0, BLOCK_K)
    a_row = a_ptr + _wide(row0, INT64) * stride_am
    # Windows 1 .. whole-1 lie inside [s, K + s): unmasked, shared out among the K splits. Window 0 (split 0) and
    # the partial window `whole` (the last split) are masked along K.
    whole = (K + s) // BLOCK_K
    mid = tl.maximum(whole - 1, 0)
    w_lo = 1 + (pid_k * mid) // SPLIT_K
    w_hi = 1 + ((pid_k + 1) * mid) // SPLIT_K
    zero = tl.zeros((BLOCK_N, BLOCK_K), dtype=tl.float32)
    acc0 = zero
    acc1 = zero
    acc2 = zero
    acc3 = zero
    acc4 = zero
    acc5 = zero
    acc6 = zero
    acc7 = zero
    ones = offs_k >= 0  # an all-true mask along K for the unmasked windows
    lo = _wide(w_lo, INT64) * BLOCK_K  # the first unmasked window's place (64 bits where offsets need them)
    for w in tl.range(w_lo, w_hi):
        p0 = lo + (w - w_lo) * BLOCK_K  # the loop index is a plain int in the interpreter: widened through lo
        b = tl.load(b_ptr + starts[:, None] + (p0 + offs_k)[None, :], mask=mask_b, other=0.0).to(tl.float32)
        acc0, acc1, acc2, acc3, acc4, acc5, acc6, acc7 = _kshift_rows(
            acc0, acc1, acc2, acc3, acc4, acc5, acc6, acc7, a_row + (p0 - s + offs_k) * stride_ak, stride_am, m_left,
            ones, b, BLOCK_M)
    # Window 0 on split 0; the partial last window on the last split (when it is not window 0 itself).
    for edge in tl.static_range(2):
        if edge == 0:
            w = pid_k * 0
            active = pid_k == 0
        else:
            w = whole
            active = (pid_k == SPLIT_K - 1) & (whole >= 1) & ((K + s) % BLOCK_K != 0)
        if active:
            p0 = _wide(w, INT64) * BLOCK_K
            k = p0 - s + offs_k
            kmask = (k >= 0) & (k < K)
            b = tl.load(b_ptr + starts[:, None] + (p0 + offs_k)[None, :], mask=mask_b & kmask[None, :],
                        other=0.0).to(tl.float32)
            acc0, acc1, acc2, acc3, acc4, acc5, acc6, acc7 = _kshift_rows(
                acc0, acc1, acc2, acc3, acc4, acc5, acc6, acc7, a_row + k * stride_ak, stride_am, m_left, kmask, b,
                BLOCK_M)
    out = _gemv_tile(acc0, acc1, acc2, acc3, acc4, acc5, acc6, acc7, True, BLOCK_M, BLOCK_N)
    offs_m = row0 + tl.arange(0, BLOCK_M)
    rows = _wide(offs_m, INT64)
    cols = _wide(offs_n, INT64)
    if SPLIT_K == 1:  # the epilogue's dropout needs contiguous column tiles: the plan never asks for it here
        _epilogue_store(out, c_ptr, bias_ptr, offs_m, offs_n, rows, cols, 0, M, N, stride_cm, stride_cn,
                        stride_bias, seed, threshold, scale, EPILOGUE, False, BLOCK_M, BLOCK_N)
    else:
        ws = c_ptr + (rows + pid_k * M)[:, None] * stride_cm + cols[None, :]
        tl.store(ws, out, mask=(offs_m < M)[:, None] & (offs_n < N)[None, :])


@triton.jit
def _kshift_rows(acc0, acc1, acc2, acc3, acc4, acc5, acc6, acc7, a_win, stride_am, m_left, kmask, b,
                 BLOCK_M: tl.constexpr):
    """One window of the weight times A's rows 0-7 over it (a_win: row 0's slice), into their accumulators."""
    acc0 = _kshift_fma(acc0, a_win, 0, stride_am, m_left, kmask, b, BLOCK_M)
    acc1 = _kshift_fma(acc1, a_win, 1, stride_am, m_left, kmask, b, BLOCK_M)
    acc2 = _kshift_fma(acc2, a_win, 2, stride_am, m_left, kmask, b, BLOCK_M)
    acc3 = _kshift_fma(acc3, a_win, 3, stride_am, m_left, kmask, b, BLOCK_M)
    acc4 = _kshift_fma(acc4, a_win, 4, stride_am, m_left, kmask, b, BLOCK_M)
    acc5 = _kshift_fma(acc5, a_win, 5, stride_am, m_left, kmask, b, BLOCK_M)
    acc6 = _kshift_fma(acc6, a_win, 6, stride_am, m_left, kmask, b, BLOCK_M)
    acc7 = _kshift_fma(acc7, a_win, 7, stride_am, m_left, kmask, b, BLOCK_M)
    return acc0, acc1, acc2, acc3, acc4, acc5, acc6, acc7


@triton.jit
def _kshift_fma(acc, a_win, i: tl.constexpr, stride_am, m_left, kmask, b, BLOCK_M: tl.constexpr):
    """Row i of A over the window (kmask: the window's places inside [0, K)) times the weight tile, added into row
    i's [BLOCK_N, BLOCK_K] accumulator; rows past BLOCK_M add nothing, rows past M add zeros."""
    if i < BLOCK_M:
        row_ok = kmask.to(tl.int32) * 0 + i < m_left  # a tensor: the interpreter cannot mask with a scalar
        a = tl.load(a_win + i * stride_am, mask=kmask & row_ok, other=0.0).to(tl.float32)
        acc = tl.fma(b, a[None, :], acc)
    return acc
