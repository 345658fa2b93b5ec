"""Every kernel entry point (plain, autograd and custom-op forms) handed a non-tensor where it takes a tensor: a
TypeError or ValueError naming the kernel, never an AttributeError from the shape code or a RuntimeError from torch's
op schema (session 24 found gemm(None, b), attention(None, k, v), their autograd forms and the custom-op forms of
gemm, linear cross-entropy, the norms, softmax and SwiGLU doing that)."""

from __future__ import annotations

import os

os.environ["TRITON_INTERPRET"] = "1"  # before any @triton.jit function is created

from typing import Any

import pytest
import torch

from rocm_triton_doctor.kernels import (add_mul, attention, bias_gelu_dropout_residual, gemm, gemm_autograd, layernorm,
                                        linear_cross_entropy, rmsnorm, softmax, swiglu)

X, W, Q, V = torch.randn(4, 8), torch.randn(8), torch.randn(1, 2, 4, 8), torch.randn(5, 8)
Y = torch.randint(0, 5, (4,))
BG = bias_gelu_dropout_residual
LCE = linear_cross_entropy
# (name, callable, its tensor arguments, which of them may be None)
ENTRIES: list[tuple[str, Any, list[torch.Tensor], tuple[int, ...]]] = [
    ("rmsnorm", rmsnorm.rmsnorm, [X, W], (1,)), ("rmsnorm", rmsnorm.autograd_op, [X, W], (1,)),
    ("rmsnorm", rmsnorm.custom_op_form, [X, W], (1,)),
    ("layernorm", layernorm.layernorm, [X, W, W], (1, 2)), ("layernorm", layernorm.autograd_op, [X, W, W], (1, 2)),
    ("layernorm", layernorm.custom_op_form, [X, W, W], (1, 2)),
    ("softmax", softmax.softmax, [X], ()), ("softmax", softmax.autograd_op, [X], ()),
    ("softmax", softmax.custom_op_form, [X], ()),
    ("add_mul", add_mul.add_mul, [X, X, X], ()),
    ("swiglu", swiglu.swiglu, [X, X], ()), ("swiglu", swiglu.autograd_op, [X, X], ()),
    ("swiglu", swiglu.custom_op_form, [X, X], ()),
    ("bias_gelu_dropout_residual", BG.bias_gelu_dropout_residual, [X, W, X], ()),
    ("bias_gelu_dropout_residual", BG.autograd_op, [X, W, X], ()),
    ("bias_gelu_dropout_residual", BG.custom_op_form, [X, W, X], ()),
    ("gemm", gemm.gemm, [X, X.t()], ()), ("gemm", gemm_autograd.gemm_autograd, [X, X.t()], ()),
    ("gemm", gemm_autograd.gemm_custom_op, [X, X.t()], ()),
    ("attention", attention.attention, [Q, Q, Q], ()), ("attention", attention.autograd_op, [Q, Q, Q], ()),
    ("linear_cross_entropy", LCE.linear_cross_entropy, [X, V, Y], ()),
    ("linear_cross_entropy", LCE.linear_cross_entropy_custom_op, [X, V, Y], ()),
]
JUNK = [None, "x", [1.0, 2.0], 3.0]


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: f"{e[0]}-{e[1].__name__}")
def test_a_non_tensor_argument_is_a_clear_error(entry: tuple[str, Any, list[torch.Tensor], tuple[int, ...]]) -> None:
    name, call, tensors, optional = entry
    for i in range(len(tensors)):
        for junk in JUNK:
            if junk is None and i in optional:
                continue  # an optional parameter (no weight, no bias)
            args = list(tensors)
            args[i] = junk
            with pytest.raises((TypeError, ValueError), match=name):
                call(*args)
