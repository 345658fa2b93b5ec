"""Device functions shared by the GEMM kernels in gemm.py (the pointer kernel, its split-K reduce pass and the
persistent TMA kernel): grouped tile order, 64-bit offsets when needed, and the fused epilogue + single store. Kept
apart so gemm.py reads as kernels -> launcher -> reference -> cases (and stays under the 400-line module limit)."""

from __future__ import annotations

import functools
from typing import Any

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels import argcheck
from rocm_triton_doctor.kernels.base import no_tf32
from rocm_triton_doctor.kernels.common import dropout_tile, gelu_tanh

CONFIG_KEYS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "SPLIT_K", "num_warps", "num_stages", "ALIGN_COPY")


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
def _scaled(stride, DIV: tl.constexpr, INT64: tl.constexpr):
    """stride · DIV (the launcher passed stride // DIV, see split_stride), in 64 bits when offsets need them: a stride
    of 2^31 + 16 arrives as the 32-bit 2^27 + 1, and a 32-bit product would wrap (a segfault in the interpreter)."""
    if INT64:
        return tl.full([], DIV, tl.int64) * stride
    else:
        return stride * DIV


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


# -- host side: stride divisibility, aligned copies ----------------------------------------------------------------
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


@functools.cache
def _sm_count(device: torch.device) -> int:
    return int(torch.cuda.get_device_properties(device).multi_processor_count)


def _cus(dev: torch.device) -> int:
    """SMs (NVIDIA) or CUs (AMD: torch reports them as multi_processor_count) for the split-K policy; 0 unknown."""
    return _sm_count(dev) if dev.type == "cuda" else 0


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


def aligned_copy(t: torch.Tensor) -> torch.Tensor:
    """A copy of 2-D `t` whose unit-stride dimension is kept (column-major stays column-major, the rest becomes
    row-major) with the outer stride rounded up to 16 bytes: a fresh allocation is 256-byte aligned, so the copy
    satisfies every alignment rule (vector loads, TMA descriptors)."""
    rows, cols = t.shape
    per = max(1, 16 // t.element_size())
    if t.stride(0) == 1 and t.stride(1) != 1 and cols > 1:  # column-major: pad the columns' length (rows)
        buf = torch.empty((cols, -(-rows // per) * per), dtype=t.dtype, device=t.device)[:, :rows].t()
    else:
        buf = torch.empty((rows, -(-cols // per) * per), dtype=t.dtype, device=t.device)[:, :cols]
    buf.copy_(t)
    return buf


# -- host side: config check, fp64 reference, eager baseline, cost ------------------------------------------
def _checked_config(config: dict[str, Any]) -> dict[str, Any]:
    """A caller's tiles (tests, tune.py): clear errors instead of an interpreter trace (kernel-edge-cases.md #22).
    ALIGN_COPY alone (no tiles) keeps the policy's tiles and only sets the aligned-copy switch."""
    unknown = set(config) - set(CONFIG_KEYS)
    if unknown:
        raise ValueError(f"gemm: unknown config keys {sorted(unknown)} (use {', '.join(CONFIG_KEYS)})")
    if set(config) <= {"ALIGN_COPY"}:
        return dict(config)
    cfg = {"GROUP_M": 8, "num_warps": 4, **config}
    for key in ("BLOCK_M", "BLOCK_N", "BLOCK_K"):
        argcheck.check_block("gemm", key, cfg.get(key))
    split = cfg.get("SPLIT_K", 1)
    if isinstance(split, bool) or not isinstance(split, int) or not 1 <= split <= 64:
        raise ValueError(f"gemm: SPLIT_K must be an int in [1, 64], got {split!r}")
    return cfg


def reference(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor | None, epilogue: str) -> torch.Tensor:
    """fp64 on CPU is exact enough to judge fp32; fp32 elsewhere (matmul in fp64 is slow on GPUs)."""
    acc_t = torch.float64 if a.device.type == "cpu" else torch.float32
    with no_tf32():
        y = a.to(acc_t) @ b.to(acc_t)
    if bias is not None:  # added whenever given, epilogue "none" included (as gemm() does)
        y = y + bias.to(acc_t)
    if epilogue == "bias_relu":
        y = torch.relu(y)
    if epilogue == "bias_gelu":
        y = torch.nn.functional.gelu(y, approximate="tanh")
    return y


def eager(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor | None, epilogue: str, p: float) -> torch.Tensor:
    y = a @ b
    if bias is not None:
        y = y + bias
    if epilogue == "bias_relu":
        y = torch.relu(y)
    if epilogue == "bias_gelu":
        y = torch.nn.functional.gelu(y, approximate="tanh")
    if p > 0:
        y = torch.nn.functional.dropout(y, p=p, training=True)
    return y


def flops(M: int, N: int, K: int) -> float:
    return 2.0 * M * N * K


def bytes_moved(M: int, N: int, K: int, elem: int, bias: bool) -> float:
    return float(elem * (M * K + K * N + M * N + (N if bias else 0)))
