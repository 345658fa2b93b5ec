"""Launch policy: block sizes, warps, stages and AMD-specific knobs, keyed on the active target (DESIGN §5).

The ONE place that knows backends differ. Sources: triton python/tutorials (03 matmul CUDA/HIP config lists,
02 softmax, 06 attention); ROCm "Optimizing Triton kernels" (num_stages 2 for GEMM, 1 for GEMM-free and fused
two-GEMM kernels; waves_per_eu; matrix_instr_nonkdim=16 on MI300); Triton PR #6125 (num_warps <= 16 on wave64,
1024 threads per workgroup); aiter configs (kpack=1; deprecated from gfx950). See ../shared/research/kernels.md §1.2, §5.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from functools import cache
from typing import Any
from collections.abc import Callable

CDNA = ("gfx908", "gfx90a", "gfx940", "gfx941", "gfx942", "gfx950")


@dataclass(frozen=True)
class Target:
    backend: str  # "cuda" | "hip" | "interpreter"
    arch: str  # "sm_90", "gfx942", "cpu"
    warp_size: int

    @property
    def interpreter(self) -> bool:
        return self.backend == "interpreter"

    @property
    def cdna(self) -> bool:
        return self.backend == "hip" and self.arch.split(":")[0] in CDNA

    @property
    def label(self) -> str:
        return "interpreter (CPU)" if self.interpreter else f"{self.backend}:{self.arch}"


def interpreter_active() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


@cache
def target_for_device(device: str) -> Target:
    """The target Triton will compile for on `device` ("cpu" means interpreter mode)."""
    if device == "cpu":
        return Target("interpreter", "cpu", 1)
    from triton.runtime import driver

    t = driver.active.get_current_target()
    arch = f"sm_{t.arch}" if isinstance(t.arch, int) else str(t.arch)
    return Target(str(t.backend), arch, int(t.warp_size))


def target_from_name(name: str) -> Target:
    """'gfx942' -> hip wave64, 'gfx1100' -> hip wave32, 'sm_90' -> cuda (for --compile-only)."""
    name = name.strip().lower()
    if name.startswith("sm_"):
        return Target("cuda", name, 32)
    if name.startswith("gfx"):
        from rocm_triton_doctor import knowledge

        info = knowledge.gfx_info(name)
        wave = info.wave_size if info else (64 if name.startswith("gfx9") else 32)
        return Target("hip", name, wave)
    raise ValueError(f"unknown target {name!r}: use gfxNNNN or sm_NN")


CONFIG_CACHE_SIZE = 4096


def cached_config(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """Memoise a launch-config function (pure in its arguments: the Target — backend, arch, warp size, so one entry
    per device kind — and the shape class and dtype size it is given) and hand each caller its own copy, since
    launchers add keys to the dict they get. A call then costs a dict lookup and a copy instead of re-deriving the
    config (issue #16 item 4: host time per call)."""
    memo = functools.lru_cache(maxsize=CONFIG_CACHE_SIZE)(fn)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> dict[str, Any]:
        return dict(memo(*args, **kwargs))

    wrapper.cache_info = memo.cache_info  # type: ignore[attr-defined]
    wrapper.cache_clear = memo.cache_clear  # type: ignore[attr-defined]
    wrapper.shared = memo  # type: ignore[attr-defined]
    return wrapper


def shared(config_fn: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
    """config_fn(*args) without the copy: the one cached dict, for launchers that only splat it into a launch and never
    mutate it (a dict copy per call is host time on the hot path). A function not made by cached_config is called."""
    return getattr(config_fn, "shared", config_fn)(*args)  # type: ignore[no-any-return]


def _max_warps(t: Target) -> int:
    # 1024 threads per workgroup on AMD: 16 wave64 or 32 wave32 warps (Triton PR #6125).
    return 1024 // t.warp_size if t.backend == "hip" else 32


def _hip_extra(t: Target, *, gemm: bool, waves_per_eu: int = 0) -> dict[str, Any]:
    if t.backend != "hip":
        return {}
    extra: dict[str, Any] = {"waves_per_eu": waves_per_eu}
    if gemm and t.cdna:
        extra["matrix_instr_nonkdim"] = 16  # MI300X GEMM: mfma_16x16 beats 32x32 (ROCm workload guide)
        if t.arch.startswith("gfx942"):
            extra["kpack"] = 1  # kpack deprecated from gfx950 (aiter README)
    return extra


@cache
def tma_supported(t: Target) -> bool:
    """The persistent TMA GEMM (gemm_tma_kernel) runs on Hopper (sm_90) with a Triton that has host tensor
    descriptors and warp-specialised loops (3.4 and later; measured with 3.6). Other NVIDIA GPUs are not enabled
    because it was not measured there. The interpreter runs it too (for the tests)."""
    if not (t.interpreter or (t.backend == "cuda" and t.arch == "sm_90")):
        return False
    try:
        import inspect

        import triton.language as tl
        from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: F401
    except ImportError:
        return False
    return "warp_specialize" in inspect.signature(tl.range.__init__).parameters


def gemm_use_tma(t: Target, M: int, N: int, K: int) -> bool:
    """The TMA kernel where there are at least two 128x256 tiles per SM to walk (4096x4096 makes 512). At 2048^3
    (128 tiles, one per program) it lost to the pointer kernel on an H200: 35.7 against 28.4 us for bf16. Short K
    (4096x128x4096: 0.76x cuBLAS on an H100, issue #16) stays here: a persistent, warp-specialised program overlaps
    one tile's store of C (what a short-K GEMM waits on) with the next tile's loads, which the pointer kernel, one
    register-bound program per SM at these tiles, cannot (benchmarks/tune_gemm_shapes.py times both)."""
    # H100, benchmarks/tune_gemm_shapes.py (docs/measurements/2026-11-23-h100-tune-gemm.json), graph replay vs cuBLAS:
    # short K 4096x128x4096 TMA 0.71x, pointer 128x128x64 w8 s2 0.84x; 8192x64x8192 0.69x against 0.98x; N = 128
    # (65536x4096x128) TMA 0.74x (128-wide tiles) against the pointer kernel's 1.01x. So K <= 128 and N <= 128 take
    # the pointer kernel (the persistent kernel's store/load overlap did not pay there).
    # Host time: the TMA launch builds two host descriptors and takes Triton's slow launch path (descriptor arguments
    # are not keyed by kernels.launch): ~65 us more per call on the H100 host. Event-timed 2048x4096x4096 bf16 took
    # 162 us with TMA against 96 us with the pointer kernel (same GPU time within 4 %, `smoke --tune`,
    # docs/measurements/2026-11-23-h100-final-tune-sweep-gemm.json), so TMA only where the GPU work (>= 100 GFLOP,
    # ~150 us on an H100) hides it: 4096^3 (137 GFLOP) ran 184 us against cuBLAS's 177 us event-timed.
    return (tma_supported(t) and _wide_tiles(M, N) >= 256 and K > 128 and N > 128
            and 2.0 * M * N * K >= GEMM_TMA_MIN_FLOPS)


GEMM_TMA_MIN_FLOPS = 100e9


@cached_config
def gemm_config(t: Target, M: int, N: int, K: int, elem_size: int, tma: bool = False, cus: int = 0,
                b_nmajor: bool = True) -> dict[str, Any]:
    """Tile shape, split-K factor and launch options for the GEMM family (tma: for gemm_tma_kernel). Keyed on the
    element SIZE only: fp16 and bf16 take the same branch everywhere (no measurement says they should differ), and
    cached per (target, shape, size) so a model's repeated shapes cost one dict lookup. cus: the device's SMs/CUs
    (0: unknown, a per-target guess); b_nmajor: B's rows (along N) are contiguous, as a (K, N) tensor's; False for
    the transpose of an nn.Linear weight (K contiguous). Callers must not mutate the returned dict."""
    if t.interpreter:
        # The interpreter costs ~1 ms per program instance: few, large tiles (kernels.md §2.4). Decode-size M takes
        # the split-K path here too, so the CPU tests run the code the GPUs run.
        if M <= 32:
            return {"BLOCK_M": 16, "BLOCK_N": 64, "BLOCK_K": 64, "GROUP_M": 8, "SPLIT_K": _split_k(M, N, K, 16, 64, 64, 8),
                    "num_warps": 4, "num_stages": 1}
        return {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "GROUP_M": 8, "SPLIT_K": 1, "num_warps": 4, "num_stages": 1}
    if tma:
        # H200, fp16/bf16 4096^3 and 8192^3 (docs/measurements/2026-11-21-h200-tune-6.json): 128x256x64, 8 warps,
        # 3 stages, warp-specialised: 1.01-1.04x the pointer kernel plain, 1.01-1.03x with bias+ReLU, 1.01-1.11x with
        # dropout; 128x128 tiles 0.77-0.93x; 4 stages lost at 8192^3 (0.80-0.90x). N <= 128 (65536x4096x128: 0.76x
        # cuBLAS on an H100, issue #16) took a 256-wide tile half of which the descriptor zero-filled and the tensor
        # cores multiplied: 128-wide tiles there (not timed yet: benchmarks/tune_gemm_shapes.py).
        bn = 128 if N <= 128 else 256
        return {"BLOCK_M": 128, "BLOCK_N": bn, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3}
    if M <= 32:
        return _decode_config(t, M, N, K, elem_size, cus, b_nmajor)
    small = M * N <= 256 * 256
    # K of one or two blocks (4096x128x4096, 8192x64x8192): the loop has nothing to pipeline, so 2 stages (half the
    # smem; sm_90 compile-only: 128x256x64 at 2 stages 0 spills, 128x128x64 at 8 warps 16, at 4 warps 1196).
    short_k = K <= 128
    if t.backend == "cuda":
        if small:
            cfg = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 4, "num_stages": 3}
        elif elem_size == 4:
            # fp32 (IEEE, no tensor cores) 1024^3 on an H100: 128x64x32 w4 s4 0.67x cuBLAS, 64x128x32 w4 s4 0.63x,
            # 128x128x32 w8 s3 0.54x (tune-gemm.json).
            cfg = {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 4}
        elif short_k or N <= 128:
            # K of one or two blocks, or a 128-column product: 128x128x64 with 8 warps (H100: 4096x128x4096 0.84x
            # cuBLAS against 0.78x for 128x256; 8192x64x8192 0.98x against 0.88x; 65536x4096x128 1.01x at 4 stages).
            cfg = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 4}
        elif _wide_tiles(M, N) < 64:
            # Too few 128x256 tiles to fill the GPU (1024x1024 makes 32 for an H200's 132 SMs): 64x128 tiles, 4 warps.
            # Graph-replay times on an H200, 1024^3 fp16 (docs/measurements/2026-11-21-h200-tune-5.json): bias+ReLU
            # 13.9 -> 6.3 us (0.81x -> 1.80x eager), +dropout 19.8 -> 7.7 us; at 2048^3 128x256 stays the best.
            cfg = {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 4, "num_stages": 4}
        else:
            # Measured on an H200 (benchmarks/tune.py, docs/measurements/2026-11-21-h200-tune-1.json): 4 stages beat 3
            # for every epilogue (fp16 4096^3: 673 vs 607 TF/s plain, 604 vs 593 with dropout); 128x128 tiles lose.
            cfg = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 4}
        if short_k:
            cfg["num_stages"] = 2
        return {**cfg, "SPLIT_K": 1}
    # HIP: tutorial-03 HIP list; num_stages=2 for single-GEMM kernels on current Triton (already the short-K choice).
    if small:
        cfg = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 1, "SPLIT_K": 1, "num_warps": 4, "num_stages": 2}
        return {**cfg, **_hip_extra(t, gemm=True, waves_per_eu=0)}
    if t.cdna:
        # 256x128x32: 0 VGPR spills on gfx90a, gfx942 and gfx950 with the dropout epilogue (Triton 3.9, --compile-only);
        # 256x256x32 spills 146-187 there, BLOCK_K 64 spills too. Not timed: no AMD GPU was available.
        cfg = {"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 4, "SPLIT_K": 1, "num_warps": 8, "num_stages": 2}
        return {**cfg, **_hip_extra(t, gemm=True, waves_per_eu=2)}
    # RDNA (wave32, WMMA): smaller tiles, fewer registers per lane.
    cfg = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "SPLIT_K": 1, "num_warps": 8, "num_stages": 2}
    return {**cfg, **_hip_extra(t, gemm=True, waves_per_eu=0)}


