"""Launch policy for the row kernels (softmax, RMSNorm, LayerNorm and their backwards: rows.py, rows_split.py): the
block and warps a row takes, how many narrow rows share a program, and how many programs share one of a few wide
rows (policy.py re-exports every name here, so callers keep using `policy.row_config` and friends). Split from
policy.py to keep one topic per file."""

from __future__ import annotations

import functools
from typing import Any

from rocm_triton_doctor.kernels.policy import (CONFIG_CACHE_SIZE, DEFAULT_CUS, Target, _hip_extra, _max_warps,
                                               _next_pow2, cached_config)

# A whole row in one block up to 64 KiB; wider rows loop over ROW_CHUNK-element chunks with 16 warps, the second pass
# in reverse with L2 eviction hints (rows.py). H100, RMSNorm bf16 1024x65536: one 65536-wide block 68.9 % of copy,
# 8192-chunk loop forward 66.2 %, reversed + hints 76.8 %; 8192x65536 76.3 / 68.5 / 80.2 %; 1024x152064 64.4 -> 68.4 %
# (docs/measurements/2026-11-23-h100-tune-rows-before.json). The reads of pass 2 that miss L2 keep wide rows under
# 85 %: x is read twice.
ROW_SINGLE_BYTES = 65536
ROW_CHUNK = 8192  # wider rows loop over 8192-element chunks (the bench preset's rows, one block at 8/16 warps)
NARROW_ROW = 256  # rows up to this many elements (as a power of two) share a program with other rows
# An odd narrow width runs one warp a program only when that makes at least this many programs (the grid, not one
# program's latency, then sets the time): about what an H200's 132 SMs hold at once (32 one-warp blocks each).
ODD_ROW_ONE_WARP_PROGRAMS = 4096
TINY_ROW_BLOCK = 4  # rows of up to this many elements (as a power of two) pack 1024 elements a program ...
TINY_ROW_PROGRAMS = 1024  # ... where that makes at least this many programs (measured: 3-16 million rows)
# A narrow row set whose 2048-element packing makes fewer programs than this many per SM (a latency-bound grid) packs
# 512 elements a program instead.
SMALL_ROW_GRID_PER_SM = 2


def _two_byte_rows(n_cols: int, elem_size: int, block: int) -> bool:
    """16-bit rows of 4k+2 elements in a 128- or 256-wide block: rows that start on 4-byte boundaries only."""
    return elem_size == 2 and n_cols % 4 == 2 and block >= 128


def row_class(n_cols: int, n_rows: int) -> int:
    """The row count as the row policy keys it: the next power of two, capped at 64 (the most rows a program packs)
    for rows wider than NARROW_ROW and at 2^20 for narrow ones (whose warps depend on the grid's size), so a model's
    varying token counts share a few cache entries per (target, width, dtype size)."""
    return min(_next_pow2(max(1, n_rows)), 1 << 20 if n_cols <= NARROW_ROW else 64)


