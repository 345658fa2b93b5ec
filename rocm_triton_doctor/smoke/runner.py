"""Run the smoke suite: every registered kernel's cases for a preset, on one device; each case's result is recorded
and the rest still run when one fails to compile, crashes or runs out of memory."""

from __future__ import annotations

import datetime as _dt
import os
import signal
import sys
import time
import traceback
from typing import Any
from collections.abc import Callable

from rocm_triton_doctor.smoke.report import (  # noqa: F401 - re-exported (command, render, tests)
    CaseResult, SmokeReport, last_result_path, save_last)

PRESETS = ("quick", "seed", "full", "bench", "sweep", "launch")
SWEEP_REP_MS = (5, 25)  # warm-up and timed ms per do_bench in the sweep: ~300 rows x 4 baselines in minutes
GRAPH_BELOW_US = 100.0  # cases faster than this also get graph-replay times (launch overhead shows up to ~50 us)


class SmokeCannotStart(Exception):
    """torch/Triton missing or broken, or the device is unusable: exit 3 with this one-line message."""


def _reraise_if_interrupted() -> None:
    """In `except Exception`: an interrupt that a C extension turned into another error (Ctrl-C while torch loads:
    ImportError 'cannot load module more than once per process') is still one: exit 130, not 'cannot import torch'."""
    from rocm_triton_doctor.cli import _exits

    if _exits.RECEIVED:
        signum = _exits.RECEIVED[-1]
        raise KeyboardInterrupt if signum == signal.SIGINT else _exits.Terminated(signum)


def import_stack(device: str) -> tuple[Any, Any]:
    """Import torch and triton for `device`; on failure raise SmokeCannotStart with one clear line."""
    interpret = os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")
    if device == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"  # must be set before any @triton.jit function is created
    elif device == "cuda" and interpret:
        raise SmokeCannotStart("TRITON_INTERPRET is set: unset it to run on the GPU, or use --device cpu")
    if "torch" not in sys.modules:  # a torch that segfaults or hangs at import must not take the doctor with it
        from rocm_triton_doctor.smoke import preflight

        try:
            preflight.check_imports()
        except preflight.PreflightFailed as exc:
            raise SmokeCannotStart(str(exc)) from None
    import warnings

    with warnings.catch_warnings():  # torch's and Triton's import-time UserWarnings are not ours to show
        warnings.simplefilter("ignore")
        try:
            import torch
        except Exception as exc:  # noqa: BLE001
            _reraise_if_interrupted()
            raise SmokeCannotStart(f"cannot import torch ({type(exc).__name__}: {exc}); run `rocm-triton-doctor check`") from None
        if device == "auto":
            # Decided here, between torch and Triton: triton.language's own @jit helpers are created when Triton is
            # imported, so a laptop without a GPU must have TRITON_INTERPRET set before that (it had failed with
            # "Cannot call @triton.jit'd outside of the scope of a kernel"; fuzz round 2, 2026-11-23).
            gpu = torch.cuda.is_available()
            if not gpu and "triton" not in sys.modules:
                os.environ["TRITON_INTERPRET"] = "1"
            elif gpu and interpret:
                raise SmokeCannotStart("TRITON_INTERPRET is set: unset it to run on the GPU, or use --device cpu")
        try:
            import triton
        except Exception as exc:  # noqa: BLE001
            _reraise_if_interrupted()
            raise SmokeCannotStart(f"cannot import triton ({type(exc).__name__}: {exc}); run `rocm-triton-doctor check`") from None
    return torch, triton


def resolve_device(device: str, torch: Any) -> str:
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise SmokeCannotStart(f"torch {torch.__version__} sees no GPU (torch.cuda.is_available() is False); "
                               "run `rocm-triton-doctor check`, or use --device cpu")
    return device


