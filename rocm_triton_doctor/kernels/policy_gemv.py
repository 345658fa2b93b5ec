"""Launch policy for the GEMV kernel (gemm_kernels.gemv_kernel): when a GEMM with a few rows of A runs there instead
of the tensor-core tiles, and its tiles and K split (policy.py re-exports every name here).

Why a GEMV at all: with M of a few rows a GEMM is a read of B at ~M multiply-adds per element of B. The tensor-core
decode tiles (policy_waves._decode_config) compute 16 rows for each real one, form fp32 products through the 3xTF32
split or the slow IEEE dot, and feed tl.dot scalar loads when B's rows are not 16-byte aligned; the worst rows of
the random GEMM draws were decode rows of that kind (fp32 1x14854x64 B^T 0.17x eager, fp32 2x1068x11660 B^T 0.19x,
fp32 8x2876x11229 B^T 0.32x, bf16 2x11402x17198 B^T 0.61x, bf16 3x5290x19666 B^T 0.59x on an H200:
docs/measurements/2026-11-27-h200-s9-gemm-ab-*.json)."""

from __future__ import annotations

from functools import cache
from typing import Any

from rocm_triton_doctor.kernels.policy import DEFAULT_CUS, Target, _hip_extra, _next_pow2
from rocm_triton_doctor.kernels.policy_align import gemm_align_copy
from rocm_triton_doctor.kernels.policy_misaligned import misaligned_small_tiles

GEMV_MAX_M = 8  # gemv_kernel keeps one accumulator per row of A, eight at most (BLOCK_M); more rows run in chunks
GEMV_ACC_PER_THREAD = 64  # fp32 accumulator registers a thread keeps (BLOCK_M · tile / threads), K-major B
GEMV_ACC_PER_THREAD_NMAJOR = 32  # the same for an N-major B
GEMV_TILE_BYTES = 16384  # bytes of B a program reads per K step, at most
GEMV_PROGRAMS_PER_CU = 24  # the K split fills the GPU up to this many programs per SM/CU
GEMV_MIN_K_BLOCKS = 12  # each split keeps at least this many K blocks
GEMV_FILL_PER_CU = 4  # a small grid splits to this many programs per SM/CU ...
GEMV_FILL_MIN_K_BLOCKS = 5  # ... with this many K blocks a split
GEMV_MAX_SPLIT = 64
GEMV_FP32_MISALIGNED_ROWS = 96  # fp32 rows against a misaligned weight the GEMV takes (measured up to 89) ...
GEMV_FP32_MISALIGNED_ROWS_COPIED = 32  # ... up to this many where policy.gemm_align_copy would copy it (33 rows on)
GEMV_FP32_SMALL_B_BYTES = 65536  # ... and any rows against a misaligned fp32 B this small ...
GEMV_FP32_SMALL_B_MAX_K = 128  # ... and this short (each chunk of 8 rows walks all of K over a 16-128 wide tile)
# ... past GEMV_FP32_MISALIGNED_ROWS rows only up to this many outputs where policy_misaligned's small tiles take the
# product (NVIDIA): larger ones ran faster there (H200, × eager, docs/measurements/2026-11-29-h200-s27-gemm-final.json:
# fp32 8192x4x2047 0.63 -> 1.08, 4905x8x1367 0.52 -> 1.06, 5341x111x71 bias_gelu B^T 0.59 -> 1.05), smaller ones
# stayed faster here (218x11x58 bias B^T 3.43 against 2.44, …-gemm-tiles-s3.json)
GEMV_FP32_SMALL_OUT = 1 << 16
GEMV_NMAJOR_MIN_N = 128  # ... and, N-major, at least as wide as the GEMV's N-major tile
GEMV_16BIT_NMAJOR_ROWS = 4  # 16-bit rows against a misaligned N-major B the GEMV takes (NVIDIA, pipelined) ...
GEMV_16BIT_NMAJOR_MIN_K = 512  # ... with K at least this long
GEMV_NMAJOR_NARROW = True  # an aligned N-major B of few column tiles takes narrower, deeper tiles (gemv_config)
GEMV_NMAJOR_NARROW_MIN_N = 32  # ... down to this many columns
GEMV_NMAJOR_NARROW_MAX_N = 1024  # ... for products up to this wide (measured to N = 1000)
GEMV_PIPE_MAX_STAGE_BYTES = 8192  # the K loop is pipelined (N-major B, NVIDIA) where one stage of B is this small
GEMV_FP32_SHIFT_ROWS = 4  # fp32 rows against a misaligned N-major B the GEMV also takes where it shifts (gemv_shift)
# A K-major weight read by residue class of columns in whole vectors (gemv_kshift.py; gemv_shift's text has the
# measurements): 16-bit up to this many rows, with an odd row stride (K) of at least KSHIFT_16BIT_MIN_K ...
KSHIFT_16BIT_ROWS = 4
KSHIFT_16BIT_MIN_K = 64
KSHIFT_FP32_CHUNKED_MAX_K = 64  # ... fp32 up to GEMV_MAX_M rows whatever K, more rows (in chunks) only up to this K
KSHIFT_MIN_N = 128  # ... and N at least this wide (fewer columns leave each residue class's tile mostly empty)


