"""Attention forward with device-side tensor descriptors (tl.make_tensor_descriptor): attn_fwd_kernel's algorithm with
every tile moved by Hopper's tensor-memory accelerator, the descriptors built by each program on the GPU.

Why a third kernel: attn_fwd_tma_kernel takes host descriptors (triton.tools.tensor_descriptor), and building four of
them cost ~75 us of host time per launch on an H100 (issue #16: B4 H32 S128 D128 took 64.8 us event-timed against
SDPA's 14.3 us, 7.7 vs 8.1 us in graph replay), so it is only used from policy.TMA_ATTENTION_MIN_FLOPS. Built on the
device, a descriptor costs the program a 128-byte write to a global scratch buffer Triton asks triton.set_allocator's
allocator for (the way Triton's tutorial 06 builds them); the host passes plain pointers and strides. The descriptors'
last dimension is the head dim as it is, the blocks powers of two: TMA zero-fills the columns past D on loads and
drops them on the store, so D = 80 and 96 run here too with no D mask (any D whose rows are 16-byte aligned: D % 8 ==
0 in 16-bit), split into two column blocks (64 + 16, 64 + 32) rather than padded to 128 (column_blocks). Reads past S
are zero-filled per head and the store drops rows past S_q, as in attn_fwd_tma_kernel."""

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels.launch import launch as launch_kernel
from rocm_triton_doctor.kernels.attention_blocks import _key_ranges, _online_softmax, _signed, _softmax_update
from rocm_triton_doctor.kernels.policy_attention import column_blocks


@triton.jit
def _tdesc_block(acc, acc2, l_i, m_i, q, q2, k_desc, v_desc, k2_desc, v2_desc, b, kh, start_n, offs_m, offs_n, S_K,
                 qk_scale, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_D2: tl.constexpr, MASKED: tl.constexpr,
                 UPCAST: tl.constexpr, CAUSAL: tl.constexpr):
    """One key block of the online softmax (attention_blocks._softmax_update's arithmetic and masking), over the head dim's
    columns [0, BLOCK_D) and, when BLOCK_D2 > 0, [BLOCK_D, BLOCK_D + BLOCK_D2) in a second accumulator."""
    k = k_desc.load([b, kh, start_n, 0]).reshape(BLOCK_N, BLOCK_D)
    v = v_desc.load([b, kh, start_n, 0]).reshape(BLOCK_N, BLOCK_D)
    if UPCAST:
        k = k.to(tl.float32)
        v = v.to(tl.float32)
    qk = tl.dot(q, k.T)
    if BLOCK_D2 > 0:
        k2 = k2_desc.load([b, kh, start_n, BLOCK_D]).reshape(BLOCK_N, BLOCK_D2)
        if UPCAST:
            k2 = k2.to(tl.float32)
        qk = tl.dot(q2, k2.T, qk)
    p, alpha, l_i, m_new = _online_softmax(l_i, m_i, qk, offs_m, start_n + offs_n, S_K, qk_scale, MASKED, CAUSAL)
    acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
    if BLOCK_D2 > 0:
        v2 = v2_desc.load([b, kh, start_n, BLOCK_D]).reshape(BLOCK_N, BLOCK_D2)
        if UPCAST:
            v2 = v2.to(tl.float32)
        acc2 = tl.dot(p.to(v2.dtype), v2, acc2 * alpha[:, None])
    return acc, acc2, l_i, m_new


