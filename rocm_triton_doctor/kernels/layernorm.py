"""LayerNorm: y = (x - mean) / sqrt(var + eps) · w + b, per row; fp32 statistics (two-pass over the row held in
registers, or merged chunk statistics for rows too wide for one block). Bytes e·(2·M·N + 2·N), ~8·M·N FLOPs; memory-bound."""

from __future__ import annotations

import math
from typing import Any

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels import (call_plans, policy, row_grads, row_grads_cols, row_grads_split, rows_split,
                                        rows_window)
from rocm_triton_doctor.kernels.launch_site import DYN, Site
from rocm_triton_doctor.kernels.base import KernelSpec, check_eps, first_order_only, refuse_forward_ad
from rocm_triton_doctor.kernels.rows import param_or, prepare, row_offsets, trailing


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, M, N, D1, D2, s0, s1, s2, sn, sw, sb, eps, BLOCK: tl.constexpr,
                     ROWS: tl.constexpr, LOOPED: tl.constexpr, mean_ptr=None, rstd_ptr=None,
                     STATS: tl.constexpr = False, DIV: tl.constexpr = 1):
    # STATS: also store each row's fp32 mean and rstd (M values each) for the backward.
    N = N * DIV  # N, s0 and s1 arrive divided by DIV (rows.vector_div): known multiples for vector loads
    rows, xrow, rmask = row_offsets(tl.program_id(0), M, D1, D2, s0, s1, s2, ROWS, DIV)
    orow = rows * N  # the output is contiguous
    cols = tl.arange(0, BLOCK)
    # Statistics of x - (the row's first element): rows like 1000 + 0.01·randn keep their digits in fp32 sums
    # (kernel-edge-cases.md #25; without the shift a looped fp32 row of 70000 was 7x eager torch's error).
    shift = tl.load(x_ptr + xrow, mask=rmask, other=0.0).to(tl.float32)
    # A first element of 1e37 made the shifted row's sum overflow to -inf and the row NaN (fuzz round 4); past 2^60
    # no shift: the row then fares as eager torch's does (its squares overflow either way).
    shift = tl.where(tl.abs(shift) < 1.152921504606847e18, shift, 0.0)
    if LOOPED:
        # Pass 1: mean and sum of squared deviations chunk by chunk, each chunk's own (mean, M2) merged into the
        # running ones (Chan et al.'s parallel update: no E[x²] - E[x]² cancellation); pass 2: normalise and store.
        mean = tl.zeros((ROWS,), dtype=tl.float32)
        m2 = tl.zeros((ROWS,), dtype=tl.float32)
        for start in range(0, N, BLOCK):
            c = start + cols
            m = rmask[:, None] & (c[None, :] < N)
            x = tl.load(x_ptr + xrow[:, None] + c[None, :].to(tl.int64) * sn, mask=m, other=0.0,
                        eviction_policy="evict_last").to(tl.float32)
            x = tl.where(m, x - shift[:, None], 0.0)
            nb = tl.minimum(N - start, BLOCK).to(tl.float32)
            bmean = tl.sum(x, axis=1) / nb
            d = tl.where(m, x - bmean[:, None], 0.0)
            seen = start * 1.0
            total = seen + nb
            delta = bmean - mean
            mean = mean + delta * (nb / total)
            # (delta·w)·delta: the first chunk's weight w is 0, and delta² of a huge chunk mean is inf (inf·0 = NaN).
            m2 = m2 + tl.sum(d * d, axis=1) + (delta * (seen * nb / total)) * delta
        rstd = 1.0 / tl.sqrt(m2 / N + eps)
        if STATS:
            tl.store(mean_ptr + rows, mean + shift, mask=rmask)
            tl.store(rstd_ptr + rows, rstd, mask=rmask)
        for back in range(0, tl.cdiv(N, BLOCK)):  # chunks in reverse (rows.py: wide rows and L2)
            start = (tl.cdiv(N, BLOCK) - 1 - back) * BLOCK
            c = start + cols
            m = rmask[:, None] & (c[None, :] < N)
            x = tl.load(x_ptr + xrow[:, None] + c[None, :].to(tl.int64) * sn, mask=m, other=0.0,
                        eviction_policy="evict_first").to(tl.float32)
            w = tl.load(w_ptr + c.to(tl.int64) * sw, mask=c < N, other=0.0).to(tl.float32)
            b = tl.load(b_ptr + c.to(tl.int64) * sb, mask=c < N, other=0.0).to(tl.float32)
            # (x - shift) - mean as in pass 1 and the single-block path: x - (mean + shift) rounds mean + shift to
            # fp32 first, an ulp of 1e-3 for rows near 1e4 (fuzz round 4: 1.9e-2 against 7.9e-7 single-block).
            y = ((x - shift[:, None]) - mean[:, None]) * rstd[:, None] * w[None, :] + b[None, :]
            tl.store(out_ptr + orow[:, None] + c[None, :], y.to(out_ptr.dtype.element_ty), mask=m)
    else:
        # The row held in registers: two-pass mean and variance.
        m = rmask[:, None] & (cols[None, :] < N)
        x = tl.load(x_ptr + xrow[:, None] + cols[None, :].to(tl.int64) * sn, mask=m, other=0.0).to(tl.float32)
        x = tl.where(m, x - shift[:, None], 0.0)
        mean = tl.sum(x, axis=1) / N
        d = tl.where(m, x - mean[:, None], 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=1) / N + eps)
        if STATS:
            tl.store(mean_ptr + rows, mean + shift, mask=rmask)
            tl.store(rstd_ptr + rows, rstd, mask=rmask)
        w = tl.load(w_ptr + cols.to(tl.int64) * sw, mask=cols < N, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols.to(tl.int64) * sb, mask=cols < N, other=0.0).to(tl.float32)
        y = d * rstd[:, None] * w[None, :] + b[None, :]
        tl.store(out_ptr + orow[:, None] + cols[None, :], y.to(out_ptr.dtype.element_ty), mask=m)


