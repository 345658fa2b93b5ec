"""`smoke --preset sweep` (issue #16 item 3): the shape grid by class, in ONE place.

Row kernels (rmsnorm, layernorm, softmax, swiglu) and the elementwise kernels (add_mul, bias_gelu_dropout_residual)
take their sweep grid from here through their own cases() (`preset == "sweep"`), GEMM (gemm_shapes()) and attention
(attention_cases()) too.

What fits: a row is built only when every tensor is at most MAX_TENSOR_BYTES (~4 GiB) and at most MAX_REF_ELEMENTS
elements (the correctness check holds fp64 copies: 8 bytes an element, several at once); skipped() says which rows
were left out and why. Also here: the Liger-Kernel baselines (imported lazily) and the launch-overhead cases.
"""

from __future__ import annotations

import math
from typing import Any
from collections.abc import Callable, Iterator

import torch

from rocm_triton_doctor.kernels.base import Case, Inputs, dtype_name, randn

MAX_TENSOR_BYTES = 4 << 30
MAX_REF_ELEMENTS = 1 << 30  # fp64 reference copies: 8 GiB each at this size
MAX_SCORE_BYTES = 10 << 30  # attention's fp32 reference holds B·H·S² scores, a few copies at once

ROW_N = (128, 1000, 3000, 4096, 5120, 8192, 11008, 16384, 65536, 152064, 262144)
ROW_M = (1024, 8192, 65536)
ROW_KERNELS = ("rmsnorm", "layernorm", "softmax", "swiglu")
# bf16 over the whole grid; fp32 and fp16 on the widths that behave differently (narrow, odd, Llama, vocabulary).
ROW_EXTRA = tuple((M, N, dt) for dt in (torch.float32, torch.float16)
                  for M, N in ((8192, 128), (8192, 1000), (8192, 4096), (8192, 11008), (1024, 152064)))
# Widths that are not a whole number of 16-byte vectors (each row starts off a boundary: the window forms,
# kernels/rows_window.py): an odd hidden size, and GPT-2's vocabulary in one block's reach and past it.
ROW_ODD = ((8192, 3001, torch.bfloat16), (8192, 6163, torch.float16), (4096, 50257, torch.bfloat16),
           (1024, 50257, torch.float32))
ELEMENTWISE_MIB = (1, 16, 64, 256, 1024)  # bytes of ONE input tensor
ATTN_S = (128, 1000, 1024, 2048, 4097, 8192, 16384)
ATTN_EXTRA_D = (80, 96, 256)  # head dims other than 64/128 that real models use
GEMM_SQUARE = (1024, 2048, 4096, 8192)
LLAMA_KN = ((4096, 4096), (4096, 11008), (4096, 14336), (11008, 4096), (14336, 4096))


def fits(shape: tuple[int, ...], elem: int) -> str | None:
    """None when a tensor of `shape` fits the sweep, else why not."""
    n = math.prod(shape)
    if n * elem > MAX_TENSOR_BYTES:
        return f"{n * elem / 2**30:.1f} GiB per tensor (over {MAX_TENSOR_BYTES >> 30} GiB)"
    if n > MAX_REF_ELEMENTS:
        return f"{n / 2**30:.2f}G elements: the fp64 reference would need {8 * n / 2**30:.0f} GiB per copy"
    return None


def _elem(dt: torch.dtype) -> int:
    return torch.empty((), dtype=dt).element_size()


def row_grid() -> Iterator[tuple[int, int, torch.dtype]]:
    for M in ROW_M:
        for N in ROW_N:
            yield M, N, torch.bfloat16
    yield from ROW_EXTRA
    yield from ROW_ODD


def row_cases(make_case: Callable[[int, int, torch.dtype], Case]) -> list[Case]:
    """A row kernel's sweep cases: make_case(M, N, dtype) over row_grid(), the rows that fit."""
    return [make_case(M, N, dt) for M, N, dt in row_grid() if fits((M, N), _elem(dt)) is None]


def elementwise_sizes() -> Iterator[tuple[int, torch.dtype]]:
    """(elements, dtype): one input tensor of 1 MiB to 1 GiB, bf16 and fp32, and one odd size."""
    for dt in (torch.bfloat16, torch.float32):
        for mib in ELEMENTWISE_MIB:
            yield (mib << 20) // _elem(dt), dt
    yield (1 << 24) + 7, torch.float16


