"""`smoke` (the suite), end to end: run the kernels, keep the last result for `report`, write the requested files.
Returns one Result (and the report, for the human table); `cli/smoke.py` only parses, calls this, and renders."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from rocm_triton_doctor import outputs
from rocm_triton_doctor.result import ExitCode, Result
from rocm_triton_doctor.smoke import runner


@dataclass(frozen=True)
class SmokeOptions:
    device: str = "auto"  # auto | cpu | cuda
    preset: str = "quick"
    only: tuple[str, ...] = ()
    with_compile: bool = False
    seed: int = 0
    save: str | None = None
    junit: str | None = None
    plot: str | None = None
    broken: str | None = None
    max_seconds: float | None = None  # start no new case after this long (the GPU script's time budget)
    tune: bool = False  # fill the autotune cache first (smoke/tune.py)


def run(o: SmokeOptions, progress: Callable[[str, int, int], None] | None = None
        ) -> tuple[Result, runner.SmokeReport | None]:
    """ValueError (an unknown kernel) is left to the caller: it is a usage error."""
    try:
        report = runner.run_smoke(o.device, o.preset, o.only, o.with_compile, o.seed, progress, o.broken, o.max_seconds,
                                   o.tune)
    except runner.SmokeCannotStart as exc:
        return Result.error("smoke", str(exc), ExitCode.COULD_NOT_CHECK), None
    from rocm_triton_doctor.smoke import render

    result = report.to_result()
    runner.save_last(report)
    try:
        if o.save:
            outputs.write_text(o.save, json.dumps(result.to_dict(), indent=1))
        if o.junit:
            render.junit(report, o.junit)
        if o.plot:
            render.plot(report, o.plot)
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        return Result.error("smoke", f"cannot write output: {why}", ExitCode.COULD_NOT_CHECK), report
    return result, report
