"""Attention forward (FlashAttention-2 style): O = softmax(Q·Kᵀ·scale [+ causal mask]) · V, the same function as
torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=sm_scale, enable_gqa=True).
Q is (B, H_q, S_q, D), K and V are (B, H_kv, S_k, D) with H_q a multiple of H_kv (GQA/MQA: query head h reads key
head h // (H_q / H_kv)), any strides (the (B, S, H, D).transpose(1, 2) layout models produce is read in place), any
D from 1 to 256 (a power-of-two BLOCK_D, masked on D only when D is not one). Causal is SDPA's: top-left aligned,
query i sees keys j <= i, also when S_q != S_k. Each program owns BLOCK_M query rows and streams K/V tiles, keeping
the running max and sum (online softmax, base-2 exponentials) so the S_q×S_k score matrix is never written.
FLOPs 4·B·H·S_q·S_k·D (about half when causal); bytes e·(2·B·H_q·S_q + 2·B·H_kv·S_k)·D."""

from __future__ import annotations

import numbers
from typing import Any

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels.launch_site import DYN, Site
from rocm_triton_doctor.kernels import argcheck, policy, tunecache
from rocm_triton_doctor.kernels.attention_blocks import _attn_block, _attn_block_cols, _bhs, _key_ranges, _signed
from rocm_triton_doctor.kernels.policy_attention import column_blocks
from rocm_triton_doctor.kernels.base import cdiv, device_cus, tma_layout_ok, upcast_dots
from rocm_triton_doctor.kernels.attention_parts import (  # noqa: F401 - re-exported (backward, split, tests)
    LOG2E, MAX_SCALE, _check_lse, fp32_dots, heads4, kernel_scale, row_strides, sdpa_lead, underflow_to_zero,
    visible_pairs)

DTYPES = (torch.float16, torch.bfloat16, torch.float32)
MAX_HEAD_DIM = 256
CONFIG_KEYS = ("BLOCK_M", "BLOCK_N", "num_warps", "num_stages", "WARP_SPECIALIZE", "SPLIT_D", "SPLITS")
KERNELS = ("auto", "pointer", "tma", "tma_device")