def gemv_takes(t: Target, M: int, elem_size: int, b_aligned: bool, b_kmajor: bool, K: int | None = None,
               N: int | None = None) -> bool:
    """Whether gemm(kernel="auto") runs M rows on the GEMV kernel. H200, graph replay, × cuBLAS, the GEMV kernel
    against the tensor-core decode tiles (benchmarks/gemv_probe.py, docs/measurements/2026-11-27-h200-s11-gemv-
    probe-*.json, and `gemm_ab_probe.py --ab gemv` over the random draws of seeds 10, 12 and 13, …-s11-ab-gemv-*):
    * fp32, 1-3 rows: 0.97-1.57x against 0.17-0.77x on most shapes (1x14854x64 B^T 0.17 -> 1.51x, 2x1068x11660 B^T
      0.19 -> 1.57x, 1x1482x165 B^T 0.36 -> 1.32x, 1x4096x4096 B^T 0.74 -> 1.10x, 3x1346x31141 0.64 -> 0.82x): the
      tiles form fp32 products through the 3xTF32 split or the IEEE dot, several times the work a GEMV does;
    * fp32, 4-8 rows against a K-major weight (nn.Linear's): 4x4096x4096 B^T 0.93 -> 1.36x, 8x2876x11229 B^T 0.32 ->
      0.93x, 8x768x50257 B^T 0.95 -> 1.08x, 5x23x62 B^T 0.75 -> 2.51x; lost 8x4096x4096 B^T (1.53 -> 1.27-1.34x).
      Against a row-major (N-major) B the tiles won at 4-8 rows: 5x4032x14996 1.17 -> 0.88x, 4x4096x14336 1.21 ->
      1.04-1.17x, 8x4096x14336 1.42 -> 1.03-1.23x;
    * 16-bit against a misaligned K-major weight (its rows not 16-byte aligned: tl.dot's tiles read it with scalar
      loads), 1-3 rows: 9 of 10 draws won (bf16 2x11402x17198 B^T 0.61 -> 1.11x, 3x5290x19666 B^T 0.60 -> 0.93x,
      1x4097x4096 B^T 0.74 -> 0.96x, fp16 1x6364x38 B^T 0.52 -> 0.94x; lost fp16 3x805x13804 B^T 1.18 -> 1.02x).
      Against a misaligned N-major B the GEMV reads 2-byte scalars too, and the draws split 5 wins and 6 losses
      with the worst loss the larger (bf16 1x832x27011 1.40 -> 0.54x, 2x4096x4097 2.24 -> 1.62x; won 3x15605x9269
      0.76 -> 1.77x): the tiles keep those;
    * fp32 against a misaligned weight, 9 to GEMV_FP32_MISALIGNED_ROWS rows (the GEMV in chunks of 8 rows, side by
      side on one column tile so B is read from DRAM about once; `gemv_probe.py --chunks`, …-s11-gemv-chunks.json):
      every such row of the probe won, 89x589x1577 B^T 0.22 -> 0.57x, 25x83x194 B^T 0.32 -> 1.39x, 30x2350x7191
      0.27 -> 0.62x, 71x517x16549 B^T 0.24 -> 0.43x, 63x433x1726 B^T 0.41 -> 0.83x, 12x4097x4096 B^T 0.44 -> 0.82x;
      against aligned weights the tiles won (16x4096x4096 B^T 1.61 against 0.84x, 32x… 1.15 against 0.50x,
      19x4824x2333 B^T 0.65 against 0.39x), and in 16 bits at 12-136 rows they won every row (the GEMV's multiply-adds
      on the fp32 units are the bound there: bf16 53x2696x15562 0.16 against 0.09x). From 33 rows, a weight
      policy.gemm_align_copy copies runs faster copied on the tiles (fp32 36/64/128x4097x4096 B^T 0.55/0.38/0.26 ->
      0.77/0.75/0.72x; 16 rows stay here: 0.81 against 0.69x; …-s13-align-copy-4.json);
    * fp32 against a misaligned B (K, N given) of at most GEMV_FP32_SMALL_B_BYTES with K up to
      GEMV_FP32_SMALL_B_MAX_K, K-major or at least GEMV_NMAJOR_MIN_N columns wide, any number of rows: the chunks
      re-read a B that stays in L2 while the tiles' scalar, latency-bound K loop and its split cost more (H200,
      graph replay, µs, the tiles -> the GEMV, eager in brackets; benchmarks/cliff_probe.py, docs/measurements/
      2026-11-27-h200-s12-cliff*.json): 8192x4x2047 154.7 -> 29.7 (32.6), 4905x8x1367 69.8 -> 16.6 (14.9), 177x43x43
      B^T 10.1 -> 2.4 (5.6), 110x83x77 B^T 11.9 -> 2.7 (6.9). Against an aligned B the tiles won every such row
      (8192x4x2048 47.9 against 273.6, 1000x32x32 4.2 against 5.5): the GEMV's vector loads of a 4-deep K block
      make it slow there, a cause not found yet. A long K lost: fp32 8725x4541x3 bias_relu (B 54 KB) ran at 0.08x
      eager on the GEMV, whose 128-wide tiles compute 3 columns (`gemm_ab_probe.py --ab s12 --skinny --seed 30`),
      and so did a narrow N-major B: fp32 10630x94x19 0.24 -> 0.17x (seed 32);
    * 16-bit with an aligned weight: the tensor-core tiles ran 0.99-1.36x cuBLAS at every decode shape (1-8 rows
      against 4096x4096, 4096x14336, 14336x4096), the GEMV 0.13-1.35x: they keep those.
    Session 18 pipelined the K loop against an N-major B (gemv_config's STAGES), which changed three answers (H200,
    graph replay × cuBLAS, benchmarks/gemm_pipe_probe.py, docs/measurements/2026-11-28-h200-s18-gemm-pipe2.json and
    …-verify80.json):
    * 16-bit against a misaligned N-major B, 1-GEMV_16BIT_NMAJOR_ROWS rows with K >= GEMV_16BIT_NMAJOR_MIN_K: tiles
      -> the pipelined GEMV, bf16 1x832x27011 0.38 -> 1.79x, 2x4096x4097 0.82 -> 2.03x, 3x15605x9269 0.76 -> 1.70x,
      fp16 4x2048x5001 0.76 -> 1.86x, 4x8078x9953 0.62 -> 1.13x, bf16 1x7161x22449 0.45 -> 0.85x, 2x2634x4131 1.55 ->
      1.73x. Short K lost (fp16 2x301x765 0.95 -> 0.74x, bf16 2x147x24173 0.73 -> 0.58x) and so did 5-8 rows in
      three of four draws (bf16 7x8439x15427 1.05 -> 0.60x, fp16 8x292x6481 1.05 -> 0.78x; won 8x4096x14335 0.32 ->
      0.72x);
    * fp32 against a misaligned N-major B, 4-96 rows: no longer here. From 4 to 16 rows the IEEE decode tiles won
      every draw (8x1629x30833 0.53 -> 0.99x, 15x12643x193 0.27 -> 0.48x, 4x6000x1999 0.97 -> 1.20x), from 17 rows
      policy_fp32.fp32_nmajor_config's tiles (28x6016x26517, the hunt's 0.12x, -> 0.93x);
    * fp32 against an N-major B, 1-3 rows, pipelined: 3x70x161 0.42 -> 0.72x, 2x1884x32020 0.86 -> 1.24x, 2x91x1720
      0.74 -> 1.04x.
    Session 22's shifted windows (gemv_shift) made the GEMV faster against a misaligned fp32 N-major B, so it also
    takes GEMV_FP32_SHIFT_ROWS rows there where it shifts: the IEEE tiles -> the shifted GEMV, 4x1273x19239 0.54 ->
    0.96x (half the split), 4x171x1914 0.72 -> 0.85x; 4x6000x1999 (the tiles 1.21x) keeps the tiles, its split of 32
    making more partials than the windows take. At 8 rows the tiles won (8x1629x30833 0.99 against 0.81-0.88x).
    Session 25's K-major windows (gemv_shift) made 16-bit at 4 rows against a misaligned weight faster on the GEMV
    than on the tiles where it reads the weight that way: bf16 4x3813x27698 B^T 0.81 -> 1.35x (KSHIFT_16BIT_ROWS).
    AMD (not timed): only misaligned weights, by the same counts; CDNA multiplies fp32 on its matrix cores natively,
    so the fp32 reason above does not carry over. The interpreter takes up to 4 rows, so CI runs this path."""
    if t.interpreter:
        return M <= 4
    if elem_size == 4:
        most = GEMV_MAX_M if b_kmajor else 3
        small_b = (K is not None and N is not None and K * N * elem_size <= GEMV_FP32_SMALL_B_BYTES
                   and K <= GEMV_FP32_SMALL_B_MAX_K and (b_kmajor or N >= GEMV_NMAJOR_MIN_N)
                   and (M <= GEMV_FP32_MISALIGNED_ROWS or M * N <= GEMV_FP32_SMALL_OUT
                        or not misaligned_small_tiles(t, M, N, K, elem_size, 0)))
        copied = K is not None and N is not None and gemm_align_copy(t, M, N, K, elem_size, b_kmajor)[1]
        rows = GEMV_FP32_MISALIGNED_ROWS_COPIED if copied else GEMV_FP32_MISALIGNED_ROWS
        return ((most >= M and (t.backend == "cuda" or not b_aligned))
                or (not b_aligned and ((b_kmajor and rows >= M) or small_b))
                or (M == GEMV_FP32_SHIFT_ROWS and not b_kmajor and not b_aligned and _shifts(t, M, N, K)))
    if not b_kmajor and t.backend == "cuda":
        return M <= GEMV_16BIT_NMAJOR_ROWS and not b_aligned and K is not None and K >= GEMV_16BIT_NMAJOR_MIN_K
    return b_kmajor and not b_aligned and (M <= 3 or (M <= KSHIFT_16BIT_ROWS and (
        _kshifts(t, M, elem_size, K, N) or _few_columns(t, K, N))))


