"""The ONE tolerance table, keyed by dtype (and, for fp32 matrix products, by the precision used).

Values follow torch.testing's defaults widened for long reductions, as kernels.md §7.1 summarises (Triton tutorials:
fp16 GEMM atol 1e-2; Liger/aiter norms: fp32 1e-4..1e-5, bf16 2e-2). Comparisons use |out - ref| <= atol + rtol*|ref|
elementwise, against an fp32/fp64 reference, and NaN never passes.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float


TOLERANCES: dict[str, Tolerance] = {
    "float32": Tolerance(atol=1e-4, rtol=1e-4),
    "float16": Tolerance(atol=1e-2, rtol=1e-2),
    "bfloat16": Tolerance(atol=2e-2, rtol=2e-2),
    # fp32 inputs to tl.dot on NVIDIA default to TF32 (10-bit mantissa); the interpreter and AMD use IEEE.
    "float32-tf32": Tolerance(atol=2e-2, rtol=2e-2),
}


def tolerance(dtype_name: str, tf32: bool = False) -> Tolerance:
    key = f"{dtype_name}-tf32" if tf32 and dtype_name == "float32" else dtype_name
    return TOLERANCES[key]
