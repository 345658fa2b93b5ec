"""RMSNorm: y = x / sqrt(mean(x²) + eps) · w, per row (Llama-style). fp32 statistics, one read and one write per element:
bytes e·(2·M·N + N), ~4·M·N FLOPs; memory-bound. Eager torch needs several kernels (pow, mean, rsqrt, two muls)."""

from __future__ import annotations

import math
from typing import Any

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels import (call_plans, policy, row_grads, row_grads_cols, row_grads_split, rows_split,
                                        rows_window)
from rocm_triton_doctor.kernels.launch_site import DYN, Site
from rocm_triton_doctor.kernels.base import AotSpec, Case, Inputs, KernelSpec, check_eps, randn, first_order_only, refuse_forward_ad
from rocm_triton_doctor.kernels.rows import param_or, prepare, row_aot, row_offsets, trailing


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, out_ptr, M, N, D1, D2, s0, s1, s2, sn, sw, eps, BLOCK: tl.constexpr, ROWS: tl.constexpr,
                   LOOPED: tl.constexpr, rstd_ptr=None, STATS: tl.constexpr = False, DIV: tl.constexpr = 1):
    # STATS: also store each row's fp32 rstd (M values) for the backward, which then need not recompute it.
    N = N * DIV  # N, s0 and s1 arrive divided by DIV (rows.vector_div): known multiples for vector loads
    rows, xrow, rmask = row_offsets(tl.program_id(0), M, D1, D2, s0, s1, s2, ROWS, DIV)
    orow = rows * N  # the output is contiguous
    cols = tl.arange(0, BLOCK)
    if LOOPED:
        # Pass 1: the sum of squares chunk by chunk; pass 2: normalise and store (x is read twice).
        acc = tl.zeros((ROWS, BLOCK), dtype=tl.float32)
        for start in range(0, N, BLOCK):
            c = start + cols
            m = rmask[:, None] & (c[None, :] < N)
            x = tl.load(x_ptr + xrow[:, None] + c[None, :].to(tl.int64) * sn, mask=m, other=0.0,
                        eviction_policy="evict_last").to(tl.float32)
            acc += x * x
        rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=1) / N + eps)
        if STATS:
            tl.store(rstd_ptr + rows, rstd, mask=rmask)
        for back in range(0, tl.cdiv(N, BLOCK)):  # chunks in reverse (rows.py: wide rows and L2)
            start = (tl.cdiv(N, BLOCK) - 1 - back) * BLOCK
            c = start + cols
            m = rmask[:, None] & (c[None, :] < N)
            x = tl.load(x_ptr + xrow[:, None] + c[None, :].to(tl.int64) * sn, mask=m, other=0.0,
                        eviction_policy="evict_first").to(tl.float32)
            w = tl.load(w_ptr + c.to(tl.int64) * sw, mask=c < N, other=0.0).to(tl.float32)
            tl.store(out_ptr + orow[:, None] + c[None, :], (x * rstd[:, None] * w[None, :]).to(out_ptr.dtype.element_ty),
                     mask=m)
    else:
        m = rmask[:, None] & (cols[None, :] < N)
        x = tl.load(x_ptr + xrow[:, None] + cols[None, :].to(tl.int64) * sn, mask=m, other=0.0).to(tl.float32)
        rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / N + eps)
        if STATS:
            tl.store(rstd_ptr + rows, rstd, mask=rmask)
        w = tl.load(w_ptr + cols.to(tl.int64) * sw, mask=cols < N, other=0.0).to(tl.float32)
        tl.store(out_ptr + orow[:, None] + cols[None, :], (x * rstd[:, None] * w[None, :]).to(out_ptr.dtype.element_ty),
                 mask=m)


