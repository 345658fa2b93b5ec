"""Launch policy for the attention kernels (forward: pointer, host-descriptor TMA, device-descriptor TMA; backward):
the kernel choice and tiles per target, keyed like policy.py's functions (which re-exports every name here, so callers
keep using `policy.attention_config` and friends). Split from policy.py to keep one topic per file."""

from __future__ import annotations

from functools import cache, lru_cache
from typing import Any

from rocm_triton_doctor.kernels.policy import Target, _hip_extra, cached_config, tma_supported

# The host-descriptor kernel builds four tensor descriptors per call and takes Triton's slow launch path (~65-75 us
# of host time on an H100 host). From 16 GFLOP (the first floor) two sweeps on an H100 showed its mid-size rows
# host-bound and moving with the host's load: bf16 B4 H32 S=1024 D=128 causal (34 GFLOP) 134 and 173 us against SDPA's
# 88, B1 H4 S=4097 D=128 (34 GFLOP) 73 and 142 us (docs/measurements/2026-11-23-h100-{last,s5}-sweep.json). With the
# floor at 100 GFLOP the pointer kernel (its launch now planned, ~30 us of host time) ran those at 130 and 77 us, but
# the non-causal S=1024 rows (69 GFLOP) lost: 181 us against the TMA kernel's 157 (…-s5-sweep-attention-tma100.json).
# So the floor sits between: 50 GFLOP.
TMA_ATTENTION_MIN_FLOPS = 50e9
# A short key range (S_k up to SHORT_KEYS: one or two key tiles a query tile) makes attention a read of Q and a write
# of O; the pointer kernel's 64-row tiles with 4 warps take it, 32 keys a tile in one stage up to SHORT_KEYS_NARROW
# (attention_config has the measurements).
SHORT_KEYS = 128
SHORT_KEYS_NARROW = 96
# Device-side descriptors cost no host time, so the floor is only where a launch is too small for TMA to matter;
# not measured yet (benchmarks/tune_attention_shapes.py times both kernels from S=128 up).
TMA_DEVICE_ATTENTION_MIN_FLOPS = 200e9  # D=80/96 causal: B4 H32 S=4097 is 687 GFLOP, S=1024 43
# Non-causal D = 65-127 from 40 GFLOP: H200 (docs/measurements/2026-11-28-h200-s19-split.json, x SDPA, device
# descriptors against the pointer kernel): fp16 B12 H16/8 S 1059x1839 D96 (143 GFLOP) 0.94 against 0.82, B3 H12/2
# S1930 D96 (51) 0.86 against 0.80; bf16 B3 H12/4 S1193 D96 (20) 0.68 against 0.79. Causal rows stay on the pointer
# kernel below 200 GFLOP (fp16 B14 H24/4 S1329 D112 causal, 133: 0.64 against 0.74).
# Only where two column blocks save columns (D <= 96: 64 + 16/32; D = 112 is 64 + 64): fresh draws (…-s19-fresh91.json)
# had bf16 B2 H64/4 S1339 D112 (103 GFLOP) at 0.73 against the pointer kernel's 0.79, B4 H24/4 S1961 D96 0.95 against
# 0.79.
TMA_DEVICE_NONCAUSAL_MID_D_MIN_FLOPS = 40e9


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
    the pointer kernel, though 37 vs 41 us in graph replay. The floor: TMA_ATTENTION_MIN_FLOPS (why 50 GFLOP: above it)."""
    return tma_supported(t) and not t.interpreter and head_dim == 128 and flops >= TMA_ATTENTION_MIN_FLOPS


def attention_kernel(t: Target, head_dim: int, flops: float, tma_layout: bool, causal: bool = True,
                     keys: int = 0) -> str:
    """Which attention kernel "auto" runs: "tma_device", "tma" or "pointer". tma_layout: 16-bit tensors whose layout
    a descriptor takes (base.tma_layout_ok). Measured on an H100, bf16 B4 H32, ours / SDPA
    (docs/measurements/2026-11-23-h100-tune-attention.json, benchmarks/tune_attention_shapes.py):
    * D=256: device descriptors (128x64 tiles) 0.61-0.75x, the pointer kernel 0.25-0.40x (its address registers
      leave no room for larger tiles);
    * D=128: host-descriptor TMA 0.75-0.85x (GQA 0.75-0.84x), device descriptors 0.58-0.73x, pointer 0.67-0.79x;
    * D=80/96: at S=4097 device descriptors padded to 128 columns 0.72-0.80x against the pointer kernel's 0.68-0.75x
      (split into 64+16/32 columns with the padded kernel's 128x128 tiles: 0.63-0.77x); at S=1024 the pointer kernel
      0.63-0.68x against 0.56-0.62x. Session 16 (H100, docs/measurements/2026-11-28-h100-s16-tune-dims2.json): split
      with 128x64 tiles in 3 stages (attention_config's `split`) 0.87-0.92x at S=4096 for D=72/80/96; D=160/192
      0.63-0.75x; at S=1024 the pointer kernel stays (0.67-0.76x) — the split lost causal rows there (D=72: 0.64x
      against 0.75x) and won non-causal ones by less (0.76x against 0.70x);
    * D=64: the pointer kernel (128x64, 8 warps) 0.85-0.91x; host TMA 0.69-0.78x, device 0.46-0.69x.
    Small problems stay on the pointer kernel: at S=128 D=128 the descriptor kernels cost host time (0.31-0.76x
    event-timed against 1.03x). So does a short key range (keys, the S_k, up to SHORT_KEYS at D <= 128): the device-
    descriptor kernel ran 0.26-0.36x SDPA on all nine such rows of `attention_cols_probe.py --set shortk` (H200)."""
    if t.interpreter or not tma_layout or (0 < keys <= SHORT_KEYS and head_dim <= 128):
        return "pointer"
    device_ok = tensor_desc_device_supported(t)
    if head_dim > 128:
        # The pointer kernel at every size since its head dim runs in two column blocks (160 as 128 + 32) and its
        # 192/256-column tiles follow the grid (attention_config): H200 (docs/measurements/2026-11-28-h200-s20-cols-
        # fresh103.json), device descriptors against it on 14 fresh D = 144-256 rows, 0.42-0.87x SDPA against
        # 0.66-1.40x, at 0.1-415 GFLOP (D160 415 GFLOP causal 0.56 against 0.77, D256 165 GFLOP causal 0.73
        # against 0.78); not one row where they won.
        return "pointer"
    mid_floor = TMA_DEVICE_ATTENTION_MIN_FLOPS if causal or head_dim > 96 else TMA_DEVICE_NONCAUSAL_MID_D_MIN_FLOPS
    if 64 < head_dim < 128 and device_ok and flops >= mid_floor:
        return "tma_device"
    return "tma" if attention_use_tma(t, head_dim, flops) else "pointer"


def column_blocks(D: int, split: bool = True) -> tuple[int, int]:
    """(BLOCK_D, BLOCK_D2) for head dim D: one power of two at or above D (16 at least), or with `split` and where
    it saves columns, the largest power of two below D plus a second power-of-two block for the rest (80 -> 64 + 16,
    96 -> 64 + 32, 160 -> 128 + 32; 112 stays 128, which 64 + 64 would not beat)."""
    pad = max(16, 1 << (D - 1).bit_length())
    first = 1 << (D.bit_length() - 1)
    if not split or first == D or first < 16:
        return pad, 0
    second = max(16, 1 << (D - first - 1).bit_length())
    return (first, second) if first + second < pad else (pad, 0)


def pointer_column_split(t: Target, head_dim: int) -> bool:
    """Whether attn_fwd_kernel covers a head dim of 65-255 that is not a power of two in two column blocks
    (column_blocks: 80 as 64 + 16, 160 as 128 + 32) instead of one block padded to the power of two above (128,
    256), where that saves columns: 37 % fewer MMA columns at D = 80 and 160. H200, × SDPA, the policy with and without
    the split (benchmarks/attention_cols_probe.py, docs/measurements/2026-11-28-h200-s20-cols-fresh103.json): 21 fresh
    shapes at D = 72-256, median 0.82 -> 1.03, 14 -> 9 under 0.9 (D80 B16 H12 S480 causal 0.79 -> 1.03, D144 B8
    H32/2 S153 causal 0.79 -> 1.40, D160 B8 H32/8 S223 0.65 -> 0.82); the hunts' worst rows (…-s20-cols-fixed.json)
    D160 B13 H16/2 S950x97 causal 0.33 -> 0.85, B14 H12/1 S215x79 0.49 -> 0.96. At D <= 64 the products are a small
    part of the work, so it stays one block there. The same on AMD (the HIP tiles compile with it: the compile-only
    audit); not timed there."""
    return head_dim > 64


def attention_small_grid(B: int, H: int, S_q: int, cus: int) -> bool:
    """attention_config's small_grid: 64-row query tiles make no more programs than the device has SMs/CUs (cus; 0:
    unknown, never small)."""
    return -(-S_q // 64) * B * H <= cus


@cached_config
def attention_config(t: Target, head_dim: int, elem_size: int, causal: bool = False,
                     tma: bool = False, mid: bool = False, split: bool = False,
                     small_grid: bool = False, keys: int = 0) -> dict[str, Any]:
    """Tiles for the attention kernels; head_dim is the columns the kernel computes: the padded BLOCK_D (a power of
    two, 16 to 256), or for the pointer kernel in two column blocks their sum (160 for 128 + 32). tma: for either
    TMA kernel (host or device descriptors). split: the device-descriptor kernel covers the head dim in two column
    blocks (column_blocks: D = 72 as 64 + 16, 160 as 128 + 32, 192 as 128 + 64). small_grid: 64-row query tiles
    make no more programs than the GPU has SMs/CUs (one wave). keys: the key range S_k (0: not given)."""
    if t.interpreter:
        return {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 1}
    if tma and split:
        # H100, bf16 B4 H32 S1024/4096, causal and not (benchmarks/tune_attention_shapes.py --dims 40,72,160,192,
        # docs/measurements/2026-11-28-h100-s16-tune-dims.json), x SDPA: D = 72 split 128x64 w8 s3 0.64-0.89 against
        # padded to 128 (128x128 s3) 0.55-0.75; D = 160 0.52-0.72 against the old split 128x64 s2 0.47-0.60; D = 192
        # 0.51-0.69 against 0.45-0.63. Two column blocks need less shared memory than one padded to 256 (192 columns:
        # Q 48 KiB + 3 stages of K and V 144 KiB), so three stages fit; 128-key tiles lost with the split (D = 72
        # 0.44-0.52, D = 192 0.36-0.47).
        return {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3, "SPLIT_D": True}
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
            # D = 129-256 (the pointer kernel at every size since session 20; before, small problems). --compile-only sm_90,
            # Triton 3.9, ptxas spill bytes causal/non-causal: 64x32 w8 s2 8/0 (255 registers), 64x16 w8 s2 0/0 (0.16-
            # 0.25x SDPA on an H100), 64x64 w8 204/168, 128x32 w8 232/240, 128x64 w8 584/542. Timed on an H200
            # (docs/measurements/2026-11-28-h200-s19-split.json), 64x64 with 4 warps in 2 stages beat 64x32 w8 s2 on
            # all eight rows: 0.42-1.11x SDPA against 0.21-0.87x, and on 21 of 24 fresh draws (…-s19-larged93.json).
            # With the head dim in two column blocks (pointer_column_split) the kernel computes 144-192 columns
            # for D = 129-192. H200, × SDPA (benchmarks/attention_cols_probe.py, docs/measurements/2026-11-28-h200-
            # s20-cols-{fixed,fresh103}.json): up to 160 columns 64x64 w4 s2 won or tied on all 13 rows (0.75-1.40
            # against 128x64 w8 s2's 0.66-1.13); at 192 and 256 columns 128x64 w8 s2 won every row whose 128-row
            # tiles fill the GPU (D192 B8 H32 S562 0.74 against 0.54, D256 B8 H16 S583 0.76 against 0.45, 12 rows)
            # and 64x64 w4 the rows where they do not (D256 B2 H8/4 S408x560 causal 1.21 against 0.91, D192 B1 H16
            # S125 1.23 against 1.03, 5 rows).
            # --compile-only sm_90, Triton 3.9 (docs/measurements/2026-11-28-s20-compile-only-attention.json): 192
            # columns 128x64 w8 0 spills (242 registers), 160 columns 64x64 w4 0 (233), 256 columns 128x64 w8 56 bytes.
            # Which grids are small (session 28, benchmarks/attention_cols_probe.py --set grid, docs/measurements/
            # 2026-11-29-h200-s28-attn-grid*.json): a 64x64 program at 192-256 columns takes 160 KiB of shared memory
            # in 2 stages, so one fits an SM, and 64-row tiles win only where all their programs run in one wave. Where
            # 128-row tiles had made fewer programs than SMs but 64-row ones more (the earlier rule), the second wave
            # cost half: bf16 B1 H4 S2655 S_k 1789 D256 (168 programs) 0.48 against 128x64 w8's 0.84, B2 H12/4 S495
            # D256 (192) 0.55 against 0.88. Programs <= SMs separates all 20 rows of D 192/256 timed with both tiles
            # (the 13 of session 20, the 7 of session 28).
            if head_dim <= 160 or small_grid:
                return {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2}
            return {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 2}
        # fp32 with D of 65-128: 3 stages of 128x64 (or 64x64) fp32 tiles need 256 (224) KiB of shared memory, over
        # or at the H100's 227 (compile-only sm_90, Triton 3.9); 2 stages need 192 (160). launch.launch_fitting would
        # find that out at the first call, after a failed load; fp32 takes 2 stages here. Not timed.
        stages = 2 if elem_size == 4 and head_dim > 64 else 3
        if 0 < keys <= SHORT_KEYS and elem_size == 2 and (keys <= SHORT_KEYS_NARROW or head_dim > 64):
            # Long query blocks against one or two key tiles (SHORT_KEYS): the work is the read of Q and the write of
            # O, and each program also reads all of K and V. H200, x SDPA (benchmarks/attention_cols_probe.py --set
            # shortk, docs/measurements/2026-11-28-h200-s22-shortk.json), 10 rows at S_k 17-128, D 48-160: the policy's
            # 128x64 w8 tiles median 0.63 (bf16 B5 H40/1 S4455 S_k 89 D128 0.42, the hunt's worst), 64x32 w4 in one
            # stage 0.82 (that row 0.67; S_k 17-92 0.82-2.09), 64x64 w4 s2 0.83 (S_k 100-128: 0.65-0.87, against
            # 64x32's 0.63-0.75); 32-row tiles 0.43, 128x128 0.54. At D = 160 the policy's 64x64 w4 s2 tied the best,
            # and at D = 64 against 128 keys the 128x64 w8 tiles won (fp16 B4 H16 S4096: 0.81 against 0.76), so those
            # keep them. After the rule (…-s22-shortk2.json): median 0.63 -> 0.86, worst 0.43 -> 0.66 (S_k 100 causal
            # D128; the hunt's row 0.43 -> 0.70); 16 fresh draws at S_k 8-124 (…-s22-shortk_fresh22.json) median 1.41 ->
            # 1.90, 14 faster, one slower (fp16 B1 H8/4 S463 S_k 54 D80 causal 2.11 -> 1.93).
            if keys <= SHORT_KEYS_NARROW:
                return {"BLOCK_M": 64, "BLOCK_N": 32, "num_warps": 4, "num_stages": 1}
            return {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2}
        if causal and mid and head_dim <= 128:
            # Causal problems under TMA_ATTENTION_MIN_FLOPS (mid: what stays on this kernel at D = 128): 64x64 tiles,
            # 4 warps, 3 stages. H100 (benchmarks/attention_mid_probe.py, docs/measurements/2026-11-23-h100-s6-
            # attention-mid.json), µs against 128x64 w8: fp16 B1 H32 S2048 D128 (the seed row) 114.9 -> 104.3 (0.77 ->
            # 0.84x SDPA), bf16 B4 H32 S1024 D128 129.0 -> 113.1, B8 H16 S1024 D128 130.1 -> 113.8, B2 H32 S1000 D128
            # 74.0 -> 68.3, B4 H32 S1024 D64 73.1 -> 70.8: half-height tiles waste less work on the diagonal and
            # balance the uneven causal rows over twice the programs. Larger problems keep the tiles below (H200).
            return {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": stages}
        # H200 sweep with the scale folded into exp2 (docs/measurements/2026-11-21-h200-tune-3.json): 128x64, 8 warps,
        # 3 stages is best for both: 442 TF/s non-causal (0.74x SDPA), 437 TF/s causal (0.82x); 64x64 w4 0.73/0.77x.
        # H100 (2026-11-23, tune-attention.json): D=64 with 8 warps 0.87-0.91x SDPA against 0.80-0.88x with 4.
        return {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": stages}
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


# Split-key attention (attention_split.py): only where the one-program-a-query-tile grid leaves the GPU idle and the
# keys are long enough to split. A split takes at least SPLIT_MIN_KEYS keys, so its partial output (D fp32 values a
# row, written and read once more) stays small beside the K/V it reads (2·D 16-bit values a key and row of the group).
SPLIT_MIN_KEYS = 256
SPLIT_MIN_S_K = 512
SPLIT_WAVES = 1  # programs aimed at: this many per SM/CU (H200: half of 2 an SM was faster on 12 of 17 rows)
PACK_MAX_ROWS = 64  # a key head's query rows (GROUP·S_q) that fit one tile: packed whatever the grid


@lru_cache(maxsize=4096)
def attention_split_config(t: Target, B: int, H: int, H_kv: int, S_q: int, S_k: int, block_d: int, elem_size: int,
                           cus: int) -> dict[str, Any] | None:
    """Tiles and SPLITS for attention_split.SplitLaunch, or None for attn_fwd_kernel. A key head's GROUP·S_q query
    rows share a tile (16, 32 or 64 rows; 32 past D = 128). Where they fit one tile (PACK_MAX_ROWS: decode, and
    speculative decode's few rows) the split kernel always runs: attn_fwd_kernel would give each query head its own
    64- or 128-row tile for one row and read the group's K/V once per head (H200, bf16 B8 H32/8 S_q 1 S_k 2048: 0.30x
    SDPA, 0.97x packed). Longer query blocks take it only where their tiles leave the device idle (fewer than cus,
    the SMs/CUs; 0: unknown, as in the interpreter) and the keys are long (SPLIT_MIN_S_K). The keys are split until
    about SPLIT_WAVES programs an SM run, none with fewer than SPLIT_MIN_KEYS keys. H200, bf16/fp16 non-causal, the
    split kernel against attn_fwd_kernel (docs/measurements/2026-11-28-h200-s19-split.json): S_q 1 against 2-33k keys
    0.5-0.9x SDPA against 0.04-0.3x; S_q 16-333 against 4-16k keys 1.0-4.4x against 0.7-0.75x. The dict is shared
    between calls (memoised): callers copy it before changing it (SplitLaunch does)."""
    if t.interpreter or cus <= 0:
        return None
    rows = H // H_kv * S_q
    bm = 16 if rows <= 16 else 32 if rows <= 32 or block_d > 128 else 64
    tiles = -(-rows // bm) * B * H_kv
    if rows > PACK_MAX_ROWS and (tiles >= cus or S_k < SPLIT_MIN_S_K):
        return None
    splits = max(1, min(-(-SPLIT_WAVES * cus // tiles), S_k // SPLIT_MIN_KEYS))
    if t.backend == "cuda":
        # 64-key tiles as attn_fwd_kernel's, 4 warps for tiles of up to 32 rows; fp32 past D = 64 in two stages (three
        # overflow shared memory, as attention_config). 128-key tiles, 8 warps, 2 or 4 stages: within 0.05x either way.
        return {"BLOCK_M": bm, "BLOCK_N": 64, "num_warps": 4 if bm <= 32 else 8,
                "num_stages": 2 if elem_size == 4 and block_d > 64 else 3, "SPLITS": splits}
    # HIP: one stage and attention_config's key tiles (fused two-GEMM loops). --compile-only, Triton 3.9, bf16: gfx942
    # 0 VGPR spills at D = 128 and 256; gfx1100 with 4 warps spilled 13 (64 rows, D = 128) and 166 (16 rows, D = 256),
    # so RDNA takes at most 32 rows and 8 warps past D = 128 (0 and 112 spills there: D = 256 spills on gfx1100 in every
    # attention tile tried, as attention_config says; gfx1201 0). Not timed.
    if not t.cdna:
        return {"BLOCK_M": min(bm, 32), "BLOCK_N": 16, "num_warps": 8 if block_d > 128 else 4, "num_stages": 1,
                "SPLITS": splits, **_hip_extra(t, gemm=True)}
    return {"BLOCK_M": bm, "BLOCK_N": 32, "num_warps": 4, "num_stages": 1, "SPLITS": splits, **_hip_extra(t, gemm=True)}


@cached_config
def attention_backward_config(t: Target, block_d: int, elem_size: int, causal: bool = False,
                              long_seq: bool = False) -> dict[str, Any]:
    """Tiles for the attention backward (attention_backward.py): BLOCK_N1 keys per dK/dV program stepping over
    BLOCK_M1 query rows, BLOCK_M2 query rows per dQ program stepping over BLOCK_N2 keys (tutorial 06's transposed
    pair), num_warps/num_stages shared by both; block_d is the padded power-of-two head dim. DQ_ATOMIC (optional):
    dQ added into fp32 by the dK/dV kernel instead of its own kernel (not under torch's deterministic mode). Chosen
    spill-free with --compile-only (Triton 3.9, bf16, causal and not; a sweep over tiles and warps, 2026-11-23); not
    timed yet."""
    if t.interpreter:
        return {"BLOCK_M1": 16, "BLOCK_N1": 32, "BLOCK_M2": 32, "BLOCK_N2": 16, "num_warps": 4, "num_stages": 1}
    if t.backend == "cuda":
        # sm_90 ptxas spill bytes: D=128 dK/dV 32x128 w8 752, 64x64 w8 s2 180 (with the masked and unmasked loop
        # copies), 32x64 w8 s3 0 (one loop); D=64 dK/dV 32x128 w4 460 (tutorial 06's 4 warps), w8 0; D=256 dK/dV 16x64
        # w8 428, 16x32 w8 0, dQ 64x16 w8 176, 32x32 w8 0.
        if block_d > 128:
            # Head dims 160-256: 64x64 tiles, 8 warps, one stage, though they spill on sm_90: the spill-free 16x32 /
            # 32x32 tiles ran the backward at 0.14-0.37x SDPA's. H200, backward alone, graph replay, x SDPA's backward,
            # 16x32/32x32 w8 s2 -> 64x64 w8 s1 (benchmarks/backward_probe.py --set wide-d, docs/measurements/
            # 2026-11-29-h200-s30-probe-wide-d.json): bf16 B8 H16 S512 D256 0.20 -> 0.57, fp16 B7 H12/4 S2452 D256
            # 0.16 -> 0.50, bf16 B4 H16 S1024 D192 0.15 -> 0.47, B2 H16/4 S2048 D160 causal 0.14 -> 0.33, B2 H12/2
            # S1127 D256 causal 0.18 -> 0.39, B5 H24/1 S238 D256 causal 0.37 -> 0.59 (32x64/64x32 w8 s2 0.67 there
            # and 0.33-0.46 on the others; six other tilings lower).
            # DQ_ATOMIC: dQ added by the dK/dV kernel (5 matmuls a block pair, not 7). Session 32, H200, the same
            # measure, two kernels -> atomic dQ (benchmarks/backward_probe.py --set atomic-wide, docs/measurements/
            # 2026-11-29-h200-s32-probe-atomic-wide.json): bf16 B1 H12/2 S505 D256 0.56 -> 0.72, fp16 B7 H12/4 S2452
            # D256 0.50 -> 0.59, bf16 B4 H16 S1024 D192 0.46 -> 0.61, B2 H16/4 S2048 D160 causal 0.34 -> 0.44, B8 H16
            # S512 D256 0.56 -> 0.69; six other tilings of it lower. At D <= 128 it lost on all 17 rows (--set
            # atomic: 0.44-0.74 against 0.59-0.89), so those keep the dQ kernel.
            return {"BLOCK_M1": 64, "BLOCK_N1": 64, "BLOCK_M2": 64, "BLOCK_N2": 64, "num_warps": 8, "num_stages": 1,
                    "DQ_ATOMIC": True}
        # Timed on an H100 (bf16 B4 H32 S1024/4096, benchmarks/tune_attention_backward.py,
        # docs/measurements/2026-11-23-h100-tune-attention-backward.json), against SDPA's backward: D=128 32x64/64x32
        # w4 s4 0.62-0.91x (the spill-free 32x64/64x64 w8 s3 above: 0.30-0.45x); D=64 64x64/64x64 w4 s3 0.82-1.07x
        # (32x128/128x64 w8 s3: 0.68-0.86x).
        if block_d > 64 and long_seq:
            # Sequences of 4096 and more (long_seq: min(S_q, S_k) >= 4096): 64x128 / 128x64 tiles with 8 warps and
            # 3 stages (the tiles FlexAttention's backward uses on sm_90, which had run 6-13 % faster than ours
            # there). H100, bf16 B4 H32 S4096, against the config below: D=128 7278 -> 7081 us, causal 4067 -> 3770,
            # D=96 7555 -> 6751, causal 4010 -> 3832; at S1024 they lost 2-8 % causal, so shorter sequences keep it
            # (docs/measurements/2026-11-23-h100-s6-tune-attention-backward.json).
            return {"BLOCK_M1": 64, "BLOCK_N1": 128, "BLOCK_M2": 128, "BLOCK_N2": 64, "num_warps": 8, "num_stages": 3}
        if block_d > 64:
            # Three stages, not four (session 30, H200, backward alone, x SDPA's backward, s4 -> s3; benchmarks/
            # backward_probe.py --set mid-d, docs/measurements/2026-11-29-h200-s30-probe-mid-d.json): fp16 B12 H24/2
            # S279 D128 0.84 -> 0.90, bf16 B15 H12/4 S451 D128 0.61 -> 0.65, fp16 B2 H24/4 S2022 D96 causal 0.58 ->
            # 0.61, fp16 B15 H12/1 S1722 D80 causal 0.57 -> 0.61, and better on the other three rows of D 80-128 by
            # 0.01-0.03; six other tilings were slower on most rows (64x64 tiles 0.33-0.62).
            return {"BLOCK_M1": 32, "BLOCK_N1": 64, "BLOCK_M2": 64, "BLOCK_N2": 32, "num_warps": 4, "num_stages": 3}
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


# GQA/MQA: a dK/dV program sums its KV head's whole group of query heads, so the dK/dV grid has H_kv, not H, heads:
# with few KV heads it leaves most SMs idle (H200, bf16 B1 H16/1 S2238 D32: forward + backward 0.36x SDPA's; B2
# H24/1 S79x1507 D64 causal 0.32x; session 30's backward hunt, docs/measurements/2026-11-29-h200-s30-bwd-hunt1.json).
# Under this many programs per SM/CU the group is cut into parts (programs·parts up to that many), one program each,
# whose fp32 sums are added after. H200, backward alone, x SDPA's backward, by parts (benchmarks/backward_probe.py
# --set gqa, docs/measurements/2026-11-29-h200-s30-probe-gqa.json): bf16 B1 H16/1 S2238 D32 (35 programs) 1: 0.28,
# 2: 0.52, 8: 0.83, 16: 0.97; B2 H24/1 S3226 D32 (102) 1: 0.55, 2: 0.82, 3: 0.72, 6: 0.88, 12: 0.94; B4 H32/2 S81
# D96 (16) 1: 0.31, 16: 0.75; B2 H24/1 S79x1507 D64 causal (48) 1: 0.28, 12: 0.74, 24: 0.59; B4 H32/4 S2357 D64
# causal (592) 1: 0.63, 2: 0.73; bf16 B8 H32/8 S1024 D128 causal (1024) 1: 0.83, 2: 0.74 — a grid of ~8 programs an
# SM lost, hence the floor: grids of more than 4 an SM keep 1 (both of these rows).
ATTN_BWD_KV_SPLIT_PER_CU = 8


ATTN_BWD_ATOMIC_SHORT_Q = 3  # the dQ kernel's grid under cus / this: dQ by the dK/dV kernel's atomics instead


def attention_backward_dq_atomic(t: Target, dq_programs: int, cus: int) -> bool:
    """Whether a backward whose dQ kernel would run `dq_programs` programs (query blocks x heads x batch) takes dQ from
    the dK/dV kernel's atomic adds (DQ_ATOMIC) at any head dim: a few query blocks over many keys (chunked prefill,
    cross-attention) left the dQ kernel's handful of programs walking every key. H200, backward alone × SDPA's, graph
    replay, the dQ kernel -> atomic dQ (benchmarks/backward_probe.py --set short-q, docs/measurements/
    2026-11-29-h200-s33-probe-short-q.json), dQ grids of 8-24 programs: bf16 B1 H4/1 S122x7841 D80 0.19 -> 0.53,
    fp16 B2 H8 S64x4096 D64 0.51 -> 0.93, bf16 B1 H8/1 S17x3000 D64 0.41 -> 0.65, B2 H12 S33x2048 D64 0.58 -> 0.87,
    B1 H16 S64x512 D128 0.84 -> 1.36; grids of 80 and more tied or lost (fp16 B1 H16/2 S300x5000 D96 0.45 either way;
    bf16 B1 H32/8 S256x8192 D128 0.81 -> 0.73, B8 H8 S128x1024 D64 0.96 -> 0.87, B1 H32 S1000 D128 0.76 -> 0.55).
    NVIDIA only (AMD not timed); never in the interpreter (CI keeps testing the dQ kernel on small shapes; the atomic
    form has its own tests) nor, as every atomic dQ, under torch's deterministic mode (attention_backward)."""
    return t.backend == "cuda" and not t.interpreter and cus > 0 and dq_programs * ATTN_BWD_ATOMIC_SHORT_Q <= cus


def attention_backward_kv_split(t: Target, programs: int, group: int, cus: int) -> int:
    """Parts of a GQA group for the dK/dV kernel (attention_backward.py): 1 (one program a key block sums all of it)
    unless its grid of `programs` makes fewer than ATTN_BWD_KV_SPLIT_PER_CU per SM/CU (cus: 0 unknown). The
    interpreter cuts small grids in two, so CI runs the parts and their sum."""
    if group <= 1:
        return 1
    if t.interpreter:
        return 2 if programs < 8 else 1
    want = ATTN_BWD_KV_SPLIT_PER_CU * cus
    if cus <= 0 or programs >= want:
        return 1
    return max(1, min(group, want // programs))
