"""Device functions shared by the GEMM kernels in gemm_kernels.py (the pointer kernel, its split-K reduce pass and the
persistent TMA kernel): grouped tile order, 64-bit offsets when needed, and the fused epilogue + single store; and the
launcher's host helpers (stride hints, alignment, the config check, the GEMV's layout checks, folded activations, when
offsets need 64 bits, the tune-cache key, reference and eager forms)."""

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels import argcheck
from rocm_triton_doctor.kernels.aligned_copy import misaligned
from rocm_triton_doctor.kernels.base import device_cus, no_tf32
from rocm_triton_doctor.kernels.common import dropout_tile, gelu_tanh
from rocm_triton_doctor.kernels.policy_gemv import gemv_shift_misfit

CONFIG_KEYS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "SPLIT_K", "num_warps", "num_stages", "ALIGN_COPY", "B_PAD")


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
def _wide(x, INT64: tl.constexpr):
    """Offsets in 64 bits when some operand's element offsets reach 2^31 (a view into a big buffer: a 32-bit product
    wrapped and the kernel read outside the tensor, SIGSEGV, kernel-edge-cases.md #6); 32 bits otherwise (cheaper
    address arithmetic)."""
    if INT64:
        return x.to(tl.int64)
    else:
        return x


@triton.jit
def _k_step(stride, BLOCK_K: tl.constexpr, INT64: tl.constexpr):
    """How far one K block moves a pointer, in 64 bits when offsets need them."""
    if INT64:
        return tl.full([], BLOCK_K, tl.int64) * stride
    else:
        return BLOCK_K * stride


@triton.jit
def _k_range(K, pid_k, SPLIT_K: tl.constexpr, BLOCK_K: tl.constexpr):
    """(full K blocks, first and last-plus-one full block of split pid_k): the whole range for SPLIT_K 1, else
    equal shares of the full blocks (the last split also owns the partial tail block, at block k_full). Both
    pointer kernels (gemm_kernel, gemv_kernel)."""
    k_full = K // BLOCK_K
    if SPLIT_K == 1:
        k_lo = 0
        k_hi = k_full
    else:
        per = tl.cdiv(k_full, SPLIT_K)
        k_lo = tl.minimum(pid_k * per, k_full)
        k_hi = tl.minimum(k_lo + per, k_full)
    return k_full, k_lo, k_hi


@triton.jit
def _scaled(stride, DIV: tl.constexpr, INT64: tl.constexpr):
    """stride · DIV (the launcher passed stride // DIV, see aligned_copy.split_stride), in 64 bits when offsets need them: a stride
    of 2^31 + 16 arrives as the 32-bit 2^27 + 1, and a 32-bit product would wrap (a segfault in the interpreter)."""
    if INT64:
        return tl.full([], DIV, tl.int64) * stride
    else:
        return stride * DIV


@triton.jit
def _epilogue_store(acc, c_ptr, bias_ptr, offs_m, offs_n, rows, cols, col0, M, N, stride_cm, stride_cn, stride_bias,
                    seed, threshold, scale, EPILOGUE: tl.constexpr, HAS_DROPOUT: tl.constexpr, BLOCK_M: tl.constexpr,
                    BLOCK_N: tl.constexpr):
    """bias, activation and dropout on the fp32 accumulator, then the one store of C (every GEMM kernel). rows/cols:
    offs_m/offs_n in the width used for addressing."""
    mask_m = offs_m < M
    mask_n = offs_n < N
    if EPILOGUE >= 1:
        bias = tl.load(bias_ptr + cols * stride_bias, mask=mask_n, other=0.0).to(tl.float32)
        acc = acc + bias[None, :]
    if EPILOGUE == 2:
        # where(x < 0, 0, x), not maximum(x, 0): NaN < 0 is false, so NaN stays NaN as in torch.relu (maximum turned
        # NaN into 0, kernel-edge-cases.md #7).
        acc = tl.where(acc < 0.0, 0.0, acc)
    if EPILOGUE == 3:
        acc = gelu_tanh(acc)
    if EPILOGUE == 4:  # bias_gelu with the hardware tanh (gemm.epilogue_code: NVIDIA, 16-bit C)
        acc = gelu_tanh(acc, True)
    acc = dropout_tile(acc, offs_m, col0, N, seed, threshold, scale, HAS_DROPOUT, BLOCK_M, BLOCK_N)
    c_ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


