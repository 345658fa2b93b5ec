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
def dropout(x, offsets, seed, p, HAS_DROPOUT: tl.constexpr):
    """Keep each element with probability 1-p, scaled by 1/(1-p). `offsets` are GLOBAL element indices, so the mask
    depends only on (seed, position): the same on every backend, tile size and grid (tl.rand is Philox-4x32-10)."""
    if HAS_DROPOUT:
        r = tl.rand(seed, offsets)
        x = tl.where(r >= p, x / (1.0 - p), 0.0)
    return x
