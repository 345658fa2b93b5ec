"""LayerNorm: y = (x - mean) / sqrt(var + eps) · w + b, per row; fp32 statistics (two-pass over the row held in
registers, or merged chunk statistics for rows too wide for one block). Bytes e·(2·M·N + 2·N), ~8·M·N FLOPs; memory-bound."""

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels import policy
from rocm_triton_doctor.kernels.base import AotSpec, Case, Inputs, KernelSpec, check_eps, randn
from rocm_triton_doctor.kernels.rows import prepare, row_aot, row_offsets


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, M, N, D1, s0, s1, sn, sw, sb, eps, BLOCK: tl.constexpr,
                     ROWS: tl.constexpr, LOOPED: tl.constexpr):
    rows, xrow, rmask = row_offsets(tl.program_id(0), M, D1, s0, s1, ROWS)
    orow = rows * N  # the output is contiguous
    cols = tl.arange(0, BLOCK)
    # Statistics of x - (the row's first element): rows like 1000 + 0.01·randn keep their digits in fp32 sums
    # (kernel-edge-cases.md #25; without the shift a looped fp32 row of 70000 was 7x eager torch's error).
    shift = tl.load(x_ptr + xrow, mask=rmask, other=0.0).to(tl.float32)
    if LOOPED:
        # Pass 1: mean and sum of squared deviations chunk by chunk, each chunk's own (mean, M2) merged into the
        # running ones (Chan et al.'s parallel update: no E[x²] - E[x]² cancellation); pass 2: normalise and store.
        mean = tl.zeros((ROWS,), dtype=tl.float32)
        m2 = tl.zeros((ROWS,), dtype=tl.float32)
        for start in range(0, N, BLOCK):
            c = start + cols
            m = rmask[:, None] & (c[None, :] < N)
            x = tl.load(x_ptr + xrow[:, None] + c[None, :].to(tl.int64) * sn, mask=m, other=0.0).to(tl.float32)
            x = tl.where(m, x - shift[:, None], 0.0)
            nb = tl.minimum(N - start, BLOCK).to(tl.float32)
            bmean = tl.sum(x, axis=1) / nb
            d = tl.where(m, x - bmean[:, None], 0.0)
            seen = start * 1.0
            total = seen + nb
            delta = bmean - mean
            mean = mean + delta * (nb / total)
            m2 = m2 + tl.sum(d * d, axis=1) + delta * delta * (seen * nb / total)
        rstd = 1.0 / tl.sqrt(m2 / N + eps)
        mean = mean + shift
        for start in range(0, N, BLOCK):
            c = start + cols
            m = rmask[:, None] & (c[None, :] < N)
            x = tl.load(x_ptr + xrow[:, None] + c[None, :].to(tl.int64) * sn, mask=m, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + c.to(tl.int64) * sw, mask=c < N, other=0.0).to(tl.float32)
            b = tl.load(b_ptr + c.to(tl.int64) * sb, mask=c < N, other=0.0).to(tl.float32)
            y = (x - mean[:, None]) * rstd[:, None] * w[None, :] + b[None, :]
            tl.store(out_ptr + orow[:, None] + c[None, :], y.to(out_ptr.dtype.element_ty), mask=m)
    else:
        # The row held in registers: two-pass mean and variance.
        m = rmask[:, None] & (cols[None, :] < N)
        x = tl.load(x_ptr + xrow[:, None] + cols[None, :].to(tl.int64) * sn, mask=m, other=0.0).to(tl.float32)
        x = tl.where(m, x - shift[:, None], 0.0)
        mean = tl.sum(x, axis=1) / N
        d = tl.where(m, x - mean[:, None], 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=1) / N + eps)
        w = tl.load(w_ptr + cols.to(tl.int64) * sw, mask=cols < N, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols.to(tl.int64) * sb, mask=cols < N, other=0.0).to(tl.float32)
        y = d * rstd[:, None] * w[None, :] + b[None, :]
        tl.store(out_ptr + orow[:, None] + cols[None, :], y.to(out_ptr.dtype.element_ty), mask=m)


def layernorm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5,
              out: torch.Tensor | None = None, config: dict[str, Any] | None = None) -> torch.Tensor:
    """x of any shape (..., N) and layout; weight and bias (N,) of any stride, in x's dtype or fp32; out in x's dtype.
    `config` ({"BLOCK", "ROWS", "num_warps"}) overrides the policy's launch config (tests)."""
    eps = check_eps("layernorm", eps)
    L = prepare("layernorm", x, {"weight": weight, "bias": bias}, out, config)
    if not L.empty:
        layernorm_kernel[L.grid](x, weight, bias, L.out, L.M, L.N, L.D1, L.s0, L.s1, L.sn, weight.stride(0),
                                 bias.stride(0), eps, **L.cfg)
    return L.out


def make_case(M: int, N: int, dtype: torch.dtype, strided: bool = False) -> Case:
    def setup(dev: torch.device, gen: torch.Generator) -> Inputs:
        x = randn((M, N + 8 if strided else N), dtype, dev, gen)
        return {"x": x[:, :N] if strided else x, "w": randn((N,), dtype, dev, gen), "b": randn((N,), dtype, dev, gen)}

    elem = torch.empty((), dtype=dtype).element_size()
    return Case("layernorm", f"{str(dtype).replace('torch.', '')} {M}x{N}" + (" row-strided" if strided else ""), dtype,
                setup, run=lambda x, out: layernorm(x["x"], x["w"], x["b"], out=out),
                reference=lambda x: torch.nn.functional.layer_norm(x["x"].double(), (N,), x["w"].double(),
                                                                   x["b"].double(), 1e-5),
                eager=lambda x: torch.nn.functional.layer_norm(x["x"], (N,), x["w"], x["b"], 1e-5),
                flops=8.0 * M * N, bytes=float(elem * (2 * M * N + 2 * N)), out_shape=lambda x: (M, N))


def cases(preset: str, target: policy.Target) -> list[Case]:
    if target.interpreter:
        return [make_case(9, 1000, torch.float32), make_case(6, 333, torch.float16, strided=True),
                make_case(4, 256, torch.bfloat16)]
    if preset == "sweep":  # the grid lives in smoke/sweep.py, shared by the kernels of this class
        from rocm_triton_doctor.smoke import sweep as grid

        return grid.row_cases(make_case)
    if preset == "seed":
        return []
    if preset == "bench":
        return [make_case(65536, 8192, dt) for dt in (torch.float32, torch.bfloat16)]
    quick = [make_case(8192, 4096, torch.bfloat16), make_case(4097, 1000, torch.float32)]
    if preset == "quick":
        return quick
    return quick + [make_case(65536, 8192, dt) for dt in (torch.float32, torch.bfloat16)]


def aot_specs(target: policy.Target) -> list[AotSpec]:
    return row_aot("layernorm", layernorm_kernel, ("x_ptr", "w_ptr", "b_ptr", "out_ptr"), {"eps": "fp32"},
                   {"sw": 1, "sb": 1}, target)


KERNEL = KernelSpec("layernorm", "memory", cases, aot_specs, perf_targets=("mem-copy", "mem-compile"))
