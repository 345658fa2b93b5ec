"""Every tl.dot that can see fp32 tiles names its input_precision.

Left unset, tl.dot takes TF32 for fp32 operands on NVIDIA (triton/language/core.py resolves input_precision=None to
"tf32" wherever the target allows it), and Triton's interpreter computes every dot in numpy, so no CPU test can see
the difference: fp32 attention ran 11-15x its tolerance off fp64 on H100/H200s until session 9. This test reads the
kernels' source instead. The TMA kernels are left out: their launchers take fp16/bf16 only (attention() and gemm()
refuse fp32 there), and 16-bit products are exact in fp32 whatever the precision."""

from __future__ import annotations

import ast
from pathlib import Path

import rocm_triton_doctor.kernels as kernels_pkg

KERNELS = Path(kernels_pkg.__file__).parent
SIXTEEN_BIT_ONLY = {("gemm_kernels.py", "gemm_tma_kernel"), ("attention_tma.py", "*")}


def _dots_without_precision() -> list[str]:
    missing = []
    for path in sorted(KERNELS.glob("*.py")):
        tree = ast.parse(path.read_text())
        for fn in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
            if (path.name, fn.name) in SIXTEEN_BIT_ONLY or (path.name, "*") in SIXTEEN_BIT_ONLY:
                continue
            for call in [n for n in ast.walk(fn) if isinstance(n, ast.Call)]:
                f = call.func
                is_dot = isinstance(f, ast.Attribute) and f.attr == "dot" and isinstance(f.value, ast.Name) and f.value.id == "tl"
                if is_dot and not any(k.arg == "input_precision" for k in call.keywords):
                    missing.append(f"{path.name}:{call.lineno} in {fn.name}")
    return missing


def test_every_dot_that_can_see_fp32_names_its_precision() -> None:
    assert _dots_without_precision() == []


def test_the_scan_finds_the_dots() -> None:
    # a scan that found nothing would pass vacuously: the GEMM and attention dots are there
    n = 0
    for path in (KERNELS / "gemm_kernels.py", KERNELS / "attention.py", KERNELS / "attention_backward.py"):
        n += sum(isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "dot"
                 for c in ast.walk(ast.parse(path.read_text())))
    assert n >= 10
