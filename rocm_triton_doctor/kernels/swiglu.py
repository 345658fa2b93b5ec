"""SwiGLU gate: y = silu(a) · b = a·sigmoid(a)·b, elementwise (the Llama MLP gate), on inputs of any
layout. Bytes 3·e·n; eager torch runs two kernels (silu, mul) and moves 5·e·n."""

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels import call_plans, policy
from rocm_triton_doctor.kernels.launch import launch
from rocm_triton_doctor.kernels.launch_site import DYN, Site
from rocm_triton_doctor.kernels.base import (refuse_forward_ad,
    first_order_only, AotSpec, Case, Inputs, KernelSpec, cdiv, check_alias, check_device, check_dtype,
                                             prepare_out, randn, target_of)
from rocm_triton_doctor.kernels.elementwise import full_block, strided_grid, strided_layout, tile_of, tile_offsets

DTYPES = (torch.float16, torch.bfloat16, torch.float32)


@triton.jit
def _swiglu_block(a_ptr, b_ptr, out_ptr, offs, n, MASKED: tl.constexpr):
    mask = offs < n if MASKED else None
    a = tl.load(a_ptr + offs, mask=mask).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask).to(tl.float32)
    tl.store(out_ptr + offs, (a * tl.sigmoid(a) * b).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def swiglu_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if full_block(pid, n, BLOCK):  # unmasked, so vector loads whatever n is (elementwise.full_block)
        _swiglu_block(a_ptr, b_ptr, out_ptr, offs, n, False)
    else:
        _swiglu_block(a_ptr, b_ptr, out_ptr, offs, n, True)


@triton.jit
def swiglu_strided_kernel(a_ptr, b_ptr, out_ptr, M, N, D1, D2, sa0, sa1, sa2, san, sb0, sb1, sb2, sbn, BLOCK_M: tl.constexpr,
                          BLOCK_N: tl.constexpr):
    """swiglu on inputs of any layout (h.chunk(2, -1) halves, transposed views; elementwise.strided_layout)."""
    rows, cols = tile_of(tl.program_id(0), N, BLOCK_M, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    a = tl.load(a_ptr + tile_offsets(rows, cols, D1, D2, sa0, sa1, sa2, san), mask=mask).to(tl.float32)
    b = tl.load(b_ptr + tile_offsets(rows, cols, D1, D2, sb0, sb1, sb2, sbn), mask=mask).to(tl.float32)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], (a * tl.sigmoid(a) * b).to(out_ptr.dtype.element_ty),
             mask=mask)


