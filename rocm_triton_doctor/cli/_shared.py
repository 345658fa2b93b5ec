"""What every command module shares: Click settings, the console, option validation (before any work), and the
two ways a command ends (`finish` with a Result, `fail` with one line). Issue #18: the same mistake gives the same
usage error (exit 2, one line) in every command."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NoReturn

import click

from rocm_triton_doctor import outputs, render
from rocm_triton_doctor.result import ExitCode, Result

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 110}
console = render.console


class Usage(click.UsageError):
    """A usage error shown as ONE line on stderr (exit 2): `rocm-triton-doctor CMD: message (see --help)`."""

    def show(self, file: Any = None) -> None:
        cmd = f" {self.ctx.info_name}" if self.ctx is not None and self.ctx.parent is not None else ""
        msg = self.format_message()
        click.echo(f"rocm-triton-doctor{cmd}: {msg}" + ("" if "(see " in msg else " (see --help)"), err=True)


@contextlib.contextmanager
def spinner(wanted: bool, text: str) -> Iterator[Any]:
    """A rich status line on stderr when it is a terminal (else None): progress never pollutes pipes or --json."""
    err = console(stderr=True)
    if not (wanted and err.is_terminal):
        yield None
        return
    with err.status(text) as status:
        yield status


def split(values: Sequence[str]) -> list[str]:
    return [v.strip() for item in values for v in item.split(",") if v.strip()]


def finish(result: Result, **how: Any) -> NoReturn:
    """Render `result` through the one renderer and exit with its code."""
    render.emit(result, **how)
    sys.exit(int(result.exit_code))


def fail(message: str, code: int, as_json: bool, command: str) -> NoReturn:
    """One clear line (and the same exit code in JSON), never a traceback."""
    finish(Result.error(command, message, code), as_json=as_json)


# -- validation (Click callbacks: they run while parsing, before the command does anything) -------------------

def python_problem(path: str) -> str | None:
    """Why `path` is not a runnable Python 3 interpreter, or None. One quick run (no site imports of ours)."""
    if os.path.abspath(path) == os.path.abspath(sys.executable):
        return None
    if not os.path.exists(path):
        return "no such file"
    if os.path.isdir(path):
        return "is a directory"
    if not os.access(path, os.X_OK):
        return "is not executable"
    try:
        res = subprocess.run([path, "-c", "import sys; print('rtd-python', sys.version_info[0])"], capture_output=True,
                             text=True, timeout=30, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return "did not answer within 30 s"
    except OSError as exc:
        return f"cannot be run ({exc.strerror or exc})"
    if "rtd-python 3" not in res.stdout:
        return "is not a Python 3 interpreter"
    return None


def _python(ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not ctx.resilient_parsing:
        problem = python_problem(value)
        if problem:
            raise Usage(f"--python {value}: {problem}", ctx)
    return value


def _output(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not ctx.resilient_parsing:
        try:
            outputs.check_path(value)
        except outputs.OutputPathError as exc:
            raise Usage(f"{param.opts[-1]}: {exc}", ctx) from None
    return value


def python_option(help: str) -> Callable[[Any], Any]:
    return click.option("--python", "python", metavar="PATH", callback=_python, help=help)


def output_option(*decls: str, help: str, metavar: str = "FILE") -> Callable[[Any], Any]:
    """A file the command writes (outputs.py: atomic, or through a device/FIFO/symlink; a directory is exit 2)."""
    return click.option(*decls, metavar=metavar, callback=_output, help=help)


def usage_check(ctx: click.Context, ok: bool, message: str) -> None:
    if not ok:
        raise Usage(message, ctx)


__all__ = ["CONTEXT", "ExitCode", "Usage", "console", "fail", "finish", "output_option", "python_option", "spinner", "split",
           "usage_check"]
