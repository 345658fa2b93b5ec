"""Fused Triton kernels for `smoke`, one module each, and the ONE registry of them (DESIGN §5).

Importing this package imports triton (it defines @triton.jit functions) but runs nothing.
"""

from __future__ import annotations

from types import ModuleType

from rocm_triton_doctor.kernels import (add_mul, attention, bias_gelu_dropout_residual, gemm, layernorm, rmsnorm,
                                        softmax, swiglu)

REGISTRY: tuple[ModuleType, ...] = (gemm, add_mul, bias_gelu_dropout_residual, rmsnorm, layernorm, softmax, swiglu,
                                    attention)
NAMES = tuple(m.__name__.rsplit(".", 1)[1] for m in REGISTRY)
