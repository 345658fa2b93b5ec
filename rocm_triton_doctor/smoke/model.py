"""`smoke --model`: train a small Llama-style model for a few steps in several forms and compare them (issue #17).

Every form starts from the same initial weights (torch.manual_seed(seed) before building the model on the device)
and sees the same batches (model_forms.make_batches), so their loss curves should agree; a form that differs, or
that leaves parameters without a gradient, is flagged whatever its speed. See docs/model.md.

run_model() returns a JSON-serialisable dict (json.dumps(..., allow_nan=False) works; non-finite losses are null):

    schema        "rocm-triton-doctor/model/1"
    preset, config   the preset name and its ModelConfig as a dict (vocab, hidden, layers, heads, kv_heads, batch,
                  seq, ffn_mult, eps, lr, dtype)
    host, target, started   the machine's hostname, the Triton target ("hip:gfx1100", "cuda:sm_90", "interpreter
                  (CPU)") and the UTC start time: what `check` (inductor-codegen) reads from the saved result
    device, device_name, dtype ("float32", or the autocast dtype), steps, warmup, seed, versions {torch, triton}
    timer         "cuda-events" (GPU: events around each step, read after the run) or "perf_counter" (CPU)
    ours_ops      per operation (rms_norm, attention, swiglu, loss): {"impl": "ours"|"torch", "module", and for torch
                  "torch" (the fallback used) and "reason"}; and the composites norm_linear, mlp (smoke/model_ops.py)
                  {"impl", "module": "smoke.model_ops", "kernels": [kernel modules]} (swiglu then says "inside":
                  "mlp"): which parts of the "ours" forms are our kernels
    forms         {form: {...}} in FORMS order, each with
                    status        "ok" | "error" | "oom" | "skipped"; "reason" (skipped) or "error" (one line)
                    description   what the form runs
                    compile_mode, pytorch   (ok and failed forms) None/"default"/"reduce-overhead", and whether
                                  the form is PyTorch alone: a failed PyTorch-only compiled form is inductor's failure
                    losses        loss at every step (floats; null where not finite)
                    first_step_ms the first step (includes torch.compile's compilation and CUDA-graph recording)
                    step_ms       {"p50", "p20", "p80"} over the steps after `warmup`
                    samples_per_s, tokens_per_s   batch / p50 and batch x seq / p50
                    peak_mib      torch.cuda.max_memory_allocated over the form (null on the CPU); start_mib
                                  (GPU only) what was allocated when the form started (the batches)
                    params, param_tensors         parameter elements and tensors
                    params_without_grad, param_tensors_without_grad, names_without_grad (first 20)
                                  parameters whose .grad is None or all zero after backward (checked at the first
                                  and the last step; the larger count is kept)
                    flagged       true when any parameter got no gradient or a loss was not finite
                    loss_vs_sdpa_max_rel  max over steps of |loss - loss_sdpa| / |loss_sdpa| (when sdpa ran)
    speedup       {a: {b: p50_b / p50_a}} for every pair of forms that ran (> 1: a is faster than b)
    checks        [{"name": "loss_agreement", "form", "vs": "sdpa", "max_rel_diff", "tolerance", "ok"}] for each
                  "ours" form that ran alongside sdpa; tolerance 0.01, or the largest loss_vs_sdpa_max_rel of the
                  PyTorch-only forms that ran (naive, compile, compile-cudagraphs, compile-fused-adamw) when that is
                  more, which is then named in "noise_floor" {"form", "max_rel_diff"}
    problems      one line per flagged form, failed form and failed check
    ok            no problems
"""

from __future__ import annotations

import contextlib
import gc
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rocm_triton_doctor.smoke import model_forms as mf
from rocm_triton_doctor.smoke.model_render import last_model_path  # report reads it without torch

SCHEMA = "rocm-triton-doctor/model/1"
LOSS_TOLERANCE = 0.01  # issue #17: the loss curves of ours and SDPA agree within 1 %
DTYPES = ("float32", "bfloat16", "float16")