# SMs/CUs when the device does not say (compile-only audits): H100/H200 SXM 132 SMs, MI300X 304 CUs, RDNA3 96 CUs.
DEFAULT_CUS = {"cuda": 132, "cdna": 304, "rdna": 96}


def _decode_config(t: Target, M: int, N: int, K: int, elem_size: int, cus: int, b_nmajor: bool) -> dict[str, Any]:
    """Decode-size M (<= 32): the GEMM is a read of B (K·N elements) with almost no reuse, so what matters is how
    many bytes are in flight and how well each program's reads of B hit whole DRAM lines. 16- or 32-row tiles waste
    no rows (tl.dot's smallest M on mma/MFMA/WMMA is 16). A row-major B (K, N) is read 128 columns (256 bytes) wide and
    64 deep; a K-contiguous B (nn.Linear's weight transposed) 64 columns by 128 of K (256 bytes along each column).
    Then K is split (_split_k) until the grid has about two programs per SM/CU. Issue #16: 0.44-0.45x cuBLAS on an
    H100 at 16x4096x4096 and 8x4096x14336 with 64x128 tiles for every layout; these tiles are not timed yet
    (benchmarks/tune_gemm_shapes.py compares them)."""
    bm = 16 if M <= 16 else 32
    bn, bk = (128, 64) if b_nmajor else (64, 128)
    if t.backend == "cuda":
        cfg = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 1, "num_warps": 4, "num_stages": 4}
        want = 2 * (cus or DEFAULT_CUS["cuda"])
        return {**cfg, "SPLIT_K": _split_k(M, N, K, bm, bn, bk, want, elem_size)}
    # AMD: 64-deep K tiles at 2 stages, 4 waves. Compile-only (Triton 3.9): 16x128x64 0 spills on gfx942 but 107 on
    # gfx1100 (wave32: twice the registers a lane), where 16x128x32 has 0 (126 VGPRs); 16x64x64 (B^T) 0 on both.
    # MI300X has 304 CUs, RDNA3 up to 96.
    bk = 32 if b_nmajor and not t.cdna else 64
    cfg = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 1, "num_warps": 4, "num_stages": 2}
    want = 2 * (cus or DEFAULT_CUS["cdna" if t.cdna else "rdna"])
    return {**cfg, "SPLIT_K": _split_k(M, N, K, bm, bn, bk, want, elem_size), **_hip_extra(t, gemm=True, waves_per_eu=0)}


