"""kernels/launch.py: the fast launch path's key never lumps together two calls Triton would specialise differently
(the bug it must not have: a cached kernel run on arguments it was not compiled for), the hit path launches exactly
as JITFunction.run would, and everything it does not know takes Triton's normal path (the interpreter included).

No GPU: Triton's own binder (create_function_from_signature + native_specialize_impl, what JITFunction.run calls) is
run on CPU tensors with the CUDA and HIP backends' specialisation rules, and the launcher is a recording fake."""

from __future__ import annotations

import random
from typing import Any

import pytest
import torch
import triton
from triton.runtime import jit as tjit

from rocm_triton_doctor.kernels import launch
from tests.kernels.helpers import FakeBackend, FakeDriver

INTS = [0, 1, 2, 3, 15, 16, 17, 32, 48, 4096, 4097, -1, -16, -17, 2**31 - 16, 2**31 - 1, 2**31, 2**31 + 16, -(2**31), -(2**31) - 1,
        2**32, 2**63 - 16, 2**63 - 1, 2**63, 2**64 - 16, 2**64 - 1, -(2**63)]
DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.int32, torch.int64, torch.uint8]
CONSTEXPRS: list[Any] = [1, 2, 16, True, False, 1.0, 0.5, None, 0]


def _functions() -> list[tjit.JITFunction]:
    """JITFunctions built directly (the @triton.jit decorator gives an InterpretedFunction under TRITON_INTERPRET), over
    our kernels' real signatures and a synthetic one with every parameter flavour."""
    import triton.language as tl

    def mixed(a_ptr, b_ptr, n, m, eps, flag, BLOCK: tl.constexpr, c_ptr=None, k=4, MODE: tl.constexpr = 0):
        pass

    fns = [tjit.JITFunction(mixed), tjit.JITFunction(mixed, do_not_specialize=["n", 3]),
           tjit.JITFunction(mixed, do_not_specialize_on_alignment=["a_ptr", "m"])]
    from rocm_triton_doctor.kernels import add_mul, layernorm, rmsnorm, softmax, swiglu

    for k in (rmsnorm.rmsnorm_kernel, layernorm.layernorm_kernel, softmax.softmax_kernel, add_mul.add_mul_kernel,
              swiglu.swiglu_kernel):
        fns.append(tjit.JITFunction(getattr(k, "fn", k)))
    return fns


def _value(rng: random.Random, constexpr: bool) -> Any:
    if constexpr:
        return rng.choice(CONSTEXPRS)
    kind = rng.random()
    if kind < 0.45:
        dt = rng.choice(DTYPES)
        base = torch.zeros(64, dtype=dt)
        t = base[rng.choice([0, 0, 1, 2, 4, 8, 16]):]  # offsets: data_ptr % 16 varies with the dtype's size
        return torch.nn.Parameter(t, requires_grad=False) if rng.random() < 0.1 and dt.is_floating_point else t
    if kind < 0.8:
        return rng.choice(INTS)
    return rng.choice([True, False, 0.0, 1.0, -2.5, None])


def _triton_key(binder: Any, args: list[Any], opts: dict[str, Any]) -> str:
    """The string JITFunction.run keys its compiled kernels on (compute_cache_key), for these arguments."""
    _, spec, options = binder(*args, **opts)
    return str(tjit._replace_jit_callables(spec) if hasattr(tjit, "_replace_jit_callables") else spec) + str(options)


def _backends() -> list[Any]:
    from triton.backends.amd.compiler import HIPBackend
    from triton.backends.nvidia.compiler import CUDABackend

    return [CUDABackend, HIPBackend]


def test_triton_in_ci_is_the_one_the_fast_path_mirrors() -> None:
    """If Triton changes how JITFunction.run launches, the fast path turns itself off (safe, slow): make CI say so."""
    rt = launch._runtime()
    assert rt is not None
    assert {a for _, a in rt.knob_reads} >= {"debug", "instrumentation_mode"}


