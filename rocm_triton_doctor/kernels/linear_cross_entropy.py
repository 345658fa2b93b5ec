"""Fused linear + cross-entropy (the LM head and its loss), forward and backward, without the (tokens x vocab) logits.

For hidden states h (N, H), weight W (V, H) (tied embeddings: the embedding matrix), optional bias b (V,), targets
y (N,) with ignore_index rows, z = h·Wᵀ + b:

    loss_i = logsumexp(z_i) - z_{i,y_i}   (0 for ignored rows)
    loss   = Σ_i loss_i / n_valid          (reduction "mean"; "sum" drops the division; "none" returns loss_i)
    dz_i   = (softmax(z_i) - onehot(y_i)) · s,  s = 1/n_valid (mean) or 1 (sum), 0 on ignored rows
    ∂h = dz·W,  ∂W = dzᵀ·h,  ∂b = Σ_i dz_i

The rows are processed in chunks of C (chunk_rows): per chunk one GEMM makes the C x V logits in the input dtype
(fp32 accumulation inside the GEMM, as nn.Linear does), ce_rows_kernel walks each row's vocabulary in BLOCK_V blocks
(online max / sum-of-exp in fp32, so V has no upper limit) and overwrites the logits with dz in place, then two
GEMMs give ∂h for the chunk and add the chunk's ∂W into an fp32 accumulator. The gradients are computed in the
forward (the loss is a scalar, so backward only scales them by the incoming gradient): the logits are made once,
never N x V at a time. With reduction "none" each row's loss has its own incoming gradient g_i, known only in
backward: the forward computes the losses alone, and backward makes the logits again and scales each dz_i by g_i
before the sums over rows (custom op `…_grads` under torch.compile). Idea from Liger-Kernel's
FusedLinearCrossEntropy (linkedin/Liger-Kernel src/liger_kernel/ops/fused_linear_cross_entropy.py); this code is
our own.

Mean over zero valid targets (every row ignored) is 0/0: the loss is NaN and every gradient 0, exactly what
torch.nn.functional.cross_entropy gives. A target outside [0, V) that is not ignore_index makes that row's loss NaN
(torch raises instead; checking on the host would need a device sync, which CUDA-graph capture forbids); no memory
outside the row is read.

Custom op `rocm_triton_doctor::linear_cross_entropy` (torch.library.custom_op with a fake and an autograd
registration) so torch.compile keeps it as one opaque node without a graph break; `linear_cross_entropy()` calls it.
`LinearCrossEntropyFunction` is the same computation as a plain torch.autograd.Function. Cost per step:
6·N·V·H FLOPs in GEMMs (forward logits, ∂h, ∂W), bytes ~ e·(2·N·H + 2·V·H) + 2·e·C·V per chunk.
"""

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels import argcheck
from rocm_triton_doctor.kernels.launch import launch
from rocm_triton_doctor.kernels.policy_lce import (MIN_CHUNK_ROWS, ONE_CHUNK_BYTES, ce_config, chunk_bounds,
                                                   chunk_rows, fused_accumulate)
from rocm_triton_doctor.kernels.base import (refuse_forward_ad,
    first_order_only, KernelSpec, check_device, check_dtype, target_of)

DTYPES = (torch.float16, torch.bfloat16, torch.float32)
OP_NAME = "rocm_triton_doctor::linear_cross_entropy"
REDUCTIONS = ("mean", "sum", "none")


