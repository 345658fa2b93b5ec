"""Fused add-multiply: out = (x + y) * z, elementwise.

Any layout (strided inputs run a 2-D tiled kernel, elementwise.py). One pass reads three tensors and writes one
(4·e·n bytes, 2n FLOPs); eager torch runs two kernels and moves
6·e·n bytes (x+y is written and read back). Memory-bound: the ceiling is the device's copy bandwidth.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels import call_plans, policy
from rocm_triton_doctor.kernels.launch_site import DYN, Site
from rocm_triton_doctor.kernels.base import (AotSpec, Case, Inputs, KernelSpec, cdiv, check_alias, check_block, check_device,
                                             check_dtype, prepare_out, randn, target_of)
from rocm_triton_doctor.kernels.elementwise import full_block, strided_grid, strided_layout, tile_of, tile_offsets

DTYPES = (torch.float16, torch.bfloat16, torch.float32)


@triton.jit
def _add_mul_block(x_ptr, y_ptr, z_ptr, out_ptr, offs, n, MASKED: tl.constexpr):
    mask = offs < n if MASKED else None
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offs, mask=mask).to(tl.float32)
    z = tl.load(z_ptr + offs, mask=mask).to(tl.float32)
    tl.store(out_ptr + offs, ((x + y) * z).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def add_mul_kernel(x_ptr, y_ptr, z_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)  # int64: tensors past 2^31 elements
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    # Only the last block is masked (elementwise.full_block): with `offs < n` everywhere, an n that is not a multiple
    # of 16 made every load a scalar one (fp16 n = 2^24 + 7 ran at 58 % of copy bandwidth on an H100).
    if full_block(pid, n, BLOCK):
        _add_mul_block(x_ptr, y_ptr, z_ptr, out_ptr, offs, n, False)
    else:
        _add_mul_block(x_ptr, y_ptr, z_ptr, out_ptr, offs, n, True)


@triton.jit
def add_mul_strided_kernel(x_ptr, y_ptr, z_ptr, out_ptr, M, N, D1, D2, sx0, sx1, sx2, sxn, sy0, sy1, sy2, syn, sz0,
                           sz1, sz2, szn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """add_mul on inputs of any layout (elementwise.strided_layout); the output is contiguous."""
    rows, cols = tile_of(tl.program_id(0), N, BLOCK_M, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + tile_offsets(rows, cols, D1, D2, sx0, sx1, sx2, sxn), mask=mask).to(tl.float32)
    y = tl.load(y_ptr + tile_offsets(rows, cols, D1, D2, sy0, sy1, sy2, syn), mask=mask).to(tl.float32)
    z = tl.load(z_ptr + tile_offsets(rows, cols, D1, D2, sz0, sz1, sz2, szn), mask=mask).to(tl.float32)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], ((x + y) * z).to(out_ptr.dtype.element_ty), mask=mask)


def add_mul(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor, out: torch.Tensor | None = None,
            block: int | None = None) -> torch.Tensor:
    """(x + y) * z for same-dtype tensors of any layout whose shapes broadcast (as torch's do); `block` (a power of
    two) sets the flat kernel's block size."""
    key = call_plans.signature(x, y, z) if out is None and block is None else None
    if key is not None:
        plan = _PLANS.get(key)
        if plan is not None:  # this signature was checked and planned before (call_plans.py)
            o = plan.out(x)
            plan.site(x, y, z, o)
            return o
    check_device("add_mul", x, y, z)
    check_dtype("add_mul", DTYPES, x, y, z)
    block = check_block("add_mul", block)
    if not (x.shape == y.shape == z.shape):
        # Broadcast as torch's (x + y) * z does: stride-0 views (the strided kernel reads them in place), not planned
        # (a plan allocates its output like x).
        try:
            shape = torch.broadcast_shapes(x.shape, y.shape, z.shape)
        except RuntimeError:
            raise ValueError(f"add_mul: shapes {tuple(x.shape)}, {tuple(y.shape)}, {tuple(z.shape)} do not "
                             "broadcast") from None
        x, y, z = (t.expand(shape) for t in (x, y, z))
        key = None
    o = prepare_out(out, tuple(x.shape), x, "add_mul")
    if out is not None:  # a fresh output overlaps nothing
        check_alias("add_mul", o, {"x": x, "y": y, "z": z}, in_place=("x", "y", "z"))
    n = x.numel()
    if n == 0:
        return o
    target = target_of(x)
    L = strided_layout("add_mul", o, x, y, z)
    if L is not None:
        cfg = policy.shared(policy.strided_config, target, L.N)
        site = Site(add_mul_strided_kernel, strided_grid(L, cfg), (DYN,) * 4 + (L.M, L.N, L.D1, L.D2, *L.args()), cfg)
    else:
        cfg = policy.shared(policy.elementwise_config, target, n)
        if block is not None:
            cfg = {**cfg, "BLOCK": block}
        site = Site(add_mul_kernel, (cdiv(n, cfg["BLOCK"]),), (DYN,) * 4 + (n,), cfg)
    call_plans.run(_PLANS, key, site, (x, y, z, o), x.is_contiguous())
    return o


_PLANS = call_plans.table()


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
    if preset == "sweep":  # the grid lives in smoke/sweep.py, shared by the kernels of this class
        from rocm_triton_doctor.smoke import sweep as grid

        return grid.add_mul_cases(make_case)
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
    scfg = policy.strided_config(target, 4096)
    ssig = {"x_ptr": "*bf16", "y_ptr": "*bf16", "z_ptr": "*bf16", "out_ptr": "*bf16", "M": "i32", "N": "i32", "D1": "i32",
            **{f"s{t}{d}": "i32" for t in "xyz" for d in ("0", "1", "2", "n")}}
    return [AotSpec("add_mul fp32", add_mul_kernel, sig, {"BLOCK": cfg["BLOCK"]}, cfg),
            AotSpec("add_mul bf16 strided", add_mul_strided_kernel, ssig,
                    {"D2": 1, "BLOCK_M": scfg["BLOCK_M"], "BLOCK_N": scfg["BLOCK_N"]}, scfg)]


KERNEL = KernelSpec("add_mul", "memory", cases, aot_specs, perf_targets=("mem-copy", "mem-compile"))
