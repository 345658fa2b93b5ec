"""Option groups that a command module would otherwise spell out itself (cli/check.py stays under the 120-line limit of
tests/cli/test_layout.py)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

from rocm_triton_doctor.cli._shared import usage_check


def workload_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Where `check` probes: `--root DIR`, and `--pid PID` / `--unit NAME` (issue #15), which the command receives as
    one `workload=(pid, unit)` argument, checked here (one of the two, and only when probing this machine)."""
    @click.option("--unit", metavar="NAME", help="Compare this shell's GPU variables with a systemd unit's "
                  "(Environment=, EnvironmentFile=), e.g. ollama.service.")
    @click.option("--pid", type=click.IntRange(1), metavar="PID", help="Compare this shell's GPU variables with the "
                  "environment of a running process (/proc/PID/environ; needs its user or sudo).")
    @click.option("--root", type=click.Path(exists=True, file_okay=False), default="/", show_default=True,
                  help="Read /sys, /dev, /etc, /opt under DIR instead of / (testing, chroots, mounted images).")
    @functools.wraps(fn)
    def wrapper(*args: Any, pid: int | None, unit: str | None, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        usage_check(ctx, not (pid and unit), "--pid and --unit are mutually exclusive")
        usage_check(ctx, not ((pid or unit) and (kwargs.get("snapshot_path") or kwargs.get("from_text"))),
                    "--pid/--unit read this machine: they do not go with --snapshot or --from-text")
        return fn(*args, workload=(pid, unit), **kwargs)

    return wrapper


def suite_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`smoke` suite options that live here to keep cli/smoke.py under its line limit: `--max-seconds`, `--tune`."""
    fn = click.option("--tune", is_flag=True, help="First fill this GPU's autotune cache for the preset's tunable "
                      "cases (GEMM, attention): candidates timed and checked, the fastest kept (docs/smoke.md).")(fn)
    return click.option("--max-seconds", type=click.FloatRange(1),
                        help="Start no new case after this many seconds (says so).")(fn)


__all__ = ["suite_options", "workload_options"]
