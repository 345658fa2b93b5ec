"""Launch policy for GEMM operands whose rows are not 16-byte aligned: when gemm() copies them into an aligned,
padded buffer first (aligned_copy.py) instead of reading them with scalar loads (policy.py re-exports every name
here; benchmarks that switch the rule off set the names on this module)."""

from __future__ import annotations

from rocm_triton_doctor.kernels.policy import DEFAULT_CUS, Target
from rocm_triton_doctor.kernels.policy_waves import SKINNY_N

# An operand whose rows are not 16-byte aligned (a leading stride of 4097 elements, a view one element off) is read
# with scalar loads, which also rules out the asynchronous copies the pipelined K loop is built on: bf16 4097^3 ran at
# 0.38x cuBLAS on an H100 (issue #16), and random shapes with an odd K or N (benchmarks/shape_hunt.py, seed 1) at
# 0.27x (686x7137x406), 0.45x (237x1313x10622, B^T) and 0.58x (1401x558x31287) while the old rule here copied only
# operands whose other free dimension was >= 2048. The cost model: copying operand X (e·|X| bytes read, the same
# written) against what misalignment costs a compute-bound GEMM, about 1.6 extra ideal GEMM times (0.38x):
# 2·e·M·K/BW < 1.6·2·M·N·K/F, i.e. n > e·(F/BW)/1.6 for n the other operand's free dimension (N when copying A, M
# when copying B). F/BW is ~300 FLOP/byte on an H100 (990 TF/s bf16, 3.35 TB/s) and ~250 on an MI300X: n > ~190 for
# 16-bit, less for fp32 (no tensor cores: F/BW ~15-20). So 256. The GEMM must also be big enough (>= 2^30 FLOPs,
# ~1 us at peak) that the copy's launch does not dominate; decode-size M (< 256) never copies B, the weight it
# streams once. Measured (graph replay, × cuBLAS, the policy's tiles with and without the copy): H100 bf16 686x7137x406
# 0.34 -> 0.54, fp16 1257x4623x2198 B^T 0.30 -> 0.83, 5405x8985x1014 0.36 -> 1.34; and copying B for fewer rows lost
# on an H200 at every M from 1 to 128 (16x4097x4096 B^T 0.37x copied against 2.11x not), broke even at 237
# (benchmarks/gemm_align_probe.py [--small-m], docs/measurements/2026-11-27-*-s8-gemm-align-*.json). AMD: the same
# model, not timed.
ALIGN_COPY_MIN_REUSE = 256
ALIGN_COPY_MIN_FLOPS = 2**30
# From 33 rows the weight is copied too, once it is a MiB or more and K and N are 256 or more. That model priced the
# copy at torch's strided copy_ made twice (about a quarter of the copy bandwidth: aligned_copy.py);
# kernels/aligned_copy.py copies at the GPU's copy bandwidth, and the copied operands' K loop runs to their zero padding
# with whole vectors (gemm_kernel's DIV_K). H200, graph replay, × cuBLAS, the policy before -> both copied
# (benchmarks/align_copy_probe.py --quick, docs/measurements/2026-11-27-h200-s13-align-copy-4.json): bf16 B^T
# 36/64/128x2489x2305 0.46/0.55/0.61 -> 1.19/1.29/1.10, 36/64/128x4097x4096 0.52/0.67/0.57 -> 0.97/1.13/1.13; bf16
# row-major 64/128x4096x4097 1.24/0.36 -> 1.62/1.22, 36/64x2696x15562 0.26/0.25 -> 0.57/0.62, 36/64/128x1723x1691
# 0.85/0.94/0.49 -> 0.97/1.13/1.09; fp32 36-128 rows of 4097x4096 B^T, 2333x4824 B^T and 1346x3001 0.20-0.56 ->
# 0.47-0.77 (the GEMV up to 32 rows, policy_gemv.GEMV_FP32_MISALIGNED_ROWS_COPIED). Lost: bf16 36x4096x4097 2.86 ->
# 1.46, 128x2696x15562 1.16 -> 0.77; 16 rows lost everywhere (the decode tiles' split reads the weight once, scalar or
# not: 2.10 -> 1.16 at 16x4097x4096 B^T), fp16 816x860 (1.4 MB) ran the same.
# Over 40 random draws of 33-255 rows (`gemm_ab_probe.py --ab s13 --midm --seed 40`, …-s13-ab-midm40.json) the copy
# won every K-major weight with K and N of 256 or more (bf16 62x590x3215 B^T 1.05 -> 1.56, 65x833x11364 B^T 0.96 ->
# 1.51, 87x1078x706 B^T 0.81 -> 1.20, fp32 239x4578x270 B^T 1.00 -> 1.26, 37x3478x20429 B^T 0.49 -> 0.64,
# 65x13409x18415 0.23 -> 0.39, × eager) and lost where K or N was short (fp16 62x90x7184 2.02 -> 1.61, bf16
# 47x166x5796 B^T 0.77 -> 0.61, fp32 125x3405x184 1.05 -> 0.78, 40x11087x151 B^T 1.30 -> 0.89, fp16 42x12908x48 1.26
# -> 1.08): those keep their tiles. Still lost: bf16 34x2560x5422 bias 1.46 -> 0.81 (a row-major weight). With the
# bound, fresh draws (seed 42, …-s13-ab-midm42.json): median 0.97 -> 1.23x eager, worst 0.15 -> 0.45; one loss, bf16
# 37x2490x7164 B^T 0.90 -> 0.58 (a 36 MB weight copied for a 24 us product).
ALIGN_COPY_MIN_ROWS = 33
ALIGN_COPY_MIN_B_BYTES = 2**20
ALIGN_COPY_MIN_KN = 256