def run_smoke(device: str = "auto", preset: str = "quick", only: tuple[str, ...] = (), with_compile: bool = False,
              seed: int = 0, progress: Callable[[str, int, int], None] | None = None,
              broken: str | None = None, max_seconds: float | None = None, tune: bool = False) -> SmokeReport:
    torch, triton = import_stack(device)
    device = resolve_device(device, torch)
    if device == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"
    from rocm_triton_doctor import kernels
    from rocm_triton_doctor.kernels.policy import fp32_dot_precision, target_for_device
    from rocm_triton_doctor.smoke import correctness, timing

    unknown = [o for o in only if o not in kernels.NAMES]
    if unknown:
        raise ValueError(f"unknown kernel(s): {', '.join(unknown)} (known: {', '.join(kernels.NAMES)})")
    started = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    t0 = time.monotonic()
    try:
        target = target_for_device(device)
    except Exception as exc:  # noqa: BLE001
        raise SmokeCannotStart(f"Triton has no usable backend here ({_first_line(exc)}); run `rocm-triton-doctor check`") from None
    dev = torch.device(device)
    refused: dict[str, str] = {}
    cases = _cases(kernels, preset, target, only, torch.device(device), refused, seed)
    if broken:
        cases.append(_broken_case(broken))
    notes = []
    ceilings = None
    clocks: dict[str, str] = {}
    on_gpu = device != "cpu"
    if on_gpu:
        if progress:
            progress("measuring the device's copy bandwidth and matmul rate", 0, len(cases))
        ceilings = timing.measure_ceilings(dev)
        clocks = timing.read_clocks(target.backend)
        notes.append("Times are medians of triton.testing.do_bench (L2 flushed each iteration) with p20/p80; "
                     "% of ceiling divides by the copy bandwidth / matmul rate measured in this run. On a shared GPU "
                     "absolute times are noisy; compare ratios.")
        prec = fp32_dot_precision(target)
        notes.append(f"fp32 GEMM and attention keep fp32 accuracy (tl.dot input_precision '{prec}'"
                     + (": the 3xTF32 split on tensor cores" if prec == "tf32x3" else "")
                     + "; decode-size GEMMs on the GEMV kernel, exact fp32 products); torch's fp32 baselines "
                     "and the fp32 matmul ceiling run with TF32 off.")
        if tune:
            notes += _tune(cases, dev, target, torch, progress)
    else:
        notes += ["--tune: nothing tuned (the interpreter times Python, not kernels)"] if tune else []
        notes.append("Interpreter mode (TRITON_INTERPRET=1) on the CPU: correctness only. Times are omitted because "
                     "they would measure the Python interpreter, not the kernel.")
    if preset == "sweep":
        from rocm_triton_doctor.smoke import sweep

        notes += [f"not in the sweep: {s}" for s in sweep.skipped()]
        notes += [f"not in the sweep: attention {k}, refused by the launcher ({why})" for k, why in refused.items()]
        if with_compile:  # ~40 shapes a kernel: let dynamo recompile (automatic dynamic) rather than fall back to eager
            for knob in ("recompile_limit", "cache_size_limit"):
                if hasattr(torch._dynamo.config, knob):
                    setattr(torch._dynamo.config, knob, 256)
    results = []
    for i, case in enumerate(cases):
        if max_seconds is not None and time.monotonic() - t0 > max_seconds:
            notes.append(f"--max-seconds {max_seconds:g}: stopped starting rows after {i} of {len(cases)}; not run: "
                         + ", ".join(c.id for c in cases[i:i + 20]) + (" …" if len(cases) - i > 20 else ""))
            break
        if progress:
            progress(case.id, i, len(cases))
        results.append(_run_case(case, dev, on_gpu, with_compile, seed + i, ceilings, torch, correctness, timing,
                                 preset))
    name = torch.cuda.get_device_name(0) if on_gpu else "CPU (Triton interpreter)"
    versions = {"torch": torch.__version__, "triton": triton.__version__,
                "hip": str(getattr(torch.version, "hip", None)), "cuda": str(getattr(torch.version, "cuda", None))}
    return SmokeReport(device, name, target.label, preset, versions, results,
                       ceilings.to_dict() if ceilings else None, clocks, notes, started, time.monotonic() - t0)


