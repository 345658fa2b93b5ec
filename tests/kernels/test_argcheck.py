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


# (name, callable, its tensors, the keyword options to spoil)
OPTIONS: list[tuple[str, Any, tuple[torch.Tensor, ...], tuple[str, ...]]] = [
    ("rmsnorm", rmsnorm.rmsnorm, (X, W), ("eps", "out", "config")), ("rmsnorm", rmsnorm.autograd_op, (X, W), ("eps",)),
    ("rmsnorm", rmsnorm.custom_op_form, (X, W), ("eps",)),
    ("layernorm", layernorm.layernorm, (X, W, W), ("eps", "out", "config")),
    ("layernorm", layernorm.autograd_op, (X, W, W), ("eps",)),
    ("layernorm", layernorm.custom_op_form, (X, W, W), ("eps",)),
    ("softmax", softmax.softmax, (X,), ("dim", "out", "config")), ("softmax", softmax.autograd_op, (X,), ("dim",)),
    ("softmax", softmax.custom_op_form, (X,), ("dim",)),
    ("add_mul", add_mul.add_mul, (X, X, X), ("out", "block")), ("swiglu", swiglu.swiglu, (X, X), ("out",)),
    ("bias_gelu_dropout_residual", BG.bias_gelu_dropout_residual, (X, W, X), ("p", "seed", "out")),
    ("bias_gelu_dropout_residual", BG.autograd_op, (X, W, X), ("p", "seed")),
    ("bias_gelu_dropout_residual", BG.custom_op_form, (X, W, X), ("p", "seed")),
    ("gemm", gemm.gemm, (X, X.t()), ("bias", "epilogue", "p", "seed", "out", "precision", "config", "kernel")),
    ("gemm", gemm_autograd.gemm_autograd, (X, X.t()), ("bias", "epilogue", "p", "seed")),
    ("gemm", gemm_autograd.gemm_custom_op, (X, X.t()), ("bias", "epilogue", "p", "seed")),
    ("attention", attention.attention, (Q, Q, Q), ("causal", "sm_scale", "out", "config", "kernel", "lse")),
    ("attention", attention.autograd_op, (Q, Q, Q), ("causal", "sm_scale")),
    ("linear_cross_entropy", LCE.linear_cross_entropy, (X, V, Y), ("bias", "ignore_index", "reduction")),
    ("linear_cross_entropy", LCE.linear_cross_entropy_custom_op, (X, V, Y), ("bias", "ignore_index", "reduction")),
]
BAD_VALUES = ["x", None, 1.5, -1, [1], float("nan"), 10**30, True]


@pytest.mark.parametrize("entry", OPTIONS, ids=lambda e: f"{e[0]}-{e[1].__name__}")
def test_a_spoiled_option_is_refused_clearly_or_taken(entry: tuple[str, Any, tuple[torch.Tensor, ...], tuple[str, ...]]
                                                      ) -> None:
    """Each keyword option given a value of the wrong type or range: the call either accepts it (seed=-1, a None
    default) or raises TypeError/ValueError naming the kernel. A non-dict gemm config had raised AttributeError, and
    the custom-op forms' options (gemm's epilogue, LCE's reduction and ignore_index, RMSNorm's and LayerNorm's eps)
    torch's op-schema RuntimeError (session 24)."""
    name, call, tensors, options = entry
    for key in options:
        for value in BAD_VALUES:
            try:
                call(*tensors, **{key: value})
            except (TypeError, ValueError) as exc:
                assert name in str(exc), (key, value, exc)


def test_adamw_refuses_spoiled_arguments_by_name() -> None:
    """adamw_ and AdamW: bad lists and hyperparameters are TypeError/ValueError naming adamw. An int eps too large for
    a float had reached the kernel (Triton's OverflowError), a block of 10**30 the interpreter (arange out of int32),
    and AdamW(betas='x') raised IndexError (session 24)."""
    from rocm_triton_doctor.kernels import adamw

    def lists() -> list[list[torch.Tensor]]:
        p = [torch.randn(10), torch.randn(3, 4)]
        return [p, [torch.randn_like(t) for t in p], [torch.zeros_like(t) for t in p], [torch.zeros_like(t) for t in p]]

    for i in range(4):
        for junk in (None, "x", 3.0, [None], ["x"], [torch.randn(2)], (), [torch.randn(10).int(), torch.randn(3, 4)]):
            cols: list[Any] = lists()
            cols[i] = junk
            with pytest.raises((TypeError, ValueError), match="adamw"):
                adamw.adamw_(*cols, step=1, lr=1e-3)
    for key in ("step", "lr", "beta1", "beta2", "eps", "weight_decay", "outs", "block"):
        for value in BAD_VALUES:
            try:
                adamw.adamw_(*lists(), **{"step": 1, "lr": 1e-3, key: value})
            except (TypeError, ValueError) as exc:
                assert "adamw" in str(exc), (key, value, exc)
    q = lists()
    for outs in ([q[0], q[2]], [q[0], q[2], q[3], q[3]], "x"):  # four out lists had dropped the fourth silently
        with pytest.raises((TypeError, ValueError), match="adamw: outs"):
            adamw.adamw_(*lists(), step=1, lr=1e-3, outs=outs)
    for kw in ({"betas": "x"}, {"betas": 0.9}, {"betas": (1.5, 0.9)}, {"lr": "x"}, {"eps": 10**400}, {"lr": -1.0}):
        with pytest.raises(ValueError, match="adamw"):
            adamw.AdamW([torch.randn(3, requires_grad=True)], **kw)
