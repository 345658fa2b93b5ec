"""Triton building blocks shared by several kernels: GELU(tanh) without libdevice, and seeded Philox dropout."""

from __future__ import annotations

import triton
import triton.language as tl

SQRT_2_OVER_PI = 0.7978845608028654


@triton.jit
def gelu_tanh(x):
    # 0.5*x*(1 + tanh(u)) == x * sigmoid(2u), u = sqrt(2/pi)*(x + 0.044715 x^3). Written with sigmoid because the
    # interpreter has no libdevice tanh (kernels.md §2.2); same math on every backend.
    u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    return x * tl.sigmoid(2.0 * u)


@triton.jit
def dropout_tile(x, rows, col0, n_cols, seed, threshold, scale, HAS_DROPOUT: tl.constexpr, BLOCK_M: tl.constexpr,
                 BLOCK_N: tl.constexpr):
    """Dropout for a [BLOCK_M, BLOCK_N] tile whose rows are `rows` and whose first column is `col0` (a multiple of 4):
    keep with probability 1-p, scale kept values.

    One Philox-4x32-10 (tl.randint4x) per quad of columns, all four 32-bit words used: counter = row·ceil(N/4) + col/4,
    word = col mod 4. Calling tl.rand per element instead runs one Philox per element and throws three of its four
    words away, which made the epilogue integer-bound (measured on an H200: GEMM+dropout at 0.27x eager; kernels.md
    perf notes). An element is kept when its word >= threshold = p·2^32 (P = 1-p, resolution 2^-32). The mask depends
    only on (seed, row, col): the same on every backend, tile size and grid. Needs BLOCK_N % 4 == 0 and tiles that
    start at multiples of 4 columns.
    """
    if HAS_DROPOUT:
        quads = tl.cdiv(n_cols, 4)
        qcols = col0 // 4 + tl.arange(0, BLOCK_N // 4)
        counter = rows[:, None].to(tl.int64) * quads + qcols[None, :]
        r0, r1, r2, r3 = tl.randint4x(seed, counter)
        # interleave so that column 4q+j gets word j: join(join(r0,r2), join(r1,r3)) -> [[r0,r1],[r2,r3]] per quad
        words = tl.join(tl.join(r0, r2), tl.join(r1, r3))
        words = tl.reshape(words, (BLOCK_M, BLOCK_N))
        x = tl.where(words >= threshold, x * scale, 0.0)
    return x
