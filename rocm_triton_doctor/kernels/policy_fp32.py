"""fp32 matrix products: which input precision the kernels' fp32 dots use, and the GEMM tiles when they run on tensor
cores. policy.py re-exports these names.

Triton's tl.dot on fp32 operands defaults to TF32 on NVIDIA (10 mantissa bits: relative errors near 1e-3, far outside
an fp32 tolerance) and to IEEE products on AMD. On NVIDIA the IEEE path has no tensor cores: fp32 GEMMs ran at
0.12-0.91x cuBLAS SGEMM on an H100 (benchmarks/gemm_fp32_probe.py). The 3xTF32 split (input_precision "tf32x3": a = hi + lo with
hi and lo TF32, a·b ~ hi·hi + hi·lo + lo·hi, three tensor-core products accumulated in fp32; NVIDIA CUTLASS's 3xTF32,
Triton's F32DotTC pass) keeps fp32 accuracy: on that H100 (docs/measurements/2026-11-27-h100-s9-fp32-probe.json),
its error against an fp64 product, normalised elementwise by |A|·|B|, was 1.9e-8-1.4e-7 over 28 shapes, where
cuBLAS SGEMM's was 1.5e-8-4.8e-7 and the IEEE kernel's 7e-8-4.7e-7; inf, NaN, values near FLT_MAX, huge and tiny
magnitudes gave cuBLAS's inf/NaN pattern. Triton handles inf since triton-lang/triton#5335 (Dec 2024: a NaN from the
cross terms of an infinite input is dropped before the hi·hi product is added), hence the version floor below.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from rocm_triton_doctor.kernels.policy import Target
from rocm_triton_doctor.kernels.policy_waves import LATENCY_SPLIT_PROGRAMS_PER_SM, gemm_split_latency_bound

TF32X3_MIN_TRITON = (3, 3)  # the first release line after triton-lang/triton#5335 (inf inputs), to be safe
# Data-centre GPUs, whose TF32 tensor cores run far ahead of their fp32 FMA units (dense TF32 / FP32, NVIDIA's
# datasheets: A100 156 / 19.5 TFLOP/s, H100 SXM 495 / 67, B200 about 14x), so three TF32 products still win. GeForce
# and workstation parts (sm_86, sm_89, sm_120: RTX 4090 82.6 / 82.6) run TF32 no faster than fp32, so the split would
# cost about three times the IEEE path there: they keep IEEE products (not measured either way). Timed: sm_90 only.
TF32X3_ARCHS = (80, 90, 100, 103)
FP32_MISALIGNED_NARROW_N = 128  # gemm_tc_config's 32-row tiles up to this many columns (0: off, for the A/B)
FP32_MISALIGNED_NARROW_MAX_MK = 1 << 24  # ... and up to this many elements of A


def _sm(arch: str) -> int:
    try:
        return int(arch.removeprefix("sm_").rstrip("a"))
    except ValueError:
        return 0


@cache
def _triton_version() -> tuple[int, int]:
    import triton

    try:
        major, minor = triton.__version__.split(".")[:2]
        return int(major), int(minor)
    except (ValueError, AttributeError):
        return 0, 0


@cache
def fp32_dot_precision(t: Target) -> str:
    """The input_precision of fp32 tl.dot in every kernel when the caller asks for fp32 accuracy: "tf32x3" on the NVIDIA
    data-centre GPUs of TF32X3_ARCHS with a Triton that handles infinities there, "ieee" everywhere else
    (AMD: Triton also offers "bf16x6" there, an fp32-accurate split onto bf16 matrix cores; not measured, so not
    used; the interpreter computes in numpy whatever is asked)."""
    if t.backend == "cuda" and _sm(t.arch) in TF32X3_ARCHS and _triton_version() >= TF32X3_MIN_TRITON:
        return "tf32x3"
    return "ieee"


FP32_NMAJOR_IEEE_MAX_M = 400  # fp32 against an N-major B takes IEEE products up to this many rows (measured to 391)
FP32_NMAJOR_IEEE_MAX_K = 32  # ... and at any M when K fits one 32-deep block (H200, fp32_shortk_probe.py)
# ... and, with an operand read without 16-byte vectors, up to K = 96 at outputs of up to 2^24 elements
# (gemm_fp32_precision has the measurements).
FP32_MISALIGNED_IEEE_MAX_K = 96
FP32_MISALIGNED_IEEE_MAX_OUT = 2**24


def gemm_fp32_precision(t: Target, M: int, b_nmajor: bool, K: int = 1 << 30, N: int = 1 << 30,
                        aligned: bool = True) -> str:
    """gemm(precision="auto")'s choice for fp32: fp32_dot_precision, except IEEE products against an N-major B (a
    (K, N) tensor) up to FP32_NMAJOR_IEEE_MAX_M rows, where the split lost every time it was timed:
    * decode sizes (H200, graph replay against eager, benchmarks/gemm_ab_probe.py seeds 9-11): 2x1661x399 0.50 ->
      0.35x, 5x1527x1315 0.69 -> 0.50x, 3x1346x31141 0.64 -> 0.35x;
    * 17-391 rows (H200, × cuBLAS, benchmarks/gemm_pipe_probe.py, docs/measurements/2026-11-28-h200-s18-gemm-
      pipe2.json), 3xTF32 at its tiles -> IEEE at 32x128x32 (fp32_nmajor_config): 28x6016x26517 0.13 -> 0.93x,
      17x4096x11007 0.16 -> 1.34x, 64x4096x4096 0.64 -> 0.91x, 40x4096x14336 0.65 -> 0.93x, 391x428x2531 0.65 ->
      0.95x, 200x777x5555 0.57 -> 0.77x, 96x3000x20001 0.58 -> 0.77x, 128x2048x8191 0.62 -> 0.66x; lost
      33x1000x3001 unsplit (0.75 -> 0.40-0.57x; the rule splits it, as the 3xTF32 tiles were).
    Against nn.Linear's K-major weight the split won (H100, gemm_fp32_probe.py: 1x4096x4096 0.31 -> 0.89x cuBLAS,
    16x4096x4096 0.52 -> 1.47x; the probe above: 17x4096x11008 B^T 0.93 against 0.22-0.55x, 29x7906x2320 B^T 0.57
    against 0.16-0.27x). Both are fp32-accurate. At 1024^3 and up the split won against N-major B too
    (gemm_tc_config).
    With a K of one block (K <= FP32_NMAJOR_IEEE_MAX_K) against an N-major B, at any M (H200, × cuBLAS,
    benchmarks/fp32_shortk_probe.py, docs/measurements/2026-11-28-h200-s19-shortk.json): 4282x3649x25 0.30 with the
    3xTF32 tiles, 0.84 with IEEE 64x128x32; at K = 64 the two tie (8000x8000x64 1.04 / 1.07) and from K = 128 the split
    wins (2864x11124x132 0.87 / 0.80, 3000x9000x200 0.95 / 0.85); against a K-major B the split wins at every short K
    (12507x4095x25 B^T 1.06 / 0.59).
    With an operand whose rows are not 16-byte aligned (`aligned` False: an odd N, a K not a multiple of 4, as it
    will be read after gemm's aligned copies), K of up to FP32_MISALIGNED_IEEE_MAX_K and an output of up to
    FP32_MISALIGNED_IEEE_MAX_OUT elements (H200, × cuBLAS, fp32_shortk_probe.py --set s23, docs/measurements/
    2026-11-28-h200-s23-shortk23.json), the 3xTF32 64x64x32 tiles ran 0.21-0.34 on seven of fifteen rows (seed 15's
    1949x1815x52 0.25, 1949x1815x64 0.21, 3939x1229x96 0.23, 577x1743x37 0.24, 609x1235x72 0.30, 1000x999x40 0.34)
    and IEEE 64x64x32 0.56-0.93 there (0.76, 0.93, 0.89, 0.56, 0.78, 0.79), and higher on every misaligned row but one
    (4000x4001x52 0.81 -> 0.87, 3503x3275x70 0.69 -> 0.75, 892x810x34 0.67 -> 0.80, 1541x2316x49 with A misaligned
    0.58 -> 0.78; 3000x2047x96 1.00 -> 0.98). Aligned rows of the same sizes kept the split (1949x1816x52 0.85 against
    0.88, 1486x1080x88 0.94 against 0.91); at larger outputs the split tied or beat IEEE 64x128x32 (session 22's
    draws, 3558x12313x58 0.88 against 0.80)."""
    prec = fp32_dot_precision(t)
    if prec != "tf32x3" or not b_nmajor:
        return prec
    if M <= FP32_NMAJOR_IEEE_MAX_M or K <= FP32_NMAJOR_IEEE_MAX_K:
        return "ieee"
    if fp32_misaligned_ieee(M, N, K, aligned):
        return "ieee"
    return prec


def fp32_misaligned_ieee(M: int, N: int, K: int, aligned: bool) -> bool:
    """The short-K, small-output fp32 products against a misaligned N-major operand that take IEEE 64x64x32 tiles
    (gemm_fp32_precision's last rule; the caller has checked the target, the layout and M > FP32_NMAJOR_IEEE_MAX_M)."""
    return not aligned and K <= FP32_MISALIGNED_IEEE_MAX_K and M * N <= FP32_MISALIGNED_IEEE_MAX_OUT


def fp32_nmajor_config(M: int, N: int, K: int, cus: int) -> dict[str, Any]:
    """IEEE tiles for fp32 against an N-major B with 17 to FP32_NMAJOR_IEEE_MAX_M rows (NVIDIA): 32x128x32, 4 warps,
    3 stages, K split as policy_waves.gemm_split_latency_bound does for any grid up to that many programs (up to
    LATENCY_SPLIT_PROGRAMS_PER_SM an SM, one K block a split at least). Triton's
    FMA dot reads its operands from shared memory, so a misaligned B costs 4-byte asynchronous copies and not a
    latency-bound loop of scalar loads, as it does in the GEMV kernel (gemm_pipe_probe.py, the docstring above; the
    hunt's 28x6016x26517 had run on the GEMV at 0.12x cuBLAS). The split fills the GPU: 28x6016x26517 makes 208
    tiles (0.45x unsplit with 64-deep K blocks, 0.93x in 4 splits); 64-row tiles lost at 28-391 rows."""
    from rocm_triton_doctor.kernels.policy_waves import LATENCY_SPLIT_PROGRAMS_PER_SM, gemm_split_latency_bound

    split = gemm_split_latency_bound(M, N, K, 32, 128, 32, cus, LATENCY_SPLIT_PROGRAMS_PER_SM * cus)
    return {"BLOCK_M": 32, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 3,
            "SPLIT_K": split}


def precision_supported(t: Target, precision: str) -> bool:
    """Whether `precision` (tl.dot's input_precision for fp32 operands) compiles for t: "ieee" everywhere; "tf32" and
    "tf32x3" on NVIDIA from sm_80 (TF32 tensor cores), and in the interpreter (which ignores it)."""
    if precision == "ieee" or t.interpreter:
        return True
    return t.backend == "cuda" and _sm(t.arch) >= 80


def gemm_tc_config(M: int, N: int, K: int, cus: int, b_nmajor: bool, aligned: bool) -> dict[str, Any] | None:
    """Tiles for an fp32 GEMM on tensor cores (tf32x3), or None where the decode tiles serve (M <= 16 with K >= 1024).
    fp32 operands take BLOCK_K 32 (16-32 KiB a stage). H100, graph replay against cuBLAS SGEMM, the 3xTF32 split
    (benchmarks/gemm_fp32_probe.py, docs/measurements/2026-11-27-h100-s9-fp32-probe.json):
    * B N-major (a (K, N) tensor): 128x64x32, 4 warps, 4 stages won from 1024^3 up (0.97x; 2048^3-8192^3 1.03-1.10x,
      128x4096x4096 0.76x against 0.53x for 64x64 tiles);
    * B K-major (nn.Linear's weight transposed): 128x128x32, 8 warps, 3 stages with at least two waves of such tiles
      (4364x3802x24463 1.28x, 793x13577x7786 0.96x, 4096x4096x11008 1.65x), else 64x64 (3713x854x212 0.97x against
      0.67x, 10757x290x30 0.71x against 0.50x, 64x4096x4096 1.25x);
    * an operand left misaligned (rows not 16-byte aligned and not copied: 4-byte loads) runs latency-bound, and
      more, smaller programs hide more of it: 64x64 (1373x495x616 0.66x against 0.52x for 128x64, 140x1399x10426
      0.64x against 0.37x).
    The decode tiles (policy._decode_config) won at 1 and 16 rows with K = 4096 (0.89x, 1.47x) and lost at 12x390
    (0.33x against 0.61x for 64x64)."""
    if M <= 16 and K >= 1024:
        return None
    if not aligned and N <= FP32_MISALIGNED_NARROW_N and M * K <= FP32_MISALIGNED_NARROW_MAX_MK:
        # 17-128 columns against a misaligned operand (4-byte loads; up to 16 columns policy_waves' skinny tiles
        # serve): 32-row tiles, twice the programs of 64-row ones to hide the loads' latency, split as
        # gemm_split_latency_bound says for them. H200, graph replay × cuBLAS SGEMM, policy (64x64x32 w4 s4) -> the
        # best of 36 tilings (benchmarks/fp32_skinny_sweep.py, docs/measurements/2026-11-27-h200-s15-fp32-skinny-
        # sweep.json): 2933x1033x34 B^T 0.26 -> 0.68 (32x64, 4 splits), 13562x209x36 B^T 0.30 -> 0.64 (32x64, 1),
        # 401x3747x76 B^T 0.34 -> 0.79 (32x128, 16), 1500x777x40 0.71 -> 1.04 (32x64, 4); 64- and 128-row tiles
        # were slower in every row, IEEE products slower than tf32x3 in all but one. Fresh draws (H100, gemm_ab_probe.py
        # --ab s15fp32, …-h100-s15-ab-fp32-{narrow,skinny}.json, 0 wrong): 17-128 columns (--fp32-narrow --seed 65)
        # median 0.82 -> 0.95x eager, worst 0.17 -> 0.42 (4633x667x18 B^T; 240x7591x17 bias_relu B^T 0.39 -> 1.13,
        # 8951x827x39 0.25 -> 0.79); 1-64 columns (--skinny --fp32-odd --seed 66) 0.94 -> 0.99, worst 0.18 -> 0.45.
        # They lost where A is large (7389x6667x60 bias_relu B^T 0.86 -> 0.60, 2727x8661x42 0.75 -> 0.53, 9833x4411x31
        # 0.66 -> 0.60: M·K of 23-49 million, where every win had at most 13), hence FP32_MISALIGNED_NARROW_MAX_MK,
        # set from these same draws; one loss stays under it (316x16021x117 bias_gelu B^T 0.90 -> 0.80). The bounded
        # rule on fresh draws (H100, --fp32-narrow --seed 67, …-narrow67.json): median 0.69 -> 0.99, worst 0.15 ->
        # 0.45 (5724x2759x17), no row lost more than 8 %; the three large rows above keep their tiles.
        return {"BLOCK_M": 32, "BLOCK_N": 64 if N <= 64 else 128, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4,
                "num_stages": 3}
    small = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 4}
    if not aligned or M <= 64:
        return small
    if b_nmajor:
        return {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 4}
    tiles = -(-M // 128) * -(-N // 128)
    if tiles >= 2 * cus:
        return {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 8, "num_stages": 3}
    return small


FP32_TC_SPLIT_WAVE = True  # aligned grids split K up to one wave of tiles (False: half a wave, as before session 29)
FP32_TC_WIDE_SPLIT = True  # ... and their 128x64 tiles up to FP32_TC_WIDE_PROGRAMS_PER_SM programs per SM
FP32_TC_WIDE_PROGRAMS_PER_SM = 6


def gemm_tc_split(M: int, N: int, K: int, bm: int, bn: int, sms: int, aligned: bool) -> int:
    """SPLIT_K for gemm_tc_config's bm x bn tiles on `sms` SMs: their K loop is latency-bound (three products and two
    splits per K step), so K splits as policy_waves.gemm_split_latency_bound says, over grids of up to one wave.
    * An operand read with 4-byte loads splits up to one wave (30x2350x7191, 113 tiles, unsplit: 0.77 -> 0.24x eager
      on an H200, benchmarks/gemm_ab_probe.py --seed 10), and so does an aligned one (it split up to half a wave until
      session 29, a bound no measurement had set): 1213x6172x256 B^T, 76 tiles of 64x64, unsplit 0.55x eager, split
      2/3/4/6 0.74/1.07/1.13/1.13x (H200, graph replay, benchmarks/gemm_misaligned_probe.py --hunt23 --set split,
      docs/measurements/2026-11-29-h200-s29-split.json).
    * Aligned 128x64 tiles (an N-major B) over half a wave split further, to 6 programs per SM instead of 4: of 14 such
      rows under a wave (benchmarks/s29_ab_probe.py --family fewtile, seeds 1 and 3: …-s29-fewtile{,-nmajor}.json) 9
      ran faster at split 8 than at 4 (2644x7860x208 0.66 -> 0.84x eager, 1751x14496x264 0.79 -> 0.94x, 884x3504x580
      0.85 -> 1.02x), one slower (587x860x1108 1.06 -> 0.94x), and 1000-1024 programs lost (2008x1024x508 1.05 ->
      0.87x, 575x1696x1600 1.08 -> 0.97x: the cap keeps those at 4). Fresh draws, seed 5: …-fewtile-verify.json.
      Measured on grids of 68-128 such tiles; smaller grids keep the 4 per SM they were measured with (session 9)."""
    wave = sms if (not aligned or FP32_TC_SPLIT_WAVE) else sms // 2
    tiles = -(-M // bm) * -(-N // bn)
    wide = aligned and FP32_TC_WIDE_SPLIT and bm * bn >= 128 * 64 and 2 * tiles > sms
    per_sm = FP32_TC_WIDE_PROGRAMS_PER_SM if wide else LATENCY_SPLIT_PROGRAMS_PER_SM
    return gemm_split_latency_bound(M, N, K, bm, bn, 32, sms, wave, per_sm)
