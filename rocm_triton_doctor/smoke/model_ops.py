"""Recompute-in-backward composite ops for the "ours" model form (issue #17): our RMSNorm and SwiGLU kernels around
torch GEMMs (cuBLAS/hipBLASLt), saving less for backward than the op-by-op composition does.

    norm_linear(x, norm_w, eps, *weights) -> [rms_norm(x)·w₁ᵀ, rms_norm(x)·w₂ᵀ, ...]
        saves x and the per-row fp32 rstd; the normalised rows (one (tokens, H) tensor, which every Linear after the
        norm would save as its input) are recomputed in backward from x and rstd (one RMSNorm pass).
    mlp(x, w_gate_up, w_down, norm_weight=None, eps) -> w_down(silu(gate)·up), [gate | up] = rms_norm(x)·w_gate_upᵀ
        (no norm when norm_weight is None). gate and up come from two GEMMs on the row halves of w_gate_up, so each is
        contiguous (the SwiGLU kernels read and write them without copies); saves x (+ rstd) and gate, up; the SwiGLU
        output h (which w_down would save as its input) and the normalised rows are recomputed in backward. ∂w_gate_up
        is written as its two halves straight into one tensor (no concatenation).

What is saved per call, for T tokens (e = bytes of the compute dtype): norm_linear e·T·H + 4·T; mlp e·T·H (+ 4·T) +
2·e·T·F. The composition saves e·T·H more for each norm (its output), and for the MLP e·T·F more (h), plus the
contiguous copies of the gate/up halves the kernels were handed before.

The GEMMs run in x's dtype, as torch's Linear does under autocast (callers cast x to the autocast dtype; autocast is
off inside so nothing is cast twice). A weight in another dtype (an fp32 master weight) is cast to x's dtype inside
the op, in forward and again in backward, so only the master is saved, not its low-precision copy; its gradient
comes back in the weight's own dtype. The norm weight may be fp32 with x in bf16/fp16 (rmsnorm.py reads it in fp32);
∂norm_weight is summed in fp32.

Each op is a torch.library custom op (`rocm_triton_doctor::norm_linear`, `rocm_triton_doctor::mlp`, with fake and
autograd registrations and backward custom ops), so torch.compile keeps it as one opaque node without a graph break
and CUDA graphs can capture it; `NormLinearFunction` / `MLPFunction` are the same computations as plain
torch.autograd.Functions, and what norm_linear() / mlp() call in eager mode (a custom op's eager dispatch cost ~190 us
of host time a call more on an H100 host, torch 2.11: benchmarks/model_profile.py). The kernels are kernels/rmsnorm.py
(_forward with stats, rmsnorm_backward) and kernels/swiglu.py (swiglu, swiglu_backward).
"""

from __future__ import annotations

import math
from typing import Any

import torch

from rocm_triton_doctor.kernels import rmsnorm, swiglu
from rocm_triton_doctor.kernels.base import first_order_only


# The eager Functions save an activation instead of recomputing it in backward when it is at most this big: below it
# the step is launch-bound (tiny-llama: 1-8 MiB tensors, one launch and its ~40 us of host time saved per tensor),
# above it memory is what the recompute buys (medium: 32-128 MiB per tensor per layer). The custom ops (what
# torch.compile and CUDA graphs run, where a launch costs no host time) always recompute.
RECOMPUTE_MIN_BYTES = 16 << 20


def _small(t: torch.Tensor) -> bool:
    return t.numel() * t.element_size() <= RECOMPUTE_MIN_BYTES


def _rows(t: torch.Tensor) -> torch.Tensor:
    # Rows from the leading dims: `reshape(-1, 0)` is ambiguous for a zero-width last dim (fuzz round 2).
    return t.reshape(math.prod(t.shape[:-1]), t.shape[-1])