def row_config(t: Target, n_cols: int, elem_size: int, n_rows: int = 1 << 30) -> dict[str, Any]:
    """See _row_config, keyed by row_class."""
    return _row_config(t, n_cols, elem_size, row_class(n_cols, n_rows))


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
        if block <= TINY_ROW_BLOCK and t.backend == "cuda" and most_rows * block // 1024 >= TINY_ROW_PROGRAMS:
            # Rows of 1-4 elements: the 64-row cap below left a program 128-256 elements over four warps (1-2 a
            # thread). Large grids, graph replay, benchmarks/narrow_rows_probe.py, µs, ROWS=64 w4 -> 1024 elements
            # over four warps. H100 (docs/measurements/2026-11-28-h100-s17-narrow-{fp32,bf16}.json): softmax bf16
            # 16777216x2 159.1 -> 46.7 (28 -> 97 % of copy, 0.51 -> 1.74x eager), 8388608x4 80.8 -> 46.6, 11184810x3
            # 108.2 (w1) -> 84.8, fp32 8388608x2 80.6 -> 46.6 (0.70 -> 1.21x eager), RMSNorm fp32 x2 80.6 -> 46.6;
            # 512 elements over one or two warps within 1 % of it. H200 (…-h200-s17-narrow-tiny{32,16}.json): fp16
            # 5242880x4 51.0 -> 21.7 (512 elements: 26.4), 6990506x3 67.7 -> 53.8, fp32 3145728x4 31.6 -> 25.9.
            # Widths of 8 and 16 were at the copy ceiling already.
            return {"BLOCK": block, "ROWS": min(most_rows, 1024 // block), "num_warps": 4, "num_stages": 1}
        if _two_byte_rows(n_cols, elem_size, block) and t.backend == "cuda" and most_rows // 8 >= ODD_ROW_ONE_WARP_PROGRAMS:
            # 16-bit rows of 4k+2 elements (66-254) start on 4-byte boundaries only, so their loads are at most 2
            # elements wide: like odd widths they want one warp a program. H100, bf16, 64 MiB, graph replay,
            # benchmarks/narrow_rows_probe.py (docs/measurements/2026-11-28-h100-s16-narrow-even.json), % of copy,
            # ROWS=16/8 w4 -> ROWS=8 w1: softmax x98 41.0 -> 82.9 (0.67 -> 1.35x eager), x102 42.2 -> 84.0, x126
            # 48.6 -> 89.6, x150 61.5 -> 95.1, x190 50.6 -> 90.5, x250 60.1 -> 90.5; RMSNorm x98 67.0 -> 93.4, x126
            # 77.6 -> 94.0 (x150-x250: w2 95.6-95.8, w1 within 2 points). Widths of 4k elements (x96 96 %, x200 96 %,
            # and session 8's x100 on an H200, 74 % at w4) keep four warps.
            return {"BLOCK": block, "ROWS": 8, "num_warps": 1, "num_stages": 1}
        if n_cols % 2 and n_cols > 1 and t.backend == "cuda":
            # An odd width: no two rows start on the same word boundary, so every element is a scalar load. Then one
            # warp per program over ~512 elements beat four warps over 2048 (H200, bf16, graph replay,
            # benchmarks/narrow_rows_probe.py, % of copy): softmax 906876x37 8.9 -> 35.2 % (0.33 -> 1.29x eager),
            # RMSNorm 24.4 -> 43.8 %. Even widths (42, 64, 100, 128, 200) were at their best with the rule below.
            rows = max(1, min(most_rows, 512 // block, 64))
            if most_rows // rows >= ODD_ROW_ONE_WARP_PROGRAMS or block > 128:
                return {"BLOCK": block, "ROWS": rows, "num_warps": 1, "num_stages": 1}
            # A smaller grid is latency-bound: a program's time grows with the scalar loads each thread issues
            # (16 a thread at one warp over 512 elements), so four warps over ~256 elements (2 a thread). H200, graph
            # replay, softmax, µs, one warp over 512 -> this (benchmarks/cliff_probe.py, docs/measurements/
            # 2026-11-27-h200-s12-cliff.json): bf16 35x17 4.27 -> 1.36 (eager 1.44), 5527x17 4.47 -> 1.72 (1.85),
            # 33x87 2.28 -> 1.62 (1.98), fp16 476x3 1.75 -> 1.28 (1.36), 100000x3 2.44 -> 2.10 (2.32), fp32 4000x5
            # 1.92 -> 1.43 (1.58); the large grids keep one warp (bf16 200000x17 12.75 us against 16.5 with this), and
            # so do rows of 129-255 (bf16 2048x255: 2.32 us against 3.00 with this, eager 2.47; …-s12-cliff-after).
            rows = max(1, min(most_rows, 256 // block, 64))
            return {"BLOCK": block, "ROWS": rows, "num_warps": 4, "num_stages": 1}
        rows = max(1, min(most_rows, 2048 // block, 64))
        if t.backend == "cuda" and most_rows // rows < SMALL_ROW_GRID_PER_SM * DEFAULT_CUS["cuda"]:
            # A small grid is latency-bound: 512 elements a program, not 2048. H100, graph replay, four warps,
            # benchmarks/narrow_rows_probe.py --mib 0.14/0.25 (…-h100-s17-narrow-small{,16}.json), µs, 2048 -> 512
            # elements: softmax fp32 632x58 2.86 -> 1.61 (eager 1.9), 1079x34 2.87 -> 1.61, 367x100 2.00 -> 1.63,
            # bf16 3120x42 2.15 -> 1.70; RMSNorm fp32 632x58 2.12 -> 1.51, 1079x34 2.22 -> 1.50, 367x100 1.81 ->
            # 1.57. One row lost: bf16 1365x96 1.64 -> 1.70. fp32 rows of 2048 elements a program hit a cliff here
            # (367x100: 1024 elements 1.55, 2048 1.98). Fresh widths on an H200 (…-h200-s17-narrow-small{32,16}.json):
            # softmax fp32 873x60 1.91 -> 1.47 (eager 1.80), 1048x50 2.91 -> 1.54, 436x120 2.03 -> 1.50, bf16 5242x30
            # 2.17 -> 1.61, LayerNorm fp32 1048x50 2.37 -> 1.75, bf16 2457x64 1.69 -> 1.66.
            rows = max(1, min(rows, 512 // block))
        return {"BLOCK": block, "ROWS": rows, "num_warps": 4, "num_stages": 1, **_hip_extra(t, gemm=False)}
    # 16 warps only for rows of 32 KiB and more: a bf16 row of 8192 (16 KiB) ran LayerNorm at 1.11x torch.compile with
    # 8 warps and 1.04x with 16, fp32 rows of 8192 best with 16 (H200, docs/measurements/2026-11-21-h200-tune-4.json).
    # Looped rows (block < n_cols): 16 warps (8192-element chunks, w16 beat w8 in every wide-row case measured).
    warps = 16 if block < n_cols else 4 if block < 2048 else 8 if block * elem_size < 32768 else 16
    return {"BLOCK": block, "ROWS": 1, "num_warps": min(warps, _max_warps(t)), "num_stages": 1,
            **_hip_extra(t, gemm=False)}


ROW_SPLIT_PROGRAMS_PER_CU = 2  # a split row's programs: up to this many per SM/CU over all the rows
# Rows up to this many (as a power of two) split by ROW_SPLIT_PROGRAMS_PER_CU. Session 25 raised it from 32 and added
# the mid rule below: hunt seed 19's worst row was softmax fp16 108x149371 at 0.74x eager, one program a row. H200,
# graph replay, x eager, SPLIT 1 -> the rule's split (benchmarks/row_split_rows_probe.py, docs/measurements/
# 2026-11-28-h200-s25-split-rows.json): 33-64 rows (class 64, 4 parts) won 23 of 24 rows, softmax bf16 33x149371
# 0.84 -> 2.30, 64x149371 0.80 -> 1.31, fp32 64x149371 1.06 -> 1.75, RMSNorm bf16 33x128256 5.6 -> 12.3; one tie
# (RMSNorm fp32 64x32000 2.67 -> 2.58, 4 chunks).
ROW_SPLIT_MAX_ROWS = 64
# 65-128 rows (class 128) of at least ROW_SPLIT_MID_MIN_CHUNKS chunks: ROW_SPLIT_MID_PARTS parts a row. At 108 rows
# 8 parts won all 8 such rows (softmax bf16 108x149371 0.79 -> 1.03, 108x128256 1.09 -> 1.30, fp32 108x149371 1.06
# -> 1.34, RMSNorm bf16 108x128256 6.1 -> 8.8), fewer chunks lost (fp32 108x32000, 4 chunks: softmax 1.06 -> 0.89),
# and so did 2 parts, a second partial wave (softmax fp32 108x128256 1.40 -> 1.24). At 200 rows 8 parts were mixed
# (softmax bf16 200x128256 1.40 -> 1.26, 200x149371 0.92 -> 0.97): more rows keep one program each.
ROW_SPLIT_MID_ROWS = 128
# LayerNorm keeps session 13's measured range: the 33-128-row rules were timed on softmax and RMSNorm only.
ROW_SPLIT_LAYERNORM_MAX_ROWS = 32
ROW_SPLIT_MID_PARTS = 8
ROW_SPLIT_MID_MIN_CHUNKS = 16
# The split costs a second launch and a workspace: ~45 us more host time a call on the H200 host measured (a Python
# loop of 2000 calls, no graphs: softmax bf16 1x152064 33.0 -> 81.6 us a call, while its GPU time fell 27.7 -> 5.2;
# fp16 6x288582 62.3 -> 53.7; benchmarks/split_host_probe.py, docs/measurements/2026-11-27-h200-s12-split-host.log).
# A program walks about 5 G elements a second, so only rows of this many elements save more GPU time than that
# costs; narrower rows split only while a CUDA graph is being captured (the launches then cost nothing at replay).
ROW_SPLIT_EAGER_MIN_COLS = 262144


def split_class(n_rows: int) -> int:
    """The row count as row_split keys it: its next power of two (row_class stops at 64 rows; the split's rules look
    at up to ROW_SPLIT_MID_ROWS)."""
    return _next_pow2(max(1, n_rows))


@functools.lru_cache(maxsize=CONFIG_CACHE_SIZE)
def row_split(t: Target, n_cols: int, elem_size: int, n_rows: int, up_to: int = ROW_SPLIT_MID_ROWS) -> int:
    """Programs per row for softmax, RMSNorm and LayerNorm (rows_split.py): a looped row (wider than one block) among
    at most ROW_SPLIT_MAX_ROWS rows is cut into parts of whole chunks, up to ROW_SPLIT_PROGRAMS_PER_CU programs per
    SM/CU over all the rows, and among up to ROW_SPLIT_MID_ROWS into ROW_SPLIT_MID_PARTS where it has
    ROW_SPLIT_MID_MIN_CHUNKS chunks; 1: the row kernels as before. n_rows: the rows' count or its next power of two
    (the caller's cache key). up_to: more rows than this are not split (LayerNorm: ROW_SPLIT_LAYERNORM_MAX_ROWS).
    The interpreter splits a single looped row in up to 3 parts, so CI runs the two launches too. Not timed on
    AMD."""
    block = row_config(t, n_cols, elem_size, n_rows)["BLOCK"]
    chunks = -(-n_cols // block)
    rows = split_class(n_rows)
    if rows > up_to:
        return 1
    if t.interpreter:
        return min(chunks, 3) if rows == 1 and chunks >= 2 else 1
    if chunks >= ROW_SPLIT_MID_MIN_CHUNKS and ROW_SPLIT_MAX_ROWS < rows <= ROW_SPLIT_MID_ROWS:
        return ROW_SPLIT_MID_PARTS
    if chunks < 2 or rows > ROW_SPLIT_MAX_ROWS:
        return 1
    cus = DEFAULT_CUS["cuda" if t.backend == "cuda" else "cdna" if t.cdna else "rdna"]
    split = min(chunks, ROW_SPLIT_PROGRAMS_PER_CU * cus // rows)
    return split if split >= 2 else 1


# Rows of an odd width read in 16-byte windows (rows_window.py), where the plain kernels run one program a row, on
# NVIDIA (not timed on AMD). In one block: H200, graph replay, benchmarks/window_rows_probe.py --seed 1
# (docs/measurements/2026-11-29-h200-s26-window-rows-s1.json), µs, the plain kernel -> the best window form:
# LayerNorm bf16 157613x1511 712 -> 366, 27710x1111 117 -> 67, 1765x10989 82 -> 51, fp32 4507x1219 22.0 -> 14.2;
# RMSNorm bf16 15211x6731 178 -> 109, 4214x2805 21.7 -> 15.6; softmax fp32 6007x8691 171 -> 107, fp16 49849x2073
# 173 -> 126. Even widths already read 4 or 8 bytes a load, and the windows lost or tied there (RMSNorm bf16
# 28088x9268 326 -> 429, LayerNorm bf16 809250x630 1063 -> 1178, softmax fp16 62459x7650 462 -> 458). Narrow rows
# lost too (softmax bf16 76822x291: 55.5 -> 66.6).
WINDOW_MIN_COLS = 512
# A per-column parameter comes from a table of its V shifted copies (one more launch and allocation a call, about 30
# us more host time on the H200's host) from this many bytes of x: the window kernel's scalar, uncoalesced reads of
# it cost GPU time (LayerNorm bf16 157613x1511: 475 us at the shift, 366 from the table; 27710x1111: 82.7 -> 66.8),
# which only problems this large spend more of than the table's host time. In 16 bits always; in fp32 (4-byte reads
# at the shift) for LayerNorm's two parameters up to 32 KiB rows (fp32 105377x1630 357 -> 330, 13506x2734 88.4 ->
# 79.3, 10846x2209 64.5 -> 57.5; …-s26-window-rows-s{2,3}.json) but not RMSNorm's one, which lost or tied (13302x10069,
# 64 KiB: 334 -> 605, the table's loads held beside the row spill; 744x6793 10.7 -> 15.7; 12821x1574 41.6 -> 43.0).
WINDOW_TABLE_MIN_BYTES = 64 << 20
# Warps by the window's block, per element size (µs at the warps beside): 16-bit softmax fp16 49849x2073 (4096) w4 126
# / w8 144, RMSNorm bf16 15211x6731 (8192) w8 109 / w4 151 / w16 117, LayerNorm bf16 1765x10989 (16384) w4 51 / w8 57
# / w16 53, softmax fp16 8192x12799 (16384) w4 118 / w8 144, RMSNorm bf16 325x25747 (32768) 57 / 43 % of copy at w16
# / w8; fp32 LayerNorm 10846x2209 (4096) w4 64.5 / w8 68.8, softmax fp32 6007x8691 (16384) w8 107 / w4 126 / w16 165.
WINDOW_WARPS = {2: {8192: 8, 16384: 4, 32768: 16}, 4: {16384: 8}}  # 4 warps elsewhere
# Rows wider than one block (softmax, RMSNorm, LayerNorm), in ROW_CHUNK-lane chunks at 16 warps, as the plain looped
# rows: odd widths and, in 16 bits, widths of 4k + 2 (4-byte loads). Softmax (…-s26-window-wide-s4.json), µs, plain
# -> window: bf16 379x182889 203 -> 124, 722x100027 173 -> 121, fp16 4586x39243 341 -> 232, 3595x107733 814 -> 573,
# fp32 1327x181459 1053 -> 808, 1930x28143 149 -> 137; 4k + 2: bf16 1710x183670 658 -> 492, 5661x75530 673 -> 619,
# fp16 1616x48994 121 -> 110. 4096-lane chunks and 8 warps were slower on 13 of the 14 rows. The norms' looped forms
# (…-s26-window-wide-s5.json, µs, plain -> window, parameters from their tables): RMSNorm bf16 3228x126337 1114 ->
# 621, fp16 401x139437 164 -> 111, fp32 1052x83215 309 -> 287; LayerNorm at 8 warps fp16 2390x37590 200 -> 145, bf16
# 365x210173 357 -> 171, fp32 430x56241 131 -> 87 (16 warps: 155, 181, 103; 5 of LayerNorm's 6 rows best at 8). The
# tables won on 9 of the 11 norm rows at either warps (fp16 2390x37590 209 at the shift).
WINDOW_LOOPED_WARPS = 16
WINDOW_LOOPED_WARPS_TWO_PARAMS = 8
# 16-bit norms whose window would be 16384 lanes (odd N of 8193-16377) run it looped, in WINDOW_WIDE_CHUNK-lane chunks
# at 8 warps, from WINDOW_CHUNKS_MIN_BYTES of x. H200, µs, the one-block window -> chunks (benchmarks/
# window_rows_probe.py --over, docs/measurements/2026-11-29-h200-s28-window-over-{ln-s6,p13-s8}.json): RMSNorm fp16
# 5995x8659 (tables) 146 -> 65.7, 781x10049 15.9 -> 13.6; LayerNorm bf16 4560x9835 (tables) 115 -> 83.3, fp16
# 751x10353 25.6 -> 19.5. Under 3 MiB they tied or lost (LayerNorm bf16 99x9843 5.2 -> 6.3, RMSNorm bf16 71x10899
# 3.6 -> 4.7, LayerNorm bf16 158x8541 8.6 -> 8.5); 8192-lane chunks lost to 4096 on all seven rows.
WINDOW_WIDE_CHUNK = 4096
WINDOW_CHUNKS_MIN_BYTES = 8 << 20
# 16-bit softmax in a 16384-lane window, up to this many lanes of the row (the rest idle): 8 warps. H200, µs at 4 -> 8
# warps (…-s28-window-over-p13-s8.json): bf16 2078x9285 38.3 -> 31.0, 3947x9775 68.7 -> 56.7, fp16 129x9731 4.3 ->
# 3.7; WINDOW_WARPS' 4 stay past it (fp16 8192x12799 118 at 4, 144 at 8, session 26).
WINDOW_SOFTMAX_W8_LANES = 12288


@functools.lru_cache(maxsize=CONFIG_CACHE_SIZE)
def _window_config(t: Target, n_cols: int, elem_size: int, table: bool, params: int = 1,
                   chunks: bool = False) -> dict[str, Any] | None:
    v = 16 // elem_size
    if t.backend != "cuda" or t.interpreter or n_cols % v == 0 or n_cols < WINDOW_MIN_COLS:
        return None
    block = _next_pow2(n_cols + v - 1)
    if block * elem_size > ROW_SINGLE_BYTES:  # looped, in ROW_CHUNK-lane chunks
        if n_cols % 2 == 0 and not (elem_size == 2 and n_cols % 4 == 2):
            return None
        warps = WINDOW_LOOPED_WARPS_TWO_PARAMS if params == 2 else WINDOW_LOOPED_WARPS
        return {"BLOCK": ROW_CHUNK, "num_warps": min(warps, _max_warps(t)), "num_stages": 1, "V": v,
                "TABLE": table and params > 0, "LOOPED": True}
    if n_cols % 2 == 0:
        return None
    warps = WINDOW_WARPS.get(elem_size, {}).get(block, 4)
    table = table and params > 0 and (elem_size == 2 or (params == 2 and block * elem_size <= 32768))
    if elem_size == 2 and block == 8192 and params == 2 and table:
        # LayerNorm's 8192-lane windows with both parameters from their tables (the RMSNorm row above, one parameter,
        # keeps 8): H200, µs at 8 -> 4 warps (benchmarks/window_rows_probe.py --over, docs/measurements/2026-11-29-
        # h200-s28-window-over*.json): fp16 65372x5511 690 -> 579, bf16 25185x5455 273 -> 227, bf16 16161x4737 172 ->
        # 144; RMSNorm bf16 31626x4825 182 at 8, 214 at 4. Looped windows in 2048-lane chunks tied or lost there.
        warps = 4
    if elem_size == 2 and block == 16384 and params and chunks:
        return {"BLOCK": WINDOW_WIDE_CHUNK, "num_warps": min(8, _max_warps(t)), "num_stages": 1, "V": v,
                "TABLE": table, "LOOPED": True}
    if elem_size == 2 and block == 16384 and not params and n_cols + v - 1 <= WINDOW_SOFTMAX_W8_LANES:
        warps = 8
    if elem_size == 2 and block == 16384 and params and not table:
        # The parameters read at the shift want 8 warps there (4 are for rows without them or from tables): LayerNorm
        # bf16 1765x10989 w4 98.0 / w8 68.9 / w16 69.6 us, fp16 87x11547 10.0 / 5.2 / 5.5 (…-s26-window-rows-s1.json).
        warps = 8
    return {"BLOCK": block, "num_warps": min(warps, _max_warps(t)), "num_stages": 1, "V": v, "TABLE": table,
            "LOOPED": False}


def window_config(t: Target, n_cols: int, elem_size: int, n_rows: int, params: int = 1) -> dict[str, Any] | None:
    """The window form's launch (rows_window.py) for an op with `params` per-column parameters: BLOCK covering the
    row at any shift (N + V - 1 lanes) or a chunk of a looped row (LOOPED), warps, V (elements in 16 bytes), and TABLE
    (the parameters from shifted tables); None where the plain kernels run. Shared, never mutated."""
    size = n_rows * n_cols * elem_size
    return _window_config(t, n_cols, elem_size, size >= WINDOW_TABLE_MIN_BYTES, params,
                          size >= WINDOW_CHUNKS_MIN_BYTES)
