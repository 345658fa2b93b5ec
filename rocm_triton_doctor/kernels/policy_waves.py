"""Wave quantisation of a GEMM grid: when the output tiles fill the GPU's SMs a whole number of times plus a small
remainder, the last wave runs a few tiles while most SMs idle. On an H100 (132 SMs), fp16 3072x4096x3072 in
128x256 tiles makes 288 tiles = 2.18 waves: it ran at 0.76x cuBLAS in graph replay, 3000x5120x3000 at 0.66x and
2304x4096x2304 (1.23 waves) at 0.79x, while 2048x4096x2048 (0.97 waves) and 4000x4096x4000 (3.88) ran at 0.99-1.01x
(benchmarks/gemm_wave_probe.py, docs/measurements/2026-11-23-h100-gemm-waves-*.json).

The remedy here is a split of the grid by rows: the first row bands, whole waves of tiles, run as usual; the last
bands (the remainder) run with their K range split over several programs (gemm's split-K path: fp32 partial tiles,
one reduce-and-epilogue pass), so the tail takes a fraction of a wave instead of a whole one. A poor man's
stream-K: two launches of the same kernels, no new kernel code."""

from __future__ import annotations

from rocm_triton_doctor.kernels.policy import Target, _wide_tiles

TAIL_MAX_SPLIT = 8
TAIL_MIN_K_BLOCKS = 4  # each split keeps at least this many full K blocks, so its pipeline fills
TAIL_REDUCE_WAVES = 0.15  # the reduce pass and the second launch, in waves of the main kernel (a guess, on the safe side)