def swiglu(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """silu(a) * b for same-shaped, same-dtype tensors of any layout (e.g. the two halves of h.chunk(2, -1))."""
    key = call_plans.signature(a, b) if out is None else None
    if key is not None:
        plan = _PLANS.get(key)
        if plan is not None:  # this signature was checked and planned before (call_plans.py)
            o = plan.out(a)
            plan.site(a, b, o)
            return o
    check_device("swiglu", a, b)
    check_dtype("swiglu", DTYPES, a, b)
    if a.shape != b.shape:
        raise ValueError(f"swiglu: shapes differ: {tuple(a.shape)} and {tuple(b.shape)}")
    o = prepare_out(out, tuple(a.shape), a, "swiglu")
    if out is not None:  # a fresh output overlaps nothing
        check_alias("swiglu", o, {"a": a, "b": b}, in_place=("a", "b"))
    n = a.numel()
    if n == 0:
        return o
    target = target_of(a)
    L = strided_layout("swiglu", o, a, b)
    if L is not None:
        cfg = policy.shared(policy.strided_config, target, L.N)
        site = Site(swiglu_strided_kernel, strided_grid(L, cfg), (DYN,) * 3 + (L.M, L.N, L.D1, L.D2, *L.args()), cfg)
    else:
        cfg = policy.shared(policy.elementwise_config, target, n)
        site = Site(swiglu_kernel, (cdiv(n, cfg["BLOCK"]),), (DYN,) * 3 + (n,), cfg)
    call_plans.run(_PLANS, key, site, (a, b, o), a.is_contiguous())
    return o


_PLANS = call_plans.table()


# ---- backward -----------------------------------------------------------------------------------------------------
# y = a·σ(a)·b: ∂a = dy·b·σ(a)·(1 + a·(1 - σ(a))), ∂b = dy·a·σ(a); one pass reading dy, a, b and writing ∂a, ∂b
# (Liger-Kernel's swiglu backward recomputes σ(a) the same way instead of saving silu(a)).

@triton.jit
def _swiglu_backward_kernel(dy_ptr, a_ptr, b_ptr, da_ptr, db_ptr, h_ptr, n, BLOCK: tl.constexpr, STORE_H: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if full_block(pid, n, BLOCK):
        _swiglu_backward_block(dy_ptr, a_ptr, b_ptr, da_ptr, db_ptr, h_ptr, offs, n, False, STORE_H)
    else:
        _swiglu_backward_block(dy_ptr, a_ptr, b_ptr, da_ptr, db_ptr, h_ptr, offs, n, True, STORE_H)


@triton.jit
def _swiglu_backward_block(dy_ptr, a_ptr, b_ptr, da_ptr, db_ptr, h_ptr, offs, n, MASKED: tl.constexpr,
                           STORE_H: tl.constexpr):
    mask = offs < n if MASKED else None
    dy = tl.load(dy_ptr + offs, mask=mask).to(tl.float32)
    a = tl.load(a_ptr + offs, mask=mask).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask).to(tl.float32)
    s = tl.sigmoid(a)
    # da may be dy's own memory (swiglu_backward(..., da_into_dy=True)): each element's dy is read above, before
    # its da is stored, by the same program.
    tl.store(da_ptr + offs, (dy * b * s * (1.0 + a * (1.0 - s))).to(da_ptr.dtype.element_ty), mask=mask)
    tl.store(db_ptr + offs, (dy * a * s).to(db_ptr.dtype.element_ty), mask=mask)
    if STORE_H:  # the forward's output, for a caller that let it go (a recompute that costs one write, no reads)
        tl.store(h_ptr + offs, (a * s * b).to(h_ptr.dtype.element_ty), mask=mask)


def swiglu_backward(dy: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(∂a, ∂b), contiguous, in a's dtype and shape. Inputs of any layout (made contiguous: a copy when strided)."""
    da, db, _ = _backward(dy, a, b, with_h=False, da_into_dy=False)
    return da, db


def swiglu_backward_with_output(dy: torch.Tensor, a: torch.Tensor, b: torch.Tensor, da_into_dy: bool = False
                                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(∂a, ∂b, silu(a)·b) in one pass: the backward for a caller that did not keep the forward's output (an MLP's
    recompute for its down projection's weight gradient) gets it for one extra write instead of a second pass that
    reads a and b again. da_into_dy: ∂a is written over dy (which must then be a's dtype, contiguous and not needed
    afterwards), saving one (M, F) buffer at the caller's peak."""
    da, db, h = _backward(dy, a, b, with_h=True, da_into_dy=da_into_dy)
    assert h is not None
    return da, db, h


def _backward(dy: torch.Tensor, a: torch.Tensor, b: torch.Tensor, with_h: bool, da_into_dy: bool
              ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    check_device("swiglu backward", dy, a, b)
    check_dtype("swiglu backward", DTYPES, a, b)
    if not (a.shape == b.shape == dy.shape):
        raise ValueError(f"swiglu backward: shapes differ: dy {tuple(dy.shape)}, a {tuple(a.shape)}, b {tuple(b.shape)}")
    if da_into_dy and (dy.dtype != a.dtype or not dy.is_contiguous()):
        raise ValueError("swiglu backward: da_into_dy needs dy contiguous in a's dtype")
    dy, a, b = dy.to(a.dtype).contiguous(), a.contiguous(), b.contiguous()
    if da_into_dy:
        check_alias("swiglu backward", dy, {"a": a, "b": b})
    da, db = (dy if da_into_dy else torch.empty_like(a)), torch.empty_like(b)
    h = torch.empty_like(a) if with_h else None
    n = a.numel()
    if n:
        cfg = policy.shared(policy.elementwise_config, target_of(a), n)
        launch(_swiglu_backward_kernel, (cdiv(n, cfg["BLOCK"]),), dy, a, b, da, db, h if h is not None else da, n,
               STORE_H=with_h, **cfg)
    return da, db, h


class SwiGLUFunction(torch.autograd.Function):
    """SwiGLUFunction.apply(gate, up) -> silu(gate)·up with the Triton backward (eager autograd)."""

    @staticmethod
    def forward(ctx: Any, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(a, b)
        return swiglu(a, b)

    @staticmethod
    @first_order_only  # its kernels record no graph: a second order must fail, not drop terms
    def backward(ctx: Any, dy: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        a, b = ctx.saved_tensors
        return swiglu_backward(dy, a, b)


# ---- custom ops: opaque to torch.compile (fake shapes, autograd through the backward op): no graph break ----------

@torch.library.custom_op("rocm_triton_doctor::swiglu", mutates_args=())
def _swiglu_op(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return swiglu(a, b)


@_swiglu_op.register_fake
def _swiglu_fake(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a.new_empty(a.shape)


@torch.library.custom_op("rocm_triton_doctor::swiglu_backward", mutates_args=())
def _swiglu_backward_op(dy: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return swiglu_backward(dy, a, b)


@_swiglu_backward_op.register_fake
def _swiglu_backward_fake(dy: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return a.new_empty(a.shape), b.new_empty(b.shape)


def _swiglu_setup(ctx: Any, inputs: tuple[Any, ...], output: torch.Tensor) -> None:
    ctx.save_for_backward(inputs[0], inputs[1])


def _swiglu_autograd(ctx: Any, dy: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    a, b = ctx.saved_tensors
    da, db = _swiglu_backward_op(dy, a, b)
    return da, db


_swiglu_op.register_autograd(_swiglu_autograd, setup_context=_swiglu_setup)


def swiglu_custom_op(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    """silu(gate) * up with Triton forward and backward, through the custom op."""
    refuse_forward_ad("swiglu", gate, up)
    return _swiglu_op(gate, up)


def swiglu_autograd(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    """silu(gate) * up with Triton forward and backward.
    Eager: SwiGLUFunction.apply (a torch.autograd.Function: no custom-op dispatch, ~30 us of host time less a call on an
    H100 host, issue #16 item 4); under torch.compile: the custom op rocm_triton_doctor::swiglu (opaque to the compiler, no graph
    break). Both run the same Triton forward and backward."""
    if torch.compiler.is_compiling():
        return _swiglu_op(gate, up)
    return SwiGLUFunction.apply(gate, up)  # type: ignore[no-any-return]


autograd_op = swiglu_autograd  # the hook smoke/model.py looks for (an op with a backward)
custom_op_form = swiglu_custom_op  # the form torch.compile sees, callable eagerly (tests)


def make_case(M: int, N: int, dtype: torch.dtype) -> Case:
    def setup(dev: torch.device, gen: torch.Generator) -> Inputs:
        return {"a": randn((M, N), dtype, dev, gen), "b": randn((M, N), dtype, dev, gen)}

    elem = torch.empty((), dtype=dtype).element_size()
    return Case("swiglu", f"{str(dtype).replace('torch.', '')} {M}x{N}", dtype, setup,
                run=lambda x, out: swiglu(x["a"], x["b"], out=out),
                reference=lambda x: torch.nn.functional.silu(x["a"].double()) * x["b"].double(),
                eager=lambda x: torch.nn.functional.silu(x["a"]) * x["b"], flops=5.0 * M * N,
                bytes=float(3 * elem * M * N), out_shape=lambda x: (M, N))


def cases(preset: str, target: policy.Target) -> list[Case]:
    if target.interpreter:
        return [make_case(7, 301, dt) for dt in DTYPES]
    if preset == "sweep":  # the grid lives in smoke/sweep.py, shared by the kernels of this class
        from rocm_triton_doctor.smoke import sweep as grid

        return grid.row_cases(make_case)
    if preset == "seed":
        return []
    if preset == "bench":
        return [make_case(16384, 14336, dt) for dt in (torch.float32, torch.bfloat16)]
    quick = [make_case(8192, 11008, torch.bfloat16), make_case(4097, 1000, torch.float32)]
    if preset == "quick":
        return quick
    return quick + [make_case(16384, 14336, dt) for dt in (torch.float32, torch.bfloat16)]


def aot_specs(target: policy.Target) -> list[AotSpec]:
    cfg = policy.elementwise_config(target, 1 << 24)
    sig = {"a_ptr": "*bf16", "b_ptr": "*bf16", "out_ptr": "*bf16", "n": "i32"}
    # The strided kernel as h.chunk(2, -1) halves of a (tokens, 2·11008) bf16 tensor run it: unit column stride.
    scfg = policy.strided_config(target, 11008)
    ssig = {"a_ptr": "*bf16", "b_ptr": "*bf16", "out_ptr": "*bf16", "M": "i32", "N": "i32", "D1": "i32", "sa0": "i32",
            "sa1": "i32", "sa2": "i32", "sb0": "i32", "sb1": "i32", "sb2": "i32"}
    sconst = {"D2": 1, "san": 1, "sbn": 1, "BLOCK_M": scfg["BLOCK_M"], "BLOCK_N": scfg["BLOCK_N"]}
    bsig = {"dy_ptr": "*bf16", "a_ptr": "*bf16", "b_ptr": "*bf16", "da_ptr": "*bf16", "db_ptr": "*bf16", "h_ptr": "*bf16",
            "n": "i32"}
    return [AotSpec("swiglu bf16", swiglu_kernel, sig, {"BLOCK": cfg["BLOCK"]}, cfg),
            AotSpec("swiglu bf16 chunked halves", swiglu_strided_kernel, ssig, sconst, scfg),
            AotSpec("swiglu backward bf16", _swiglu_backward_kernel, bsig, {"BLOCK": cfg["BLOCK"], "STORE_H": False}, cfg),
            AotSpec("swiglu backward bf16 with its output (MLP recompute)", _swiglu_backward_kernel, bsig,
                    {"BLOCK": cfg["BLOCK"], "STORE_H": True}, cfg)]


KERNEL = KernelSpec("swiglu", "memory", cases, aot_specs, perf_targets=("mem-copy", "mem-compile"))
