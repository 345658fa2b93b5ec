"""Shared helpers for the backward tests: leaves in a dtype, an output gradient, and the fp64 autograd comparison."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

# Per-dtype (rtol, atol) for gradients of O(1) values: 16-bit results round at 2^-8 (bf16) / 2^-11 (fp16), and the
# parameter gradients are sums over rows accumulated in fp32 and rounded once.
GRAD_TOL = {torch.float32: (2e-4, 2e-4), torch.float16: (1e-2, 1e-2), torch.bfloat16: (3e-2, 3e-2)}


def leaf(t: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    return t.to(dtype).requires_grad_()


def dy_like(t: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    return torch.randn(t.shape, generator=gen).to(t.dtype)


def assert_grads(fn: Callable[..., torch.Tensor], inputs: Sequence[torch.Tensor], dy: torch.Tensor,
                 got: Sequence[torch.Tensor | None]) -> None:
    """fn on fp64 copies of `inputs` (the same rounded values), backward with dy in fp64; each got[i] must match the
    fp64 gradient of inputs[i] within its dtype's tolerance and have the input's dtype and shape."""
    ref = [t.detach().double().requires_grad_() for t in inputs]
    fn(*ref).backward(dy.double())
    for i, (t, r, g) in enumerate(zip(inputs, ref, got)):
        assert g is not None, f"input {i}: no gradient"
        assert g.dtype == t.dtype and g.shape == t.shape, f"input {i}: {g.dtype} {tuple(g.shape)} != {t.dtype} {tuple(t.shape)}"
        rtol, atol = GRAD_TOL[t.dtype]
        torch.testing.assert_close(g.double(), r.grad, rtol=rtol, atol=atol, msg=lambda m, i=i: f"input {i}: {m}")
