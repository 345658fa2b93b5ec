"""The GEMM's Triton kernels (gemm.py launches them): the pointer kernel (full K, or one K-split share into an fp32
workspace), the split-K reduce-and-epilogue pass, Hopper's persistent TMA kernel, and the GEMV kernel for a few rows
of A (decode sizes: fp32 multiply-adds, no tensor cores). Device helpers shared by them
(tile order, 64-bit offsets, the fused epilogue) are in gemm_parts.py."""

from __future__ import annotations

import triton
import triton.language as tl

from rocm_triton_doctor.kernels.gemm_parts import _epilogue_store, _grouped_tile, _k_range, _k_step, _scaled, _wide


@triton.jit
def gemm_kernel(a_ptr, b_ptr, c_ptr, bias_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                stride_bias, seed, threshold, scale, EPILOGUE: tl.constexpr, HAS_DROPOUT: tl.constexpr,
                UPCAST: tl.constexpr, PRECISION: tl.constexpr, EVEN_M: tl.constexpr, EVEN_N: tl.constexpr,
                EVEN_K: tl.constexpr, INT64: tl.constexpr, SPLIT_K: tl.constexpr, BLOCK_M: tl.constexpr,
                BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, DIV_AM: tl.constexpr,
                DIV_AK: tl.constexpr, DIV_BK: tl.constexpr, DIV_BN: tl.constexpr, DIV_CM: tl.constexpr,
                DIV_CN: tl.constexpr, DIV_M: tl.constexpr = 1, DIV_N: tl.constexpr = 1, B_PAD: tl.constexpr = 1,
                DIV_K: tl.constexpr = 1):
    """SPLIT_K == 1: the whole K range, epilogue, store into C. SPLIT_K > 1: program_id(1) sums its share of the K
    blocks and stores the fp32 partial tile into c_ptr, an fp32 (SPLIT_K, M, stride_cm) workspace;
    _splitk_reduce_kernel adds them and runs the epilogue. Each stride arrives divided by its DIV_* (a constexpr
    power of two, aligned_copy.split_stride): multiplying back tells the compiler the stride's true divisibility.
    B_PAD: B's rows hold zeros past column N up to a multiple of B_PAD (aligned_copy.aligned_copy), so its loads are
    masked at that multiple: a mask at an odd N splits every 16-byte load of B into scalar ones."""
    stride_am = _scaled(stride_am, DIV_AM, INT64)
    stride_ak = _scaled(stride_ak, DIV_AK, INT64)
    stride_bk = _scaled(stride_bk, DIV_BK, INT64)
    stride_bn = _scaled(stride_bn, DIV_BN, INT64)
    stride_cm = _scaled(stride_cm, DIV_CM, INT64)
    stride_cn = _scaled(stride_cn, DIV_CN, INT64)
    # M and N too: the masks `offs_n < N` (B's loads, C's store) vectorise only when N is a known multiple of the
    # vector width (fp16 1000^3 ran at 0.17x cuBLAS on an H100 with strides hinted but N not).
    M = M * DIV_M
    N = N * DIV_N
    # K too, for the partial last K block's mask (`offs_k < k_left`): with K's divisibility unknown its loads are
    # scalar, and on an H100 that one block cost more than the whole unmasked loop (bf16 33x4104x4096 B^T: 53.5 us,
    # against 14.7 for K = 4096 over the same 4104-element rows and 11.7 for K = 4160, which Triton knows divisible
    # by 16; benchmarks/align_copy_probe.py --stride, docs/measurements/2026-11-27-h100-s13-stride.json).
    K = K * DIV_K
    pid_m, pid_n = _grouped_tile(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)
    pid_k = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rows = _wide(offs_m, INT64)
    cols = _wide(offs_n, INT64)
    offs_k = _wide(tl.arange(0, BLOCK_K), INT64)
    # Only the full K blocks run in the main loop, with no K mask, and no M/N mask where M/N are multiples of the tile
    # (EVEN_M/EVEN_N); a partial last K block is one masked step after it (the tail), so an odd K no longer masks
    # every step. (A wrap-around of out-of-range rows/columns, tutorial 03's trick, hides N's contiguity from the
    # compiler: the fp32 1023x517x769 case fell from 85 to 135 us on an H200; masks on rows/columns only keep it.)
    k_full, k_lo, k_hi = _k_range(K, pid_k, SPLIT_K, BLOCK_K)
    step_a = _k_step(stride_ak, BLOCK_K, INT64)
    step_b = _k_step(stride_bk, BLOCK_K, INT64)
    a_ptrs = a_ptr + rows[:, None] * stride_am + offs_k[None, :] * stride_ak + k_lo * step_a
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + cols[None, :] * stride_bn + k_lo * step_b
    mask_m = offs_m < M
    mask_n = offs_n < N
    mask_nb = offs_n < (N + B_PAD - 1) // B_PAD * B_PAD  # == mask_n for B_PAD 1
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(k_lo, k_hi):
        if EVEN_M:
            a = tl.load(a_ptrs)
        else:
            a = tl.load(a_ptrs, mask=mask_m[:, None], other=0.0)
        if EVEN_N:
            b = tl.load(b_ptrs)
        else:
            b = tl.load(b_ptrs, mask=mask_nb[None, :], other=0.0)
        if UPCAST:
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += step_a
        b_ptrs += step_b
    if not EVEN_K:  # noqa: SIM102 - a compile-time test around a run-time one (Triton folds only the first)
        if pid_k == SPLIT_K - 1:  # the last split owns the tail; its pointers stopped at block k_full
            k_left = K - k_full * BLOCK_K
            a = tl.load(a_ptrs, mask=mask_m[:, None] & (offs_k[None, :] < k_left), other=0.0)
            b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & mask_nb[None, :], other=0.0)
            if UPCAST:
                a = a.to(tl.float32)
                b = b.to(tl.float32)
            acc = tl.dot(a, b, acc, input_precision=PRECISION)
    if SPLIT_K == 1:
        _epilogue_store(acc, c_ptr, bias_ptr, offs_m, offs_n, rows, cols, pid_n * BLOCK_N, M, N, stride_cm, stride_cn,
                        stride_bias, seed, threshold, scale, EPILOGUE, HAS_DROPOUT, BLOCK_M, BLOCK_N)
    else:
        ws = c_ptr + (rows + pid_k * M)[:, None] * stride_cm + cols[None, :]
        tl.store(ws, acc, mask=mask_m[:, None] & mask_n[None, :])


