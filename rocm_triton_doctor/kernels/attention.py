"""Attention forward (FlashAttention-2 style): O = softmax(Q·Kᵀ·scale [+ causal mask]) · V, for Q, K, V of shape
(B, H, S, D), D in {64, 128}. Each program owns BLOCK_M query rows and streams K/V tiles, keeping the running max and
sum (online softmax, base-2 exponentials) so the S×S score matrix is never written.
FLOPs 4·B·H·S²·D (half that when causal); bytes e·4·B·H·S·D."""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels import policy
from rocm_triton_doctor.kernels.base import (Case, Inputs, check_device, check_dtype, prepare_out, randn, tma_layout_ok,
                                             upcast_dots)

DTYPES = (torch.float16, torch.bfloat16, torch.float32)
HEAD_DIMS = (16, 32, 64, 128)


@triton.jit
def _attn_block(acc, l_i, m_i, q, k_ptr, v_ptr, base, start_n, offs_m, offs_n, offs_d, S, stride_s, qk_scale,
                MASKED: tl.constexpr, UPCAST: tl.constexpr, CAUSAL: tl.constexpr = False):
    """One key/value block of the online softmax: update the running max m_i, sum l_i and the output accumulator."""
    cols = start_n + offs_n
    if MASKED:
        k = tl.load(k_ptr + base + cols[None, :] * stride_s + offs_d[:, None], mask=cols[None, :] < S, other=0.0)
        v = tl.load(v_ptr + base + cols[:, None] * stride_s + offs_d[None, :], mask=cols[:, None] < S, other=0.0)
    else:
        k = tl.load(k_ptr + base + cols[None, :] * stride_s + offs_d[:, None])
        v = tl.load(v_ptr + base + cols[:, None] * stride_s + offs_d[None, :])
    if UPCAST:
        k = k.to(tl.float32)
        v = v.to(tl.float32)
    return _softmax_update(acc, l_i, m_i, tl.dot(q, k), v, offs_m, cols, S, qk_scale, MASKED, CAUSAL)


@triton.jit
def _softmax_update(acc, l_i, m_i, qk, v, offs_m, cols, S, qk_scale, MASKED: tl.constexpr, CAUSAL: tl.constexpr):
    """Mask the score tile if asked (keys past S; above the diagonal when causal), then the online-softmax step:
    new running max and sum, the accumulator rescaled and P·V added (both attention kernels)."""
    if MASKED:
        valid = cols[None, :] < S
        if CAUSAL:
            valid = valid & (offs_m[:, None] >= cols[None, :])
        qk = tl.where(valid, qk, float("-inf"))
    # Scale inside the exponent (one FMA per score) instead of a separate multiply pass over the tile.
    m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
    p = tl.exp2(qk * qk_scale - m_new[:, None])
    alpha = tl.exp2(m_i - m_new)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
    return acc, l_i, m_new


