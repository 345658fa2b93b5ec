"""Command line: one module per command (parse options, call one function, render the Result, exit).

This module holds the Click group and `main()` (the console-script entry point `rocm_triton_doctor.cli:main`):
every way a command can end abnormally ends the same way in every command (cli/_exits.py, result.py ExitCode):
Ctrl-C/SIGTERM/SIGHUP -> one line, exit 128+N (130/143/129); stdout closed by the reader (`| head -1`) -> quiet,
exit 141; stdout on a full disk -> one line, exit 3; any Click usage error -> one line, exit 2; any uncaught
exception -> one line, exit 4 (RTD_DEBUG=1 shows the traceback).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from rocm_triton_doctor import __version__, render
from rocm_triton_doctor.cli import _exits
from rocm_triton_doctor.cli._shared import CONTEXT, Usage


class _Group(click.Group):
    """Maps interrupts, closed pipes and usage errors inside any command before Click's own handlers see them (Click
    turns Ctrl-C into "Aborted!" exit 1, a closed pipe into exit 1, and a bad value into three lines of usage)."""

    def invoke(self, ctx: click.Context) -> Any:
        render.safe_streams()
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as exc:
            _exits.interrupted(exc)
        except BrokenPipeError:
            _exits.broken_pipe()
        except click.UsageError as exc:
            if isinstance(exc, Usage):
                raise
            raise Usage(exc.format_message(), exc.ctx) from None


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
    3 could not check, 4 the doctor crashed, 130/143/129 interrupted by
    SIGINT/SIGTERM/SIGHUP, 141 output pipe closed.
    """


def _register() -> None:
    from rocm_triton_doctor.cli import check, fleet, install, report, smoke

    for mod in (check, install, smoke, report, fleet):
        cli.add_command(mod.command)


_register()


def main(argv: Sequence[str] | None = None) -> None:
    _exits.install_handlers()
    try:
        try:
            cli.main(args=list(argv) if argv is not None else None, prog_name="rocm-triton-doctor", standalone_mode=True)
        finally:
            _exits.flush_stdout()  # a full disk is reported here, not lost in the interpreter's exit flush
    except SystemExit:
        raise
    except KeyboardInterrupt as exc:
        _exits.interrupted(exc)
    except BrokenPipeError:
        _exits.broken_pipe()
    except Exception as exc:
        if _exits.is_full(exc):
            _exits.output_failed(exc)  # type: ignore[arg-type]
        _exits.crashed(exc)
