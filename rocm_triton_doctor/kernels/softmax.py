"""Row softmax: y = exp(x - max) / sum(exp(x - max)), rows of any width (looped online max/sum past one block),
several narrow rows per program, fp32 math. Bytes 2·e·M·N, ~5·M·N FLOPs."""

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels import call_plans, policy, row_grads, row_grads_split, rows_split, rows_window
from rocm_triton_doctor.kernels.launch_site import DYN, Site
from rocm_triton_doctor.kernels.base import AotSpec, Case, Inputs, KernelSpec, randn, first_order_only, refuse_forward_ad
from rocm_triton_doctor.kernels.rows import prepare, row_aot, row_offsets


@triton.jit
def _pad_rows(x, rmask, ROWS: tl.constexpr):
    """fp32, with the rows past M (only when a program packs several) set to 0 instead of all -inf: their results are
    never stored, but -inf - -inf would compute NaNs (and warn in the interpreter)."""
    x = x.to(tl.float32)
    if ROWS > 1:
        x = tl.where(rmask[:, None], x, 0.0)
    return x


LOG2E: tl.constexpr = tl.constexpr(1.4426950408889634)  # exp(x) == exp2(x * log2(e))


@triton.jit
def softmax_kernel(x_ptr, out_ptr, M, N, D1, D2, s0, s1, s2, sn, BLOCK: tl.constexpr, ROWS: tl.constexpr,
                   LOOPED: tl.constexpr, DIV: tl.constexpr = 1):
    N = N * DIV  # N, s0 and s1 arrive divided by DIV (rows.vector_div): known multiples for vector loads
    rows, xrow, rmask = row_offsets(tl.program_id(0), M, D1, D2, s0, s1, s2, ROWS, DIV)
    orow = rows * N  # the output is contiguous
    cols = tl.arange(0, BLOCK)
    if LOOPED:
        # Pass 1: online max and sum (the sum rescaled whenever the max grows); pass 2: normalise and store. A row
        # whose chunks so far are all -inf keeps max -inf: shift by 0 there, so exp gives 0 and not NaN.
        mx = tl.full((ROWS,), float("-inf"), dtype=tl.float32)
        sm = tl.zeros((ROWS,), dtype=tl.float32)
        for start in range(0, N, BLOCK):
            c = start + cols
            m = rmask[:, None] & (c[None, :] < N)
            x = _pad_rows(tl.load(x_ptr + xrow[:, None] + c[None, :].to(tl.int64) * sn, mask=m, other=-float("inf"),
                                  eviction_policy="evict_last"),
                          rmask, ROWS)
            new = tl.maximum(mx, tl.max(x, axis=1))
            shift = tl.where(new == -float("inf"), 0.0, new)
            sm = sm * tl.exp2((mx - shift) * LOG2E) + tl.sum(tl.exp2((x - shift[:, None]) * LOG2E), axis=1)
            mx = new
        shift = tl.where(mx == -float("inf"), 0.0, mx)
        inv = 1.0 / sm
        for back in range(0, tl.cdiv(N, BLOCK)):  # chunks in reverse (rows.py: wide rows and L2)
            start = (tl.cdiv(N, BLOCK) - 1 - back) * BLOCK
            c = start + cols
            m = rmask[:, None] & (c[None, :] < N)
            x = _pad_rows(tl.load(x_ptr + xrow[:, None] + c[None, :].to(tl.int64) * sn, mask=m, other=-float("inf"),
                                  eviction_policy="evict_first"),
                          rmask, ROWS)
            y = tl.exp2((x - shift[:, None]) * LOG2E) * inv[:, None]
            tl.store(out_ptr + orow[:, None] + c[None, :], y.to(out_ptr.dtype.element_ty), mask=m)
    else:
        m = rmask[:, None] & (cols[None, :] < N)
        x = _pad_rows(tl.load(x_ptr + xrow[:, None] + cols[None, :].to(tl.int64) * sn, mask=m, other=-float("inf")),
                      rmask, ROWS)
        # exp2 of log2(e)-scaled values and one reciprocal per row instead of exp and a division per element: on an
        # H100 (graph replay, benchmarks/softmax_variants_probe.py, % of copy) bf16 1024x11008 79.5 -> 81.6 %,
        # 1024x32000 80.6 -> 86.4 %, 8192x11008 92.3 -> 94.0 %, 8192x5000 94.8 -> 96.0 %; within a few fp32 ulp.
        e = tl.exp2((x - tl.max(x, axis=1)[:, None]) * LOG2E)
        inv = 1.0 / tl.sum(e, axis=1)
        tl.store(out_ptr + orow[:, None] + cols[None, :], (e * inv[:, None]).to(out_ptr.dtype.element_ty), mask=m)