@triton.jit
def attn_fwd_tdesc_kernel(q_ptr, k_ptr, v_ptr, o_ptr, qk_scale, B, H, H_KV, S_Q, S_K, sq_b, sq_h, sq_s, sk_b, sk_h,
                          sk_s, sv_b, sv_h, sv_s, so_b, so_h, so_s, HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr,
                          Q_SIGN: tl.constexpr, CAUSAL: tl.constexpr, UPCAST: tl.constexpr, BLOCK_M: tl.constexpr,
                          BLOCK_N: tl.constexpr, WARP_SPECIALIZE: tl.constexpr, BLOCK_D2: tl.constexpr = 0):
    """BLOCK_D2 > 0: the head dim in two column blocks, BLOCK_D + BLOCK_D2 (D = 80 as 64 + 16, 96 as 64 + 32), two
    dots a step instead of one over the power of two above D (128): 37 % (D=80) or 25 % (D=96) fewer MMA FLOPs."""
    start_m = tl.program_id(0)
    if CAUSAL:
        # Heaviest query tiles (most keys below the diagonal) first, so the short ones fill the last wave (the grid's
        # tiles of one head are scheduled in order).
        start_m = tl.num_programs(0) - 1 - start_m
    h = tl.program_id(1)
    b = tl.program_id(2)
    kh = h // (H // H_KV)
    q_desc = tl.make_tensor_descriptor(q_ptr, [B, H, S_Q, HEAD_DIM], [sq_b, sq_h, sq_s, 1], [1, 1, BLOCK_M, BLOCK_D])
    k_desc = tl.make_tensor_descriptor(k_ptr, [B, H_KV, S_K, HEAD_DIM], [sk_b, sk_h, sk_s, 1], [1, 1, BLOCK_N, BLOCK_D])
    v_desc = tl.make_tensor_descriptor(v_ptr, [B, H_KV, S_K, HEAD_DIM], [sv_b, sv_h, sv_s, 1], [1, 1, BLOCK_N, BLOCK_D])
    o_desc = tl.make_tensor_descriptor(o_ptr, [B, H, S_Q, HEAD_DIM], [so_b, so_h, so_s, 1], [1, 1, BLOCK_M, BLOCK_D])
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    q = _q_tile(q_desc, b, h, start_m * BLOCK_M, 0, BLOCK_M, BLOCK_D, Q_SIGN, UPCAST)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)
    if BLOCK_D2 > 0:
        k2_desc = tl.make_tensor_descriptor(k_ptr, [B, H_KV, S_K, HEAD_DIM], [sk_b, sk_h, sk_s, 1],
                                            [1, 1, BLOCK_N, BLOCK_D2])
        v2_desc = tl.make_tensor_descriptor(v_ptr, [B, H_KV, S_K, HEAD_DIM], [sv_b, sv_h, sv_s, 1],
                                            [1, 1, BLOCK_N, BLOCK_D2])
        q2_desc = tl.make_tensor_descriptor(q_ptr, [B, H, S_Q, HEAD_DIM], [sq_b, sq_h, sq_s, 1],
                                            [1, 1, BLOCK_M, BLOCK_D2])
        q2 = _q_tile(q2_desc, b, h, start_m * BLOCK_M, BLOCK_D, BLOCK_M, BLOCK_D2, Q_SIGN, UPCAST)
        acc2 = tl.zeros((BLOCK_M, BLOCK_D2), dtype=tl.float32)
    else:  # placeholders, never read (the constexpr branches that would are not compiled)
        k2_desc, v2_desc, q2, acc2 = k_desc, v_desc, q, l_i
    lo_masked, hi = _key_ranges(start_m, S_K, BLOCK_M, BLOCK_N, CAUSAL)
    if WARP_SPECIALIZE:
        for start_n in tl.range(0, lo_masked, BLOCK_N, warp_specialize=True):
            acc, acc2, l_i, m_i = _tdesc_block(acc, acc2, l_i, m_i, q, q2, k_desc, v_desc, k2_desc, v2_desc, b, kh,
                                               start_n, offs_m, offs_n, S_K, qk_scale, BLOCK_N, BLOCK_D, BLOCK_D2,
                                               False, UPCAST, CAUSAL)
    else:
        for start_n in range(0, lo_masked, BLOCK_N):
            acc, acc2, l_i, m_i = _tdesc_block(acc, acc2, l_i, m_i, q, q2, k_desc, v_desc, k2_desc, v2_desc, b, kh,
                                               start_n, offs_m, offs_n, S_K, qk_scale, BLOCK_N, BLOCK_D, BLOCK_D2,
                                               False, UPCAST, CAUSAL)
    for start_n in range(lo_masked, hi, BLOCK_N):
        acc, acc2, l_i, m_i = _tdesc_block(acc, acc2, l_i, m_i, q, q2, k_desc, v_desc, k2_desc, v2_desc, b, kh,
                                           start_n, offs_m, offs_n, S_K, qk_scale, BLOCK_N, BLOCK_D, BLOCK_D2, True,
                                           UPCAST, CAUSAL)
    l_safe = tl.where(l_i == 0.0, 1.0, l_i)[:, None]  # a row with no finite score: 0, as SDPA gives
    o_desc.store([b, h, start_m * BLOCK_M, 0], (acc / l_safe).to(o_desc.dtype).reshape(1, 1, BLOCK_M, BLOCK_D))
    if BLOCK_D2 > 0:
        o2_desc = tl.make_tensor_descriptor(o_ptr, [B, H, S_Q, HEAD_DIM], [so_b, so_h, so_s, 1],
                                            [1, 1, BLOCK_M, BLOCK_D2])
        o2_desc.store([b, h, start_m * BLOCK_M, BLOCK_D],
                      (acc2 / l_safe).to(o2_desc.dtype).reshape(1, 1, BLOCK_M, BLOCK_D2))


@triton.jit
def _q_tile(desc, b, h, row, col, BLOCK_M: tl.constexpr, WIDTH: tl.constexpr, Q_SIGN: tl.constexpr,
            UPCAST: tl.constexpr):
    """Q's tile at (row, col) with the scale's sign folded in (see attention.attention)."""
    return _signed(desc.load([b, h, row, col]).reshape(BLOCK_M, WIDTH), Q_SIGN, UPCAST)


