"""Launch plans per call signature for the kernels whose call is one launch into a fresh output (the row kernels'
forwards, the elementwise kernels): the second call with the same signature skips the checks, the layout folding and
the policy, and launches through a launch_site.Site.

Why. A row kernel's call spent about as much host time before its launch as in it: rmsnorm of 16x4096 bf16 cost
26.5 us a call against eager's 11.1 on an H200 host, of which launch() was 17.3 (benchmarks/host_cost_probe.py,
docs/measurements/2026-11-28-h200-s21-host.json); prepare()'s checks, stride folding and policy lookups were about 7-10
us of the rest on the dev box (issue #16 item 4). gemm and attention already keep a plan per signature.

What a signature is. For each input tensor: its shape, strides, dtype and CUDA device index; the caller adds its own
options (stats, dropout or not). Every check the slow path makes (same device, not meta, dtypes, shapes, the layout
folding into the kernel's strides) and every policy decision (tiles, DIV, the grid) is a function of that, so a
signature seen once is valid again. Not in it: the tensors' addresses (the Site keys their 16-byte alignment per
call, as Triton does), and whether an input requires grad — checked on every call (a plain call records no
backward: base.check_device), so such a call takes the checked path, which refuses it. Only plain tensors on a GPU
are planned (the interpreter and CPU tensors take the checked path: their host time is not what anyone measures),
and only calls without `out=` or a `config=` (a given output needs its alias check every call).
"""

from __future__ import annotations

from typing import Any

import torch

from rocm_triton_doctor.kernels.launch import _TENSOR_TYPES

PLAN_LIMIT = 4096  # plans kept per kernel before its table is cleared (a bound on memory for shape-varying callers)
GPU_ONLY = True  # tests set it False to run planned calls on CPU tensors in the interpreter

_TABLES: list[dict[Any, Any]] = []


def table() -> dict[Any, Any]:
    """A kernel's plan table (a dict from signature to plan), registered so clear() empties it."""
    t: dict[Any, Any] = {}
    _TABLES.append(t)
    return t


def keep(plans: dict[Any, Any], key: Any, plan: Any) -> None:
    if len(plans) >= PLAN_LIMIT:
        plans.clear()
    plans[key] = plan


def run(plans: dict[Any, Any], key: Any, site: Any, dyn: tuple[Any, ...], dense: bool, M: int = 0) -> None:
    """Launch `site` with the call's changing arguments `dyn`, keeping it as the plan of signature `key`; a call that
    is not planned (key None) launches through launch() and keeps nothing (a Site learns its compiled kernel on the
    first call: wasted on one that is never called again)."""
    if key is None:
        site.through_launch(dyn)
        return
    keep(plans, key, Plan(site, dense, M))
    site(*dyn)


def clear() -> None:
    """Forget every plan (tests that change the policy; nothing else needs to)."""
    for t in _TABLES:
        t.clear()


def signature(*tensors: Any) -> tuple[Any, ...] | None:
    """The tensors' part of a call signature, or None when the call must take the checked path: an argument that is
    not a plain tensor on a GPU, or one that requires grad while autograd records."""
    key: list[Any] = []
    grad = None
    for t in tensors:
        if type(t) not in _TENSOR_TYPES or (GPU_ONLY and not t.is_cuda):
            return None
        if t.requires_grad:
            if grad is None:
                grad = torch.is_grad_enabled()
            if grad:
                return None
        key += (t.shape, t.stride(), t.dtype, t.get_device())
    return tuple(key)


class Plan:
    """One planned call: its launch Site, whether the first input is dense (the output is then allocated like it,
    else contiguous, as base.prepare_out does) and the row count M (for per-row statistics; 0 where none)."""

    __slots__ = ("site", "dense", "M")

    def __init__(self, site: Any, dense: bool, M: int = 0) -> None:
        self.site, self.dense, self.M = site, dense, M

    def out(self, x: torch.Tensor) -> torch.Tensor:
        return torch.empty_like(x) if self.dense else torch.empty_like(x, memory_format=torch.contiguous_format)