def softmax(x: torch.Tensor, out: torch.Tensor | None = None, config: dict[str, Any] | None = None,
            dim: int = -1) -> torch.Tensor:
    """Softmax over dimension `dim` of x (the last by default; any shape and layout); out in x's dtype. `config`
    ({"BLOCK", "ROWS", "num_warps", "SPLIT", "WINDOW"}) overrides the policy's launch config (tests). Another dim is read as
    the last of a transposed view (no copy): the result is that view of a fresh tensor (x's shape), so `out=` needs
    dim=-1."""
    if (d := _moved(x, dim)) is not None:
        if out is not None:
            raise ValueError(f"softmax: out= needs the softmax over the last dimension (dim=-1), got dim={dim}")
        return softmax(x.transpose(d, -1), None, config).transpose(d, -1)
    key = call_plans.signature(x) if out is None and config is None else None
    if key is not None:
        plan = _PLANS.get(key)
        if plan is not None:  # this signature was checked and planned before (call_plans.py)
            o = plan.out(x)
            plan.site(x, o)
            return o
    L = prepare("softmax", x, {}, out, config)
    if L.empty:
        return L.out
    if L.split > 1:  # few wide rows: each over several programs (rows_split.py)
        rows_split.softmax_split(x, L)
    else:
        plain = Site(softmax_kernel, L.grid, (DYN, DYN, *L.args), {**L.cfg, "DIV": L.div})
        # an odd width: rows read in 16-byte windows (rows_window.py)
        site = rows_window.window_site("softmax", plain, L)
        call_plans.run(_PLANS, key if L.plannable else None, site, (x, L.out), x.is_contiguous(), L.M)
    return L.out


_PLANS = call_plans.table()


def _moved(x: torch.Tensor, dim: int) -> int | None:
    """The dim of x (non-negative) a softmax over `dim` reads as the last of a transposed view, or None when that is
    the last already (or x is not a tensor: the launcher refuses it). A 0-dim x has the one dimension prepare()
    refuses."""
    if dim == -1 or not isinstance(x, torch.Tensor):
        return None
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError(f"softmax: dim must be an int, got {type(dim).__name__}")
    nd = max(1, x.dim())
    if not -nd <= dim < nd:
        raise ValueError(f"softmax: dim {dim} out of range for a {nd}-dim input")
    return None if dim % nd == x.dim() - 1 else dim % nd


# ---- backward -----------------------------------------------------------------------------------------------------
# y = softmax(x): ∂x = y·(dy - Σ(dy·y)) per row, from the saved output y (no statistics needed). No parameters, so
# no cross-row sums: on a GPU one program per row, or per ROWS narrow rows (row_grads.py), and a few wide rows split
# over several programs each (row_grads_split.py).

@triton.jit
def _softmax_backward_kernel(dy_ptr, y_ptr, dx_ptr, M, N, RPP, BLOCK: tl.constexpr, LOOPED: tl.constexpr,
                             ROWS: tl.constexpr = 1):
    pid = tl.program_id(0)
    first = pid * RPP
    n_rows = tl.minimum(M - first, RPP)
    cols = tl.arange(0, BLOCK)
    if not LOOPED and ROWS > 1:
        # Narrow rows, ROWS at a time (row_grads.py): one program a row of a few elements had run at 2-5 % of eager's
        # speed (fp32 47020472x2: 28.5 ms against 0.84; docs/performance.md, session 30).
        for i in range(0, n_rows, ROWS):
            rows = i + tl.arange(0, ROWS)
            off = (first + rows).to(tl.int64)[:, None] * N + cols[None, :]
            mm = (rows < n_rows)[:, None] & (cols < N)[None, :]
            dy = tl.load(dy_ptr + off, mask=mm, other=0.0).to(tl.float32)
            y = tl.load(y_ptr + off, mask=mm, other=0.0).to(tl.float32)
            dot = tl.sum(dy * y, axis=1)[:, None]
            tl.store(dx_ptr + off, (y * (dy - dot)).to(dx_ptr.dtype.element_ty), mask=mm)
    else:
        for i in range(0, n_rows):
            base = (first + i).to(tl.int64) * N
            if LOOPED:
                acc = tl.zeros((BLOCK,), dtype=tl.float32)
                for start in range(0, N, BLOCK):
                    c = start + cols
                    dy = tl.load(dy_ptr + base + c, mask=c < N, other=0.0).to(tl.float32)
                    y = tl.load(y_ptr + base + c, mask=c < N, other=0.0).to(tl.float32)
                    acc += dy * y
                dot = tl.sum(acc, axis=0)
                for start in range(0, N, BLOCK):
                    c = start + cols
                    dy = tl.load(dy_ptr + base + c, mask=c < N, other=0.0).to(tl.float32)
                    y = tl.load(y_ptr + base + c, mask=c < N, other=0.0).to(tl.float32)
                    tl.store(dx_ptr + base + c, (y * (dy - dot)).to(dx_ptr.dtype.element_ty), mask=c < N)
            else:
                dy = tl.load(dy_ptr + base + cols, mask=cols < N, other=0.0).to(tl.float32)
                y = tl.load(y_ptr + base + cols, mask=cols < N, other=0.0).to(tl.float32)
                dot = tl.sum(dy * y, axis=0)
                tl.store(dx_ptr + base + cols, (y * (dy - dot)).to(dx_ptr.dtype.element_ty), mask=cols < N)


