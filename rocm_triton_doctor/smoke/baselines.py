"""Other baselines for the sweep: Liger-Kernel where it has the op, and host launch overhead (issue #16 items 3-4).

Liger-Kernel (linkedin/Liger-Kernel, Triton kernels for LLM training) is imported lazily and only when installed:
its autograd Functions run forward-only under torch.no_grad(). Ops used: LigerRMSNormFunction (Llama casting),
LigerLayerNormFunction, LigerSoftmaxFunction, LigerSiLUMulFunction, and fused_linear_cross_entropy_forward (which
computes the gradients in its forward, as ours does) (liger_kernel/ops/__init__.py, 0.8.5).
"""

from __future__ import annotations

import importlib.util
import time
from typing import Any
from collections.abc import Callable

NOT_INSTALLED = "not installed"
NO_OP = "no op"

# kernel -> (Liger Function name in liger_kernel.ops, how to call it on a case's inputs)
_LIGER: dict[str, tuple[str, Callable[[Any, dict[str, Any]], Any]]] = {
    "rmsnorm": ("LigerRMSNormFunction", lambda f, x: f.apply(x["x"], x["w"], 1e-6)),
    "layernorm": ("LigerLayerNormFunction", lambda f, x: f.apply(x["x"], x["w"], x["b"], 1e-5)),
    "softmax": ("LigerSoftmaxFunction", lambda f, x: f.apply(x["x"])),
    "swiglu": ("LigerSiLUMulFunction", lambda f, x: f.apply(x["a"], x["b"])),
    "linear_cross_entropy": ("fused_linear_cross_entropy_forward", lambda f, x: _liger_lce(f, x)),
}


def _liger_lce(f: Any, x: dict[str, Any]) -> Any:
    """Liger's fused linear cross-entropy doing our case's work: the loss (sum), ∂h and ∂W, with ∂W accumulated in
    fp32 as ours is (its default accumulates in the weight's dtype). Liger syncs the host once a call (.item()), so
    it cannot be graph-captured; the sweep's event timing includes that."""
    import torch

    return f(x["h"], x["w"], x["y"], reduction="sum", accum_dtype=torch.float32, compute_gradients=True,
             weight_requires_grad=True)


def liger_status() -> str | None:
    """None when liger_kernel can be imported, else NOT_INSTALLED or 'import failed: ...'."""
    if importlib.util.find_spec("liger_kernel") is None:
        return NOT_INSTALLED
    try:
        import liger_kernel.ops  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - a broken install is that column's value, not a crash
        return f"import failed: {type(exc).__name__}"[:60]
    return None


def liger_fn(kernel: str) -> tuple[Callable[[dict[str, Any]], Any] | None, str]:
    """(callable on a case's inputs, '') or (None, why: 'not installed' / 'no op' / 'import failed: ...')."""
    if kernel not in _LIGER:
        return None, NO_OP
    why = liger_status()
    if why:
        return None, why
    import liger_kernel.ops as ops

    name, call = _LIGER[kernel]
    fn = getattr(ops, name, None)
    if fn is None:
        return None, NO_OP
    return (lambda x: call(fn, x)), ""


def host_us_per_call(fn: Callable[[], Any], sync: Callable[[], None], calls: int = 200, warm: int = 20) -> float:
    """Host µs per call, back to back, no graphs: synchronize only before and after the timed loop, so the loop
    measures what the caller's thread spends per call (argument checks, policy, launch), not GPU time (the shapes
    are small, so the GPU keeps up)."""
    for _ in range(warm):
        fn()
    sync()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    sync()
    return (time.perf_counter() - t0) / calls * 1e6


def launch_us(case: Any, inputs: dict[str, Any], sync: Callable[[], None]) -> dict[str, float]:
    """Host µs per call, ours (allocating its output, as a model's call does) and eager's (issue #16 item 4)."""
    out = {"triton": round(host_us_per_call(lambda: case.run(inputs, None), sync), 2)}
    if case.eager is not None:
        out["eager"] = round(host_us_per_call(lambda: case.eager(inputs), sync), 2)
    return out


def launch_cases(target: Any) -> list[Any]:
    """One small case per kernel (a few KiB to a few MiB): the GPU time is a few µs, so host time dominates."""
    import torch

    from rocm_triton_doctor.kernels import (add_mul, attention, bias_gelu_dropout_residual, gemm, layernorm, rmsnorm,
                                            softmax, swiglu)

    bf = torch.bfloat16
    return [gemm.make_case(64, 256, 128, torch.float16, "bias_relu"), gemm.make_case(16, 4096, 4096, bf, "none"),
            add_mul.make_case(1 << 16, bf), bias_gelu_dropout_residual.make_case(1, 16, 4096, bf, 0.1),
            rmsnorm.make_case(16, 4096, bf), layernorm.make_case(16, 4096, bf), softmax.make_case(16, 4096, bf),
            swiglu.make_case(16, 11008, bf), attention.make_case(1, 4, 128, 64, bf, True)]
