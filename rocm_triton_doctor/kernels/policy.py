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
    if aligned or tma:
        return _gemm_tiles(t, M, N, K, elem_size, tma, cus, b_nmajor, tc, aligned)
    # operands read with scalar loads: policy_misaligned.py's tiles
    small = misaligned_small_config(t, M, N, K, elem_size, cus)
    if small is not None:
        return small
    return misaligned_tiles(t, _gemm_tiles(t, M, N, K, elem_size, tma, cus, b_nmajor, tc, aligned), K, elem_size, tc)


def _gemm_tiles(t: Target, M: int, N: int, K: int, elem_size: int, tma: bool, cus: int, b_nmajor: bool, tc: bool,
                aligned: bool) -> dict[str, Any]:
    """gemm_config's choice before policy_misaligned's rules."""
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
        # fp32 grids are latency-bound: K split up to a wave of tiles (policy_fp32.gemm_tc_split)
        return {**cfg, "SPLIT_K": gemm_tc_split(M, N, K, cfg["BLOCK_M"], cfg["BLOCK_N"], sms, aligned)}
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


# The flat form of bias+GELU+dropout+residual (bias_gelu_dropout_residual_flat_kernel): None: bias_flat's rule; True:
# always; False: only where the mask needs it (benchmarks and tests time and compare the two forms).
BIAS_FLAT: bool | None = None


def bias_flat(N: int, dropout: bool = False) -> bool:
    """Whether contiguous bias+GELU+dropout+residual over rows of N runs as one flat stretch of M·N elements instead
    of tile2d_config's row tiles. Always for dropout at N % 8 != 0: its mask draws Philox counter f // 8 for flat
    index f, whose octets cross rows there (bias_gelu_dropout_residual_flat_kernel; strided inputs are copied dense
    for it). Otherwise where the row tiles are slow: N not a multiple of 16 (Triton marks an int divisible by 16 or
    not, so the tiles' row starts rows·N read one element at a time, 16-byte aligned or not) or N not a multiple of
    the tiles' BLOCK_N (lanes idle). H200, % of copy bandwidth, row tiles -> flat (benchmarks/bias_flat_probe.py,
    docs/measurements/2026-11-29-h200-s28-bias-flat-s{1,2}.json): hunt 22's rows bf16 1x18447x4481 46 -> 100, fp16
    8x16785x392 48 -> 100, fp32 8x7868x811 81 -> 101, bf16 1x473047x124 76 -> 96; 16 fresh draws (seed 2) 7 faster by
    more than 5 %, none slower. Flat everywhere (seed 1) lost where the tiles fit: 16-bit with dropout at N = 4096/8192
    (92 -> 84, 96 -> 87 %) and bf16 N = 240 (108 -> 89, with an integer % for the column; 102 with the fp32 quotient),
    so those keep the tiles (N = 240 by the rule's second half, 102 %). Hunt 23's dropout rows at N % 8 != 0, which
    ran on row tiles with a per-row mask before (…-s28-bias-odd-dropout-s3.json): bf16 1x3159x10734 54 -> 79 %, bf16
    2x55486x1218 45 -> 79, bf16 8x237x8998 51 -> 81, fp32 4x9515x1299 76 -> 102."""
    if dropout and N % 8:
        return True
    if BIAS_FLAT is not None:
        return BIAS_FLAT
    bn = max(16, min(512, _next_pow2(N)))  # tile2d_config's BLOCK_N
    return N % 16 != 0 or N % bn != 0


