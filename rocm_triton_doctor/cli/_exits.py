"""How every command ends abnormally, the same way in every command (result.py ExitCode; docs/output.md):

* Ctrl-C (SIGINT), SIGTERM (a CI timeout, `kill`), SIGHUP (a closed terminal) -> one line, exit 128 + the signal's
  number (130, 143, 129), as a shell reports it; SIGTERM and SIGHUP are raised as `Terminated`, a KeyboardInterrupt,
  so every cleanup written for Ctrl-C runs for them too (issue #18 §5);
* stdout closed by its reader (`| head -1`) -> silent, exit 141; on a full disk -> one line, exit 3 (undelivered);
* anything else uncaught -> one line, exit 4 (RTD_DEBUG=1 re-raises for a traceback).
"""

from __future__ import annotations

import atexit
import errno
import os
import signal
import sys
import threading
from typing import NoReturn

import click

from rocm_triton_doctor.result import ExitCode

# Write errors that mean "the output has nowhere to go", not "the doctor is broken".
FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
RECEIVED: list[int] = []  # the signals _raise turned into exceptions (smoke/runner.py's import guard reads it)


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where Ctrl-C would raise KeyboardInterrupt (same cleanup, own exit code)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise(signum: int, _frame: object) -> None:
    # Tools run in their own sessions, so the terminal's signal never reaches them, and a thread pool's exit waits
    # for them: stop them here, at once, or an interrupted `check` waits out each tool's --timeout.
    runner = sys.modules.get("rocm_triton_doctor.check.probes.runner")
    if runner is not None:
        runner.kill_running()
    RECEIVED.append(signum)
    raise KeyboardInterrupt if signum == signal.SIGINT else Terminated(signum)


def install_handlers() -> None:
    """SIGTERM and SIGHUP raise Terminated, SIGINT KeyboardInterrupt as usual. A signal the caller set to be ignored
    (`nohup` ignores SIGHUP) stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig, default in ((signal.SIGINT, signal.default_int_handler), (signal.SIGTERM, signal.SIG_DFL),
                         (signal.SIGHUP, signal.SIG_DFL)):
        if signal.getsignal(sig) == default:
            signal.signal(sig, _raise)


def interrupted(exc: BaseException) -> NoReturn:
    signum = getattr(exc, "signum", None) or int(signal.SIGINT)
    word = "interrupted" if signum == signal.SIGINT else f"terminated by {signal.Signals(signum).name}"
    if threading.current_thread() is threading.main_thread():  # a second signal must not cut the exit short
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
    try:
        click.echo(f"rocm-triton-doctor: {word}", err=True)
    except (OSError, ValueError):
        pass
    code = 128 + signum
    # Once a KeyboardInterrupt has passed through C-level evaluation (torch, Triton), CPython ends the process with
    # SIGINT after finalisation whatever sys.exit said (Py_RunMain: _Py_UnhandledKeyboardInterrupt). An atexit hook
    # runs after the worker threads are joined (so a probe's child is still stopped at its timeout) and pins the code.
    atexit.register(_exit_now, code)
    sys.exit(code)


def _exit_now(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed or full stream has nothing left to flush
            pass
    os._exit(code)


def _stdout_to_devnull() -> None:
    # Python docs, "Note on SIGPIPE": point stdout at /dev/null so the flush at exit cannot fail a second time.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except Exception:  # noqa: BLE001 - a captured stdout has no file descriptor
        pass


def broken_pipe() -> NoReturn:
    _stdout_to_devnull()
    sys.exit(int(ExitCode.BROKEN_PIPE))


def is_full(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in FULL


def output_failed(exc: OSError) -> NoReturn:
    _stdout_to_devnull()
    click.echo(f"rocm-triton-doctor: cannot write the output: {exc.strerror or exc}", err=True)
    sys.exit(int(ExitCode.COULD_NOT_CHECK))


def flush_stdout() -> None:
    """Deliver buffered output now, while a failure can still be reported (not in the interpreter's exit flush)."""
    if sys.stdout is not None and not sys.stdout.closed:
        sys.stdout.flush()


def crashed(exc: Exception) -> NoReturn:
    if os.environ.get("RTD_DEBUG"):
        raise exc
    click.echo(f"rocm-triton-doctor: internal error: {type(exc).__name__}: {exc} "
               "(set RTD_DEBUG=1 for a traceback; please report it)", err=True)
    sys.exit(int(ExitCode.CRASHED))