def _few_columns(t: Target, K: int | None, N: int | None) -> bool:
    """Under KSHIFT_MIN_N columns against a misaligned K-major weight of K >= KSHIFT_16BIT_MIN_K, 16 bits: the GEMV
    reading the weight as it is beat the tiles at 4 rows (H200, graph replay, x cuBLAS, tiles -> gemv_kernel,
    benchmarks/gemv_kshift_probe.py --small-n, docs/measurements/2026-11-29-h200-s26-kshift-small-n.json): fp16
    4x12143x95 B^T 0.58 -> 1.02x (hunt seed 21's 0.57x), 4x20001x48 0.61 -> 1.37x, bf16 4x409x86 0.55 -> 0.79x."""
    return (t.backend == "cuda" and K is not None and N is not None and N < KSHIFT_MIN_N
            and K >= KSHIFT_16BIT_MIN_K)


def _kshifts(t: Target, M: int, elem_size: int, K: int | None, N: int | None, b_aligned: bool = False) -> bool:
    """A K-major weight whose columns gemv_kshift_kernel would read in whole vectors (gemv_shift's rule)."""
    if K is None or N is None or N < KSHIFT_MIN_N or t.backend != "cuda" or t.interpreter:
        return False
    if elem_size == 4:
        return M <= GEMV_MAX_M or K <= KSHIFT_FP32_CHUNKED_MAX_K
    return not b_aligned and M <= KSHIFT_16BIT_ROWS and K % 2 == 1 and K >= KSHIFT_16BIT_MIN_K


