"""`smoke --model PRESET`: the options of the model run (issue #17) and their dispatch, hooked onto `smoke`.

`options` adds --model/--forms/--steps/--warmup/--dtype to the smoke command and, when --model is given, runs
smoke.model.command with the shared --device/--json/--save/--seed instead of the kernel suite. Exit codes: 0 every
form trained with a gradient for every parameter and ours' losses agree with sdpa's; 1 not; 2 usage; 3 cannot start.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

from rocm_triton_doctor.cli._shared import Usage, finish, spinner, split, usage_check

# Options of the kernel suite that mean nothing for a model run (their defaults are what "not given" looks like).
_SUITE_ONLY = {"only": (), "with_compile": False, "junit": None, "plot": None, "compile_only": False, "arch": None,
               "distributed": False, "broken": None, "preset": "quick", "python": None, "max_seconds": None,
               "tune": False, "rank_timeout": 300.0, "collective_max_mib": 256.0}


# Spelled out here: smoke.model_forms imports torch, and every CLI start (check on a machine without torch too)
# builds these options. tests/cli/test_model.py checks they equal model_forms.PRESETS and model.DTYPES.
PRESETS = ("tiny-llama", "medium", "toy")
DTYPES = ("float32", "bfloat16", "float16")


def options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate the smoke callback (placed right under @click.command, above its other options)."""
    @functools.wraps(f)
    def wrapper(*args: Any, model: str | None, forms: tuple[str, ...], steps: int | None, warmup: int | None,
                dtype: str | None, **kw: Any) -> Any:
        ctx = click.get_current_context()
        if model is None:
            usage_check(ctx, not forms and steps is None and warmup is None and dtype is None,
                        "--forms, --steps, --warmup and --dtype are only meaningful with --model")
            return f(*args, **kw)
        given = [k for k, default in _SUITE_ONLY.items() if kw.get(k) != default]
        usage_check(ctx, not given, "--model runs the model alone: drop " + ", ".join(
            "--" + k.replace("with_", "").replace("_", "-") for k in given))
        run(ctx, model, tuple(split(forms)), steps or 20, 3 if warmup is None else warmup, dtype, kw)

    params = [click.Option(["--model"], type=click.Choice(PRESETS), metavar="PRESET",
                           help="Train a Llama-style model for --steps in several forms (PyTorch, torch.compile, "
                           "Liger, ours) and compare loss, speed, memory and parameters without gradient. Presets: "
                           "tiny-llama (the workshop seed's size, default), medium, toy (CPU-sized). See docs/model.md."),
              click.Option(["--forms"], multiple=True, metavar="LIST", help="With --model: only these forms "
                           "(comma-separated; default all)."),
              click.Option(["--steps"], type=click.IntRange(2, 100000), help="With --model: training steps [default 20]."),
              click.Option(["--warmup"], type=click.IntRange(0, 100000), help="With --model: steps left out of the "
                           "timing [default 3]."),
              click.Option(["--dtype"], type=click.Choice(DTYPES), help="With --model: float32, or bfloat16/float16 "
                           "autocast [default: the preset's].")]
    # Click lists __click_params__ in reverse: these go last in --help, in the order written.
    wrapper.__click_params__ = [*reversed(params), *getattr(f, "__click_params__", [])]  # type: ignore[attr-defined]
    return wrapper


def run(ctx: click.Context, preset: str, forms: tuple[str, ...], steps: int, warmup: int, dtype: str | None,
        kw: dict[str, Any]) -> None:
    from rocm_triton_doctor.smoke import model, model_render

    device = "cuda" if kw["device"] == "gpu" else kw["device"]
    try:
        with spinner(not kw["as_json"], "starting…") as status:
            result = model.command(preset, forms or None, steps, warmup, dtype, device, kw["seed"], kw["save"],
                                   (lambda m, i, n: status.update(f"[{i + 1}/{n}] {m}")) if status else None)
    except ValueError as exc:  # an unknown form
        raise Usage(str(exc), ctx) from None
    finish(result, as_json=kw["as_json"], human=lambda con: model_render.table(dict(result.data), con))