# fp32 against a K-major weight (nn.Linear's) is copied from the first row the GEMV does not take
# (policy_gemv.GEMV_FP32_MISALIGNED_ROWS + 1; up to there the GEMV reads the weight once and wins) once the weight is
# FP32_KMAJOR_COPY_MIN_B_BYTES or more, whatever K and N: the tiles read it with scalar loads, and a short K loop or a
# few columns do not hide them. H200, graph replay, × eager (cuBLAS + the epilogue ops), two sets of 40 draws of
# 33-255 rows with K or N under 256 (`gemm_ab_probe.py --ab fp32skinny --fp32-kshort --seed 240` and `241`,
# docs/measurements/2026-11-28-h200-s24-kshort*.json), 54 rows past 96 rows, the policy -> both copied: from 256 KiB
# 17 won, 4 tied and one lost (186x3121x38 0.78 -> 0.51): 156x219x7165 0.25 -> 1.05, 150x115x6686 0.32 -> 1.15,
# 193x89x22372 0.40 -> 1.39, 110x51x11010 0.34 -> 0.84, 154x2077x214 0.42 -> 1.01, 154x3887x190 0.43 -> 1.32,
# 120x4483x159 0.48 -> 1.03, 122x15461x30 0.58 -> 0.95, 143x69x2004 0.25 -> 0.58, 122x19x5758 0.82 -> 1.24; under it
# 19 lost (242x67x200 1.64 -> 0.73, 246x43x292 1.04 -> 0.62, 166x73x99 1.78 -> 0.57) and 6 gained a little
# (141x141x275 0.37 -> 0.46). At 96 rows or fewer the GEMV won 14 of 15 (45x45x589 1.04 against 0.41 copied). 16-bit
# weights of the same shapes lost copied (`--ab copy --kshort16 --seed 242`: median 1.31 -> 0.94): unchanged.
# AMD: the same rule, not timed.
FP32_KMAJOR_COPY_MIN_ROWS = 97
FP32_KMAJOR_COPY_MIN_B_BYTES = 256 << 10
# ... and within the GEMV's rows (from ALIGN_COPY_MIN_ROWS) where K is short and N wide: the GEMV's chunks of 8 rows
# each walk the whole weight, and a short K gives each column little work. H200, 40 draws of 33-96 rows, K 17-255,
# N 2048-32768 (`gemm_ab_probe.py --ab copy --kshort-wide --seed 244`, …-s24-kshort-wide.json), × eager, the GEMV ->
# both copied: every N of 4096 or more won (median 0.45 -> 1.0; 64x37x19297 0.17 -> 0.60, 74x31x29970 0.21 -> 0.94,
# 62x21x25923 0.32 -> 1.36, 37x17x5471 0.40 -> 0.55); under 4096 the GEMV won or tied 9 of 12 (50x37x2248 0.53 against
# 0.44, 59x129x2307 0.62 against 0.45). Session 23's 33x141x24789 B^T: 0.34 on the GEMV, 0.74 copied.
FP32_KMAJOR_SHORT_K_COPY_MIN_N = 4096