def layernorm(x: torch.Tensor, weight: torch.Tensor | None, bias: torch.Tensor | None, eps: float = 1e-5,
              out: torch.Tensor | None = None, config: dict[str, Any] | None = None) -> torch.Tensor:
    """x of any shape (..., N) and layout; weight and bias (N,) of any stride, in x's dtype or fp32, or None (no scale /
    no shift, as F.layer_norm allows); out in x's dtype. `config` ({"BLOCK", "ROWS", "num_warps", "WINDOW", "TABLE"}) overrides the
    policy's launch config (tests). Parameters of shape S with two or more dims normalise x's last len(S) dims
    together (F.layer_norm's normalized_shape S; rows.trailing)."""
    x2, out2, (weight, bias), shape = trailing("layernorm", x, out, weight, bias)
    y = _forward(x2, param_or(x2, weight, 1.0), param_or(x2, bias, 0.0), eps, out2, config)[0]
    return y if shape is None else out if out is not None else y.view(shape)


def _forward(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float, out: torch.Tensor | None = None,
             config: dict[str, Any] | None = None, stats: bool = False
             ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
    """(y, per-row fp32 mean and rstd of shape (M,) when `stats`, else None, None)."""
    eps = check_eps("layernorm", eps)
    key = call_plans.signature(x, weight, bias) if out is None and config is None else None
    if key is not None:
        key = (*key, stats)
        plan = _PLANS.get(key)
        if plan is not None:  # this signature was checked and planned before (call_plans.py)
            o = plan.out(x)
            mean, rstd = _stats(plan.M, x) if stats else (None, None)
            plan.site(x, weight, bias, o, eps, mean, rstd)
            return o, mean, rstd
    # the row split only up to the rows it was timed on (policy_rows.ROW_SPLIT_LAYERNORM_MAX_ROWS)
    L = prepare("layernorm", x, {"weight": weight, "bias": bias}, out, config, policy.ROW_SPLIT_LAYERNORM_MAX_ROWS)
    mean, rstd = _stats(L.M, x) if stats else (None, None)
    if L.empty and mean is not None and rstd is not None:  # rows of width 0 read mean 0, rstd 1/sqrt(eps)
        mean.zero_()
        rstd.fill_(float(1.0 / eps ** 0.5))
    if not L.empty and L.split > 1:  # few wide rows: each over several programs (rows_split.py)
        rows_split.layernorm_split(x, weight, bias, eps, L, mean, rstd)
    elif not L.empty:
        plain = Site(layernorm_kernel, L.grid, (DYN,) * 4 + (*L.args, weight.stride(0), bias.stride(0), DYN),
                     {**L.cfg, "DIV": L.div, "mean_ptr": DYN, "rstd_ptr": DYN, "STATS": stats})
        # an odd width: rows read in 16-byte windows (rows_window.py)
        site = rows_window.window_site("layernorm", plain, L, (weight, bias), stats)
        call_plans.run(_PLANS, key if L.plannable else None, site, (x, weight, bias, L.out, eps, mean, rstd),
                       x.is_contiguous(), L.M)
    return L.out, mean, rstd


def _stats(M: int, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The per-row fp32 mean and rstd buffers, uninitialised: the kernel writes every row of a non-empty input (an
    empty one is filled by _forward). Two fills here were two launches a training forward (session 31)."""
    return (torch.empty(M, dtype=torch.float32, device=x.device), torch.empty(M, dtype=torch.float32, device=x.device))


_PLANS = call_plans.table()


# ---- backward -----------------------------------------------------------------------------------------------------
# x̂ = (x - mean)·r, y = x̂·w + b: ∂x = r·(w·dy - mean(w·dy) - x̂·mean(w·dy·x̂)), ∂w = Σ_rows dy·x̂, ∂b = Σ_rows dy
# (row_grads.py: fp32 partial sums per program, summed by row_grads.param_sums — no atomics). mean and r saved by the forward.

@triton.jit
def _layernorm_backward_kernel(dy_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, dx_ptr, dwp_ptr, dbp_ptr, M, N, sw, RPP,
                               BLOCK: tl.constexpr, LOOPED: tl.constexpr, ROWS: tl.constexpr = 1):
    pid = tl.program_id(0)
    first = pid * RPP
    n_rows = tl.minimum(M - first, RPP)
    cols = tl.arange(0, BLOCK)
    wpart = dwp_ptr + pid.to(tl.int64) * N  # this program's rows of fp32 ∂w and ∂b partial sums
    bpart = dbp_ptr + pid.to(tl.int64) * N
    if LOOPED:
        for i in range(0, n_rows):
            base = (first + i).to(tl.int64) * N
            mu = tl.load(mean_ptr + first + i)
            r = tl.load(rstd_ptr + first + i)
            a1 = tl.zeros((BLOCK,), dtype=tl.float32)
            a2 = tl.zeros((BLOCK,), dtype=tl.float32)
            for start in range(0, N, BLOCK):
                c = start + cols
                m = c < N
                dy = tl.load(dy_ptr + base + c, mask=m, other=0.0).to(tl.float32)
                x = tl.load(x_ptr + base + c, mask=m, other=0.0).to(tl.float32)
                w = tl.load(w_ptr + c.to(tl.int64) * sw, mask=m, other=0.0).to(tl.float32)
                xh = tl.where(m, (x - mu) * r, 0.0)
                a1 += w * dy * xh
                a2 += w * dy
            c1 = tl.sum(a1, axis=0) / N
            c2 = tl.sum(a2, axis=0) / N
            for start in range(0, N, BLOCK):
                c = start + cols
                m = c < N
                dy = tl.load(dy_ptr + base + c, mask=m, other=0.0).to(tl.float32)
                x = tl.load(x_ptr + base + c, mask=m, other=0.0).to(tl.float32)
                w = tl.load(w_ptr + c.to(tl.int64) * sw, mask=m, other=0.0).to(tl.float32)
                xh = (x - mu) * r
                tl.store(dx_ptr + base + c, (r * (w * dy - c2 - xh * c1)).to(dx_ptr.dtype.element_ty), mask=m)
                tl.store(wpart + c, tl.load(wpart + c, mask=m, other=0.0) + dy * xh, mask=m)
                tl.store(bpart + c, tl.load(bpart + c, mask=m, other=0.0) + dy, mask=m)
    elif ROWS == 1:
        m = cols < N
        w = tl.load(w_ptr + cols.to(tl.int64) * sw, mask=m, other=0.0).to(tl.float32)
        dw = tl.zeros((BLOCK,), dtype=tl.float32)
        db = tl.zeros((BLOCK,), dtype=tl.float32)
        for i in range(0, n_rows):
            base = (first + i).to(tl.int64) * N
            mu = tl.load(mean_ptr + first + i)
            r = tl.load(rstd_ptr + first + i)
            dy = tl.load(dy_ptr + base + cols, mask=m, other=0.0).to(tl.float32)
            x = tl.load(x_ptr + base + cols, mask=m, other=0.0).to(tl.float32)
            xh = tl.where(m, (x - mu) * r, 0.0)
            c1 = tl.sum(w * dy * xh, axis=0) / N
            c2 = tl.sum(w * dy, axis=0) / N
            tl.store(dx_ptr + base + cols, (r * (w * dy - c2 - xh * c1)).to(dx_ptr.dtype.element_ty), mask=m)
            dw += dy * xh
            db += dy
        tl.store(wpart + cols, dw, mask=m)
        tl.store(bpart + cols, db, mask=m)
    else:
        # Narrow rows, ROWS at a time (row_grads.py), as RMSNorm's backward.
        m = cols < N
        w = tl.load(w_ptr + cols.to(tl.int64) * sw, mask=m, other=0.0).to(tl.float32)[None, :]
        dw = tl.zeros((ROWS, BLOCK), dtype=tl.float32)
        db = tl.zeros((ROWS, BLOCK), dtype=tl.float32)
        for i in range(0, n_rows, ROWS):
            rows = i + tl.arange(0, ROWS)
            rm = rows < n_rows
            off = (first + rows).to(tl.int64)[:, None] * N + cols[None, :]
            mm = rm[:, None] & m[None, :]
            mu = tl.load(mean_ptr + first + rows, mask=rm, other=0.0)[:, None]
            r = tl.load(rstd_ptr + first + rows, mask=rm, other=0.0)[:, None]
            dy = tl.load(dy_ptr + off, mask=mm, other=0.0).to(tl.float32)
            x = tl.load(x_ptr + off, mask=mm, other=0.0).to(tl.float32)
            xh = tl.where(mm, (x - mu) * r, 0.0)
            c1 = tl.sum(w * dy * xh, axis=1)[:, None] / N
            c2 = tl.sum(w * dy, axis=1)[:, None] / N
            tl.store(dx_ptr + off, (r * (w * dy - c2 - xh * c1)).to(dx_ptr.dtype.element_ty), mask=mm)
            dw += dy * xh
            db += dy
        tl.store(wpart + cols, tl.sum(dw, axis=0), mask=m)
        tl.store(bpart + cols, tl.sum(db, axis=0), mask=m)


def layernorm_backward(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, mean: torch.Tensor,
                       rstd: torch.Tensor, config: dict[str, Any] | None = None
                       ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(∂x in x's dtype and shape, ∂weight, ∂bias in their dtypes) from dy (x's shape), the forward's inputs (any
    layout, as the forward takes) and its per-row mean and rstd."""
    N = x.shape[-1]
    key = row_grads.plan_key("layernorm", config, dy, x, weight, bias, mean, rstd)
    plan = row_grads.planned(key)
    if plan is not None:  # this signature was checked and planned before
        return _run_backward(plan, dy, x, row_grads.rows2d(x, N), weight, bias, mean, rstd)
    if dy.shape != x.shape:
        raise ValueError(f"layernorm backward: dy {tuple(dy.shape)} must have x's shape {tuple(x.shape)}")
    x2 = row_grads.rows2d(x, N)
    M = x2.shape[0]
    for what, t in (("mean", mean), ("rstd", rstd)):
        if t.shape != (M,) or t.dtype != torch.float32:
            raise ValueError(f"layernorm backward: {what} must be fp32 of shape ({M},), got {t.dtype} {tuple(t.shape)}")
    if M == 0 or N == 0:
        return torch.empty_like(x), torch.zeros_like(weight), torch.zeros_like(bias)
    cfg = row_grads.config(x2, N, config, M)
    split = row_grads.split_parts(x2, N, M, cfg, policy.ROW_SPLIT_LAYERNORM_MAX_ROWS) if not config else 1
    if split > 1:  # few wide rows: each over `split` programs (row_grads_split.py)
        dx = torch.empty_like(x2)
        wpart, bpart = torch.empty((2, M, N), dtype=torch.float32, device=x.device)
        row_grads_split.split_backward(2, row_grads.rows2d(dy.to(x.dtype), N), x2, weight, mean, rstd, dx, wpart,
                                       bpart, split, cfg)
        dw, db = row_grads.param_sums((wpart, bpart), (weight.dtype, bias.dtype))
        return dx.reshape(x.shape), dw, db
    # wide rows: the row sums, then column tiles (row_grads_cols.py)
    if row_grads_cols.takes(cfg, M, N, 2, row_grads.target_of(x2).backend) and not config:
        dx = torch.empty_like(x2)
        parts = row_grads_cols.cols_backward(2, row_grads.rows2d(dy.to(x.dtype), N), x2, weight, mean, rstd, dx, cfg,
                                             row_grads.units_of(x2))
        dw, db = row_grads.param_sums(parts, (weight.dtype, bias.dtype))
        return dx.reshape(x.shape), dw, db
    grid, rpp = row_grads.launch_shape(M, row_grads.programs(x2, M, cfg), cfg["ROWS"])
    site = Site(_layernorm_backward_kernel, grid, (DYN,) * 8 + (M, N, weight.stride(0), rpp),
                row_grads.kernel_cfg(cfg, N, x2, config))
    return _run_backward(row_grads.plan(key, cfg, grid[0], site, x2, N, 2), dy, x, x2, weight, bias, mean, rstd)


def _run_backward(plan: row_grads.GradPlan, dy: torch.Tensor, x: torch.Tensor, x2: torch.Tensor, weight: torch.Tensor,
                  bias: torch.Tensor, mean: torch.Tensor, rstd: torch.Tensor
                  ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The plan's two launches: the kernel into ∂x and the partial rows, then the parameter sums (x2: x's rows)."""
    N = x2.shape[1]
    dy2 = row_grads.rows2d(dy if dy.dtype is x.dtype else dy.to(x.dtype), N)
    dx = torch.empty_like(x2)
    wpart, bpart = plan.parts(2, N, x)
    plan.kernel(dy2, x2, weight, mean, rstd, dx, wpart, bpart)
    dw, db = torch.empty(N, dtype=weight.dtype, device=x.device), torch.empty(N, dtype=bias.dtype, device=x.device)
    assert plan.sums is not None
    plan.sums(wpart, bpart, dw, db)
    return dx if x.dim() == 2 else dx.reshape(x.shape), dw, db


class LayerNormFunction(torch.autograd.Function):
    """LayerNormFunction.apply(x, weight, bias, eps) -> y, with the Triton backward (eager autograd)."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
        y, mean, rstd = _forward(x, weight, bias, eps, stats=True)
        ctx.save_for_backward(x, weight, bias, mean, rstd)
        return y

    @staticmethod
    @first_order_only  # its kernels record no graph: a second order must fail, not drop terms
    def backward(ctx: Any, dy: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        x, weight, bias, mean, rstd = ctx.saved_tensors
        return (*layernorm_backward(dy, x, weight, bias, mean, rstd), None)


# ---- custom ops: opaque to torch.compile (fake shapes, autograd through the backward op): no graph break ----------

def _rows(x: torch.Tensor) -> Any:
    return math.prod(x.shape[:-1])  # symbolic under torch.compile: no int()


@torch.library.custom_op("rocm_triton_doctor::layernorm", mutates_args=())
def _layernorm_op(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float
                  ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    y, mean, rstd = _forward(x, weight, bias, eps, stats=True)
    assert mean is not None and rstd is not None
    return y, mean, rstd


@_layernorm_op.register_fake
def _layernorm_fake(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    M = _rows(x)
    return x.new_empty(x.shape), x.new_empty((M,), dtype=torch.float32), x.new_empty((M,), dtype=torch.float32)


@torch.library.custom_op("rocm_triton_doctor::layernorm_backward", mutates_args=())
def _layernorm_backward_op(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
                           mean: torch.Tensor, rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return layernorm_backward(dy, x, weight, bias, mean, rstd)


@_layernorm_backward_op.register_fake
def _layernorm_backward_fake(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
                             mean: torch.Tensor, rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return x.new_empty(x.shape), weight.new_empty(weight.shape), bias.new_empty(bias.shape)


def _layernorm_setup(ctx: Any, inputs: tuple[Any, ...], output: tuple[torch.Tensor, ...]) -> None:
    ctx.save_for_backward(inputs[0], inputs[1], inputs[2], output[1], output[2])


def _layernorm_autograd(ctx: Any, dy: torch.Tensor, *_stats: Any) -> tuple[torch.Tensor | None, ...]:
    x, weight, bias, mean, rstd = ctx.saved_tensors
    dx, dw, db = _layernorm_backward_op(dy, x, weight, bias, mean, rstd)
    return dx, dw, db, None


_layernorm_op.register_autograd(_layernorm_autograd, setup_context=_layernorm_setup)


def layernorm_custom_op(x: torch.Tensor, weight: torch.Tensor | None, bias: torch.Tensor | None,
                        eps: float = 1e-5) -> torch.Tensor:
    """F.layer_norm(x, (N,), weight, bias, eps) with Triton forward and backward, through the custom op (None
    parameters: no scale / no shift; their stand-ins require no gradient)."""
    x, _, (weight, bias), shape = trailing("layernorm", x, None, weight, bias)
    weight, bias = param_or(x, weight, 1.0), param_or(x, bias, 0.0)
    refuse_forward_ad("layernorm", x, weight, bias)
    y = _layernorm_op(x, weight, bias, check_eps("layernorm", eps))[0]
    return y if shape is None else y.view(shape)


def layernorm_autograd(x: torch.Tensor, weight: torch.Tensor | None, bias: torch.Tensor | None,
                       eps: float = 1e-5) -> torch.Tensor:
    """F.layer_norm(x, (N,), weight, bias, eps) with Triton forward and backward.
    Eager: LayerNormFunction.apply (a torch.autograd.Function: no custom-op dispatch, ~30 us of host time less a call on an
    H100 host, issue #16 item 4); under torch.compile: the custom op rocm_triton_doctor::layernorm (opaque to the compiler, no graph
    break). Both run the same Triton forward and backward. Parameters of two or more dims: as layernorm()."""
    x, _, (weight, bias), shape = trailing("layernorm", x, None, weight, bias)
    weight, bias = param_or(x, weight, 1.0), param_or(x, bias, 0.0)
    if torch.compiler.is_compiling():
        y = _layernorm_op(x, weight, bias, eps)[0]
    else:
        y = LayerNormFunction.apply(x, weight, bias, eps)
    return y if shape is None else y.view(shape)  # type: ignore[no-any-return]


autograd_op = layernorm_autograd  # an op with a backward (the contract of smoke/model_forms.py)
custom_op_form = layernorm_custom_op  # the form torch.compile sees, callable eagerly (tests)


# The smoke cases and the compile-only audit's specs live in layernorm_cases.py (imported last: they use this module).
from rocm_triton_doctor.kernels.layernorm_cases import aot_specs, cases, make_case  # noqa: E402,F401 - registry hooks

KERNEL = KernelSpec("layernorm", "memory", cases, aot_specs, perf_targets=("mem-copy", "mem-compile"))
