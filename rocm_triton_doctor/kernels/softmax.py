"""Row softmax: y = exp(x - max) / sum(exp(x - max)), rows of any width (looped online max/sum past one block),
several narrow rows per program, fp32 math. Bytes 2·e·M·N, ~5·M·N FLOPs."""

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels import policy
from rocm_triton_doctor.kernels.base import AotSpec, Case, Inputs, KernelSpec, randn
from rocm_triton_doctor.kernels.rows import prepare, row_aot, row_offsets


@triton.jit
def _pad_rows(x, rmask, ROWS: tl.constexpr):
    """fp32, with the rows past M (only when a program packs several) set to 0 instead of all -inf: their results are
    never stored, but -inf - -inf would compute NaNs (and warn in the interpreter)."""
    x = x.to(tl.float32)
    if ROWS > 1:
        x = tl.where(rmask[:, None], x, 0.0)
    return x


@triton.jit
def softmax_kernel(x_ptr, out_ptr, M, N, D1, s0, s1, sn, BLOCK: tl.constexpr, ROWS: tl.constexpr,
                   LOOPED: tl.constexpr):
    rows, xrow, rmask = row_offsets(tl.program_id(0), M, D1, s0, s1, ROWS)
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
            x = _pad_rows(tl.load(x_ptr + xrow[:, None] + c[None, :].to(tl.int64) * sn, mask=m, other=-float("inf")),
                          rmask, ROWS)
            new = tl.maximum(mx, tl.max(x, axis=1))
            shift = tl.where(new == -float("inf"), 0.0, new)
            sm = sm * tl.exp(mx - shift) + tl.sum(tl.exp(x - shift[:, None]), axis=1)
            mx = new
        shift = tl.where(mx == -float("inf"), 0.0, mx)
        for start in range(0, N, BLOCK):
            c = start + cols
            m = rmask[:, None] & (c[None, :] < N)
            x = _pad_rows(tl.load(x_ptr + xrow[:, None] + c[None, :].to(tl.int64) * sn, mask=m, other=-float("inf")),
                          rmask, ROWS)
            y = tl.exp(x - shift[:, None]) / sm[:, None]
            tl.store(out_ptr + orow[:, None] + c[None, :], y.to(out_ptr.dtype.element_ty), mask=m)
    else:
        m = rmask[:, None] & (cols[None, :] < N)
        x = _pad_rows(tl.load(x_ptr + xrow[:, None] + cols[None, :].to(tl.int64) * sn, mask=m, other=-float("inf")),
                      rmask, ROWS)
        x = x - tl.max(x, axis=1)[:, None]
        e = tl.exp(x)
        tl.store(out_ptr + orow[:, None] + cols[None, :], (e / tl.sum(e, axis=1)[:, None]).to(out_ptr.dtype.element_ty),
                 mask=m)


def softmax(x: torch.Tensor, out: torch.Tensor | None = None, config: dict[str, Any] | None = None) -> torch.Tensor:
    """Softmax over the last dimension of x (any shape and layout); out in x's dtype. `config` ({"BLOCK", "ROWS",
    "num_warps"}) overrides the policy's launch config (tests)."""
    L = prepare("softmax", x, {}, out, config)
    if not L.empty:
        softmax_kernel[L.grid](x, L.out, L.M, L.N, L.D1, L.s0, L.s1, L.sn, **L.cfg)
    return L.out


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
    return row_aot("softmax", softmax_kernel, ("x_ptr", "out_ptr"), {}, {}, target)


KERNEL = KernelSpec("softmax", "memory", cases, aot_specs, perf_targets=("mem-copy", "mem-compile"))
