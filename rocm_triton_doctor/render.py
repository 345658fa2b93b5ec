"""The one renderer every command hands its Result to: --json (the envelope), Markdown (a text the command built),
or human text (the command's own table or report body, then nothing else), and the one-line error form.

It also owns the consoles and makes every print path safe in any locale: under LC_ALL=en_US.ISO-8859-1,
PYTHONIOENCODING=ascii or a serial console, characters the stream cannot encode become ASCII stand-ins ("✓" -> "+",
"—" -> "-") or "?", never a UnicodeEncodeError (newcomer-walk.md defect 6). TERM=dumb, NO_COLOR and COLUMNS are
honoured by rich itself.
"""

from __future__ import annotations

import codecs
import io
import os
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import click

from rocm_triton_doctor.result import Result

if TYPE_CHECKING:
    from rocm_triton_doctor.check.findings import Finding

ERRORS = "rtd-ascii"
# ASCII stand-ins for the few non-ASCII characters our own output uses; anything else becomes "?".
_ASCII = {"—": "-", "–": "-", "✓": "+", "✗": "x", "•": "*", "≠": "!=", "…": "...", "→": "->", "×": "x", "≥": ">=",
          "≤": "<=", "❌": "[x]", "⚠": "[!]", "✅": "[ok]", "ℹ": "[i]", "➖": "-", "\ufe0f": "", "│": "|", "─": "-",
          "µ": "u", "²": "^2", "³": "^3"}


def _fallback(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    return "".join(_ASCII.get(c, "?") for c in exc.object[exc.start:exc.end]), exc.end


codecs.register_error(ERRORS, _fallback)


def safe_streams() -> None:
    """Make stdout/stderr replace what their encoding cannot hold (called once per command, before any output)."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            try:
                stream.reconfigure(errors=ERRORS)
            except (ValueError, OSError):  # a closed or detached stream: nothing will be printed to it anyway
                pass


def console(stderr: bool = False) -> Any:
    from rich.console import Console as RichConsole  # only human output needs rich: keep --json start-up lean

    class Console(RichConsole):
        def on_broken_pipe(self) -> None:
            # rich's own handler exits 1, which reads as "problems found"; ours is the documented 141 (result.py).
            self.quiet = True
            raise BrokenPipeError

    no_color = bool(os.environ.get("NO_COLOR"))
    con = Console(stderr=stderr, no_color=no_color, highlight=False, soft_wrap=True)
    if not con.is_terminal:  # piped or captured: do not squeeze tables into 80 columns
        con = Console(stderr=stderr, no_color=no_color, highlight=False, soft_wrap=True, width=200)
    return con


def error_line(result: Result) -> str:
    return f"rocm-triton-doctor {result.command.split()[0]}: {result.message}"


def emit(result: Result, *, as_json: bool = False, markdown: str | None = None,
         human: Callable[[Any], None] | None = None, redact: Callable[[Any], Any] | None = None) -> None:
    """Print `result` in the form asked for. An error result is one line on stderr (or its envelope with --json)."""
    if as_json:
        click.echo(result.to_json() if redact is None else _dumps(redact(result.to_dict())))
    elif result.message:
        click.echo(error_line(result), err=True)
    elif markdown is not None:
        click.echo(markdown)
    elif human is not None:
        human(console())
    else:
        print_findings(console(), result.findings)


def _dumps(d: Any) -> str:
    import json

    return json.dumps(d, indent=2)


def print_findings(con: Any, findings: Iterable[Finding]) -> None:
    """Findings outside `check` (AOT audit, performance targets): one marked line each, id last, as `check` does."""
    from rich.text import Text

    from rocm_triton_doctor.check.render.human import MARK

    for f in findings:
        mark, style = MARK[f.severity]
        con.print(Text.assemble((f"{mark} ", f"bold {style}"), f.title, (f"  [{f.id}]", "dim")))