@pytest.mark.parametrize("backend", _backends(), ids=lambda b: b.__name__)
def test_equal_fast_keys_mean_equal_triton_specialisation(backend: Any) -> None:
    """For thousands of random argument mixes (ints at every range and alignment edge, tensors of several dtypes at
    offsets that make data_ptr % 16 vary, bools, floats, None, constexprs of several types), two calls with one fast
    key always get one Triton specialisation string. The test is not vacuous: many calls share keys, and calls that
    differ in Triton's eyes exist in every group of parameters."""
    rng = random.Random(1234)
    native = bool(backend.supports_native_tensor_specialization)
    shared = 0
    for fn in _functions():
        plan = launch._Plan(fn)
        binder = tjit.create_function_from_signature(fn.signature, fn.params, backend)
        seen: dict[tuple[Any, ...], str] = {}
        triton_keys = set()
        bases = [[_value(rng, p.is_constexpr) for p in fn.params] for _ in range(40)]
        for i in range(1600):  # variants of a few base calls, so that many calls share a key
            args = [a if rng.random() < 0.7 else _value(rng, p.is_constexpr) for p, a in zip(fn.params, bases[i % 40])]
            opts = {"num_warps": rng.choice([4, 8])}
            if rng.random() < 0.5:  # sometimes by keyword, defaults left out
                pos = rng.randrange(len(args) + 1)
                kw = {p.name: a for p, a in zip(fn.params[pos:], args[pos:]) if not (p.has_default and rng.random() < .5)}
                call_args, call_kw = args[:pos], {**kw, **opts}
            else:
                call_args, call_kw = args, opts
            fast = plan.binders[native]
            try:
                tk = _triton_key(binder, call_args, call_kw)
            except Exception:  # noqa: BLE001 - Triton refuses these (ints past 64 bits): not keyed either
                with pytest.raises(launch._Unsupported):
                    launch.reference_key(plan, tuple(call_args), call_kw, native, backend)
                with pytest.raises(launch._Unsupported):
                    fast(*call_args, _rtd_be=backend, **call_kw)
                continue
            ref = launch.reference_key(plan, tuple(call_args), call_kw, native, backend)
            vals, fk = fast(*call_args, _rtd_be=backend, **call_kw)
            assert (vals, fk) == ref  # the generated binder computes the spelled-out key
            assert list(vals) == list(binder(*call_args, **call_kw)[0].values())  # Triton's bound arguments, in order
            triton_keys.add(tk)
            if fk in seen:
                shared += 1
                assert seen[fk] == tk, f"{fn.fn.__name__}: one fast key, two Triton keys:\n{seen[fk]}\n{tk}"
            seen[fk] = tk
        assert len(triton_keys) > 20
    assert shared > 300


def test_int_and_pointer_keys_follow_triton_rules() -> None:
    """The cases spelled out: 1 is a constant, 16-multiples are aligned, the range class changes at 2^31 and 2^63;
    a pointer 2 bytes off 16 is unaligned."""
    k = launch.arg_key
    A = launch._SPEC_ALIGN
    assert k(1, A, True, None) == "one" and k(1, launch._NOSPEC, True, None) == "i32"
    assert k(16, A, True, None) is True and k(17, A, True, None) is False  # i32: a bare bool, the common case
    assert k(16, launch._SPEC, True, None) == ("i32", False)
    assert k(2**31, A, True, None) == ("i64", True) and k(-(2**31), A, True, None) is True
    assert k(2**63, A, True, None) == ("u64", True) and k(-1, A, True, None) is False
    x = torch.zeros(16, dtype=torch.float16)
    assert k(x, A, True, None) == (torch.float16, x.data_ptr() % 16 == 0)
    assert k(x[1:], A, True, None) == (torch.float16, False)
    with pytest.raises(launch._Unsupported):
        k((1, 2), A, True, None)
    with pytest.raises(launch._Unsupported):
        k(2**64, A, True, None)


def _fake_compiled(rt: Any, record: list[Any]) -> Any:
    ck = object.__new__(rt.compiled_kernel)
    ck._run = lambda *a: record.append(("fast", a))
    ck.function, ck.packed_metadata, ck.module = "FUNC", "META", None
    return ck