@dataclass(frozen=True)
class Form:
    name: str
    description: str
    ops: Callable[[], mf.Ops]
    compile_mode: str | None = None  # None: eager; "default"; "reduce-overhead" (CUDA graphs)
    cuda_only: bool = False
    gpu_only: bool = False
    ours: bool = False
    pytorch: bool = False  # PyTorch alone (no third-party or our kernels): its spread from sdpa is the run's noise floor
    optimizer: str = "torch"  # "torch": torch.optim.AdamW's default (foreach on a GPU); "torch-fused": fused=True;
    # "ours": kernels/adamw.py's AdamW, one Triton launch a step

    def traits(self) -> dict[str, Any]:
        """What a form's result records of how it ran (check's inductor-codegen reads them from the saved result)."""
        return {"compile_mode": self.compile_mode, "pytorch": self.pytorch}


def make_optimizer(kind: str, params: Any, lr: float) -> Any:
    """The form's AdamW (every form: lr from the preset, torch's defaults otherwise)."""
    import torch

    if kind == "ours":
        from rocm_triton_doctor.kernels import adamw

        return adamw.AdamW(params, lr=lr)
    return torch.optim.AdamW(params, lr=lr, fused=True) if kind == "torch-fused" else torch.optim.AdamW(params, lr=lr)


FORMS: dict[str, Form] = {f.name: f for f in (
    Form("naive", "PyTorch eager: materialised attention, unfused RMSNorm, full logits", lambda: mf.NAIVE, pytorch=True),
    Form("sdpa", "PyTorch eager: scaled_dot_product_attention, F.rms_norm, full logits", lambda: mf.SDPA),
    Form("compile", "torch.compile(fullgraph=True) of the sdpa form", lambda: mf.SDPA, "default", pytorch=True),
    Form("compile-cudagraphs", "torch.compile mode reduce-overhead (CUDA graphs) of the sdpa form", lambda: mf.SDPA,
         "reduce-overhead", cuda_only=True, pytorch=True),
    Form("compile-fused-adamw", "the compile form with torch.optim.AdamW(fused=True): torch's own one-pass optimizer "
         "(a reference for ours' AdamW)", lambda: mf.SDPA, "default", gpu_only=True, optimizer="torch-fused",
         pytorch=True),
    Form("liger", "Liger-Kernel RMSNorm, SiLU-mul and fused linear cross-entropy; SDPA attention", mf.liger,
         gpu_only=True),
    Form("ours", "our autograd ops where they exist (see ours_ops), torch for the rest, and our AdamW; eager", mf.ours,
         ours=True, optimizer="ours"),
    Form("ours-compile", "the ours form under torch.compile(fullgraph=True)", mf.ours, "default", ours=True,
         optimizer="ours"),
    Form("ours-cudagraphs", "the ours form under torch.compile mode reduce-overhead (CUDA graphs)", mf.ours,
         "reduce-overhead", cuda_only=True, ours=True, optimizer="ours"),
)}


def params_without_grad(model: Any) -> tuple[int, int, list[str]]:
    """(elements, tensors, names) of trainable parameters whose .grad is None or all zero after a backward."""
    elems, names = 0, []
    for name, p in model.named_parameters():
        if p.requires_grad and (p.grad is None or not bool(p.grad.any())):
            elems += p.numel()
            names.append(name)
    return elems, len(names), names


def _quantiles(ms: Sequence[float]) -> dict[str, float]:
    s = sorted(ms)

    def q(f: float) -> float:  # linear interpolation between order statistics (numpy's default)
        pos = f * (len(s) - 1)
        lo = int(math.floor(pos))
        hi = min(lo + 1, len(s) - 1)
        return s[lo] + (s[hi] - s[lo]) * (pos - lo)

    return {"p50": round(q(0.5), 4), "p20": round(q(0.2), 4), "p80": round(q(0.8), 4)}


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def train_step(torch: Any, form: Form, fn: Any, opt: Any, amp: Any, x: Any, y: Any) -> Any:
    """One training step of a form (also what benchmarks/model_profile.py times): zero the gradients, forward under
    `amp`, backward, optimizer step; a new CUDA-graph step is marked for the reduce-overhead form. Returns the loss."""
    if form.compile_mode == "reduce-overhead":
        torch.compiler.cudagraph_mark_step_begin()
    opt.zero_grad(set_to_none=True)
    with amp:
        loss = fn(x, y)
    loss.backward()
    opt.step()
    return loss


