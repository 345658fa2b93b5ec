"""A fast launch path for @triton.jit kernels: `launch(kernel, grid, *args, **kwargs)` does what `kernel[grid](*args,
**kwargs)` does, with less host time per call (issue #16 item 4: 15-60 us of each small call was spent inside
Triton's JITFunction.run on an H100 host, Triton 3.6).

How. JITFunction.run binds the arguments, specialises each one (native_specialize_impl), builds a string cache key,
looks up the compiled kernel, checks the kernel's globals and calls the compiled kernel's launcher (triton/runtime/
jit.py, 3.6 and 3.9: `kernel.run(grid_0, grid_1, grid_2, stream, kernel.function, kernel.packed_metadata,
launch_metadata, launch_enter_hook, launch_exit_hook, *bound_args.values())`). Here the first call with a new key
goes through that normal path, which compiles and returns the CompiledKernel; it is kept under a key built from
what Triton specialises on, and later calls with an equal key call its launcher directly.

The key must capture EVERYTHING Triton's specialisation looks at, or a cached kernel runs with wrong assumptions
(say, 16-byte alignment of a pointer that is not aligned) and computes wrong numbers silently. It holds (read from
native_specialize_impl, triton python/src/specialize.cc, and create_function_from_signature in jit.py):
* the current device (Triton keeps one kernel cache per device) — the stream is read per call, never cached;
* per tensor: dtype, and where Triton specialises the value, whether data_ptr() % 16 == 0 — or, on backends
  without native tensor specialisation (HIP: buffer ops also look at the storage size), the backend's own
  get_tensor_specialization() string;
* per int: == 1 (a constexpr 1 to Triton), the i32 / i64 / u64 range class, and % 16 == 0; do_not_specialize and
  do_not_specialize_on_alignment are honoured as Triton does (this key is never coarser than Triton's);
* bool, float and None by type; every constexpr by (type, value);
* every keyword that is not a kernel parameter (num_warps, num_stages, waves_per_eu, ...), in call order, and the
  knobs JITFunction.run folds into the options (debug, instrumentation_mode, fpsan_homomorphic_casts in 3.9).
Any other argument type (tuples, tensor descriptors, JIT functions, numpy scalars, tensor subclasses) falls back to
the normal path, as do the interpreter (TRITON_INTERPRET: the kernel is not a JITFunction), launch hooks (profilers),
pre-run hooks, the stage-inspection hook, callable grids, and a Triton whose JITFunction.run does not look like the
one this mirrors (checked once, on its source). tests/kernels/test_launch.py checks, for random argument mixes, that
equal keys here always mean equal Triton specialisation.
"""

from __future__ import annotations

import functools
import inspect
import re
from typing import Any

import torch

CACHE_LIMIT = 1024  # compiled kernels kept per @triton.jit function before the table is cleared (a bound on memory)

_CONSTEXPR, _SPEC_ALIGN, _SPEC, _NOSPEC = 0, 1, 2, 3
_I32_MIN, _I32_MAX, _I64_MIN, _I64_MAX, _U64_MAX = -(2**31), 2**31 - 1, -(2**63), 2**63 - 1, 2**64 - 1
_TENSOR_TYPES = (torch.Tensor, torch.nn.Parameter)
_MISSING = object()


class _Unsupported(Exception):
    """An argument this module does not key: the call takes Triton's normal path."""


class _Runtime:
    """What this module takes from Triton, found once (None when the installed Triton does not match)."""

    def __init__(self) -> None:
        from triton import knobs
        from triton.compiler.compiler import CompiledKernel
        from triton.knobs import HookChain
        from triton.runtime.driver import driver
        from triton.runtime.jit import JITFunction

        self.jit_function, self.compiled_kernel, self.hook_chain = JITFunction, CompiledKernel, HookChain
        self.driver, self.runtime_knobs = driver, knobs.runtime
        self.knob_reads = _knob_reads(JITFunction, knobs)


