"""Session 30: the backward hunt's worst rows, measured for the next rule (one device call).

    PYTHONPATH=.:benchmarks python benchmarks/backward_probe.py --set rows|gqa|wide-d [--json out.json]

rows, wide-rows: row-kernel rows (RMSNorm, LayerNorm, softmax, SwiGLU) by name, forward + backward against eager and Liger
        (backward_hunt.run_one: every gradient checked against fp64 first).
norm-w8: fresh widths for the 16384-lane block's warps, as norm-ppu.
norm-check: hunt 8's worst LayerNorm row and three the column tiles won, column tiles (policy) against one block.
norm-ppu: the norm-one-block rows' backward in one block under 1, 2 or 4 programs a unit and 8, 16 or 32 warps.
atomic, atomic-wide: attention backward with dQ added by the dK/dV kernel (DQ_ATOMIC) over several tilings, against
        the policy's two kernels (session 32); atomic-wide: head dims 160-256.
sdpa-backends: SDPA's forward and backward under each of its backends (flash, cuDNN, memory-efficient, and the
        default's pick) against ours, with the rate of each in TFLOP/s (4·S_q·S_k·D·B·H a forward, 2.5× that a backward,
        halved causal): which kernel the 0.9× target is set against.
gqa:    attention backward of GQA/MQA and small grids: the dK/dV kernel's KV_SPLIT 1 / the policy's / twice it.
wide-d: attention backward at head dims 160-256 over several tilings; mid-d: at 64-128 (the policy's tiles first).
The attention sets time the backward alone (attention_backward with the forward's o and lse) in CUDA-graph replay,
against SDPA's backward (its forward + backward minus its forward), after checking each tiling's gradients against
the policy's (and those against fp64 once). Prints a table last.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import torch
import torch.nn.functional as F
from triton.testing import do_bench_cudagraph

import backward_hunt as bh
from rocm_triton_doctor.kernels import attention_autograd as aa, attention_backward as ab, policy
from rocm_triton_doctor.kernels.base import cdiv, device_cus

ROWS = ["softmax fp32 47020472x2", "softmax fp32 3089634x3", "softmax fp16 100100x2", "softmax fp32 595240x11",
        "softmax fp32 235160x10", "softmax bf16 974228x77", "softmax bf16 59407x129", "rmsnorm fp32 842345x5",
        "rmsnorm fp32 837726x7", "rmsnorm bf16 992949x39", "rmsnorm bf16 118663x123", "rmsnorm bf16 387510x235",
        "rmsnorm fp16 78346x7", "rmsnorm bf16 95078x17", "layernorm fp16 1322x451", "layernorm fp16 417x2948",
        "rmsnorm fp16 809x113", "layernorm fp32 8768x6", "rmsnorm bf16 7626x161", "softmax bf16 1337x31",
        "swiglu fp16 2711593x13", "rmsnorm bf16 2250x5011", "layernorm bf16 231x33207"]
# Few wide rows (row_grads_split.py; the split is taken under graph capture below 262144 columns)
WIDE_ROWS = ["rmsnorm fp32 3x164034", "rmsnorm fp32 1x135196", "softmax bf16 2x152064", "rmsnorm bf16 8x128256",
             "layernorm fp32 4x100000", "softmax fp32 16x65537", "layernorm bf16 1x25672", "rmsnorm bf16 40x300000"]
# Wide rows in one block (up to 64 KiB): the norm backwards' register-held parameter sums, against looped chunks
NORM_WIDE = [("layernorm", "bf16", 3596, 29822), ("layernorm", "bf16", 1061, 12897), ("layernorm", "fp16", 2000, 20000),
             ("layernorm", "bf16", 4096, 16384), ("layernorm", "fp32", 2000, 12000), ("layernorm", "bf16", 8192, 8192),
             ("rmsnorm", "bf16", 3596, 29822), ("rmsnorm", "fp32", 2000, 12000), ("layernorm", "bf16", 300, 30000),
             # session 31: hunt 4's worst LayerNorm rows, and more wide rows for the column tiles
             ("layernorm", "fp16", 5296, 22213), ("layernorm", "fp16", 65, 49044), ("layernorm", "fp32", 1000, 40000),
             ("rmsnorm", "bf16", 4096, 32768), ("layernorm", "bf16", 256, 131072), ("rmsnorm", "fp32", 64, 65536),
             ("layernorm", "bf16", 2048, 4096), ("layernorm", "fp16", 417, 2948), ("layernorm", "bf16", 16384, 2560),
             ("rmsnorm", "bf16", 8192, 4096), ("layernorm", "fp32", 4096, 6000)]
# session 31: 16-bit RMSNorm rows in one block (hunt 5's fp16 3067x13823 at 0.71x Liger's backward) and narrower
NORM_ONE_BLOCK = [("rmsnorm", "fp16", 3067, 13823), ("rmsnorm", "bf16", 4096, 16384), ("rmsnorm", "bf16", 2048, 12288),
                  ("rmsnorm", "fp16", 8192, 10240), ("rmsnorm", "bf16", 2048, 8192), ("rmsnorm", "bf16", 4096, 5120),
                  ("rmsnorm", "fp32", 2048, 8192), ("layernorm", "bf16", 4096, 5120), ("layernorm", "fp16", 3067, 13823)]
# session 32: hunt 8's worst LayerNorm row (column tiles, 0.69x eager's backward) beside rows the tiles had won
NORM_CHECK = [("layernorm", "bf16", 9932, 14072), ("layernorm", "bf16", 4096, 16384), ("layernorm", "bf16", 1061, 12897),
              ("layernorm", "fp16", 8192, 12288)]
# session 32: fresh widths for the 16384-lane block's warps (16 against 8, one program an SM)
NORM_W8 = [("rmsnorm", "bf16", 2048, 9000), ("rmsnorm", "bf16", 2048, 11000), ("rmsnorm", "fp16", 2048, 12500),
           ("rmsnorm", "bf16", 2048, 15000), ("rmsnorm", "bf16", 2048, 16000), ("rmsnorm", "fp16", 2048, 16384),
           ("layernorm", "bf16", 512, 14000)]
# session 33: hunt 10's RMSNorm bf16 4428x15816 (backward 0.72x Liger's) and its neighbours, near a full 16384-lane block
NORM_FULL = [("rmsnorm", "bf16", 4428, 15816), ("rmsnorm", "bf16", 4096, 15500), ("rmsnorm", "fp16", 3000, 15700),
             ("rmsnorm", "bf16", 8192, 16000), ("rmsnorm", "bf16", 2048, 15872)]
NORM_VARIANTS: dict[str, dict[str, Any] | None] = {"policy": None, "8192 w16": {"BLOCK": 8192, "num_warps": 16},
                                                   "4096 w8": {"BLOCK": 4096, "num_warps": 8}}
# (dtype, B, H, H_kv, S_q, S_k, D, causal, model layout)
GQA = [("bf16", 1, 16, 1, 2238, 2238, 32, False, False), ("bf16", 2, 24, 1, 79, 1507, 64, True, True),
       ("bf16", 1, 8, 2, 3446, 3446, 64, False, False), ("bf16", 2, 24, 1, 3226, 3226, 32, False, False),
       ("bf16", 1, 24, 2, 3409, 3409, 32, False, False), ("fp16", 15, 12, 1, 1722, 1722, 80, True, False),
       ("fp16", 2, 24, 4, 2022, 2022, 96, True, True), ("bf16", 4, 32, 2, 81, 81, 96, False, True),
       ("bf16", 4, 32, 4, 2357, 2357, 64, True, False), ("bf16", 8, 32, 8, 1024, 1024, 128, True, False)]
WIDE = [("bf16", 5, 24, 1, 238, 238, 256, True, True), ("fp16", 7, 12, 4, 2452, 2452, 256, False, True),
        ("bf16", 2, 12, 2, 1127, 1127, 256, True, False), ("bf16", 4, 16, 16, 1024, 1024, 192, False, False),
        ("bf16", 2, 16, 4, 2048, 2048, 160, True, False), ("bf16", 8, 16, 16, 512, 512, 256, False, False)]
# Head dims 32-128, the hunt's rows under 0.9 (after the GQA split)
MID = [("bf16", 4, 16, 16, 2048, 2048, 128, True, False), ("fp16", 12, 24, 2, 279, 279, 128, False, False),
       ("bf16", 15, 12, 4, 451, 451, 128, False, True), ("fp16", 2, 24, 4, 2022, 2022, 96, True, True),
       ("bf16", 7, 16, 16, 1067, 1067, 96, True, False), ("fp16", 15, 12, 1, 1722, 1722, 80, True, False),
       ("fp16", 12, 16, 16, 339, 355, 80, False, False), ("bf16", 4, 32, 4, 2357, 2357, 64, True, False),
       ("bf16", 1, 16, 16, 6579, 6579, 64, True, True), ("bf16", 3, 8, 2, 1165, 4869, 96, False, False)]
MID_TILES = {128: [(32, 64, 64, 32, 4, 4), (64, 64, 64, 64, 4, 3), (64, 64, 64, 64, 8, 3), (32, 128, 128, 32, 8, 3),
                   (64, 128, 128, 64, 8, 3), (64, 64, 64, 64, 8, 2), (32, 64, 64, 32, 4, 3), (32, 64, 64, 32, 8, 4)],
             64: [(64, 64, 64, 64, 4, 3), (32, 64, 64, 32, 4, 3), (64, 128, 128, 64, 8, 3), (32, 128, 128, 32, 4, 3),
                  (64, 64, 64, 64, 4, 4), (64, 64, 64, 64, 8, 3), (128, 64, 64, 128, 8, 3), (32, 64, 64, 32, 4, 4)]}
# session 32: dQ by atomics in the dK/dV kernel; hunt 5's attention rows under 0.9, MID's, and long sequences
ATOMIC = [("bf16", 1, 8, 2, 2038, 2038, 128, False, False), ("fp16", 2, 32, 8, 2383, 2383, 64, True, False),
          *MID, ("bf16", 4, 32, 32, 4096, 4096, 128, True, False), ("bf16", 4, 32, 32, 4096, 4096, 128, False, False),
          ("bf16", 8, 16, 16, 1024, 1024, 64, False, False), ("bf16", 2, 16, 16, 8192, 8192, 64, True, True),
          ("fp16", 4, 32, 8, 1000, 1000, 128, True, True)]
ATOMIC_WIDE = [("bf16", 1, 12, 2, 505, 505, 256, False, False), *WIDE]
# A few query blocks over many keys (chunked prefill, cross-attention; session 33's hunt 9 had bf16 B1 H4/1
# S122x7841 D80 at 0.19x SDPA's backward): the dQ kernel's grid is the query blocks, the dK/dV kernel's the key blocks.
SHORT_Q = [("bf16", 1, 4, 1, 122, 7841, 80, False, False), ("fp16", 2, 8, 8, 64, 4096, 64, False, False),
           ("bf16", 1, 32, 8, 256, 8192, 128, False, False), ("bf16", 4, 16, 16, 128, 2048, 128, False, False),
           ("fp16", 1, 16, 2, 300, 5000, 96, False, True), ("bf16", 1, 8, 1, 17, 3000, 64, False, False),
           ("bf16", 2, 12, 12, 33, 2048, 64, False, False), ("fp16", 1, 16, 16, 500, 6000, 128, True, False),
           ("bf16", 8, 8, 8, 128, 1024, 64, False, False), ("bf16", 1, 32, 32, 1000, 1000, 128, False, False),
           ("fp16", 2, 8, 2, 512, 4096, 64, False, False), ("bf16", 1, 16, 16, 64, 512, 128, False, False)]
# (BLOCK_M1, BLOCK_N1, warps, stages) of the DQ_ATOMIC dK/dV kernel by padded head dim
ATOMIC_TILES = {64: [(64, 64, 4, 3), (32, 128, 4, 3), (32, 128, 8, 3), (64, 128, 8, 3), (32, 64, 4, 3),
                     (64, 64, 8, 2), (16, 128, 4, 3)],
                128: [(32, 64, 4, 3), (64, 64, 4, 3), (32, 128, 8, 3), (64, 128, 8, 3), (64, 128, 8, 2), (32, 64, 8, 3),
                      (16, 64, 4, 3)],
                256: [(64, 64, 8, 1), (32, 64, 8, 1), (32, 64, 4, 1), (16, 64, 4, 2), (32, 32, 4, 2), (64, 32, 8, 1),
                      (64, 128, 8, 1)]}
# (BLOCK_M1, BLOCK_N1, BLOCK_M2, BLOCK_N2, warps, stages); the first is the policy's at D > 128
TILES = [(16, 32, 32, 32, 8, 2), (32, 32, 32, 32, 8, 2), (32, 64, 64, 32, 8, 2), (16, 64, 64, 16, 8, 2),
         (32, 64, 64, 32, 8, 1), (64, 64, 64, 64, 8, 1), (32, 32, 32, 32, 4, 2), (16, 32, 32, 16, 4, 2)]


def draw_named(name: str) -> bh.Draw:
    """"rmsnorm fp32 842345x5" (a hunt row's name) as its problem."""
    op, dts, mn = name.split()
    m, n = (int(v) for v in mn.split("x"))
    return bh.row_problem(op, dts, m, n)


def att_inputs(spec: tuple[Any, ...], g: torch.Generator) -> tuple[Any, ...]:
    dts, B, H, Hk, Sq, Sk, D, causal, bshd = spec
    dt = bh.DT[dts]

    def mk(h: int, s: int) -> torch.Tensor:
        if bshd:
            return torch.randn(B, s, h, D, generator=g, device="cuda").to(dt).transpose(1, 2)
        return torch.randn(B, h, s, D, generator=g, device="cuda").to(dt)
    q, k, v = mk(H, Sq), mk(Hk, Sk), mk(Hk, Sk)
    do = mk(H, Sq)
    o, lse = aa._forward_with_stats(q, k, v, causal, None)
    return q, k, v, do, o, lse, causal


def sdpa_bwd_ms(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, do: torch.Tensor, causal: bool) -> float:
    leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
    gqa = q.shape[1] != k.shape[1]
    fb = do_bench_cudagraph(lambda: torch.autograd.grad(
        F.scaled_dot_product_attention(*leaves, is_causal=causal, enable_gqa=gqa), leaves, do), rep=20)
    f = do_bench_cudagraph(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa), rep=20)
    return float(fb - f)