def _shifts(t: Target, M: int, N: int | None, K: int | None) -> bool:
    """fp32 against a misaligned N-major B: gemv_kernel would read it in shifted windows (gemv_shift)."""
    if N is None or K is None:
        return False
    cfg = gemv_config(t, M, N, K, 4, False)
    return gemv_shift(t, M, N, K, 4, False, False, cfg["BLOCK_N"], cfg["BLOCK_K"], cfg["SPLIT_K"],
                      DEFAULT_CUS["cuda"])[0] > 1


@cache
def gemv_config(t: Target, M: int, N: int, K: int, elem_size: int, b_kmajor: bool, cus: int = 0,
                b_aligned: bool = False) -> dict[str, Any]:
    """Tiles for gemv_kernel: BLOCK_M rows (M padded to a power of two, at most 8: more rows run in chunks of 8) and
    a tile of B per K step. K-major B (an nn.Linear weight, b_kmajor): GEMV_TILE_BYTES, or fewer elements so the
    accumulators stay at GEMV_ACC_PER_THREAD registers a thread, at least 32 columns and up to 128 deep along K;
    N-major B: GEMV_ACC_PER_THREAD_NMAJOR, 128 wide along N. K split as _gemv_split says. H200 (gemv_probe.py, the
    variants of its first run): K-major tiles of 16 KiB won at 1 row (bf16 1x4096x4096 B^T 1.35x cuBLAS against
    1.07x with 8 KiB; fp32 1x14854x64 B^T 1.44x against 1.10x with 32 KiB) and 32-column tiles at 4-8 rows (fp32
    4x4096x4096 B^T 1.37x against 0.87x with 16 columns); N-major tiles twice as deep lost at 3-8 rows (fp32
    5x1527x1315 1.15 -> 0.49x, 8x4096x14336 1.20 -> 0.71x). A K-major product with fewer column tiles than a quarter
    of the SMs halves its tiles' width down to 16 (second run: fp32 1x14854x64 B^T 1.43 -> 1.56x, 1x1482x165 B^T
    1.23 -> 1.41x, fp16 1x6364x38 B^T 0.69 -> 0.88x). The split (second run, half and twice the split the rule then
    took, 8 programs per SM and 4 K blocks a split): splits of 4 K blocks lost to fewer (fp32 2x1068x11660 B^T
    unsplit 1.48x against 1.07x at 2; bf16 1x4097x4096 B^T 0.94x at 4 against 0.68x at 8; fp32 4x4096x4096 B^T 1.40x
    at 4 against 1.30x at 8), and grids of 4-12 programs per SM won with twice the split (bf16 2x11402x17198 B^T
    0.98 -> 1.14x, 3x5290x19666 B^T 0.75 -> 0.87x, fp32 3x1346x31141 0.68 -> 0.81x, 8x768x50257 B^T 0.79 -> 0.97x):
    hence 12 K blocks a split and up to 24 programs per SM. The third run showed a small grid wanting more splits
    than that (fp32 5x1527x1315, 11 column tiles of 128 and 4-deep K blocks: 0.65x at 16 splits, 0.99x at 32; the
    first run's 64 ran 1.15x) while 1x4097x4096 B^T lost at 4 blocks a split: a grid first splits to 4 programs per
    SM with 5 K blocks a split. b_aligned: B's rows are 16-byte aligned (only the narrow N-major tiles below use it).
    Callers must not mutate the returned dict."""
    bm = min(GEMV_MAX_M, _next_pow2(max(1, M)))  # more rows: chunks of 8, side by side on one column tile
    if t.interpreter:  # ~1 ms per program instance there: few, large tiles
        bn, bk = (16, 64) if b_kmajor else (64, 16)
        return {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "SPLIT_K": _gemv_split(N, K, bn, bk, M, 4),
                "num_warps": 4, "num_stages": 1}
    warps = 4
    threads = warps * (64 if t.backend == "hip" and t.cdna else 32)
    cu = cus or DEFAULT_CUS["cuda" if t.backend == "cuda" else "cdna" if t.cdna else "rdna"]
    if b_kmajor:
        # RDNA (wave32, 128 threads a program like NVIDIA's 4 warps) spilled at 16 KiB (compile-only, Triton 3.9:
        # gfx1100-gfx1201 256 VGPRs and 5 spilled, gfx1250 45) and not at 8; CDNA's 256 threads do not.
        rdna = t.backend == "hip" and not t.cdna
        tile = max(256, min(GEMV_TILE_BYTES // (2 if rdna else 1) // elem_size, GEMV_ACC_PER_THREAD * threads // bm))
        bn = max(32, tile // 128)  # 32 columns at least; also the dropout mask's 8 columns a number
        bk = tile // bn
        fit = max(16, _next_pow2(K))
        if fit < bk:
            # A short K: K blocks cut to the power of two at or above K, the columns kept (four times as wide where
            # the block shrank more than 4x). H200, graph replay, × cuBLAS (benchmarks/gemv_probe.py --shortk,
            # docs/measurements/2026-11-28-h200-s23-gemv-shortk.json), 128-deep blocks -> cut: bf16 1x17x23227 B^T
            # 0.39 -> 1.15x, 1x9x65536 B^T 0.22 -> 1.25x, fp16 1x61x32000 B^T 0.64 -> 1.09x, fp32 1x33x50257 B^T
            # 0.34 -> 0.66x, 1x5x4099 B^T 0.99 -> 1.50x, 2x19x210 B^T 0.86 -> 1.18x; wider tiles at the same depth
            # were slower on every row, and half the width won once (fp16 1x61x32000 B^T, 1.12 against 1.09x).
            bn *= max(1, bk // fit // 4)
            bk = fit
        while bn > 16 and 4 * -(-N // bn) < cu:  # a narrow product (N = 38-165): more column tiles, as deep
            bn //= 2
    else:
        tile = max(128, GEMV_ACC_PER_THREAD_NMAJOR * threads // bm)
        bn = min(128, tile)
        bk = tile // bn
        narrow = b_aligned and t.backend == "cuda" and GEMV_NMAJOR_NARROW and N <= GEMV_NMAJOR_NARROW_MAX_N
        while narrow and bn > GEMV_NMAJOR_NARROW_MIN_N and 4 * -(-N // bn) < cu:
            # A narrow aligned product (fp32 1x1025x304: 3 column tiles of 128): tiles half as wide and twice as
            # deep, as many elements, down to 32 columns (128 bytes of a row of B), so the grid has more column
            # tiles before K is split. H200, graph replay × eager (cuBLAS SGEMV), 128x32 tiles split 4 -> 32x128,
            # the split _gemv_split gives, 3 stages (benchmarks/gemm_misaligned_probe.py --gemv-small --set gemv,
            # docs/measurements/2026-11-29-h200-s29-gemv.json): 1x1025x304 0.50 -> 0.86x, 1x700x512 0.70 -> 1.25x,
            # 1x4096x256 0.56 -> 1.06x, 1x2000x128 0.72 -> 0.96x; at 2-3 rows (32x64, 32x32 tiles) 2x1500x300
            # 1.64 -> 1.68-1.95x, 3x800x1000 1.43 -> 1.66x. 64-wide tiles and unpipelined loops were slower there.
            # Wider products (1x4096x4096: 32 tiles of 128) keep the tiles measured for them (the text above).
            bn //= 2
            bk *= 2
    narrowed = not b_kmajor and bn < min(128, tile)
    split = _gemv_split(N, K, bn, bk, M, cu)
    stages = 3 if t.backend == "cuda" else 1
    # The K loop software-pipelined (gemv_kernel's STAGES) against an N-major B on NVIDIA where a stage of B is at
    # most GEMV_PIPE_MAX_STAGE_BYTES (gemv_takes' text has the measurements). Larger stages lost: fp32 1x9693x307
    # (16 KiB tiles) 0.93 -> 0.20x, and so did a K-major B: 2-8 stages ran fp32 71x517x16549 B^T at 0.06-0.07x
    # against 0.42x unpipelined, bf16 2x11402x17198 B^T 0.56-0.67x against 1.13x (16 KiB a stage: the stages fill the
    # SM's shared memory, so few programs stay resident). AMD: not timed, not pipelined.
    # A tile narrowed above (aligned B, a grid of under a quarter of the SMs per column tile) pipelines at any stage
    # size: its grid is small, so the stages' shared memory limits nothing (32x128 fp32, 16 KiB a stage, 3 stages
    # against 1: 0.80 -> 0.86x, 1.21 -> 1.25x, 1.01 -> 1.06x, 0.88 -> 0.96x on the rows above).
    small_stage = bk * bn * elem_size <= GEMV_PIPE_MAX_STAGE_BYTES or narrowed
    pipe = 3 if t.backend == "cuda" and not b_kmajor and small_stage else 1
    return {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "SPLIT_K": split, "STAGES": pipe, "num_warps": warps,
            "num_stages": stages, **_hip_extra(t, gemm=False)}


def gemv_shift(t: Target, M: int, N: int, K: int, elem_size: int, b_kmajor: bool, b_aligned: bool, bn: int, bk: int,
               split: int, cus: int) -> tuple[int, int]:
    """(SHIFT, SPLIT_K) for gemv_kernel: SHIFT 4 reads an fp32 B whose rows are not 16-byte aligned in shifted
    16-byte windows (gemm_kernels.gemv_kernel), 1 reads it as it is (4-byte loads). gemm._gemv_plan keeps 1 where
    B's layout does not allow it (gemm_parts.gemv_shift_refusal). H200, graph replay, x cuBLAS, SHIFT 1 -> 4 at the
    policy's tiles (benchmarks/gemv_shift_probe.py, docs/measurements/2026-11-28-h200-s22-shift*.json): fp32
    2x1041x12427 bias_gelu 0.58 -> 1.62x (the aligned 2x1041x12428: 1.56x), 2x4096x14335 0.47 -> 1.29x, 1x768x50257
    0.51 -> 0.99x, 3x1346x31141 0.50 -> 0.86x, 1x4096x4097 0.35 -> 0.72x, 2x1344x29891 0.43 -> 1.25x, 2x362x906
    1.47 -> 1.44x. With the windows, splits of 8 or more ran faster halved where the halved grid still held two
    programs per SM (1x4096x4097 0.72 -> 0.82x, 3x1346x31141 0.86 -> 0.89x, 2x4096x14335 1.29 -> 1.34x) and splits
    of 4 slower (2x1041x12427 1.62 -> 1.42x). More than 64 partials are not made (the reduce pass unrolls them):
    those keep SHIFT 1, and so does an unsplit product, which the windows would give a second launch (the reduce):
    fp32 1x187x23947 bias 1.80 -> 1.37x, 1x105x4073 2.30 -> 1.57x with them. Fresh draws after the rule (fp32, 1-4
    rows, `--seed 6 --fp32`, …-s22-verify6.json), what auto ran before -> now: 4x4383x12222 0.72 -> 1.30x,
    4x5550x37821 0.53 -> 1.23x, 2x6526x2069 0.78 -> 1.93x, 3x951x3777 0.71 -> 1.10x, 3x782x28469 0.47 -> 0.78x,
    4x344x12419 0.68 -> 0.90x, 3x129x1107 0.80 -> 1.02x, 4x385x2229 0.80 -> 0.86x; slower: 1x2147x2471 1.16 ->
    1.10x, and 4x764x526 bias, which the tiles ran at 1.63x, 1.41x on the GEMV. 16 bits (SHIFT 8): the best window
    variant beat the plain read on 5 of 14 rows (bf16 1x7161x22449 0.85 -> 1.18x, fp16 3x1893x29311 1.16 -> 1.34x)
    and lost on 9 (fp16 1x4669x274 2.00 -> 1.39x, bf16 1x83x1055 0.96 -> 0.63x), so 1 there. AMD: compiles to
    whole-vector loads (global_load_dwordx4 on gfx942, global_load_b128 on gfx1100, Triton 3.9) but not timed: 1.
    A K-major weight (b_kmajor, nn.Linear's): SHIFT > 1 runs gemv_kshift.gemv_kshift_kernel, which reads each
    column's K run in whole vectors by residue class of columns, at the policy's tiles and split. H200, graph replay,
    x cuBLAS, gemv_kernel reading the weight as it is -> windows (benchmarks/gemv_kshift_probe.py, docs/measurements/
    2026-11-28-h200-s25-kshift*.json, MxKxN):
    * 16-bit, 1-4 rows, K odd (gemv_kernel's loads 2 bytes) and at least 64: all 8 draws won, bf16 4x3813x27698 B^T
      0.99 -> 1.35x (the tiles auto ran there: 0.81x), 1x4097x4096 1.00 -> 1.53x, 1x4799x2042 0.80 -> 1.27x,
      3x121x3766 1.28 -> 1.83x, fp16 3x805x13804 bias 1.02 -> 1.22x, 3x10897x2495 bias 0.92 -> 1.07x. K even lost
      where gemv_kernel already reads 4 or 8 bytes (bf16 3x5290x19666 0.91 -> 0.70x, 1x1116x1232 0.84 -> 0.79x;
      won bf16 2x11402x17198 1.14 -> 1.33x), and so did K under 64, with no unmasked window (fp16 2x25x1695 1.48 ->
      1.36x, 1x27x219 1.68 -> 1.47x), and 5-16 rows (8-row tiles [32, 32]: the unaligned loads of A's 8 rows
      outnumber the weight's vectors; bf16 8x4097x4096 0.94 -> 0.46x, fp16 5x372x17414 bias 0.84 -> 0.41x);
    * fp32, 1-8 rows: won or tied all 9 draws, aligned weights too (8x2876x11229 0.68 -> 0.96x, aligned 8x2876x11228
      0.67 -> 0.97x, 1x12621x1712 bias 0.79 -> 1.05x, 2x157x3319 0.75 -> 1.08x, 1x749x1804 1.20 -> 1.44x; 1x14854x64
      1.06 -> 1.03x). More rows (chunks of 8) won at K up to 37 (50x37x2248 0.53 -> 0.79x, 33x25x80 2.88 -> 3.37x)
      and lost from K = 517 (12x4097x4096 bias_relu 0.88 -> 0.65x, 30x2350x7191 0.47 -> 0.34x, 54x629x5810 bias
      0.57 -> 0.51x; won 10x1197x1419 bias 1.71 -> 2.00x): KSHIFT_FP32_CHUNKED_MAX_K.
    Fresh draws with that rule (`--seed 8`, `--seed 9`, …-s25-kshift-verify*.json), what auto ran before -> now:
    fp16 1x12795x7453 1.00 -> 1.77x, 3x3473x6542 0.92 -> 1.37x, 3x121x16768 0.67 -> 0.88x, 3x4045x12456 bias 0.97
    -> 1.19x, fp32 2x6587x17208 bias 0.99 -> 1.27x, 2x1369x1999 0.90 -> 1.11x, 2x510x11945 1.20 -> 1.42x, 41x33x503
    bias 1.63 -> 2.01x. The three losses were all narrow, N under 100 (fp32 5x409x86 1.70 -> 1.45x, 3x7981x34 2.24
    -> 2.15x, fp16 2x683x52 2.14 -> 2.05x; narrow wins were smaller: fp32 6x57x105 1.00 -> 1.15x), so KSHIFT_MIN_N.
    AMD and the interpreter (tests force it): 1."""
    if b_kmajor:
        shift = 16 // elem_size
        return (shift, split) if bk % shift == 0 and _kshifts(t, M, elem_size, K, N, b_aligned) else (1, split)
    if b_aligned or t.interpreter or t.backend != "cuda" or elem_size != 4 or split == 1:
        return 1, split
    shift = 16 // elem_size
    tiles = -(-(N + shift - 1) // bn) * -(-M // GEMV_MAX_M)
    halved = split // 2 if split >= 8 and tiles * (split // 2) >= 2 * cus else split
    return (1, split) if gemv_shift_misfit(shift, N, bn, bk, halved) else (shift, halved)


def gemv_shift_misfit(shift: int, N: int, bn: int, bk: int, split: int) -> str:
    """Why tiles of bn x bk with a K split cannot read B's rows in shifted windows of `shift` elements, or '' where
    they can: the tiles whole multiples of the window, B at least a tile and a window wide (a window's reads past a
    row's end land in the next row), and at most 64 workspace partials (the reduce pass unrolls them). The policy
    (gemv_shift) and a caller's config (gemm_parts.gemv_shift_refusal) are held to the same limits."""
    if bk % shift or bn % shift:
        return f"needs BLOCK_K and BLOCK_N multiples of it, got {bk} and {bn}"
    if bn + shift - 1 > N:
        return f"needs N >= BLOCK_N + {shift - 1} = {bn + shift - 1}, got {N}"
    if split * shift > 64:
        return f"with SPLIT_K={split} makes {split * shift} partials, more than 64"
    return ""


def _gemv_split(N: int, K: int, bn: int, bk: int, M: int, cus: int) -> int:
    """Double the K split (up to GEMV_MAX_SPLIT, the fp32 workspace split·M·N indexed in int32) while the doubled
    grid stays within GEMV_FILL_PER_CU programs per SM/CU and each split keeps GEMV_FILL_MIN_K_BLOCKS K blocks (a
    small grid filling the GPU), then while it stays within GEMV_PROGRAMS_PER_CU and each split keeps
    GEMV_MIN_K_BLOCKS (gemv_config's docstring has the measurements)."""
    tiles = -(-N // bn) * -(-M // GEMV_MAX_M)
    split = 1
    while split * 2 <= GEMV_MAX_SPLIT and split * 2 * max(M, 1) * N < 2**31:
        s2 = split * 2
        blocks = K // (s2 * bk)
        if not ((tiles * s2 <= GEMV_FILL_PER_CU * cus and blocks >= GEMV_FILL_MIN_K_BLOCKS)
                or (tiles * s2 <= GEMV_PROGRAMS_PER_CU * cus and blocks >= GEMV_MIN_K_BLOCKS)):
            break
        split = s2
    return split