def _knob_reads(jit_function: Any, knobs: Any) -> list[tuple[Any, str]]:
    """The (knobs section, attribute) pairs JITFunction.run folds into the options it keys on; raises _Unsupported
    when its source has a launch or an option this module does not mirror."""
    src = re.sub(r"\s+", " ", inspect.getsource(jit_function.run))
    launch = ("kernel.run(grid_0, grid_1, grid_2, stream, kernel.function, kernel.packed_metadata, launch_metadata, "
              "knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook, *bound_args.values())")
    if launch not in src or "binder(*args, **kwargs)" not in src:
        raise _Unsupported("JITFunction.run does not launch as this module mirrors")
    reads = []
    for name, rhs in re.findall(r'kwargs\["(\w+)"\] = ([^\n]*?)(?= kwargs\[| # | device = |$)', src):
        found = re.findall(r"knobs\.(\w+)\.(\w+)", rhs)
        if name not in ("debug", "instrumentation_mode", "fpsan_homomorphic_casts") or len(found) != 1:
            raise _Unsupported(f"JITFunction.run sets an option this module does not mirror: {name}")
        reads.append((getattr(knobs, found[0][0]), found[0][1]))
    if not reads:
        raise _Unsupported("JITFunction.run sets no knob options: not the Triton this module mirrors")
    return reads


_RT: _Runtime | None = None
_RT_TRIED = False


def _runtime() -> _Runtime | None:
    global _RT, _RT_TRIED
    if not _RT_TRIED:
        _RT_TRIED = True
        try:
            _RT = _Runtime()
        except (_Unsupported, ImportError, AttributeError, OSError, TypeError):
            _RT = None
    return _RT