def att_row(spec: tuple[Any, ...], variants: dict[str, dict[str, Any] | None], g: torch.Generator) -> dict[str, Any]:
    q, k, v, do, o, lse, causal = att_inputs(spec, g)
    scale = aa._scale(q, None)
    base = ab.attention_backward(do, q, k, v, o, lse, causal, scale)
    leaves = [t.detach().double().requires_grad_() for t in (q, k, v)]
    mask = torch.ones(q.shape[2], k.shape[2], dtype=torch.bool, device="cuda").tril() if causal else None
    ref = torch.autograd.grad(F.scaled_dot_product_attention(*leaves, attn_mask=mask, enable_gqa=True), leaves,
                              do.double())
    row: dict[str, Any] = {"spec": list(spec), "ref_err": [float((a.double() - r).abs().max() / r.abs().max())
                                                           for a, r in zip(base, ref)]}
    row["sdpa_bwd_ms"] = sdpa_bwd_ms(q, k, v, do, causal)
    row["ms"], row["wrong"] = {}, []
    for name, cfg in variants.items():
        try:
            got = ab.attention_backward(do, q, k, v, o, lse, causal, scale, config=cfg)
            errs = [float((a.double() - b.double()).abs().max() / b.double().abs().max()) for a, b in zip(got, base)]
            if max(errs) > 0.05:
                row["wrong"].append(f"{name}: {errs}")
                continue
            row["ms"][name] = float(do_bench_cudagraph(
                lambda cfg=cfg: ab.attention_backward(do, q, k, v, o, lse, causal, scale, config=cfg), rep=20))
        except Exception as exc:  # noqa: BLE001 - a tiling that fails to compile or launch is reported, not fatal
            row["wrong"].append(f"{name}: {type(exc).__name__}: {str(exc)[:100]}")
    torch.cuda.empty_cache()
    return row


