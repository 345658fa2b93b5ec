"""Launch policy for the fused linear + cross-entropy (linear_cross_entropy.py): how many rows a chunk takes, the
cross-entropy kernel's block, and whether a chunk's ∂W is added into the fp32 accumulator inside the GEMM (cuBLAS's
beta = 1) or through a separate product and sum. Split from linear_cross_entropy.py to keep one topic per file
(it re-exports chunk_rows, ce_config and the chunk constants)."""

from __future__ import annotations

import functools
from typing import Any

import torch

from rocm_triton_doctor.kernels.policy import Target

ONE_CHUNK_BYTES = 32 << 20  # logits up to 32 MiB: one chunk (tiny-llama's 1024 x 1000 bf16 logits are 2 MiB)
MIN_CHUNK_ROWS = 1024  # floor: at most ~2/1024 bytes of accumulator traffic per GEMM FLOP (chunk_rows)
DH_FILL_OUTPUTS = 1 << 22  # a chunk's ∂h GEMM (C x H outputs) fills the GPU from about 4M outputs (chunk_rows) ...
FILL_MAX_LOGIT_BYTES = 1 << 30  # ... as long as the chunk's logits stay within 1 GiB
# Add each chunk's ∂W into the fp32 accumulator inside the GEMM (addmm with beta = 1; for 16-bit inputs through
# torch's fp32-output GEMM, `out_dtype`, pytorch/pytorch#150812, torch 2.8, CUDA only) instead of making the chunk's
# product in the input dtype and adding it (a V x H temporary and three more passes over it, and a 16-bit rounding
# of every chunk's product). Benchmarks switch it off to A/B it.
FUSED_ACCUMULATE = True


def chunk_rows(N: int, V: int, H: int, elem_size: int) -> int:
    """Rows per chunk, C. Two costs pull against each other:
    * memory: a chunk holds C x V logits (C·V·e bytes) where torch holds all N x V of them (and an fp32 copy for the
      softmax, and their gradient);
    * time: every chunk adds one pass over the V x H fp32 ∂W accumulator (12 bytes per element with the product
      made apart, 8 with FUSED_ACCUMULATE), i.e. up to 12·V·H bytes per 6·C·V·H GEMM FLOPs = 2/C bytes per FLOP. An
      H100 does ~700 TFLOP/s (bf16) against ~3 TB/s, 1/230 byte per FLOP: C = 512 would add ~90 % to the GEMM time,
      C = 4096 ~11 %; and a chunk's ∂h GEMM makes only C x H outputs, too few to fill the GPU when C·H is small.
    So C = 4·H/e rows: the chunk's logits then take no more bytes than the fp32 ∂W accumulator the op holds anyway
    (4·V·H). At least MIN_CHUNK_ROWS (a small H must not make the op memory-bound), and at least DH_FILL_OUTPUTS / H
    rows while the chunk's logits stay under FILL_MAX_LOGIT_BYTES; a multiple of 128 (whole GEMM tiles). Logits up
    to ONE_CHUNK_BYTES are one chunk (tiny-llama: 2 MiB; there the step is launch-bound and a chunk costs four
    launches). Medium preset (N 8192, H 2048, V 32000, bf16): 4096 rows, 2 chunks of 262 MB of logits instead of
    524 MB (plus torch's 1 GB fp32 copy).
    The fill bound, H200, ms per step (event-timed; `benchmarks/lce_probe.py`, docs/measurements/2026-11-28-h200-
    s24-lce.json), 4·H/e rows -> larger chunks -> one chunk, eager in brackets: fp32 N3787 H1024 V12981 (1024-row
    chunks) 7.16 -> 6.79 (2048) -> 6.43 (6.71); fp32 N2500 H768 V50257 (1024) 12.54 -> 12.13 (12.67); bf16 N3000
    H1024 V50257 (2048) 8.39 -> 8.23 (8.46); fp32 N8192 H2048 V32000 (2048) 64.5 -> 63.4 (4096) -> 62.6 (64.0).
    A last chunk under 1/8 of C joins the one before it (chunk_bounds; bf16 N4187 H2048 V38086 ran 0.96x eager in
    4096 + 91 rows, docs/measurements/2026-11-28-h200-s24-lce-draws.json). Equal chunks were tried
    and lost where they fell under the fill bound (fp32 N2684 H2048 V8022: 2048 + 636 rows 5.58 ms, 1408 + 1276
    5.86, eager 5.81; …-s24-lce-draws25.json)."""
    if N * V * elem_size <= ONE_CHUNK_BYTES:
        return max(N, 1)
    c = max(MIN_CHUNK_ROWS, (4 * H // elem_size) // 128 * 128)
    fill = -(-DH_FILL_OUTPUTS // max(H, 1) // 128) * 128  # rounded up to whole tiles ...
    c = max(c, min(fill, FILL_MAX_LOGIT_BYTES // (V * elem_size) // 128 * 128))  # ... the cap rounded down
    return max(1, min(N, c))


def chunk_bounds(N: int, C: int) -> list[tuple[int, int]]:
    """(first row, end row) of each chunk of C rows; a last chunk under C/8 rows joins the one before it (its three
    GEMMs and its pass over the ∂W accumulator cost more than the rows are worth: chunk_rows)."""
    starts = list(range(0, N, max(C, 1)))
    if len(starts) > 1 and N - starts[-1] < C // 8:
        starts.pop()
    return [(r0, starts[i + 1] if i + 1 < len(starts) else N) for i, r0 in enumerate(starts)]


def ce_config(target: Target, V: int) -> dict[str, Any]:
    block = 1 << max(0, (V - 1).bit_length())
    if target.interpreter:
        return {"BLOCK_V": min(block, 1 << 16), "num_warps": 4}  # few, large blocks: the interpreter is per-op slow
    # 4096-wide blocks with 8 warps (16 values per lane on wave32, 8 on wave64): 0 spills for gfx90a, gfx942, gfx950,
    # gfx1100, gfx1201, sm_80 and sm_90 (Triton 3.9, compile-only; 55-80 registers). Not yet timed on a GPU.
    return {"BLOCK_V": min(block, 4096), "num_warps": min(8, 1024 // max(target.warp_size, 1)), "num_stages": 1}


@functools.cache
def _out_dtype_gemm(index: int | None) -> bool:
    """Whether torch's 16-bit GEMM with an fp32 output (torch.mm/addmm `out_dtype`) runs on this CUDA device: torch
    2.8 or newer, an NVIDIA build (not ROCm: not measured there), compute capability 8.0 or newer (cuBLASLt's
    16-bit-in, fp32-out kernels; Liger-Kernel gates it the same way)."""
    major, minor = (int(v) for v in torch.__version__.split("+")[0].split(".")[:2])
    if (major, minor) < (2, 8) or torch.version.hip is not None:
        return False
    return torch.cuda.get_device_capability(index)[0] >= 8


def fused_accumulate(h: torch.Tensor) -> bool:
    """Whether the chunks' ∂W are added inside the GEMM (see FUSED_ACCUMULATE): always for fp32 inputs (a plain
    addmm), for 16-bit ones where _out_dtype_gemm says the device has the fp32-output GEMM."""
    if not FUSED_ACCUMULATE:
        return False
    return h.dtype == torch.float32 or (h.device.type == "cuda" and _out_dtype_gemm(h.device.index))


__all__ = ["FUSED_ACCUMULATE", "MIN_CHUNK_ROWS", "ONE_CHUNK_BYTES", "ce_config", "chunk_bounds", "chunk_rows",
           "fused_accumulate"]
