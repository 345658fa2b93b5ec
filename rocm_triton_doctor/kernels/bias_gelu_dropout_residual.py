"""out = residual + dropout(GELU_tanh(x + bias)), over the last dimension H of (B, S, H) activations.

The transformer MLP tail in one pass: reads x and residual (2·e·B·S·H) and bias (e·H), writes out (e·B·S·H), no mask
stored. Eager torch runs four kernels (add, gelu, dropout, add) and moves ~3x the bytes. The dropout mask is Philox of
(seed, row, column) — octet (row·H + col) // 8 of the rows laid end to end — so it is reproducible on any backend,
tiling and layout; without a seed each call draws a fresh one. x and residual may be any layout (read through
strides), the bias fp32 under 16-bit activations. Two forms: row tiles, and one flat stretch of contiguous inputs for
widths the tiles fit badly (bias_gelu_flat.py, policy.bias_flat; session 28).
"""

from __future__ import annotations

import math
from typing import Any

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels import argcheck, call_plans, policy, row_grads
from rocm_triton_doctor.kernels.launch import launch
from rocm_triton_doctor.kernels.launch_site import DYN, Site
from rocm_triton_doctor.kernels.base import (refuse_forward_ad,
    first_order_only, AotSpec, Case, DropoutCheck, Inputs, KernelSpec, cdiv, check_alias, check_device,
                                             check_dtype, check_p, dropout_args, prepare_out, randn, resolve_seed,
                                             row_layout, stream_seed, target_of)
from rocm_triton_doctor.kernels.elementwise import tile_offsets
from rocm_triton_doctor.kernels.common import dropout_tile, gelu_tanh, gelu_tanh_grad
from rocm_triton_doctor.kernels.bias_gelu_flat import (bias_gelu_dropout_residual_backward_flat_kernel,
                                                       bias_gelu_dropout_residual_flat_kernel)

DTYPES = (torch.float16, torch.bfloat16, torch.float32)


STREAM = 1  # this kernel's Philox stream (base.stream_seed): the same seed gives it a mask other than the GEMM's


@triton.jit
def bias_gelu_dropout_residual_kernel(x_ptr, bias_ptr, res_ptr, out_ptr, M, N, D1, D2, sx0, sx1, sx2, sxn, sr0, sr1, sr2,
                                      srn, sb,
                                      seed, threshold, scale, HAS_DROPOUT: tl.constexpr, BLOCK_M: tl.constexpr,
                                      BLOCK_N: tl.constexpr, FAST_TANH: tl.constexpr = False):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + tile_offsets(rows, cols, D1, D2, sx0, sx1, sx2, sxn), mask=mask, other=0.0).to(tl.float32)
    b = tl.load(bias_ptr + cols.to(tl.int64) * sb, mask=cols < N, other=0.0).to(tl.float32)
    r = tl.load(res_ptr + tile_offsets(rows, cols, D1, D2, sr0, sr1, sr2, srn), mask=mask, other=0.0).to(tl.float32)
    # The mask is a function of the logical (row, col), not of the layout: the same for any strides and in the flat
    # form. Dropout reaches these tiles only at N % 8 == 0 (policy.bias_flat), where a row's octets are the flat ones.
    y = dropout_tile(gelu_tanh(x + b[None, :], FAST_TANH), rows, pid_n * BLOCK_N, N, seed, threshold, scale, HAS_DROPOUT,
                     BLOCK_M, BLOCK_N)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], (r + y).to(out_ptr.dtype.element_ty), mask=mask)