@triton.jit
def attn_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, qk_scale, S_Q, S_K, GROUP, sq_b, sq_h, sq_s, sq_d, sk_b, sk_h, sk_s,
                    sk_d, sv_b, sv_h, sv_s, sv_d, so_b, so_h, so_s, so_d, HEAD_DIM: tl.constexpr,
                    BLOCK_D: tl.constexpr, Q_SIGN: tl.constexpr, CAUSAL: tl.constexpr, UPCAST: tl.constexpr,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, lse_ptr=None, STATS: tl.constexpr = False,
                    DOT_PREC: tl.constexpr = "ieee", DIV: tl.constexpr = 1, BLOCK_D2: tl.constexpr = 0):
    # DIV: the (b, h, s) strides arrive divided by it (_bhs, row_strides).
    # BLOCK_D2 > 0: the head dim in two column blocks [0, BLOCK_D) and [BLOCK_D, BLOCK_D + BLOCK_D2) (column_blocks:
    # D = 160 as 128 + 32), two accumulators, instead of one block padded to the power of two above D.
    # DOT_PREC: tl.dot's input_precision for fp32 tiles (fp32_dots; 16-bit tiles ignore it).
    # STATS: also store each row's log2-sum-exp of the scaled scores (fp32, (B, H, S_q) contiguous) for the backward.
    # Grid (query tiles, H, B): tiles fastest, so the programs of one head, which read the same K/V, run together;
    # B and H in their own dimensions (each up to 65535 on CUDA) so B·H has no such limit (a decode batch of 2048
    # with 32 heads), with no division to split them.
    start_m = tl.program_id(0)
    if CAUSAL:
        # Heaviest query tiles (most keys below the diagonal) first: a head's tiles are scheduled in grid order, so the
        # short ones now fill the last wave instead of the long ones starting last (the tail).
        start_m = tl.num_programs(0) - 1 - start_m
    h = tl.program_id(1).to(tl.int64)
    b = tl.program_id(2).to(tl.int64)
    sq_b, sq_h, sq_s = _bhs(sq_b, sq_h, sq_s, DIV)
    sk_b, sk_h, sk_s = _bhs(sk_b, sk_h, sk_s, DIV)
    sv_b, sv_h, sv_s = _bhs(sv_b, sv_h, sv_s, DIV)
    so_b, so_h, so_s = _bhs(so_b, so_h, so_s, DIV)
    q_base = b * sq_b + h * sq_h
    k_base = b * sk_b + (h // GROUP) * sk_h
    v_base = b * sv_b + (h // GROUP) * sv_h
    o_base = b * so_b + h * so_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    rows_ok = offs_m[:, None] < S_Q
    if BLOCK_D != HEAD_DIM:
        rows_ok = rows_ok & (offs_d[None, :] < HEAD_DIM)
    q = _signed(tl.load(q_ptr + q_base + offs_m[:, None] * sq_s + offs_d[None, :] * sq_d, mask=rows_ok, other=0.0),
                Q_SIGN, UPCAST)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)
    lo_masked, hi = _key_ranges(start_m, S_K, BLOCK_M, BLOCK_N, CAUSAL)
    if BLOCK_D2 > 0:
        offs_d2 = BLOCK_D + tl.arange(0, BLOCK_D2)
        rows_ok2 = (offs_m[:, None] < S_Q) & (offs_d2[None, :] < HEAD_DIM)
        q2 = _signed(tl.load(q_ptr + q_base + offs_m[:, None] * sq_s + offs_d2[None, :] * sq_d, mask=rows_ok2,
                             other=0.0), Q_SIGN, UPCAST)
        acc2 = tl.zeros((BLOCK_M, BLOCK_D2), dtype=tl.float32)
        for start_n in range(0, lo_masked, BLOCK_N):
            acc, acc2, l_i, m_i = _attn_block_cols(acc, acc2, l_i, m_i, q, q2, k_ptr, v_ptr, k_base, v_base, start_n,
                                                   offs_m, offs_n, offs_d, offs_d2, S_K, sk_s, sk_d, sv_s, sv_d,
                                                   qk_scale, HEAD_DIM, BLOCK_D, BLOCK_D2, False, UPCAST, False,
                                                   DOT_PREC)
        for start_n in range(lo_masked, hi, BLOCK_N):
            acc, acc2, l_i, m_i = _attn_block_cols(acc, acc2, l_i, m_i, q, q2, k_ptr, v_ptr, k_base, v_base, start_n,
                                                   offs_m, offs_n, offs_d, offs_d2, S_K, sk_s, sk_d, sv_s, sv_d,
                                                   qk_scale, HEAD_DIM, BLOCK_D, BLOCK_D2, True, UPCAST, CAUSAL,
                                                   DOT_PREC)
        # stored here, before acc's division, so the two accumulators are not live at once (4 registers on sm_90)
        tl.store(o_ptr + o_base + offs_m[:, None] * so_s + offs_d2[None, :] * so_d,
                 (acc2 / tl.where(l_i == 0.0, 1.0, l_i)[:, None]).to(o_ptr.dtype.element_ty), mask=rows_ok2)
    else:
        for start_n in range(0, lo_masked, BLOCK_N):
            acc, l_i, m_i = _attn_block(acc, l_i, m_i, q, k_ptr, v_ptr, k_base, v_base, start_n, offs_m, offs_n,
                                        offs_d, S_K, sk_s, sk_d, sv_s, sv_d, qk_scale, HEAD_DIM, BLOCK_D, False, UPCAST,
                                        False, DOT_PREC)
        for start_n in range(lo_masked, hi, BLOCK_N):
            acc, l_i, m_i = _attn_block(acc, l_i, m_i, q, k_ptr, v_ptr, k_base, v_base, start_n, offs_m, offs_n,
                                        offs_d, S_K, sk_s, sk_d, sv_s, sv_d, qk_scale, HEAD_DIM, BLOCK_D, True, UPCAST,
                                        CAUSAL, DOT_PREC)
    acc = acc / tl.where(l_i == 0.0, 1.0, l_i)[:, None]  # a row with no finite score: 0, as SDPA gives
    if STATS:  # +inf for a row with no finite score, so that the backward's exp2(s - lse) is 0 there
        lse = tl.where(l_i == 0.0, float("inf"), m_i + tl.log2(l_i))
        tl.store(lse_ptr + (b * tl.num_programs(1) + h) * S_Q + offs_m, lse, mask=offs_m < S_Q)
    tl.store(o_ptr + o_base + offs_m[:, None] * so_s + offs_d[None, :] * so_d, acc.to(o_ptr.dtype.element_ty),
             mask=rows_ok)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False, sm_scale: float | None = None,
              out: torch.Tensor | None = None, kernel: str = "auto", config: dict[str, Any] | None = None,
              lse: torch.Tensor | None = None) -> torch.Tensor:
    """SDPA's forward: q (B, H_q, S_q, D), k and v (B, H_kv, S_k, D), H_q a multiple of H_kv, one dtype (fp16, bf16,
    fp32), any strides, 1 <= D <= 256; SDPA's (H, S, D) and (..., H, S, D) shapes too (the leading dims as B, the output
    in q's shape). sm_scale: finite, |sm_scale| <= 1e30 (default 1/sqrt(D)). out: a fresh tensor laid out
    like q (so the transposed model layout comes back transposed, ready for .transpose(1, 2).reshape), or `out`
    (q's shape and dtype, any strides, sharing no memory with q, k or v). Inputs that require grad are refused under
    grad mode (gradients: autograd_op). kernel: "auto" (policy.attention_kernel's choice), "pointer"
    (attn_fwd_kernel), "tma" (attn_fwd_tma_kernel, host descriptors: fp16/bf16, power-of-two D >= 16, unit last
    strides, a Triton with tensor descriptors, Hopper or the interpreter) or "tma_device" (attention_tma.
    attn_fwd_tdesc_kernel, descriptors built on the GPU: fp16/bf16, any D with 16-byte aligned rows, a Triton with
    tl.make_tensor_descriptor). config: tiles for tests and the tuning scripts (BLOCK_M, BLOCK_N, num_warps,
    num_stages; SPLIT_D for the pointer kernel and tma_device, WARP_SPECIALIZE for tma_device). lse: an fp32
    (B, H_q, S_q) contiguous tensor that receives the rows' log2-sum-exp for the backward (pointer kernel only:
    STATS)."""
    if kernel not in KERNELS:
        raise ValueError(f"attention: kernel must be one of {', '.join(KERNELS)}, got {kernel!r}")
    causal = argcheck.check_flag("attention", "causal", causal)
    dev = argcheck.check_tensors("attention", q=q, k=k, v=v, out=out)
    dtype = q.dtype
    if k.dtype != dtype or v.dtype != dtype:
        raise TypeError(f"attention: mixed dtypes {q.dtype}, {k.dtype}, {v.dtype}")
    if dtype not in DTYPES:
        raise TypeError(f"attention: dtype {dtype} not supported (use float16, bfloat16 or float32)")
    if (lead := sdpa_lead(q, k, v)) is not None:
        # SDPA's (..., H, S, D): a 3-D (H, S, D) as one batch, more leading dims folded into B (views, no copy).
        q4, k4, v4 = (heads4(t, name) for t, name in ((q, "q"), (k, "k"), (v, "v")))
        o4 = None if out is None else heads4(out, "out") if tuple(out.shape) == tuple(q.shape) else out
        lse3 = lse.view(q4.shape[:3]) if lse is not None and lse.shape == q.shape[:-1] and lse.is_contiguous() else lse
        o = attention(q4, k4, v4, causal, sm_scale, o4, kernel, config, lse3)
        return out if out is not None else o.view(*lead, *o.shape[1:])
    if q.dim() != 4 or k.dim() != 4 or k.shape != v.shape or q.shape[0] != k.shape[0] or q.shape[3] != k.shape[3]:
        raise ValueError(f"attention: q must be (B, H_q, S_q, D) and k, v (B, H_kv, S_k, D) (or SDPA's (..., H, S, D) "
                         f"with the same leading dims), got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    B, H, S_q, D = q.shape
    H_kv, S_k = k.shape[1], k.shape[2]
    if q.numel() and not 1 <= D <= MAX_HEAD_DIM:
        raise ValueError(f"attention: head dim {D} not supported (1 to {MAX_HEAD_DIM})")
    if (H_kv == 0 and H > 0) or (H_kv > 0 and H % H_kv):
        raise ValueError(f"attention: query heads ({H}) must be a multiple of key/value heads ({H_kv})")
    if sm_scale is not None and (isinstance(sm_scale, bool) or not isinstance(sm_scale, numbers.Real)):
        raise TypeError(f"attention: sm_scale must be a real number or None, got {type(sm_scale).__name__}")
    scale = kernel_scale(D, sm_scale)
    if lse is not None:
        _check_lse(lse, (B, H, S_q), dev, q, k, v, out)
    if out is None:
        o = torch.empty_like(q)  # q's strides when q is dense (the model layout stays transposed), else contiguous
    else:
        o = argcheck.check_out("attention", out, tuple(q.shape), (dtype,), dev, q, k, v)
    if o.numel() == 0:
        return o
    if S_k == 0:
        if lse is not None:
            lse.fill_(float("inf"))
        return o.zero_()  # softmax over no keys: SDPA returns zeros
    argcheck.check_config_dict("attention", config)
    if config is None:
        # The pointer kernel's launch for this call signature, worked out once (issue #16 item 4; gemm does the same):
        # shapes, strides, dtype, 16-byte alignment, options and the tune-cache state fix every decision below.
        pkey = (dev, dtype, q.shape, k.shape, q.stride(), k.stride(), v.stride(), o.stride(), bool(causal), scale,
                kernel, lse is not None, q.data_ptr() & 15, k.data_ptr() & 15, v.data_ptr() & 15, o.data_ptr() & 15,
                tunecache.generation(), tunecache.enabled())
        plan = _PLANS.get(pkey)
        if plan is not None:
            if plan[0] == "split":
                plan[1](q, k, v, o, lse)
                return o
            tunecache.note("attention", plan[0])
            plan[1](q, k, v, o, lse)
            return o
    else:
        pkey = None
    for name, t in (("q", q), ("k", k), ("v", v), ("out", o)):  # once per call signature (the plan remembers)
        if argcheck.max_offset(t) >= argcheck.INT32_LIMIT:
            # The kernels index rows with 32-bit offsets: refuse rather than wrap (a segfault, or wrong rows).
            raise ValueError(f"attention: {name} spans 2^31 elements or more of memory (shape {tuple(t.shape)}, "
                             f"strides {t.stride()}); split the batch or the sequence")
    target = policy.target_for_device(dev.type)
    block_d = max(16, 1 << (D - 1).bit_length())
    # Q_SIGN folds the scale's sign into Q (exact), so the kernels always scale by a positive number.
    consts = {"Q_SIGN": 0 if scale == 0 else (1 if scale > 0 else -1), "CAUSAL": bool(causal),
              "UPCAST": upcast_dots(target, dtype)}
    qk_scale = (abs(scale) if scale else 1.0) * LOG2E  # fold log2(e) in: exp(x) == exp2(x * log2 e)
    tma_layout = q.element_size() == 2 and tma_layout_ok(q, k, v, o)
    if kernel == "tma" and not (tma_layout and block_d == D and policy.tma_supported(target)):
        raise ValueError("attention: the TMA kernel needs fp16/bf16 tensors with a power-of-two head dim >= 16, unit "
                         "last strides and 16-byte aligned rows, on a target and Triton with tensor descriptors")
    if kernel == "tma_device" and not (tma_layout and policy.tensor_desc_device_supported(target)):
        raise ValueError("attention: the device-descriptor TMA kernel needs fp16/bf16 tensors with unit last strides "
                         "and 16-byte aligned rows, on a target and Triton with tl.make_tensor_descriptor")
    flops = 4.0 * B * H * D * visible_pairs(S_q, S_k, bool(causal))
    if lse is not None and kernel in ("tma", "tma_device"):
        raise ValueError("attention: the row statistics (lse) come from the pointer kernel only")
    # The per-device autotune cache (tunecache.py, `smoke --tune`; one dict lookup, never in the interpreter) holds
    # pointer-kernel configs (tune_candidates): a cached one runs there, as config=<it>, kernel="pointer" would.
    tkey = (str(dtype).removeprefix("torch."), H // H_kv, S_q, S_k, D, bool(causal))
    cached = None if config is not None or kernel not in ("auto", "pointer") else tunecache.lookup("attention", tkey, target)
    use = "pointer" if lse is not None or cached else kernel if kernel != "auto" else policy.attention_kernel(
        target, D, flops, tma_layout, bool(causal), S_k)
    if config is not None and "SPLITS" in config:
        if causal or use != "pointer":
            raise ValueError("attention: SPLITS (split keys) is for the pointer kernel without a causal mask")
        split_cfg: dict[str, Any] | None = _checked_config(config)
    else:
        split_cfg = None if causal or use != "pointer" or config is not None else policy.attention_split_config(
            target, B, H, H_kv, S_q, S_k, block_d, q.element_size(), device_cus(dev))
    if split_cfg is not None:
        # Few query tiles against many keys (decode): split the keys and merge (attention_split.py).
        run = attention_split.SplitLaunch(q, k, v, o, lse is not None, qk_scale, consts, split_cfg,
                                          {"HEAD_DIM": D, "BLOCK_D": block_d, **fp32_dots(target, dtype)})
        _remember(pkey, ("split", run))
        run(q, k, v, o, lse)
        return o
    cols = column_blocks(D)
    split = cols[1] > 0 and (use == "tma_device" or (use == "pointer" and policy.pointer_column_split(target, D)))
    # The pointer kernel's tiles follow the columns it computes (160 for D = 160 in two blocks, 256 padded).
    width = sum(cols) if split and use == "pointer" else block_d
    cfg = _checked_config(chosen) if (chosen := cached or config) is not None else policy.attention_config(
        target, width, q.element_size(), bool(causal), tma=use != "pointer",
        mid=flops < policy.TMA_ATTENTION_MIN_FLOPS, split=split and use == "tma_device",
        small_grid=policy.attention_small_grid(B, H, S_q, device_cus(dev)), keys=S_k if use == "pointer" else 0)
    grid = (cdiv(S_q, cfg["BLOCK_M"]), H, B)
    if use == "tma_device":
        from rocm_triton_doctor.kernels import attention_tma

        attention_tma.launch(q, k, v, o, qk_scale, grid, consts, cfg)
        return o
    # SPLIT_D: the pointer kernel's head dim in two column blocks (column_blocks), as the config or the policy says.
    block_d, block_d2 = column_blocks(D, bool(cfg.pop("SPLIT_D", split)))
    cfg.pop("WARP_SPECIALIZE", None)  # only the device-descriptor kernel has this switch
    if use == "tma":
        from triton.tools.tensor_descriptor import TensorDescriptor

        from rocm_triton_doctor.kernels import attention_tma

        bm, bn = cfg["BLOCK_M"], cfg["BLOCK_N"]
        descs = [TensorDescriptor.from_tensor(t, [1, 1, blk, D]) for t, blk in ((q, bm), (k, bn), (v, bn), (o, bm))]
        attention_tma.attn_fwd_tma_kernel[grid](*descs, qk_scale, S_k, H // H_kv, HEAD_DIM=D, **consts, **cfg)
        return o
    div, strides = row_strides(q, k, v, o)
    ints = (qk_scale, S_q, S_k, H // H_kv, *strides)
    kw = {"HEAD_DIM": D, "BLOCK_D": block_d, "BLOCK_D2": block_d2, **consts, **cfg, "STATS": lse is not None,
          **fp32_dots(target, dtype), "DIV": div}
    site = Site(attn_fwd_kernel, grid, (DYN,) * 4 + ints, {"lse_ptr": DYN, **kw})  # launch_site.py: q, k, v, o, lse
    _remember(pkey, (tkey, site))
    site(q, k, v, o, lse)
    return o


PLAN_LIMIT = 4096
_PLANS: dict[tuple[Any, ...], tuple[Any, ...]] = {}  # (tune key, the pointer kernel's Site) or ("split", SplitLaunch)


def _remember(pkey: tuple[Any, ...] | None, plan: tuple[Any, ...]) -> None:
    """Keep a call signature's launch plan (none for config= calls, pkey None); the table is cleared when full."""
    if pkey is None:
        return
    if len(_PLANS) >= PLAN_LIMIT:
        _PLANS.clear()
    _PLANS[pkey] = plan


def clear_plans() -> None:
    """Forget the cached launch plans (tests that change the policy)."""
    _PLANS.clear()




def _checked_config(config: dict[str, Any]) -> dict[str, Any]:
    unknown = set(config) - set(CONFIG_KEYS)
    if unknown:
        raise ValueError(f"attention: unknown config keys {sorted(unknown)} (use {', '.join(CONFIG_KEYS)})")
    cfg = {"num_warps": 4, "num_stages": 1, **config}
    for key in ("BLOCK_M", "BLOCK_N"):
        argcheck.check_block("attention", key, cfg.get(key), lo=16, hi=256)
    argcheck.check_block("attention", "num_warps", cfg["num_warps"], lo=1, hi=16)  # a hand-edited tune cache entry
    argcheck.check_int("attention", "num_stages", cfg["num_stages"], 1, 8)
    if "SPLITS" in cfg:
        argcheck.check_int("attention", "SPLITS", cfg["SPLITS"], 1, 4096)
    return cfg


tunecache.register_validator("attention", _checked_config)  # cached entries pass the config= check, or are dropped


def tune_candidates(key: tuple[Any, ...]) -> list[dict[str, Any]]:
    """Pointer-kernel tiles `smoke --tune` times for key (dtype, H_q // H_kv, S_q, S_k, D, causal); D > 128 the tiles
    policy.attention_config picks between and 64x32 w8, AMD builds 1 stage (as policy.attention_config says why)."""
    tiles = [(64, 64, 4, 2), (128, 64, 8, 2), (64, 32, 8, 2)] if key[4] > 128 else [(128, 64, 8, 3), (64, 64, 4, 3), (128, 32, 8, 2),
                                                                   (64, 32, 4, 2)]
    hip = torch.version.hip is not None
    return [{"BLOCK_M": m, "BLOCK_N": n, "num_warps": w, "num_stages": 1 if hip else s} for m, n, w, s in tiles]


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool,
              sm_scale: float | None = None) -> torch.Tensor:
    """torch's SDPA (math) in fp64 on CPU, fp32 elsewhere: the function attention() promises to compute. Causal is
    passed as SDPA's own top-left mask (tril of ones, S_q x S_k), which is what is_causal=True means, because torch
    2.13's CPU math path with is_causal=True and a scale <= 0 returns all NaN (it masks with -inf before scaling: the
    defect this project's kernel had, kernel-edge-cases.md #8); with a boolean mask it computes the right values."""
    acc_t = torch.float64 if q.device.type == "cpu" else torch.float32
    mask = None
    if causal:
        mask = torch.ones(q.shape[2], k.shape[2], dtype=torch.bool, device=q.device).tril()
    return torch.nn.functional.scaled_dot_product_attention(q.to(acc_t), k.to(acc_t), v.to(acc_t), attn_mask=mask,
                                                            scale=sm_scale, enable_gqa=True)


# The smoke cases and the compile-only audit's specs (forward and backward) live in attention_cases.py (imported
# last: they call attention()).
from rocm_triton_doctor.kernels.attention_cases import aot_specs, backward_aot_specs, cases, make_case  # noqa: E402,F401
from rocm_triton_doctor.kernels import attention_split  # noqa: E402 (it imports this module's kernels' helpers)


# ---- autograd: attention_backward.py holds the backward kernels, attention_autograd.py the custom ops and the eager
# Function (both import this module's helpers)
from rocm_triton_doctor.kernels import attention_autograd as _autograd  # noqa: E402

autograd_op = _autograd.autograd_op  # the hook smoke/model_forms.py looks for (an op with a backward)


from rocm_triton_doctor.kernels.base import KernelSpec  # noqa: E402 (appended so KERN-B's rewrite merges)
KERNEL = KernelSpec("attention", "compute", cases, lambda t: aot_specs(t) + backward_aot_specs(t), perf_targets=("attention",))