@triton.jit
def ce_rows_kernel(z_ptr, stride_z, y_ptr, loss_ptr, nvalid_ptr, V, ignore_index, row0,
                   MEAN: tl.constexpr, WRITE_GRAD: tl.constexpr, BLOCK_V: tl.constexpr):
    """One program per row of a logits chunk: the row's loss into loss_ptr[row0 + row]; with WRITE_GRAD the row is
    overwritten with dz (in the logits' dtype)."""
    row = tl.program_id(0).to(tl.int64)
    base = z_ptr + row * stride_z
    y = tl.load(y_ptr + row0 + row).to(tl.int64)
    cols = tl.arange(0, BLOCK_V)
    m = float("-inf")
    s = 0.0
    for start in range(0, V, BLOCK_V):
        z = tl.load(base + start + cols, mask=start + cols < V, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(z, axis=0))
        # While every logit so far is -inf (a -inf bias masking the leading vocabulary), shift by 0: exp(-inf - -inf)
        # was NaN and made the row's loss and gradients NaN (fuzz round 4; softmax.py guards the same way).
        shift = tl.where(m_new == float("-inf"), 0.0, m_new)
        s = s * tl.exp(m - shift) + tl.sum(tl.exp(z - shift), axis=0)
        m = m_new
    lse = m + tl.log(s)
    valid = y != ignore_index
    in_range = (y >= 0) & (y < V)
    z_y = tl.load(base + tl.where(in_range, y, 0), mask=valid & in_range, other=0.0).to(tl.float32)
    loss = tl.where(valid, tl.where(in_range, lse - z_y, float("nan")), 0.0)
    tl.store(loss_ptr + row0 + row, loss)
    if WRITE_GRAD:
        scale = tl.where(valid, 1.0, 0.0)
        if MEAN:
            # n_valid = 0 only when every row is ignored; then scale is already 0 everywhere (torch: zero gradients).
            n = tl.maximum(tl.load(nvalid_ptr).to(tl.float32), 1.0)
            scale = scale / n
        for start in range(0, V, BLOCK_V):
            c = start + cols
            z = tl.load(base + c, mask=c < V, other=0.0).to(tl.float32)
            g = (tl.exp(z - lse) - tl.where(c == y, 1.0, 0.0)) * scale
            tl.store(base + c, g.to(z_ptr.dtype.element_ty), mask=c < V)


def _check_options(name: str, reduction: object, ignore_index: object) -> None:
    if isinstance(ignore_index, bool) or not isinstance(ignore_index, int) or not -(2**63) <= ignore_index < 2**63:
        raise TypeError(f"{name}: ignore_index must be a Python int in the int64 range, got {ignore_index!r}")
    argcheck.check_choice(name, "reduction", reduction, REDUCTIONS)


def _validate(h: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None, targets: torch.Tensor,
              reduction: str, ignore_index: Any = -100) -> None:
    name = "linear_cross_entropy"
    _check_options(name, reduction, ignore_index)
    floats = (h, w) if bias is None else (h, w, bias)
    check_device(name, *floats, targets)
    check_dtype(name, DTYPES, *floats)
    if targets.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"{name}: targets must be int64 or int32, got {targets.dtype}")
    if h.dim() != 2 or w.dim() != 2 or h.shape[1] != w.shape[1] or h.shape[1] == 0 or w.shape[0] == 0:
        raise ValueError(f"{name}: need hidden (N, H) and weight (V, H) with H, V > 0, got {tuple(h.shape)} and "
                         f"{tuple(w.shape)}")
    if targets.shape != (h.shape[0],):
        raise ValueError(f"{name}: targets must have shape ({h.shape[0]},), got {tuple(targets.shape)}")
    if bias is not None and bias.shape != (w.shape[0],):
        raise ValueError(f"{name}: bias must have shape ({w.shape[0]},), got {tuple(bias.shape)}")


def forward_and_grads(h: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None, targets: torch.Tensor,
                      ignore_index: int = -100, reduction: str = "mean", need_h: bool = True, need_w: bool = True,
                      need_b: bool = True, chunk: int | None = None, config: dict[str, Any] | None = None,
                      row_grad: torch.Tensor | None = None
                      ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None, torch.Tensor | None]:
    """(loss fp32, ∂h, ∂W, ∂b), each gradient in its input's dtype (None where not asked). The loss is 0-dim for
    "mean" and "sum" and the gradients are for a loss gradient of 1; for "none" the loss is each row's (N,), and the
    gradients are for the rows' loss gradients `row_grad` (N,) (ones if not given, i.e. the gradients of their sum).
    `chunk` (rows) and `config` (ce_config's launch dict) override the policy. Autocast is off inside: the GEMMs run
    in the inputs' dtype (callers under autocast cast the inputs first)."""
    _validate(h, w, bias, targets, reduction, ignore_index)
    if chunk is not None and chunk < 1:
        raise ValueError(f"linear_cross_entropy: chunk must be >= 1 rows, got {chunk}")
    if row_grad is not None:
        argcheck.tensors_only("linear_cross_entropy", row_grad=row_grad)
        if (reduction != "none" or row_grad.shape != (h.shape[0],) or row_grad.device != h.device
                or not row_grad.is_floating_point()):
            raise ValueError(f"linear_cross_entropy: row_grad (each row's loss gradient; reduction='none' only) must "
                             f"be a floating ({h.shape[0]},) tensor on {h.device}; got {row_grad.dtype} "
                             f"{tuple(row_grad.shape)} on {row_grad.device} with reduction={reduction!r}")
    cfg = config or ce_config(target_of(h), w.shape[0])
    with torch.autocast(h.device.type, enabled=False):
        return _forward_and_grads(h, w, bias, targets, ignore_index, reduction, need_h, need_w, need_b, chunk, cfg,
                                  row_grad)


