"""SwiGLU gate: y = silu(a) · b = a·sigmoid(a)·b, elementwise (the Llama MLP gate). Bytes 3·e·n; eager torch runs
two kernels (silu, mul) and moves 5·e·n."""

from __future__ import annotations


import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels import policy
from rocm_triton_doctor.kernels.base import AotSpec, Case, Inputs, KernelSpec, check_device, check_dtype, prepare_out, randn

DTYPES = (torch.float16, torch.bfloat16, torch.float32)


@triton.jit
def swiglu_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask).to(tl.float32)
    tl.store(out_ptr + offs, (a * tl.sigmoid(a) * b).to(out_ptr.dtype.element_ty), mask=mask)


def swiglu(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    check_device("swiglu", a, b)
    check_dtype("swiglu", DTYPES, a, b)
    if a.shape != b.shape:
        raise ValueError(f"swiglu: shapes differ: {tuple(a.shape)} and {tuple(b.shape)}")
    if not (a.is_contiguous() and b.is_contiguous()):
        raise ValueError("swiglu: inputs must be contiguous")
    o = prepare_out(out, tuple(a.shape), a)
    n = a.numel()
    cfg = policy.elementwise_config(policy.target_for_device(a.device.type), n)
    swiglu_kernel[(triton.cdiv(n, cfg["BLOCK"]),)](a, b, o, n, **cfg)
    return o


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
    return [AotSpec("swiglu bf16", swiglu_kernel, sig, {"BLOCK": cfg["BLOCK"]}, cfg)]


KERNEL = KernelSpec("swiglu", "memory", cases, aot_specs, perf_targets=("mem-copy", "mem-compile"))
