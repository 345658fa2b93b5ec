"""GEMM grids that do not fill the GPU evenly: wave quantisation, split-K for small and latency-bound grids, and the
decode-size tiles (policy.gemm_config re-exports and calls these).

Wave quantisation: when the output tiles fill the GPU's SMs a whole number of times plus a small
remainder, the last wave runs a few tiles while most SMs idle. On an H100 (132 SMs), fp16 3072x4096x3072 in
128x256 tiles makes 288 tiles = 2.18 waves: it ran at 0.76x cuBLAS in graph replay, 3000x5120x3000 at 0.66x and
2304x4096x2304 (1.23 waves) at 0.79x, while 2048x4096x2048 (0.97 waves) and 4000x4096x4000 (3.88) ran at 0.99-1.01x
(benchmarks/gemm_wave_probe.py, docs/measurements/2026-11-23-h100-gemm-waves-*.json).

The remedy here is a split of the grid by rows: the first row bands, whole waves of tiles, run as usual; the last
bands (the remainder) run with their K range split over several programs (gemm's split-K path: fp32 partial tiles,
one reduce-and-epilogue pass), so the tail takes a fraction of a wave instead of a whole one. A poor man's
stream-K: two launches of the same kernels, no new kernel code."""

from __future__ import annotations

from typing import Any

from rocm_triton_doctor.kernels.policy import DEFAULT_CUS, Target, _hip_extra, _next_pow2, _wide_tiles

TAIL_MAX_SPLIT = 8
TAIL_MIN_K_BLOCKS = 4  # each split keeps at least this many full K blocks, so its pipeline fills
TAIL_REDUCE_WAVES = 0.15  # the reduce pass and the second launch, in waves of the main kernel (a guess, on the safe side)
# K the tail split needs at all: measured from K = 3000 up (above); at K = 768 the second launch lost 15-35 % (H200,
# graph replay, 128x128 tiles with the tail split against without: bf16 24000x768x128 B^T 22.2 against 16.3 us,
# 24000x768x80 18.9 against 15.1, fp16 24000x768x96 B^T 18.9 against 17.0; at K = 1024 it split 2 wins and 4
# losses, e.g. bf16 20000x1024x128 B^T 23.3 against 20.2; at K = 4096 it won, 40000x4096x96 B^T 104.7 against 115.6;
# benchmarks/wide_skinny_probe.py, docs/measurements/2026-11-27-h200-s13-wide.json)
TAIL_MIN_K = 2048


def gemm_tail_split(t: Target, M: int, N: int, K: int, bm: int, bn: int, bk: int, cus: int) -> tuple[int, int]:
    """(rows of the main launch, split-K factor of the tail launch over the remaining rows); (M, 1): one launch.
    Only where it pays in the model below (main waves + tail waves / split + the reduce < the unsplit waves), with
    at least one whole wave in the main part, a remainder of at most half a wave, and each split keeping
    TAIL_MIN_K_BLOCKS full K blocks. NVIDIA only: it is measured there; AMD keeps one launch until timed."""
    if t.backend != "cuda" or t.interpreter or cus <= 0 or bm >= M or K < TAIL_MIN_K:
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


# Past 16 splits each split keeps at least LONG_SPLIT_MIN_K[0] elements of K (4 blocks of 32, the fp32 tiles' depth),
# past 32 at least LONG_SPLIT_MIN_K[1] (see LATENCY_SPLIT_MAX for the measurements).
LONG_SPLIT_MIN_K = (128, 512)


def _min_k(split: int, min_k: int) -> int:
    return min_k if split <= 16 else max(min_k, LONG_SPLIT_MIN_K[0] if split <= 32 else LONG_SPLIT_MIN_K[1])


def _doubled_split(M: int, N: int, K: int, tiles: int, max_split: int, max_programs: int, min_k: int) -> int:
    """The K split every rule here takes: the largest power of two s <= max_split with tiles·s <= max_programs,
    K // s >= min_k (and LONG_SPLIT_MIN_K past 16 splits) and an fp32 workspace of s·M·N elements under 2^31
    (indexed in int32); 1 if 2 does not qualify."""
    split = 1
    while (split * 2 <= max_split and tiles * split * 2 <= max_programs
           and K // (split * 2) >= _min_k(split * 2, min_k)
           and split * 2 * M * N < 2**31):
        split *= 2
    return split