def add_mul_cases(make_case: Callable[[int, torch.dtype], Case]) -> list[Case]:
    return [make_case(n, dt) for n, dt in elementwise_sizes() if fits((n,), _elem(dt)) is None]


def bias_gelu_cases(make_case: Callable[[int, int, int, torch.dtype, float], Case]) -> list[Case]:
    """(1, n/H, H) activations with hidden H = 4096 (an odd token count for the odd size), dropout 0.1."""
    out = []
    for n, dt in elementwise_sizes():
        H = 4096
        if fits((n,), _elem(dt)) is None:
            out.append(make_case(1, max(1, n // H), H, dt, 0.1))
    return out


def skipped() -> list[str]:
    """Every sweep row left out, with the reason (the runner puts these in the report's notes)."""
    out = []
    for M, N, dt in row_grid():
        why = fits((M, N), _elem(dt))
        if why:
            out.append(f"{'/'.join(ROW_KERNELS)} {dtype_name(dt)} {M}x{N}: {why}")
    for n, dt in elementwise_sizes():
        why = fits((n,), _elem(dt))
        if why:
            out.append(f"add_mul/bias_gelu_dropout_residual {dtype_name(dt)} n={n}: {why}")
    for B, H, _hkv, S, D, dt, _causal in _attention_grid((64, 128) + ATTN_EXTRA_D):
        why = _attention_fits(B, H, S, D, _elem(dt))
        if why:
            out.append(f"attention {dtype_name(dt)} B={B} H={H} S={S} D={D}: {why}")
    return out


# ---------------------------------------------------------------------------------------------------------- GEMM
def gemm_shapes() -> list[tuple[int, int, int, torch.dtype, str]]:
    """(M, K, N, dtype, epilogue) by class: square, odd, skinny/short-K, decode-size, Llama projections."""
    bf, fp16, fp32 = torch.bfloat16, torch.float16, torch.float32
    rows = [(n, n, n, dt, "none") for dt in (fp16, bf) for n in GEMM_SQUARE]
    rows += [(n, n, n, fp32, "none") for n in (1024, 4096)]
    rows += [(1000, 1000, 1000, dt, "none") for dt in (fp16, bf)]  # odd: no dimension a multiple of a tile
    rows += [(4097, 4097, 4097, bf, "none"), (4097, 4096, 4096, bf, "none"), (3000, 5120, 3000, fp16, "none")]
    rows += [(4096, 128, 4096, bf, "none"), (8192, 64, 8192, bf, "none"),  # short K
             (65536, 4096, 128, bf, "none"), (128, 4096, 65536, bf, "none")]  # tall / wide skinny
    rows += [(m, k, n, bf, "none") for m in (1, 8, 16) for k, n in ((4096, 4096), (4096, 14336), (14336, 4096))]
    rows += [(16, 4096, 4096, fp16, "none")]
    rows += [(t, k, n, bf, "none") for t in (2048, 8192) for k, n in LLAMA_KN]
    rows += [(2048, k, n, fp16, "none") for k, n in LLAMA_KN]
    rows += [(2048, 4096, 11008, bf, "bias_relu"), (2048, 4096, 14336, fp16, "bias_gelu")]  # fused epilogues
    # decode rows against a row-major fp32 weight whose rows are not 16-byte aligned (the GEMV's shifted windows)
    rows += [(2, 1041, 12427, fp32, "bias_gelu"), (1, 768, 50257, fp32, "none")]
    return rows


def gemm_cases(target: Any) -> list[Case]:
    """gemm.cases("sweep", target): the module builds its sweep rows from gemm_shapes() (kept for callers)."""
    from rocm_triton_doctor.kernels import gemm

    return gemm.cases("sweep", target)


# ----------------------------------------------------------------------------------------------------- attention
def _attention_grid(dims: tuple[int, ...]) -> Iterator[tuple[int, int, int, int, int, torch.dtype, bool]]:
    """(B, H, H_kv, S, D, dtype, causal). B·H large (4x32 at S <= 4097, fewer heads further on so the work stays
    similar) and small (1x4); GQA 32/8; head dims other than 64/128 on two S; fp16 on one."""
    bf = torch.bfloat16
    for S in ATTN_S:
        B, H = (4, 32) if S <= 4097 else (1, 32) if S <= 8192 else (1, 8)
        for D in (64, 128):
            for causal in (False, True):
                yield B, H, H, S, D, bf, causal
    for S in (1024, 4097, 16384):
        for causal in (False, True):
            yield 1, 4, 4, S, 128, bf, causal
    for D in dims:
        if D not in (64, 128):
            for S in (1024, 4097):
                for causal in (False, True):
                    yield 4, 32, 32, S, D, bf, causal
    for S in (1024, 4096, 8192):
        for causal in (False, True):
            yield (4 if S <= 4096 else 1), 32, 8, S, 128, bf, causal
    for causal in (False, True):
        yield 4, 32, 32, 2048, 128, torch.float16, causal


def _attention_fits(B: int, H: int, S: int, D: int, elem: int) -> str | None:
    if B * H * S * S * 4 > MAX_SCORE_BYTES:
        return f"the fp32 reference's scores would take {B * H * S * S * 4 / 2**30:.0f} GiB per copy"
    return fits((B, H, S, D), elem)


def attention_case(B: int, H: int, Hkv: int, S: int, D: int, dtype: torch.dtype, causal: bool) -> Case:
    from rocm_triton_doctor.kernels import attention

    def setup(dev: torch.device, gen: torch.Generator) -> Inputs:
        return {"q": randn((B, H, S, D), dtype, dev, gen), "k": randn((B, Hkv, S, D), dtype, dev, gen),
                "v": randn((B, Hkv, S, D), dtype, dev, gen)}

    def ref(x: Inputs) -> torch.Tensor:
        k, v = x["k"], x["v"]
        if Hkv != H:
            k, v = k.repeat_interleave(H // Hkv, dim=1), v.repeat_interleave(H // Hkv, dim=1)
        return attention.reference(x["q"], k, v, causal)

    def eager(x: Inputs) -> torch.Tensor:  # SDPA, default backend selection (flash/efficient/cuDNN on a GPU)
        sdpa = torch.nn.functional.scaled_dot_product_attention
        if Hkv != H:
            return sdpa(x["q"], x["k"], x["v"], is_causal=causal, enable_gqa=True)
        return sdpa(x["q"], x["k"], x["v"], is_causal=causal)

    elem = _elem(dtype)
    name = f"{dtype_name(dtype)} B={B} H={H} S={S} D={D}" + (f" GQA {H}/{Hkv}" if Hkv != H else "") + \
        (" causal" if causal else "")
    return Case("attention", name, dtype, setup,
                run=lambda x, out: attention.attention(x["q"], x["k"], x["v"], causal, out=out), reference=ref,
                eager=eager, flops=4.0 * B * H * S * S * D * (0.5 if causal else 1.0),
                bytes=float(elem * (2 * B * H * S * D + 2 * B * Hkv * S * D)), out_shape=lambda x: (B, H, S, D),
                params={"B": B, "H": H, "H_kv": Hkv, "S": S, "D": D, "causal": causal})


def attention_cases() -> list[Case]:
    """attention.cases("sweep"): the grid's rows that fit (every head dim and GQA: the launcher takes them all), then
    a model's decode against its key cache (one query row, GQA 32/8, 4k and 32k keys, batch 1 and 8) and a short prompt
    against a long cache: the calls attention_split.py serves; and long query blocks against a short key range
    (policy_attention.SHORT_KEYS), MQA in the model layout and GQA causal."""
    from rocm_triton_doctor.kernels.attention_cases import make_case

    bf = torch.bfloat16
    decode = [make_case(B, 32, 1, 128, bf, False, H_kv=8, S_k=sk) for B in (1, 8) for sk in (4096, 32768)]
    return [attention_case(B, H, Hkv, S, D, dt, causal)
            for B, H, Hkv, S, D, dt, causal in _attention_grid((64, 128) + ATTN_EXTRA_D)
            if _attention_fits(B, H, S, D, _elem(dt)) is None] + decode + [
        make_case(1, 32, 128, 128, bf, False, H_kv=8, S_k=8192),
        make_case(5, 40, 4455, 128, bf, False, H_kv=1, S_k=89, model_layout=True),
        make_case(2, 32, 8192, 128, bf, True, H_kv=4, S_k=100)]


def interleave(cases: list[Case]) -> list[Case]:
    """Round-robin over kernels, so a --max-seconds cut leaves every class partly covered rather than the last few
    classes not at all."""
    by: dict[str, list[Case]] = {}
    for c in cases:
        by.setdefault(c.kernel, []).append(c)
    out: list[Case] = []
    queues = list(by.values())
    while any(queues):
        for q in queues:
            if q:
                out.append(q.pop(0))
    return out