# -- host side: config check, fp64 reference, eager baseline, cost ------------------------------------------
def _checked_config(config: dict[str, Any]) -> dict[str, Any]:
    """A caller's tiles (tests, tune.py): clear errors instead of an interpreter trace (kernel-edge-cases.md #22).
    ALIGN_COPY and B_PAD (read a copied B to its zero padding) alone keep the policy's tiles and only set those
    switches. {"GEMV": True, ...}: tiles for the GEMV kernel (checked_gemv_config), as a tune-cache entry stores
    them."""
    if "GEMV" in config:
        if config["GEMV"] is not True:
            raise ValueError(f"gemm: GEMV must be True when given, got {config['GEMV']!r}")
        return {"GEMV": True, **checked_gemv_config({k: v for k, v in config.items() if k != "GEMV"})}
    unknown = set(config) - set(CONFIG_KEYS)
    if unknown:
        raise ValueError(f"gemm: unknown config keys {sorted(unknown)} (use {', '.join(CONFIG_KEYS)}, or GEMV with "
                         f"{', '.join(GEMV_CONFIG_KEYS)})")
    for key in ("ALIGN_COPY", "B_PAD"):
        if key in config and not isinstance(config[key], bool):
            raise ValueError(f"gemm: {key} must be True or False, got {config[key]!r}")
    if set(config) <= {"ALIGN_COPY", "B_PAD"}:
        return dict(config)
    cfg = {"GROUP_M": 8, "num_warps": 4, **config}
    for key in ("BLOCK_M", "BLOCK_N", "BLOCK_K"):
        argcheck.check_block("gemm", key, cfg.get(key))
    # Ints in range, also for the launch options: a hand-edited tune-cache entry (tunecache.py) is checked here too,
    # and num_warps=3 would otherwise fail inside Triton's compiler instead of being dropped with a warning.
    argcheck.check_block("gemm", "num_warps", cfg["num_warps"], lo=1, hi=16)
    for key, hi in (("SPLIT_K", 64), ("GROUP_M", 64), ("num_stages", 8)):
        argcheck.check_int("gemm", key, cfg.get(key, 1), 1, hi)
    return cfg


GEMV_CONFIG_KEYS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "SPLIT_K", "STAGES", "SHIFT", "num_warps", "num_stages")


def checked_gemv_config(config: dict[str, Any]) -> dict[str, Any]:
    """A caller's tiles for gemv_kernel (kernel="gemv"): the three blocks given, powers of two, BLOCK_M <= 8 (one
    accumulator a row; more rows run in chunks) and BLOCK_N >= 16 (the dropout mask draws 8 columns a number); no
    tensor-core floor on BLOCK_M and BLOCK_K."""
    unknown = set(config) - set(GEMV_CONFIG_KEYS)
    if unknown:
        raise ValueError(f"gemm: unknown GEMV config keys {sorted(unknown)} (use {', '.join(GEMV_CONFIG_KEYS)})")
    if not {"BLOCK_M", "BLOCK_N", "BLOCK_K"} <= set(config):
        raise ValueError("gemm: a GEMV config needs BLOCK_M, BLOCK_N and BLOCK_K")
    argcheck.check_block("gemm", "BLOCK_M", config["BLOCK_M"], lo=1, hi=8)
    argcheck.check_block("gemm", "BLOCK_N", config["BLOCK_N"], lo=16, hi=1024)
    argcheck.check_block("gemm", "BLOCK_K", config["BLOCK_K"], lo=1, hi=1024)
    argcheck.check_block("gemm", "num_warps", config.get("num_warps", 4), lo=1, hi=16)
    for key, hi in (("SPLIT_K", 64), ("STAGES", 8), ("SHIFT", 8), ("num_stages", 8)):
        argcheck.check_int("gemm", key, config.get(key, 1), 1, hi)
    return dict(config)


# -- the per-device autotune cache (tunecache.py, smoke --tune) ---------------------------------------------------
DTYPE_NAMES = {torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float32: "float32"}


def tune_key(a: torch.Tensor, b: torch.Tensor, epilogue: str, p: float, precision: str) -> tuple[Any, ...]:
    """What gemm()'s cache entry is keyed on: everything the policy's choice depends on besides the device (the cache
    file is per device): dtype, M, N, K, the epilogue and dropout, fp32's precision, A K-contiguous, B N-major, and
    whether A/B are misaligned (aligned-copy candidates). Whether the policy would take the TMA kernel follows from
    these (dtype, shape, layout, alignment), so a config measured for one key was measured against the same policy
    choice. Plain values: the key is a tuple and its text (tunecache.key_text) names the entry in the file."""
    return (DTYPE_NAMES[a.dtype], a.shape[0], b.shape[1], a.shape[1], epilogue, p > 0.0,
            precision if a.dtype == torch.float32 else "ieee", a.stride(1) == 1, b.stride(1) == 1 or b.stride(0) != 1,
            misaligned(a), misaligned(b))


