"""smoke/model_ops.py: the recompute-in-backward composites (norm_linear, mlp) give fp64 autograd's gradients for every
input, through the custom ops and the autograd.Functions, pass opcheck, and save less than the composition (Triton
interpreter on the CPU, tiny sizes)."""

from __future__ import annotations

import os

os.environ["TRITON_INTERPRET"] = "1"  # before any @triton.jit function is created

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F

from rocm_triton_doctor.smoke import model_ops

# (rtol, atol) per activation dtype: 16-bit GEMM results and the recomputed normalised rows round at 2^-8 (bf16).
TOL = {torch.float32: (2e-4, 2e-4), torch.bfloat16: (5e-2, 5e-2)}
EPS = 1e-6


def _ref_norm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return F.rms_norm(x, (x.shape[-1],), w, EPS)


def _ref_mlp(x: torch.Tensor, wgu: torch.Tensor, wd: torch.Tensor, nw: torch.Tensor | None) -> torch.Tensor:
    gate, up = F.linear(x if nw is None else _ref_norm(x, nw), wgu).chunk(2, -1)
    return F.linear(F.silu(gate) * up, wd)


def _leaves(gen: torch.Generator, shapes: list[tuple[int, ...]], dtypes: list[torch.dtype]) -> list[torch.Tensor]:
    out = []
    for shape, dt in zip(shapes, dtypes):
        t = torch.randn(shape, generator=gen)
        if len(shape) == 1:
            t = 1 + 0.2 * t  # a norm weight near one
        elif len(shape) == 2:
            t = t / shape[1] ** 0.5  # a weight: outputs of order one
        out.append(t.to(dt).requires_grad_())
    return out


def _check(ours: Callable[..., Any], ref: Callable[..., Any], leaves: list[torch.Tensor], gen: torch.Generator,
           act_dtype: torch.dtype) -> None:
    """ours(*leaves) (a tensor or list) vs ref on fp64 copies of the same values, with the same random output
    gradients: outputs and the gradient of every leaf, each in its leaf's dtype."""
    outs = ours(*leaves)
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    dys = [torch.randn(o.shape, generator=gen).to(o.dtype) for o in outs]
    torch.autograd.backward(outs, dys)
    ref64 = [t.detach().double().requires_grad_() for t in leaves]
    routs = ref(*ref64)
    routs = list(routs) if isinstance(routs, (list, tuple)) else [routs]
    torch.autograd.backward(routs, [d.double() for d in dys])
    rtol, atol = TOL[act_dtype]
    for o, r in zip(outs, routs):
        assert o.dtype == act_dtype
        torch.testing.assert_close(o.double(), r, rtol=rtol, atol=atol)
    for i, (t, r) in enumerate(zip(leaves, ref64)):
        assert t.grad is not None and t.grad.dtype == t.dtype and t.grad.shape == t.shape, i
        # Gradients sum over tokens: scale the absolute tolerance with their size.
        scale = max(1.0, float(r.grad.abs().max()))
        torch.testing.assert_close(t.grad.double(), r.grad, rtol=rtol, atol=atol * scale, msg=lambda m, i=i: f"leaf {i}: {m}")


@pytest.mark.parametrize("act,wdt", [(torch.float32, torch.float32), (torch.bfloat16, torch.bfloat16),
                                     (torch.bfloat16, torch.float32)])  # the last: fp32 masters cast inside the op
def test_norm_linear_gradients_match_fp64_autograd(act: torch.dtype, wdt: torch.dtype) -> None:
    gen = torch.Generator().manual_seed(1)
    H = 24
    leaves = _leaves(gen, [(2, 5, H), (H,), (16, H), (8, H)], [act, torch.float32, wdt, wdt])

    def ours(x: torch.Tensor, nw: torch.Tensor, *ws: torch.Tensor) -> list[torch.Tensor]:
        return model_ops.norm_linear(x, nw, EPS, *ws)

    def ref(x: torch.Tensor, nw: torch.Tensor, *ws: torch.Tensor) -> list[torch.Tensor]:
        y = _ref_norm(x, nw)
        return [F.linear(y, w) for w in ws]

    _check(ours, ref, leaves, gen, act)


@pytest.mark.parametrize("act,wdt,norm", [(torch.float32, torch.float32, True), (torch.float32, torch.float32, False),
                                          (torch.bfloat16, torch.bfloat16, True), (torch.bfloat16, torch.float32, True)])
