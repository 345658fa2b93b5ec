"""attention's host helpers, shared with its backward and split forms (attention.py re-exports them): SDPA's shapes
folded to (B, H, S, D), the strides the pointer kernels take, the softmax scale, fp32 tl.dot precision, the work a
causal mask leaves, and the lse= check. Split from attention.py to keep one topic per file."""

from __future__ import annotations

import math

import torch

from rocm_triton_doctor.kernels import argcheck, policy
from rocm_triton_doctor.kernels.rows import vector_div

LOG2E = 1.4426950408889634


def sdpa_lead(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple[int, ...] | None:
    """The leading shape of SDPA's (H, S, D) / (..., H, S, D) inputs (q, k and v of one rank other than 4, with the
    same leading dims), which attention folds into B; None for (B, H, S, D) inputs or ones its checks refuse."""
    if (all(isinstance(t, torch.Tensor) for t in (q, k, v)) and q.dim() != 4 and q.dim() >= 3
            and q.dim() == k.dim() == v.dim() and q.shape[:-3] == k.shape[:-3]):
        return tuple(q.shape[:-3])
    return None


def heads4(t: torch.Tensor, name: str) -> torch.Tensor:
    """SDPA's (..., H, S, D) as the (B, H, S, D) view with B the product of the leading dims (1 for a 3-D tensor);
    refused when those dims do not share one stride (a view needs that)."""
    return argcheck.fold_rows("attention", name, t, keep=3, noun="batch")


def fp32_dots(target: policy.Target, dtype: torch.dtype) -> dict[str, str]:
    """The attention kernels' DOT_PREC: how tl.dot forms fp32 products. Left unset, Triton takes TF32 on NVIDIA
    (tl.dot's input_precision=None means "tf32" wherever the target allows it; triton/language/core.py): fp32
    attention was 11-15x its tolerance off an fp64 reference on an H100/H200 while SDPA's fp32 was within 0.008x
    (benchmarks/accuracy_probe.py; found by `smoke --preset random --seed 11`, docs/measurements/2026-11-27-h100-s9-*).
    policy.fp32_dot_precision keeps fp32 accuracy; 16-bit tiles take "ieee" (exact products, ignored there)."""
    return {"DOT_PREC": policy.fp32_dot_precision(target) if dtype == torch.float32 else "ieee"}


def visible_pairs(S_q: int, S_k: int, causal: bool) -> float:
    """(query, key) pairs the softmax weighs: all of them, or under SDPA's top-left causal mask (query i sees keys
    0..i) the triangle plus, when S_q > S_k, full rows. Half of S_q·S_k had been the estimate: a tenth of the work for
    950 queries over 97 keys, which sent that D = 160 call to the kernel meant for small problems (0.41x SDPA, H200
    hunt seed 9)."""
    if not causal:
        return float(S_q) * S_k
    n = min(S_q, S_k)
    return n * (n + 1) / 2 + float(max(0, S_q - S_k)) * S_k


FP32_MIN_NORMAL = 2.0**-126


def row_strides(*ts: torch.Tensor) -> tuple[int, list[int]]:
    """(DIV, the strides the pointer kernels take for (B, H, S, D) tensors ts): every tensor's batch, head and row
    strides divided by DIV, the largest power of two up to 16 dividing them all (rows.vector_div; _bhs multiplies
    them back), then its head-dim stride as it is. A size-1 dimension's stride is passed as 0: its index is always 0,
    and a stride torch left arbitrary there must not cost the others their alignment."""
    st = [[0 if n == 1 else s for n, s in zip(t.shape, t.stride())] for t in ts]
    div = vector_div(*(s for x in st for s in x[:3]))
    return div, [v for x in st for v in (*(s // div for s in x[:3]), x[3])]


def kernel_scale(D: int, sm_scale: float | None) -> float:
    """The softmax scale the kernels use: 1/sqrt(D) by default (1 for D = 0, where there is nothing to scale), the
    given finite value otherwise, and 0 for a value so small that scale·log2(e) underflows fp32: every visible key
    then weighs the same, which is what such a scale means to fp32 (it had made every row NaN: -inf·0)."""
    scale = (1.0 / math.sqrt(D) if D else 1.0) if sm_scale is None else float(sm_scale)
    if not math.isfinite(scale):
        raise ValueError(f"attention: sm_scale must be finite, got {sm_scale}")
    if abs(scale) > MAX_SCALE:
        # The scaled scores live in fp32: a scale of 1e38 overflowed ordinary scores to inf and every row came back
        # NaN (fuzz round 4; torch's fp32 SDPA is NaN there too). Refused instead of a silent NaN.
        raise ValueError(f"attention: |sm_scale| must be at most {MAX_SCALE:g} (the scaled scores are fp32), got {sm_scale}")
    return underflow_to_zero(scale)


MAX_SCALE = 1e30


def underflow_to_zero(scale: float) -> float:
    """0 for a scale whose scale·log2(e) underflows fp32 (the kernels then weigh every visible key the same)."""
    return 0.0 if abs(scale) * LOG2E < FP32_MIN_NORMAL else scale


def _check_lse(lse: torch.Tensor, shape: tuple[int, int, int], dev: torch.device, *others: torch.Tensor | None) -> None:
    """lse= must be what the kernel writes: fp32, (B, H_q, S_q), contiguous, on q's device, sharing no memory with
    the inputs (a strided or short one had been written past or as if contiguous)."""
    if not isinstance(lse, torch.Tensor) or lse.dtype != torch.float32 or tuple(lse.shape) != shape:
        raise ValueError(f"attention: lse must be an fp32 tensor of shape {shape}, got "
                         f"{getattr(lse, 'dtype', type(lse).__name__)} {tuple(getattr(lse, 'shape', ()))}")
    if not lse.is_contiguous() or lse.device != dev:
        raise ValueError(f"attention: lse must be contiguous and on {dev}")
    if any(t is not None and t.numel() and lse.numel() and argcheck.overlaps(lse, t) for t in others):
        raise ValueError("attention: lse shares memory with q, k, v or out")
