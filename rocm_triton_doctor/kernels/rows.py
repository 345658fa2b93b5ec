"""Shared plumbing for the one-row-per-program kernels (RMSNorm, LayerNorm, softmax): shape/stride checks and cases."""

from __future__ import annotations

from typing import Any

import torch

from rocm_triton_doctor.kernels import policy
from rocm_triton_doctor.kernels.base import check_device, check_dtype, prepare_out

DTYPES = (torch.float16, torch.bfloat16, torch.float32)


def as_rows(name: str, x: torch.Tensor) -> torch.Tensor:
    """View x as (rows, N). Rows may be strided (a slice of a bigger tensor); each row must be contiguous."""
    check_device(name, x)
    check_dtype(name, DTYPES, x)
    if x.dim() < 1 or x.shape[-1] == 0:
        raise ValueError(f"{name}: input must have a non-empty last dimension, got {tuple(x.shape)}")
    if x.stride(-1) != 1:
        raise ValueError(f"{name}: the last dimension must be contiguous (stride 1), got stride {x.stride(-1)}; "
                         "call .contiguous() first")
    if x.dim() == 2:
        return x
    if not x.is_contiguous():
        raise ValueError(f"{name}: inputs with more than 2 dimensions must be contiguous")
    return x.reshape(-1, x.shape[-1])


def prepare(name: str, x: torch.Tensor, params: dict[str, torch.Tensor], out: torch.Tensor | None
            ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, dict[str, Any]]:
    """Validate a row kernel's input and its per-column parameters (each of shape (N,)); return (rows view, out,
    out as rows, launch config)."""
    rows = as_rows(name, x)
    check_device(name, x, *params.values())
    check_dtype(name, DTYPES, x, *params.values())
    n = rows.shape[1]
    bad = {p: tuple(t.shape) for p, t in params.items() if t.shape != (n,)}
    if bad:
        got = ", ".join(f"{p} {shape}" for p, shape in bad.items())
        raise ValueError(f"{name}: {' and '.join(bad)} must have shape ({n},), got {got}")
    o = prepare_out(out, tuple(x.shape), x)
    cfg = policy.row_config(policy.target_for_device(x.device.type), n, x.element_size())
    return rows, o, o.view(-1, n), cfg