def test_mlp_gradients_match_fp64_autograd(act: torch.dtype, wdt: torch.dtype, norm: bool) -> None:
    gen = torch.Generator().manual_seed(2)
    H, Fd = 16, 40
    leaves = _leaves(gen, [(3, 7, H), (2 * Fd, H), (H, Fd)] + ([(H,)] if norm else []),
                     [act, wdt, wdt] + ([torch.float32] if norm else []))

    def ours(x: torch.Tensor, wgu: torch.Tensor, wd: torch.Tensor, *nw: torch.Tensor) -> torch.Tensor:
        return model_ops.mlp(x, wgu, wd, nw[0] if nw else None, EPS)

    def ref(x: torch.Tensor, wgu: torch.Tensor, wd: torch.Tensor, *nw: torch.Tensor) -> torch.Tensor:
        return _ref_mlp(x, wgu, wd, nw[0] if nw else None)

    _check(ours, ref, leaves, gen, act)


def test_autograd_functions_give_the_custom_ops_gradients() -> None:
    gen = torch.Generator().manual_seed(3)
    H, Fd = 16, 24
    shapes = [(9, H), (H,), (2 * Fd, H), (H, Fd), (12, H)]
    base = _leaves(gen, shapes, [torch.float32] * 5)
    grads = []
    for use_function in (False, True):
        x, nw, wgu, wd, wq = (t.detach().clone().requires_grad_() for t in base)
        if use_function:  # what the public norm_linear / mlp call in eager mode (no custom-op dispatch: host time)
            (q,) = model_ops.norm_linear(x, nw, EPS, wq)
            out = model_ops.mlp(x, wgu, wd, nw, EPS)
            assert type(q.grad_fn).__name__ == "NormLinearFunctionBackward"
            assert type(out.grad_fn).__name__ == "MLPFunctionBackward"
        else:  # the custom ops torch.compile sees
            q = model_ops._norm_linear_op(x, nw, EPS, [wq])[0]
            out = model_ops._mlp_op(x, wgu, wd, nw, EPS)[0]
        (q.square().sum() + (out * torch.arange(H)).sum()).backward()
        grads.append([t.grad for t in (x, nw, wgu, wd, wq)])
    for a, b in zip(*grads):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-6)


def test_custom_ops_pass_opcheck() -> None:
    gen = torch.Generator().manual_seed(4)
    x, nw, w1, w2 = _leaves(gen, [(6, 8), (8,), (5, 8), (3, 8)], [torch.float32] * 4)
    torch.library.opcheck(model_ops._norm_linear_op, (x, nw, EPS, [w1, w2]))
    x, wgu, wd, nw = _leaves(gen, [(2, 3, 8), (12, 8), (8, 6), (8,)], [torch.float32] * 4)
    torch.library.opcheck(model_ops._mlp_op, (x, wgu, wd, nw, EPS))
    torch.library.opcheck(model_ops._mlp_op, (x, wgu, wd, None, EPS))


