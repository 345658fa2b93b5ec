"""The flat form of bias+GELU+dropout+residual (its op, row-tile kernels and launch are in
bias_gelu_dropout_residual.py): contiguous x and residual as one stretch of n = M·N elements, forward and backward.

Why. The row tiles read row r at r·N; where N is not a multiple of 16 Triton cannot mark that offset divisible by 16,
so every load is scalar (16-byte aligned or not), and a width that is not a multiple of the tile leaves lanes idle.
One stretch is read and written in whole 16-byte vectors whatever N is (policy.bias_flat says when; its docstring has
the H200 measurements). The bias is gathered at each lane's column (flat_columns). Dropout draws Philox counter f // 8
for flat index f (flat_dropout): the row tiles' draw where N % 8 == 0, and every other width runs here whatever its
layout, so the mask is the same for every layout and form.
"""

from __future__ import annotations

import triton
import triton.language as tl

from rocm_triton_doctor.kernels.common import dropout_tile, gelu_tanh, gelu_tanh_grad
from rocm_triton_doctor.kernels.elementwise import full_block


@triton.jit
def flat_columns(start, lanes, N, ONE_WRAP: tl.constexpr):
    """The columns of flat indices start + lanes in rows of N: ONE_WRAP (BLOCK <= N): a block passes at most one row
    end, so one subtraction finds them."""
    col = (start % N).to(tl.int32) + lanes
    if ONE_WRAP:
        col = tl.where(col >= N, col - N, col)
    else:  # col mod N by an fp32 quotient (an integer % is ~20 instructions). 1 / N is within 2 ulp (NVIDIA compiles
        # it to div.full.f32; AMD's division is correctly rounded), so col·(1 / N) is off col / N by under 2^-21·col:
        # for col < N + BLOCK <= 2^15 that cannot reach the next integer from below (at least 1 / N away), only fall
        # under an exact one — the quotient is the true one or one under, and one subtraction corrects it (tests/
        # kernels/test_bias_gelu_flat.py checks every N < 2^14 in numpy's fp32 with 1 / N moved 0-2 ulp either way).
        col -= (col.to(tl.float32) * (1.0 / N)).to(tl.int32) * N
        col = tl.where(col >= N, col - N, col)
    return col


@triton.jit
def flat_dropout(y, start, seed, threshold, scale, HAS_DROPOUT: tl.constexpr, BLOCK: tl.constexpr):
    """dropout_tile over flat indices start .. start + BLOCK (start a multiple of 8): a [1, BLOCK] tile at row 0 whose
    columns start at `start`, so lane f draws counter f // 8: the row tiles' counter row·N/8 + col // 8 where
    N % 8 == 0."""
    if HAS_DROPOUT:
        y = tl.reshape(dropout_tile(tl.reshape(y, (1, BLOCK)), tl.zeros((1,), tl.int64), start, 8, seed, threshold,
                                    scale, HAS_DROPOUT, 1, BLOCK), (BLOCK,))
    return y


@triton.jit
def flat_block(bias_ptr, sb, n, N, BLOCK: tl.constexpr, ONE_WRAP: tl.constexpr):
    """This program's block: (start, lanes, the bias at each lane's column as fp32, whether the block is full)."""
    pid = tl.program_id(0)
    start = pid.to(tl.int64) * BLOCK
    lanes = tl.arange(0, BLOCK)
    b = tl.load(bias_ptr + flat_columns(start, lanes, N, ONE_WRAP).to(tl.int64) * sb).to(tl.float32)
    return start, lanes, b, full_block(pid, n, BLOCK)


@triton.jit
def flat_load(ptr, start, lanes, n, full):
    """Lanes start + lanes of a flat stretch of n, as fp32: unmasked where the block is full (full_block: whole 16-byte
    vectors), masked in the last block."""
    if full:
        v = tl.load(ptr + start + lanes)
    else:
        v = tl.load(ptr + start + lanes, mask=start + lanes < n, other=0.0)
    return v.to(tl.float32)


@triton.jit
def flat_store(ptr, start, lanes, n, v, full):
    """v into lanes start + lanes of a flat stretch of n, in ptr's dtype (as flat_load)."""
    v = v.to(ptr.dtype.element_ty)
    if full:
        tl.store(ptr + start + lanes, v)
    else:
        tl.store(ptr + start + lanes, v, mask=start + lanes < n)


@triton.jit
def bias_gelu_dropout_residual_flat_kernel(x_ptr, bias_ptr, res_ptr, out_ptr, n, N, sb, seed, threshold, scale,
                                           HAS_DROPOUT: tl.constexpr, BLOCK: tl.constexpr, ONE_WRAP: tl.constexpr,
                                           FAST_TANH: tl.constexpr = False):
    """out = residual + dropout(gelu_tanh(x + bias)) over one flat stretch (the module docstring)."""
    start, lanes, b, full = flat_block(bias_ptr, sb, n, N, BLOCK, ONE_WRAP)
    x = flat_load(x_ptr, start, lanes, n, full)
    r = flat_load(res_ptr, start, lanes, n, full)
    y = flat_dropout(gelu_tanh(x + b, FAST_TANH), start, seed, threshold, scale, HAS_DROPOUT, BLOCK)
    flat_store(out_ptr, start, lanes, n, r + y, full)


@triton.jit
def bias_gelu_dropout_residual_backward_flat_kernel(dy_ptr, x_ptr, bias_ptr, dx_ptr, n, N, sb, seed, threshold,
                                                    scale, HAS_DROPOUT: tl.constexpr, BLOCK: tl.constexpr,
                                                    ONE_WRAP: tl.constexpr):
    """∂x over contiguous dy and x as one flat stretch (where the forward runs flat: policy.bias_flat); ∂bias is then
    the column sums of ∂x, which the caller takes."""
    start, lanes, b, full = flat_block(bias_ptr, sb, n, N, BLOCK, ONE_WRAP)
    dy = flat_load(dy_ptr, start, lanes, n, full)
    u = flat_load(x_ptr, start, lanes, n, full) + b
    g = flat_dropout(dy * gelu_tanh_grad(u), start, seed, threshold, scale, HAS_DROPOUT, BLOCK)
    flat_store(dx_ptr, start, lanes, n, g, full)