@triton.jit
def _splitk_reduce_kernel(ws_ptr, c_ptr, bias_ptr, M, N, stride_wm, stride_cm, stride_cn, stride_bias, seed,
                          threshold, scale, EPILOGUE: tl.constexpr, HAS_DROPOUT: tl.constexpr, INT64: tl.constexpr,
                          SPLIT_K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, DIV_WM: tl.constexpr,
                          DIV_CM: tl.constexpr, DIV_CN: tl.constexpr):
    """Sum the SPLIT_K fp32 partial tiles (a fixed order: deterministic, unlike atomics) and run the epilogue."""
    stride_wm = _scaled(stride_wm, DIV_WM, INT64)
    stride_cm = _scaled(stride_cm, DIV_CM, INT64)
    stride_cn = _scaled(stride_cn, DIV_CN, INT64)
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rows = _wide(offs_m, INT64)
    cols = _wide(offs_n, INT64)
    mask = (offs_m < M)[:, None] & (offs_n < N)[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for s in tl.static_range(SPLIT_K):
        acc += tl.load(ws_ptr + (rows + s * M)[:, None] * stride_wm + cols[None, :], mask=mask, other=0.0)
    _epilogue_store(acc, c_ptr, bias_ptr, offs_m, offs_n, rows, cols, tl.program_id(1) * BLOCK_N, M, N, stride_cm,
                    stride_cn, stride_bias, seed, threshold, scale, EPILOGUE, HAS_DROPOUT, BLOCK_M, BLOCK_N)


@triton.jit
def gemm_tma_kernel(a_desc, b_desc, c_ptr, bias_ptr, M, N, K, stride_cm, stride_cn, stride_bias, seed, threshold, scale,
                    EPILOGUE: tl.constexpr, HAS_DROPOUT: tl.constexpr, UPCAST: tl.constexpr, INT64: tl.constexpr,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                    NUM_SMS: tl.constexpr, DIV_CM: tl.constexpr, DIV_CN: tl.constexpr, DIV_M: tl.constexpr = 1,
                    DIV_N: tl.constexpr = 1):
    """Hopper: a persistent grid (one program per SM walks the tiles in grouped order), A and B tiles fetched by the
    tensor-memory accelerator through tensor descriptors (out-of-range rows, columns and K are zero-filled, so no
    masks), and the tile loop warp-specialised so loads, tensor-core work and the epilogue of different tiles overlap.
    Same epilogue, same dropout mask as gemm_kernel. UPCAST: see gemm(). DIV_*: as in gemm_kernel; M and N too: the
    epilogue's store mask `offs_n < N` with N = 3000 or 5000 (not a multiple of 16, so no divisibility Triton knows)
    made every store of C scalar, and bf16 5000x2048x5000 ran at 0.51x cuBLAS in graph replay on an H100 against
    0.96x at 4000x4096x4000 (benchmarks/gemm_wave_probe.py --kernels)."""
    stride_cm = _scaled(stride_cm, DIV_CM, INT64)
    stride_cn = _scaled(stride_cn, DIV_CN, INT64)
    M = M * DIV_M
    N = N * DIV_N
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    for tile_id in tl.range(tl.program_id(0), num_pid_m * num_pid_n, NUM_SMS, warp_specialize=True):
        pid_m, pid_n = _grouped_tile(tile_id, num_pid_m, num_pid_n, GROUP_M)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
            b = b_desc.load([k * BLOCK_K, pid_n * BLOCK_N])
            if UPCAST:
                a = a.to(tl.float32)
                b = b.to(tl.float32)
            acc = tl.dot(a, b, acc)
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        _epilogue_store(acc, c_ptr, bias_ptr, offs_m, offs_n, _wide(offs_m, INT64), _wide(offs_n, INT64),
                        pid_n * BLOCK_N, M, N, stride_cm, stride_cn, stride_bias, seed, threshold, scale, EPILOGUE,
                        HAS_DROPOUT, BLOCK_M, BLOCK_N)


@triton.jit
def gemv_kernel(a_ptr, b_ptr, c_ptr, bias_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                stride_bias, seed, threshold, scale, EPILOGUE: tl.constexpr, HAS_DROPOUT: tl.constexpr,
                B_KMAJOR: tl.constexpr, EVEN_N: tl.constexpr, EVEN_K: tl.constexpr, INT64: tl.constexpr,
                SPLIT_K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                DIV_AM: tl.constexpr, DIV_AK: tl.constexpr, DIV_BK: tl.constexpr, DIV_BN: tl.constexpr,
                DIV_CM: tl.constexpr, DIV_CN: tl.constexpr, DIV_N: tl.constexpr = 1, STAGES: tl.constexpr = 1,
                SHIFT: tl.constexpr = 1):
    """A few rows of A against all of B without tensor cores: each program owns BLOCK_M (<= 8) rows and BLOCK_N columns
    of C and (SPLIT_K > 1) one share of K, and streams its B tiles through fp32 fused multiply-adds into one 2-D
    accumulator per row of A, each summed along K once, after the loop. At decode sizes a GEMM is a read of B: a
    16-row tensor-core tile computes 16 rows for one, fp32 products there need the 3xTF32 split, and a misaligned B
    feeds tl.dot scalar loads; here every program is small, so many stay resident per SM and keep enough of B in
    flight. The products are exact fp32 (IEEE) for every dtype. B_KMAJOR: B's K dimension is the contiguous one (an
    nn.Linear weight, B^T): tiles [BLOCK_N, BLOCK_K]; otherwise [BLOCK_K, BLOCK_N]. SPLIT_K, workspace, DIV_* and
    the epilogue: as in gemm_kernel (the same dropout mask, the same reduce pass).
    Why eight named accumulators and not one 3-D [BLOCK_M, ...] tile: with the 3-D tile every K step converted the
    loaded tiles' layout to the 3-D one through shared memory (two convert_layout ops inside the loop, compile-only
    sm_90, Triton 3.9); 2-D tiles keep the loads' own 16-byte vector layout and convert nothing in the loop. The
    unused accumulators (rows >= BLOCK_M) are compile-time dead code.
    STAGES: the K loop software-pipelined that deep (tl.range's num_stages; 1: not pipelined). A loop without tl.dot
    is not pipelined by the launch's num_stages (compile-only sm_90, Triton 3.9: no asynchronous copy in it), so
    each step waited on its own loads: Nsight Compute showed fp32 28x6016x26517 at 20 cycles an instruction, 87 % of
    them on L1TEX, 265 GB/s (docs/measurements/2026-11-28-h200-s18-ncu-gemv-28.txt). policy_gemv.gemv_config says
    where it pays.
    SHIFT > 1 (N-major B whose rows are not 16-byte aligned, SHIFT = 16 bytes / element size, gemm._gemv_plan): each
    row of a B tile is read from the 16-byte boundary at or before its first column, so every load is a whole vector
    (an odd row stride otherwise leaves 4-byte loads in fp32, 2-byte in 16 bits). Row k then starts `shift` columns
    early, shift = (k·stride_bk) mod SHIFT, which depends only on k mod SHIFT (tiles start at multiples of BLOCK_K and
    BLOCK_N, both multiples of SHIFT): the accumulator's rows of one residue hold the sums of one shifted column
    window, written as SHIFT partials per K split into the workspace at their true columns, and the reduce pass adds
    them. Reading up to BLOCK_N + SHIFT - 1 columns from a row's start stays inside B while a next row exists (the
    host asks N >= BLOCK_N + SHIFT - 1), so the main loop leaves out B's last row, which the masked tail block reads."""
    stride_am = _scaled(stride_am, DIV_AM, INT64)
    stride_ak = _scaled(stride_ak, DIV_AK, INT64)
    stride_bk = _scaled(stride_bk, DIV_BK, INT64)
    stride_bn = _scaled(stride_bn, DIV_BN, INT64)
    stride_cm = _scaled(stride_cm, DIV_CM, INT64)
    stride_cn = _scaled(stride_cn, DIV_CN, INT64)
    N = N * DIV_N
    # Program 0's axis walks the row chunks of one column tile before the next tile (M > BLOCK_M: A in chunks of
    # BLOCK_M rows), so the chunks that read the same tile of B run side by side and share it through L2.
    chunks = tl.cdiv(M, BLOCK_M)
    pid_m = tl.program_id(0) % chunks
    pid_n = tl.program_id(0) // chunks
    pid_k = tl.program_id(1)
    row0 = pid_m * BLOCK_M
    m_left = M - row0  # rows of A this program owns: min(BLOCK_M, m_left)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    cols = _wide(offs_n, INT64)
    offs_k = _wide(tl.arange(0, BLOCK_K), INT64)
    # SHIFT: the main loop stops before B's last row (the tail block reads it, masked)
    k_full, k_lo, k_hi = _k_range(K - 1 if SHIFT > 1 else K, pid_k, SPLIT_K, BLOCK_K)
    step_a = _k_step(stride_ak, BLOCK_K, INT64)
    step_b = _k_step(stride_bk, BLOCK_K, INT64)
    mask_n = offs_n < N
    # this chunk's row 0 of A; its row i is i·stride_am further
    a_row = a_ptr + _wide(row0, INT64) * stride_am + offs_k * stride_ak + k_lo * step_a
    if B_KMAJOR:
        b_ptrs = b_ptr + cols[:, None] * stride_bn + offs_k[None, :] * stride_bk + k_lo * step_b
        mask_b = mask_n[:, None]
        zero = tl.zeros((BLOCK_N, BLOCK_K), dtype=tl.float32)
    elif SHIFT > 1:
        # element offset of (row k_lo·BLOCK_K + i, column c0), rounded down to a whole vector: the row's window
        first = offs_k * stride_bk + _wide(pid_n * BLOCK_N, INT64) + k_lo * step_b
        start = (first // SHIFT) * SHIFT
        b_ptrs = b_ptr + start[:, None] + _wide(tl.arange(0, BLOCK_N), INT64)[None, :]
        col = offs_n[None, :] - (first - start)[:, None]  # the column each element of the tile holds
        mask_b = (col >= 0) & (col < N)
        zero = tl.zeros((BLOCK_K, BLOCK_N), dtype=tl.float32)
    else:
        b_ptrs = b_ptr + offs_k[:, None] * stride_bk + cols[None, :] * stride_bn + k_lo * step_b
        mask_b = mask_n[None, :]
        zero = tl.zeros((BLOCK_K, BLOCK_N), dtype=tl.float32)
    acc0 = zero
    acc1 = zero
    acc2 = zero
    acc3 = zero
    acc4 = zero
    acc5 = zero
    acc6 = zero
    acc7 = zero
    for _ in tl.range(k_lo, k_hi, num_stages=STAGES):
        b = _gemv_load_b(b_ptrs, mask_b, offs_k, 0, B_KMAJOR, EVEN_N or SHIFT > 1, False)
        acc0 = _gemv_fma(acc0, a_row, 0, stride_am, m_left, b, offs_k, 0, B_KMAJOR, BLOCK_M, False)
        acc1 = _gemv_fma(acc1, a_row, 1, stride_am, m_left, b, offs_k, 0, B_KMAJOR, BLOCK_M, False)
        acc2 = _gemv_fma(acc2, a_row, 2, stride_am, m_left, b, offs_k, 0, B_KMAJOR, BLOCK_M, False)
        acc3 = _gemv_fma(acc3, a_row, 3, stride_am, m_left, b, offs_k, 0, B_KMAJOR, BLOCK_M, False)
        acc4 = _gemv_fma(acc4, a_row, 4, stride_am, m_left, b, offs_k, 0, B_KMAJOR, BLOCK_M, False)
        acc5 = _gemv_fma(acc5, a_row, 5, stride_am, m_left, b, offs_k, 0, B_KMAJOR, BLOCK_M, False)
        acc6 = _gemv_fma(acc6, a_row, 6, stride_am, m_left, b, offs_k, 0, B_KMAJOR, BLOCK_M, False)
        acc7 = _gemv_fma(acc7, a_row, 7, stride_am, m_left, b, offs_k, 0, B_KMAJOR, BLOCK_M, False)
        a_row += step_a
        b_ptrs += step_b
    if not EVEN_K or SHIFT > 1:  # noqa: SIM102 - a compile-time test around a run-time one (Triton folds only the first)
        if pid_k == SPLIT_K - 1:  # the last split owns the tail; its pointers stopped at block k_full
            k_left = K - k_full * BLOCK_K
            b = _gemv_load_b(b_ptrs, mask_b, offs_k, k_left, B_KMAJOR, False, True)
            acc0 = _gemv_fma(acc0, a_row, 0, stride_am, m_left, b, offs_k, k_left, B_KMAJOR, BLOCK_M, True)
            acc1 = _gemv_fma(acc1, a_row, 1, stride_am, m_left, b, offs_k, k_left, B_KMAJOR, BLOCK_M, True)
            acc2 = _gemv_fma(acc2, a_row, 2, stride_am, m_left, b, offs_k, k_left, B_KMAJOR, BLOCK_M, True)
            acc3 = _gemv_fma(acc3, a_row, 3, stride_am, m_left, b, offs_k, k_left, B_KMAJOR, BLOCK_M, True)
            acc4 = _gemv_fma(acc4, a_row, 4, stride_am, m_left, b, offs_k, k_left, B_KMAJOR, BLOCK_M, True)
            acc5 = _gemv_fma(acc5, a_row, 5, stride_am, m_left, b, offs_k, k_left, B_KMAJOR, BLOCK_M, True)
            acc6 = _gemv_fma(acc6, a_row, 6, stride_am, m_left, b, offs_k, k_left, B_KMAJOR, BLOCK_M, True)
            acc7 = _gemv_fma(acc7, a_row, 7, stride_am, m_left, b, offs_k, k_left, B_KMAJOR, BLOCK_M, True)
    if SHIFT > 1:  # SHIFT partials per row into the workspace (SPLIT_K·SHIFT of them), at their true columns
        shifts = (tl.arange(0, SHIFT) * (stride_bk % SHIFT)) % SHIFT  # of the rows ≡ 0, 1, ... (mod SHIFT)
        ws_cols = offs_n[None, :] - shifts[:, None]
        ws_rows = _wide((pid_k * SHIFT + tl.arange(0, SHIFT)) * M + row0, INT64)
        ws = c_ptr + ws_rows[:, None] * stride_cm + ws_cols
        ws_mask = (ws_cols >= 0) & (ws_cols < N)
        _gemv_shift_store(acc0, 0, ws, ws_mask, m_left, stride_cm, BLOCK_K, BLOCK_N, BLOCK_M, SHIFT)
        _gemv_shift_store(acc1, 1, ws, ws_mask, m_left, stride_cm, BLOCK_K, BLOCK_N, BLOCK_M, SHIFT)
        _gemv_shift_store(acc2, 2, ws, ws_mask, m_left, stride_cm, BLOCK_K, BLOCK_N, BLOCK_M, SHIFT)
        _gemv_shift_store(acc3, 3, ws, ws_mask, m_left, stride_cm, BLOCK_K, BLOCK_N, BLOCK_M, SHIFT)
        _gemv_shift_store(acc4, 4, ws, ws_mask, m_left, stride_cm, BLOCK_K, BLOCK_N, BLOCK_M, SHIFT)
        _gemv_shift_store(acc5, 5, ws, ws_mask, m_left, stride_cm, BLOCK_K, BLOCK_N, BLOCK_M, SHIFT)
        _gemv_shift_store(acc6, 6, ws, ws_mask, m_left, stride_cm, BLOCK_K, BLOCK_N, BLOCK_M, SHIFT)
        _gemv_shift_store(acc7, 7, ws, ws_mask, m_left, stride_cm, BLOCK_K, BLOCK_N, BLOCK_M, SHIFT)
    else:
        out = _gemv_tile(acc0, acc1, acc2, acc3, acc4, acc5, acc6, acc7, B_KMAJOR, BLOCK_M, BLOCK_N)
        offs_m = row0 + tl.arange(0, BLOCK_M)
        rows = _wide(offs_m, INT64)
        if SPLIT_K == 1:
            _epilogue_store(out, c_ptr, bias_ptr, offs_m, offs_n, rows, cols, pid_n * BLOCK_N, M, N, stride_cm, stride_cn,
                            stride_bias, seed, threshold, scale, EPILOGUE, HAS_DROPOUT, BLOCK_M, BLOCK_N)
        else:
            ws = c_ptr + (rows + pid_k * M)[:, None] * stride_cm + cols[None, :]
            tl.store(ws, out, mask=(offs_m < M)[:, None] & mask_n[None, :])


@triton.jit
def _gemv_load_b(b_ptrs, mask_b, offs_k, k_left, B_KMAJOR: tl.constexpr, EVEN_N: tl.constexpr, TAIL: tl.constexpr):
    """gemv_kernel's tile of B in fp32: masked by mask_b (the tile's columns inside N) unless EVEN_N, and at k_left
    along K in the TAIL block."""
    if B_KMAJOR:
        if TAIL:
            b = tl.load(b_ptrs, mask=mask_b & (offs_k[None, :] < k_left), other=0.0)
        elif EVEN_N:
            b = tl.load(b_ptrs)
        else:
            b = tl.load(b_ptrs, mask=mask_b, other=0.0)
    else:
        if TAIL:
            b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & mask_b, other=0.0)
        elif EVEN_N:
            b = tl.load(b_ptrs)
        else:
            b = tl.load(b_ptrs, mask=mask_b, other=0.0)
    return b.to(tl.float32)


@triton.jit
def _gemv_shift_store(acc, i: tl.constexpr, ws, ws_mask, m_left, stride_cm, BLOCK_K: tl.constexpr,
                      BLOCK_N: tl.constexpr, BLOCK_M: tl.constexpr, SHIFT: tl.constexpr):
    """Row i's accumulator summed per residue of the tile row mod SHIFT ([SHIFT, BLOCK_N]: row q holds the rows
    ≡ q), stored at ws (the SHIFT workspace rows of row 0, at their true columns) + i rows of A."""
    if i < BLOCK_M:
        part = tl.sum(tl.reshape(acc, (BLOCK_K // SHIFT, SHIFT, BLOCK_N)), axis=0)
        tl.store(ws + i * stride_cm, part, mask=ws_mask & (ws_mask.to(tl.int32) * 0 + i < m_left))  # a tensor mask


@triton.jit
def _gemv_fma(acc, a_row, i: tl.constexpr, stride_am, m_left, b, offs_k, k_left, B_KMAJOR: tl.constexpr,
              BLOCK_M: tl.constexpr, TAIL: tl.constexpr):
    """Row i of A's K block times B's tile, added into that row's accumulator (rows past BLOCK_M: nothing; past M:
    zeros, so they add nothing)."""
    if i < BLOCK_M:
        row_ok = offs_k * 0 + i < m_left  # a tensor: the interpreter cannot mask with a scalar
        if TAIL:
            a = tl.load(a_row + i * stride_am, mask=(offs_k < k_left) & row_ok, other=0.0).to(tl.float32)
        else:
            a = tl.load(a_row + i * stride_am, mask=row_ok, other=0.0).to(tl.float32)
        if B_KMAJOR:
            acc = tl.fma(b, a[None, :], acc)
        else:
            acc = tl.fma(b, a[:, None], acc)
    return acc


@triton.jit
def _gemv_tile(acc0, acc1, acc2, acc3, acc4, acc5, acc6, acc7, B_KMAJOR: tl.constexpr, BLOCK_M: tl.constexpr,
               BLOCK_N: tl.constexpr):
    """The [BLOCK_M, BLOCK_N] fp32 output tile: rows 0-7's accumulators each summed along K (_gemv_place); rows past
    BLOCK_M stay 0. gemv_kernel's and gemv_kshift_kernel's."""
    offs_m = tl.arange(0, BLOCK_M)
    out = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    out = _gemv_place(out, acc0, 0, offs_m, B_KMAJOR, BLOCK_M)
    out = _gemv_place(out, acc1, 1, offs_m, B_KMAJOR, BLOCK_M)
    out = _gemv_place(out, acc2, 2, offs_m, B_KMAJOR, BLOCK_M)
    out = _gemv_place(out, acc3, 3, offs_m, B_KMAJOR, BLOCK_M)
    out = _gemv_place(out, acc4, 4, offs_m, B_KMAJOR, BLOCK_M)
    out = _gemv_place(out, acc5, 5, offs_m, B_KMAJOR, BLOCK_M)
    out = _gemv_place(out, acc6, 6, offs_m, B_KMAJOR, BLOCK_M)
    out = _gemv_place(out, acc7, 7, offs_m, B_KMAJOR, BLOCK_M)
    return out


@triton.jit
def _gemv_place(out, acc, i: tl.constexpr, offs_m, B_KMAJOR: tl.constexpr, BLOCK_M: tl.constexpr):
    """Sum row i's accumulator along K into row i of the [BLOCK_M, BLOCK_N] output tile."""
    if i < BLOCK_M:
        if B_KMAJOR:
            s = tl.sum(acc, axis=1)
        else:
            s = tl.sum(acc, axis=0)
        out = tl.where(offs_m[:, None] == i, s[None, :], out)
    return out