def _saved_activation_elements(fn: Callable[[], torch.Tensor], params: list[torch.Tensor]) -> int:
    """Elements autograd saves for backward while fn runs, leaving out the parameters themselves."""
    seen: dict[int, int] = {}
    skip = {p.data_ptr() for p in params}

    def pack(t: torch.Tensor) -> torch.Tensor:
        if t.data_ptr() not in skip:
            seen[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes() // t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn().sum().backward()
    return sum(seen.values())


def test_the_composites_save_neither_the_normalised_rows_nor_h(monkeypatch: pytest.MonkeyPatch) -> None:
    # What the memory claim rests on: per token, mlp saves x (H) + gate, up (2F) + rstd (1); the composition also
    # saves the normalised rows (H, the gate/up GEMM's input) and h (F, the down GEMM's input).
    gen = torch.Generator().manual_seed(5)
    M, H, Fd = 8, 16, 32
    x, wgu, wd, nw = _leaves(gen, [(M, H), (2 * Fd, H), (H, Fd), (H,)], [torch.float32] * 4)
    ps = [wgu, wd, nw]
    monkeypatch.setattr(model_ops, "RECOMPUTE_MIN_BYTES", 0)  # the recompute path, as at the medium preset
    ours = _saved_activation_elements(lambda: model_ops.mlp(x, wgu, wd, nw, EPS), ps)
    assert ours == M * H + 2 * M * Fd + M
    composed = _saved_activation_elements(lambda: _ref_mlp(x, wgu, wd, nw), ps)
    assert composed >= ours + M * H + M * Fd - M  # F.rms_norm also saves its rstd; h and the normalised rows on top
    wq = _leaves(gen, [(12, H)], [torch.float32])[0]
    assert _saved_activation_elements(lambda: model_ops.norm_linear(x, nw, EPS, wq)[0], [wq, nw]) == M * H + M


def test_eager_keeps_small_activations_and_recomputes_big_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    # At or below RECOMPUTE_MIN_BYTES the eager Functions save y and h (the step is launch-bound there: one launch
    # less per tensor); above it they recompute them. The gradients are the same either way.
    gen = torch.Generator().manual_seed(6)
    M, H, Fd = 8, 16, 32
    base = _leaves(gen, [(M, H), (2 * Fd, H), (H, Fd), (H,), (12, H)], [torch.float32] * 5)
    grads = []
    for limit in (0, 1 << 30):
        monkeypatch.setattr(model_ops, "RECOMPUTE_MIN_BYTES", limit)
        x, wgu, wd, nw, wq = (t.detach().clone().requires_grad_() for t in base)
        saved_mlp = _saved_activation_elements(lambda x=x, wgu=wgu, wd=wd, nw=nw: model_ops.mlp(x, wgu, wd, nw, EPS),
                                               [wgu, wd, nw])
        saved_nl = _saved_activation_elements(lambda x=x, nw=nw, wq=wq: model_ops.norm_linear(x, nw, EPS, wq)[0], [wq, nw])
        kept = limit > 0
        assert saved_mlp == M * H + 2 * M * Fd + M + (M * H + M * Fd if kept else 0)
        assert saved_nl == M * H + M + (M * H if kept else 0)
        (q,) = model_ops.norm_linear(x, nw, EPS, wq)
        (q.square().sum() + (model_ops.mlp(x, wgu, wd, nw, EPS) * torch.arange(H)).sum()).backward()
        grads.append([t.grad for t in (x, wgu, wd, nw, wq)])
    for a, b in zip(*grads):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_weights_must_pair_up() -> None:
    x = torch.zeros(2, 8)
    with pytest.raises(ValueError, match="w_gate_up"):
        model_ops.mlp(x, torch.zeros(11, 8), torch.zeros(8, 5))


def test_zero_width_hidden_rows_compute_like_torch() -> None:
    # reshape(-1, 0) had raised torch's "ambiguous" error for a hidden size of 0 (fuzz round 2, 2026-11-23).
    x, w1 = torch.randn(3, 0), torch.randn(4, 0)
    out = model_ops.norm_linear(x, torch.randn(0), 1e-6, w1)
    got = out[0] if isinstance(out, (tuple, list)) else out
    assert got.shape == (3, 4) and bool((got == 0).all())


def test_a_weight_whose_output_is_unused_gets_no_gradient_like_torch_linear() -> None:
    # Zeros would hide a parameter that received no gradient (smoke --model counts them); torch's linear gives None.
    gen = torch.Generator().manual_seed(9)
    x, nw = torch.randn(4, 16, generator=gen, requires_grad=True), torch.ones(16, requires_grad=True)
    w1, w2 = (torch.randn(8, 16, generator=gen, requires_grad=True) for _ in range(2))
    forms = (lambda: model_ops.NormLinearFunction.apply(x, nw, EPS, w1, w2)[0],
             lambda: model_ops._norm_linear_op(x, nw, EPS, [w1, w2])[0])
    for form in forms:
        for t in (x, nw, w1, w2):
            t.grad = None
        form().sum().backward()
        assert w1.grad is not None and x.grad is not None and nw.grad is not None
        assert w2.grad is None


@pytest.mark.parametrize("call,match", [
    (lambda: model_ops.norm_linear(torch.tensor(1.0), torch.ones(1), EPS, torch.ones(4, 1)), "x must be"),
    (lambda: model_ops.mlp(torch.tensor(1.0), torch.ones(4, 1), torch.ones(1, 2)), "x must be"),
    (lambda: model_ops.norm_linear(torch.ones(2, 8), torch.ones(7), EPS, torch.ones(4, 8)), r"norm weight .*\(8,\)"),
    (lambda: model_ops.norm_linear(torch.ones(2, 8), torch.ones(8), EPS, torch.ones(4, 9)), r"weights must be \(out, 8\)"),
    (lambda: model_ops.mlp(torch.ones(2, 8), torch.ones(6, 5), torch.ones(8, 3)), r"weights must be \(out, 8\)"),
])
def test_malformed_calls_get_an_error_naming_the_argument(call: Callable[[], Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()
