"""Launch policy for GEMMs whose operands are read with scalar loads: a K-contiguous operand whose rows start off
16-byte boundaries (K not a multiple of 16 bytes) or an N-major one with such an N, not copied aligned first
(policy_align.py decides the copies). The tiles for them on NVIDIA: small tiles with 16-deep K blocks where the grid
allows (misaligned_small_config), else gemm_config's tiles with K blocks no deeper than the loads a thread can hold
(misaligned_tiles: misaligned_depth, and 16 deep for fp32 tensor-core tiles at a short K), and the compiled kernel's
spill check gemm() runs (spill_checked). AMD keeps the tiles of its own compile-only audit. policy.py re-exports the
rules and their bounds; the switches benchmarks and tests turn (MISALIGNED_SMALL_TILES, SPILL_CHECK, and any bound
they change) are set on this module, where the rules read them."""

from __future__ import annotations

from typing import Any

from rocm_triton_doctor.kernels.policy import DEFAULT_CUS, Target
from rocm_triton_doctor.kernels.policy_waves import SKINNY_N, gemm_split_latency_bound

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
    tiles = -(-M // MISALIGNED_SMALL_TILE["BLOCK_M"]) * -(-N // MISALIGNED_SMALL_TILE["BLOCK_N"])
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


def misaligned_small_config(t: Target, M: int, N: int, K: int, elem_size: int, cus: int) -> dict[str, Any] | None:
    """MISALIGNED_SMALL_TILE with the latency split where misaligned_small_tiles takes the product, else None."""
    if not misaligned_small_tiles(t, M, N, K, elem_size, cus):
        return None
    sms, tile = cus or DEFAULT_CUS["cuda"], MISALIGNED_SMALL_TILE
    split = gemm_split_latency_bound(M, N, K, tile["BLOCK_M"], tile["BLOCK_N"], tile["BLOCK_K"], sms, sms)
    return {**tile, "SPLIT_K": split}


def misaligned_tiles(t: Target, cfg: dict[str, Any], K: int, elem_size: int, tc: bool) -> dict[str, Any]:
    """gemm_config's tiles cfg for operands read with scalar loads: fp32 tensor-core tiles (tc) 16 deep up to
    FP32_MISALIGNED_SHORT_K on NVIDIA, the others through misaligned_depth."""
    if tc and elem_size == 4 and K <= FP32_MISALIGNED_SHORT_K and t.backend == "cuda":
        return {**cfg, "BLOCK_K": 16}
    return misaligned_depth(t, cfg, K)