def _run_form(form: Form, cfg: mf.ModelConfig, batches: list[Any], torch: Any, dev: Any, dtype: str, seed: int,
              warmup: int, build: Callable[[mf.ModelConfig, mf.Ops], Any]) -> dict[str, Any]:
    on_gpu = dev.type != "cpu"
    r: dict[str, Any] = {"status": "ok", "description": form.description, **form.traits()}
    torch._dynamo.reset()  # first: compiled graphs (and their CUDA-graph pools) of the last form hold memory
    if on_gpu:
        gc.collect()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(dev)
        r["start_mib"] = round(torch.cuda.memory_allocated(dev) / 2**20, 1)
    torch.manual_seed(seed)
    with dev:
        model = build(cfg, form.ops())
    opt = make_optimizer(form.optimizer, model.parameters(), cfg.lr)
    fn = model if form.compile_mode is None else torch.compile(model, fullgraph=True, mode=form.compile_mode)
    amp = (torch.autocast(dev.type, dtype=getattr(torch, dtype)) if dtype != "float32" else contextlib.nullcontext())
    r["params"] = sum(p.numel() for p in model.parameters())
    r["param_tensors"] = sum(1 for _ in model.parameters())
    losses, times, marks = [], [], []
    worst: tuple[int, int, list[str]] = (0, 0, [])
    for i, (x, y) in enumerate(batches):
        t0 = time.perf_counter()
        if on_gpu:
            ev = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            ev[0].record()
        loss = train_step(torch, form, fn, opt, amp, x, y)
        if on_gpu:
            ev[1].record()
            marks.append(ev)
        else:
            times.append((time.perf_counter() - t0) * 1e3)
        if i in (0, len(batches) - 1):  # after the step's timing (a host sync); AdamW leaves .grad as backward made it
            found = params_without_grad(model)
            worst = max(worst, found, key=lambda f: f[0])
        losses.append(loss.detach().clone())  # clone: a CUDA-graph replay overwrites its outputs
    if on_gpu:
        torch.cuda.synchronize(dev)
        times = [a.elapsed_time(b) for a, b in marks]
        r["peak_mib"] = round(torch.cuda.max_memory_allocated(dev) / 2**20, 1)
    else:
        r["peak_mib"] = None
    r["losses"] = [_finite(float(v)) for v in losses]
    r["first_step_ms"] = round(times[0], 3)
    timed = times[warmup:] if len(times) > warmup else times[1:] or times
    r["step_ms"] = _quantiles(timed)
    p50_s = r["step_ms"]["p50"] / 1e3
    r["samples_per_s"] = round(cfg.batch / p50_s, 2) if p50_s > 0 else None
    r["tokens_per_s"] = round(cfg.batch * cfg.seq / p50_s, 1) if p50_s > 0 else None
    r["params_without_grad"], r["param_tensors_without_grad"], names = worst
    r["names_without_grad"] = names[:20]
    r["flagged"] = worst[1] > 0 or any(v is None for v in r["losses"])
    return r