def _tune(cases: list[Any], dev: Any, target: Any, torch: Any, progress: Any) -> list[str]:
    from rocm_triton_doctor.smoke import tune

    done = tune.tune(cases, dev, target, torch.cuda.get_device_name(0), torch, progress)
    n = sum("config" in r for r in done["tuned"])
    lines = [f"--tune: {n} of {len(done['tuned'])} shape keys tuned, cache {done['path']}"]
    return lines + [f"tuned {r['kernel']} {r['key']}: {r['policy_us']} -> {r['tuned_us']} us with {r['config']}"
                    for r in done["tuned"] if "config" in r]


def _cases(kernels: Any, preset: str, target: Any, only: tuple[str, ...], dev: Any,
           refused: dict[str, str] | None = None, seed: int = 0) -> list[Any]:
    """The preset's cases. sweep: every kernel's cases("sweep") (the grids are in smoke/sweep.py), interleaved; launch:
    one small case per kernel (baselines.py); random: shapes drawn from `seed` (random_shapes.py)."""
    from rocm_triton_doctor.smoke import baselines, random_shapes, sweep

    want = lambda k: not only or k in only  # noqa: E731
    if preset == "random":
        import torch

        mem = torch.cuda.get_device_properties(dev).total_memory if dev.type == "cuda" else random_shapes.GPU_REFERENCE_BYTES
        return random_shapes.cases(tuple(m.name for m in kernels.REGISTRY if want(m.name)), target.interpreter, seed,
                                   gpu_bytes=mem)
    if preset == "launch" and not target.interpreter:
        return [c for c in baselines.launch_cases(target) if want(c.kernel)]
    if preset != "sweep":
        return [c for m in kernels.REGISTRY if want(m.name) for c in m.cases(preset, target)]
    cases = [c for m in kernels.REGISTRY if want(m.name) for c in m.cases(preset, target)]
    return sweep.interleave(cases)


def _run_case(case: Any, dev: Any, on_gpu: bool, with_compile: bool, seed: int, ceilings: Any, torch: Any,
              correctness: Any, timing: Any, preset: str = "") -> CaseResult:
    from rocm_triton_doctor.kernels.base import dtype_name

    r = CaseResult(case.kernel, case.name, dtype_name(case.dtype), "pass", case.seed_shape, flops=case.flops,
                   bytes=case.bytes, params=dict(case.params))
    t0 = time.monotonic()
    try:
        gen = torch.Generator(device=dev).manual_seed(seed)
        inputs = case.setup(dev, gen)
        v = correctness.check_case(case, inputs, dev, tf32=False)
        r.max_abs, r.max_rel, r.atol, r.rtol, r.problems = v.max_abs, v.max_rel, v.atol, v.rtol, v.problems
        r.dropout = v.details if case.dropout is not None else None
        r.eager_slack_max = v.details.get("eager_slack_max")
        r.status = "pass" if v.ok else "fail"
        if on_gpu and preset == "launch":
            from rocm_triton_doctor.smoke.baselines import launch_us

            r.launch_us = launch_us(case, inputs, torch.cuda.synchronize)
        elif on_gpu:
            _time_case(case, inputs, r, with_compile, ceilings, torch, timing, preset == "sweep")
    except torch.cuda.OutOfMemoryError as exc:
        r.status, r.error = "oom", _first_line(exc)
    except Exception as exc:  # noqa: BLE001 - a broken case is that case's result; the suite goes on
        r.status, r.error = "error", _first_line(exc)
        if os.environ.get("RTD_DEBUG"):
            traceback.print_exc()
    finally:
        if on_gpu:
            torch.cuda.empty_cache()
    r.seconds = round(time.monotonic() - t0, 3)
    return r


