"""Fused add-multiply: out = (x + y) * z, elementwise.

One pass reads three tensors and writes one (4·e·n bytes, 2n FLOPs); eager torch runs two kernels and moves
6·e·n bytes (x+y is written and read back). Memory-bound: the ceiling is the device's copy bandwidth.
"""

from __future__ import annotations


import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels import policy
from rocm_triton_doctor.kernels.base import AotSpec, Case, Inputs, KernelSpec, check_device, check_dtype, prepare_out, randn

DTYPES = (torch.float16, torch.bfloat16, torch.float32)


@triton.jit
def add_mul_kernel(x_ptr, y_ptr, z_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)  # int64: tensors past 2^31 elements
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offs, mask=mask).to(tl.float32)
    z = tl.load(z_ptr + offs, mask=mask).to(tl.float32)
    tl.store(out_ptr + offs, ((x + y) * z).to(out_ptr.dtype.element_ty), mask=mask)


def add_mul(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor, out: torch.Tensor | None = None,
            block: int | None = None) -> torch.Tensor:
    check_device("add_mul", x, y, z)
    check_dtype("add_mul", DTYPES, x, y, z)
    if not (x.shape == y.shape == z.shape):
        raise ValueError(f"add_mul: shapes differ: {tuple(x.shape)}, {tuple(y.shape)}, {tuple(z.shape)}")
    if not (x.is_contiguous() and y.is_contiguous() and z.is_contiguous()):
        raise ValueError("add_mul: inputs must be contiguous (call .contiguous() first)")
    o = prepare_out(out, tuple(x.shape), x)
    n = x.numel()
    cfg = policy.elementwise_config(policy.target_for_device(x.device.type), n)
    if block is not None:
        if block & (block - 1):
            raise ValueError(f"add_mul: block must be a power of two, got {block}")
        cfg["BLOCK"] = block
    add_mul_kernel[(triton.cdiv(n, cfg["BLOCK"]),)](x, y, z, o, n, **cfg)
    return o


def make_case(n: int, dtype: torch.dtype, block: int | None = None, seed_shape: bool = False) -> Case:
    def setup(dev: torch.device, gen: torch.Generator) -> Inputs:
        return {"x": randn((n,), dtype, dev, gen), "y": randn((n,), dtype, dev, gen), "z": randn((n,), dtype, dev, gen)}

    elem = torch.empty((), dtype=dtype).element_size()
    name = f"{str(dtype).replace('torch.', '')} n={n}" + (f" BLOCK={block}" if block else "")
    return Case("add_mul", name, dtype, setup,
                run=lambda x, out: add_mul(x["x"], x["y"], x["z"], out=out, block=block),
                reference=lambda x: (x["x"].double() + x["y"].double()) * x["z"].double(),
                eager=lambda x: (x["x"] + x["y"]) * x["z"], flops=2.0 * n, bytes=4.0 * elem * n,
                out_shape=lambda x: (n,), seed_shape=seed_shape)


def cases(preset: str, target: policy.Target) -> list[Case]:
    if target.interpreter:
        return [make_case(3001, dt) for dt in DTYPES] + [make_case(5000, torch.float32, block=128)]
    sweep = [make_case(1 << 24, torch.float32, block=b, seed_shape=True) for b in (128, 256, 512, 1024)]
    if preset == "seed":
        return sweep
    if preset == "bench":
        return [make_case(1 << 26, dt) for dt in (torch.float32, torch.bfloat16)]
    if preset == "quick":
        return [make_case((1 << 24) + 7, torch.float32), make_case(1 << 24, torch.bfloat16)]
    return sweep + [make_case(1 << 26, dt) for dt in (torch.float32, torch.bfloat16)]


def aot_specs(target: policy.Target) -> list[AotSpec]:
    cfg = policy.elementwise_config(target, 1 << 24)
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "z_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
    return [AotSpec("add_mul fp32", add_mul_kernel, sig, {"BLOCK": cfg["BLOCK"]}, cfg)]


KERNEL = KernelSpec("add_mul", "memory", cases, aot_specs, perf_targets=("mem-copy", "mem-compile"))