def run_model(preset: str = "tiny-llama", forms: Sequence[str] | None = None, steps: int = 20, device: str = "auto",
              dtype: str | None = None, seed: int = 0, warmup: int = 3,
              progress: Callable[[str, int, int], None] | None = None,
              build: Callable[[mf.ModelConfig, mf.Ops], Any] = mf.TinyLlama) -> dict[str, Any]:
    """Train `preset` for `steps` steps in each of `forms` (default: all of FORMS) and compare them. `dtype`:
    float32, or bfloat16/float16 autocast (fp32 parameters and AdamW; float16 without loss scaling); default the
    preset's. Raises ValueError for an unknown preset, form or dtype, or too few steps; runner.SmokeCannotStart when
    torch/Triton or the device is unusable. `build` makes the model (tests substitute one)."""
    from rocm_triton_doctor.smoke import runner

    if preset not in mf.PRESETS:
        raise ValueError(f"unknown model preset {preset!r} (known: {', '.join(mf.PRESETS)})")
    names = list(forms) if forms else list(FORMS)
    unknown = [f for f in names if f not in FORMS]
    if unknown:
        raise ValueError(f"unknown form(s): {', '.join(unknown)} (known: {', '.join(FORMS)})")
    cfg = mf.PRESETS[preset]
    dtype = dtype or cfg.dtype
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    if steps < 2:
        raise ValueError("steps must be at least 2 (one warm-up step and one timed step)")
    torch, triton = runner.import_stack(device)
    device = runner.resolve_device(device, torch)
    dev = torch.device(device)
    on_gpu = device != "cpu"
    batches = [(x.to(dev), y.to(dev)) for x, y in mf.make_batches(cfg, steps, seed)]
    import datetime
    import socket

    from rocm_triton_doctor.kernels.policy import target_for_device

    result: dict[str, Any] = {
        "schema": SCHEMA, "preset": preset, "config": {**cfg.to_dict(), "dtype": dtype}, "device": device,
        "host": socket.gethostname(), "target": target_for_device(device).label,
        "started": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "device_name": torch.cuda.get_device_name(dev) if on_gpu else "CPU (Triton interpreter)", "dtype": dtype,
        "steps": steps, "warmup": min(warmup, steps - 1), "seed": seed,
        "versions": {"torch": torch.__version__, "triton": triton.__version__},
        "timer": "cuda-events" if on_gpu else "perf_counter", "ours_ops": mf.ours_ops(), "forms": {}}
    for i, name in enumerate(names):
        form = FORMS[name]
        if progress:
            progress(name, i, len(names))
        if form.cuda_only and not on_gpu:
            result["forms"][name] = {"status": "skipped", "description": form.description,
                                     "reason": "CUDA graphs need a GPU"}
            continue
        if form.gpu_only and not on_gpu:
            result["forms"][name] = {"status": "skipped", "description": form.description,
                                     "reason": "a GPU-only reference (Liger-Kernel; torch's fused AdamW)"}
            continue
        try:
            result["forms"][name] = _run_form(form, cfg, batches, torch, dev, dtype, seed, result["warmup"], build)
        except ImportError as exc:
            result["forms"][name] = {"status": "skipped", "description": form.description,
                                     "reason": f"not importable: {exc}"}
        except Exception as exc:  # noqa: BLE001 - one form failing (compile, OOM, a kernel) is that form's result
            oom = on_gpu and isinstance(exc, torch.cuda.OutOfMemoryError)
            line = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")
            result["forms"][name] = {"status": "oom" if oom else "error", "description": form.description,
                                     "error": f"{type(exc).__name__}: {line}"[:500], **form.traits()}
        finally:
            if on_gpu:
                torch.cuda.empty_cache()
    _compare(result)
    return result


def _compare(result: dict[str, Any]) -> None:
    forms = result["forms"]
    ran = {n: f for n, f in forms.items() if f["status"] == "ok"}
    result["speedup"] = {a: {b: round(fb["step_ms"]["p50"] / fa["step_ms"]["p50"], 3)
                             for b, fb in ran.items() if b != a and fa["step_ms"]["p50"] > 0}
                         for a, fa in ran.items()}
    problems, checks = [], []
    ref = ran.get("sdpa")
    for name, f in ran.items():
        if ref is not None and name != "sdpa":
            diffs = [abs(a - b) / abs(b) if a is not None and b not in (None, 0) else math.inf
                     for a, b in zip(f["losses"], ref["losses"])]
            worst = max(diffs) if diffs else 0.0
            f["loss_vs_sdpa_max_rel"] = round(worst, 6) if math.isfinite(worst) else None
    # The tolerance: 1 % (issue #17), or the furthest PyTorch's own forms (same math, other kernels and rounding) drift
    # from sdpa in this run, when that is more. In bf16 the tiny preset's losses part by 1.3 % within PyTorch alone by
    # step 20 (H200, 2026-11-27: naive 1.34 %, torch.compile 1.29 %): a check below that floor fails on rounding.
    floor = max(((f.get("loss_vs_sdpa_max_rel"), n) for n, f in ran.items() if FORMS[n].pytorch
                 and f.get("loss_vs_sdpa_max_rel") is not None), default=(0.0, None))
    tolerance = max(LOSS_TOLERANCE, floor[0])
    for name, f in forms.items():
        if f["status"] in ("error", "oom"):
            problems.append(f"{name}: {f['status']}: {f['error']}")
            continue
        if name not in ran:
            continue
        if f["flagged"]:
            problems.append(f"{name}: {f['param_tensors_without_grad']} parameter tensor(s) "
                            f"({f['params_without_grad']} of {f['params']} parameters) got no gradient"
                            if f["param_tensors_without_grad"] else f"{name}: a loss was not finite")
        if ref is not None and name != "sdpa" and FORMS[name].ours:
            worst = f["loss_vs_sdpa_max_rel"]
            ok = worst is not None and worst <= tolerance
            check = {"name": "loss_agreement", "form": name, "vs": "sdpa", "max_rel_diff": worst,
                     "tolerance": round(tolerance, 6), "ok": ok}
            if tolerance > LOSS_TOLERANCE:
                check["noise_floor"] = {"form": floor[1], "max_rel_diff": floor[0]}
            checks.append(check)
            if not ok:
                # In 16 bits PyTorch's own forms drift over 1 % (bf16 tiny-llama: 1.3 % by step 20); without one of
                # them in the run there is no floor to compare with, and the user should know how to get one.
                hint = ("; 16-bit losses drift past 1 % within PyTorch alone: add the compile form (--forms ...,compile)"
                        " to measure this run's noise floor" if floor[1] is None and result.get("dtype") != "float32"
                        and worst is not None else "")
                problems.append(f"{name}: loss differs from sdpa by up to {worst if worst is not None else math.inf:.3g}"
                                f" (> {tolerance:.3g}){hint}")
    result["checks"] = checks
    result["problems"] = problems
    result["ok"] = not problems