def tune_candidates(key: tuple[Any, ...]) -> list[dict[str, Any]]:
    """Configs `smoke --tune` times against the policy for `key` (tune_key's): pointer-kernel configs, which gemm()
    runs on that kernel when cached, and for rows the GEMV kernel may take its configs too ({"GEMV": True, ...},
    _gemv_candidates), which it runs there. The policy's open questions (policy.gemm_config, _decode_config): decode
    M <= 16 with 16-row tiles and a K split of 1, 2 or 4; fp32 at BLOCK_K 32; 64x64 / 64x128 / 128x128 tiles for
    small and odd sizes; 128x256 where there are enough of them. AMD builds (torch.version.hip) take 2 stages, as
    the policy's HIP configs do (the LDS holds fewer)."""
    dtype, M, N, K = key[0], key[1], key[2], key[3]
    hip = torch.version.hip is not None
    gemv = _gemv_candidates(key)

    def cfg(bm: int, bn: int, bk: int, warps: int, stages: int = 3, split: int = 1, group: int = 8) -> dict[str, Any]:
        return {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": group, "SPLIT_K": split, "num_warps": warps,
                "num_stages": 2 if hip else stages}

    if M <= 16:  # each split keeps >= 4 K blocks (as policy._split_k): fewer leave its pipeline nothing to overlap
        return [cfg(16, 128, 64, 4, 4, split=s, group=1) for s in (1, 2, 4) if s == 1 or 64 * 4 * s <= K] + \
            [cfg(16, 64, 128, 4, 4, group=1)] + gemv
    if dtype == "float32":
        return [cfg(128, 128, 32, 8), cfg(64, 128, 32, 4), cfg(64, 64, 32, 4)] + gemv
    out = [cfg(64, 64, 64, 4), cfg(64, 128, 64, 4, 4), cfg(128, 128, 64, 8)]
    if M * N >= 1024 * 1024:
        out.append(cfg(128, 256, 64, 8, 4))
    return out


