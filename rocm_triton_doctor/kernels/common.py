"""Triton building blocks shared by several kernels: GELU(tanh) without libdevice, seeded Philox dropout, and where a row
over folded leading dims starts (fold_offset)."""

from __future__ import annotations

import triton
import triton.language as tl

SQRT_2_OVER_PI = 0.7978845608028654


@triton.jit
def gelu_tanh(x, FAST_TANH: tl.constexpr = False):
    # 0.5*x*(1 + tanh(u)), u = sqrt(2/pi)*(x + 0.044715 x^3). The portable form is x * sigmoid(2u) (the interpreter has
    # no libdevice tanh, kernels.md §2.2). FAST_TANH (NVIDIA only) uses the hardware tanh.approx.f32 (one MUFU op,
    # max relative error about 2^-11 per the PTX ISA) in place of an exp and a division: for 16-bit outputs only,
    # where that error is at or below the output's own rounding.
    u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    if FAST_TANH:
        t = tl.inline_asm_elementwise("tanh.approx.f32 $0, $1;", "=r,r", [u], dtype=tl.float32, is_pure=True, pack=1)
        return 0.5 * x * (1.0 + t)
    else:
        return x * tl.sigmoid(2.0 * u)


@triton.jit
def gelu_tanh_grad(u):
    """d/du of gelu_tanh's portable form u·σ(2t), t = √(2/π)(u + 0.044715u³): σ(2t) + u·σ(2t)(1 - σ(2t))·2√(2/π)(1 +
    3·0.044715u²). The backwards use it for FAST_TANH forwards too (they differ by ~2^-11 relative). u is first held
    to ±1e4, where the slope is 1 or 0 to fp32's precision: past ~1.8e19 u² overflows and the second term is 0 · inf,
    NaN (torch's gelu_backward gives NaN there), and a 16-bit pre-activation that overflowed to ±inf (the GEMM's
    bias_gelu backward reads one, gemm_autograd.py) has those slopes too. NaN stays NaN (comparisons with it fail)."""
    u = tl.where(u > 1.0e4, 1.0e4, tl.where(u < -1.0e4, -1.0e4, u))
    s = tl.sigmoid(2.0 * 0.7978845608028654 * (u + 0.044715 * u * u * u))
    return s + u * s * (1.0 - s) * (2.0 * 0.7978845608028654) * (1.0 + 3.0 * 0.044715 * u * u)


@triton.jit
def dropout_tile(x, rows, col0, n_cols, seed, threshold, scale, HAS_DROPOUT: tl.constexpr, BLOCK_M: tl.constexpr,
                 BLOCK_N: tl.constexpr):
    """Dropout for a [BLOCK_M, BLOCK_N] tile whose rows are `rows` and whose first column is `col0` (a multiple of 8):
    keep with probability 1-p, multiply kept values by `scale` = 1/(1-p).

    One Philox-4x32-10 (tl.randint4x) serves 8 elements: counter = row·ceil(N/8) + col/8, and element col mod 8 = j
    uses the low (j < 4) or high (j >= 4) 16 bits of word j mod 4. It is kept when those 16 bits >= threshold =
    round(p·65536), so the keep probability is quantised to 1/65536 (p = 0.1 becomes 0.100006). Calling tl.rand per
    element runs one Philox per element and throws three of its four words away: measured on an H200 that made the
    GEMM epilogue 0.27x eager and the bias+GELU+dropout+residual kernel ~30% of copy bandwidth (docs/performance.md).
    The mask depends only on (seed, row, col): the same on every backend, tile size and grid.
    """
    if HAS_DROPOUT:
        octets = tl.cdiv(n_cols, 8)
        ocols = col0 // 8 + tl.arange(0, BLOCK_N // 8)
        counter = rows[:, None].to(tl.int64) * octets + ocols[None, :]
        r0, r1, r2, r3 = tl.randint4x(seed, counter)
        # tl.join appends a trailing dim, so the LAST join picks the innermost index bit. Column j = 4·half + word of
        # the octet is built as join(join(join(l0, h0), join(l2, h2)), join(join(l1, h1), join(l3, h3))): bit 0 of
        # j <- outer join (word parity), bit 1 <- middle (word // 2), bit 2 <- inner (low/high half). No permute: a
        # permute forces a layout conversion that cost 8 % of the GEMM+dropout throughput on an H200. Spreading the
        # words with a select chain over a [BLOCK_M, BLOCK_N/8, 8] view instead (no joins) was measured too and lost:
        # GEMM+bias+ReLU+dropout fp16 4096^3 1.05x eager against 1.30x, bias+GELU+dropout+residual fp16 92 % of copy
        # against 97 % (docs/measurements/2026-11-21-h200-tune-7-*.json).
        l0, l1, l2, l3 = r0 & 0xFFFF, r1 & 0xFFFF, r2 & 0xFFFF, r3 & 0xFFFF
        h0, h1, h2, h3 = r0 >> 16, r1 >> 16, r2 >> 16, r3 >> 16
        halves = tl.join(tl.join(tl.join(l0, h0), tl.join(l2, h2)), tl.join(tl.join(l1, h1), tl.join(l3, h3)))
        halves = tl.reshape(halves, (BLOCK_M, BLOCK_N))
        x = tl.where(halves >= threshold, x * scale, 0.0)
    return x


@triton.jit
def fold_offset(r, D1, D2, s0, s1, s2):
    """The element offset of row r (a scalar or a vector, int64) over up to three leading dims that do not merge, of
    sizes (M / (D1·D2), D1, D2) and strides (s0, s1, s2): r = (i0, i1, i2) at i0·s0 + i1·s1 + i2·s2. D2 is 1 unless
    three dims stay apart (Triton then specialises it to a constant and the third term folds away). The row kernels
    (rows.row_offsets, rows_split) and the elementwise tiles (elementwise.tile_offsets) all place rows this way."""
    lead = r // D2
    return (lead // D1) * s0 + (lead % D1) * s1 + (r % D2) * s2