def save_last(result: dict[str, Any], path: str | None = None) -> str | None:
    """Write the result as JSON (atomically); the path written, or None when it cannot be (a read-only home must
    not fail the run)."""
    import json
    import os

    path = path or last_model_path()
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(result, fh, allow_nan=False)
        os.replace(tmp, path)
    except (OSError, ValueError):
        return None
    return path


def to_result(result: dict[str, Any]) -> Any:
    """The run as the one Result type (result.py): exit 0 when ok, 1 when a form left parameters without a gradient,
    failed, or its losses disagree with sdpa's."""
    from rocm_triton_doctor.result import ExitCode, Result

    ok = bool(result["ok"])
    forms = result.get("forms") or {}
    if ok and forms and all(f.get("status") == "skipped" for f in forms.values()):
        # Nothing trained (every form skipped: Liger not installed, say): no verdict, not "passed" (fuzz round 2).
        return Result(SCHEMA.removeprefix("rocm-triton-doctor/"), "smoke --model", "could-not-check",
                      int(ExitCode.COULD_NOT_CHECK), {k: v for k, v in result.items() if k != "schema"})
    return Result(SCHEMA.removeprefix("rocm-triton-doctor/"), "smoke --model", "passed" if ok else "failed",
                  int(ExitCode.HEALTHY if ok else ExitCode.PROBLEMS), {k: v for k, v in result.items() if k != "schema"})


def command(preset: str, forms: Sequence[str] | None, steps: int, warmup: int, dtype: str | None, device: str,
            seed: int, save: str | None, progress: Callable[[str, int, int], None] | None = None) -> Any:
    """`smoke --model` end to end: run, keep the result for `report` (save_last), write --save. Returns a Result
    (exit 3 when torch/Triton/the device cannot start or --save cannot be written); ValueError (an unknown form) is
    left to the caller: a usage error."""
    import json

    from rocm_triton_doctor import outputs
    from rocm_triton_doctor.result import ExitCode, Result
    from rocm_triton_doctor.smoke import runner

    try:
        raw = run_model(preset, forms, steps, device, dtype, seed, warmup, progress)
    except runner.SmokeCannotStart as exc:
        return Result.error("smoke --model", str(exc), ExitCode.COULD_NOT_CHECK, schema="model/1")
    result = to_result(raw)
    save_last(raw)
    if save:
        try:
            outputs.write_text(save, json.dumps(result.to_dict(), indent=1, allow_nan=False))
        except (OSError, ValueError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            return Result.error("smoke --model", f"cannot write output: {why}", ExitCode.COULD_NOT_CHECK, schema="model/1")
    return result