def _gemv_candidates(key: tuple[Any, ...]) -> list[dict[str, Any]]:
    """GEMV-kernel configs `smoke --tune` tries for `key` (tune_key's): the policy's tiles (policy_gemv.gemv_config)
    and half / twice their K split and their tile, each marked {"GEMV": True}. Where the policy's rule cannot tell
    (the GEMV and tile kernels within 10-25 % of each other on some decode rows, docs/performance.md "Session 11")
    the device's own timing picks. Rows the GEMV may take: fp32 up to policy.GEMV_FP32_MISALIGNED_ROWS, 16-bit up
    to 8. [] where this process has no GPU target to ask the policy for."""
    from rocm_triton_doctor.kernels import policy

    dtype, M, N, K, b_nmajor = key[0], key[1], key[2], key[3], key[8]
    elem = 4 if dtype == "float32" else 2
    most = policy.GEMV_FP32_MISALIGNED_ROWS if elem == 4 else policy.GEMV_MAX_M
    if most < M or K == 0:
        return []
    try:
        dev = torch.device("cuda")
        target = policy.target_for_device("cuda")
        cus = device_cus(dev)
    except Exception:  # noqa: BLE001 - no GPU runtime here: nothing to tune
        return []
    kmajor = not b_nmajor
    base = dict(policy.gemv_config(target, M, N, K, elem, kmajor, cus, not key[10]))
    wide = "BLOCK_N" if kmajor else "BLOCK_K"
    out = [base, {**base, "SPLIT_K": max(1, base["SPLIT_K"] // 2)}, {**base, "SPLIT_K": min(64, base["SPLIT_K"] * 2)},
           {**base, wide: base[wide] * 2}, {**base, wide: max(16 if kmajor else 1, base[wide] // 2)}]
    seen: list[dict[str, Any]] = []
    for c in out:
        if c not in seen:
            seen.append(c)
    return [{"GEMV": True, **{k: v for k, v in c.items() if k in GEMV_CONFIG_KEYS}} for c in seen]


# -- the GEMV kernel's host helpers (gemm._gemv_plan) and the split-K workspace --------------------------------
def gemv_kmajor(b: torch.Tensor) -> bool:
    """B's K dimension is its contiguous one (an nn.Linear weight read as B^T): gemv_kernel's B_KMAJOR."""
    K, N = b.shape
    return K > 1 and b.stride(0) == 1 and (N == 1 or b.stride(1) != 1)


def gemv_shift_refusal(b: torch.Tensor, shift: int, bn: int, bk: int, split: int, dropout: bool = False) -> str:
    """Why B cannot be read in shifted windows of `shift` elements, or '' where it can: shift a whole 16-byte vector
    of B's dtype, and then a K-major weight (gemv_kshift.gemv_kshift_kernel: K blocks whole windows, and no dropout
    unsplit, whose mask needs contiguous column tiles; checked_gemv_config bounds SPLIT_K) or B's rows contiguous along N
    (gemm_kernels.gemv_kernel's SHIFT: tiles and B's width within policy_gemv.gemv_shift_misfit's limits)."""
    K, N = b.shape
    if shift != 16 // b.element_size():
        return f"must be 1 or {16 // b.element_size()} (16 bytes of {str(b.dtype).removeprefix('torch.')})"
    if gemv_kmajor(b):
        if bk % shift:
            return f"needs BLOCK_K a multiple of it, got {bk}"
        if dropout and split == 1:
            return "with dropout needs SPLIT_K > 1 against a K-major B"
        return ""
    if N > 1 and b.stride(1) != 1:
        return "needs B's rows or columns contiguous"
    return gemv_shift_misfit(shift, N, bn, bk, split)


def _ws_cols(N: int) -> int:
    """The split-K workspace's row length: N padded to a multiple of 4 fp32 (16 bytes)."""
    return -(-N // 4) * 4


def activation_lead(a: torch.Tensor, b: torch.Tensor) -> tuple[int, ...] | None:
    """The leading shape of an `a` of shape (..., K) (F.linear's activations, a 1-D vector) that gemm folds into
    rows; None for a 2-D a, or inputs gemm's checks refuse."""
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dim() not in (0, 2) and b.dim() == 2:
        return tuple(a.shape[:-1])
    return None


def _needs_int64(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, bias: torch.Tensor | None, bm: int, bn: int,
                 bk: int, split: int, extra_n: int = 0) -> bool:
    """The kernels' INT64: some element offset a launch with (bm, bn, bk) tiles forms reaches 2^31 — A, B, C and
    the bias over their tile-padded extents, and the split-K workspace (split, padded M, padded N). extra_n: columns
    the grid covers past N (the GEMV's shifted windows)."""
    M, K = a.shape
    N = b.shape[1]
    pm, pn, pk = -(-M // bm) * bm, -(-(N + extra_n) // bn) * bn, -(-K // bk) * bk
    return max(argcheck.max_offset(a, (pm, pk)), argcheck.max_offset(b, (pk, pn)), argcheck.max_offset(c, (pm, pn)),
               argcheck.max_offset(bias, (pn,)) if bias is not None else 0,
               split * pm * max(pn, _ws_cols(N)) if split > 1 else 0) >= argcheck.INT32_LIMIT


def reference(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor | None, epilogue: str) -> torch.Tensor:
    """fp64 on CPU is exact enough to judge fp32; fp32 elsewhere (matmul in fp64 is slow on GPUs)."""
    acc_t = torch.float64 if a.device.type == "cpu" else torch.float32
    with no_tf32():
        y = a.to(acc_t) @ b.to(acc_t)
    if bias is not None:  # added whenever given, epilogue "none" included (as gemm() does)
        y = y + bias.to(acc_t)
    if epilogue == "bias_relu":
        y = torch.relu(y)
    if epilogue == "bias_gelu":
        y = torch.nn.functional.gelu(y, approximate="tanh")
    return y


def eager(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor | None, epilogue: str, p: float) -> torch.Tensor:
    y = a @ b
    if bias is not None:
        y = y + bias
    if epilogue == "bias_relu":
        y = torch.relu(y)
    if epilogue == "bias_gelu":
        y = torch.nn.functional.gelu(y, approximate="tanh")
    if p > 0:
        y = torch.nn.functional.dropout(y, p=p, training=True)
    return y


def flops(M: int, N: int, K: int) -> float:
    return 2.0 * M * N * K


def bytes_moved(M: int, N: int, K: int, elem: int, bias: bool) -> float:
    return float(elem * (M * K + K * N + M * N + (N if bias else 0)))