def _forward_and_grads(h: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None, targets: torch.Tensor,
                       ignore_index: int, reduction: str, need_h: bool, need_w: bool, need_b: bool, chunk: int | None,
                       cfg: dict[str, Any], row_grad: torch.Tensor | None = None
                       ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None, torch.Tensor | None]:
    N, H = h.shape
    V = w.shape[0]
    h = h.contiguous()
    w = w.contiguous()
    targets = targets.contiguous()
    grads = need_h or need_w or (need_b and bias is not None)
    C = chunk or chunk_rows(N, V, H, h.element_size())
    losses = torch.empty(N, dtype=torch.float32, device=h.device)
    # On the device (no host sync, so the step can be graph-captured). An ignore_index outside the targets' dtype
    # (int32 targets, 2**32 + 1) would wrap in torch's comparison, while the kernel compares exactly: compare in int64.
    info = torch.iinfo(targets.dtype)
    n_valid = ((targets if info.min <= ignore_index <= info.max else targets.long()) != ignore_index).sum()
    gh = torch.empty_like(h) if need_h else None
    gw32: torch.Tensor | None = None  # fp32 sum of the chunks' ∂W (only with more than one chunk)
    gw = None
    fused = need_w and fused_accumulate(h)
    gb32 = torch.zeros(V, dtype=torch.float32, device=h.device) if need_b and bias is not None else None
    for r0, r1 in chunk_bounds(N, C):
        hc = h[r0:r1]
        z = torch.addmm(bias, hc, w.t()) if bias is not None else hc @ w.t()
        launch(ce_rows_kernel, (hc.shape[0],), z, z.stride(0), targets, losses, n_valid, V, ignore_index, r0,
               MEAN=reduction == "mean", WRITE_GRAD=grads, **cfg)
        if not grads:
            continue
        if row_grad is not None:  # reduction "none": each row's dz times its loss's gradient, before any sum over rows
            z.mul_(row_grad[r0:r1, None])
        if gh is not None:
            torch.mm(z, w, out=gh[r0:r1])
        if need_w:
            if r0 == 0 and r1 == N:
                gw = z.t() @ hc  # one chunk: rounded once, no accumulator
            else:
                gw32 = _add_product(gw32, z.t(), hc, fused)
        if gb32 is not None:
            gb32 += z.sum(0, dtype=torch.float32)
    loss = losses.sum() / n_valid if reduction == "mean" else losses.sum() if reduction == "sum" else losses
    if gw32 is not None:
        gw = gw32.to(w.dtype)
    elif need_w and gw is None:  # no rows at all (N = 0)
        gw = torch.zeros_like(w)
    return loss, gh, gw, (gb32.to(bias.dtype) if gb32 is not None and bias is not None else None)


def _add_product(acc: torch.Tensor | None, a: torch.Tensor, b: torch.Tensor, fused: bool) -> torch.Tensor:
    """acc + a·b in fp32 (acc None: a·b in fp32). Fused (policy_lce.fused_accumulate): the GEMM adds into acc itself
    and 16-bit products are never rounded to 16 bits; otherwise the product is made in the inputs' dtype and added."""
    if fused and a.dtype == torch.float32:
        return a @ b if acc is None else acc.addmm_(a, b)
    if fused:
        if acc is None:
            return torch.mm(a, b, out_dtype=torch.float32)
        return torch.addmm(acc, a, b, out_dtype=torch.float32, out=acc)
    part = a @ b
    return part.float() if acc is None else acc.add_(part)