def _scratch(size: int, alignment: int, stream: int | None) -> torch.Tensor:
    return torch.empty(size, dtype=torch.int8, device="cuda")


def ensure_allocator() -> None:
    """Device-side descriptors need global scratch from triton.set_allocator's allocator; Triton's default refuses.
    Set one (torch's caching allocator, so a launch costs no cudaMalloc) unless the caller set their own. The setting
    is a ContextVar, so it is checked on every launch (a new thread starts with the default)."""
    from triton.runtime import _allocation

    current = getattr(_allocation, "_allocator", None)  # private: if a Triton moves it, set ours (it cannot refuse)
    if current is None or isinstance(current.get(), _allocation.NullAllocator):
        triton.set_allocator(_scratch)


def warp_specialize(cfg: dict[str, Any]) -> bool:
    """The default for WARP_SPECIALIZE: on with 8 or more warps (the host-descriptor kernel's measured setting). With
    4 warps Triton 3.9's NVGPUWarpSpecialization pass fails to compile this kernel for sm_90 (--compile-only: D=64
    128x64 w4, D=256 64x64 w4), so those run the plain software-pipelined loop."""
    return bool(cfg.get("WARP_SPECIALIZE", cfg.get("num_warps", 4) >= 8))


def aot_specs(target: Any, configs: Any) -> list[tuple[str, Any, dict[str, str], dict[str, Any], dict[str, Any]]]:
    """(name, kernel, signature, constexprs, options) for the compile-only audit: bf16 at the head dims the policy
    sends here (80/96 and 192 in two column blocks, 128, 256), causal and not. configs(block_d, causal, split) gives
    the tiles."""
    out = []
    sig = {"q_ptr": "*bf16", "k_ptr": "*bf16", "v_ptr": "*bf16", "o_ptr": "*bf16", "qk_scale": "fp32",
           **{n: "i32" for n in ("B", "H", "H_KV", "S_Q", "S_K")},
           **{f"s{t}_{d}": "i32" for t in "qkvo" for d in "bhs"}}
    for d, causal in ((128, True), (128, False), (80, True), (96, False), (192, True), (256, True), (256, False)):
        block_d, block_d2 = column_blocks(d)
        cfg = configs(max(16, 1 << (d - 1).bit_length()), causal, block_d2 > 0)
        const = {"HEAD_DIM": d, "BLOCK_D": block_d, "Q_SIGN": 1, "CAUSAL": causal, "UPCAST": False,
                 "BLOCK_M": cfg["BLOCK_M"], "BLOCK_N": cfg["BLOCK_N"], "WARP_SPECIALIZE": warp_specialize(cfg),
                 "BLOCK_D2": block_d2}
        out.append((f"attention bf16{' causal' if causal else ''} D={d} (TMA, device descriptors)",
                    attn_fwd_tdesc_kernel, sig, const, cfg))
    return out


def host_aot_specs(configs: Any) -> list[tuple[str, Any, dict[str, str], dict[str, Any], dict[str, Any]]]:
    """The compile-only audit's rows for attn_fwd_tma_kernel (host descriptors, bf16 D=128, causal and not; the block
    shapes are part of its signature). configs(causal) gives the tiles (the device kernel's switches are dropped)."""
    out = []
    for causal in (True, False):
        cfg = {k: v for k, v in configs(causal).items() if k not in ("WARP_SPECIALIZE", "SPLIT_D")}
        bm, bn = cfg["BLOCK_M"], cfg["BLOCK_N"]
        sig = {"q_desc": f"tensordesc<bf16[1, 1, {bm}, 128]>", "k_desc": f"tensordesc<bf16[1, 1, {bn}, 128]>",
               "v_desc": f"tensordesc<bf16[1, 1, {bn}, 128]>", "o_desc": f"tensordesc<bf16[1, 1, {bm}, 128]>",
               "qk_scale": "fp32", "S_K": "i32", "GROUP": "i32"}
        const = {"HEAD_DIM": 128, "Q_SIGN": 1, "CAUSAL": causal, "UPCAST": False, "BLOCK_M": bm, "BLOCK_N": bn}
        out.append((f"attention bf16{' causal' if causal else ''} D=128 (TMA)", attn_fwd_tma_kernel, sig, const, cfg))
    return out


