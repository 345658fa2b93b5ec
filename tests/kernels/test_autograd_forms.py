"""autograd_op of every kernel module with a backward: eager calls take the plain torch.autograd.Function (no
custom-op dispatch: host time, issue #16 item 4), torch.compile sees the registered custom op (one graph, no break),
and both give the forward and the gradients of an fp64 reference. aot_eager: dynamo + AOTAutograd without a C++
toolchain (the custom ops' fake and autograd registrations are what it runs)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F

from rocm_triton_doctor.kernels import (attention, bias_gelu_dropout_residual, gemm_autograd, layernorm, rmsnorm,
                                        softmax, swiglu)


def _cases() -> list[tuple[str, Any, Callable[..., torch.Tensor], Callable[[torch.Generator], tuple[torch.Tensor, ...]],
                           str, str]]:
    """(name, module, fp64 reference, inputs, the eager grad_fn's class name, the custom op's name)."""

    def rows(g: torch.Generator, n: int = 2) -> tuple[torch.Tensor, ...]:
        return (torch.randn(3, 5, 48, generator=g), *(torch.randn(48, generator=g) for _ in range(n - 1)))

    return [
        ("rmsnorm", rmsnorm, lambda x, w: F.rms_norm(x, (48,), w, 1e-6), rows, "RMSNormFunctionBackward",
         "rocm_triton_doctor.rmsnorm"),
        ("layernorm", layernorm, lambda x, w, b: F.layer_norm(x, (48,), w, b, 1e-5), lambda g: rows(g, 3),
         "LayerNormFunctionBackward", "rocm_triton_doctor.layernorm"),
        ("softmax", softmax, lambda x: torch.softmax(x, -1), lambda g: rows(g, 1), "SoftmaxFunctionBackward",
         "rocm_triton_doctor.softmax"),
        ("swiglu", swiglu, lambda a, b: F.silu(a) * b, lambda g: (torch.randn(4, 40, generator=g),
                                                                    torch.randn(4, 40, generator=g)),
         "SwiGLUFunctionBackward", "rocm_triton_doctor.swiglu"),
        ("bias_gelu_dropout_residual", bias_gelu_dropout_residual,
         lambda x, b, r: F.gelu(x + b, approximate="tanh") + r,
         lambda g: (torch.randn(2, 6, 48, generator=g), torch.randn(48, generator=g), torch.randn(2, 6, 48, generator=g)),
         "BiasGeluDropoutResidualFunctionBackward", "rocm_triton_doctor.bias_gelu_dropout_residual"),
        ("gemm", gemm_autograd, lambda a, b, bias: a @ b + bias,
         lambda g: (torch.randn(5, 24, generator=g), torch.randn(24, 16, generator=g), torch.randn(16, generator=g)),
         "GemmFunctionBackward", "rocm_triton_doctor.gemm"),
        ("attention", attention, lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
         lambda g: tuple(torch.randn(1, 2, 5, 16, generator=g) for _ in range(3)),
         "AttentionFunctionBackward", "rocm_triton_doctor.attention"),
    ]


CASES = _cases()


def _leaves(ts: tuple[torch.Tensor, ...]) -> list[torch.Tensor]:
    return [t.clone().requires_grad_() for t in ts]


def _check_against_fp64(ref: Callable[..., torch.Tensor], inputs: tuple[torch.Tensor, ...], out: torch.Tensor,
                        grads: list[torch.Tensor | None], dy: torch.Tensor) -> None:
    xs = [t.double().requires_grad_() for t in inputs]
    want = ref(*xs)
    want.backward(dy.double())
    torch.testing.assert_close(out.double(), want.detach(), rtol=1e-4, atol=1e-5)
    for got, x in zip(grads, xs, strict=True):
        assert got is not None and x.grad is not None
        torch.testing.assert_close(got.double(), x.grad, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name,mod,ref,make,eager_fn,op", CASES, ids=[c[0] for c in CASES])
def test_eager_autograd_op_is_the_autograd_function(name: str, mod: Any, ref: Callable[..., torch.Tensor],
                                                    make: Callable[[torch.Generator], tuple[torch.Tensor, ...]],
                                                    eager_fn: str, op: str) -> None:
    g = torch.Generator().manual_seed(1)
    inputs = make(g)
    xs = _leaves(inputs)
    y = mod.autograd_op(*xs)
    assert type(y.grad_fn).__name__ == eager_fn  # not the custom op's autograd node
    dy = torch.randn(y.shape, generator=g)
    y.backward(dy)
    _check_against_fp64(ref, inputs, y.detach(), [x.grad for x in xs], dy)


@pytest.mark.parametrize("name,mod,ref,make,eager_fn,op", CASES, ids=[c[0] for c in CASES])
def test_torch_compile_sees_the_custom_op_without_a_graph_break(name: str, mod: Any, ref: Callable[..., torch.Tensor],
                                                                make: Callable[[torch.Generator], tuple[torch.Tensor, ...]],
                                                                eager_fn: str, op: str) -> None:
    import torch._dynamo

    torch._dynamo.reset()
    g = torch.Generator().manual_seed(2)
    inputs = make(g)

    def step(*ts: torch.Tensor) -> torch.Tensor:
        return mod.autograd_op(*ts) * 2.0

    explain = torch._dynamo.explain(step)(*inputs)
    assert explain.graph_break_count == 0 and explain.graph_count == 1
    graph = "\n".join(str(gm.graph) for gm in explain.graphs)
    assert op in graph.replace("::", ".").replace("torch.ops.", "")  # the custom op, not the Function, was traced
    xs = _leaves(inputs)
    y = torch.compile(step, fullgraph=True, backend="aot_eager")(*xs)
    dy = torch.randn(y.shape, generator=g)
    y.backward(dy)
    _check_against_fp64(lambda *t: ref(*t) * 2.0, inputs, y.detach(), [x.grad for x in xs], dy)


@pytest.mark.parametrize("name,mod,ref,make,eager_fn,op", CASES, ids=[c[0] for c in CASES])
def test_gradients_of_gradients_are_refused_not_dropped(name: str, mod: Any, ref: Callable[..., torch.Tensor],
                                                        make: Callable[[torch.Generator], tuple[torch.Tensor, ...]],
                                                        eager_fn: str, op: str) -> None:
    # A gradient penalty (create_graph=True): the Triton backward records no graph, so its second-order terms would
    # be missing from the result; it must raise instead (the fuzz round of 2026-11-23 found dL/dw off by up to 15).
    g = torch.Generator().manual_seed(3)
    xs = _leaves(make(g))
    y = mod.autograd_op(*xs)
    c = torch.randn(y.shape, generator=g)
    with pytest.raises(RuntimeError, match="gradients of gradients"):
        torch.autograd.grad((y * c).sum(), xs[0], create_graph=True)
    (gx,) = torch.autograd.grad((mod.autograd_op(*xs) * c).sum(), xs[0])  # first order still works
    assert gx.shape == xs[0].shape


@pytest.mark.parametrize("name,mod,ref,make,eager_fn,op", CASES, ids=[c[0] for c in CASES])
def test_forward_mode_through_the_custom_op_is_refused_not_zero(name: str, mod: Any, ref: Callable[..., torch.Tensor],
                                                                make: Callable[[torch.Generator], tuple[torch.Tensor, ...]],
                                                                eager_fn: str, op: str) -> None:
    # torch.func.jvp through a torch.library custom op had returned a ZERO tangent (fuzz round 2, 2026-11-23).
    form = getattr(mod, "custom_op_form", None)
    if form is None:
        pytest.skip(f"{name} has no eagerly callable custom-op form")
    inputs = make(torch.Generator().manual_seed(4))
    with pytest.raises(RuntimeError, match="forward-mode"):
        torch.func.jvp(lambda x: form(x, *inputs[1:]), (inputs[0],), (torch.ones_like(inputs[0]),))