def backends_row(spec: tuple[Any, ...], g: torch.Generator) -> dict[str, Any]:
    """Forward and backward ms of SDPA under each backend and of ours (policy), CUDA-graph replay."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q, k, v, do, o, lse, causal = att_inputs(spec, g)
    gqa = q.shape[1] != k.shape[1]
    scale = aa._scale(q, None)
    B, H, Sq, D = q.shape
    flop = 4.0 * B * H * Sq * k.shape[2] * D * (0.5 if causal else 1.0)
    row: dict[str, Any] = {"spec": list(spec), "fwd_tflop": flop / 1e12, "fwd_ms": {}, "bwd_ms": {}, "failed": {}}
    leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
    for name, be in (("default", None), ("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION),
                     ("efficient", SDPBackend.EFFICIENT_ATTENTION)):
        try:
            ctx = sdpa_kernel([be]) if be is not None else torch.enable_grad()
            with ctx:
                f = do_bench_cudagraph(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                                              enable_gqa=gqa), rep=20)
                fb = do_bench_cudagraph(lambda: torch.autograd.grad(F.scaled_dot_product_attention(
                    *leaves, is_causal=causal, enable_gqa=gqa), leaves, do), rep=20)
            row["fwd_ms"][name], row["bwd_ms"][name] = float(f), float(fb - f)
        except Exception as exc:  # noqa: BLE001 - a backend that does not take this problem is reported
            row["failed"][name] = f"{type(exc).__name__}: {str(exc)[:80]}"
    row["fwd_ms"]["ours"] = float(do_bench_cudagraph(lambda: aa._fwd.attention(q, k, v, causal), rep=20))
    row["bwd_ms"]["ours"] = float(do_bench_cudagraph(lambda: ab.attention_backward(do, q, k, v, o, lse, causal, scale),
                                                     rep=20))
    torch.cuda.empty_cache()
    return row


class _Ppu(dict):  # type: ignore[type-arg]
    """A config override run with p programs a unit (row_grads.PROGRAMS_PER_UNIT and WIDE_ONE_BLOCK_PROGRAMS)."""

    def __init__(self, p: int, cfg: dict[str, Any]) -> None:
        super().__init__(cfg)
        self.p = p


def _ppu_variants(N: int) -> dict[str, Any]:
    block = 1 << (N - 1).bit_length()
    return {f"ppu{p} w{w}": _Ppu(p, {"BLOCK": block, "num_warps": w}) for p in (1, 2, 4) for w in (8, 16, 32)}


def norm_row(op: str, dt: torch.dtype, M: int, N: int, g: torch.Generator, ppu: bool = False) -> dict[str, Any]:
    """The norm's backward alone by variant (config=) against eager autograd's backward (fb - f), checked against
    the policy's gradients."""
    from rocm_triton_doctor.kernels import layernorm, rmsnorm

    x = torch.randn(M, N, generator=g, device="cuda").to(dt)
    w, b = (torch.randn(N, generator=g, device="cuda").to(dt) for _ in range(2))
    dy = torch.randn(M, N, generator=g, device="cuda").to(dt)
    xf = x.float()
    mean, rstd = xf.mean(-1), torch.rsqrt(xf.var(-1, unbiased=False) + 1e-5)
    if op == "layernorm":
        def run(cfg: Any) -> Any:
            return layernorm.layernorm_backward(dy, x, w, b, mean, rstd, config=cfg)
        leaves = [t.clone().requires_grad_() for t in (x, w, b)]
        fwd = lambda: F.layer_norm(leaves[0], (N,), leaves[1], leaves[2], 1e-5)  # noqa: E731
    else:
        rs = torch.rsqrt(xf.pow(2).mean(-1) + 1e-6)

        def run(cfg: Any) -> Any:
            return rmsnorm.rmsnorm_backward(dy, x, w, rs, config=cfg)
        leaves = [t.clone().requires_grad_() for t in (x, w)]
        fwd = lambda: rmsnorm.eager(leaves[0], leaves[1])  # noqa: E731
    eager = float(do_bench_cudagraph(lambda: torch.autograd.grad(fwd(), leaves, dy), rep=20)
                  - do_bench_cudagraph(lambda: fwd(), rep=20))
    liger = None
    lf = bh._liger("LigerRMSNormFunction" if op == "rmsnorm" else "LigerLayerNormFunction")
    if lf is not None:  # its backward writes into dy: its own copy
        lleaves, ldy = [t.detach().clone().requires_grad_() for t in leaves], dy.clone()
        args = (1e-6,) if op == "rmsnorm" else (1e-5,)
        lfwd = lambda: lf.apply(*lleaves, *args)  # noqa: E731
        liger = float(do_bench_cudagraph(lambda: torch.autograd.grad(lfwd(), lleaves, ldy), rep=20)
                      - do_bench_cudagraph(lambda: lfwd(), rep=20))
    inner = run

    def run(cfg: Any) -> Any:  # noqa: F811 - a _Cols variant: the policy's path under its tiles
        if isinstance(cfg, _Cols):
            _cols_tiles(cfg.t)
            return inner(None)
        return inner(cfg)
    base = run({"BLOCK": 8192, "num_warps": 16} if N > 16384 else None)  # the kernel before session 31's tiles
    row: dict[str, Any] = {"op": op, "dtype": str(dt), "M": M, "N": N, "eager_ms": eager, "liger_ms": liger, "ms": {},
                           "wrong": []}
    from rocm_triton_doctor.kernels import row_grads
    for name, cfg in ({"policy": None, **_ppu_variants(N)} if ppu else {**NORM_VARIANTS, **_cols_variants()}).items():
        try:
            if isinstance(cfg, _Ppu):
                row_grads.PROGRAMS_PER_UNIT = row_grads.WIDE_ONE_BLOCK_PROGRAMS = cfg.p
            got = run(cfg)
            errs = [float((a.float() - c.float()).abs().max() / c.float().abs().max()) for a, c in zip(got, base)]
            if max(errs) > 0.02:
                row["wrong"].append(f"{name}: {errs}")
                continue
            row["ms"][name] = float(do_bench_cudagraph(lambda cfg=cfg: run(cfg), rep=20))
        except Exception as exc:  # noqa: BLE001
            row["wrong"].append(f"{name}: {type(exc).__name__}: {str(exc)[:100]}")
        finally:
            _cols_tiles(COLS_DEFAULT)
            row_grads.PROGRAMS_PER_UNIT, row_grads.WIDE_ONE_BLOCK_PROGRAMS = 2, 1
    return row


