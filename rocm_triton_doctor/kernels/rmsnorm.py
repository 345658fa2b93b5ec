"""RMSNorm: y = x / sqrt(mean(x²) + eps) · w, per row (Llama-style). fp32 statistics, one read and one write per element:
bytes e·(2·M·N + N), ~4·M·N FLOPs; memory-bound. Eager torch needs several kernels (pow, mean, rsqrt, two muls)."""

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels import policy
from rocm_triton_doctor.kernels.base import AotSpec, Case, Inputs, KernelSpec, check_eps, randn
from rocm_triton_doctor.kernels.rows import prepare, row_aot, row_offsets


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, out_ptr, M, N, D1, s0, s1, sn, sw, eps, BLOCK: tl.constexpr, ROWS: tl.constexpr,
                   LOOPED: tl.constexpr):
    rows, xrow, rmask = row_offsets(tl.program_id(0), M, D1, s0, s1, ROWS)
    orow = rows * N  # the output is contiguous
    cols = tl.arange(0, BLOCK)
    if LOOPED:
        # Pass 1: the sum of squares chunk by chunk; pass 2: normalise and store (x is read twice).
        acc = tl.zeros((ROWS, BLOCK), dtype=tl.float32)
        for start in range(0, N, BLOCK):
            c = start + cols
            m = rmask[:, None] & (c[None, :] < N)
            x = tl.load(x_ptr + xrow[:, None] + c[None, :].to(tl.int64) * sn, mask=m, other=0.0).to(tl.float32)
            acc += x * x
        rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=1) / N + eps)
        for start in range(0, N, BLOCK):
            c = start + cols
            m = rmask[:, None] & (c[None, :] < N)
            x = tl.load(x_ptr + xrow[:, None] + c[None, :].to(tl.int64) * sn, mask=m, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + c.to(tl.int64) * sw, mask=c < N, other=0.0).to(tl.float32)
            tl.store(out_ptr + orow[:, None] + c[None, :], (x * rstd[:, None] * w[None, :]).to(out_ptr.dtype.element_ty),
                     mask=m)
    else:
        m = rmask[:, None] & (cols[None, :] < N)
        x = tl.load(x_ptr + xrow[:, None] + cols[None, :].to(tl.int64) * sn, mask=m, other=0.0).to(tl.float32)
        rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / N + eps)
        w = tl.load(w_ptr + cols.to(tl.int64) * sw, mask=cols < N, other=0.0).to(tl.float32)
        tl.store(out_ptr + orow[:, None] + cols[None, :], (x * rstd[:, None] * w[None, :]).to(out_ptr.dtype.element_ty),
                 mask=m)


def rmsnorm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6, out: torch.Tensor | None = None,
            config: dict[str, Any] | None = None) -> torch.Tensor:
    """x of any shape (..., N) and layout; weight (N,) of any stride, in x's dtype or fp32; out in x's dtype.
    `config` ({"BLOCK", "ROWS", "num_warps"}) overrides the policy's launch config (tests)."""
    eps = check_eps("rmsnorm", eps)
    L = prepare("rmsnorm", x, {"weight": weight}, out, config)
    if not L.empty:
        rmsnorm_kernel[L.grid](x, weight, L.out, L.M, L.N, L.D1, L.s0, L.s1, L.sn, weight.stride(0), eps, **L.cfg)
    return L.out


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
    return row_aot("rmsnorm", rmsnorm_kernel, ("x_ptr", "w_ptr", "out_ptr"), {"eps": "fp32"}, {"sw": 1}, target)


KERNEL = KernelSpec("rmsnorm", "memory", cases, aot_specs, perf_targets=("mem-copy", "mem-compile", "mem-eager"))
