"""A launch site: one kernel launch whose arguments are all fixed but a few (its tensors, a dropout seed), for the
callers that already keep a launch plan per call signature (gemm's parts, attention's pointer and split-key kernels).

Why. kernels.launch.launch keys every argument at every call (its generated binder), then hands the tensors to
Triton's C launcher, which calls data_ptr() and cuPointerGetAttribute for each. On an H200 host (torch 2.11, Triton
3.6; benchmarks/host_cost_probe.py, docs/measurements/2026-11-28-h200-s21-host.json) a cached GEMM launch cost 24.8-
25.5 us of host time: the binder 9.3 (40 arguments), the launcher 8.2 with tensors against 6.5-6.8 with their
addresses as ints. A plan's launch changes only in its tensors and per-call scalars, so a Site keys only those.

How. `Site(kernel, grid, args, kwargs)` with DYN in place of each argument that changes between calls; the call
passes those values in order (positional ones first, then keywords in the dict's order). The first call with a given
key of the changing arguments goes through launch() (which compiles or finds the kernel Triton would run), and the
Site keeps that compiled kernel under (device, Triton's option knobs, the kernel's debug flag, the changing
arguments' keys). The fixed arguments' part of the key never changes, so the full key — the one launch() computes —
is a function of that one: equal Site keys mean equal Triton specialisation. Later calls fill the saved argument list
and call the compiled kernel's launcher with each tensor's address as an int (as Triton's launcher would resolve it:
with unified addressing, every CUDA device pointer is its own device address). Anything else takes launch(): the
interpreter, a backend without native tensor specialisation (HIP), launch or pre-run hooks, an argument type the key
does not cover. A fixed argument may not be a tensor (its address would be baked in)."""

from __future__ import annotations

from typing import Any

from rocm_triton_doctor.kernels import launch as _launch
from rocm_triton_doctor.kernels.launch import _TENSOR_TYPES, _Unsupported, arg_key, native_tensor_key

DYN = object()  # marks an argument the call passes
HIT_LIMIT = 64  # compiled kernels a Site keeps (alignments and seed classes: a handful in practice)


class Site:
    __slots__ = ("kernel", "grid", "args", "kwargs", "slots", "grid3", "ready", "hits")

    def __init__(self, kernel: Any, grid: tuple[int, ...], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if any(type(v) in _TENSOR_TYPES for v in (*args, *kwargs.values())):
            raise TypeError("Site: a tensor argument must be DYN (its address changes between calls)")
        self.kernel, self.grid, self.args, self.kwargs = kernel, grid, tuple(args), dict(kwargs)
        self.slots: list[int | str] = [i for i, v in enumerate(args) if v is DYN] + \
            [k for k, v in kwargs.items() if v is DYN]
        self.grid3 = (grid[0], grid[1] if len(grid) > 1 else 1, grid[2] if len(grid) > 2 else 1)
        # (signature positions of the slots, their specialisation kinds), once the kernel's launch plan is known
        self.ready: tuple[list[int], list[int]] | None = None
        self.hits: dict[tuple[Any, ...], tuple[Any, Any, Any, list[Any]]] = {}

    def filled(self, dyn: tuple[Any, ...]) -> tuple[list[Any], dict[str, Any]]:
        """The call's arguments: the fixed ones with dyn in the DYN slots."""
        args, kwargs = list(self.args), dict(self.kwargs)
        for slot, v in zip(self.slots, dyn):
            if type(slot) is int:
                args[slot] = v
            else:
                kwargs[slot] = v  # type: ignore[index]
        return args, kwargs

    def through_launch(self, dyn: tuple[Any, ...]) -> tuple[list[Any], dict[str, Any]]:
        """launch() with the call's arguments (Triton's path decides, compiling where it must); returns them."""
        args, kwargs = self.filled(dyn)
        _launch.launch(self.kernel, self.grid, *args, **kwargs)
        return args, kwargs

    def __call__(self, *dyn: Any) -> None:
        if len(dyn) != len(self.slots):
            raise TypeError(f"Site: {len(self.slots)} changing arguments expected, got {len(dyn)}")
        plan = _launch.plan_of(self.kernel)
        rt = _launch._RT
        if plan is None or rt is None or _launch.hooked(rt, plan):
            self.through_launch(dyn)
            return
        drv = rt.driver.active
        device = drv.get_current_device()
        be = plan.backends.get(device)
        ready = self.ready
        if ready is None:
            pos = [s if type(s) is int else plan.index[s] for s in self.slots]  # type: ignore[index]
            ready = self.ready = (pos, [plan.kinds[i] for i in pos])
        prefix = _launch.key_prefix(rt, plan, device)
        key: list[Any] = list(prefix)
        vals: list[Any] = []
        try:
            if be is None or not be[1]:
                raise _Unsupported("backend not seen on this device yet, or no native tensor specialisation")
            for v, kind in zip(dyn, ready[1]):
                if type(v) in _TENSOR_TYPES:
                    p = v.data_ptr()
                    key.append(native_tensor_key(v, kind, p))
                    vals.append(p)
                else:
                    key.append(arg_key(v, kind, True, None))
                    vals.append(v)
            tkey = tuple(key)
            hit = self.hits.get(tkey)
        except Exception:  # noqa: BLE001 - _Unsupported, an unhashable value: launch() decides
            self.through_launch(dyn)
            return
        if hit is None:
            args, kwargs = self.through_launch(dyn)
            self._learn(plan, be, prefix, tkey, args, kwargs)
            return
        _launch.check_globals(self.kernel)
        run, function, packed, template = hit
        full = template.copy()
        for i, v in zip(ready[0], vals):
            full[i] = v
        run(*self.grid3, drv.get_current_stream(device), function, packed, None, None, None, *full)

    def _learn(self, plan: Any, be: tuple[Any, bool], prefix: tuple[Any, ...], tkey: tuple[Any, ...],
               args: list[Any], kwargs: dict[str, Any]) -> None:
        """Keep the compiled kernel launch() now holds for these arguments (found under launch()'s own full key:
        prefix and the binder's key of every argument)."""
        try:
            vals, k = plan.binders[True](*args, _rtd_be=be[0], **kwargs)
            entry = plan.cache.get((*prefix, k))
        except Exception:  # noqa: BLE001 - not keyable: every call takes launch()
            return
        if entry is None:
            return
        if len(self.hits) >= HIT_LIMIT:
            self.hits.clear()
        template = list(vals)
        assert self.ready is not None
        for pos in self.ready[0]:
            template[pos] = None  # not the learning call's tensors: the Site must not keep them alive
        self.hits[tkey] = (entry[0], entry[1], entry[2], template)