def test_hit_path_launches_as_jitfunction_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """First call: Triton's path (here a fake JITFunction.run that returns a compiled kernel). Second call with an
    equal key: the launcher, called with (grid padded to 3, current stream, function, metadata, no launch metadata or
    hooks, every parameter in signature order with defaults). A pointer that loses its alignment, or another
    num_warps, goes back to Triton's path."""
    import triton.language as tl

    rt = launch._runtime()
    assert rt is not None
    monkeypatch.setattr(rt, "driver", FakeDriver())

    def k(a_ptr, n, BLOCK: tl.constexpr, c_ptr=None, MODE: tl.constexpr = 3):
        pass

    fn = tjit.JITFunction(k)
    fn.device_caches[0] = ({}, {}, None, FakeBackend(), None)
    record: list[Any] = []

    def slow_run(*args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
        record.append(("slow", args, grid, kwargs))
        return _fake_compiled(rt, record)

    monkeypatch.setattr(fn, "run", slow_run)
    x = torch.zeros(64, dtype=torch.float32)
    launch.launch(fn, (5,), x, 100, BLOCK=64, num_warps=4)
    assert record[-1][0] == "slow" and launch.cache_size(fn) == 1
    launch.launch(fn, (5,), x, 200, num_warps=4, BLOCK=64)  # another unaligned i32; keyword order of params is free
    assert record[-1][0] == "fast" and launch.cache_size(fn) == 1
    launch.launch(fn, (7, 2), x, 300, BLOCK=64, num_warps=4)
    assert record[-1] == ("fast", (7, 2, 1, 77, "FUNC", "META", None, None, None, x, 300, 64, None, 3))
    launch.launch(fn, (1,), x[1:], 300, BLOCK=64, num_warps=4)
    assert record[-1][0] == "slow"
    launch.launch(fn, (1,), x, 300, BLOCK=64, num_warps=8)
    assert record[-1][0] == "slow"
    launch.launch(fn, (1,), x, 1, BLOCK=64, num_warps=4)  # n == 1 is a constant to Triton
    assert record[-1][0] == "slow"
    n = len(record)
    launch.launch(fn, lambda meta: (1,), x, 300, BLOCK=64, num_warps=4)  # callable grid: Triton's path
    assert record[n][0] == "slow"


def test_hooks_and_unknown_arguments_take_tritons_path(monkeypatch: pytest.MonkeyPatch) -> None:
    import triton.language as tl

    rt = launch._runtime()
    assert rt is not None
    monkeypatch.setattr(rt, "driver", FakeDriver())

    def k(a_ptr, n, BLOCK: tl.constexpr):
        pass

    fn = tjit.JITFunction(k)
    fn.device_caches[0] = ({}, {}, None, FakeBackend(), None)
    record: list[Any] = []
    monkeypatch.setattr(fn, "run", lambda *a, grid, warmup, **kw: (record.append("slow"), _fake_compiled(rt, record))[1])
    x = torch.zeros(8)
    launch.launch(fn, (1,), x, 4, BLOCK=8)
    launch.launch(fn, (1,), x, 4, BLOCK=8)
    assert record[-1][0] == "fast"
    hook = rt.runtime_knobs.launch_enter_hook
    seen: list[Any] = []
    hook.add(seen.append)
    try:
        launch.launch(fn, (1,), x, 4, BLOCK=8)
        assert record[-1] == "slow"
    finally:
        hook.remove(seen.append)
    launch.launch(fn, (1,), x, (4, 4), BLOCK=8)  # a tuple argument: not keyed here
    assert record[-1] == "slow"
    launch.launch(fn, (1,), x, 4, BLOCK=8)
    assert record[-1][0] == "fast"


def test_interpreter_kernels_run_through_tritons_path() -> None:
    """Under TRITON_INTERPRET the decorator gives an InterpretedFunction: launch() hands it to kernel[grid]."""
    from rocm_triton_doctor.kernels import add_mul

    assert not isinstance(add_mul.add_mul_kernel, tjit.JITFunction)
    g = torch.Generator().manual_seed(0)
    x, y, z = (torch.randn(1000, generator=g) for _ in range(3))
    out = torch.empty_like(x)
    launch.launch(add_mul.add_mul_kernel, (triton.cdiv(1000, 256),), x, y, z, out, 1000, BLOCK=256)
    torch.testing.assert_close(out, (x + y) * z)
    assert launch.cache_size(add_mul.add_mul_kernel) == 0


class _TooBig:
    """Stands in for a @triton.jit kernel whose compiled form needs more than the GPU has below `fits` stages/warps."""

    def __init__(self, what: str, fits: int) -> None:
        self.what, self.fits, self.calls = what, fits, []  # type: list[dict[str, Any]]

    def __getitem__(self, grid: Any) -> Any:
        def run(*args: Any, **kw: Any) -> str:
            from triton.runtime.errors import OutOfResources

            self.calls.append(kw)
            key = "num_stages" if self.what == "shared memory" else "num_warps"
            if kw.get(key, 3) > self.fits:
                raise OutOfResources(262144, 232448, self.what)
            return "ran"
        return run


@pytest.mark.parametrize("what,fits,start,used", [("shared memory", 2, 4, 2), ("shared memory", 1, 3, 1),
                                                   ("threads", 4, 16, 4)])
def test_a_config_too_big_for_the_gpu_retries_smaller(what: str, fits: int, start: int, used: int) -> None:
    # fp32 attention at D=128 needs 256 KiB of shared memory in Hopper's 3-stage tiles; an A100 or RTX card has less.
    k = _TooBig(what, fits)
    key = "num_stages" if what == "shared memory" else "num_warps"
    assert launch.launch_fitting(k, (1,), 1, 2, **{key: start, "BLOCK": 64}) == "ran"
    assert k.calls[-1][key] == used and k.calls[-1]["BLOCK"] == 64  # tiles (and so the grid) never change
    launch.launch(k, (1,), **{key: start})  # the fast path's fallback for non-JIT objects retries the same way


def test_a_config_that_never_fits_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="cannot run the launch config.*shared memory"):
        launch.launch_fitting(_TooBig("shared memory", 0), (1,), num_stages=2)
