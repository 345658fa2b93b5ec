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
                b_nmajor: bool = True, tc: bool = False, aligned: bool = True) -> dict[str, Any]:
    """Tile shape, split-K factor and launch options for the GEMM family (tma: for gemm_tma_kernel). Keyed on the
    element SIZE only: fp16 and bf16 take the same branch everywhere (no measurement says they should differ), and
    cached per (target, shape, size) so a model's repeated shapes cost one dict lookup. cus: the device's SMs/CUs
    (0: unknown, a per-target guess); b_nmajor: B's rows (along N) are contiguous, as a (K, N) tensor's; False for
    the transpose of an nn.Linear weight (K contiguous); tc: fp32 products on tensor cores (tf32x3, policy_fp32.py);
    aligned: both operands are read with 16-byte loads (as copied). Callers must not mutate the returned dict."""
    if not aligned and not tma and misaligned_small_tiles(t, M, N, K, elem_size, cus):
        sms = cus or DEFAULT_CUS["cuda"]
        return {**MISALIGNED_SMALL_TILE, "SPLIT_K": gemm_split_latency_bound(M, N, K, 32, 64, 16, sms, sms)}
    cfg = _gemm_tiles(t, M, N, K, elem_size, tma, cus, b_nmajor, tc, aligned)
    if tc and elem_size == 4 and not aligned and not tma and K <= FP32_MISALIGNED_SHORT_K and t.backend == "cuda":
        return {**cfg, "BLOCK_K": 16}
    return cfg if aligned or tma else misaligned_depth(t, cfg, K)


# fp32 tensor-core tiles against a misaligned operand, at a K of up to this (and outputs too large for the small tiles
# below), take 16-deep K blocks: half of a 32-deep block of K = 33 is masked loads. H200, × eager (benchmarks/
# fp32_shortk_probe.py --set s27, gemm_misaligned_probe.py; docs/measurements/2026-11-29-h200-s27-{fp32-s27,gemm-
# kshort-s6}.json): 8264x13x1893 B^T 64x64x32 0.22 -> 64x64x16 0.68, 2274x63x602 B^T 0.36 -> 0.68, 6921x33x1485 bias
# B^T 0.48 -> 0.77 (those K of 13 and 63 take the small tiles now); 4916x78x731 bias B^T tied (1.56 / 1.59).
FP32_MISALIGNED_SHORT_K = 128
# Every GEMM row under 0.9x in hunts 18-21 (H200) had a K off 16-byte multiples: a K-contiguous operand read with
# scalar loads, a latency-bound K loop. Small tiles make more programs to hide it and 16-deep K blocks hold fewer
# loads a thread. H200, graph replay, × eager (benchmarks/gemm_misaligned_probe.py, docs/measurements/2026-11-29-h200-
# s27-gemm-*.json; every output checked against fp64 first, none wrong):
# * --set tiles over 40 draws of misaligned products and those hunts' 15 rows (…-gemm-tiles-s3.json): 32x64x16 with 4
#   warps, 3 stages and the latency split beat the policy by more than 10 % on 28 of 55 rows and lost on 13; its
#   losses were where the policy copied the operands aligned (fp16 2472x2538x2753 B^T 3.87 against 0.88), small
#   outputs on the GEMV (fp32 218x11x58 bias B^T 3.43 against 2.44), decode and 16-bit skinny tiles (bf16 25x548x1840
#   1.95 against 1.65, fp16 13151x8035x19 bias_gelu B^T 0.66 against 0.45) and grids of more than 12 such tiles an SM
#   at K past 32 (bf16 944x71x4023 B^T 0.94 against 0.79, fp32 4916x78x731 bias B^T 1.56 against 1.29; at K <= 32
#   fp16 4516x12x1235 won, 0.96 -> 1.33);
# * the rule without the K and N bounds below, on 40 fresh draws (--set verify --family mis --seed 4, …-gemm-verify-
#   s4.json): 13 faster, none slower by more than 5 %, median 1.43 -> 1.61, rows under 0.9 7 -> 5;
# * the shapes earlier rules were measured on (--pinned, …-gemm-pinned.json) lost past K = 2048 (fp32 17x4096x11007
#   N-major 1.33 -> 0.78 unsplit, 28x6016x26517 0.82 -> 0.72) and at 16 columns or fewer (2542x2671x1 B^T 0.31 ->
#   0.21), hence MISALIGNED_SMALL_TILES_MAX_K and N > 16;
# * the final rule (--set verify --pinned --hunt, …-gemm-final.json), policy before -> after: fp32 5341x111x71
#   bias_gelu B^T 0.59 -> 1.05, 428x157x91 bias B^T 0.81 -> 1.21, 47x694x216 0.80 -> 1.01, 2637x1697x20 B^T 0.43 ->
#   0.57, 2933x1033x34 B^T 0.68 -> 0.87, 8192x4x2047 0.63 -> 1.08, 4905x8x1367 0.52 -> 1.06, fp16 134x31x19218 0.77 ->
#   1.33, 91x31x24363 B^T 0.98 -> 1.09, 3426x93x673 0.88 -> 0.95, 76x133x8927 1.07 -> 1.14, 358x380x804 B^T 0.85 ->
#   0.91, fp32 13562x209x36 B^T 0.64 -> 0.70; one loss, fp32 229x301x48 B^T 1.46 -> 1.35; the other 19 of 33 rows
#   within 3 %.
# AMD keeps its audited tiles (not timed there).
MISALIGNED_SMALL_TILES = True  # benchmarks/gemm_misaligned_probe.py turns it off for its "old" column
MISALIGNED_SMALL_TILE = {"BLOCK_M": 32, "BLOCK_N": 64, "BLOCK_K": 16, "GROUP_M": 8, "num_warps": 4, "num_stages": 3}
MISALIGNED_SMALL_TILES_PER_SM = 12  # while the grid of 32x64 tiles is at most this many per SM ...
MISALIGNED_SMALL_TILES_ANY_K = 32  # ... or at any size where K is this short
MISALIGNED_SMALL_TILES_MAX_K = 2048  # never past this K (the latency split alone does not cover a longer loop)


