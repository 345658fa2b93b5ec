"""The pure-Python cost of one kernel call (argument checks, layout, policy, output allocation), no GPU needed.

Every @triton.jit function of the kernel modules is replaced by a fake whose `kernel[grid](...)` does nothing, so what
is timed is the launcher's own Python up to the launch (Triton's own launch path — argument specialisation, cache
lookup, driver call — is not included; on a GPU `smoke --preset launch` measures everything). Inputs are small CPU
tensors under TRITON_INTERPRET=1 (so the device check accepts them); the policy then takes its interpreter branch,
which costs the same lookups as the GPU branch.

--launch times the whole host path instead, on a real JITFunction of each kernel with a no-op launcher behind a fake
driver: `triton` = our Python + Triton's JITFunction.run (binder, cache key, global check, launch metadata), `launch`
= our Python + kernels.launch's cached path (issue #16 item 4). GEMM and attention still launch through JITFunction.run.

Usage: python benchmarks/launch_overhead.py [--calls N] [--json] [--ab | --launch]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any
from collections.abc import Callable

os.environ["TRITON_INTERPRET"] = "1"

import torch  # noqa: E402


class _FakeKernel:
    """Stands in for a @triton.jit function: kernel[grid](*args, **kwargs) returns at once."""

    def __getitem__(self, grid: Any) -> Callable[..., None]:
        return _noop


def _noop(*args: Any, **kwargs: Any) -> None:
    return None


def fake_launches() -> None:
    from triton.runtime.jit import JITFunction

    from rocm_triton_doctor import kernels

    for spec in kernels.REGISTRY:
        mod = __import__(f"rocm_triton_doctor.kernels.{spec.name}", fromlist=["_"])
        for name, obj in list(vars(mod).items()):
            if isinstance(obj, JITFunction) or type(obj).__name__ == "InterpretedFunction":
                setattr(mod, name, _FakeKernel())


class _FakeDriver:
    """Device 0, stream 0: what JITFunction.run and kernels.launch ask the driver per call."""

    def get_current_device(self) -> int:
        return 0

    def get_current_stream(self, device: int) -> int:
        return 0


class _AnyKey(dict):  # type: ignore[type-arg]
    """A kernel cache that has every key: JITFunction.run finds its compiled kernel without compiling."""

    def __init__(self, kernel: Any) -> None:
        super().__init__()
        self.kernel = kernel

    def get(self, key: Any, default: Any = None) -> Any:
        return self.kernel


def real_launches() -> dict[str, Any]:
    """Every @triton.jit kernel becomes a real JITFunction whose compiled kernel is a no-op launcher (no GPU, no
    compile): JITFunction.run and kernels.launch then run their whole Python. Returns the JITFunctions by name."""
    from triton.backends.nvidia.compiler import CUDABackend
    from triton.compiler.compiler import CompiledKernel
    from triton.runtime.driver import driver as tdriver
    from triton.runtime.jit import JITFunction, create_function_from_signature

    from rocm_triton_doctor import kernels
    from rocm_triton_doctor.kernels import launch

    tdriver.set_active(_FakeDriver())  # type: ignore[arg-type]
    rt = launch._runtime()
    assert rt is not None, "kernels.launch does not support this Triton"
    made: dict[str, Any] = {}
    for spec in kernels.REGISTRY:
        mod = __import__(f"rocm_triton_doctor.kernels.{spec.name}", fromlist=["_"])
        for name, obj in list(vars(mod).items()):
            if type(obj).__name__ not in ("InterpretedFunction", "JITFunction") or not hasattr(obj, "fn"):
                continue
            jf = JITFunction(obj.fn)
            ck = object.__new__(CompiledKernel)
            ck._run, ck.function, ck.packed_metadata, ck.module, ck.name = _noop, 1, (), 1, name
            ck.src = None
            ck.metadata = None
            binder = create_function_from_signature(jf.signature, jf.params, CUDABackend)
            jf.device_caches[0] = (_AnyKey(ck), {}, None, CUDABackend, binder)
            jf.used_global_vals = {}
            setattr(mod, name, jf)
            made[f"{spec.name}.{name}"] = jf
    return made


def via_triton(on: bool, made: dict[str, Any]) -> None:
    """on: kernels.launch hands every kernel to JITFunction.run (its plan is None), as before it existed."""
    from rocm_triton_doctor.kernels import launch

    for jf in made.values():
        if on:
            launch._PLANS[id(jf)] = None
        else:
            launch._PLANS.pop(id(jf), None)


def calls() -> dict[str, Callable[[], Any]]:
    from rocm_triton_doctor.kernels import (add_mul, attention, bias_gelu_dropout_residual, gemm, layernorm, rmsnorm,
                                            softmax, swiglu)

    g = torch.Generator().manual_seed(0)
    bf = torch.bfloat16

    def r(*shape: int, dt: torch.dtype = bf) -> torch.Tensor:
        return torch.randn(shape, generator=g).to(dt)

    x, w, b = r(16, 4096), r(4096), r(4096)
    a16, b16, bias16 = r(64, 256, dt=torch.float16), r(256, 128, dt=torch.float16), r(128, dt=torch.float16)
    e1, e2, e3 = r(1 << 16), r(1 << 16), r(1 << 16)
    h, res, hb = r(1, 16, 4096), r(1, 16, 4096), r(4096)
    sa, sb = r(16, 11008), r(16, 11008)
    q = r(1, 4, 128, 64)
    out_x = torch.empty_like(x)
    xg, wg = x.clone().requires_grad_(), w.clone().requires_grad_()
    return {
        "gemm 64x256x128 fp16 bias_relu": lambda: gemm.gemm(a16, b16, bias16, "bias_relu"),
        "add_mul 64k bf16": lambda: add_mul.add_mul(e1, e2, e3),
        "bias_gelu_dropout_residual 16x4096 p=0.1": lambda: bias_gelu_dropout_residual.bias_gelu_dropout_residual(
            h, hb, res, 0.1, 1),
        "rmsnorm 16x4096 bf16": lambda: rmsnorm.rmsnorm(x, w),
        "rmsnorm 16x4096 bf16 (out=)": lambda: rmsnorm.rmsnorm(x, w, out=out_x),
        "layernorm 16x4096 bf16": lambda: layernorm.layernorm(x, w, b),
        "softmax 16x4096 bf16": lambda: softmax.softmax(x),
        "swiglu 16x11008 bf16": lambda: swiglu.swiglu(sa, sb),
        "attention 1x4x128x64 causal": lambda: attention.attention(q, q, q, True),
        # With grad on and leaves that require it (the training forward): the autograd.Function that autograd_op now
        # takes when eager, against the custom op it took before (custom_op_form).
        "rmsnorm autograd_op 16x4096 (grad)": lambda: _with_grad(rmsnorm.autograd_op, xg, wg, 1e-6),
        "rmsnorm custom op 16x4096 (grad)": lambda: _with_grad(rmsnorm.custom_op_form, xg, wg, 1e-6),
    }


def _with_grad(fn: Callable[..., Any], *args: Any) -> Any:
    with torch.enable_grad():
        return fn(*args)


def _old_extent(t: torch.Tensor) -> tuple[int, int] | None:
    """base._extent before the O(1) contiguous path (for the A/B comparison)."""
    if t.numel() == 0:
        return None
    lo = hi = t.data_ptr()
    for size, st in zip(t.shape, t.stride()):
        if st > 0:
            hi += (size - 1) * st * t.element_size()
        elif st < 0:
            lo += (size - 1) * st * t.element_size()
    return lo, hi + t.element_size()


def uncached(on: bool) -> None:
    """Switch this process between the launch path before (on=True: configs re-derived per call, triton.cdiv, the
    O(ndim) extent) and after the issue #16 item 4 changes, so both are timed in one process, batches interleaved."""
    import triton

    from rocm_triton_doctor.kernels import base, elementwise, policy, policy_rows, rows

    # _row_config is called inside policy_rows (row_config), so it is switched there
    for mod, name in ((policy, "gemm_config"), (policy, "elementwise_config"), (policy, "tile2d_config"),
                      (policy, "strided_config"), (policy, "attention_config"), (policy_rows, "_row_config")):
        fn = getattr(mod, name)
        orig = getattr(fn, "__wrapped__", fn)
        if not hasattr(mod, f"_cached_{name}"):
            setattr(mod, f"_cached_{name}", fn)
        setattr(mod, name, orig if on else getattr(mod, f"_cached_{name}"))
    if not hasattr(base, "_new_extent"):
        base._new_extent = base._extent  # type: ignore[attr-defined]
    base._extent = _old_extent if on else base._new_extent  # type: ignore[attr-defined]
    rows.cdiv = elementwise.cdiv = triton.cdiv if on else base.cdiv  # type: ignore[attr-defined]


