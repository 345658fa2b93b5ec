"""The one way the doctor runs an external command: argv list, never a shell, always a timeout.

A hung tool (a wedged `rocminfo` on a broken KFD is a classic) must not hang the doctor, so the child gets its own
process group and the whole group is killed when the timeout expires.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

MAX_OUTPUT = 512 * 1024  # keep snapshots small; rocminfo on an 8-GPU node is ~60 KiB

# Children still running. They live in their own sessions, so a terminal's Ctrl-C (or a SIGTERM/SIGHUP sent to the
# doctor's group) never reaches them: without kill_running() an interrupted `check` waited out each tool's timeout.
_LIVE: set[subprocess.Popen[bytes]] = set()
_LIVE_LOCK = threading.Lock()


def kill_running() -> None:
    """Kill every command still running (the doctor is ending on an interrupt; cli/_exits.py)."""
    with _LIVE_LOCK:
        procs = list(_LIVE)
    for proc in procs:
        _kill_group(proc)


@dataclass(frozen=True)
class CommandResult:
    argv: tuple[str, ...]
    returncode: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    missing: bool = False
    error: str | None = None  # e.g. "permission denied" when exec itself failed
    seconds: float = 0.0

    @property
    def crashed(self) -> str | None:
        """'SIGSEGV' (or another signal name) when the tool died of a signal instead of answering; else None."""
        return crash_signal(self.returncode)

    def to_dict(self) -> dict[str, object]:
        d: dict[str, object] = {
            "argv": list(self.argv),
            "returncode": self.returncode,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "timed_out": self.timed_out,
            "missing": self.missing,
        }
        if self.error:
            d["error"] = self.error
        if self.crashed:
            d["crashed"] = self.crashed
        return d


# Signals that mean "the program crashed" rather than "it was asked to stop". A shell wrapper (rocm-smi and amd-smi
# are Python scripts often started through one) reports a child killed by signal N as exit status 128+N (POSIX
# `wait` semantics as bash reports them), so both forms count.
_CRASH_SIGNALS = ("SIGSEGV", "SIGABRT", "SIGBUS", "SIGILL", "SIGFPE", "SIGKILL", "SIGTRAP", "SIGSYS")


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def crash_signal(returncode: object) -> str | None:
    """The signal a process died of, from its return code: -N (killed, as subprocess reports it) or 128+N for the
    crash signals above (a shell in between). None for an ordinary exit status."""
    if not isinstance(returncode, int) or isinstance(returncode, bool):
        return None
    if returncode < 0:
        return signal_name(-returncode)
    if 128 < returncode < 160 and signal_name(returncode - 128) in _CRASH_SIGNALS:
        return signal_name(returncode - 128)
    return None


class Runner(Protocol):
    def __call__(
        self, argv: Sequence[str], timeout: float, env: Mapping[str, str] | None = None
    ) -> CommandResult: ...


def _clip(data: bytes) -> str:
    text = data[:MAX_OUTPUT].decode("utf-8", errors="replace")
    if len(data) > MAX_OUTPUT:
        text += f"\n[... truncated {len(data) - MAX_OUTPUT} bytes]"
    return text


def run_command(argv: Sequence[str], timeout: float, env: Mapping[str, str] | None = None) -> CommandResult:
    """Run argv with a hard timeout; never raises."""
    argv = tuple(argv)
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
            start_new_session=True,
        )
    except FileNotFoundError:
        return CommandResult(argv, None, missing=True, seconds=time.monotonic() - start)
    except OSError as exc:  # permission denied, exec format error, ...
        return CommandResult(argv, None, error=f"{type(exc).__name__}: {exc.strerror or exc}",
                             seconds=time.monotonic() - start)
    with _LIVE_LOCK:
        _LIVE.add(proc)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        try:
            out, err = proc.communicate(timeout=1.0)
        except subprocess.TimeoutExpired:  # a grandchild kept the pipes open; give up on its output
            out, err = b"", b""
        return CommandResult(argv, None, _clip(out or b""), _clip(err or b""), timed_out=True,
                             seconds=time.monotonic() - start)
    finally:
        with _LIVE_LOCK:
            _LIVE.discard(proc)
    return CommandResult(argv, proc.returncode, _clip(out), _clip(err), seconds=time.monotonic() - start)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            proc.kill()
        except ProcessLookupError:
            pass
