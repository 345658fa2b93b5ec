"""`smoke`: parse and validate, call one of smoke.command.run / smoke.aot.run / smoke.distributed.run, render, exit."""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any

import click

from rocm_triton_doctor.cli import _model, _options
from rocm_triton_doctor.cli._shared import CONTEXT, Usage, finish, output_option, python_option, spinner, split, usage_check


def _arch(ctx: click.Context, _p: click.Parameter, value: str | None) -> list[str] | None:
    from rocm_triton_doctor.smoke.aot import parse_arch

    try:
        return parse_arch(value) if value is not None else None
    except ValueError as exc:
        raise Usage(str(exc), ctx) from None


@click.command("smoke", context_settings=CONTEXT)
@_model.options  # --model PRESET and its options (cli/_model.py)
@click.option("--device", type=click.Choice(["auto", "cpu", "gpu", "cuda"]), default="auto", show_default=True,
              help="gpu/cuda: the GPU torch sees (ROCm GPUs are 'cuda' devices in torch); cpu: Triton interpreter.")
@click.option("--preset", type=click.Choice(["quick", "seed", "full", "bench", "sweep", "launch", "random"]),
              default="quick", show_default=True, help="quick: a minute; seed: the seed shapes; full: large; bench: the "
              "targets' cases; sweep: the shape grid; launch: host µs per call; random: shapes from --seed (docs/smoke.md).")
@_options.suite_options  # --max-seconds, --tune
@click.option("--only", multiple=True, metavar="KERNEL", help="Run only these kernels (repeat or comma-separate).")
@click.option("--compile", "with_compile", is_flag=True, help="Also time torch.compile (default mode) of each baseline.")
@click.option("--json", "as_json", is_flag=True, help="Print the versioned JSON result instead of the table.")
@output_option("--junit", help="Also write JUnit XML (one testcase per case) for CI systems.")
@output_option("--plot", metavar="FILE.png", help="Also plot speed-ups and % of the ceiling (needs matplotlib and a GPU).")
@output_option("--save", help="Also write the JSON result to FILE (while printing the table).")
@click.option("--compile-only", is_flag=True, help="Compile every kernel for --arch targets; no GPU needed.")
@click.option("--arch", metavar="LIST", callback=_arch, help="Targets for --compile-only: e.g. gfx942,gfx1100,sm_90; "
              "'all' = every target the knowledge base lists. Default: the GPUs `check` finds.")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(0, 2**63 - 1), help="Seed of inputs (and shapes).")
@python_option("Run the suite with another interpreter's torch and Triton (e.g. the venv `install` made).")
@click.option("--distributed", is_flag=True, help="Run on every rank of a torchrun/srun job, check collectives, and "
              "print one table on rank 0.")
@click.option("--rank-timeout", default=300.0, show_default=True, type=click.FloatRange(5, 86400),
              help="With --distributed: seconds rank 0 waits for each rank (and the collectives' timeout).")
@click.option("--collective-max-mib", default=256.0, show_default=True, type=click.FloatRange(0.001, 65536),
              help="With --distributed: largest collective message, MiB (sizes go from 1 KiB up by 8x).")
@click.option("--fail-rank", type=int, hidden=True, help="Test hook: this rank adds a wrong-result case.")
@click.option("--hang-rank", type=int, hidden=True, help="Test hook: this rank does not answer in time.")
@click.option("--broken", type=click.Choice(["wrong", "crash"]), hidden=True,
              help="Add a deliberately broken case (tests the reporting path).")
