"""The alignment of GEMM operands: how a stride's divisibility reaches the compiler (`split_stride`), which operands
16-byte loads cannot read (`misaligned`: a 4097-element row, a view one element off), and their aligned copies
(`aligned_copy`: a padded buffer filled in one launch of `pad_copy_kernel`).

Why a kernel: the copy was `torch.empty` + `zero_()` of the padding + `copy_()` into the strided buffer, and torch's
copy into a non-contiguous destination runs an indexed element loop: a 4097x4096 bf16 weight (33.5 MB) took 45.2 us on
an H100 against 24.3 for a clone of the same bytes, and the planner copied twice (gemm.py; the copied M=1 GEMM of
docs/measurements/2026-11-27-h200-s8-gemm-align-small-m.json took 95.8 us against 16.1 uncopied), which is why copying
had paid only from 256 rows of reuse (policy.gemm_align_copy). Here each program copies a BLOCK_R x BLOCK_C tile:
loads along the source's unit-stride dimension (coalesced, scalar where the rows are misaligned), zeros past its end,
and stores whole rows of the padded buffer, whose row stride reaches the compiler as a multiple of 16 bytes (the
stride // DIV trick of split_stride), so the stores are 16-byte vectors."""

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels.launch import launch
from rocm_triton_doctor.kernels.launch_site import DYN, Site
from rocm_triton_doctor.kernels.policy import interpreter_active


# -- stride divisibility ------------------------------------------------------------------------------------------
# Triton specialises an int argument only as ==1 or "divisible by 16" (backends/compiler.py get_int_specialization),
# so a leading stride of 1000 or 3000 elements reaches the compiler as "divisibility 1": its AxisInfo analysis then
# cannot prove that a row starts 16-byte aligned, and every load of that operand becomes a scalar 2-byte load with no
# cp.async (an H100 ran fp16 1000^3 in 52 us against cuBLAS's 8.3, issue #16). The launcher passes each stride as
# stride // DIV with DIV a constexpr, the largest power of two <= 16 dividing it, and the kernels use stride_q * DIV:
# the product's divisibility is exactly DIV times what Triton knows of the quotient, never more than the truth. The
# base pointer's alignment stays Triton's own test (data_ptr % 16), so a view offset by one element is never claimed
# aligned.


def stride_div(stride: int) -> int:
    """The largest power of two <= 16 that divides `stride` (16 for a stride of 0: any multiple is exact)."""
    return 16 if stride == 0 else min(16, stride & -stride)


def split_stride(stride: int) -> tuple[int, int]:
    """(stride // DIV, DIV): what the kernels take for one stride (see above)."""
    d = stride_div(stride)
    return stride // d, d


def misaligned(t: torch.Tensor) -> bool:
    """True when a 2-D operand cannot be read with 16-byte vector loads along a unit-stride dimension: no unit stride
    at all, a base address not 16-byte aligned, or an outer stride that is not a multiple of 16 bytes (4097
    elements). Size-1 dimensions do not count (their stride is never used)."""
    if t.data_ptr() % 16:
        return True
    big = [d for d in (0, 1) if t.shape[d] > 1]
    inner = [d for d in big if t.stride(d) == 1]
    if not big:
        return False
    if not inner:
        return True
    outer = [d for d in big if d != inner[0]]
    return bool(outer) and (t.stride(outer[0]) * t.element_size()) % 16 != 0