def _check(name: str, x: torch.Tensor, norm_w: torch.Tensor | None, weights: tuple[torch.Tensor, ...]) -> None:
    """The shapes a caller can get wrong, named, before any kernel or GEMM (a 0-dim x had raised IndexError from
    _rows: fuzz round 3): x (..., H) with at least one dim, norm_w (H,), each weight (out, H)."""
    if not isinstance(x, torch.Tensor) or x.dim() < 1:
        raise ValueError(f"{name}: x must be a tensor of shape (..., H), got {getattr(x, 'shape', type(x).__name__)}")
    H = x.shape[-1]
    if norm_w is not None and tuple(norm_w.shape) != (H,):
        raise ValueError(f"{name}: the norm weight must have shape ({H},) for x {tuple(x.shape)}, got "
                         f"{tuple(norm_w.shape)}")
    for w in weights:
        if w.dim() != 2 or w.shape[1] != H:
            raise ValueError(f"{name}: weights must be (out, {H}) for x {tuple(x.shape)}, got {tuple(w.shape)}")


def _as(w: torch.Tensor, dt: torch.dtype) -> torch.Tensor:
    return w if w.dtype == dt else w.to(dt)


def _norm_w(norm_w: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    # rmsnorm.py takes the weight in x's dtype or fp32; anything else is cast to x's dtype.
    return norm_w if norm_w.dtype in (x.dtype, torch.float32) else norm_w.to(x.dtype)


def _normed(x2: torch.Tensor, norm_w: torch.Tensor | None, eps: float, stats: bool
            ) -> tuple[torch.Tensor, torch.Tensor | None]:
    if norm_w is None:
        return x2, None
    return rmsnorm._forward(x2, _norm_w(norm_w, x2), eps, stats=stats)


def _norm_backward(dy: torch.Tensor, x2: torch.Tensor, norm_w: torch.Tensor, rstd: torch.Tensor, with_y: bool = False
                   ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """(∂x, ∂norm_w, and with_y the forward's normalised rows, written by the same pass)."""
    y = None
    if with_y:
        dx, dw, y = rmsnorm.rmsnorm_backward_with_output(dy, x2, _norm_w(norm_w, x2), rstd)
    else:
        dx, dw = rmsnorm.rmsnorm_backward(dy, x2, _norm_w(norm_w, x2), rstd)
    return dx, dw.to(norm_w.dtype), y


class _no_autocast:
    """Autocast off for the body, back as it was after: what `torch.autocast(device, enabled=False)` does for this
    use, without its Python (~15-30 us an enter/exit pair, ~4 pairs per layer and step), and nothing at all when
    autocast is off already (fp32 runs; backward runs on autograd's thread, where it is off)."""

    __slots__ = ("dev", "was")

    def __init__(self, t: torch.Tensor) -> None:
        self.dev = "cuda" if t.is_cuda else t.device.type

    def __enter__(self) -> None:
        self.was = torch.is_autocast_enabled(self.dev)
        if self.was:
            torch.set_autocast_enabled(self.dev, False)

    def __exit__(self, *exc: Any) -> None:
        if self.was:
            torch.set_autocast_enabled(self.dev, True)


# ---- norm_linear ----------------------------------------------------------------------------------------------------

def norm_linear_forward(x: torch.Tensor, norm_w: torch.Tensor, eps: float, weights: list[torch.Tensor]
                        ) -> tuple[list[torch.Tensor], torch.Tensor, torch.Tensor]:
    """([rms_norm(x)·wᵀ for w in weights] each of shape (..., w.shape[0]) in x's dtype, per-row fp32 rstd (M,),
    the normalised rows y (M, H): the caller saves it or lets it go)."""
    with _no_autocast(x):
        y, rstd = _normed(_rows(x), norm_w, eps, stats=True)
        assert rstd is not None
        outs = [(y @ _as(w, y.dtype).t()).reshape(*x.shape[:-1], w.shape[0]) for w in weights]
    return outs, rstd, y


def norm_linear_backward(douts: list[torch.Tensor | None], x: torch.Tensor, norm_w: torch.Tensor, rstd: torch.Tensor,
                         eps: float, weights: list[torch.Tensor], y: torch.Tensor | None = None
                         ) -> tuple[torch.Tensor, torch.Tensor, list[torch.Tensor]]:
    """(∂x, ∂norm_w, [∂w...]); a None output gradient counts as zero. y: the forward's normalised rows when saved,
    else recomputed from x and rstd."""
    with _no_autocast(x):
        x2 = _rows(x)
        dt = x2.dtype  # the forward's GEMMs ran in the normalised rows' dtype, which is x's
        dy: torch.Tensor | None = None
        g2s = []
        for g, w in zip(douts, weights):
            g2 = None if g is None else _rows(g).to(dt)
            g2s.append(g2)
            if g2 is not None:
                wc = _as(w, dt)
                dy = g2 @ wc if dy is None else dy.addmm_(g2, wc)
        # Not saved: the norm's backward writes y as it goes (one write, no second read of x, one launch less).
        dx, dnw, y_new = _norm_backward(dy if dy is not None else torch.zeros_like(x2), x2, norm_w, rstd,
                                        with_y=y is None)
        y = y if y is not None else y_new
        assert y is not None
        dws = [torch.zeros_like(w) if g2 is None else (g2.t() @ y).to(w.dtype) for g2, w in zip(g2s, weights)]
        del y
    return dx.reshape(x.shape), dnw, dws


@torch.library.custom_op("rocm_triton_doctor::norm_linear", mutates_args=())
def _norm_linear_op(x: torch.Tensor, norm_w: torch.Tensor, eps: float, weights: list[torch.Tensor]) -> list[torch.Tensor]:
    outs, rstd, _ = norm_linear_forward(x, norm_w, eps, weights)
    return [*outs, rstd]


@_norm_linear_op.register_fake
def _norm_linear_fake(x: torch.Tensor, norm_w: torch.Tensor, eps: float, weights: list[torch.Tensor]) -> list[torch.Tensor]:
    return [*(x.new_empty((*x.shape[:-1], w.shape[0])) for w in weights),
            x.new_empty((math.prod(x.shape[:-1]),), dtype=torch.float32)]


@torch.library.custom_op("rocm_triton_doctor::norm_linear_backward", mutates_args=())
def _norm_linear_backward_op(douts: list[torch.Tensor], x: torch.Tensor, norm_w: torch.Tensor, rstd: torch.Tensor,
                             eps: float, weights: list[torch.Tensor]) -> list[torch.Tensor]:
    dx, dnw, dws = norm_linear_backward(list(douts), x, norm_w, rstd, eps, weights)
    return [dx, dnw, *dws]


@_norm_linear_backward_op.register_fake
def _norm_linear_backward_fake(douts: list[torch.Tensor], x: torch.Tensor, norm_w: torch.Tensor, rstd: torch.Tensor,
                               eps: float, weights: list[torch.Tensor]) -> list[torch.Tensor]:
    return [x.new_empty(x.shape), norm_w.new_empty(norm_w.shape), *(w.new_empty(w.shape) for w in weights)]


def _norm_linear_setup(ctx: Any, inputs: tuple[Any, ...], output: list[torch.Tensor]) -> None:
    x, norm_w, eps, weights = inputs
    ctx.set_materialize_grads(False)  # rstd's gradient (never used) stays None instead of a zero tensor
    ctx.eps, ctx.n = eps, len(weights)
    ctx.save_for_backward(x, norm_w, output[-1], *weights)


def _norm_linear_autograd(ctx: Any, grads: list[torch.Tensor | None]) -> tuple[Any, ...]:
    x, norm_w, rstd, *weights = ctx.saved_tensors
    douts = [g if g is not None else torch.zeros((*x.shape[:-1], w.shape[0]), dtype=x.dtype, device=x.device)
             for g, w in zip(list(grads)[:ctx.n], weights)]
    dx, dnw, *dws = _norm_linear_backward_op(douts, x, norm_w, rstd, ctx.eps, weights)
    # A weight whose output got no gradient gets none either (None, as torch's own linear gives), not zeros: a
    # parameter that received no gradient must stay visible (smoke --model counts them).
    return dx, dnw, None, [None if g is None else d for g, d in zip(list(grads)[:ctx.n], dws)]


_norm_linear_op.register_autograd(_norm_linear_autograd, setup_context=_norm_linear_setup)


def norm_linear(x: torch.Tensor, norm_w: torch.Tensor, eps: float, *weights: torch.Tensor) -> list[torch.Tensor]:
    """[F.linear(F.rms_norm(x, (H,), norm_w, eps), w) for w in weights] through the custom op, the normalised rows
    recomputed in backward instead of saved (in eager, only above RECOMPUTE_MIN_BYTES). Eager: NormLinearFunction (the
    custom op's eager dispatch cost ~190 us of host time a call more: benchmarks/model_profile.py); under
    torch.compile: the custom op (no graph break)."""
    _check("norm_linear", x, norm_w, weights)
    if torch.compiler.is_compiling():
        return list(_norm_linear_op(x, norm_w, eps, list(weights))[:-1])
    return list(NormLinearFunction.apply(x, norm_w, eps, *weights))


class NormLinearFunction(torch.autograd.Function):
    """NormLinearFunction.apply(x, norm_w, eps, *weights) -> tuple of outputs (eager autograd, no custom op)."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, norm_w: torch.Tensor, eps: float, *weights: torch.Tensor
                ) -> tuple[torch.Tensor, ...]:
        outs, rstd, y = norm_linear_forward(x, norm_w, eps, list(weights))
        ctx.eps = eps
        ctx.save_for_backward(x, norm_w, rstd, y if _small(y) else None, *weights)
        ctx.set_materialize_grads(False)
        return tuple(outs)

    @staticmethod
    @first_order_only  # its kernels record no graph: a second order must fail, not drop terms
    def backward(ctx: Any, *grads: torch.Tensor | None) -> tuple[torch.Tensor | None, ...]:
        x, norm_w, rstd, y, *weights = ctx.saved_tensors
        dx, dnw, dws = norm_linear_backward(list(grads), x, norm_w, rstd, ctx.eps, weights, y)
        return (dx, dnw, None, *(None if g is None else d for g, d in zip(grads, dws)))  # as _norm_linear_autograd


# ---- mlp ------------------------------------------------------------------------------------------------------------

def mlp_forward(x: torch.Tensor, w_gate_up: torch.Tensor, w_down: torch.Tensor, norm_w: torch.Tensor | None, eps: float
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None, torch.Tensor, torch.Tensor]:
    """(out (..., w_down.shape[0]) in x's dtype, gate (M, F), up (M, F), rstd (M,) fp32 or None without a norm, the
    normalised rows y (M, H) (x's rows without a norm), h = silu(gate)·up (M, F)): the caller saves y and h or lets
    them go."""
    if w_gate_up.shape[0] % 2 or w_down.shape[1] * 2 != w_gate_up.shape[0]:
        raise ValueError(f"mlp: w_gate_up {tuple(w_gate_up.shape)} must be (2F, H) and w_down (H_out, F), got w_down "
                         f"{tuple(w_down.shape)}")
    with _no_autocast(x):
        y, rstd = _normed(_rows(x), norm_w, eps, stats=True)
        f = w_gate_up.shape[0] // 2
        wgu = _as(w_gate_up, y.dtype)
        gate, up = y @ wgu[:f].t(), y @ wgu[f:].t()  # two GEMMs: each half contiguous for the SwiGLU kernels
        del wgu
        h = swiglu.swiglu(gate, up)
        out = h @ _as(w_down, gate.dtype).t()
    return out.reshape(*x.shape[:-1], w_down.shape[0]), gate, up, rstd, y, h


def mlp_backward(dout: torch.Tensor, x: torch.Tensor, w_gate_up: torch.Tensor, w_down: torch.Tensor,
                 norm_w: torch.Tensor | None, rstd: torch.Tensor | None, gate: torch.Tensor, up: torch.Tensor, eps: float,
                 y: torch.Tensor | None = None, h: torch.Tensor | None = None
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """(∂x, ∂w_gate_up, ∂w_down, ∂norm_w or None), each in its input's dtype. y, h: the forward's normalised rows
    and silu(gate)·up when saved, else recomputed (from x and rstd, and from gate and up)."""
    with _no_autocast(x):
        x2 = _rows(x)
        dt = gate.dtype
        g = _rows(dout).to(dt)
        if h is None:  # not saved: the SwiGLU backward writes it as it goes (one write, no second read of gate, up)
            da, db, h = swiglu.swiglu_backward_with_output(g @ _as(w_down, dt), gate, up, da_into_dy=True)
        else:
            da, db = swiglu.swiglu_backward(g @ _as(w_down, dt), gate, up)
        dwd = (g.t() @ h).to(w_down.dtype)
        del h
        f = gate.shape[1]
        wgu = _as(w_gate_up, dt)
        dy = (da @ wgu[:f]).addmm_(db, wgu[f:])
        del wgu
        if norm_w is None:
            dx, dnw, y = dy, None, x2
        else:
            assert rstd is not None  # y not saved: the norm's backward writes it as it goes
            dx, dnw, y_new = _norm_backward(dy, x2, norm_w, rstd, with_y=y is None)
            y = y if y is not None else y_new
        assert y is not None
        dwgu = torch.empty(w_gate_up.shape, dtype=dt, device=x.device)
        torch.mm(da.t(), y, out=dwgu[:f])  # the two halves written in place: no torch.cat
        torch.mm(db.t(), y, out=dwgu[f:])
        del y, da, db
    return dx.reshape(x.shape), dwgu.to(w_gate_up.dtype), dwd, dnw


def _mlp_fake_outputs(x: torch.Tensor, w_gate_up: torch.Tensor, w_down: torch.Tensor, norm_w: torch.Tensor | None
                      ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    M, f = math.prod(x.shape[:-1]), w_gate_up.shape[0] // 2
    return (x.new_empty((*x.shape[:-1], w_down.shape[0])), x.new_empty((M, f)), x.new_empty((M, f)),
            x.new_empty((M if norm_w is not None else 0,), dtype=torch.float32))


@torch.library.custom_op("rocm_triton_doctor::mlp", mutates_args=())
def _mlp_op(x: torch.Tensor, w_gate_up: torch.Tensor, w_down: torch.Tensor, norm_w: torch.Tensor | None, eps: float
            ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    out, gate, up, rstd, _, _ = mlp_forward(x, w_gate_up, w_down, norm_w, eps)
    return out, gate, up, rstd if rstd is not None else x.new_empty((0,), dtype=torch.float32)


@_mlp_op.register_fake
def _mlp_fake(x: torch.Tensor, w_gate_up: torch.Tensor, w_down: torch.Tensor, norm_w: torch.Tensor | None, eps: float
              ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    return _mlp_fake_outputs(x, w_gate_up, w_down, norm_w)


@torch.library.custom_op("rocm_triton_doctor::mlp_backward", mutates_args=())
def _mlp_backward_op(dout: torch.Tensor, x: torch.Tensor, w_gate_up: torch.Tensor, w_down: torch.Tensor,
                     norm_w: torch.Tensor | None, rstd: torch.Tensor, gate: torch.Tensor, up: torch.Tensor, eps: float
                     ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    dx, dwgu, dwd, dnw = mlp_backward(dout, x, w_gate_up, w_down, norm_w, rstd if norm_w is not None else None, gate,
                                      up, eps)
    return dx, dwgu, dwd, dnw if dnw is not None else x.new_empty((0,))


@_mlp_backward_op.register_fake
def _mlp_backward_fake(dout: torch.Tensor, x: torch.Tensor, w_gate_up: torch.Tensor, w_down: torch.Tensor,
                       norm_w: torch.Tensor | None, rstd: torch.Tensor, gate: torch.Tensor, up: torch.Tensor, eps: float
                       ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    return (x.new_empty(x.shape), w_gate_up.new_empty(w_gate_up.shape), w_down.new_empty(w_down.shape),
            norm_w.new_empty(norm_w.shape) if norm_w is not None else x.new_empty((0,)))


def _mlp_setup(ctx: Any, inputs: tuple[Any, ...], output: tuple[torch.Tensor, ...]) -> None:
    x, w_gate_up, w_down, norm_w, eps = inputs
    ctx.set_materialize_grads(False)  # gate, up and rstd are outputs only to be saved: no zero gradients for them
    ctx.eps, ctx.has_norm = eps, norm_w is not None
    ctx.save_for_backward(x, w_gate_up, w_down, norm_w, *output[1:])


def _mlp_autograd(ctx: Any, dout: torch.Tensor | None, *_saved_only: Any) -> tuple[Any, ...]:
    if dout is None:
        return None, None, None, None, None
    x, w_gate_up, w_down, norm_w, gate, up, rstd = ctx.saved_tensors
    dx, dwgu, dwd, dnw = _mlp_backward_op(dout, x, w_gate_up, w_down, norm_w, rstd, gate, up, ctx.eps)
    return dx, dwgu, dwd, dnw if ctx.has_norm else None, None


_mlp_op.register_autograd(_mlp_autograd, setup_context=_mlp_setup)


def mlp(x: torch.Tensor, w_gate_up: torch.Tensor, w_down: torch.Tensor, norm_weight: torch.Tensor | None = None,
        eps: float = 1e-6) -> torch.Tensor:
    """F.linear(silu(gate)·up, w_down) with gate, up = F.linear(F.rms_norm(x) or x, w_gate_up).chunk(2, -1), through
    the custom op under torch.compile, MLPFunction in eager (see norm_linear); h and the normalised rows are
    recomputed in backward instead of saved (in eager, only above RECOMPUTE_MIN_BYTES)."""
    _check("mlp", x, norm_weight, (w_gate_up,))
    if torch.compiler.is_compiling():
        return _mlp_op(x, w_gate_up, w_down, norm_weight, eps)[0]
    return MLPFunction.apply(x, w_gate_up, w_down, norm_weight, eps)  # type: ignore[no-any-return]


class MLPFunction(torch.autograd.Function):
    """MLPFunction.apply(x, w_gate_up, w_down, norm_weight or None, eps) -> out (eager autograd, no custom op)."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, w_gate_up: torch.Tensor, w_down: torch.Tensor, norm_w: torch.Tensor | None,
                eps: float = 1e-6) -> torch.Tensor:
        out, gate, up, rstd, y, h = mlp_forward(x, w_gate_up, w_down, norm_w, eps)
        ctx.eps = eps
        keep_y = norm_w is not None and _small(y)  # without a norm y is x itself (saved anyway)
        ctx.save_for_backward(x, w_gate_up, w_down, norm_w, rstd, gate, up, y if keep_y else None,
                              h if _small(h) else None)
        return out

    @staticmethod
    @first_order_only  # its kernels record no graph: a second order must fail, not drop terms
    def backward(ctx: Any, dout: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        x, w_gate_up, w_down, norm_w, rstd, gate, up, y, h = ctx.saved_tensors
        dx, dwgu, dwd, dnw = mlp_backward(dout, x, w_gate_up, w_down, norm_w, rstd, gate, up, ctx.eps, y, h)
        return dx, dwgu, dwd, dnw, None
