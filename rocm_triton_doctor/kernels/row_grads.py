"""Shared plumbing for the row kernels' backward passes (RMSNorm, LayerNorm, softmax).

The backward of a row kernel writes ∂x row by row (like the forward) and, for per-column parameters (weight, bias),
sums dy-products over all M rows. That sum is done without atomics: each of G programs owns a contiguous range of
rows and keeps its own fp32 partial sum of the parameter gradient, written to row `pid` of a (G, N) buffer; the
buffer is then reduced over G in fp32 by torch. Deterministic run to run (no atomic ordering), the layout Liger-Kernel's
rms_norm backward uses (linkedin/Liger-Kernel src/liger_kernel/ops/rms_norm.py: `_dW` of (sm_count, n_cols)).
G is a couple of programs per compute unit (the reduction then reads G·N fp32, small next to the M·N rows).

The backward kernels read contiguous rows: the launcher makes x and dy contiguous (a copy for strided inputs; the
gradient torch hands in is usually contiguous already) — strided inputs are handled, at the cost of that copy.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import torch

from rocm_triton_doctor.kernels import argcheck, policy
from rocm_triton_doctor.kernels.base import AotSpec, cdiv, target_of


def programs(device: torch.device, M: int) -> int:
    """G, the number of programs (each with its own partial-sum row)."""
    if device.type == "cuda":
        return max(1, min(M, 2 * _units(device.index if device.index is not None else torch.cuda.current_device())))
    return max(1, min(M, 4))  # the interpreter: few programs, each a loop over rows


@functools.lru_cache(maxsize=64)
def _units(index: int) -> int:
    """Compute units of GPU `index` (get_device_properties costs a few us a call: kept per device)."""
    return int(torch.cuda.get_device_properties(index).multi_processor_count)


def config(x: torch.Tensor, N: int, override: dict[str, Any] | None) -> dict[str, Any]:
    """BLOCK (one row in one block when it fits, else chunks: LOOPED) and the compiler options, from the forward's
    policy (policy.row_config) with ROWS dropped: a backward program walks its rows one at a time."""
    if not override:
        return _config(target_of(x), N, x.element_size())
    cfg = argcheck.check_row_config("row backward", override, rows=False)
    cfg["LOOPED"] = cfg["BLOCK"] < N
    return cfg


@functools.lru_cache(maxsize=policy.CONFIG_CACHE_SIZE)
def _config(target: policy.Target, N: int, elem_size: int) -> dict[str, Any]:
    """One shared dict per (target, width, element size): launchers splat it and never mutate it."""
    cfg = policy.row_config(target, N, elem_size)
    cfg.pop("ROWS", None)
    cfg["LOOPED"] = cfg["BLOCK"] < N
    return cfg


def launch_shape(M: int, G: int) -> tuple[tuple[int], int]:
    """(grid, rows per program)."""
    rpp = cdiv(M, G) if M else 1
    return (cdiv(M, rpp) if M else 0,), rpp


def rows2d(t: torch.Tensor, N: int) -> torch.Tensor:
    """(rows, N), contiguous; rows counted from the leading dims, so a zero-width (…, 0) tensor keeps its rows
    (`reshape(-1, 0)` is ambiguous and raised)."""
    return t.reshape(math.prod(t.shape[:-1]), N).contiguous()


def grad_aot(name: str, fn: Any, pointers: dict[str, str], unit: dict[str, Any], target: policy.Target) -> list[AotSpec]:
    """Compile-only configs of a backward row kernel: a bf16 row of 8192 in one block and an fp32 vocabulary row of
    152064 in chunks (`pointers` maps pointer names to "x" (the activation dtype) or a fixed Triton type)."""
    specs = []
    for dt, n, what in (("bf16", 8192, ""), ("fp32", 152064, " (looped)")):
        cfg = policy.row_config(target, n, 2 if dt == "bf16" else 4)
        cfg.pop("ROWS", None)
        sig = {**{p: (f"*{dt}" if t == "x" else t) for p, t in pointers.items()}, "M": "i32", "N": "i32", "RPP": "i32"}
        const = {**unit, "BLOCK": cfg["BLOCK"], "LOOPED": n > cfg["BLOCK"]}
        specs.append(AotSpec(f"{name} backward {dt} N={n}{what}", fn, sig, const, cfg))
    return specs