def softmax_backward(dy: torch.Tensor, y: torch.Tensor, config: dict[str, Any] | None = None) -> torch.Tensor:
    """∂x (y's dtype and shape) from dy and the forward's output y (any layout: made contiguous)."""
    N = y.shape[-1] if y.dim() else 1
    key = row_grads.plan_key("softmax", config, dy, y)
    plan = row_grads.planned(key)
    if plan is not None:  # this signature was checked and planned before
        return _run_backward(plan, dy, y, row_grads.rows2d(y, N))
    if dy.shape != y.shape:
        raise ValueError(f"softmax backward: dy {tuple(dy.shape)} must have y's shape {tuple(y.shape)}")
    y2 = row_grads.rows2d(y, N)
    M = y2.shape[0]
    if M == 0 or N == 0:
        return torch.empty_like(y2).reshape(y.shape)
    cfg = row_grads.config(y2, N, config, M)
    split = row_grads.split_parts(y2, N, M, cfg) if not config else 1
    if split > 1:  # few wide rows: each over `split` programs (row_grads_split.py)
        dx = torch.empty_like(y2)
        row_grads_split.split_backward(0, row_grads.rows2d(dy.to(y.dtype), N), y2, None, None, None, dx, None, None,
                                       split, cfg)
        return dx.reshape(y.shape)
    rows = cfg["ROWS"]
    grid, rpp = row_grads.launch_shape(M, -(-M // rows) if y.device.type == "cuda" else row_grads.programs(y2, M, cfg),
                                       rows)
    site = Site(_softmax_backward_kernel, grid, (DYN,) * 3 + (M, N, rpp), cfg)
    return _run_backward(row_grads.plan(key, cfg, grid[0], site, y2, N, 0), dy, y, y2)


def _run_backward(plan: row_grads.GradPlan, dy: torch.Tensor, y: torch.Tensor, y2: torch.Tensor) -> torch.Tensor:
    """The plan's launch into ∂x (y2: y's rows)."""
    dx = torch.empty_like(y2)
    plan.kernel(row_grads.rows2d(dy if dy.dtype is y.dtype else dy.to(y.dtype), y2.shape[1]), y2, dx)
    return dx if y.dim() == 2 else dx.reshape(y.shape)


class SoftmaxFunction(torch.autograd.Function):
    """SoftmaxFunction.apply(x) -> softmax over the last dimension, with the Triton backward (eager autograd)."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        y = softmax(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    @first_order_only  # its kernels record no graph: a second order must fail, not drop terms
    def backward(ctx: Any, dy: torch.Tensor) -> torch.Tensor:
        (y,) = ctx.saved_tensors
        return softmax_backward(dy, y)


# ---- custom ops: opaque to torch.compile (fake shapes, autograd through the backward op): no graph break ----------

@torch.library.custom_op("rocm_triton_doctor::softmax", mutates_args=())
def _softmax_op(x: torch.Tensor) -> torch.Tensor:
    return softmax(x)


@_softmax_op.register_fake
def _softmax_fake(x: torch.Tensor) -> torch.Tensor:
    return x.new_empty(x.shape)


@torch.library.custom_op("rocm_triton_doctor::softmax_backward", mutates_args=())
def _softmax_backward_op(dy: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return softmax_backward(dy, y)


@_softmax_backward_op.register_fake
def _softmax_backward_fake(dy: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return y.new_empty(y.shape)


def _softmax_setup(ctx: Any, inputs: tuple[Any, ...], output: torch.Tensor) -> None:
    ctx.save_for_backward(output)


def _softmax_autograd(ctx: Any, dy: torch.Tensor) -> torch.Tensor:
    (y,) = ctx.saved_tensors
    return _softmax_backward_op(dy, y)


_softmax_op.register_autograd(_softmax_autograd, setup_context=_softmax_setup)


def softmax_custom_op(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """torch.softmax(x, dim) with Triton forward and backward, through the custom op (another dim than the last as a
    transposed view, which autograd follows)."""
    refuse_forward_ad("softmax", x)
    if (d := _moved(x, dim)) is not None:
        return _softmax_op(x.transpose(d, -1)).transpose(d, -1)  # type: ignore[no-any-return]
    return _softmax_op(x)  # type: ignore[no-any-return]


def softmax_autograd(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """torch.softmax(x, dim) with Triton forward and backward (another dim than the last as a transposed view, which
    autograd follows).
    Eager: SoftmaxFunction.apply (a torch.autograd.Function: no custom-op dispatch, ~30 us of host time less a call on an
    H100 host, issue #16 item 4); under torch.compile: the custom op rocm_triton_doctor::softmax (opaque to the compiler, no graph
    break). Both run the same Triton forward and backward."""
    if (d := _moved(x, dim)) is not None:
        return softmax_autograd(x.transpose(d, -1)).transpose(d, -1)
    if torch.compiler.is_compiling():
        return _softmax_op(x)  # type: ignore[no-any-return]
    return SoftmaxFunction.apply(x)  # type: ignore[no-any-return]


autograd_op = softmax_autograd  # an op with a backward (the contract of smoke/model_forms.py)
custom_op_form = softmax_custom_op  # the form torch.compile sees, callable eagerly (tests)


def make_case(M: int, N: int, dtype: torch.dtype, strided: bool = False) -> Case:
    def setup(dev: torch.device, gen: torch.Generator) -> Inputs:
        x = randn((M, N + 8 if strided else N), dtype, dev, gen, scale=4.0)
        return {"x": x[:, :N] if strided else x}

    elem = torch.empty((), dtype=dtype).element_size()
    return Case("softmax", f"{str(dtype).replace('torch.', '')} {M}x{N}" + (" row-strided" if strided else ""), dtype,
                setup, run=lambda x, out: softmax(x["x"], out=out),
                reference=lambda x: torch.softmax(x["x"].double(), dim=-1),
                eager=lambda x: torch.softmax(x["x"], dim=-1), flops=5.0 * M * N, bytes=float(2 * elem * M * N),
                out_shape=lambda x: (M, N))


def cases(preset: str, target: policy.Target) -> list[Case]:
    if target.interpreter:
        return [make_case(9, 1000, torch.float32), make_case(5, 130, torch.float16, strided=True),
                make_case(4, 700, torch.bfloat16)]
    if preset == "sweep":  # the grid lives in smoke/sweep.py, shared by the kernels of this class
        from rocm_triton_doctor.smoke import sweep as grid

        return grid.row_cases(make_case)
    if preset == "seed":
        return []
    if preset == "bench":
        return [make_case(32768, 8192, dt) for dt in (torch.float32, torch.bfloat16)]
    # The last: LLM vocabulary rows (Qwen's 152064) in fp32, looped chunks (refused before the loop).
    quick = [make_case(8192, 4096, torch.float16), make_case(4097, 1000, torch.float32), make_case(64, 152064, torch.float32)]
    if preset == "quick":
        return quick
    return quick + [make_case(32768, 8192, dt) for dt in (torch.float32, torch.bfloat16)]


def aot_specs(target: policy.Target) -> list[AotSpec]:
    return row_aot("softmax", softmax_kernel, ("x_ptr", "out_ptr"), {}, {}, target) + row_grads.grad_aot(
        "softmax", _softmax_backward_kernel, {"dy_ptr": "x", "y_ptr": "x", "dx_ptr": "x"}, {}, target) + \
        rows_split.split_aot("softmax", target) + rows_window.window_aot("softmax", target) + \
        row_grads_split.split_aot("softmax", 0, target)


KERNEL = KernelSpec("softmax", "memory", cases, aot_specs, perf_targets=("mem-copy", "mem-compile"))