# 16-bit products of SKINNY_N+1 to ALIGN_COPY_MIN_REUSE-1 columns (between the skinny tiles and the reuse the model
# above asks) over ALIGN_COPY_MIN_KN or more of a misaligned K are copied from NARROW_COPY_MIN_ROWS rows, whatever their
# FLOPs: their tiles read A with scalar loads once per column block, and the copy, at the copy bandwidth, is cheaper.
# Found in a GEMM backward (dA = g·Bᵀ, g's rows an odd width): fp16 10317x1932 x 215 columns 153.6 -> 50.7 us, bf16
# 2290x1077 x 182 28.0 -> 12.8 (eager 114.0, 20.6; benchmarks/gemm_backward_split_probe.py, docs/measurements/
# 2026-11-29-h200-s34-split.json). H200, graph replay, × eager (cuBLAS + the epilogue ops), 60 fresh draws of 1024-32768
# rows, 17-255 columns and an odd K of 257-29387, the policy -> both operands copied (`gemm_ab_probe.py --ab copy
# --narrow16 --seed 341` and `342`, …-s34-narrow16-341.json, …-342.json): every one of the 18 draws with 129-255
# columns ran faster copied (bf16 2632x3895x168 bias_gelu B^T 0.62 -> 1.56, 1324x1469x207 bias_gelu 0.62 -> 1.38,
# 2910x3497x183 0.66 -> 1.29, 23952x1025x237 bias_relu B^T 1.04 -> 2.04, fp16 7114x905x141 B^T 1.25 -> 2.25, the
# smallest, bf16 2202x257x218 B^T at 16 us, 1.62 -> 1.72); at 128 columns or fewer (the skinny tiles) the copy won 11
# of 42 by more than 5 %, lost 22 and tied 9 (bf16 15910x1043x121 bias_gelu 2.04 -> 1.43, fp16 7615x23721x35
# bias_gelu 2.30 -> 1.47): those keep their plans. fp32 and AMD: not measured, unchanged.
NARROW_COPY_MIN_ROWS = 1024
# An M-major A (its columns contiguous: Aᵀ, as a GEMM backward's dB = Aᵀ·dY passes it) is not copied on NVIDIA where
# the output is under one wave of 64x128 tiles (MMAJOR_COPY_MIN_WAVE_TILE elements an SM): there the copied, aligned
# plan runs too few programs over its long K, where the misaligned one splits K (policy_waves.gemm_split_latency_bound).
# H200, graph replay, × cuBLAS, the policy -> A left uncopied (B as the policy decides; benchmarks/
# gemm_backward_parts_probe.py --copies [--draws 24 --seed 5], docs/measurements/2026-11-29-h200-s34-dbcopies*.json):
# dB of session 34's GEMM rows bf16 74x610x15449 0.45 -> 0.64, 42x1943x9230 0.84 -> 0.90, 27x5239x5858 0.65 -> 0.70,
# 182x1077x2290 0.67 -> 0.95, 29x27063x8054 0.85 -> 1.02, fp16 215x1932x10317 0.63 -> 0.67, fp32 30x2042x11315 0.91
# -> 0.96; fresh draws bf16 46x3612x2285 0.76 -> 0.81. Larger outputs keep the copy: bf16 3315x475x1478 1.18 copied
# against 0.89 not (fp16 1332x5740x7762 2.15 against 1.97 and fp32 1030x2340x760 0.90 against 0.84 would have gained
# a little). AMD: not measured, unchanged.
MMAJOR_COPY_MIN_WAVE_TILE = 64 * 128


def gemm_align_copy(t: Target, M: int, N: int, K: int, elem_size: int = 2, b_kmajor: bool = False,
                    a_mmajor: bool = False, cus: int = 0) -> tuple[bool, bool]:
    """(copy A, copy B) if misaligned: see ALIGN_COPY_MIN_REUSE, ALIGN_COPY_MIN_ROWS, FP32_KMAJOR_COPY_MIN_ROWS,
    FP32_KMAJOR_SHORT_K_COPY_MIN_N, NARROW_COPY_MIN_ROWS and MMAJOR_COPY_MIN_WAVE_TILE (where B is copied for its
    rows, A is copied with it: at most 255 rows, and both copies make the K loop's last block whole vectors).
    b_kmajor: B's columns (along K) are contiguous. a_mmajor: A's columns (along M) are contiguous; cus: the SMs
    (MMAJOR_COPY_MIN_WAVE_TILE). Never in the interpreter (tests force it)."""
    if t.interpreter:
        return False, False
    copy_a, copy_b = _align_copy(t, M, N, K, elem_size, b_kmajor)
    outputs, sms = M * N, cus or DEFAULT_CUS["cuda"]
    if a_mmajor and t.backend == "cuda" and outputs < sms * MMAJOR_COPY_MIN_WAVE_TILE:
        copy_a = False
    return copy_a, copy_b


def _align_copy(t: Target, M: int, N: int, K: int, elem_size: int, b_kmajor: bool) -> tuple[bool, bool]:
    if (M >= ALIGN_COPY_MIN_ROWS and K * N * elem_size >= ALIGN_COPY_MIN_B_BYTES and K >= ALIGN_COPY_MIN_KN
            and N >= ALIGN_COPY_MIN_KN):
        return True, True
    if elem_size == 4 and b_kmajor and (
            (M >= FP32_KMAJOR_COPY_MIN_ROWS and K * N * elem_size >= FP32_KMAJOR_COPY_MIN_B_BYTES)
            or (M >= ALIGN_COPY_MIN_ROWS and K < ALIGN_COPY_MIN_KN and N >= FP32_KMAJOR_SHORT_K_COPY_MIN_N)):
        return True, True
    if (elem_size == 2 and t.backend == "cuda" and SKINNY_N < N < ALIGN_COPY_MIN_REUSE and M >= NARROW_COPY_MIN_ROWS
            and K >= ALIGN_COPY_MIN_KN):
        return True, True
    if 2 * M * N * K < ALIGN_COPY_MIN_FLOPS:
        return False, False
    return N >= ALIGN_COPY_MIN_REUSE, M >= ALIGN_COPY_MIN_REUSE