@click.pass_context
def command(ctx: click.Context, device: str, preset: str, max_seconds: float | None, only: tuple[str, ...],
            with_compile: bool, as_json: bool, junit: str | None, plot: str | None, save: str | None, compile_only: bool,
            arch: list[str] | None, seed: int, python: str | None, distributed: bool, rank_timeout: float,
            collective_max_mib: float, fail_rank: int | None, hang_rank: int | None, broken: str | None, tune: bool) -> None:
    """Run fused Triton kernels: correct on this device? how fast against torch and the hardware's own ceilings?

    Kernels: GEMM (+bias, ReLU, GELU, dropout epilogues), add-multiply, bias+GELU+dropout+residual, RMSNorm, LayerNorm,
    softmax, SwiGLU, attention forward; each result checked against an fp32/fp64 torch reference.

    \b
    Examples:
      rocm-triton-doctor smoke                         # quick preset on the GPU (or the CPU interpreter)
      rocm-triton-doctor smoke --device cpu --json     # correctness only, in Triton's interpreter
      rocm-triton-doctor smoke --preset seed --compile # the published seed shapes, vs eager and torch.compile
      rocm-triton-doctor smoke --preset random --seed 7 # 6 random odd shapes per kernel
      rocm-triton-doctor smoke --compile-only --arch gfx942,gfx1100,sm_90
      rocm-triton-doctor smoke --model tiny-llama      # train a model: PyTorch vs torch.compile vs our kernels
    """
    usage_check(ctx, arch is None or compile_only, "--arch is only meaningful with --compile-only")
    if python and os.path.abspath(python) != os.path.abspath(sys.executable):
        from rocm_triton_doctor.smoke.reexec import reexec_in

        reexec_in(python)  # the other interpreter re-parses and validates everything below
    if plot and not (compile_only or distributed):
        usage_check(ctx, importlib.util.find_spec("matplotlib") is not None,
                    "--plot needs matplotlib: pip install 'rocm-triton-doctor[plot]'")
        usage_check(ctx, device != "cpu", "--plot needs GPU timings; --device cpu has none")
    device, kernels = ("cuda" if device == "gpu" else device), tuple(split(only))
    if distributed:
        return _distributed(device, preset, kernels, as_json, save, rank_timeout, collective_max_mib, fail_rank, hang_rank)
    if compile_only:
        from rocm_triton_doctor.smoke import aot
        targets = arch or aot.local_targets()
        usage_check(ctx, bool(targets), "no GPU found to compile for: name targets with --arch (e.g. gfx942,gfx1100) "
                    "or --arch all")
        try:
            result = aot.run(targets, kernels)
        except ValueError as exc:  # an unknown --only kernel
            raise Usage(str(exc), ctx) from None
        from rocm_triton_doctor.smoke import render as smoke_render
        finish(result, as_json=as_json, human=lambda con: smoke_render.aot_report(result, con))
    from rocm_triton_doctor.smoke import command as suite

    try:
        with spinner(not as_json, "starting…") as status:
            result, report = suite.run(suite.SmokeOptions(device, preset, kernels, with_compile, seed, save, junit,
                                                          plot, broken, max_seconds, tune),
                                       (lambda m, i, n: status.update(f"[{i + 1}/{n}] {m}")) if status else None)
    except ValueError as exc:  # an unknown --only kernel, found before any case runs
        raise Usage(str(exc), ctx) from None
    from rocm_triton_doctor.smoke import render

    finish(result, as_json=as_json, human=(lambda con: render.table(report, con)) if report else None)


def _distributed(device: str, preset: str, only: tuple[str, ...], as_json: bool, save: str | None,
                 rank_timeout: float, max_mib: float, fail_rank: int | None, hang_rank: int | None) -> Any:
    from rocm_triton_doctor.smoke import distributed
    result = distributed.run_rank(device, preset, only, rank_timeout, max_mib, fail_rank, hang_rank, save)
    if result is None:  # not rank 0: rank 0 reports for everyone
        sys.exit(0)
    from rocm_triton_doctor import render

    render.emit(result, as_json=as_json, human=lambda con: distributed.table(result.to_dict(), con))
    sys.stdout.flush()
    os._exit(int(result.exit_code))  # do not wait for a hung rank's collectives to time out on teardown