def launch(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, o: torch.Tensor, qk_scale: float, grid: tuple[int, ...],
           consts: dict[str, Any], cfg: dict[str, Any]) -> None:
    """attn_fwd_tdesc_kernel over (B, H, S, D) tensors whose layout tma_layout_ok accepted. cfg may carry
    WARP_SPECIALIZE (default: warp_specialize(cfg)) and SPLIT_D (default on: column_blocks)."""
    ensure_allocator()
    B, H, S_q, D = q.shape
    cfg = {"WARP_SPECIALIZE": warp_specialize(cfg), **cfg}
    block_d, block_d2 = column_blocks(D, bool(cfg.pop("SPLIT_D", True)))
    launch_kernel(attn_fwd_tdesc_kernel, grid, q, k, v, o, qk_scale, B, H, k.shape[1], S_q, k.shape[2], *q.stride()[:3],
                                *k.stride()[:3], *v.stride()[:3], *o.stride()[:3], HEAD_DIM=D, BLOCK_D=block_d,
                                BLOCK_D2=block_d2, **consts, **cfg)


# ---- host descriptors (triton.tools.tensor_descriptor): the kernel attention(kernel="tma") runs -------------------

@triton.jit
def _attn_tma_block(acc, l_i, m_i, q, k_desc, v_desc, b, kh, start_n, offs_m, offs_n, S_K, qk_scale,
                    BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr, MASKED: tl.constexpr, UPCAST: tl.constexpr,
                    CAUSAL: tl.constexpr):
    """_attn_block with K and V tiles fetched by TMA (rows past S_K come back as zeros; HEAD_DIM is the tile's width,
    BLOCK_D for attn_fwd_tdesc_kernel)."""
    k = k_desc.load([b, kh, start_n, 0]).reshape(BLOCK_N, HEAD_DIM)
    v = v_desc.load([b, kh, start_n, 0]).reshape(BLOCK_N, HEAD_DIM)
    if UPCAST:
        k = k.to(tl.float32)
        v = v.to(tl.float32)
    # DOT_PREC "ieee" named here, not left to a default: Triton 3.6 passes a helper's default string unwrapped ("'str'
    # object has no attribute 'type'"), which broke this kernel, attention's default for large D = 128 on Hopper,
    # from session 9 until session 10 (found by benchmarks/tune_attention_shapes.py --gaps). 16-bit tiles only.
    return _softmax_update(acc, l_i, m_i, tl.dot(q, k.T), v, offs_m, start_n + offs_n, S_K, qk_scale, MASKED, CAUSAL,
                           "ieee")


@triton.jit
def attn_fwd_tma_kernel(q_desc, k_desc, v_desc, o_desc, qk_scale, S_K, GROUP, HEAD_DIM: tl.constexpr,
                        Q_SIGN: tl.constexpr, CAUSAL: tl.constexpr, UPCAST: tl.constexpr, BLOCK_M: tl.constexpr,
                        BLOCK_N: tl.constexpr):
    """Hopper: the same algorithm as attn_fwd_kernel, with Q, K, V and O tiles moved by the tensor-memory accelerator
    through 4-D descriptors over the (B, H, S, D) tensors as they lie (any layout with a unit, 16-byte aligned last
    stride, so the transposed model layout too) — reads past S are zero-filled per head, the store drops rows past
    S_q — and the unmasked key loop warp-specialised (producer warps issue the loads, consumer warps do the math).
    Power-of-two D only (a descriptor's block is the tile). UPCAST: see attention()."""
    start_m = tl.program_id(0)
    if CAUSAL:
        start_m = tl.num_programs(0) - 1 - start_m  # heaviest tiles first, as in attn_fwd_kernel
    h = tl.program_id(1)
    b = tl.program_id(2)
    kh = h // GROUP
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    q = _signed(q_desc.load([b, h, start_m * BLOCK_M, 0]).reshape(BLOCK_M, HEAD_DIM), Q_SIGN, UPCAST)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    lo_masked, hi = _key_ranges(start_m, S_K, BLOCK_M, BLOCK_N, CAUSAL)
    for start_n in tl.range(0, lo_masked, BLOCK_N, warp_specialize=True):
        acc, l_i, m_i = _attn_tma_block(acc, l_i, m_i, q, k_desc, v_desc, b, kh, start_n, offs_m, offs_n, S_K,
                                        qk_scale, BLOCK_N, HEAD_DIM, False, UPCAST, CAUSAL)
    for start_n in range(lo_masked, hi, BLOCK_N):
        acc, l_i, m_i = _attn_tma_block(acc, l_i, m_i, q, k_desc, v_desc, b, kh, start_n, offs_m, offs_n, S_K,
                                        qk_scale, BLOCK_N, HEAD_DIM, True, UPCAST, CAUSAL)
    acc = acc / tl.where(l_i == 0.0, 1.0, l_i)[:, None]  # a row with no finite score: 0, as SDPA gives
    o_desc.store([b, h, start_m * BLOCK_M, 0], acc.to(o_desc.dtype).reshape(1, 1, BLOCK_M, HEAD_DIM))