def _time_case(case: Any, inputs: Any, r: CaseResult, with_compile: bool, ceilings: Any, torch: Any,
               timing: Any, sweep: bool = False) -> None:
    from rocm_triton_doctor.smoke import baselines

    # The device from the first tensor input; an input may be a list of tensors (adamw's parameter lists).
    dev = next(t.device for v in inputs.values() for t in (v if isinstance(v, list) else [v]) if hasattr(t, "device"))
    out = torch.empty(case.out_shape(inputs), dtype=case.dtype, device=dev)
    bench = (lambda fn: timing.bench(fn, SWEEP_REP_MS[1], SWEEP_REP_MS[0])) if sweep else timing.bench
    tt = bench(lambda: case.run(inputs, out))
    r.triton_ms = tt.to_dict()
    if case.eager is not None:
        r.eager_ms = bench(lambda: case.eager(inputs)).to_dict()
        r.speedup_eager = round(r.eager_ms["median_ms"] / tt.median_ms, 3)
    if with_compile and case.eager is not None:
        try:
            compiled = torch.compile(case.eager)
            compiled(inputs)  # compile outside the timed region
            r.compile_ms = bench(lambda: compiled(inputs)).to_dict()
            r.speedup_compile = round(r.compile_ms["median_ms"] / tt.median_ms, 3)
        except Exception as exc:  # noqa: BLE001 - torch.compile failing on the BASELINE is that column's value, not
            # our kernel's error (seen: an InductorError on the linear+cross-entropy eager form, H100, torch 2.11)
            r.compile_error = _first_line(exc)[:160]
    if sweep:
        liger, r.liger = baselines.liger_fn(case.kernel)
        if liger is not None:
            try:
                with torch.no_grad():
                    r.liger_ms = bench(lambda: liger(inputs)).to_dict()
                r.speedup_liger = round(r.liger_ms["median_ms"] / tt.median_ms, 3)
            except Exception as exc:  # noqa: BLE001 - Liger refusing a shape is that column's value
                r.liger = _first_line(exc)[:80]
        best = [t["median_ms"] for t in (r.eager_ms, r.compile_ms, r.liger_ms) if t]
        r.vs_best = round(min(best) / tt.median_ms, 3) if best else None
    secs = tt.median_ms * 1e-3
    roof = timing.roofline_us(case, ceilings, r.dtype)
    # Graph replay where launch overhead can matter: seed shapes, and cases under GRAPH_BELOW_US that ran at under
    # half their roofline speed (a kernel near its ceiling is not launch-bound, and graphs cost smoke time).
    if case.graphable and (case.seed_shape or (tt.median_ms * 1e3 < GRAPH_BELOW_US
                                               and (roof is None or roof < tt.median_ms * 1e3 / 2))):
        r.triton_graph_us = _us(timing.bench_graph(lambda: case.run(inputs, out)))
        if case.eager is not None:
            r.eager_graph_us = _us(timing.bench_graph(lambda: case.eager(inputs)))
    r.launch_bound = timing.launch_bound(tt.median_ms, roof, r.triton_graph_us)
    if timing.compute_bound(case.kernel):
        r.achieved, r.achieved_unit = round(case.flops / secs / 1e12, 2), "TFLOP/s"
        ceil = ceilings.matmul_tflops.get(r.dtype)
        r.ceiling = f"torch.matmul {r.dtype}"
    else:
        r.achieved, r.achieved_unit = round(case.bytes / secs / 1e9, 1), "GB/s"
        ceil = ceilings.copy_gbps
        r.ceiling = "device copy"
    if ceil:
        r.pct_ceiling = round(100.0 * r.achieved / ceil, 1)


def _us(ms: float | None) -> float | None:
    return round(ms * 1e3, 2) if ms is not None else None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"[:300]


def _broken_case(kind: str) -> Any:
    """A deliberately broken case (for tests and for users checking their CI wiring): 'wrong' or 'crash'."""
    import torch

    from rocm_triton_doctor.kernels import add_mul

    good = add_mul.make_case(1000, torch.float32)
    if kind == "crash":
        def run(x: Any, out: Any) -> Any:
            raise RuntimeError("deliberately broken case")
        return good.__class__(**{**good.__dict__, "kernel": "broken", "name": "crash", "run": run})
    if kind == "wrong":
        return good.__class__(**{**good.__dict__, "kernel": "broken", "name": "wrong result",
                                 "reference": lambda x: (x["x"].double() + x["y"].double()) * x["z"].double() + 1.0})
    raise ValueError(f"--broken must be 'wrong' or 'crash', got {kind!r}")
