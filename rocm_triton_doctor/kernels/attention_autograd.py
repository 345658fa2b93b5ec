"""Attention's autograd: the custom ops torch.compile sees (rocm_triton_doctor::attention, ::attention_backward) and
the plain autograd.Function eager mode runs — the same kernels (attention.py's forward with its row statistics,
attention_backward.py's backward) — and autograd_op, the SDPA-shaped entry point with gradients."""

from __future__ import annotations

import numbers
from typing import Any

import torch

from rocm_triton_doctor.kernels import argcheck
from rocm_triton_doctor.kernels import attention as _fwd
from rocm_triton_doctor.kernels.attention import kernel_scale
from rocm_triton_doctor.kernels.attention_backward import attention_backward
from rocm_triton_doctor.kernels.attention_parts import heads4, sdpa_lead
from rocm_triton_doctor.kernels.base import first_order_only


def _scale(q: torch.Tensor, sm_scale: float | None) -> float:
    return kernel_scale(q.shape[-1], sm_scale)  # the forward's, underflow to 0 included


def _forward_with_stats(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, sm_scale: float | None
                        ) -> tuple[torch.Tensor, torch.Tensor]:
    """attention() and the rows' log2-sum-exp the backward needs."""
    lse = torch.empty(q.shape[:3], dtype=torch.float32, device=q.device)
    return _fwd.attention(q, k, v, causal, sm_scale, lse=lse), lse


@torch.library.custom_op("rocm_triton_doctor::attention", mutates_args=())
def _attention_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, sm_scale: float | None
                  ) -> tuple[torch.Tensor, torch.Tensor]:
    with torch.no_grad():  # the op's autograd registration differentiates it
        return _forward_with_stats(q, k, v, causal, sm_scale)


@_attention_op.register_fake
def _attention_fake(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, sm_scale: float | None
                    ) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.empty_like(q), q.new_empty(q.shape[:3], dtype=torch.float32)


@torch.library.custom_op("rocm_triton_doctor::attention_backward", mutates_args=())
def attention_backward_op(do: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, o: torch.Tensor,
                          lse: torch.Tensor, causal: bool, sm_scale: float | None
                          ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """attention_backward as a custom op (attention.autograd_op's backward); sm_scale None: 1/sqrt(D)."""
    return attention_backward(do, q, k, v, o, lse, causal, _scale(q, sm_scale))


@attention_backward_op.register_fake
def _attention_backward_fake(do: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, o: torch.Tensor,
                             lse: torch.Tensor, causal: bool, sm_scale: float | None
                             ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)


def setup_context(ctx: Any, inputs: tuple[Any, ...], output: tuple[torch.Tensor, torch.Tensor]) -> None:
    """attention's custom op (q, k, v, causal, sm_scale) -> (o, lse): keep what the backward needs."""
    ctx.causal, ctx.sm_scale = inputs[3], inputs[4]
    ctx.save_for_backward(*inputs[:3], *output)


def autograd_backward(ctx: Any, do: torch.Tensor, _dlse: torch.Tensor | None) -> tuple[torch.Tensor | None, ...]:
    """The op's autograd formula (lse is a statistic: its gradient is ignored)."""
    q, k, v, o, lse = ctx.saved_tensors
    return (*attention_backward_op(do, q, k, v, o, lse, ctx.causal, ctx.sm_scale), None, None)


_attention_op.register_autograd(autograd_backward, setup_context=setup_context)


class AttentionFunction(torch.autograd.Function):
    """AttentionFunction.apply(q, k, v, causal, sm_scale) -> o: the same forward and backward as the custom op, for
    eager autograd. The custom op's eager dispatch (torch.library's autograd and backend wrappers behind a
    dynamo-disable frame) cost ~190 us of host time a call more than this Function on an H100 host
    (benchmarks/model_profile.py, torch 2.11: tiny-llama's eager step enqueue 37.7 -> 28.7 ms with the three ops)."""

    @staticmethod
    def forward(ctx: Any, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, sm_scale: float | None
                ) -> torch.Tensor:
        o, lse = _forward_with_stats(q, k, v, causal, sm_scale)
        ctx.causal, ctx.sm_scale = causal, sm_scale
        ctx.save_for_backward(q, k, v, o, lse)
        return o

    @staticmethod
    @first_order_only  # its kernels record no graph: a second order must fail, not drop terms
    def backward(ctx: Any, do: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        q, k, v, o, lse = ctx.saved_tensors
        return (*attention_backward(do, q, k, v, o, lse, ctx.causal, _scale(q, ctx.sm_scale)), None, None)


def autograd_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False,
                sm_scale: float | None = None) -> torch.Tensor:
    """SDPA(q, k, v, is_causal=causal, scale=sm_scale, enable_gqa=True) with Triton forward and backward (attention.
    autograd_op, the hook smoke/model_forms.py looks for): what attention() takes, any finite scale up to 1e30 (gradients right
    for <= 0 too). Eager: AttentionFunction; under torch.compile: the custom op (no graph break)."""
    argcheck.tensors_only("attention", q=q, k=k, v=v)
    if sm_scale is not None and (isinstance(sm_scale, bool) or not isinstance(sm_scale, numbers.Real)):
        raise TypeError(f"attention: sm_scale must be a real number or None, got {type(sm_scale).__name__}")
    scale = None if sm_scale is None else float(sm_scale)
    causal = argcheck.check_flag("attention", "causal", causal)
    lead = None
    if isinstance(q, torch.Tensor) and q.dim() != 4:
        lead = sdpa_lead(q, k, v)
        if lead is not None:  # SDPA's (..., H, S, D) as (B, H, S, D) views: autograd flows through them
            q, k, v = heads4(q, "q"), heads4(k, "k"), heads4(v, "v")
    if torch.compiler.is_compiling():
        o = _attention_op(q, k, v, causal, scale)[0]
    else:
        o = AttentionFunction.apply(q, k, v, causal, scale)
    return o if lead is None else o.view(*lead, *o.shape[1:])  # type: ignore[no-any-return]