@cached_config
def bias_flat_config(t: Target, n: int) -> dict[str, Any]:
    """BLOCK and warps of the flat bias+GELU+dropout+residual kernel over n elements. H200 (bias_flat's runs):
    2048 elements with 4 warps was within 5 % of the best of 1024-4096 with 4 or 8 warps on 20 of seed 2's 29 rows
    that take the flat form, and 10 % at most off it elsewhere (1024 best on small problems, 4096 on 16-bit dropout:
    fp16 1x92266x560 94.2 us against 102.6); 4096 lost on small ones (bf16 1x301x12405 7.0 us against 5.4 in seed
    1). Not timed on AMD."""
    if t.interpreter:  # few programs (the interpreter pays per program), as tile2d_config
        return {"BLOCK": max(1024, min(1 << 14, _next_pow2(n))), "num_warps": 4}
    return {"BLOCK": 2048, "num_warps": 4, "num_stages": 1, **_hip_extra(t, gemm=False)}


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
    TMA_DEVICE_NONCAUSAL_MID_D_MIN_FLOPS, ATTN_BWD_KV_SPLIT_PER_CU, attention_backward_config,
    attention_backward_dq_atomic, attention_backward_kv_split,
    attention_config, attention_kernel, attention_small_grid, attention_split_config, attention_use_tma, column_blocks,
    pointer_column_split,
    tensor_desc_device_supported)
from rocm_triton_doctor.kernels.policy_waves import (  # noqa: E402,F401
    SKINNY_N, _decode_config, _split_k, gemm_skinny_config, gemm_split_latency_bound, gemm_split_small_grid,
    gemm_split_under_a_wave, gemm_tail_split)
from rocm_triton_doctor.kernels.policy_align import (  # noqa: E402,F401
    ALIGN_COPY_MIN_B_BYTES, ALIGN_COPY_MIN_FLOPS, ALIGN_COPY_MIN_KN, ALIGN_COPY_MIN_REUSE, ALIGN_COPY_MIN_ROWS,
    MMAJOR_COPY_MIN_WAVE_TILE, NARROW_COPY_MIN_ROWS, gemm_align_copy)
from rocm_triton_doctor.kernels.policy_gemv import (  # noqa: E402,F401
    GEMV_16BIT_NMAJOR_MIN_K, GEMV_16BIT_NMAJOR_ROWS, GEMV_FP32_MISALIGNED_ROWS, GEMV_MAX_M, GEMV_PIPE_MAX_STAGE_BYTES,
    gemv_config, gemv_shift, gemv_takes)
from rocm_triton_doctor.kernels.policy_rows import (  # noqa: E402,F401
    NARROW_ROW, ODD_ROW_ONE_WARP_PROGRAMS, ROW_CHUNK, ROW_SINGLE_BYTES, ROW_SPLIT_EAGER_MIN_COLS, ROW_SPLIT_MAX_ROWS,
    ROW_SPLIT_LAYERNORM_MAX_ROWS, ROW_SPLIT_MID_ROWS, ROW_SPLIT_PROGRAMS_PER_CU, _row_config, row_class, row_config,
    row_split, split_class, window_config, WINDOW_MIN_COLS, WINDOW_TABLE_MIN_BYTES)
from rocm_triton_doctor.kernels.policy_fp32 import (  # noqa: E402,F401
    FP32_MISALIGNED_IEEE_MAX_K, FP32_MISALIGNED_IEEE_MAX_OUT, FP32_NMAJOR_IEEE_MAX_K, FP32_NMAJOR_IEEE_MAX_M, fp32_dot_precision,
    fp32_misaligned_ieee, fp32_nmajor_config, gemm_fp32_precision, gemm_tc_config, gemm_tc_split,
    precision_supported)
from rocm_triton_doctor.kernels.policy_misaligned import (  # noqa: E402,F401
    FP32_MISALIGNED_SHORT_K, MISALIGNED_DEPTH_MAX_K, MISALIGNED_MAX_LOADS_PER_THREAD, MISALIGNED_SMALL_TILE,
    MISALIGNED_SMALL_TILES_ANY_K, MISALIGNED_SMALL_TILES_MAX_K, MISALIGNED_SMALL_TILES_PER_SM, MISALIGNED_SPILL_LIMIT,
    misaligned_depth, misaligned_small_config, misaligned_small_tiles, misaligned_tiles, spill_checked)