def _scaled(g: torch.Tensor | None, grad_loss: torch.Tensor) -> torch.Tensor | None:
    return None if g is None else (g * grad_loss).to(g.dtype)


class LinearCrossEntropyFunction(torch.autograd.Function):
    """The plain autograd.Function form: LinearCrossEntropyFunction.apply(h, w, bias, targets, ignore_index,
    reduction, grad_enabled) -> loss. `grad_enabled`: torch.is_grad_enabled() of the caller (forward runs with grad
    mode off, and ctx.needs_input_grad says True under torch.no_grad() too): False computes no gradients."""

    @staticmethod
    def forward(ctx: Any, h: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None, targets: torch.Tensor,
                ignore_index: int = -100, reduction: str = "mean", grad_enabled: bool = True) -> torch.Tensor:
        need = [n and grad_enabled for n in ctx.needs_input_grad[:3]]
        if reduction == "none":
            # Each row's loss has its own gradient, known only in backward: the gradients are made there, the
            # logits made again chunk by chunk (as Liger-Kernel's reduction="none" does).
            ctx.none = (ignore_index, need)
            ctx.save_for_backward(h, w, bias, targets)
            return forward_and_grads(h, w, bias, targets, ignore_index, "none", False, False, False)[0]
        loss, gh, gw, gb = forward_and_grads(h, w, bias, targets, ignore_index, reduction, need[0], need[1], need[2])
        ctx.grads, ctx.none = (gh, gw, gb), None
        return loss

    @staticmethod
    @first_order_only  # its kernels record no graph: a second order must fail, not drop terms
    def backward(ctx: Any, grad_loss: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        if ctx.none is not None:
            ignore_index, need = ctx.none
            h, w, bias, targets = ctx.saved_tensors
            _, gh, gw, gb = forward_and_grads(h, w, bias, targets, ignore_index, "none", need[0], need[1], need[2],
                                              row_grad=grad_loss)
            return gh, gw, gb, None, None, None, None
        if ctx.grads is None:
            # The gradients were computed in the forward and freed by the first backward (they are as large as W).
            raise RuntimeError("linear_cross_entropy: backward ran twice through the same forward (retain_graph); "
                               "its gradients are computed in the forward and freed after one backward: run the "
                               "forward again, or use linear_cross_entropy_custom_op")
        gh, gw, gb = (_scaled(g, grad_loss) for g in ctx.grads)
        ctx.grads = None
        return gh, gw, gb, None, None, None, None


# ---- custom op: the same computation, opaque to torch.compile (one node, fake shapes, autograd from saved grads) ----

def _empty(like: torch.Tensor) -> torch.Tensor:
    return like.new_empty((0,))


@torch.library.custom_op(OP_NAME, mutates_args=())
def _lce_op(h: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None, targets: torch.Tensor, ignore_index: int,
            reduction: str, need_h: bool, need_w: bool, need_b: bool
            ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    if reduction == "none":  # the gradients are made in backward (_lce_grads_op), for each row's loss gradient
        return forward_and_grads(h, w, bias, targets, ignore_index, "none", False, False, False)[0], _empty(h), \
            _empty(w), _empty(h)
    loss, gh, gw, gb = forward_and_grads(h, w, bias, targets, ignore_index, reduction, need_h, need_w, need_b)
    # The gradients in their inputs' layouts, as the fake (empty_like) says and as autograd expects a gradient to
    # match its input: computed contiguous, they are copied only for a non-contiguous h or W (a transposed h had
    # given inductor a stride mismatch, or with size asserts off wrong dh; fuzz round 2, 2026-11-23).
    return (loss, _like(gh, h) if gh is not None else _empty(h), _like(gw, w) if gw is not None else _empty(w),
            gb if gb is not None else _empty(h))


def _like(g: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    if g.stride() == x.stride():
        return g
    return torch.empty_like(x).copy_(g)


@_lce_op.register_fake
def _lce_fake(h: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None, targets: torch.Tensor, ignore_index: int,
              reduction: str, need_h: bool, need_w: bool, need_b: bool
              ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    if reduction == "none":
        return h.new_empty((h.shape[0],), dtype=torch.float32), _empty(h), _empty(w), _empty(h)
    return (h.new_empty((), dtype=torch.float32), *_grads_fake(h, w, bias, need_h, need_w, need_b))


def _grads_fake(h: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None, need_h: bool, need_w: bool,
                need_b: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gb = bias.new_empty(bias.shape) if (need_b and bias is not None) else _empty(h)
    return torch.empty_like(h) if need_h else _empty(h), torch.empty_like(w) if need_w else _empty(w), gb


@torch.library.custom_op(OP_NAME + "_grads", mutates_args=())
def _lce_grads_op(h: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None, targets: torch.Tensor,
                  row_grad: torch.Tensor, ignore_index: int, need_h: bool, need_w: bool, need_b: bool
                  ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """reduction="none"'s backward: (∂h, ∂W, ∂b) for each row's loss gradient row_grad (empty where not asked)."""
    _, gh, gw, gb = forward_and_grads(h, w, bias, targets, ignore_index, "none", need_h, need_w, need_b,
                                      row_grad=row_grad)
    return (_like(gh, h) if gh is not None else _empty(h), _like(gw, w) if gw is not None else _empty(w),
            gb if gb is not None else _empty(h))


@_lce_grads_op.register_fake
def _lce_grads_fake(h: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None, targets: torch.Tensor,
                    row_grad: torch.Tensor, ignore_index: int, need_h: bool, need_w: bool, need_b: bool
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return _grads_fake(h, w, bias, need_h, need_w, need_b)


def _lce_grads_backward(ctx: Any, *_grads: Any) -> tuple[torch.Tensor | None, ...]:
    raise RuntimeError("linear_cross_entropy: gradients of gradients (create_graph=True) are not supported: its "
                       "backward runs Triton kernels that record no graph")


_lce_grads_op.register_autograd(_lce_grads_backward)


def _lce_setup(ctx: Any, inputs: tuple[Any, ...], output: tuple[torch.Tensor, ...]) -> None:
    ctx.has = inputs[6:9]
    ctx.has_bias = inputs[2] is not None
    ctx.none = inputs[4] if inputs[5] == "none" else None  # reduction "none": its ignore_index
    if ctx.none is not None:
        ctx.save_for_backward(*inputs[:4])
    else:
        ctx.save_for_backward(*output[1:])


def _lce_backward(ctx: Any, grad_loss: torch.Tensor, *_unused: Any) -> tuple[torch.Tensor | None, ...]:
    need_h, need_w, need_b = ctx.has
    need_b = need_b and ctx.has_bias
    if ctx.none is not None:
        h, w, bias, targets = ctx.saved_tensors
        gh, gw, gb = _lce_grads_op(h, w, bias, targets, grad_loss, ctx.none, need_h, need_w, need_b)
    else:  # only the asked-for gradients are scaled (the others are empty stand-ins)
        gh, gw, gb = (_scaled(g, grad_loss) if need else None
                      for g, need in zip(ctx.saved_tensors, (need_h, need_w, need_b)))
    return (gh if need_h else None, gw if need_w else None, gb if need_b else None, None, None, None, None, None,
            None)


_lce_op.register_autograd(_lce_backward, setup_context=_lce_setup)


def _token_rows(h: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, tuple[int, ...] | None]:
    """A model's (B, S, H) hidden states and (B, S) targets as (B·S, H) rows and (B·S,) targets (a view of h, so
    autograd flows through it), and the targets' shape (reduction "none" returns the losses in it); 2-D hidden
    states, and shapes that do not pair up (refused by the checks), as given."""
    shape = tuple(targets.shape) if isinstance(targets, torch.Tensor) else None
    if isinstance(h, torch.Tensor) and h.dim() > 2 and shape == tuple(h.shape[:-1]):
        return argcheck.fold_rows("linear_cross_entropy", "hidden", h), targets.reshape(-1), shape
    return h, targets, shape


def _shaped(loss: torch.Tensor, reduction: str, shape: tuple[int, ...] | None) -> torch.Tensor:
    return loss.view(shape) if reduction == "none" and shape is not None else loss


def linear_cross_entropy(h: torch.Tensor, w: torch.Tensor, targets: torch.Tensor, bias: torch.Tensor | None = None,
                         ignore_index: int = -100, reduction: str = "mean") -> torch.Tensor:
    """Loss of F.cross_entropy(F.linear(h, w, bias), targets) for h (N, H) and targets (N,), or a model's (..., H)
    hidden states with (...) targets (the tokens flattened, as a causal LM's loss does). Gradients are computed in the
    forward only for inputs that require them and only when grad mode is on. Eager: LinearCrossEntropyFunction (no
    custom-op dispatch, ~30 us of host time less a call, issue #16 item 4); under torch.compile: the custom op (no
    graph break). reduction="none" returns the losses in the targets' shape (fp32)."""
    if torch.compiler.is_compiling():
        return linear_cross_entropy_custom_op(h, w, targets, bias, ignore_index, reduction)
    h, targets, shape = _token_rows(h, targets)
    loss = LinearCrossEntropyFunction.apply(h, w, bias, targets, ignore_index, reduction, torch.is_grad_enabled())
    return _shaped(loss, reduction, shape)


def linear_cross_entropy_custom_op(h: torch.Tensor, w: torch.Tensor, targets: torch.Tensor,
                                   bias: torch.Tensor | None = None, ignore_index: int = -100,
                                   reduction: str = "mean") -> torch.Tensor:
    """linear_cross_entropy through the custom op (what torch.compile sees; callable eagerly)."""
    argcheck.tensors_only("linear_cross_entropy", h=h, w=w, targets=targets)
    _check_options("linear_cross_entropy", reduction, ignore_index)
    refuse_forward_ad("linear_cross_entropy", h, w, targets, bias)
    h, targets, shape = _token_rows(h, targets)
    on = torch.is_grad_enabled()
    need_b = on and bias is not None and bias.requires_grad
    loss = _lce_op(h, w, bias, targets, ignore_index, reduction, on and h.requires_grad, on and w.requires_grad,
                   need_b)[0]
    return _shaped(loss, reduction, shape)


autograd_op = linear_cross_entropy  # the hook smoke/model.py looks for (an op with a backward)
custom_op_form = linear_cross_entropy_custom_op  # the form torch.compile sees, callable eagerly (tests)


def reference(h: torch.Tensor, w: torch.Tensor, targets: torch.Tensor, bias: torch.Tensor | None = None,
              ignore_index: int = -100, reduction: str = "mean"
              ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """fp64 torch autograd: (loss, ∂h, ∂W, ∂b)."""
    hd, wd = h.detach().double().requires_grad_(), w.detach().double().requires_grad_()
    bd = bias.detach().double().requires_grad_() if bias is not None else None
    loss = torch.nn.functional.cross_entropy(torch.nn.functional.linear(hd, wd, bd), targets.long(),
                                             ignore_index=ignore_index, reduction=reduction)
    loss.backward()
    assert hd.grad is not None and wd.grad is not None
    return loss.detach(), hd.grad, wd.grad, (bd.grad if bd is not None else None)


def eager(h: torch.Tensor, w: torch.Tensor, targets: torch.Tensor, bias: torch.Tensor | None = None,
          ignore_index: int = -100, reduction: str = "mean") -> torch.Tensor:
    """What a model does without the fusion: the full N x V logits, then F.cross_entropy (forward only)."""
    return torch.nn.functional.cross_entropy(torch.nn.functional.linear(h, w, bias).float(), targets,
                                             ignore_index=ignore_index, reduction=reduction)


# The smoke cases and the compile-only audit's spec live in linear_cross_entropy_cases.py (imported last: they call
# this module's functions).
from rocm_triton_doctor.kernels.linear_cross_entropy_cases import aot_specs, cases, make_case  # noqa: E402,F401

# Compute-bound (three GEMMs of 2·N·V·H FLOPs each); no performance target of issue #5 covers it yet.
KERNEL = KernelSpec("linear_cross_entropy", "compute", cases, aot_specs)

__all__ = ["KERNEL", "LinearCrossEntropyFunction", "MIN_CHUNK_ROWS", "ONE_CHUNK_BYTES", "autograd_op", "cases",
           "ce_config", "chunk_rows", "custom_op_form", "forward_and_grads", "linear_cross_entropy",
           "linear_cross_entropy_custom_op", "reference", "eager", "aot_specs"]