def gemm_tail_split(t: Target, M: int, N: int, K: int, bm: int, bn: int, bk: int, cus: int) -> tuple[int, int]:
    """(rows of the main launch, split-K factor of the tail launch over the remaining rows); (M, 1): one launch.
    Only where it pays in the model below (main waves + tail waves / split + the reduce < the unsplit waves), with
    at least one whole wave in the main part, a remainder of at most half a wave, and each split keeping
    TAIL_MIN_K_BLOCKS full K blocks. NVIDIA only: it is measured there; AMD keeps one launch until timed."""
    if t.backend != "cuda" or t.interpreter or cus <= 0 or bm >= M:
        return M, 1
    tiles_n, bands = -(-N // bn), -(-M // bm)
    tiles = bands * tiles_n
    full = tiles // cus
    last = tiles - full * cus
    if full < 1 or last == 0 or 2 * last > cus:
        return M, 1
    main_bands = full * cus // tiles_n
    tail_tiles = (bands - main_bands) * tiles_n
    if main_bands < 1 or tail_tiles <= 0:
        return M, 1
    split = min(TAIL_MAX_SPLIT, cus // tail_tiles, (K // bk) // TAIL_MIN_K_BLOCKS)
    if split < 2 or split * (M - main_bands * bm) * (-(-N // 4) * 4) >= 2**31:  # the fp32 workspace, int32-indexed
        return M, 1
    main_waves = -(-(main_bands * tiles_n) // cus)
    tail_waves = -(-(tail_tiles * split) // cus) / split
    if main_waves + tail_waves + TAIL_REDUCE_WAVES >= -(-tiles // cus):
        return M, 1
    return main_bands * bm, split


def gemm_split_under_a_wave(M: int, N: int, K: int, cus: int) -> int:
    """SPLIT_K for a 16-bit GEMM whose 128x256 tiles fill less than half of one wave of `cus` SMs but whose K is long:
    the largest power of two (<= 8) with tiles·split <= cus and SMALL_GRID_MIN_K of K per split, taken only when
    tiles·split fills at least half the SMs; 1 otherwise. Graph replay on an H100, bf16, against cuBLAS
    (benchmarks/gemm_splitk_probe.py, docs/measurements/2026-11-23-h100-gemm-splitk.json): 1000x8192x1000 0.65 ->
    0.85x (128x256, split 4), 512x8192x2048 0.80 -> 0.94x, 256x16384x4096 0.81 -> 0.99x, 4096x16384x256 0.77 ->
    0.95x; 768x4096x768 and 1000x4096x1000 (K too short to split) and 1536x8192x1536 (72 tiles) keep one pass."""
    if cus <= 0:
        return 1
    tiles = _wide_tiles(M, N)
    if 2 * tiles >= cus:
        return 1
    # gemm_split_small_grid's doubling with 128x256 tiles (K // 64 // (2s) >= 32 blocks is K // (2s) >= 2048), taken
    # only when the split grid fills at least half of the SMs.
    split = gemm_split_small_grid(M, N, K, 128, 256, cus)
    return split if 2 * tiles * split >= cus else 1


SMALL_GRID_MIN_K = 2048  # K elements each split keeps (32 blocks of 64): shorter splits lost to no split (H100)


def gemm_split_small_grid(M: int, N: int, K: int, bm: int, bn: int, cus: int) -> int:
    """SPLIT_K for a pointer-kernel grid of (bm, bn) tiles that fills at most half of one wave of `cus` SMs: the
    largest power of two (<= 8) with tiles·split <= cus and at least SMALL_GRID_MIN_K elements of K per split; 1
    otherwise. The same floor as gemm_split_under_a_wave, and consistent with the small-grid probe of session 6
    (docs/performance.md: 64x128 tiles, bf16 on an H100): split 2 helped 640x5120x640 (50 tiles: 17.7 -> 12.8 us) and
    1000x4096x1000, and lost at 768x4096x768 and 1024x2048x1024, whose 72 and 128 tiles a split of 2 would push past
    one wave (this rule keeps one pass there). 1000x4096x1000 (128 tiles) keeps one pass here too."""
    if cus <= 0:
        return 1
    tiles = -(-M // bm) * -(-N // bn)
    if 2 * tiles > cus:
        return 1
    split = 1
    while split < 8 and tiles * split * 2 <= cus and K // (split * 2) >= SMALL_GRID_MIN_K:
        split *= 2
    return split if split * M * N < 2**31 else 1


LATENCY_SPLIT_MAX = 16
LATENCY_SPLIT_PROGRAMS_PER_SM = 4


def gemm_split_latency_bound(M: int, N: int, K: int, bm: int, bn: int, bk: int, cus: int, max_tiles: int) -> int:
    """SPLIT_K for a grid of at most `max_tiles` tiles whose K loop is latency-bound rather than throughput-bound:
    fp32 on tensor cores (three products and two splits per K step) and operands read with scalar loads (rows not
    16-byte aligned and not copied: no asynchronous copies, so no pipelining). More programs per SM hide more of it,
    past one wave: the largest power of two (<= 16) that keeps the grid within LATENCY_SPLIT_PROGRAMS_PER_SM programs
    per SM and at least one full K block per split; 1 for larger grids.
    H200, graph replay against cuBLAS, split 1 -> the rule's (benchmarks/gemm_fp32_probe.py --small-grid [--dtype
    bfloat16], docs/measurements/2026-11-27-h200-s9-{fp32,bf16}-small-grid.json): fp32 86x8564x38 B^T 0.06 -> 0.68x,
    236x8550x170 0.05 -> 0.59x, 573x1203x28 0.08 -> 0.59x, 1024x4096x64 0.11 -> 1.07x, 4415x5669x38 0.16 -> 0.58x;
    bf16 with a misaligned weight the policy does not copy: 139x5478x51 B^T 0.12 -> 0.81x, 1686x958x57 0.23 -> 0.66x
    (8 splits of 958: under two blocks each, the split the data preferred). Losses: fp32 2906x1314x33 0.36x at 4,
    0.29x at the rule's 16; bf16 86x659x5763 B^T 0.40 -> 0.38x; 16-bit grids of more than half a wave lost at every
    split (77x1791x29225 B^T 0.36 -> 0.13-0.23x)."""
    tiles = -(-M // bm) * -(-N // bn)
    if cus <= 0 or tiles > max_tiles:
        return 1
    split = 1
    while (split < LATENCY_SPLIT_MAX and tiles * split * 2 <= LATENCY_SPLIT_PROGRAMS_PER_SM * cus
           and K // (split * 2) >= bk and split * 2 * M * N < 2**31):
        split *= 2
    return split