class _Plan:
    """Per @triton.jit function: its parameters, how each is keyed, and the compiled kernels found so far."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        params = fn.params
        self.names = [p.name for p in params]
        self.index = {n: i for i, n in enumerate(self.names)}
        self.n = len(params)
        self.defaults = [p.default if p.has_default else _MISSING for p in params]
        self.kinds = [_CONSTEXPR if p.is_constexpr else _NOSPEC if p.do_not_specialize
                      else _SPEC if p.do_not_specialize_on_alignment else _SPEC_ALIGN for p in params]
        self.cache: dict[tuple[Any, ...], tuple[Any, Any, Any, Any]] = {}
        self.backends: dict[Any, tuple[Any, bool]] = {}
        if not all(p._param.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params):
            raise _Unsupported("keyword-only or variadic kernel parameters")
        self.binders = {native: _make_binder(self, native) for native in (True, False)}

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[list[Any], tuple[Any, ...]]:
        """(every parameter's value in signature order, defaults applied; the non-parameter keywords as items)."""
        vals = list(args)
        if len(vals) > self.n:
            raise _Unsupported("too many positional arguments")
        vals.extend(self.defaults[len(vals):])
        opts = []
        index = self.index
        for k, v in kwargs.items():
            i = index.get(k)
            if i is None:
                opts.append((k, v))
            elif i < len(args):
                raise _Unsupported(f"{k} given twice")
            else:
                vals[i] = v
        for i in range(len(args), self.n):
            if vals[i] is _MISSING:
                raise _Unsupported(f"{self.names[i]} is missing")
        return vals, tuple(opts)


def arg_key(v: Any, kind: int, native: bool, backend: Any) -> Any:
    """The part of the launch key for one argument (see the module docstring); _Unsupported for anything else."""
    t = type(v)
    if kind == _CONSTEXPR:
        return (t, v)
    if t is int:
        if kind != _NOSPEC and v == 1:
            return "one"
        if _I32_MIN <= v <= _I32_MAX:
            cls = "i32"
        elif _I64_MIN <= v <= _I64_MAX:
            cls = "i64"
        elif 0 <= v <= _U64_MAX:
            cls = "u64"
        else:
            raise _Unsupported("int out of 64-bit range")
        if kind == _NOSPEC:
            return cls
        if cls == "i32" and kind == _SPEC_ALIGN:
            return v & 15 == 0  # the most common key part, a bare bool (no other argument kind keys to a bool)
        return (cls, kind == _SPEC_ALIGN and v & 15 == 0)
    if t is bool:
        return "u1"
    if t is float:
        return "fp32"
    if v is None:
        return "none"
    if t in _TENSOR_TYPES:
        if native:
            return native_tensor_key(v, kind, v.data_ptr())
        if kind == _NOSPEC:
            return (v.dtype,)
        return (v.dtype, backend.get_tensor_specialization(v, align=kind == _SPEC_ALIGN))
    raise _Unsupported(f"argument of type {t.__name__}")


def native_tensor_key(v: Any, kind: int, ptr: int) -> tuple[Any, ...]:
    """arg_key of a tensor whose address is `ptr`, on a backend with native tensor specialisation."""
    return (v.dtype,) if kind == _NOSPEC else (v.dtype, kind == _SPEC_ALIGN and ptr & 15 == 0)


def key_prefix(rt: _Runtime, plan: _Plan, device: Any) -> tuple[Any, ...]:
    """The launch key's parts before the arguments': the device, the knobs JITFunction.run folds into its options,
    and the kernel's debug flag."""
    return (device, tuple([getattr(s, a) for s, a in rt.knob_reads]), plan.fn.debug)


def _make_binder(plan: _Plan, native: bool) -> Any:
    """A function with the kernel's own signature (Python binds the arguments, as Triton's binder does) returning
    (every parameter's value in signature order, the key of options and arguments); `_rtd_be=` is the backend. It
    computes exactly what `bind` + `arg_key` compute (the test checks both on random calls), with the common cases
    inlined: a tensor on a backend with native specialisation, an int that is not 1 and fits in 32 bits, a constexpr."""
    p = "_rtd_"  # the prefix of every name of the generated code that is not a kernel parameter
    names = plan.names
    if any(n.startswith(p) for n in names):
        raise _Unsupported("a parameter name clashes with the generated binder's")
    sig, keys = [], []
    ns: dict[str, Any] = {f"{p}ak": arg_key, f"{p}tt": _TENSOR_TYPES, f"{p}int": int, f"{p}type": type,
                          f"{p}native": native, f"{p}tuple": tuple}
    for i, (name, kind, default) in enumerate(zip(names, plan.kinds, plan.defaults)):
        if default is _MISSING:
            sig.append(name)
        else:
            ns[f"{p}d{i}"] = default
            sig.append(f"{name}={p}d{i}")
        slow = f"{p}ak({name}, {kind}, {p}native, {p}be)"
        if kind == _CONSTEXPR:
            keys.append(f"({p}type({name}), {name})")
        elif kind == _SPEC_ALIGN:
            tensor = f"({name}.dtype, {name}.data_ptr() & 15 == 0)" if native else slow
            keys.append(f"({name} & 15 == 0 if {p}type({name}) is {p}int and {name} != 1 and -2147483648 <= {name} <= "
                        f"2147483647 else {tensor} if {p}type({name}) in {p}tt else {slow})")
        else:
            keys.append(slow)
    src = (f"def {p}bind({', '.join(sig + ['*', f'{p}be', f'**{p}opts'])}):\n"
           f"    return ({', '.join(names)},), ({p}tuple({p}opts.items()), {', '.join(keys)},)\n")
    exec(compile(src, "<kernels.launch binder>", "exec"), ns)
    return ns[f"{p}bind"]


def reference_key(plan: _Plan, args: tuple[Any, ...], kwargs: dict[str, Any], native: bool, backend: Any
                  ) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """What the generated binder returns, spelled out: (values in signature order, (options, key of each argument))."""
    vals, opts = plan.bind(args, kwargs)
    return tuple(vals), (opts, *[arg_key(v, k, native, backend) for v, k in zip(vals, plan.kinds)])


_PLANS: dict[int, _Plan | None] = {}


def _plan_for(kernel: Any) -> _Plan | None:
    rt = _runtime()
    plan = None
    if rt is not None and type(kernel) is rt.jit_function:
        try:
            plan = _Plan(kernel)
        except (AttributeError, _Unsupported):
            plan = None
    _PLANS[id(kernel)] = plan
    _KEEP.append(kernel)  # the id stays this kernel's for the process (kernels are module globals anyway)
    return plan


_KEEP: list[Any] = []


@functools.cache
def _out_of_resources() -> type[BaseException]:
    try:
        from triton.runtime.errors import OutOfResources
    except ImportError:  # a Triton without it: nothing to catch
        return _Unsupported
    return OutOfResources  # type: ignore[no-any-return]


def launch_fitting(kernel: Any, grid: Any, *args: Any, **kwargs: Any) -> Any:
    """kernel[grid](*args, **kwargs); when the compiled kernel does not fit this GPU, again with one pipeline stage
    fewer (shared memory) or half the warps (threads), down to 1, then a clear ValueError. Triton raises
    OutOfResources while loading the binary, before anything runs, and neither setting changes what is computed.
    Why: the policy's tiles were chosen on Hopper (227 KiB of shared memory a block); an A100 has 163, an RTX 30/40
    99, and fp32 attention at D = 128 needs 256 KiB in Hopper's 3-stage tiles (compile-only sm_90, Triton 3.9):
    those had failed with Triton's own error instead of running."""
    oor = _out_of_resources()
    while True:
        try:
            return kernel[grid](*args, **kwargs)
        except oor as exc:
            what = getattr(exc, "name", "")
            key = "num_stages" if what == "shared memory" else "num_warps" if what == "threads" else None
            cur = kwargs.get(key, 3 if key == "num_stages" else 4) if key else None
            if key is None or not isinstance(cur, int) or cur <= 1:
                fn = getattr(getattr(kernel, "fn", kernel), "__name__", "kernel")
                raise ValueError(f"{fn}: this GPU cannot run the launch config for this shape and dtype ({exc}); "
                                 "pass smaller tiles with config= or use another dtype") from None
            kwargs = {**kwargs, key: cur - 1 if key == "num_stages" else cur // 2}


def hooked(rt: _Runtime, plan: _Plan) -> bool:
    """Whether a launch hook, the stage-inspection hook or a pre-run hook is set: Triton's path must run them."""
    rk = rt.runtime_knobs
    enter, leave = rk.launch_enter_hook, rk.launch_exit_hook
    chain = rt.hook_chain
    return bool((enter is not None and (type(enter) is not chain or enter.calls))
                or (leave is not None and (type(leave) is not chain or leave.calls))
                or getattr(rk, "add_stages_inspection_hook", None) is not None or plan.fn.pre_run_hooks)


def check_globals(kernel: Any) -> None:
    """As JITFunction.run: a global the kernel read at compile time must not have changed since."""
    used = kernel.used_global_vals
    if used:
        missing = object()
        for (name, _), (val, globals_dict) in used.items():
            if (new := globals_dict.get(name, missing)) != val:
                raise RuntimeError(f"Global variable {name} has changed since we compiled this kernel, from {val} to "
                                   f"{new}")


def plan_of(kernel: Any) -> _Plan | None:
    """kernel's _Plan (made at its first launch), or None where the fast path does not apply to it."""
    plan = _PLANS.get(id(kernel), _MISSING)
    return _plan_for(kernel) if plan is _MISSING else plan  # type: ignore[return-value]


def launch(kernel: Any, grid: tuple[int, ...], *args: Any, **kwargs: Any) -> None:
    """kernel[grid](*args, **kwargs), through a cached compiled kernel when one matches (see the module docstring)."""
    plan = plan_of(kernel)
    if plan is None or type(grid) is not tuple:
        launch_fitting(kernel, grid, *args, **kwargs)
        return
    assert isinstance(plan, _Plan)
    rt = _RT
    assert rt is not None
    if hooked(rt, plan):
        launch_fitting(kernel, grid, *args, **kwargs)
        return
    drv = rt.driver.active
    device = drv.get_current_device()
    be = plan.backends.get(device)
    if be is None:
        backend = kernel.device_caches[device][3]
        be = plan.backends[device] = (backend, bool(getattr(backend, "supports_native_tensor_specialization", False)))
    try:
        vals, k = plan.binders[be[1]](*args, _rtd_be=be[0], **kwargs)
        key = (*key_prefix(rt, plan, device), k)
        hit = plan.cache.get(key)
    except Exception:  # noqa: BLE001 - _Unsupported, an unhashable constexpr or option, a bad call: Triton's path decides
        launch_fitting(kernel, grid, *args, **kwargs)
        return
    if hit is None:
        ck = launch_fitting(kernel, grid, *args, **kwargs)
        if type(ck) is rt.compiled_kernel and getattr(ck, "_run", None) is not None and ck.function is not None:
            if len(plan.cache) >= CACHE_LIMIT:
                plan.cache.clear()
            plan.cache[key] = (ck.run, ck.function, ck.packed_metadata, ck)
        return
    check_globals(kernel)
    run, function, packed, _ck = hit
    n = len(grid)
    run(grid[0], grid[1] if n > 1 else 1, grid[2] if n > 2 else 1, drv.get_current_stream(device), function, packed,
        None, None, None, *vals)


def cache_size(kernel: Any) -> int:
    """How many compiled kernels the fast path holds for `kernel` (tests, diagnostics)."""
    plan = _PLANS.get(id(kernel))
    return len(plan.cache) if isinstance(plan, _Plan) else 0