COLS_DEFAULT: tuple[int, int, int, int | None] = (1024, 8, 4, None)


def _cols_tiles(t: tuple[int, int, int, int | None]) -> None:
    """row_grads_cols' BLOCK_N, warps, programs a unit, and the width from which both norms' rows in one block take
    them (None: the module's own rule)."""
    from rocm_triton_doctor.kernels import call_plans, row_grads_cols
    call_plans.clear()  # a backward planned under other tiles would keep them (rows in one block are planned)
    row_grads_cols.COLS_BLOCK, row_grads_cols.COLS_WARPS, row_grads_cols.COLS_PROGRAMS_PER_UNIT = t[:3]
    row_grads_cols.BLOCK_MIN_N = {2: 8193} if t[3] is None else {1: t[3], 2: t[3]}


class _Cols(dict):  # type: ignore[type-arg]
    """A variant that runs the policy's path (config None) with row_grads_cols' tiles (BLOCK_N, warps, programs a
    unit) set while it runs: run(cfg) is called with this (empty) dict first, then with None."""

    def __init__(self, t: tuple[int, int, int, int | None]) -> None:
        super().__init__()
        self.t = t


def _cols_variants() -> dict[str, Any]:
    return {f"cols {b} w{w} p{p}" + (f" from {n}" if n else ""): _Cols((b, w, p, n)) for b, w, p, n in
            ((1024, 8, 4, None), (1024, 4, 4, None), (1024, 8, 4, 4097), (1024, 4, 4, 4097))}


