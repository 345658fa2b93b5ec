"""Session 31: the Python host time of a planned row backward (LayerNorm, RMSNorm, softmax), launches excluded —
what a plan's own code costs before and after a change, on any machine (no GPU: CPU tensors with call_plans.GPU_ONLY
off, the launch Sites stubbed out). Best of 3 loops of 20,000 calls, µs a call.

    TRITON_INTERPRET=1 PYTHONPATH=. python benchmarks/backward_python_cost.py
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import torch

from rocm_triton_doctor.kernels import call_plans, launch_site, layernorm, rmsnorm, softmax


def per_call_us(fn: Callable[[], Any], n: int = 20000) -> float:
    best = float("inf")
    for _ in range(3):
        fn()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t0) / n * 1e6)
    return best


def main() -> int:
    call_plans.GPU_ONLY = False
    x, w, b, dy = torch.randn(8, 3466), torch.randn(3466), torch.randn(3466), torch.randn(8, 3466)
    _, mean, rstd = layernorm._forward(x, w, b, 1e-5, stats=True)
    r = torch.rand(8) + 0.5
    calls = {"layernorm": lambda: layernorm.layernorm_backward(dy, x, w, b, mean, rstd),
             "rmsnorm": lambda: rmsnorm.rmsnorm_backward(dy, x, w, r),
             "softmax": lambda: softmax.softmax_backward(dy, x)}
    for f in calls.values():
        f()  # the checked call: plans and launches through the interpreter
    launch_site.Site.__call__ = lambda self, *a: None  # type: ignore[method-assign]  # the plan's own Python only
    print("  ".join(f"{k} {per_call_us(f):.1f} us" for k, f in calls.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
