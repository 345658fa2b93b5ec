"""Command line: one module per command (parse options, call one function, render the Result, exit).

This module holds the Click group and `main()` (the console-script entry point `rocm_triton_doctor.cli:main`):
every way a command can end abnormally ends the same way in every command (result.py ExitCode):
Ctrl-C -> one line, exit 130; stdout closed by the reader (`| head -1`) -> quiet, exit 141; any uncaught exception
-> one line, exit 4 (RTD_DEBUG=1 shows the traceback).
"""

from __future__ import annotations

import atexit
import os
import sys
from collections.abc import Sequence
from typing import Any

import click

from rocm_triton_doctor import __version__, render
from rocm_triton_doctor.cli._shared import CONTEXT
from rocm_triton_doctor.result import ExitCode


def _interrupted() -> None:
    click.echo("rocm-triton-doctor: interrupted", err=True)
    # Once a KeyboardInterrupt has passed through C-level evaluation (torch, Triton), CPython ends the process with
    # SIGINT after finalisation whatever sys.exit said (Py_RunMain: _Py_UnhandledKeyboardInterrupt). An atexit hook
    # runs after the worker threads are joined (so a probe's child is still stopped at its timeout) and pins 130.
    atexit.register(_exit_now, int(ExitCode.INTERRUPTED))
    sys.exit(int(ExitCode.INTERRUPTED))


def _exit_now(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed stream has nothing left to flush
            pass
    os._exit(code)


def _broken_pipe() -> None:
    # Python docs, "Note on SIGPIPE": point stdout at /dev/null so the flush at exit cannot fail a second time.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError, Exception):  # noqa: BLE001 - a captured stdout has no file descriptor
        pass
    sys.exit(int(ExitCode.BROKEN_PIPE))


class _Group(click.Group):
    """Maps interrupts, closed pipes and crashes inside any command before Click's own handlers see them (Click
    turns Ctrl-C into "Aborted!" exit 1 and a closed pipe into exit 1)."""

    def invoke(self, ctx: click.Context) -> Any:
        render.safe_streams()
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            _interrupted()
        except BrokenPipeError:
            _broken_pipe()


@click.group(cls=_Group, context_settings=CONTEXT)
@click.version_option(__version__, "-V", "--version", prog_name="rocm-triton-doctor")
def cli() -> None:
    """Get PyTorch + Triton working on AMD GPUs under ROCm, and prove it.

    \b
    After a fresh setup:
      check    what is wrong on THIS machine, and the command that fixes it
      install  the matching torch + Triton wheels, safely, verified
      smoke    fused Triton kernels: correct? how fast vs torch and the hardware?

    Exit codes (every command): 0 healthy, 1 problems found, 2 usage error,
    3 could not check, 4 the doctor crashed, 130 interrupted, 141 output pipe closed.
    """


def _register() -> None:
    from rocm_triton_doctor.cli import check, fleet, install, report, smoke

    for mod in (check, install, smoke, report, fleet):
        cli.add_command(mod.command)


_register()


def main(argv: Sequence[str] | None = None) -> None:
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="rocm-triton-doctor", standalone_mode=True)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        _interrupted()
    except BrokenPipeError:
        _broken_pipe()
    except Exception as exc:
        if os.environ.get("RTD_DEBUG"):
            raise
        click.echo(f"rocm-triton-doctor: internal error: {type(exc).__name__}: {exc} "
                   "(set RTD_DEBUG=1 for a traceback; please report it)", err=True)
        sys.exit(int(ExitCode.CRASHED))