def rmsnorm(x: torch.Tensor, weight: torch.Tensor | None, eps: float = 1e-6, out: torch.Tensor | None = None,
            config: dict[str, Any] | None = None) -> torch.Tensor:
    """x of any shape (..., N) and layout; weight (N,) of any stride, in x's dtype or fp32, or None (no scale, as
    F.rms_norm allows); out in x's dtype. `config` ({"BLOCK", "ROWS", "num_warps", "SPLIT", "WINDOW", "TABLE"}) overrides the policy's
    launch config (tests). A weight of shape S with two or more dims normalises x's last len(S) dims together
    (F.rms_norm's normalized_shape S; rows.trailing)."""
    x2, out2, (weight,), shape = trailing("rmsnorm", x, out, weight)
    y = _forward(x2, param_or(x2, weight, 1.0), eps, out2, config)[0]
    return y if shape is None else out if out is not None else y.view(shape)


def _forward(x: torch.Tensor, weight: torch.Tensor, eps: float, out: torch.Tensor | None = None,
             config: dict[str, Any] | None = None, stats: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(y, per-row fp32 rstd of shape (M,) when `stats`, else None)."""
    eps = check_eps("rmsnorm", eps)
    key = call_plans.signature(x, weight) if out is None and config is None else None
    if key is not None:
        key = (*key, stats)
        plan = _PLANS.get(key)
        if plan is not None:  # this signature was checked and planned before (call_plans.py)
            o = plan.out(x)
            rstd = torch.empty(plan.M, dtype=torch.float32, device=x.device) if stats else None
            plan.site(x, weight, o, eps, rstd)
            return o, rstd
    L = prepare("rmsnorm", x, {"weight": weight}, out, config)
    rstd = torch.empty(L.M, dtype=torch.float32, device=x.device) if stats else None
    if not L.empty and L.split > 1:  # few wide rows: each over several programs (rows_split.py)
        rows_split.rmsnorm_split(x, weight, eps, L, rstd)
    elif not L.empty:
        plain = Site(rmsnorm_kernel, L.grid, (DYN, DYN, DYN, *L.args, weight.stride(0), DYN),
                     {**L.cfg, "DIV": L.div, "rstd_ptr": DYN, "STATS": stats})
        # an odd width: rows read in 16-byte windows (rows_window.py)
        site = rows_window.window_site("rmsnorm", plain, L, (weight,), stats)
        call_plans.run(_PLANS, key if L.plannable else None, site, (x, weight, L.out, eps, rstd), x.is_contiguous(),
                       L.M)
    elif rstd is not None:
        rstd.fill_(float(1.0 / (eps ** 0.5)))  # a row of width 0 has mean square 0
    return L.out, rstd


_PLANS = call_plans.table()


# ---- backward -----------------------------------------------------------------------------------------------------
# y = x·r·w with r = rsqrt(mean(x²) + eps): ∂x = r·(w·dy) - x·r³·Σ(w·dy·x)/N, ∂w = Σ_rows dy·x·r (row_grads.py: fp32
# partial sums per program, summed by row_grads.param_sums — no atomics). r comes saved from the forward (STATS).

@triton.jit
def _rmsnorm_backward_kernel(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, dwp_ptr, y_ptr, M, N, sw, RPP, BLOCK: tl.constexpr,
                             LOOPED: tl.constexpr, STORE_Y: tl.constexpr, ROWS: tl.constexpr = 1):
    # STORE_Y: also write the forward's output y = x·r·w, for a caller that let it go (norm_linear's recompute for
    # its weight gradients): one write, where a second forward pass would read x again and launch once more.
    pid = tl.program_id(0)
    first = pid * RPP
    n_rows = tl.minimum(M - first, RPP)
    cols = tl.arange(0, BLOCK)
    part = dwp_ptr + pid.to(tl.int64) * N  # this program's row of fp32 ∂w partial sums
    if LOOPED:
        # Rows too wide for one block: Σ(w·dy·x) chunk by chunk, then ∂x and the ∂w partials (read-add-write of
        # the program's own partial row: no other program touches it).
        for i in range(0, n_rows):
            base = (first + i).to(tl.int64) * N
            r = tl.load(rstd_ptr + first + i)
            acc = tl.zeros((BLOCK,), dtype=tl.float32)
            for start in range(0, N, BLOCK):
                c = start + cols
                m = c < N
                dy = tl.load(dy_ptr + base + c, mask=m, other=0.0).to(tl.float32)
                x = tl.load(x_ptr + base + c, mask=m, other=0.0).to(tl.float32)
                w = tl.load(w_ptr + c.to(tl.int64) * sw, mask=m, other=0.0).to(tl.float32)
                acc += dy * w * x
            k = tl.sum(acc, axis=0) * r * r * r / N
            for start in range(0, N, BLOCK):
                c = start + cols
                m = c < N
                dy = tl.load(dy_ptr + base + c, mask=m, other=0.0).to(tl.float32)
                x = tl.load(x_ptr + base + c, mask=m, other=0.0).to(tl.float32)
                w = tl.load(w_ptr + c.to(tl.int64) * sw, mask=m, other=0.0).to(tl.float32)
                tl.store(dx_ptr + base + c, (r * w * dy - x * k).to(dx_ptr.dtype.element_ty), mask=m)
                if STORE_Y:
                    tl.store(y_ptr + base + c, (x * r * w).to(y_ptr.dtype.element_ty), mask=m)
                p = tl.load(part + c, mask=m, other=0.0)
                tl.store(part + c, p + dy * x * r, mask=m)
    elif ROWS == 1:
        m = cols < N
        w = tl.load(w_ptr + cols.to(tl.int64) * sw, mask=m, other=0.0).to(tl.float32)
        dw = tl.zeros((BLOCK,), dtype=tl.float32)
        for i in range(0, n_rows):
            base = (first + i).to(tl.int64) * N
            r = tl.load(rstd_ptr + first + i)
            dy = tl.load(dy_ptr + base + cols, mask=m, other=0.0).to(tl.float32)
            x = tl.load(x_ptr + base + cols, mask=m, other=0.0).to(tl.float32)
            k = tl.sum(dy * w * x, axis=0) * r * r * r / N
            tl.store(dx_ptr + base + cols, (r * w * dy - x * k).to(dx_ptr.dtype.element_ty), mask=m)
            if STORE_Y:
                tl.store(y_ptr + base + cols, (x * r * w).to(y_ptr.dtype.element_ty), mask=m)
            dw += dy * x * r
        tl.store(part + cols, dw, mask=m)
    else:
        # Narrow rows, ROWS at a time (row_grads.py): one row of a few elements per step left the lanes idle and
        # each step's latency exposed.
        m = cols < N
        w = tl.load(w_ptr + cols.to(tl.int64) * sw, mask=m, other=0.0).to(tl.float32)[None, :]
        dw = tl.zeros((ROWS, BLOCK), dtype=tl.float32)
        for i in range(0, n_rows, ROWS):
            rows = i + tl.arange(0, ROWS)
            rm = rows < n_rows
            off = (first + rows).to(tl.int64)[:, None] * N + cols[None, :]
            mm = rm[:, None] & m[None, :]
            r = tl.load(rstd_ptr + first + rows, mask=rm, other=0.0)[:, None]
            dy = tl.load(dy_ptr + off, mask=mm, other=0.0).to(tl.float32)
            x = tl.load(x_ptr + off, mask=mm, other=0.0).to(tl.float32)
            k = (tl.sum(dy * w * x, axis=1)[:, None]) * r * r * r / N
            tl.store(dx_ptr + off, (r * w * dy - x * k).to(dx_ptr.dtype.element_ty), mask=mm)
            if STORE_Y:
                tl.store(y_ptr + off, (x * r * w).to(y_ptr.dtype.element_ty), mask=mm)
            dw += dy * x * r
        tl.store(part + cols, tl.sum(dw, axis=0), mask=m)


def rmsnorm_backward(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, rstd: torch.Tensor,
                     config: dict[str, Any] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """(∂x in x's dtype and shape, ∂weight in weight's dtype) from the output gradient dy (x's shape), the forward's
    x and weight (any layout, as the forward takes) and its per-row rstd."""
    dx, dw, _ = _backward(dy, x, weight, rstd, config, with_y=False)
    return dx, dw


def rmsnorm_backward_with_output(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, rstd: torch.Tensor,
                                 config: dict[str, Any] | None = None
                                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(∂x, ∂weight, y) in one pass: rmsnorm_backward plus the forward's output y (x's dtype, shape (M, N) of x's
    rows, as computed from the saved rstd) for a caller that did not keep it."""
    dx, dw, y = _backward(dy, x, weight, rstd, config, with_y=True)
    assert y is not None
    return dx, dw, y


def _backward(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, rstd: torch.Tensor,
              config: dict[str, Any] | None, with_y: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    N = x.shape[-1]
    key = row_grads.plan_key("rmsnorm with y" if with_y else "rmsnorm", config, dy, x, weight, rstd)
    plan = row_grads.planned(key)
    if plan is not None:  # this signature was checked and planned before
        return _run_backward(plan, dy, x, row_grads.rows2d(x, N), weight, rstd, with_y)
    if dy.shape != x.shape:
        raise ValueError(f"rmsnorm backward: dy {tuple(dy.shape)} must have x's shape {tuple(x.shape)}")
    x2 = row_grads.rows2d(x, N)
    M = x2.shape[0]
    if rstd.shape != (M,) or rstd.dtype != torch.float32:
        raise ValueError(f"rmsnorm backward: rstd must be fp32 of shape ({M},), got {rstd.dtype} {tuple(rstd.shape)}")
    if M == 0 or N == 0:
        return torch.empty_like(x), torch.zeros_like(weight), torch.zeros_like(x2) if with_y else None
    cfg = row_grads.config(x2, N, config, M)
    split = row_grads.split_parts(x2, N, M, cfg) if not with_y and not config else 1
    if split > 1:  # few wide rows: each over `split` programs (row_grads_split.py)
        dx = torch.empty_like(x2)
        part = torch.empty((M, N), dtype=torch.float32, device=x.device)
        row_grads_split.split_backward(1, row_grads.rows2d(dy.to(x.dtype), N), x2, weight, None, rstd, dx, part, None,
                                       split, cfg)
        return dx.reshape(x.shape), row_grads.param_sums((part,), (weight.dtype,))[0], None
    # wide rows: the row sums, then column tiles (row_grads_cols.py)
    if row_grads_cols.takes(cfg, M, N, 1, row_grads.target_of(x2).backend) and not with_y and not config:
        dx = torch.empty_like(x2)
        parts = row_grads_cols.cols_backward(1, row_grads.rows2d(dy.to(x.dtype), N), x2, weight, None, rstd, dx, cfg,
                                             row_grads.units_of(x2))
        return dx.reshape(x.shape), row_grads.param_sums(parts, (weight.dtype,))[0], None
    grid, rpp = row_grads.launch_shape(M, row_grads.programs(x2, M, cfg), cfg["ROWS"])
    site = Site(_rmsnorm_backward_kernel, grid, (DYN,) * 7 + (M, N, weight.stride(0), rpp),
                {"STORE_Y": with_y, **row_grads.kernel_cfg(cfg, N, x2, config)})
    return _run_backward(row_grads.plan(key, cfg, grid[0], site, x2, N, 1), dy, x, x2, weight, rstd, with_y)


def _run_backward(plan: row_grads.GradPlan, dy: torch.Tensor, x: torch.Tensor, x2: torch.Tensor, weight: torch.Tensor,
                  rstd: torch.Tensor, with_y: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """The plan's two launches: the kernel into ∂x (and y) and the partial rows, then the weight's sums (x2: x's
    rows)."""
    N = x2.shape[1]
    dy2 = row_grads.rows2d(dy if dy.dtype is x.dtype else dy.to(x.dtype), N)
    dx = torch.empty_like(x2)
    y = torch.empty_like(x2) if with_y else None
    (part,) = plan.parts(1, N, x)
    plan.kernel(dy2, x2, weight, rstd, dx, part, y if y is not None else dx)
    dw = torch.empty(N, dtype=weight.dtype, device=x.device)
    assert plan.sums is not None
    plan.sums(part, part, dw, dw)
    return dx if x.dim() == 2 else dx.reshape(x.shape), dw, y


class RMSNormFunction(torch.autograd.Function):
    """RMSNormFunction.apply(x, weight, eps) -> y, with the Triton backward (eager autograd)."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
        y, rstd = _forward(x, weight, eps, stats=True)
        ctx.save_for_backward(x, weight, rstd)
        return y

    @staticmethod
    @first_order_only  # its kernels record no graph: a second order must fail, not drop terms
    def backward(ctx: Any, dy: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        x, weight, rstd = ctx.saved_tensors
        dx, dw = rmsnorm_backward(dy, x, weight, rstd)
        return dx, dw, None


# ---- custom ops: opaque to torch.compile (fake shapes, autograd through the backward op): no graph break ----------

@torch.library.custom_op("rocm_triton_doctor::rmsnorm", mutates_args=())
def _rmsnorm_op(x: torch.Tensor, weight: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    y, rstd = _forward(x, weight, eps, stats=True)
    assert rstd is not None
    return y, rstd


@_rmsnorm_op.register_fake
def _rmsnorm_fake(x: torch.Tensor, weight: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    return x.new_empty(x.shape), x.new_empty((math.prod(x.shape[:-1]),), dtype=torch.float32)


@torch.library.custom_op("rocm_triton_doctor::rmsnorm_backward", mutates_args=())
def _rmsnorm_backward_op(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, rstd: torch.Tensor
                         ) -> tuple[torch.Tensor, torch.Tensor]:
    return rmsnorm_backward(dy, x, weight, rstd)


@_rmsnorm_backward_op.register_fake
def _rmsnorm_backward_fake(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, rstd: torch.Tensor
                           ) -> tuple[torch.Tensor, torch.Tensor]:
    return x.new_empty(x.shape), weight.new_empty(weight.shape)


def _rmsnorm_setup(ctx: Any, inputs: tuple[Any, ...], output: tuple[torch.Tensor, torch.Tensor]) -> None:
    ctx.save_for_backward(inputs[0], inputs[1], output[1])


def _rmsnorm_autograd(ctx: Any, dy: torch.Tensor, _drstd: torch.Tensor | None) -> tuple[torch.Tensor | None, ...]:
    x, weight, rstd = ctx.saved_tensors
    dx, dw = _rmsnorm_backward_op(dy, x, weight, rstd)
    return dx, dw, None


_rmsnorm_op.register_autograd(_rmsnorm_autograd, setup_context=_rmsnorm_setup)


def rmsnorm_custom_op(x: torch.Tensor, weight: torch.Tensor | None, eps: float = 1e-6) -> torch.Tensor:
    """F.rms_norm(x, (N,), weight, eps) with Triton forward and backward, through the custom op (weight None: no
    scale; its stand-in requires no gradient)."""
    x, _, (weight,), shape = trailing("rmsnorm", x, None, weight)
    weight = param_or(x, weight, 1.0)
    refuse_forward_ad("rmsnorm", x, weight)
    y = _rmsnorm_op(x, weight, check_eps("rmsnorm", eps))[0]
    return y if shape is None else y.view(shape)


def rmsnorm_autograd(x: torch.Tensor, weight: torch.Tensor | None, eps: float = 1e-6) -> torch.Tensor:
    """F.rms_norm(x, (N,), weight, eps) with Triton forward and backward.
    Eager: RMSNormFunction.apply (a torch.autograd.Function: no custom-op dispatch, ~30 us of host time less a call on an
    H100 host, issue #16 item 4); under torch.compile: the custom op rocm_triton_doctor::rmsnorm (opaque to the compiler, no graph
    break). Both run the same Triton forward and backward. A weight of two or more dims: as rmsnorm()."""
    x, _, (weight,), shape = trailing("rmsnorm", x, None, weight)
    weight = param_or(x, weight, 1.0)
    if torch.compiler.is_compiling():
        y = _rmsnorm_op(x, weight, eps)[0]
    else:
        y = RMSNormFunction.apply(x, weight, eps)
    return y if shape is None else y.view(shape)  # type: ignore[no-any-return]


autograd_op = rmsnorm_autograd  # the hook smoke/model.py looks for (an op with a backward)
custom_op_form = rmsnorm_custom_op  # the form torch.compile sees, callable eagerly (tests)


def reference(x: torch.Tensor, w: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    xd = x.double()
    return xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + eps) * w.double()


def eager(x: torch.Tensor, w: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    # The Llama/HF RMSNorm: statistics in fp32, result cast back.
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * w


def make_case(M: int, N: int, dtype: torch.dtype, strided: bool = False, seed_shape: bool = False) -> Case:
    def setup(dev: torch.device, gen: torch.Generator) -> Inputs:
        x = randn((M, N + 16 if strided else N), dtype, dev, gen)
        return {"x": x[:, :N] if strided else x, "w": randn((N,), dtype, dev, gen)}

    elem = torch.empty((), dtype=dtype).element_size()
    return Case("rmsnorm", f"{str(dtype).replace('torch.', '')} {M}x{N}" + (" row-strided" if strided else ""), dtype,
                setup, run=lambda x, out: rmsnorm(x["x"], x["w"], out=out),
                reference=lambda x: reference(x["x"], x["w"]), eager=lambda x: eager(x["x"], x["w"]),
                flops=4.0 * M * N, bytes=float(elem * (2 * M * N + N)), out_shape=lambda x: (M, N), seed_shape=seed_shape)


def cases(preset: str, target: policy.Target) -> list[Case]:
    if target.interpreter:
        return [make_case(9, 1000, torch.float32), make_case(5, 777, torch.float16, strided=True),
                make_case(7, 512, torch.bfloat16), make_case(2, 70000, torch.float32)]  # the last: looped chunks
    if preset == "sweep":  # the grid lives in smoke/sweep.py, shared by the kernels of this class
        from rocm_triton_doctor.smoke import sweep as grid

        return grid.row_cases(make_case)
    seeds = [make_case(2048, 4096, torch.float16, seed_shape=True)]  # a small Llama layer: 2048 tokens, hidden 4096
    if preset == "seed":
        return seeds
    if preset == "bench":
        return [make_case(65536, 8192, dt) for dt in (torch.float32, torch.bfloat16)]
    # Narrow rows packed several to a program (rows.py): 128-wide rows, as small heads or per-head norms have.
    narrow = [make_case(65536, 128, torch.bfloat16)]
    if preset == "quick":
        return seeds + [make_case(8192, 4096, torch.bfloat16), make_case(4097, 1000, torch.float32, strided=True)] + narrow
    return seeds + [make_case(65536, 8192, dt) for dt in (torch.float32, torch.bfloat16)] + narrow


def aot_specs(target: policy.Target) -> list[AotSpec]:
    # The forward as training runs it (STATS: rstd saved for the backward), then the backward.
    fwd = row_aot("rmsnorm", rmsnorm_kernel, ("x_ptr", "w_ptr", "out_ptr"), {"eps": "fp32", "rstd_ptr": "*fp32"},
                  {"sw": 1, "STATS": True}, target)
    ptrs = {"dy_ptr": "x", "x_ptr": "x", "w_ptr": "x", "rstd_ptr": "*fp32", "dx_ptr": "x", "dwp_ptr": "*fp32",
            "y_ptr": "x"}
    return (fwd + row_grads.grad_aot("rmsnorm", _rmsnorm_backward_kernel, ptrs, {"sw": 1, "STORE_Y": False}, target)
            + row_grads.grad_aot("rmsnorm (writing y for norm_linear)", _rmsnorm_backward_kernel, ptrs,
                                 {"sw": 1, "STORE_Y": True}, target)
            + rows_split.split_aot("rmsnorm", target)
            + rows_window.window_aot("rmsnorm", target) + row_grads_split.split_aot("rmsnorm", 1, target)
            + row_grads_cols.cols_aot("rmsnorm", 1, target))


KERNEL = KernelSpec("rmsnorm", "memory", cases, aot_specs, perf_targets=("mem-copy", "mem-compile", "mem-eager"))
