"""Shared plumbing for the elementwise kernels (add_mul, swiglu): one dense layout runs the flat 1-D kernel; any
other layout (transposed, sliced, chunked, expanded inputs) runs a 2-D tiled kernel that reads each input through its
own strides, instead of refusing it or copying it with a hidden .contiguous() (kernel-edge-cases.md, "Non-contiguous
inputs"). The output is always contiguous.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels.base import cdiv, collapse
from rocm_triton_doctor.kernels.common import fold_offset


@dataclass(frozen=True)
class Strided:
    """The folded shape (D0·D1·D2 rows of N) and each input's (s0, s1, s2, sn): element (r, c) of input i is at
    (r // (D1·D2))·s0 + (r // D2 % D1)·s1 + (r % D2)·s2 + c·sn; the contiguous output's is r·N + c."""

    M: int
    N: int
    D1: int
    D2: int
    strides: tuple[tuple[int, int, int, int], ...]

    def args(self) -> list[int]:
        return [s for st in self.strides for s in st]


def strided_layout(name: str, out: torch.Tensor, *inputs: torch.Tensor) -> Strided | None:
    """None when every input has the output's (contiguous) layout: the flat kernel. Otherwise the folded view: up to
    three leading dimensions that do not merge, and the last (a (B, H, S, D) tensor transposed to (B, S, H, D) is
    three); layouts that fold into more are refused (call .contiguous())."""
    if out.is_contiguous():  # the common case first: every input dense (same shape: the callers checked) is flat
        for t in inputs:
            if not t.is_contiguous():
                break
        else:
            return None
    dims = collapse(tuple(out.shape), out.stride(), *(t.stride() for t in inputs))
    if len(dims) <= 1 and all(st == 1 for _, sts in dims for st in sts):
        return None
    if len(dims) > 4:
        raise ValueError(f"{name}: inputs of shape {tuple(out.shape)} with strides "
                         f"{', '.join(str(t.stride()) for t in inputs)} do not fold into four dimensions; call "
                         ".contiguous() first")
    dims = [(1, [0] * (len(inputs) + 1))] * (4 - len(dims)) + dims
    (d0, s0), (d1, s1), (d2, s2), (n, sn) = dims
    return Strided(d0 * d1 * d2, n, d1, d2, tuple((s0[i], s1[i], s2[i], sn[i]) for i in range(1, len(inputs) + 1)))


@triton.jit
def full_block(pid, n, BLOCK: tl.constexpr):
    """Whether flat block `pid` lies wholly inside n elements. The flat kernels branch on it and mask only the last
    block: a mask `offs < n` on every block, with n not a multiple of 16 (Triton specialises ints only as divisible by
    16 or not), compiles every load to a scalar one (ld.global.b16 on sm_90, buffer_load_ushort on gfx942)."""
    return (pid + 1) * BLOCK <= n


@triton.jit
def tile_offsets(rows, cols, D1, D2, s0, s1, s2, sn):
    """[BLOCK_M, BLOCK_N] element offsets of one input (int64: offsets past 2^31): rows over up to three leading
    dimensions (Strided's layout, common.fold_offset)."""
    return fold_offset(rows, D1, D2, s0, s1, s2)[:, None] + cols[None, :].to(tl.int64) * sn


@triton.jit
def tile_of(pid, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Program pid's rows and columns, tiles numbered row-major over a 1-D grid (a second grid dimension is capped at
    65535 on CUDA: a strided 1-D view of 10^8 elements folds to one row of 10^8 columns)."""
    n_col_tiles = tl.cdiv(N, BLOCK_N)
    pid_m = pid.to(tl.int64) // n_col_tiles
    pid_n = pid % n_col_tiles
    return pid_m * BLOCK_M + tl.arange(0, BLOCK_M), pid_n * BLOCK_N + tl.arange(0, BLOCK_N)


def strided_grid(L: Strided, cfg: dict[str, int]) -> tuple[int]:
    return (cdiv(L.M, cfg["BLOCK_M"]) * cdiv(L.N, cfg["BLOCK_N"]),)