def misaligned_small_tiles(t: Target, M: int, N: int, K: int, elem_size: int, cus: int) -> bool:
    """Whether a product whose operands are read with scalar loads (not copied aligned) takes 32x64x16 tiles
    (MISALIGNED_SMALL_TILE, K split by gemm_split_latency_bound; the comment above has the measurements): NVIDIA,
    fp32 past 16 rows and 16-bit past 64 (the decode tiles keep fewer), more than 16 columns, K up to
    MISALIGNED_SMALL_TILES_MAX_K, 16-bit skinny products (N <= SKINNY_N) only with K <= MISALIGNED_SMALL_TILES_ANY_K,
    and a grid of at most MISALIGNED_SMALL_TILES_PER_SM such tiles per SM or that short a K."""
    if not MISALIGNED_SMALL_TILES or t.backend != "cuda" or t.interpreter:
        return False
    if M <= (16 if elem_size == 4 else 64) or N <= 16 or K > MISALIGNED_SMALL_TILES_MAX_K:  # noqa: SIM300
        return False
    short = K <= MISALIGNED_SMALL_TILES_ANY_K
    if elem_size == 2 and N <= SKINNY_N and not short:
        return False
    sms = cus or DEFAULT_CUS["cuda"]
    tiles = -(-M // 32) * -(-N // 64)
    return short or tiles <= MISALIGNED_SMALL_TILES_PER_SM * sms


# A misaligned operand is loaded element by element (or in 4-byte pairs), and every element of a tile a thread loads
# then holds its own 64-bit address: a 64x128x64 tile with 4 warps is 96 elements a thread, 192 registers of
# addresses alone. sm_90, ptxas with Triton 3.6 and 3.9 (the policy's tiles, 16-bit, both operands misaligned):
# 64x128x64 w4 114x325x94 220 spilled bytes, 81x351x91 1,164; and the split-K form of a tile (the workspace store and
# the split's K offset) tipped tiles at the edge over: 613x432x78 0 -> 1,088 bytes with 2 splits, 110x322x486
# (64x64x64 w4) 0 -> 260, 38x287x46 0 -> 188. With 32-deep K blocks each of those compiled with 0 spills, split or
# not. On an H100 (benchmarks/split_profile.py, docs/measurements/2026-11-27-h100-s14-split-profile.json) the
# spilling split kernel of 613x432x78 ran 35.7 us against 5.3 unsplit (eager 5.1), 114x325x94 24.6 against 11.7.
# A/B over random draws (benchmarks/gemm_ab_probe.py --ab s14, GPU time × eager, 0 wrong results), the rule on every
# NVIDIA tile first: H100, --tiny seed 53 median 1.35 -> 1.45, worst 0.32 -> 0.71 (bf16 48x481x70 bias_relu 0.32 ->
# 1.24, 277x473x121 bias B^T 0.46 -> 0.99); --midm seed 55 1.07 -> 1.25 (fp16 197x67x807 B^T 0.35 -> 0.65, bf16
# 76x133x8927 0.52 -> 1.09); --skinny seed 54 unchanged (1.43 -> 1.44); general draws seed 56 1.25 -> 1.44. Its losses
# were long K (bf16 3921x7231x228 bias_relu 0.82 -> 0.57, fp16 1370x7988x60 B^T 1.59 -> 1.48, fp16 11x15337x27607 B^T
# decode tiles 1.18 -> 0.75; every row from K = 3490 to 4578 unchanged) and one short decode row (bf16 31x123x248 B^T
# 1.90 -> 1.41, kept: 14 other decode rows won); one 8-warp row was measured (bf16 91x31x24363 B^T 0.58 -> 1.15),
# too few for a rule, so their short-K 128x128x64 tiles keep spilling (224-572 bytes in a compile-only sweep of
# planned launches). So: 4-warp tiles (decode ones included),
# K <= MISALIGNED_DEPTH_MAX_K. That rule on fresh draws
# (H200, --ab s14final, …-h200-s14-ab-s14final-*.json): --tiny seed 57 median 1.28 -> 1.41 (fp16 585x635x170
# bias_relu B^T 0.79 -> 1.48, bf16 49x626x58 bias 0.93 -> 1.71), --midm seed 58 1.15 -> 1.21 (fp16 64x355x113
# bias_relu B^T 0.57 -> 1.20); no row lost more than 5 %.
MISALIGNED_MAX_LOADS_PER_THREAD = 48
MISALIGNED_DEPTH_MAX_K = 4096


def misaligned_depth(t: Target, cfg: dict[str, Any], K: int) -> dict[str, Any]:
    """cfg with BLOCK_K halved (not below 32) until the A and B tiles of one K step are at most
    MISALIGNED_MAX_LOADS_PER_THREAD elements a thread: the 4-warp tiles for operands read without 16-byte vectors,
    up to K = MISALIGNED_DEPTH_MAX_K (NVIDIA; AMD's tiles are chosen by its own compile-only audit)."""
    if t.backend != "cuda" or t.interpreter or cfg["num_warps"] != 4 or K > MISALIGNED_DEPTH_MAX_K:
        return cfg
    bk, threads = cfg["BLOCK_K"], 32 * cfg["num_warps"]
    while bk > 32 and (cfg["BLOCK_M"] + cfg["BLOCK_N"]) * bk > MISALIGNED_MAX_LOADS_PER_THREAD * threads:
        bk //= 2
    return cfg if bk == cfg["BLOCK_K"] else {**cfg, "BLOCK_K": bk}


# misaligned_depth counts loads; whether a tile spills also depends on the split, the epilogue, the layout and the
# warps, so after it gemm() asks the compiled kernel (spill_checked). Its K blocks are halved (not below 32) while a
# thread spills more than MISALIGNED_SPILL_LIMIT bytes: 8-warp tiles and K > 4096 included, where the load count had
# lost (session 14: the long-K rows it halved had not spilled). H200, GPU time × eager, session 14's rule ("old")
# against it followed by this check (benchmarks/gemm_ab_probe.py --ab s15, docs/measurements/
# 2026-11-27-h200-s15-ab-*.json, 0 wrong results): draws planned on 8-warp misaligned tiles (--w8 --seed 60) worst
# 0.60 -> 0.73 (bf16 3648x75x1182 B^T 0.62 -> 1.12, fp16 8452x113x226 B^T 0.67 -> 1.09, bf16 13901x17x918 bias B^T
# 1.54 -> 2.37); K of 4097-32768 (--longk --seed 61) worst 0.31 -> 0.65 (fp16 332x6995x75 B^T 0.31 -> 0.69, bf16
# 463x4897x110 B^T 0.44 -> 0.85); --tiny --seed 62 and --midm --seed 63 unchanged (medians 1.51 -> 1.48, 1.22 -> 1.22).
# The check alone, without the load count, lost rows the count had won without a spill to see (--tiny bf16 389x18x91
# 2.25 -> 1.59, --midm bf16 50x76x25559 bias_relu B^T 2.48 -> 1.17; K of one or two blocks), so both stay. Halving on any spill
# (limit 0) lost fp16 2450x5345x198 bias (0.65 -> 0.42) and won nothing the limit missed; a 128-byte spill (bf16
# 3426x93x673 B^T) stays at 0.77 either way. AMD: not asked (its tiles come from its compile-only audit).
MISALIGNED_SPILL_LIMIT = 128
SPILL_CHECK = True  # benchmarks/gemm_ab_probe.py --ab s15 turns it off for the "old" column


def spill_checked(t: Target, block_k: int, misaligned: bool) -> bool:
    """Whether gemm() compiles a planned launch over misaligned operands and halves BLOCK_K (not below 32) while it
    spills more than MISALIGNED_SPILL_LIMIT bytes a thread (NVIDIA: the local size the driver reports)."""
    return SPILL_CHECK and misaligned and block_k > 32 and t.backend == "cuda" and not t.interpreter


def _gemm_tiles(t: Target, M: int, N: int, K: int, elem_size: int, tma: bool, cus: int, b_nmajor: bool, tc: bool,
                aligned: bool) -> dict[str, Any]:
    """gemm_config's choice before misaligned_depth."""
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
    sms = cus or DEFAULT_CUS["cuda"]  # what the NVIDIA rules below split for
    if (t.backend == "cuda" and N <= SKINNY_N and M > 32
            and (skinny := gemm_skinny_config(M, N, K, sms, aligned, elem_size == 4, not b_nmajor)) is not None):
        # A handful of columns: the tiles that stream A (policy_waves.gemm_skinny_config has the measurements).
        return skinny
    if tc and elem_size == 4 and t.backend == "cuda" and (cfg := gemm_tc_config(M, N, K, sms, b_nmajor,
                                                                               aligned)) is not None:
        # fp32 grids are latency-bound; one read with 4-byte loads splits up to one wave (30x2350x7191, 113 tiles,
        # unsplit: 0.77 -> 0.24x eager on an H200, benchmarks/gemm_ab_probe.py --seed 10).
        return {**cfg, "SPLIT_K": gemm_split_latency_bound(M, N, K, cfg["BLOCK_M"], cfg["BLOCK_N"], 32, sms,
                                                           sms // 2 if aligned else sms)}
    if (not tc and elem_size == 4 and b_nmajor and t.backend == "cuda" and 16 < M <= FP32_NMAJOR_IEEE_MAX_M
            and N > SKINNY_N):
        # IEEE products against an N-major B with 17-400 rows (policy_fp32.gemm_fp32_precision has the measurements)
        return fp32_nmajor_config(M, N, K, sms)
    if (not tc and elem_size == 4 and b_nmajor and t.backend == "cuda" and K <= FP32_NMAJOR_IEEE_MAX_K
            and M > FP32_NMAJOR_IEEE_MAX_M and N > SKINNY_N):
        # IEEE products for a K of one block at any M (gemm_fp32_precision): 64x128x32 (4282x3649x25 0.84x cuBLAS)
        return {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 3,
                "SPLIT_K": 1}
    if (not tc and elem_size == 4 and b_nmajor and t.backend == "cuda" and M > FP32_NMAJOR_IEEE_MAX_M
            and N > SKINNY_N and fp32_misaligned_ieee(M, N, K, aligned)):
        # IEEE products at a short K against a misaligned operand (gemm_fp32_precision): 64x64x32 (1949x1815x52
        # 0.76x cuBLAS, 3939x1229x96 0.89x; 64x128x32 0.75, 0.79)
        return {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 3,
                "SPLIT_K": 1}
    if M <= 32 or (M <= 64 and elem_size == 2 and t.backend == "cuda"):
        return _decode_config(t, M, N, K, elem_size, cus, b_nmajor, aligned)
    if t.backend == "cuda" and elem_size == 2 and (split := gemm_split_under_a_wave(M, N, K, cus)) > 1:
        # Under half a wave of 128x256 tiles and a long K: split K (policy_waves.py has the measurements).
        return {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 4,
                "SPLIT_K": split}
    small = M * N <= 256 * 256
    # K of one or two blocks (4096x128x4096, 8192x64x8192): the loop has nothing to pipeline, so 2 stages (half the
    # smem; sm_90 compile-only: 128x256x64 at 2 stages 0 spills, 128x128x64 at 8 warps 16, at 4 warps 1196).
    short_k = K <= 128
    if t.backend == "cuda":
        if small:
            cfg = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 4, "num_stages": 3}
        elif elem_size == 4:
            # fp32 (IEEE, no tensor cores) 1024^3 on an H100: 128x64x32 w4 s4 0.67x cuBLAS, 64x128x32 w4 s4 0.63x,
            # 128x128x32 w8 s3 0.54x (tune-gemm.json). M of 33-64 takes 64-row tiles: a 128-row tile would compute
            # half its rows for nothing (fp32 39x8737x2462 ran at 0.06x cuBLAS, benchmarks/shape_hunt.py seed 1).
            cfg = {"BLOCK_M": 64 if M <= 64 else 128, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4,
                   "num_stages": 4}
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
        # A grid of under half a wave with a long K (16-bit 686x7137x406 in 64x128 tiles: 44 programs on 132 SMs,
        # fp32 39x8737x2462: 39) leaves most SMs idle for the whole K loop: split K (policy_waves.py).
        split = gemm_split_small_grid(M, N, K, cfg["BLOCK_M"], cfg["BLOCK_N"], sms)
        if not aligned:  # scalar loads: a latency-bound K loop (policy_waves.gemm_split_latency_bound)
            split = max(split, gemm_split_latency_bound(M, N, K, cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"], sms,
                                                        sms // 2))
        return {**cfg, "SPLIT_K": split}
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


def splitk_reduce_tile(t: Target, M: int) -> tuple[int, int]:
    """(BLOCK_M, BLOCK_N) of gemm's split-K reduce-and-epilogue pass: M is small there (<= 32), so as many rows as M
    has (4 to 16) and 64 columns: N=4096 makes 64 programs, each reading SPLIT_K fp32 tiles once."""
    return (min(16, max(4, _next_pow2(M))), 64)


@cached_config
def elementwise_config(t: Target, n: int) -> dict[str, Any]:
    if t.interpreter:
        return {"BLOCK": max(1024, min(1 << 16, _next_pow2(n))), "num_warps": 4}
    return {"BLOCK": 1024, "num_warps": 4, "num_stages": 1, **_hip_extra(t, gemm=False)}


@cached_config
def tile2d_config(t: Target, M: int, N: int) -> dict[str, Any]:
    """2-D blocks for row-broadcast elementwise kernels (bias over the last dim)."""
    if t.interpreter:
        # ~16k elements a program (the interpreter pays per program): a width-1 tensor of 18102 rows in 16-row blocks
        # had taken 68 s in `smoke --preset random`.
        bn = max(64, min(4096, _next_pow2(N)))
        return {"BLOCK_M": max(16, min(1024, 16384 // bn)), "BLOCK_N": bn, "num_warps": 4}
    # 8x512 with 4 warps: 96.8 % (fp16), 91.5 % (bf16), 100.7 % (fp32) of copy bandwidth for bias+GELU+dropout+
    # residual on an H200, vs 85.6 / 81.9 / 102.1 % for 4x1024 (docs/measurements/2026-11-21-h200-tune-2.json).
    # Rows narrower than 512 take a block as wide as the row (a power of two) and more rows, keeping 4096 elements a
    # tile: a 512-wide block over 161 columns had left 69 % of the lanes masked (20-48 % of copy for H = 79-265 in
    # benchmarks/shape_hunt.py seeds 1-3, at 1.0-1.6x eager). Not timed after the change: no device time was left.
    bn = max(16, min(512, _next_pow2(N)))
    return {"BLOCK_M": 4096 // bn, "BLOCK_N": bn, "num_warps": 4, "num_stages": 1, **_hip_extra(t, gemm=False)}


def fast_tanh(t: Target, elem_size: int) -> bool:
    """The hardware tanh for GELU (common.gelu_tanh): NVIDIA, 16-bit outputs. The bias+GELU+dropout+residual kernel
    runs out of ALU before bandwidth at 16 bits (Philox, GELU and conversions are ~45 instructions per element)."""
    return t.backend == "cuda" and elem_size == 2


@cached_config
def strided_config(t: Target, n_cols: int) -> dict[str, Any]:
    """2-D tiles for elementwise kernels on inputs that are not one dense layout (transposed, sliced, expanded):
    BLOCK_N columns of the innermost folded dimension, BLOCK_M rows, ~4096 elements a tile (not timed)."""
    bn = max(1, min(512, _next_pow2(n_cols)))
    bm = max(1, min(64, 4096 // bn))
    if t.interpreter:
        return {"BLOCK_M": bm, "BLOCK_N": bn, "num_warps": 4}
    return {"BLOCK_M": bm, "BLOCK_N": bn, "num_warps": 4, "num_stages": 1, **_hip_extra(t, gemm=False)}


def _wide_tiles(M: int, N: int) -> int:
    """How many 128x256 output tiles an MxN product makes (the Hopper GEMM tile; its count picks the kernel)."""
    return -(-M // 128) * -(-N // 256)


def _next_pow2(n: int) -> int:
    return 1 << max(0, (int(n) - 1).bit_length())


# The attention policy lives in policy_attention.py, fp32 products in policy_fp32.py, the row kernels' in
# policy_rows.py; their names are part of this module's interface.
from rocm_triton_doctor.kernels.policy_attention import (  # noqa: E402,F401
    SHORT_KEYS, SHORT_KEYS_NARROW, TMA_ATTENTION_MIN_FLOPS, TMA_DEVICE_ATTENTION_MIN_FLOPS,
    TMA_DEVICE_NONCAUSAL_MID_D_MIN_FLOPS, attention_backward_config,
    attention_config, attention_kernel, attention_split_config, attention_use_tma, column_blocks, pointer_column_split,
    tensor_desc_device_supported)
from rocm_triton_doctor.kernels.policy_waves import (  # noqa: E402,F401
    SKINNY_N, _decode_config, _split_k, gemm_skinny_config, gemm_split_latency_bound, gemm_split_small_grid,
    gemm_split_under_a_wave, gemm_tail_split)
from rocm_triton_doctor.kernels.policy_align import (  # noqa: E402,F401
    ALIGN_COPY_MIN_B_BYTES, ALIGN_COPY_MIN_FLOPS, ALIGN_COPY_MIN_KN, ALIGN_COPY_MIN_REUSE, ALIGN_COPY_MIN_ROWS,
    gemm_align_copy)
from rocm_triton_doctor.kernels.policy_gemv import (  # noqa: E402,F401
    GEMV_16BIT_NMAJOR_MIN_K, GEMV_16BIT_NMAJOR_ROWS, GEMV_FP32_MISALIGNED_ROWS, GEMV_MAX_M, GEMV_PIPE_MAX_STAGE_BYTES,
    gemv_config, gemv_shift, gemv_takes)
from rocm_triton_doctor.kernels.policy_rows import (  # noqa: E402,F401
    NARROW_ROW, ODD_ROW_ONE_WARP_PROGRAMS, ROW_CHUNK, ROW_SINGLE_BYTES, ROW_SPLIT_EAGER_MIN_COLS, ROW_SPLIT_MAX_ROWS,
    ROW_SPLIT_LAYERNORM_MAX_ROWS, ROW_SPLIT_MID_ROWS, ROW_SPLIT_PROGRAMS_PER_CU, _row_config, row_class, row_config,
    row_split, split_class, window_config, WINDOW_MIN_COLS, WINDOW_TABLE_MIN_BYTES)
from rocm_triton_doctor.kernels.policy_fp32 import (  # noqa: E402,F401
    FP32_MISALIGNED_IEEE_MAX_K, FP32_MISALIGNED_IEEE_MAX_OUT, FP32_NMAJOR_IEEE_MAX_K, FP32_NMAJOR_IEEE_MAX_M, fp32_dot_precision,
    fp32_misaligned_ieee, fp32_nmajor_config, gemm_fp32_precision, gemm_tc_config,
    precision_supported)
