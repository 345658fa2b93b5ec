"""Fused Triton kernels for `smoke`, one module each, and the ONE registry of them (DESIGN §5).

Each kernel module ends in `KERNEL = KernelSpec(...)` (base.py): its name (== the module's), whether it is memory- or
compute-bound, its smoke cases, its AOT audit configs and the performance targets that may cover it. Everything else
(smoke, the AOT audit, the targets, the tests) reads those properties from here, never from lists of names.

Importing this package imports triton (it defines @triton.jit functions) but runs nothing.
"""

from __future__ import annotations

from rocm_triton_doctor.kernels import (adamw, add_mul, attention, bias_gelu_dropout_residual, gemm, layernorm,
                                        linear_cross_entropy, rmsnorm, softmax, swiglu)
from rocm_triton_doctor.kernels.base import KernelSpec

REGISTRY: tuple[KernelSpec, ...] = (gemm.KERNEL, add_mul.KERNEL, bias_gelu_dropout_residual.KERNEL, rmsnorm.KERNEL,
                                    layernorm.KERNEL, softmax.KERNEL, swiglu.KERNEL, attention.KERNEL,
                                    linear_cross_entropy.KERNEL, adamw.KERNEL)
NAMES = tuple(s.name for s in REGISTRY)
_BY_NAME = {s.name: s for s in REGISTRY}


def spec_named(name: str) -> KernelSpec | None:
    """The registered kernel called `name` (a case's or result's `kernel`), or None (e.g. smoke's deliberately broken
    case, or a result saved by another version)."""
    return _BY_NAME.get(name)