@triton.jit
def pad_copy_kernel(src, dst, rows, cols, s_r, s_c, width_q, DIV: tl.constexpr, INT64: tl.constexpr,
                    BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """dst[r, c] = src[r, c] for c < cols, 0 for cols <= c < width; dst is row-major with row stride width
    (= width_q * DIV, a multiple of 16 bytes)."""
    r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    if INT64:
        r = r.to(tl.int64)
    width = width_q * DIV
    in_r = (r < rows)[:, None]
    x = tl.load(src + r[:, None] * s_r + c[None, :] * s_c, mask=in_r & (c < cols)[None, :], other=0)
    tl.store(dst + r[:, None] * width + c[None, :], x, mask=in_r & (c < width)[None, :])


COPY_TILE = 4096  # elements a program copies: 8 KiB of bf16, 32 a thread at 4 warps


def aligned_like(t: torch.Tensor) -> torch.Tensor:
    """An uninitialised buffer with the layout aligned_copy(t) returns (for planning a launch without copying)."""
    return _aligned_buffers(t)[2]


class CopyPlan:
    """aligned_copy for one signature (shape, strides, dtype), worked out once: the buffer's shape and the copy
    kernel's launch as a launch Site (launch_site.py), so a planned GEMM's copy costs an allocation and one cached
    launch instead of launch()'s key of every argument (issue #16 item 4: hunt 23's fp16 58x2262x1858 bias_relu,
    both operands copied, spent as much host time in its two copies as in its two GEMM launches; benchmarks/
    host_hunt_probe.py, docs/measurements/2026-11-29-h200-s29-host.json). Calls with another signature than the
    sample's must not use it (gemm's plan key holds the shape, strides and dtypes)."""

    __slots__ = ("colmajor", "shape", "cols", "site")

    def __init__(self, t: torch.Tensor) -> None:
        self.colmajor, src, width = _geometry(t)
        rows, cols = src.shape
        self.shape, self.cols = (rows, width), cols
        self.site = None
        if rows and width and (t.device.type != "cpu" or interpreter_active()):
            grid, ints, kw = _copy_launch(src, width)
            self.site = Site(pad_copy_kernel, grid, (DYN, DYN, *ints), kw)

    def __call__(self, t: torch.Tensor) -> torch.Tensor:
        if self.site is None:  # empty, or a CPU tensor with no Triton backend: the unplanned path
            return aligned_copy(t)
        full = torch.empty(self.shape, dtype=t.dtype, device=t.device)
        self.site(t.t() if self.colmajor else t, full)
        buf = full[:, :self.cols]
        return buf.t() if self.colmajor else buf


def aligned_copy(t: torch.Tensor) -> torch.Tensor:
    """A copy of 2-D `t` whose unit-stride dimension is kept (column-major and a single column become column-major,
    the rest row-major) with the outer stride rounded up to 16 bytes (128 for rows of 2 KiB and more): a fresh
    allocation is 256-byte aligned, so the copy satisfies every alignment rule (vector loads, TMA descriptors). The
    padding past the unit-stride dimension's end holds zeros, so a kernel may read whole 16-byte vectors across it
    (gemm_kernel's B_PAD, and the K loop of two copied K-major operands)."""
    src, full, out = _aligned_buffers(t)
    rows, cols = src.shape
    width = full.shape[1]
    if rows and width:
        if t.device.type == "cpu" and not interpreter_active():  # no Triton backend to run on
            full[:, cols:].zero_()
            full[:, :cols].copy_(src)
        else:
            grid, ints, kw = _copy_launch(src, width)
            launch(pad_copy_kernel, grid, src, full, *ints, **kw)
    return out


def _copy_launch(src: torch.Tensor, width: int) -> tuple[tuple[int, int], tuple[int, ...], dict[str, Any]]:
    """(grid, integer arguments, constexprs and options) of pad_copy_kernel copying row-major `src` into rows of
    `width` elements."""
    rows, cols = src.shape
    block_c = min(256, triton.next_power_of_2(width))
    block_r = COPY_TILE // block_c
    int64 = max((rows - 1) * src.stride(0) + (cols - 1) * src.stride(1), rows * width) >= 2**31
    width_q, div = split_stride(width)
    grid = (triton.cdiv(rows, block_r), triton.cdiv(width, block_c))
    return grid, (rows, cols, src.stride(0), src.stride(1), width_q), {"DIV": div, "INT64": int64,
                                                                      "BLOCK_R": block_r, "BLOCK_C": block_c,
                                                                      "num_warps": 4}


def _geometry(t: torch.Tensor) -> tuple[bool, torch.Tensor, int]:
    """(column-major, t in row-major orientation, the padded buffer's row width) of aligned_copy(t)."""
    # column-major, or a single column (its rows then sit side by side, not one per 16 bytes)
    colmajor = t.shape[0] > 1 and (t.shape[1] == 1 or (t.stride(0) == 1 and t.stride(1) != 1))
    src = t.t() if colmajor else t  # row-major orientation: copy along src's rows
    cols = src.shape[1]
    # Rows of 2 KiB and more start on a 128-byte line (at most 6 % more bytes): a K-major operand over 4104-element
    # bf16 rows (16-byte aligned) ran its K loop at 14.7 us where 4160-element rows took 10.1 (bf16 33x4096x4096 B^T
    # on an H100, benchmarks/align_copy_probe.py --stride); shorter rows keep 16 bytes.
    per = max(1, (128 if cols * t.element_size() >= 2048 else 16) // t.element_size())
    return colmajor, src, -(-cols // per) * per


def _aligned_buffers(t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(t in row-major orientation, the padded buffer, the view of it aligned_copy returns)."""
    colmajor, src, width = _geometry(t)
    rows, cols = src.shape
    full = torch.empty((rows, width), dtype=t.dtype, device=t.device)
    buf = full[:, :cols]
    return src, full, buf.t() if colmajor else buf