def gemm_split_small_grid(M: int, N: int, K: int, bm: int, bn: int, cus: int) -> int:
    """SPLIT_K for a pointer-kernel grid of (bm, bn) tiles that fills at most half of one wave of `cus` SMs: the
    largest power of two (<= LATENCY_SPLIT_MAX) with tiles·split <= cus and at least SMALL_GRID_MIN_K elements of K
    per split; 1 otherwise. The same floor as gemm_split_under_a_wave, and consistent with the small-grid probe of
    session 6 (docs/performance.md: 64x128 tiles, bf16 on an H100): split 2 helped 640x5120x640 (50 tiles: 17.7 ->
    12.8 us) and 1000x4096x1000, and lost at 768x4096x768 and 1024x2048x1024, whose 72 and 128 tiles a split of 2
    would push past one wave (this rule keeps one pass there). 1000x4096x1000 (128 tiles) keeps one pass here too.
    The cap was 8 until session 33: a grid of 8 tiles and a long K ran 64 programs (H200, graph replay × cuBLAS,
    benchmarks/gemm_longk_probe.py, docs/measurements/2026-11-29-h200-s33-longk.json: bf16 128x256x32768 B^T in
    64x64 tiles, 8 splits 0.67x, 16 0.91x, 32 0.85x)."""
    if cus <= 0:
        return 1
    tiles = -(-M // bm) * -(-N // bn)
    if 2 * tiles > cus:
        return 1
    return _doubled_split(M, N, K, tiles, LATENCY_SPLIT_MAX, cus, SMALL_GRID_MIN_K)


# The most K splits the few-tile rules take (16 until session 33; gemm refuses more than 64). A handful of output
# tiles over a long K ran 6-96 programs on 132 SMs at 16: H200, graph replay × cuBLAS, the policy's tiles at 16
# splits -> the split the rules now take (benchmarks/gemm_longk_probe.py, docs/measurements/2026-11-29-h200-s33-
# longk.json): bf16 169x81x15545 (a misaligned B, 3 tiles) 0.49 -> 0.77x at 32 (0.89 at 64, but see below); fp32
# 169x81x15545 0.63 -> 0.70x at 32; fp32 100x300x30000 (32x128 tiles, 12) 0.62 -> 0.84x at 32; fp32 200x200x20000
# 0.74 -> 0.83x at 32; fp32 256x64x8192 B^T 1.06 -> 1.26x at 32; fp32 64x64x65536 (one tile) 0.16 -> 0.47x at 64;
# fp16 64x96x50000 (one tile) 0.36x at 8 -> 0.76x at 64. A grid past LATENCY_SPLIT_PROGRAMS_PER_SM programs an SM
# lost (fp32 100x300x30000 at 64: 0.80), and so did 64 splits of under 512 elements (LONG_SPLIT_MIN_K: fp32
# 169x81x15545 at 64 splits of 242 0.67 against 0.70 at 32, 128x128x16384 of 256 0.78 against 0.86, 64x512x10000
# B^T of 156 1.03 against 1.45, 256x64x8192 B^T of 128 0.98 against 1.26) and any split of under 128 (fp32
# 48x115x2398 at 64 splits of 37: 0.70, 0.74 at 16). The rule's loss: fp32 256x256x8192 (16 tiles) 0.97x at 16,
# 0.93x at its 32.
LATENCY_SPLIT_MAX = 64
LATENCY_SPLIT_PROGRAMS_PER_SM = 4


def gemm_split_latency_bound(M: int, N: int, K: int, bm: int, bn: int, bk: int, cus: int, max_tiles: int,
                             per_sm: int = LATENCY_SPLIT_PROGRAMS_PER_SM) -> int:
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
    split (77x1791x29225 B^T 0.36 -> 0.13-0.23x). per_sm: programs per SM the split may reach (policy_fp32.gemm_tc_split
    raises it for aligned fp32 tiles of 128x64)."""
    tiles = -(-M // bm) * -(-N // bn)
    if cus <= 0 or tiles > max_tiles:
        return 1
    return _doubled_split(M, N, K, tiles, LATENCY_SPLIT_MAX, per_sm * cus, bk)


# ---- a handful of output columns (a router's N = 8 experts, a classifier head): the tiles that stream A ----------
SKINNY_N = 128  # N up to this many columns takes gemm_skinny_config (NVIDIA, M > 32)
SKINNY_MIN_K = 256  # K elements each split keeps (4 blocks of 64) where the loads are vectors
SKINNY_PROGRAMS_PER_SM = 4  # programs of 64x64 or narrower tiles a split may put on one SM (half that at 128 wide)


SKINNY_UNSPLIT_MAX_K = 1024  # 65-128 columns unsplit take these tiles against a K-major B up to this K (below)


def gemm_skinny_config(M: int, N: int, K: int, cus: int, aligned: bool = True,
                       fp32: bool = False, b_kmajor: bool = False) -> dict[str, Any] | None:
    """N <= SKINNY_N: the GEMM is mostly a read of A (M·K elements), the mirror of decode-size M. The general tiles
    (128x128 with 8 warps for N <= 128) made a few dozen programs, each multiplying up to 32 times the columns there
    are: 64-row tiles as wide as N (16 to 128 columns) with 4 warps, then K split while the grid stays within
    SKINNY_PROGRAMS_PER_SM programs of 64 columns per SM: at most 8 splits of SKINNY_MIN_K for 16-bit operands read
    in vectors, more only up to one program an SM (session 33: fp16 64x96x50000, one tile, 0.36x cuBLAS at 8
    splits, 0.76x at 64, …-s33-longk.json); up to LATENCY_SPLIT_MAX for fp32, still SKINNY_MIN_K a split (fp32 3317x179x17
    bias_relu lost 0.43 -> 0.38x eager with 2 splits of 89); a misaligned operand (scalar loads, a latency-bound K
    loop) down to one K block a split as gemm_split_latency_bound (fp16 434x899x45: 0.77x eager with 8 splits of
    112, 0.39x with 2 of 449).
    H200, graph replay, µs, the policy before -> this rule, cuBLAS in brackets (benchmarks/cliff_probe.py, docs/
    measurements/2026-11-27-h200-s12-{cliff,cliff-after,after2,n128}.json; the rule's split is the best measured
    or within 10 % of it in each row but two, noted): fp16 1561x5195x4 B^T 30.4 -> 13.9 (15.1), bf16 8192x4096x8
    B^T 25.7 -> 21.0 (18.4), 16384x4096x2 B^T 40.1 -> 36.1 (53.0), 4096x11008x16 B^T 32.5 -> 27.6 (28.7),
    5000x4097x6 223.7 -> 26.4 (35.0), fp16 777x2000x12 B^T 10.1 -> 5.6 (6.7), bf16 3000x2048x10 B^T 9.6 -> 6.1
    (11.0), 100000x512x4 B^T 41.1 -> 26.9 (52.5), 12000x1536x1 B^T 15.9 -> 8.1 (9.4), fp32 2048x4096x8 B^T 25.4 ->
    13.3 (27.0), 30000x768x3 B^T 60.6 -> 26.4 (50.4), 65x4096x16 21.0 -> 8.1 (8.6); 17-64 columns: bf16
    1200x4096x24 B^T 11.4 -> 7.1 (6.2), 3000x4096x32 B^T 22.7 -> 8.4 (9.4), fp16 9000x2048x48 B^T 18.1 -> 12.7
    (9.3), bf16 2500x3000x64 B^T 33.3 -> 14.0 (8.1), 700x9000x40 13.8 -> 10.3 (10.4), fp32 4096x1024x20 B^T 16.4 ->
    11.4 (15.3), bf16 65536x4096x64 B^T 142.7 -> 131.6 (142.2); 65-128 columns (the tiles and split the rule takes,
    measured among the variants): bf16 3000x4096x100 B^T 24.1 -> 13.2 (20.9), 8192x4096x128 B^T 29.2 -> 29.1
    (20.7), 1500x2048x80 14.9 -> 8.4 (6.9; 7.0 at 4 splits), bf16 2000x5000x72 B^T 31.0 -> 20.8 (9.8; 64x64 tiles
    17.3), 600x8192x112 B^T 21.6 -> 9.9 (8.7), fp32 4096x2048x128 B^T 52.3 -> 44.5 (59.9; 64x64 tiles at 2 splits
    34.6). None: the general tiles, for fp32 against a misaligned operand past 16 columns and for 65-128 columns
    whose grid needs no split (below; that gives up fp16
    20000x1024x96 B^T 20.6 -> 15.3 and bf16 50000x768x65 B^T 30.5 -> 27.2). AMD keeps the general tiles (not
    timed)."""
    if fp32 and not aligned and N > 16:
        # fp32 against a misaligned operand past 16 columns: the tensor-core tiles' own latency-bound split
        # (gemm_split_latency_bound) won every such row of the A/B, these tiles lost (13562x209x36 B^T 0.30 -> 0.27x,
        # 401x3747x76 B^T 0.34 -> 0.25x, 229x301x48 B^T 0.62 -> 0.51x, 333x2107x54 B^T 0.46 -> 0.44x), while up to
        # 16 columns these won (2542x2671x1 B^T 0.06 -> 0.27x, 4202x8558x7 0.17 -> 0.82x, 10131x378x1 bias B^T
        # 0.29 -> 0.62x, 245x1167x1 bias_gelu 0.34 -> 0.71x; `gemm_ab_probe.py --ab s12`, …-s12-ab*.json)
        return None
    wide = min(128, max(16, _next_pow2(N)))  # the columns a tile covers: N's next power of two, 16 to 128
    # fp32 at 65-128 columns: two 64x64x32 tiles instead of one 64x128x64 (H200, graph replay × cuBLAS, the split the
    # rule takes, benchmarks/gemm_longk_probe.py, …-s33-longk.json): 128x128x16384 0.19 -> 0.86x, 384x128x4096
    # 0.51 -> 0.82x, 520x96x20000 B^T 0.82 -> 1.25x; session 12 had 4096x2048x128 B^T at 44.5 us in 64x128 tiles,
    # 34.6 in 64x64 at 2 splits (cuBLAS 59.9).
    bn, bk = (64, 32) if fp32 and wide == 128 else (wide, 64)
    tiles = -(-M // 64) * -(-N // bn)
    sms = cus or DEFAULT_CUS["cuda"]
    programs = SKINNY_PROGRAMS_PER_SM * sms * 64 // max(64, bn)
    if not aligned:
        # as gemm_split_latency_bound: grids of more than one wave keep one pass (fp32 13562x209x36 B^T lost 0.31 ->
        # 0.22x eager with 2 splits of its 212 tiles, `gemm_ab_probe.py --ab s12 --skinny --seed 35`)
        split = 1 if tiles > sms else _doubled_split(M, N, K, tiles, LATENCY_SPLIT_MAX, programs, 64)
    elif fp32:
        split = _doubled_split(M, N, K, tiles, LATENCY_SPLIT_MAX, programs, SKINNY_MIN_K)
        if tiles * split < sms:
            # under a program an SM: splits of two K blocks (fp32 1000x100x1000, 32 tiles: 0.50x cuBLAS at 2
            # splits of 500, 0.89x at 8 of 125; …-s33-longk-fresh.json)
            split = max(split, _doubled_split(M, N, K, tiles, LATENCY_SPLIT_MAX, programs, 2 * bk))
    else:
        split = _doubled_split(M, N, K, tiles, 8, programs, SKINNY_MIN_K)
        if tiles * split < sms:  # past 8 splits only up to one program an SM (the measured 16-bit rows chose 8)
            split = max(split, _doubled_split(M, N, K, tiles, LATENCY_SPLIT_MAX, sms, SKINNY_MIN_K))
    if wide == 128 and split == 1 and not (b_kmajor and aligned and not fp32 and K <= SKINNY_UNSPLIT_MAX_K):
        # 65-128 columns gain from these tiles only through the split: a grid that fills the GPU unsplit kept the
        # general 128x128 tiles faster (bf16 65536x4096x128 B^T 164.3 us against 172.2 with these, fp16
        # 16384x8192x128 bias 78.9 against 89.8; …-s12-after3.json) — except against a K-major 16-bit B with K up to
        # SKINNY_UNSPLIT_MAX_K, where these tiles won all 10 rows of the probe against the general tiles and their
        # tail split (H200, graph replay, µs, `benchmarks/wide_skinny_probe.py`, …-s13-wide.json): bf16
        # 24000x768x128 B^T 22.2 -> 11.6 (cuBLAS 10.9), 20000x1024x128 B^T 23.3 -> 15.3, fp16 20000x1024x96 B^T
        # 21.4 -> 15.3, 35000x1024x96 B^T 32.4 -> 28.7, 50000x768x96 B^T 29.7 -> 26.9; at K of 2048 and more they
        # lost (12000x2048x96 B^T 20.2 against 21.9, 16384x8192x128 B^T 76.3 against 87.1), and against an N-major B
        # at K <= 1024 they won 2 of 5 (50000x768x80 28.4 against 32.0)
        return None
    return {"BLOCK_M": 64, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, "num_warps": 4, "num_stages": 3,
            "SPLIT_K": split}


# ---- decode-size M: the split-K tiles that stream B (policy.gemm_config takes them for M <= 32, 33-64 in 16 bits) --

DECODE_UNCAPPED_MIN_M = 16  # 16-bit rows above this many take _decode_config's uncapped split (NVIDIA, aligned)


def _decode_config(t: Target, M: int, N: int, K: int, elem_size: int, cus: int, b_nmajor: bool,
                   aligned: bool = True) -> dict[str, Any]:
    """Decode-size M (<= 32, and 33-64 on NVIDIA in 16 bits): the GEMM is a read of B (K·N elements) with almost no
    reuse, so what matters is how many bytes are in flight and how well each program's reads of B hit whole DRAM
    lines. 16-, 32- or 64-row tiles waste few rows (tl.dot's smallest M on mma/MFMA/WMMA is 16). A row-major B (K, N)
    is read 128 columns (256 bytes) wide and 64 deep; a K-contiguous B (nn.Linear's weight transposed) 64 columns by
    128 of K (256 bytes along each column). Then K is split (_split_k) until the grid has about two programs per
    SM/CU. Issue #16: 0.44-0.45x cuBLAS on an H100 at 16x4096x4096 and 8x4096x14336 with 64x128 tiles for every
    layout; benchmarks/tune_gemm_shapes.py and gemm_small_m_probe.py compare these tiles."""
    # 33-64 rows (NVIDIA, 16-bit): one 64-row band. H200, graph replay against cuBLAS (benchmarks/gemm_small_m_probe.py,
    # docs/measurements/2026-11-27-h200-s8-gemm-small-m.json), bf16 B^T, M = 33/41/48/64: 4096x4096 0.92/0.74/0.89/0.69
    # with the 64x128 tiles before -> 1.07/0.83/1.19/0.86; 6721x26166 (an odd K: scalar loads of a 352 MB weight)
    # 0.40-0.48 -> 0.72-0.87; 4096x14336 0.84 -> 0.89-0.94; 14336x4096 0.97-1.02 -> 0.94-0.99 and 4097x4096
    # 0.39-0.44 -> 0.35-0.43 (the losses, within 10 %). From 96 to 256 rows the policy's tiles won 17 of 24 shapes;
    # decode tiles would have won the rest by 0.05-0.23x (misaligned weights: 128x4096x4097 0.32 -> 0.55), no rule yet.
    bm = 16 if M <= 16 else 32 if M <= 32 else 64
    bn, bk = (128, 64) if b_nmajor else (64, 128)
    if t.backend == "cuda":
        cfg = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 1, "num_warps": 4, "num_stages": 4}
        want = 2 * (cus or DEFAULT_CUS["cuda"])
        # A misaligned weight (scalar loads, no asynchronous copies) makes each split's K loop latency-bound: split
        # to the same grid, down to one K block a split and without the workspace cap (H200, graph replay against
        # cuBLAS, benchmarks/gemm_fp32_probe.py --small-grid --dtype bfloat16 --decode, docs/measurements/
        # 2026-11-27-h200-s9-bf16-decode-split.json: bf16 41x1621x459 B^T unsplit 0.12x, 8 splits 0.49x, 16 0.62x;
        # 64x4097x4096 B^T 2 splits 0.41x, 4 0.50x; the others already at their best split).
        if elem_size == 2 and M > DECODE_UNCAPPED_MIN_M and aligned:
            # 17-64 rows in 16 bits: a K split to one program an SM, not capped by the fp32 workspace. The cap (split·M
            # ·64 <= K·elem) had left few-tile grids latency-bound: H200, graph replay × cuBLAS, the policy's split ->
            # this rule's (benchmarks/gemm_pipe_probe.py --small-grid, docs/measurements/2026-11-28-h200-s18-small-
            # grid.json): bf16 64x12120x484 bias 4 -> 16 splits 0.63 -> 0.93x, 48x8192x512 4 -> 16 0.70 -> 0.99x,
            # 64x4096x1000 B^T 2 -> 8 0.66 -> 0.93x, fp16 60x20000x256 bias B^T 8 -> 16 0.82 -> 1.03x, 56x9000x1536
            # 4 -> 8 0.69 -> 0.86x; grids of 160-512 programs lost (40x16384x640 B^T 0.98x at 8 splits, 0.79x at 16).
            tiles = -(-M // bm) * -(-N // bn)
            return {**cfg, "SPLIT_K": _doubled_split(M, N, K, tiles, 16, cus or DEFAULT_CUS["cuda"], 4 * bk)}
        return {**cfg, "SPLIT_K": _split_k(M, N, K, bm, bn, bk, want, elem_size, latency=not aligned)}
    # AMD: 64-deep K tiles at 2 stages, 4 waves. Compile-only (Triton 3.9): 16x128x64 0 spills on gfx942 but 107 on
    # gfx1100 (wave32: twice the registers a lane), where 16x128x32 has 0 (126 VGPRs); 16x64x64 (B^T) 0 on both.
    # MI300X has 304 CUs, RDNA3 up to 96.
    bk = 32 if b_nmajor and not t.cdna else 64
    cfg = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 1, "num_warps": 4, "num_stages": 2}
    want = 2 * (cus or DEFAULT_CUS["cdna" if t.cdna else "rdna"])
    return {**cfg, "SPLIT_K": _split_k(M, N, K, bm, bn, bk, want, elem_size), **_hip_extra(t, gemm=True, waves_per_eu=0)}


def _split_k(M: int, N: int, K: int, bm: int, bn: int, bk: int, want: int, elem_size: int = 2,
             latency: bool = False) -> int:
    """Double the K split while the grid has fewer than `want` programs, every split keeps at least 4 full K blocks
    (so its pipeline fills), the fp32 workspace (split·M·N, written once and read once) stays under an eighth of B's
    bytes (K·N·elem: the read the split is meant to speed up) and under 2^31 elements; at most 16. latency: the
    K loop is latency-bound (a misaligned operand): one full K block a split suffices and the workspace cap is off."""
    tiles = -(-M // bm) * -(-N // bn)
    if latency:
        return _doubled_split(M, N, K, tiles, 16, want, bk)
    # split·M·64 <= K·elem (the workspace against B's bytes) as a bound on the split
    return _doubled_split(M, N, K, tiles, min(16, K * elem_size // (64 * max(M, 1))), want, 4 * bk)