def policy_cfg(spec: tuple[Any, ...]) -> dict[str, Any]:
    dts, B, H, Hk, Sq, Sk, D, causal, _ = spec
    block_d = max(16, 1 << (D - 1).bit_length())
    return policy.attention_backward_config(policy.target_for_device("cuda"), block_d, bh.DT[dts].itemsize, causal,
                                            min(Sq, Sk) >= ab.LONG_SEQ)


def atomic_tilings(cfg: dict[str, Any], D: int, first: int | None = None) -> dict[str, dict[str, Any]]:
    """cfg with the DQ_ATOMIC dK/dV kernel in each of ATOMIC_TILES' tilings for D's padded head dim (the first few)."""
    bd = max(16, 1 << (D - 1).bit_length())
    return {f"atomic {m1}x{n1} w{w} s{st}": {**cfg, "BLOCK_M1": m1, "BLOCK_N1": n1, "num_warps": w, "num_stages": st,
                                             "DQ_ATOMIC": True}
            for m1, n1, w, st in ATOMIC_TILES[min(256, max(64, bd))][:first]}


def save(path: str | None, which: str, rows: list[dict[str, Any]]) -> None:
    if path:
        with open(path, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "set": which, "rows": rows}, f, indent=1)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", required=True, choices=("rows", "wide-rows", "norm-wide", "norm-one-block", "gqa", "wide-d",
                                                       "mid-d", "atomic", "atomic-wide", "sdpa-backends", "norm-ppu",
                                                       "norm-check", "norm-w8", "short-q", "norm-full"))
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    g = torch.Generator(device="cuda").manual_seed(30)
    out: list[dict[str, Any]] = []
    lines = []
    if args.set.startswith("norm-"):
        sets = {"norm-wide": NORM_WIDE, "norm-check": NORM_CHECK, "norm-w8": NORM_W8, "norm-full": NORM_FULL}
        for op, dts, M, N in sets.get(args.set, NORM_ONE_BLOCK):
            # the sets since session 32 time programs an SM and warps (the earlier two, tilings and column tiles)
            row = norm_row(op, bh.DT[dts], M, N, g, ppu=args.set not in ("norm-wide", "norm-one-block"))
            out.append(row)
            save(args.json, args.set, out)
            lines.append(f"{op} {dts} {M}x{N}: eager bwd {row['eager_ms']:.4f} ms, Liger x eager "
                         f"{row['eager_ms'] / (row['liger_ms'] or float('nan')):.2f}; x eager " + ", ".join(
                f"{k} {row['eager_ms'] / v:.2f}" for k, v in row["ms"].items()) + (f" WRONG {row['wrong']}"
                                                                                  if row["wrong"] else ""))
            print(lines[-1], flush=True)
    elif args.set == "sdpa-backends":
        for spec in [*ATOMIC, *ATOMIC_WIDE]:
            row = backends_row(spec, g)
            out.append(row)
            save(args.json, args.set, out)
            tf = row["fwd_tflop"]
            lines.append(f"{spec}: fwd TFLOP/s " + ", ".join(f"{k} {tf / v * 1e3:.0f}" for k, v in row["fwd_ms"].items())
                         + "; bwd TFLOP/s " + ", ".join(f"{k} {2.5 * tf / v * 1e3:.0f}"
                                                         for k, v in row["bwd_ms"].items())
                         + (f"; failed {sorted(row['failed'])}" if row["failed"] else ""))
            print(lines[-1], flush=True)
    elif args.set in ("rows", "wide-rows"):
        for name in ROWS if args.set == "rows" else WIDE_ROWS:
            row = bh.run_one(draw_named(name), g)
            out.append(row)
            fb = row.get("fb_gpu_ms", {})
            lines.append(f"{name:32s} ok={row.get('ok')} f+b x best {row.get('gpu_x_best', 0):.2f} bwd x best "
                         f"{row.get('bwd_x_best', 0):.2f}  " + " ".join(f"{k}={v:.4f}" for k, v in fb.items() if v))
            print(lines[-1], flush=True)
    else:
        specs = {"gqa": GQA, "wide-d": WIDE, "mid-d": MID, "atomic": ATOMIC, "atomic-wide": ATOMIC_WIDE,
                 "short-q": SHORT_Q}[args.set]
        cus = device_cus(torch.device("cuda"))
        for spec in specs:
            cfg = policy_cfg(spec)
            dts, B, H, Hk, Sq, Sk, D, causal, _ = spec
            if args.set == "gqa":
                progs = cdiv(Sk, cfg["BLOCK_N1"]) * Hk * B
                pol = policy.attention_backward_kv_split(policy.target_for_device("cuda"), progs, H // Hk, cus)
                variants = {f"split{s}": {**cfg, "KV_SPLIT": s} for s in sorted({1, 2, pol, 2 * pol, 4 * pol})
                            if s <= H // Hk}
            elif args.set == "short-q":
                variants = {"policy": None, "two kernels": {**cfg, "DQ_ATOMIC": False},
                            "atomic": {**cfg, "DQ_ATOMIC": True}} | atomic_tilings(cfg, D, 3)
            elif args.set.startswith("atomic"):
                variants = {"policy": None, "policy atomic": {**cfg, "DQ_ATOMIC": True}} | atomic_tilings(cfg, D)
            else:
                tiles = TILES if args.set == "wide-d" else MID_TILES[128 if D > 64 else 64]
                variants = {f"{m1}x{n1}/{m2}x{n2} w{w} s{st}": {"BLOCK_M1": m1, "BLOCK_N1": n1, "BLOCK_M2": m2,
                                                                "BLOCK_N2": n2, "num_warps": w, "num_stages": st}
                            for m1, n1, m2, n2, w, st in tiles}
            row = att_row(spec, variants, g)
            out.append(row)
            save(args.json, args.set, out)  # after every row: a time cap keeps what ran
            sd = row["sdpa_bwd_ms"]
            lines.append(f"{spec}: sdpa bwd {sd:.4f} ms; x SDPA " + ", ".join(
                f"{k} {sd / v:.2f}" for k, v in row["ms"].items()) + (f"  WRONG/FAILED {row['wrong']}" if row["wrong"]
                                                                      else "") + f" ref_err {row['ref_err']}")
            print(lines[-1], flush=True)
    save(args.json, args.set, out)
    print("\n" + "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
