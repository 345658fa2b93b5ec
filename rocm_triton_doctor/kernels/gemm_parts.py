"""Device functions shared by the GEMM kernels in gemm.py (the pointer kernel, its split-K reduce pass and the
persistent TMA kernel): grouped tile order, 64-bit offsets when needed, and the fused epilogue + single store. Kept
apart so gemm.py reads as kernels -> launcher -> reference -> cases (and stays under the 400-line module limit)."""

from __future__ import annotations

import triton
import triton.language as tl

from rocm_triton_doctor.kernels.common import dropout_tile, gelu_tanh


@triton.jit
def _grouped_tile(tile_id, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    """Tile `tile_id` -> (pid_m, pid_n) in grouped order: GROUP_M row-tiles share B column-tiles while they are in L2
    (tutorial 03). Both GEMM kernels."""
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = tile_id // num_pid_in_group * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (tile_id % num_pid_in_group) % group_size_m
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def _wide(x, INT64: tl.constexpr):
    """Offsets in 64 bits when some operand's element offsets reach 2^31 (a view into a big buffer: a 32-bit product
    wrapped and the kernel read outside the tensor, SIGSEGV, kernel-edge-cases.md #6); 32 bits otherwise (cheaper
    address arithmetic)."""
    if INT64:
        return x.to(tl.int64)
    else:
        return x


@triton.jit
def _k_step(stride, BLOCK_K: tl.constexpr, INT64: tl.constexpr):
    """How far one K block moves a pointer, in 64 bits when offsets need them."""
    if INT64:
        return tl.full([], BLOCK_K, tl.int64) * stride
    else:
        return BLOCK_K * stride


@triton.jit
def _epilogue_store(acc, c_ptr, bias_ptr, offs_m, offs_n, rows, cols, col0, M, N, stride_cm, stride_cn, stride_bias,
                    seed, threshold, scale, EPILOGUE: tl.constexpr, HAS_DROPOUT: tl.constexpr, BLOCK_M: tl.constexpr,
                    BLOCK_N: tl.constexpr):
    """bias, activation and dropout on the fp32 accumulator, then the one store of C (every GEMM kernel). rows/cols:
    offs_m/offs_n in the width used for addressing."""
    mask_m = offs_m < M
    mask_n = offs_n < N
    if EPILOGUE >= 1:
        bias = tl.load(bias_ptr + cols * stride_bias, mask=mask_n, other=0.0).to(tl.float32)
        acc = acc + bias[None, :]
    if EPILOGUE == 2:
        # where(x < 0, 0, x), not maximum(x, 0): NaN < 0 is false, so NaN stays NaN as in torch.relu (maximum turned
        # NaN into 0, kernel-edge-cases.md #7).
        acc = tl.where(acc < 0.0, 0.0, acc)
    if EPILOGUE == 3:
        acc = gelu_tanh(acc)
    acc = dropout_tile(acc, offs_m, col0, N, seed, threshold, scale, HAS_DROPOUT, BLOCK_M, BLOCK_N)
    c_ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])