def bias_gelu_dropout_residual(x: torch.Tensor, bias: torch.Tensor, residual: torch.Tensor, p: float = 0.0,
                               seed: int | None = None, out: torch.Tensor | None = None) -> torch.Tensor:
    """residual + dropout(gelu_tanh(x + bias)) over the last dimension. x and residual: same shape and dtype, any
    layout; bias (H,) of any stride, in x's dtype or fp32; out contiguous in x's dtype. seed=None draws a fresh seed
    per call (a new mask each time, as F.dropout); a given seed gives the same mask for the same logical shape."""
    name = "bias_gelu_dropout_residual"
    p = check_p(p, "bias_gelu_dropout_residual")
    key = call_plans.signature(x, bias, residual) if out is None else None
    if key is not None:
        key = (*key, p > 0.0)
        plan = _PLANS.get(key)
        if plan is not None:  # this signature was checked and planned before (call_plans.py)
            seed = resolve_seed(name, seed) if p > 0 or seed is not None else 0
            o = plan.out(x)
            plan.site(x, bias, residual, o, stream_seed(seed, STREAM), *dropout_args(p))
            return o
    check_device(name, x, bias, residual)
    check_dtype(name, DTYPES, x, residual)
    check_dtype(f"{name} bias", DTYPES, bias)
    if x.dim() < 1:
        raise ValueError(f"{name}: x must have at least one dimension (the last is H), got a 0-dim tensor")
    if x.shape != residual.shape:
        raise ValueError(f"{name}: x {tuple(x.shape)} and residual {tuple(residual.shape)} differ")
    if bias.dim() != 1 or bias.shape[0] != x.shape[-1]:
        raise ValueError(f"{name}: bias must have shape ({x.shape[-1]},), got {tuple(bias.shape)}")
    seed = resolve_seed(name, seed) if p > 0 or seed is not None else 0
    o = prepare_out(out, tuple(x.shape), x, "bias_gelu_dropout_residual")
    if out is not None:  # a fresh output overlaps nothing
        check_alias(name, o, {"x": x, "residual": residual, "bias": bias}, in_place=("x", "residual"))
    N = x.shape[-1]
    dense = x.is_contiguous() and residual.is_contiguous()
    if not dense and p > 0.0 and N % 8:
        # The mask's octets cross rows here, so only the flat form draws it: the inputs are copied dense (and the
        # call not planned: a plan launches on the caller's tensors). H200, a slice of wider rows (docs/measurements/
        # 2026-11-29-h200-s28-bias-strided.txt): copy + flat 1.6-2.1x faster than row tiles drawing the mask two
        # octets a tile octet, 1.1-1.6x than one Philox a lane.
        x, residual, dense, key = x.contiguous(), residual.contiguous(), True, None
    if dense:  # the common case: no stride folding
        M, D1, D2, sx0, sx1, sx2, sr0, sr1, sr2 = (x.numel() // N if N else math.prod(x.shape[:-1])), 1, 1, N, 0, 0, N, 0, 0
    else:
        M, (D1, D2), [(sx0, sx1, sx2), (sr0, sr1, sr2)] = row_layout(name, tuple(x.shape), x.stride(), residual.stride(),
                                                                    lead=3)
    if M == 0 or N == 0:
        return o
    target = target_of(x)
    tanh = policy.fast_tanh(target, x.element_size())
    if dense and policy.bias_flat(N, p > 0.0):
        cfg = policy.shared(policy.bias_flat_config, target, M * N)
        site = Site(bias_gelu_dropout_residual_flat_kernel, (cdiv(M * N, cfg["BLOCK"]),),
                    (DYN,) * 4 + (M * N, N, bias.stride(0)) + (DYN,) * 3,
                    {"HAS_DROPOUT": p > 0.0, "ONE_WRAP": cfg["BLOCK"] <= N, "FAST_TANH": tanh, **cfg})
    else:
        cfg = policy.shared(policy.tile2d_config, target, M, N)
        grid = (cdiv(M, cfg["BLOCK_M"]), cdiv(N, cfg["BLOCK_N"]))
        site = Site(bias_gelu_dropout_residual_kernel, grid,
                    (DYN,) * 4 + (M, N, D1, D2, sx0, sx1, sx2, x.stride(-1), sr0, sr1, sr2, residual.stride(-1),
                                  bias.stride(0)) + (DYN,) * 3,
                    {"HAS_DROPOUT": p > 0.0, "FAST_TANH": tanh, **cfg})
    call_plans.run(_PLANS, key, site, (x, bias, residual, o, stream_seed(seed, STREAM), *dropout_args(p)),
                   x.is_contiguous())
    return o


_PLANS = call_plans.table()


# ---- backward -----------------------------------------------------------------------------------------------------
# out = r + drop(gelu(u)), u = x + b: ∂r = dy, ∂x = drop(dy·gelu'(u)) (the same Philox mask, recomputed from the seed,
# never stored: a function of (seed, row, col) only), ∂b = Σ_rows ∂x — per row-block fp32 partial sums (a
# (cdiv(M, BLOCK_M), N) buffer) summed by row_grads.param_sums: deterministic, no atomics. Where the forward runs flat
# (policy.bias_flat) ∂x is flat too and ∂b its column sums by torch. At N % 8 != 0 with dropout that is the only form
# (the mask's octets cross rows); row tiles drawing it (two Philox an octet) had run at 10-26 % of copy bandwidth,
# 0.3-0.96x eager autograd's backward, the flat form at 20-63 %, 1.1-2.8x (H200, docs/measurements/2026-11-29-h200-
# s28-bias-odd-dropout-{s3,bwd}.txt).
# gelu'(u): common.gelu_tanh_grad.

@triton.jit
def _bias_gelu_dropout_residual_backward_kernel(dy_ptr, x_ptr, bias_ptr, dx_ptr, dbp_ptr, M, N, sb, seed, threshold,
                                                scale, HAS_DROPOUT: tl.constexpr, BLOCK_M: tl.constexpr,
                                                BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * N + cols[None, :]
    dy = tl.load(dy_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    u += tl.load(bias_ptr + cols.to(tl.int64) * sb, mask=cols < N, other=0.0).to(tl.float32)[None, :]
    g = dropout_tile(dy * gelu_tanh_grad(u), rows, pid_n * BLOCK_N, N, seed, threshold, scale, HAS_DROPOUT, BLOCK_M,
                     BLOCK_N)
    g = tl.where(mask, g, 0.0)
    tl.store(dx_ptr + offs, g.to(dx_ptr.dtype.element_ty), mask=mask)
    tl.store(dbp_ptr + pid_m.to(tl.int64) * N + cols, tl.sum(g, axis=0), mask=cols < N)


def bias_gelu_dropout_residual_backward(dy: torch.Tensor, x: torch.Tensor, bias: torch.Tensor, p: float, seed: int
                                        ) -> tuple[torch.Tensor, torch.Tensor]:
    """(∂x in x's dtype and shape, ∂bias in bias's dtype) for the forward called with (x, bias, p, seed) — `seed` the
    one the forward used (required when p > 0: the mask is recomputed from it). ∂residual is dy itself."""
    name = "bias_gelu_dropout_residual backward"
    check_device(name, dy, x, bias)
    if dy.shape != x.shape:
        raise ValueError(f"{name}: dy {tuple(dy.shape)} must have x's shape {tuple(x.shape)}")
    p = check_p(p, "bias_gelu_dropout_residual")
    if p > 0.0 and seed is None:
        # A fresh seed here would draw a different mask than the forward's: a silently wrong gradient.
        raise ValueError(f"{name}: seed is required when p > 0 (pass the seed the forward used)")
    if x.numel() == 0:  # (…, 0) or (0, …): reshape(-1, 0) is ambiguous, and there is nothing to compute
        return torch.zeros_like(x), torch.zeros_like(bias)
    N = x.shape[-1]
    x2, dy2 = x.reshape(-1, N).contiguous(), dy.to(x.dtype).reshape(-1, N).contiguous()
    M = x2.shape[0]
    threshold, scale = dropout_args(p)
    target = target_of(x)
    if policy.bias_flat(N, p > 0.0):
        # As the forward: ∂x flat, ∂bias its column sums (one more read of ∂x). A bias of a wider dtype than x (fp32
        # under 16-bit activations) sums ∂x in fp32, as eager autograd does there (x + bias is fp32): from an fp32 ∂x,
        # rounded to x's dtype after.
        g = torch.empty(x2.shape, dtype=torch.float32 if bias.element_size() > x.element_size() else x.dtype,
                        device=x.device)
        fcfg = policy.shared(policy.bias_flat_config, target, M * N)
        launch(bias_gelu_dropout_residual_backward_flat_kernel, (cdiv(M * N, fcfg["BLOCK"]),), dy2, x2, bias, g,
               M * N, N, bias.stride(0), stream_seed(resolve_seed(name, seed), STREAM), threshold, scale,
               HAS_DROPOUT=p > 0.0, ONE_WRAP=fcfg["BLOCK"] <= N, **fcfg)
        return g.to(x.dtype).reshape(x.shape), g.sum(0, dtype=torch.float32).to(bias.dtype)
    dx = torch.empty_like(x2)
    cfg = policy.shared(policy.tile2d_config, target, M, N)
    grid = (cdiv(M, cfg["BLOCK_M"]), cdiv(N, cfg["BLOCK_N"]))
    part = torch.empty((grid[0], N), dtype=torch.float32, device=x.device)
    launch(_bias_gelu_dropout_residual_backward_kernel, grid, dy2, x2, bias, dx, part, M, N, bias.stride(0),
           stream_seed(resolve_seed(name, seed), STREAM), threshold, scale,
           HAS_DROPOUT=p > 0.0, **cfg)
    return dx.reshape(x.shape), row_grads.param_sums((part,), (bias.dtype,))[0]


class BiasGeluDropoutResidualFunction(torch.autograd.Function):
    """BiasGeluDropoutResidualFunction.apply(x, bias, residual, p, seed) -> out, with the Triton backward. seed None
    draws one (kept for the backward, which recomputes the mask from it)."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, bias: torch.Tensor, residual: torch.Tensor, p: float = 0.0,
                seed: int | None = None) -> torch.Tensor:
        seed = resolve_seed("bias_gelu_dropout_residual", seed)
        ctx.save_for_backward(x, bias)
        ctx.p, ctx.seed, ctx.rdtype = p, seed, residual.dtype
        return bias_gelu_dropout_residual(x, bias, residual, p, seed)

    @staticmethod
    @first_order_only  # its kernels record no graph: a second order must fail, not drop terms
    def backward(ctx: Any, dy: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        x, bias = ctx.saved_tensors
        dx, db = bias_gelu_dropout_residual_backward(dy, x, bias, ctx.p, ctx.seed)
        return dx, db, dy.to(ctx.rdtype), None, None


# ---- custom ops: opaque to torch.compile (fake shapes, autograd through the backward op): no graph break ----------
# The seed is an argument (drawn by the caller when None, before the op): under torch.compile pass one explicitly,
# else drawing it (a host-side random number) breaks the graph.

@torch.library.custom_op("rocm_triton_doctor::bias_gelu_dropout_residual", mutates_args=())
def _bgdr_op(x: torch.Tensor, bias: torch.Tensor, residual: torch.Tensor, p: float, seed: int) -> torch.Tensor:
    return bias_gelu_dropout_residual(x, bias, residual, p, seed)


@_bgdr_op.register_fake
def _bgdr_fake(x: torch.Tensor, bias: torch.Tensor, residual: torch.Tensor, p: float, seed: int) -> torch.Tensor:
    return x.new_empty(x.shape)


@torch.library.custom_op("rocm_triton_doctor::bias_gelu_dropout_residual_backward", mutates_args=())
def _bgdr_backward_op(dy: torch.Tensor, x: torch.Tensor, bias: torch.Tensor, p: float, seed: int
                      ) -> tuple[torch.Tensor, torch.Tensor]:
    return bias_gelu_dropout_residual_backward(dy, x, bias, p, seed)


@_bgdr_backward_op.register_fake
def _bgdr_backward_fake(dy: torch.Tensor, x: torch.Tensor, bias: torch.Tensor, p: float, seed: int
                        ) -> tuple[torch.Tensor, torch.Tensor]:
    return x.new_empty(x.shape), bias.new_empty(bias.shape)


def _bgdr_setup(ctx: Any, inputs: tuple[Any, ...], output: torch.Tensor) -> None:
    ctx.save_for_backward(inputs[0], inputs[1])
    ctx.p, ctx.seed, ctx.rdtype = inputs[3], inputs[4], inputs[2].dtype


def _bgdr_autograd(ctx: Any, dy: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
    x, bias = ctx.saved_tensors
    dx, db = _bgdr_backward_op(dy, x, bias, ctx.p, ctx.seed)
    return dx, db, dy.to(ctx.rdtype), None, None


_bgdr_op.register_autograd(_bgdr_autograd, setup_context=_bgdr_setup)


def bias_gelu_dropout_residual_autograd(x: torch.Tensor, bias: torch.Tensor, residual: torch.Tensor, p: float = 0.0,
                                        seed: int | None = None) -> torch.Tensor:
    """residual + dropout(gelu_tanh(x + bias)) with Triton forward and backward.
    Eager: BiasGeluDropoutResidualFunction.apply (a torch.autograd.Function: no custom-op dispatch, ~30 us of host
    time less a call on an H100 host, issue #16 item 4); under torch.compile: the custom op
    rocm_triton_doctor::bias_gelu_dropout_residual (opaque to the compiler, no graph break). Both run the same Triton
    forward and backward. A seed=None with p > 0 is drawn here, on the host (under torch.compile pass one)."""
    argcheck.tensors_only("bias_gelu_dropout_residual", x=x, bias=bias, residual=residual)
    p = check_p(p, "bias_gelu_dropout_residual")
    s = resolve_seed("bias_gelu_dropout_residual", seed) if p > 0 else 0
    if torch.compiler.is_compiling():
        return _bgdr_op(x, bias, residual, p, s)
    return BiasGeluDropoutResidualFunction.apply(x, bias, residual, p, s)  # type: ignore[no-any-return]


def bias_gelu_dropout_residual_custom_op(x: torch.Tensor, bias: torch.Tensor, residual: torch.Tensor, p: float = 0.0,
                                         seed: int | None = None) -> torch.Tensor:
    """residual + dropout(gelu_tanh(x + bias)) with Triton forward and backward, through the custom op."""
    argcheck.tensors_only("bias_gelu_dropout_residual", x=x, bias=bias, residual=residual)
    refuse_forward_ad("bias_gelu_dropout_residual", x, bias, residual)
    p = check_p(p, "bias_gelu_dropout_residual")
    return _bgdr_op(x, bias, residual, p, resolve_seed("bias_gelu_dropout_residual", seed) if p > 0 else 0)


autograd_op = bias_gelu_dropout_residual_autograd  # an op with a backward (the contract of smoke/model_forms.py)
custom_op_form = bias_gelu_dropout_residual_custom_op  # the form torch.compile sees, callable eagerly (tests)


def reference_undropped(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.gelu(x.double() + bias.double(), approximate="tanh")


def make_case(B: int, S: int, H: int, dtype: torch.dtype, p: float, seed_shape: bool = False) -> Case:
    def setup(dev: torch.device, gen: torch.Generator) -> Inputs:
        return {"x": randn((B, S, H), dtype, dev, gen), "bias": randn((H,), dtype, dev, gen),
                "res": randn((B, S, H), dtype, dev, gen), "seed": 42}

    def eager(x: Inputs) -> torch.Tensor:
        y = torch.nn.functional.gelu(x["x"] + x["bias"], approximate="tanh")
        return x["res"] + torch.nn.functional.dropout(y, p=p, training=True)

    drop = None
    if p > 0:
        drop = DropoutCheck(p, observed=lambda x, out: out.double() - x["res"].double(),
                            undropped=lambda x: reference_undropped(x["x"], x["bias"]),
                            combine=lambda x, dropped: x["res"].double() + dropped)
    elem = torch.empty((), dtype=dtype).element_size()
    n = B * S * H
    return Case("bias_gelu_dropout_residual", f"{str(dtype).replace('torch.', '')} B={B} S={S} H={H} p={p}", dtype, setup,
                run=lambda x, out: bias_gelu_dropout_residual(x["x"], x["bias"], x["res"], p, x["seed"], out=out),
                reference=lambda x: x["res"].double() + reference_undropped(x["x"], x["bias"]),
                eager=eager, flops=20.0 * n, bytes=float(elem * (3 * n + H)), out_shape=lambda x: (B, S, H),
                dropout=drop, seed_shape=seed_shape)


def cases(preset: str, target: policy.Target) -> list[Case]:
    if target.interpreter:
        return [make_case(2, 7, 129, torch.float32, 0.0), make_case(2, 7, 129, torch.float16, 0.2),
                make_case(1, 33, 100, torch.bfloat16, 0.1)]
    if preset == "sweep":  # the grid lives in smoke/sweep.py, shared by the kernels of this class
        from rocm_triton_doctor.smoke import sweep as grid

        return grid.bias_gelu_cases(make_case)
    seeds = [make_case(b, s, h, torch.float16, 0.1, seed_shape=True) for b, s, h in
             ((1, 128, 1024), (4, 512, 4096), (16, 2048, 8192))]
    if preset == "seed":
        return seeds
    if preset == "bench":
        return [make_case(16, 2048, 8192, dt, 0.1) for dt in (torch.float32, torch.bfloat16)]
    if preset == "quick":
        return [seeds[1], make_case(8, 1024, 4096, torch.bfloat16, 0.1)]
    return seeds + [make_case(16, 2048, 8192, dt, 0.1) for dt in (torch.float32, torch.bfloat16)]


def aot_specs(target: policy.Target) -> list[AotSpec]:
    cfg = policy.tile2d_config(target, 32768, 8192)
    sig = {"x_ptr": "*bf16", "bias_ptr": "*bf16", "res_ptr": "*bf16", "out_ptr": "*bf16", "M": "i32", "N": "i32",
           "sx0": "i32", "sx1": "i32", "sx2": "i32", "sr0": "i32", "sr1": "i32", "sr2": "i32", "seed": "i64", "threshold": "u32",
           "scale": "fp32"}
    # Contiguous (B, S, H) activations as they run most: unit column strides and one folded leading dimension are
    # what Triton specialises at launch (== 1).
    const = {"D1": 1, "D2": 1, "sxn": 1, "srn": 1, "sb": 1, "HAS_DROPOUT": True, "BLOCK_M": cfg["BLOCK_M"],
             "BLOCK_N": cfg["BLOCK_N"], "FAST_TANH": policy.fast_tanh(target, 2)}
    bsig = {"dy_ptr": "*bf16", "x_ptr": "*bf16", "bias_ptr": "*bf16", "dx_ptr": "*bf16", "dbp_ptr": "*fp32", "M": "i32",
            "N": "i32", "seed": "i64", "threshold": "u32", "scale": "fp32"}
    bconst = {"sb": 1, "HAS_DROPOUT": True, "BLOCK_M": cfg["BLOCK_M"], "BLOCK_N": cfg["BLOCK_N"]}
    fcfg = policy.bias_flat_config(target, 32768 * 4481)
    fsig = {"x_ptr": "*bf16", "bias_ptr": "*bf16", "res_ptr": "*bf16", "out_ptr": "*bf16", "n": "i64", "N": "i32",
            "seed": "i64", "threshold": "u32", "scale": "fp32"}
    # An odd width (the flat form's reason) with dropout, as it runs in training.
    fconst = {"sb": 1, "HAS_DROPOUT": True, "BLOCK": fcfg["BLOCK"], "ONE_WRAP": True,
              "FAST_TANH": policy.fast_tanh(target, 2)}
    return [AotSpec("bias_gelu_dropout_residual bf16", bias_gelu_dropout_residual_kernel, sig, const, cfg),
            AotSpec("bias_gelu_dropout_residual flat bf16 H4481", bias_gelu_dropout_residual_flat_kernel, fsig, fconst,
                    fcfg),
            AotSpec("bias_gelu_dropout_residual backward bf16", _bias_gelu_dropout_residual_backward_kernel, bsig, bconst,
                    cfg),
            AotSpec("bias_gelu_dropout_residual backward flat bf16 H4481",
                    bias_gelu_dropout_residual_backward_flat_kernel,
                    {"dy_ptr": "*bf16", "x_ptr": "*bf16", "bias_ptr": "*bf16", "dx_ptr": "*bf16", "n": "i64", "N": "i32",
                     "seed": "i64", "threshold": "u32", "scale": "fp32"},
                    {"sb": 1, "HAS_DROPOUT": True, "BLOCK": fcfg["BLOCK"], "ONE_WRAP": True}, fcfg)]


KERNEL = KernelSpec("bias_gelu_dropout_residual", "memory", cases, aot_specs,
                    perf_targets=("mem-copy", "mem-compile", "mem-eager"))
