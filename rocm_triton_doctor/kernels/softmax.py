"""Row softmax: y = exp(x - max) / sum(exp(x - max)), one row per program, fp32 math. Bytes 2·e·M·N, ~5·M·N FLOPs."""

from __future__ import annotations


import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels import policy
from rocm_triton_doctor.kernels.base import AotSpec, Case, Inputs, KernelSpec, randn
from rocm_triton_doctor.kernels.rows import prepare


@triton.jit
def softmax_kernel(x_ptr, out_ptr, stride_x, stride_o, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * stride_o + cols, (e / tl.sum(e, axis=0)).to(out_ptr.dtype.element_ty), mask=mask)


def softmax(x: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    rows, o, o2, cfg = prepare("softmax", x, {}, out)
    N = rows.shape[1]
    softmax_kernel[(rows.shape[0],)](rows, o2, rows.stride(0), o2.stride(0), N, **cfg)
    return o


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
    if preset == "seed":
        return []
    if preset == "bench":
        return [make_case(32768, 8192, dt) for dt in (torch.float32, torch.bfloat16)]
    quick = [make_case(8192, 4096, torch.float16), make_case(4097, 1000, torch.float32)]
    if preset == "quick":
        return quick
    return quick + [make_case(32768, 8192, dt) for dt in (torch.float32, torch.bfloat16)]


def aot_specs(target: policy.Target) -> list[AotSpec]:
    cfg = policy.row_config(target, 4096, 2)
    sig = {"x_ptr": "*fp16", "out_ptr": "*fp16", "stride_x": "i32", "stride_o": "i32", "N": "i32"}
    return [AotSpec("softmax fp16 N=4096", softmax_kernel, sig, {"BLOCK": cfg["BLOCK"]}, cfg)]


KERNEL = KernelSpec("softmax", "memory", cases, aot_specs, perf_targets=("mem-copy", "mem-compile"))