def _split_k(M: int, N: int, K: int, bm: int, bn: int, bk: int, want: int, elem_size: int = 2) -> int:
    """Double the K split while the grid has fewer than `want` programs, every split keeps at least 4 full K blocks
    (so its pipeline fills), the fp32 workspace (split·M·N, written once and read once) stays under an eighth of B's
    bytes (K·N·elem: the read the split is meant to speed up) and under 2^31 elements; at most 16."""
    tiles = -(-M // bm) * -(-N // bn)
    split = 1
    while (split < 16 and tiles * split * 2 <= want and (K // bk) // (split * 2) >= 4
           and split * 2 * M * 8 * 8 <= K * elem_size and split * 2 * M * N < 2**31):
        split *= 2
    return split


def splitk_reduce_tile(t: Target, M: int) -> tuple[int, int]:
    """(BLOCK_M, BLOCK_N) of gemm's split-K reduce-and-epilogue pass: M is small there (<= 32), so as many rows as M
    has (4 to 16) and 64 columns: N=4096 makes 64 programs, each reading SPLIT_K fp32 tiles once."""
    return (min(16, max(4, _next_pow2(M))), 64)


# An operand whose rows are not 16-byte aligned (a leading stride of 4097 elements, a view one element off) is read
# with scalar loads: bf16 4097^3 ran at 0.38x cuBLAS on an H100 (issue #16). Copying it into a padded buffer costs
# 2·elem·(its elements) bytes of traffic; against the GEMM's 2·M·N·K FLOPs that is a fraction ~F/(BW·n) of the ideal
# GEMM time, n the other operand's free dimension (N for A, M for B) and F/BW ~300 FLOP/byte on an H100 (990 TF/s
# bf16, 3.35 TB/s) and ~250 on an MI300X: at n >= 2048 a copy costs under 15 % of an ideal GEMM, while the
# misaligned kernel lost 2.6x. The GEMM must also be big enough (>= 2^30 FLOPs, ~1 us at peak) that the copy's
# launch does not dominate. Conservative on purpose (decode-size M never copies B); A/B it with gemm(config=
# {"ALIGN_COPY": ...}) and benchmarks/tune_gemm_shapes.py.
ALIGN_COPY_MIN_REUSE = 2048
ALIGN_COPY_MIN_FLOPS = 2**30


def gemm_align_copy(t: Target, M: int, N: int, K: int) -> tuple[bool, bool]:
    """(copy A, copy B) if misaligned: see ALIGN_COPY_MIN_REUSE. Never in the interpreter (tests force it)."""
    if t.interpreter or 2 * M * N * K < ALIGN_COPY_MIN_FLOPS:
        return False, False
    return N >= ALIGN_COPY_MIN_REUSE, M >= ALIGN_COPY_MIN_REUSE


@cached_config
def elementwise_config(t: Target, n: int) -> dict[str, Any]:
    if t.interpreter:
        return {"BLOCK": max(1024, min(1 << 16, _next_pow2(n))), "num_warps": 4}
    return {"BLOCK": 1024, "num_warps": 4, "num_stages": 1, **_hip_extra(t, gemm=False)}


@cached_config
def tile2d_config(t: Target, M: int, N: int) -> dict[str, Any]:
    """2-D blocks for row-broadcast elementwise kernels (bias over the last dim)."""
    if t.interpreter:
        return {"BLOCK_M": 16, "BLOCK_N": max(64, min(4096, _next_pow2(N))), "num_warps": 4}
    # 8x512 with 4 warps: 96.8 % (fp16), 91.5 % (bf16), 100.7 % (fp32) of copy bandwidth for bias+GELU+dropout+
    # residual on an H200, vs 85.6 / 81.9 / 102.1 % for 4x1024 (docs/measurements/2026-11-21-h200-tune-2.json).
    return {"BLOCK_M": 8, "BLOCK_N": 512, "num_warps": 4, "num_stages": 1, **_hip_extra(t, gemm=False)}


def fast_tanh(t: Target, elem_size: int) -> bool:
    """The hardware tanh for GELU (common.gelu_tanh): NVIDIA, 16-bit outputs. The bias+GELU+dropout+residual kernel
    runs out of ALU before bandwidth at 16 bits (Philox, GELU and conversions are ~45 instructions per element)."""
    return t.backend == "cuda" and elem_size == 2


# A whole row in one block up to 64 KiB; wider rows loop over ROW_CHUNK-element chunks with 16 warps, the second pass
# in reverse with L2 eviction hints (rows.py). H100, RMSNorm bf16 1024x65536: one 65536-wide block 68.9 % of copy,
# 8192-chunk loop forward 66.2 %, reversed + hints 76.8 %; 8192x65536 76.3 / 68.5 / 80.2 %; 1024x152064 64.4 -> 68.4 %
# (docs/measurements/2026-11-23-h100-tune-rows-before.json). The reads of pass 2 that miss L2 keep wide rows under
# 85 %: x is read twice.
ROW_SINGLE_BYTES = 65536
ROW_CHUNK = 8192  # wider rows loop over 8192-element chunks (the bench preset's rows, one block at 8/16 warps)
NARROW_ROW = 256  # rows up to this many elements (as a power of two) share a program with other rows


def row_config(t: Target, n_cols: int, elem_size: int, n_rows: int = 1 << 30) -> dict[str, Any]:
    """See _row_config. The row count only matters up to 64 (the most rows a program packs), so it is keyed by that
    class: a model's varying token counts share one cache entry per (target, width, dtype size)."""
    return _row_config(t, n_cols, elem_size, min(_next_pow2(max(1, n_rows)), 64))


@cached_config
def _row_config(t: Target, n_cols: int, elem_size: int, n_rows: int) -> dict[str, Any]:
    """BLOCK columns at a time, ROWS rows per program (rows.py). The whole row in one block when it fits (tutorials
    02/05; Liger calculate_settings), else ROW_CHUNK-wide chunks in a loop (rows of any width: vocabulary rows of
    128k-262k were refused before, kernel-edge-cases.md). Narrow rows pack several rows into one program so a program
    still moves ~2048 elements (a row of 128 had left most lanes idle: 17-46 % of copy on an H100, issue #16; this
    packing is not yet timed)."""
    block = _next_pow2(n_cols)
    if block * elem_size > ROW_SINGLE_BYTES:
        block = ROW_CHUNK
    most_rows = _next_pow2(max(1, n_rows))
    if t.interpreter:
        # The interpreter costs ~1 ms per program instance: many rows per program (kernels.md §2.4).
        return {"BLOCK": block, "ROWS": max(1, min(most_rows, 8192 // block, 64)), "num_warps": 4}
    if block <= NARROW_ROW:
        rows = max(1, min(most_rows, 2048 // block, 64))
        return {"BLOCK": block, "ROWS": rows, "num_warps": 4, "num_stages": 1, **_hip_extra(t, gemm=False)}
    # 16 warps only for rows of 32 KiB and more: a bf16 row of 8192 (16 KiB) ran LayerNorm at 1.11x torch.compile with
    # 8 warps and 1.04x with 16, fp32 rows of 8192 best with 16 (H200, docs/measurements/2026-11-21-h200-tune-4.json).
    # Looped rows (block < n_cols): 16 warps (8192-element chunks, w16 beat w8 in every wide-row case measured).
    warps = 16 if block < n_cols else 4 if block < 2048 else 8 if block * elem_size < 32768 else 16
    return {"BLOCK": block, "ROWS": 1, "num_warps": min(warps, _max_warps(t)), "num_stages": 1,
            **_hip_extra(t, gemm=False)}


@cached_config
def strided_config(t: Target, n_cols: int) -> dict[str, Any]:
    """2-D tiles for elementwise kernels on inputs that are not one dense layout (transposed, sliced, expanded):
    BLOCK_N columns of the innermost folded dimension, BLOCK_M rows, ~4096 elements a tile (not timed)."""
    bn = max(1, min(512, _next_pow2(n_cols)))
    bm = max(1, min(64, 4096 // bn))
    if t.interpreter:
        return {"BLOCK_M": bm, "BLOCK_N": bn, "num_warps": 4}
    return {"BLOCK_M": bm, "BLOCK_N": bn, "num_warps": 4, "num_stages": 1, **_hip_extra(t, gemm=False)}


TMA_ATTENTION_MIN_FLOPS = 16e9
# Device-side descriptors cost no host time, so the floor is only where a launch is too small for TMA to matter;
# not measured yet (benchmarks/tune_attention_shapes.py times both kernels from S=128 up).
TMA_DEVICE_ATTENTION_MIN_FLOPS = 200e9  # D=80/96: B4 H32 S=4097 is 687 GFLOP, S=1024 43
TMA_DEVICE_D256_MIN_FLOPS = 1e9


@cache
def tensor_desc_device_supported(t: Target) -> bool:
    """attention_tma.attn_fwd_tdesc_kernel: tensor descriptors built on the GPU (tl.make_tensor_descriptor, with
    global scratch from triton.set_allocator; Triton 3.4 and later) on the targets tma_supported accepts."""
    if not tma_supported(t):
        return False
    import triton
    import triton.language as tl

    return hasattr(tl, "make_tensor_descriptor") and hasattr(triton, "set_allocator")


def attention_use_tma(t: Target, head_dim: int, flops: float) -> bool:
    """attn_fwd_tma_kernel (host descriptors) on Hopper for head dim 128 and problems of at least
    TMA_ATTENTION_MIN_FLOPS. Measured on an H200 (docs/measurements/2026-11-21-h200-attention-d64-ab.log): at D=64 it
    is slower (1,414 vs 1,342 us at B4 H32 S4096), and each launch costs ~75 us of host time (building four tensor
    descriptors), which small problems cannot hide: B2 H16 S1000 D128 causal took 112 us event-timed against 48 for
    the pointer kernel, though 37 vs 41 us in graph replay. 16 GFLOP is ~35 us of work at 500 TFLOP/s."""
    return tma_supported(t) and not t.interpreter and head_dim == 128 and flops >= TMA_ATTENTION_MIN_FLOPS


def attention_kernel(t: Target, head_dim: int, flops: float, tma_layout: bool) -> str:
    """Which attention kernel "auto" runs: "tma_device", "tma" or "pointer". tma_layout: 16-bit tensors whose layout
    a descriptor takes (base.tma_layout_ok). Measured on an H100, bf16 B4 H32, ours / SDPA
    (docs/measurements/2026-11-23-h100-tune-attention.json, benchmarks/tune_attention_shapes.py):
    * D=256: device descriptors (128x64 tiles) 0.61-0.75x, the pointer kernel 0.25-0.40x (its address registers
      leave no room for larger tiles);
    * D=128: host-descriptor TMA 0.75-0.85x (GQA 0.75-0.84x), device descriptors 0.58-0.73x, pointer 0.67-0.79x;
    * D=80/96: at S=4097 device descriptors padded to 128 columns 0.72-0.80x against the pointer kernel's 0.68-0.75x
      (split into 64+16/32 columns: 0.63-0.77x); at S=1024 the pointer kernel 0.63-0.68x against 0.56-0.62x;
    * D=64: the pointer kernel (128x64, 8 warps) 0.85-0.91x; host TMA 0.69-0.78x, device 0.46-0.69x.
    Small problems stay on the pointer kernel: at S=128 D=128 the descriptor kernels cost host time (0.31-0.76x
    event-timed against 1.03x)."""
    if t.interpreter or not tma_layout:
        return "pointer"
    device_ok = tensor_desc_device_supported(t)
    if head_dim > 128 and device_ok and flops >= TMA_DEVICE_D256_MIN_FLOPS:
        return "tma_device"
    if 64 < head_dim < 128 and device_ok and flops >= TMA_DEVICE_ATTENTION_MIN_FLOPS:
        return "tma_device"
    return "tma" if attention_use_tma(t, head_dim, flops) else "pointer"


@cached_config
def attention_config(t: Target, head_dim: int, elem_size: int, causal: bool = False,
                     tma: bool = False) -> dict[str, Any]:
    """Tiles for the attention kernels; head_dim is the padded BLOCK_D (a power of two, 16 to 256). tma: for either
    TMA kernel (host or device descriptors)."""
    if t.interpreter:
        return {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 1}
    if tma:
        if head_dim > 128:
            # D=256, attn_fwd_tdesc_kernel: TMA needs no address registers, so a 128x64 tile fits where the pointer
            # kernel spills (see below). --compile-only sm_90, Triton 3.9, warp-specialised: 128x64 w8 s2 0 spills
            # (207 registers, 192 KiB shared), 128x32 w8 s3 0 (180), 64x64 w8 s2 0 (163); 4 warps do not compile
            # warp-specialised. Not timed yet.
            return {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 2}
        # H200, bf16 B4 H32 S4096 D128 (docs/measurements/2026-11-21-h200-tune-8.json): 128x128, 3 stages, 8 warps,
        # warp-specialised key loop: 561 TF/s non-causal (0.91x SDPA), 482 causal (0.89x), 1.14x / 1.08x the pointer
        # kernel; 128x64 tiles 1.03x, 2 stages 0.77-1.0x.
        # SPLIT_D off: D=80/96 padded to 128 columns beat two column blocks (64+16/32) on an H100 (0.72-0.80x against
        # 0.63-0.77x SDPA at S=4097; docs/measurements/2026-11-23-h100-tune-attention.json).
        return {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 3, "SPLIT_D": False}
    if t.backend == "cuda":
        if head_dim > 128:
            # D=256 (the pointer kernel: no TMA on this GPU or layout): a 64x256 fp32 accumulator is 64 registers per
            # thread at 8 warps, and the K/V tiles' 64-bit addresses as many again. --compile-only sm_90, Triton 3.9,
            # ptxas spill bytes causal/non-causal: 64x32 w8 s2 8/0 (255 registers), 64x16 w8 s2 0/0 (the old choice,
            # 0.16-0.25x SDPA on an H100), 64x64 w8 204/168, 128x32 w8 232/240, 128x64 w8 584/542. 8 spilled bytes
            # for twice the keys per step. Not timed yet.
            return {"BLOCK_M": 64, "BLOCK_N": 32, "num_warps": 8, "num_stages": 2}
        # H200 sweep with the scale folded into exp2 (docs/measurements/2026-11-21-h200-tune-3.json): 128x64, 8 warps,
        # 3 stages is best for both: 442 TF/s non-causal (0.74x SDPA), 437 TF/s causal (0.82x); 64x64 w4 0.73/0.77x.
        # H100 (2026-11-23, tune-attention.json): D=64 with 8 warps 0.87-0.91x SDPA against 0.80-0.88x with 4.
        return {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3}
    # HIP: num_stages=1 for fused two-GEMM kernels (ROCm guide). Tiles with 0 VGPR spills for D=64/128, causal or not
    # (Triton 3.9, --compile-only sweep): CDNA (gfx90a/gfx942/gfx950) 64x32 with 8 warps; RDNA3/3.5/4 (gfx1100/
    # gfx1151/gfx1201) 64x16 with 8 warps — 128-row tiles and tutorial 06's waves_per_eu hints spilled. Not timed.
    # D=80/96 (BLOCK_D 128, masked) and D=256 on CDNA: the same tiles, 0 spills on gfx942 (256: 215 VGPRs, 2 waves).
    # RDNA with D=256 spills in every tile tried on gfx1100 (VGPR spills causal: 64x16 w8 327, 64x16 w16 117,
    # 32x16 w8 230, 32x16 w16 96, 16x16 w4 311): the least is used; correct, but expect it slow there.
    bn = 32 if t.cdna else 16
    if head_dim > 128 and not t.cdna:
        return {"BLOCK_M": 32, "BLOCK_N": 16, "num_warps": 16, "num_stages": 1, **_hip_extra(t, gemm=True)}
    return {"BLOCK_M": 64, "BLOCK_N": bn, "num_warps": 8, "num_stages": 1, **_hip_extra(t, gemm=True, waves_per_eu=0)}


def _wide_tiles(M: int, N: int) -> int:
    """How many 128x256 output tiles an MxN product makes (the Hopper GEMM tile; its count picks the kernel)."""
    return -(-M // 128) * -(-N // 256)


def _next_pow2(n: int) -> int:
    return 1 << max(0, (int(n) - 1).bit_length())


@cached_config
def attention_backward_config(t: Target, block_d: int, elem_size: int, causal: bool = False) -> dict[str, Any]:
    """Tiles for the attention backward (attention_backward.py): BLOCK_N1 keys per dK/dV program stepping over
    BLOCK_M1 query rows, BLOCK_M2 query rows per dQ program stepping over BLOCK_N2 keys (tutorial 06's transposed
    pair), num_warps/num_stages shared by both; block_d is the padded power-of-two head dim. Chosen spill-free with
    --compile-only (Triton 3.9, bf16, causal and not; a sweep over tiles and warps, 2026-11-23); not timed yet."""
    if t.interpreter:
        return {"BLOCK_M1": 16, "BLOCK_N1": 32, "BLOCK_M2": 32, "BLOCK_N2": 16, "num_warps": 4, "num_stages": 1}
    if t.backend == "cuda":
        # sm_90 ptxas spill bytes: D=128 dK/dV 32x128 w8 752, 64x64 w8 s2 180 (with the masked and unmasked loop
        # copies), 32x64 w8 s3 0 (one loop); D=64 dK/dV 32x128 w4 460 (tutorial 06's 4 warps), w8 0; D=256 dK/dV 16x64
        # w8 428, 16x32 w8 0, dQ 64x16 w8 176, 32x32 w8 0.
        if block_d > 128:
            return {"BLOCK_M1": 16, "BLOCK_N1": 32, "BLOCK_M2": 32, "BLOCK_N2": 32, "num_warps": 8, "num_stages": 2}
        # Timed on an H100 (bf16 B4 H32 S1024/4096, benchmarks/tune_attention_backward.py,
        # docs/measurements/2026-11-23-h100-tune-attention-backward.json), against SDPA's backward: D=128 32x64/64x32
        # w4 s4 0.62-0.91x (the spill-free 32x64/64x64 w8 s3 above: 0.30-0.45x); D=64 64x64/64x64 w4 s3 0.82-1.07x
        # (32x128/128x64 w8 s3: 0.68-0.86x).
        if block_d > 64:
            return {"BLOCK_M1": 32, "BLOCK_N1": 64, "BLOCK_M2": 64, "BLOCK_N2": 32, "num_warps": 4, "num_stages": 4}
        return {"BLOCK_M1": 64, "BLOCK_N1": 64, "BLOCK_M2": 64, "BLOCK_N2": 64, "num_warps": 4, "num_stages": 3}
    # HIP: one stage (fused multi-GEMM loops, the ROCm guide's advice, as the forward).
    hip = {"num_stages": 1, **_hip_extra(t, gemm=True)}
    if t.cdna:
        # gfx942: D=128 dK/dV 16x64 w4 28 spills, 16x64/32x64 w8 0; dQ 64x16 w4 24, w8 0; D=256 16x32/32x16 w8 0.
        if block_d > 128:
            return {"BLOCK_M1": 16, "BLOCK_N1": 32, "BLOCK_M2": 32, "BLOCK_N2": 16, "num_warps": 8, **hip}
        return {"BLOCK_M1": 32, "BLOCK_N1": 64, "BLOCK_M2": 64, "BLOCK_N2": 32, "num_warps": 8, **hip}
    # RDNA3 (gfx1100): D<=64 0 spills at 16x32 / 32x16, 8 warps (4 warps: 16 dK/dV). D>=128 spills in every tile
    # tried (256 VGPRs; dK/dV 16x16..32x32 with 4-16 warps 84-250, dQ 110-141): each program keeps five D-wide tiles
    # (dQ: Q, dO, dQ and the streamed Kᵀ, Vᵀ) and RDNA3's WMMA holds its operands twice (both half-waves), so at D=128
    # even 16-row tiles need more than 256 VGPRs. The least spilling is used: correct, expect it slow there.
    if block_d > 64:
        return {"BLOCK_M1": 16, "BLOCK_N1": 16, "BLOCK_M2": 16, "BLOCK_N2": 16, "num_warps": 16, **hip}
    return {"BLOCK_M1": 16, "BLOCK_N1": 32, "BLOCK_M2": 32, "BLOCK_N2": 16, "num_warps": 8, **hip}
