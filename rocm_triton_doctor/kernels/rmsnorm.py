"""RMSNorm: y = x / sqrt(mean(x²) + eps) · w, per row (Llama-style). fp32 statistics, one read and one write per element:
bytes e·(2·M·N + N), ~4·M·N FLOPs; memory-bound. Eager torch needs several kernels (pow, mean, rsqrt, two muls)."""

from __future__ import annotations


import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels import policy
from rocm_triton_doctor.kernels.base import AotSpec, Case, Inputs, KernelSpec, randn
from rocm_triton_doctor.kernels.rows import prepare


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, out_ptr, stride_x, stride_o, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * stride_o + cols, (x * rstd * w).to(out_ptr.dtype.element_ty), mask=mask)


def rmsnorm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6, out: torch.Tensor | None = None) -> torch.Tensor:
    if not eps > 0:
        raise ValueError("rmsnorm: eps must be > 0")
    rows, o, o2, cfg = prepare("rmsnorm", x, {"weight": weight}, out)
    N = rows.shape[1]
    rmsnorm_kernel[(rows.shape[0],)](rows, weight, o2, rows.stride(0), o2.stride(0), N, eps, **cfg)
    return o


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
                make_case(7, 512, torch.bfloat16)]
    seeds = [make_case(2048, 4096, torch.float16, seed_shape=True)]  # a small Llama layer: 2048 tokens, hidden 4096
    if preset == "seed":
        return seeds
    if preset == "bench":
        return [make_case(65536, 8192, dt) for dt in (torch.float32, torch.bfloat16)]
    if preset == "quick":
        return seeds + [make_case(8192, 4096, torch.bfloat16), make_case(4097, 1000, torch.float32, strided=True)]
    return seeds + [make_case(65536, 8192, dt) for dt in (torch.float32, torch.bfloat16)]


def aot_specs(target: policy.Target) -> list[AotSpec]:
    cfg = policy.row_config(target, 8192, 2)
    sig = {"x_ptr": "*bf16", "w_ptr": "*bf16", "out_ptr": "*bf16", "stride_x": "i32", "stride_o": "i32", "N": "i32",
           "eps": "fp32"}
    return [AotSpec("rmsnorm bf16 N=8192", rmsnorm_kernel, sig, {"BLOCK": cfg["BLOCK"]}, cfg)]


KERNEL = KernelSpec("rmsnorm", "memory", cases, aot_specs, perf_targets=("mem-copy", "mem-compile", "mem-eager"))
