"""GEMM with a fused epilogue: C = epilogue(A @ B), epilogue in {none, +bias, +bias then ReLU, +bias then GELU(tanh)},
optionally followed by dropout (seeded Philox, keep prob 1-p, scale 1/(1-p)).

A is M×K, B is K×N (any strides), bias has N elements. The product accumulates in fp32 tiles; the epilogue runs on
the fp32 accumulator before the single store, so the fused kernel reads A and B once and writes C once, where eager
torch writes C, reads it back for the bias, writes again for the activation, and again for dropout.
FLOPs 2·M·N·K (+ epilogue); bytes e·(M·K + K·N + M·N) + e·N.
"""

from __future__ import annotations

import functools
from typing import Any

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels import policy
from rocm_triton_doctor.kernels.base import (Case, DropoutCheck, Inputs, check_device, check_dtype, check_p, dropout_args,
                                             prepare_out, randn, tma_layout_ok, upcast_dots)
from rocm_triton_doctor.kernels.common import dropout_tile, gelu_tanh

EPILOGUES = {"none": 0, "bias": 1, "bias_relu": 2, "bias_gelu": 3}
DTYPES = (torch.float16, torch.bfloat16, torch.float32)


@triton.jit
def _grouped_tile(tile_id, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    """Tile `tile_id` -> (pid_m, pid_n) in grouped order: GROUP_M row-tiles share B column-tiles while they are in L2
    (tutorial 03). Both GEMM kernels."""
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = tile_id // num_pid_in_group * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (tile_id % num_pid_in_group) % group_size_m
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def gemm_kernel(a_ptr, b_ptr, c_ptr, bias_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                seed, threshold, scale, EPILOGUE: tl.constexpr, HAS_DROPOUT: tl.constexpr, UPCAST: tl.constexpr,
                PRECISION: tl.constexpr, EVEN_K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid_m, pid_n = _grouped_tile(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    # Loads are masked on M and N (a wrap-around of out-of-range rows/columns, tutorial 03's trick, hides N's
    # contiguity from the compiler: the fp32 1023x517x769 case fell from 85 to 135 us on an H200), and on K only when
    # K is not a multiple of BLOCK_K (EVEN_K).
    mask_m = offs_m < M
    mask_n = offs_n < N
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        if EVEN_K:
            a = tl.load(a_ptrs, mask=mask_m[:, None], other=0.0)
            b = tl.load(b_ptrs, mask=mask_n[None, :], other=0.0)
        else:
            k_left = K - k * BLOCK_K
            a = tl.load(a_ptrs, mask=mask_m[:, None] & (offs_k[None, :] < k_left), other=0.0)
            b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & mask_n[None, :], other=0.0)
        if UPCAST:
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    _epilogue_store(acc, c_ptr, bias_ptr, offs_m, offs_n, pid_n * BLOCK_N, M, N, stride_cm, stride_cn, seed, threshold,
                    scale, EPILOGUE, HAS_DROPOUT, BLOCK_M, BLOCK_N)


@triton.jit
def _epilogue_store(acc, c_ptr, bias_ptr, offs_m, offs_n, col0, M, N, stride_cm, stride_cn, seed, threshold, scale,
                    EPILOGUE: tl.constexpr, HAS_DROPOUT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """bias, activation and dropout on the fp32 accumulator, then the one store of C (both GEMM kernels)."""
    mask_m = offs_m < M
    mask_n = offs_n < N
    if EPILOGUE >= 1:
        bias = tl.load(bias_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)
        acc = acc + bias[None, :]
    if EPILOGUE == 2:
        acc = tl.maximum(acc, 0.0)
    if EPILOGUE == 3:
        acc = gelu_tanh(acc)
    acc = dropout_tile(acc, offs_m, col0, N, seed, threshold, scale, HAS_DROPOUT, BLOCK_M, BLOCK_N)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


@triton.jit
def gemm_tma_kernel(a_desc, b_desc, c_ptr, bias_ptr, M, N, K, stride_cm, stride_cn, seed, threshold, scale,
                    EPILOGUE: tl.constexpr, HAS_DROPOUT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                    BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr):
    """Hopper: a persistent grid (one program per SM walks the tiles in grouped order), A and B tiles fetched by the
    tensor-memory accelerator through tensor descriptors (out-of-range rows, columns and K are zero-filled, so no
    masks), and the tile loop warp-specialised so loads, tensor-core work and the epilogue of different tiles overlap.
    Same epilogue, same dropout mask as gemm_kernel."""
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    for tile_id in tl.range(tl.program_id(0), num_pid_m * num_pid_n, NUM_SMS, warp_specialize=True):
        pid_m, pid_n = _grouped_tile(tile_id, num_pid_m, num_pid_n, GROUP_M)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
            b = b_desc.load([k * BLOCK_K, pid_n * BLOCK_N])
            acc = tl.dot(a, b, acc)
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        _epilogue_store(acc, c_ptr, bias_ptr, offs_m, offs_n, pid_n * BLOCK_N, M, N, stride_cm, stride_cn, seed,
                        threshold, scale, EPILOGUE, HAS_DROPOUT, BLOCK_M, BLOCK_N)

def gemm(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor | None = None, epilogue: str = "none", p: float = 0.0,
         seed: int = 0, out: torch.Tensor | None = None, precision: str = "ieee",
         config: dict[str, Any] | None = None, kernel: str = "auto") -> torch.Tensor:
    """epilogue(a @ b [+ bias]) with optional dropout. Raises ValueError/TypeError on bad inputs.

    kernel: "auto" (the policy's choice), "pointer" (gemm_kernel) or "tma" (gemm_tma_kernel; 16-bit, Triton with
    tensor descriptors, and TMA-compatible layouts only)."""
    if epilogue not in EPILOGUES:
        raise ValueError(f"gemm: epilogue must be one of {', '.join(EPILOGUES)}, got {epilogue!r}")
    if kernel not in ("auto", "pointer", "tma"):
        raise ValueError(f"gemm: kernel must be auto, pointer or tma, got {kernel!r}")
    if a.dim() != 2 or b.dim() != 2:
        raise ValueError(f"gemm: a and b must be 2-D, got {tuple(a.shape)} and {tuple(b.shape)}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"gemm: inner dimensions differ: a is {tuple(a.shape)}, b is {tuple(b.shape)}")
    tensors = [a, b] + ([bias] if bias is not None else [])
    check_device("gemm", *tensors)
    dtype = check_dtype("gemm", DTYPES, *tensors)
    M, K = a.shape
    N = b.shape[1]
    if EPILOGUES[epilogue] >= 1:
        if bias is None or bias.shape != (N,):
            raise ValueError(f"gemm: epilogue {epilogue!r} needs a bias of shape ({N},)")
        if not bias.is_contiguous():
            raise ValueError("gemm: bias must be contiguous")
    p = check_p(p)
    if max(M * K, K * N, M * N) >= 2**31:
        # Row/column offsets are 32-bit in both kernels (the K loop advances 64-bit pointers, but the tile origins
        # and the epilogue's offsets are computed in int32).
        raise ValueError(f"gemm: operands of 2^31 elements or more are not supported (got {M}x{K} @ {K}x{N})")
    if precision not in ("ieee", "tf32"):
        raise ValueError("gemm: precision must be 'ieee' or 'tf32'")
    c = prepare_out(out, (M, N), a)
    target = policy.target_for_device(a.device.type)
    tma_ok = a.element_size() == 2 and tma_layout_ok(a, b) and policy.tma_supported(target)
    if kernel == "tma" and not tma_ok:
        raise ValueError("gemm: the TMA kernel needs fp16/bf16 inputs with contiguous rows and 16-byte aligned rows "
                         "and base pointers, on a target and Triton with tensor descriptors")
    use_tma = kernel == "tma" or (kernel == "auto" and tma_ok and policy.gemm_use_tma(target, M, N, K))
    cfg = dict(config or policy.gemm_config(target, M, N, K, a.element_size(), tma=use_tma))
    threshold, scale = dropout_args(p)
    epi = {"EPILOGUE": EPILOGUES[epilogue], "HAS_DROPOUT": p > 0.0}
    bias_arg = bias if bias is not None else c
    if use_tma:
        from triton.tools.tensor_descriptor import TensorDescriptor

        a_desc = TensorDescriptor.from_tensor(a, [cfg["BLOCK_M"], cfg["BLOCK_K"]])
        b_desc = TensorDescriptor.from_tensor(b, [cfg["BLOCK_K"], cfg["BLOCK_N"]])
        sms = _sm_count(a.device) if a.device.type == "cuda" else 4
        grid = (min(sms, triton.cdiv(M, cfg["BLOCK_M"]) * triton.cdiv(N, cfg["BLOCK_N"])),)
        gemm_tma_kernel[grid](a_desc, b_desc, c, bias_arg, M, N, K, c.stride(0), c.stride(1), seed, threshold, scale,
                              NUM_SMS=sms, **epi, **cfg)
        return c
    grid = (triton.cdiv(M, cfg["BLOCK_M"]) * triton.cdiv(N, cfg["BLOCK_N"]),)
    gemm_kernel[grid](a, b, c, bias_arg, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                      c.stride(1), seed, threshold, scale, UPCAST=upcast_dots(target, dtype),
                      PRECISION=precision if dtype == torch.float32 else "ieee", EVEN_K=K % cfg["BLOCK_K"] == 0,
                      **epi, **cfg)
    return c


@functools.cache
def _sm_count(device: torch.device) -> int:
    return int(torch.cuda.get_device_properties(device).multi_processor_count)


def reference(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor | None, epilogue: str) -> torch.Tensor:
    """fp64 on CPU is exact enough to judge fp32; fp32 elsewhere (matmul in fp64 is slow on GPUs)."""
    acc_t = torch.float64 if a.device.type == "cpu" else torch.float32
    with _no_tf32():
        y = a.to(acc_t) @ b.to(acc_t)
    if EPILOGUES[epilogue] >= 1 and bias is not None:
        y = y + bias.to(acc_t)
    if epilogue == "bias_relu":
        y = torch.relu(y)
    if epilogue == "bias_gelu":
        y = torch.nn.functional.gelu(y, approximate="tanh")
    return y


def eager(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor | None, epilogue: str, p: float) -> torch.Tensor:
    y = a @ b
    if EPILOGUES[epilogue] >= 1 and bias is not None:
        y = y + bias
    if epilogue == "bias_relu":
        y = torch.relu(y)
    if epilogue == "bias_gelu":
        y = torch.nn.functional.gelu(y, approximate="tanh")
    if p > 0:
        y = torch.nn.functional.dropout(y, p=p, training=True)
    return y


class _no_tf32:
    def __enter__(self) -> None:
        self.old = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = False

    def __exit__(self, *exc: object) -> None:
        torch.backends.cuda.matmul.allow_tf32 = self.old


def flops(M: int, N: int, K: int) -> float:
    return 2.0 * M * N * K


def bytes_moved(M: int, N: int, K: int, elem: int, bias: bool) -> float:
    return float(elem * (M * K + K * N + M * N + (N if bias else 0)))


def make_case(M: int, K: int, N: int, dtype: torch.dtype, epilogue: str, p: float = 0.0, *,
              transposed_b: bool = False, seed_shape: bool = False) -> Case:
    def setup(dev: torch.device, gen: torch.Generator) -> Inputs:
        scale = K ** -0.5  # keep outputs O(1) so fp16 does not overflow
        a = randn((M, K), dtype, dev, gen)
        b = randn((N, K), dtype, dev, gen, scale).t() if transposed_b else randn((K, N), dtype, dev, gen, scale)
        return {"a": a, "b": b, "bias": randn((N,), dtype, dev, gen), "seed": 1234}

    def run(x: Inputs, out: torch.Tensor | None) -> torch.Tensor:
        return gemm(x["a"], x["b"], x["bias"], epilogue, p, x["seed"], out=out)

    def ref(x: Inputs) -> torch.Tensor:
        return reference(x["a"], x["b"], x["bias"], epilogue)

    drop = None
    if p > 0:
        drop = DropoutCheck(p, observed=lambda x, out: out, undropped=ref)
    name = f"{str(dtype).replace('torch.', '')} {M}x{K}x{N} {epilogue}" + (f"+dropout{p}" if p else "") + \
        (" B^T" if transposed_b else "")
    elem = torch.empty((), dtype=dtype).element_size()
    return Case("gemm", name, dtype, setup, run, ref,
                eager=lambda x: eager(x["a"], x["b"], x["bias"], epilogue, p),
                flops=flops(M, N, K), bytes=bytes_moved(M, N, K, elem, epilogue != "none"),
                out_shape=lambda x: (M, N), tf32=False, dropout=drop, seed_shape=seed_shape,
                params={"M": M, "N": N, "K": K, "epilogue": epilogue, "p": p})


def cases(preset: str, target: policy.Target) -> list[Case]:
    if target.interpreter:
        # Odd sizes (not multiples of any block), every dtype and epilogue, and a transposed B.
        return [make_case(67, 45, 93, torch.float32, "none"), make_case(67, 45, 93, torch.float16, "bias"),
                make_case(67, 45, 93, torch.bfloat16, "bias_relu"), make_case(50, 70, 65, torch.float32, "bias_gelu"),
                make_case(64, 256, 128, torch.float16, "bias_relu", 0.1, seed_shape=True),
                make_case(33, 40, 70, torch.float16, "bias_relu", transposed_b=True)]
    seeds = [make_case(m, k, n, torch.float16, "bias_relu", seed_shape=True) for m, k, n in
             ((64, 256, 128), (128, 256, 256), (1024, 1024, 1024))]
    seeds += [make_case(m, k, n, torch.float16, "bias_relu", 0.1, seed_shape=True) for m, k, n in
              ((64, 256, 128), (128, 256, 256), (1024, 1024, 1024))]
    if preset == "seed":
        return seeds
    quick = [make_case(1023, 517, 769, torch.float32, "bias_gelu"), make_case(2048, 2048, 2048, torch.bfloat16, "none"),
             make_case(2048, 2048, 2048, torch.float16, "bias_relu", 0.1)]
    if preset == "quick":
        return seeds[2:3] + seeds[5:6] + quick
    big = []
    if preset == "bench":
        for dt in (torch.float16, torch.bfloat16):
            for n in (4096, 8192):
                big += [make_case(n, n, n, dt, "none"), make_case(n, n, n, dt, "bias_relu"),
                        make_case(n, n, n, dt, "bias_relu", 0.1)]
        return seeds + big
    for dt in (torch.float16, torch.bfloat16):
        for n in (4096, 8192):
            big += [make_case(n, n, n, dt, "none"), make_case(n, n, n, dt, "bias_relu"),
                    make_case(n, n, n, dt, "bias_relu", 0.1)]
    return seeds + quick + big


def aot_specs(target: policy.Target) -> list[AotSpec]:
    cfg = policy.gemm_config(target, 4096, 4096, 4096, 2)
    tiles = {k: cfg[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")}
    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "bias_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
           "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32", "stride_bn": "i32", "stride_cm": "i32",
           "stride_cn": "i32", "seed": "i32", "threshold": "u32", "scale": "fp32"}
    common = {"UPCAST": False, "PRECISION": "ieee", "EVEN_K": True, **tiles}
    specs = [("gemm fp16", gemm_kernel, sig, {"EPILOGUE": 0, "HAS_DROPOUT": False, **common}, cfg),
             ("gemm fp16 bias+relu+dropout", gemm_kernel, sig, {"EPILOGUE": 2, "HAS_DROPOUT": True, **common}, cfg)]
    if policy.gemm_use_tma(target, 4096, 4096, 4096):
        # What actually runs there at this size: the persistent TMA kernel (132 SMs: an H100/H200 SXM).
        tcfg = policy.gemm_config(target, 4096, 4096, 4096, 2, tma=True)
        bm, bn, bk = tcfg["BLOCK_M"], tcfg["BLOCK_N"], tcfg["BLOCK_K"]
        tsig = {"a_desc": f"tensordesc<fp16[{bm}, {bk}]>", "b_desc": f"tensordesc<fp16[{bk}, {bn}]>", "c_ptr": "*fp16",
                "bias_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32", "stride_cm": "i32", "stride_cn": "i32",
                "seed": "i32", "threshold": "u32", "scale": "fp32"}
        tconst = {"EPILOGUE": 2, "HAS_DROPOUT": True, "BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk,
                  "GROUP_M": tcfg["GROUP_M"], "NUM_SMS": 132}
        specs.append(("gemm fp16 bias+relu+dropout (TMA, persistent)", gemm_tma_kernel, tsig, tconst, tcfg))
    return [AotSpec(*s) for s in specs]


from rocm_triton_doctor.kernels.base import AotSpec, KernelSpec  # noqa: E402 (appended so KERN-B's rewrite merges)
KERNEL = KernelSpec("gemm", "compute", cases, aot_specs,
                    perf_targets=("gemm-plain", "gemm-bias-relu", "gemm-dropout", "gemm-compile", "seed-graph"))
