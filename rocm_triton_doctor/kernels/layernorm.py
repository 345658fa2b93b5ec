"""LayerNorm: y = (x - mean) / sqrt(var + eps) · w + b, per row; fp32 statistics (two-pass over the row held in
registers). Bytes e·(2·M·N + 2·N), ~8·M·N FLOPs; memory-bound."""

from __future__ import annotations


import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels import policy
from rocm_triton_doctor.kernels.base import AotSpec, Case, Inputs, KernelSpec, randn
from rocm_triton_doctor.kernels.rows import prepare


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, stride_x, stride_o, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    d = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / N + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * stride_o + cols, (d * rstd * w + b).to(out_ptr.dtype.element_ty), mask=mask)


def layernorm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5,
              out: torch.Tensor | None = None) -> torch.Tensor:
    if not eps > 0:
        raise ValueError("layernorm: eps must be > 0")
    rows, o, o2, cfg = prepare("layernorm", x, {"weight": weight, "bias": bias}, out)
    N = rows.shape[1]
    layernorm_kernel[(rows.shape[0],)](rows, weight, bias, o2, rows.stride(0), o2.stride(0), N, eps, **cfg)
    return o


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
    if preset == "seed":
        return []
    if preset == "bench":
        return [make_case(65536, 8192, dt) for dt in (torch.float32, torch.bfloat16)]
    quick = [make_case(8192, 4096, torch.bfloat16), make_case(4097, 1000, torch.float32)]
    if preset == "quick":
        return quick
    return quick + [make_case(65536, 8192, dt) for dt in (torch.float32, torch.bfloat16)]


def aot_specs(target: policy.Target) -> list[AotSpec]:
    cfg = policy.row_config(target, 8192, 2)
    sig = {"x_ptr": "*bf16", "w_ptr": "*bf16", "b_ptr": "*bf16", "out_ptr": "*bf16", "stride_x": "i32",
           "stride_o": "i32", "N": "i32", "eps": "fp32"}
    return [AotSpec("layernorm bf16 N=8192", layernorm_kernel, sig, {"BLOCK": cfg["BLOCK"]}, cfg)]


KERNEL = KernelSpec("layernorm", "memory", cases, aot_specs, perf_targets=("mem-copy", "mem-compile"))