def measure(n: int, ab: bool = False, real: bool = False) -> dict[str, Any]:
    made = real_launches() if real else None
    if made is None:
        fake_launches()
    ab = ab or real
    out: dict[str, Any] = {}
    with torch.no_grad():
        for name, fn in calls().items():
            for _ in range(50):
                fn()
            best = {False: float("inf"), True: float("inf")}
            for _ in range(7):  # best of 7 batches, in this thread's CPU time: the machine is shared
                for before in ((True, False) if ab else (False,)):
                    if made is not None:
                        via_triton(before, made)
                    elif ab:
                        uncached(before)
                    for _ in range(5):  # warm: a first call after the switch fills kernels.launch's cache
                        fn()
                    t0 = time.thread_time()
                    for _ in range(n):
                        fn()
                    best[before] = min(best[before], (time.thread_time() - t0) / n * 1e6)
            out[name] = {"before": round(best[True], 2), "after": round(best[False], 2)} if ab else round(best[False], 2)
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--ab", action="store_true", help="time the path before and after the caching, interleaved")
    ap.add_argument("--launch", action="store_true", help="whole host path: JITFunction.run against kernels.launch "
                    "(no-op launcher), interleaved")
    args = ap.parse_args()
    res = measure(args.calls, args.ab, args.launch)
    if args.json:
        print(json.dumps(res, indent=1))
    else:
        for k, v in res.items():
            print(f"{v['before']:8.2f} -> {v['after']:8.2f} µs  {k}" if isinstance(v, dict) else f"{v:8.2f} µs  {k}")