@triton.jit
def _key_ranges(start_m, S, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    """Key blocks [0, lo_masked) need no mask, [lo_masked, hi) do. Causal: the blocks wholly below the diagonal need
    none (and no bounds check: they end before the first query row, which is < S), only those touching it do
    (tutorial 06's two stages); otherwise only a last, partial block does. Masking every block had cost non-causal
    attention 12 % on an H200 (0.73 -> 0.83x SDPA, docs/performance.md)."""
    if CAUSAL:
        lo_masked = (start_m * BLOCK_M) // BLOCK_N * BLOCK_N
        hi = tl.minimum(S, (start_m + 1) * BLOCK_M)
    else:
        lo_masked = S // BLOCK_N * BLOCK_N
        hi = S
    return lo_masked, hi


@triton.jit
def attn_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, sm_scale, H, S, stride_b, stride_h, stride_s,
                    HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, UPCAST: tl.constexpr,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off_bh = tl.program_id(1)
    base = (off_bh // H).to(tl.int64) * stride_b + (off_bh % H).to(tl.int64) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_s + offs_d[None, :], mask=offs_m[:, None] < S, other=0.0)
    if UPCAST:
        q = q.to(tl.float32)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634  # fold log2(e) in: exp(x) == exp2(x * log2 e)
    lo_masked, hi = _key_ranges(start_m, S, BLOCK_M, BLOCK_N, CAUSAL)
    for start_n in range(0, lo_masked, BLOCK_N):
        acc, l_i, m_i = _attn_block(acc, l_i, m_i, q, k_ptr, v_ptr, base, start_n, offs_m, offs_n, offs_d, S,
                                    stride_s, qk_scale, False, UPCAST)
    for start_n in range(lo_masked, hi, BLOCK_N):
        acc, l_i, m_i = _attn_block(acc, l_i, m_i, q, k_ptr, v_ptr, base, start_n, offs_m, offs_n, offs_d, S,
                                    stride_s, qk_scale, True, UPCAST, CAUSAL)
    acc = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * stride_s + offs_d[None, :], acc.to(o_ptr.dtype.element_ty),
             mask=offs_m[:, None] < S)


@triton.jit
def _attn_tma_block(acc, l_i, m_i, q, k_desc, v_desc, off_bh, start_n, offs_m, offs_n, S, qk_scale,
                    BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr, MASKED: tl.constexpr, CAUSAL: tl.constexpr):
    """_attn_block with K and V tiles fetched by TMA (rows past S come back as zeros)."""
    k = k_desc.load([off_bh, start_n, 0]).reshape(BLOCK_N, HEAD_DIM)
    v = v_desc.load([off_bh, start_n, 0]).reshape(BLOCK_N, HEAD_DIM)
    return _softmax_update(acc, l_i, m_i, tl.dot(q, k.T), v, offs_m, start_n + offs_n, S, qk_scale, MASKED, CAUSAL)


@triton.jit
def attn_fwd_tma_kernel(q_desc, k_desc, v_desc, o_desc, sm_scale, S, HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Hopper: the same algorithm as attn_fwd_kernel, with Q, K, V and O tiles moved by the tensor-memory accelerator
    through 3-D descriptors over (B·H, S, D) — reads past S are zero-filled per head, the store drops rows past S —
    and the unmasked key loop warp-specialised (producer warps issue the loads, consumer warps do the math)."""
    start_m = tl.program_id(0)
    off_bh = tl.program_id(1)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    q = q_desc.load([off_bh, start_m * BLOCK_M, 0]).reshape(BLOCK_M, HEAD_DIM)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634
    lo_masked, hi = _key_ranges(start_m, S, BLOCK_M, BLOCK_N, CAUSAL)
    for start_n in tl.range(0, lo_masked, BLOCK_N, warp_specialize=True):
        acc, l_i, m_i = _attn_tma_block(acc, l_i, m_i, q, k_desc, v_desc, off_bh, start_n, offs_m, offs_n, S,
                                        qk_scale, BLOCK_N, HEAD_DIM, False, CAUSAL)
    for start_n in range(lo_masked, hi, BLOCK_N):
        acc, l_i, m_i = _attn_tma_block(acc, l_i, m_i, q, k_desc, v_desc, off_bh, start_n, offs_m, offs_n, S,
                                        qk_scale, BLOCK_N, HEAD_DIM, True, CAUSAL)
    acc = acc / l_i[:, None]
    o_desc.store([off_bh, start_m * BLOCK_M, 0], acc.to(o_desc.dtype).reshape(1, BLOCK_M, HEAD_DIM))


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False, sm_scale: float | None = None,
              out: torch.Tensor | None = None, kernel: str = "auto") -> torch.Tensor:
    """kernel: "auto" (the policy's choice), "pointer" (attn_fwd_kernel) or "tma" (attn_fwd_tma_kernel: fp16/bf16,
    a Triton with tensor descriptors, Hopper or the interpreter)."""
    check_device("attention", q, k, v)
    dtype = check_dtype("attention", DTYPES, q, k, v)
    if kernel not in ("auto", "pointer", "tma"):
        raise ValueError(f"attention: kernel must be auto, pointer or tma, got {kernel!r}")
    if q.dim() != 4 or q.shape != k.shape or q.shape != v.shape:
        raise ValueError(f"attention: q, k, v must all be (B, H, S, D), got {tuple(q.shape)}, {tuple(k.shape)}, "
                         f"{tuple(v.shape)}")
    if not (q.is_contiguous() and k.is_contiguous() and v.is_contiguous()):
        raise ValueError("attention: q, k, v must be contiguous (B, H, S, D)")
    B, H, S, D = q.shape
    if D not in HEAD_DIMS:
        raise ValueError(f"attention: head dim {D} not supported (use {', '.join(map(str, HEAD_DIMS))})")
    o = prepare_out(out, (B, H, S, D), q)
    target = policy.target_for_device(q.device.type)
    scale = sm_scale if sm_scale is not None else 1.0 / math.sqrt(D)
    tma_ok = q.element_size() == 2 and policy.tma_supported(target) and tma_layout_ok(q, k, v, o)
    if kernel == "tma" and not tma_ok:
        raise ValueError("attention: the TMA kernel needs fp16/bf16 tensors with 16-byte aligned rows, on a target "
                         "and Triton with tensor descriptors")
    flops = 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)
    if kernel == "tma" or (kernel == "auto" and tma_ok and policy.attention_use_tma(target, D, flops)):
        from triton.tools.tensor_descriptor import TensorDescriptor

        cfg = policy.attention_config(target, D, q.element_size(), causal, tma=True)
        bm, bn = cfg["BLOCK_M"], cfg["BLOCK_N"]
        descs = [TensorDescriptor.from_tensor(t.view(B * H, S, D), [1, blk, D])
                 for t, blk in ((q, bm), (k, bn), (v, bn), (o, bm))]
        attn_fwd_tma_kernel[(triton.cdiv(S, bm), B * H)](*descs, scale, S, HEAD_DIM=D, CAUSAL=causal, **cfg)
        return o
    cfg = policy.attention_config(target, D, q.element_size(), causal)
    grid = (triton.cdiv(S, cfg["BLOCK_M"]), B * H)
    attn_fwd_kernel[grid](q, k, v, o, scale, H, S, q.stride(0), q.stride(1), q.stride(2), HEAD_DIM=D, CAUSAL=causal,
                          UPCAST=upcast_dots(target, dtype), **cfg)
    return o


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
    acc_t = torch.float64 if q.device.type == "cpu" else torch.float32
    qd, kd, vd = q.to(acc_t), k.to(acc_t), v.to(acc_t)
    s = (qd @ kd.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if causal:
        S = q.shape[2]
        s = s.masked_fill(torch.ones(S, S, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    return torch.softmax(s, dim=-1) @ vd


def make_case(B: int, H: int, S: int, D: int, dtype: torch.dtype, causal: bool, seed_shape: bool = False) -> Case:
    def setup(dev: torch.device, gen: torch.Generator) -> Inputs:
        return {n: randn((B, H, S, D), dtype, dev, gen) for n in ("q", "k", "v")}

    elem = torch.empty((), dtype=dtype).element_size()
    fl = 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)
    return Case("attention", f"{str(dtype).replace('torch.', '')} B={B} H={H} S={S} D={D}" + (" causal" if causal else ""),
                dtype, setup, run=lambda x, out: attention(x["q"], x["k"], x["v"], causal, out=out),
                reference=lambda x: reference(x["q"], x["k"], x["v"], causal),
                eager=lambda x: torch.nn.functional.scaled_dot_product_attention(x["q"], x["k"], x["v"], is_causal=causal),
                flops=fl, bytes=float(elem * 4 * B * H * S * D), out_shape=lambda x: (B, H, S, D), seed_shape=seed_shape,
                params={"B": B, "H": H, "S": S, "D": D, "causal": causal})


def cases(preset: str, target: policy.Target) -> list[Case]:
    if target.interpreter:
        return [make_case(1, 2, 77, 64, torch.float32, False), make_case(1, 1, 100, 64, torch.float16, True),
                make_case(1, 1, 65, 128, torch.bfloat16, True), make_case(1, 1, 50, 128, torch.bfloat16, False)]
    seeds = [make_case(1, 32, 2048, 128, torch.float16, True, seed_shape=True)]  # a small Llama layer's attention
    if preset == "seed":
        return seeds
    quick = [make_case(2, 16, 1024, 64, torch.float16, False), make_case(2, 16, 1000, 128, torch.bfloat16, True)]
    if preset == "bench":
        return [make_case(4, 32, 4096, 128, torch.bfloat16, c) for c in (False, True)]
    if preset == "quick":
        return seeds + quick
    return seeds + quick + [make_case(4, 32, 4096, 128, torch.bfloat16, c) for c in (False, True)]


def aot_specs(target: policy.Target) -> list[AotSpec]:
    out = []
    for d, causal in ((64, True), (128, True), (128, False)):
        cfg = policy.attention_config(target, d, 2, causal=causal)
        const = {"HEAD_DIM": d, "CAUSAL": causal, "UPCAST": False, "BLOCK_M": cfg["BLOCK_M"], "BLOCK_N": cfg["BLOCK_N"]}
        sig = {"q_ptr": "*bf16", "k_ptr": "*bf16", "v_ptr": "*bf16", "o_ptr": "*bf16", "sm_scale": "fp32", "H": "i32",
               "S": "i32", "stride_b": "i32", "stride_h": "i32", "stride_s": "i32"}
        out.append((f"attention bf16{' causal' if causal else ''} D={d}", attn_fwd_kernel, sig, const, cfg))
    if policy.attention_use_tma(target, 128, policy.TMA_ATTENTION_MIN_FLOPS):
        # What runs on Hopper: the TMA kernel (descriptor block shapes are part of its signature).
        for causal in (True, False):
            cfg = policy.attention_config(target, 128, 2, causal=causal, tma=True)
            bm, bn = cfg["BLOCK_M"], cfg["BLOCK_N"]
            sig = {"q_desc": f"tensordesc<bf16[1, {bm}, 128]>", "k_desc": f"tensordesc<bf16[1, {bn}, 128]>",
                   "v_desc": f"tensordesc<bf16[1, {bn}, 128]>", "o_desc": f"tensordesc<bf16[1, {bm}, 128]>",
                   "sm_scale": "fp32", "S": "i32"}
            const = {"HEAD_DIM": 128, "CAUSAL": causal, "BLOCK_M": bm, "BLOCK_N": bn}
            out.append((f"attention bf16{' causal' if causal else ''} D=128 (TMA)", attn_fwd_tma_kernel, sig, const,
                         cfg))
    return [AotSpec(*s) for s in out]


from rocm_triton_doctor.kernels.base import AotSpec, KernelSpec  # noqa: E402 (appended so KERN-B's rewrite merges)
KERNEL = KernelSpec("attention", "compute", cases, aot_specs, perf_targets=("attention",))
