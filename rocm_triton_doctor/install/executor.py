"""Apply an install plan without ever leaving the user worse off.

1. Resolve and DOWNLOAD every wheel the plan needs (the target interpreter's own pip, so tags match). A network or
   resolver failure here changes nothing.
2. Snapshot the environment (hard links, see env.py) and record `pip freeze`.
3. Uninstall what the plan removes; install from the downloaded wheelhouse only (--no-index).
4. Any failure in 3 (pip error, conflict, killed process, Ctrl-C, SIGTERM, SIGHUP) restores the snapshot — same
   `pip freeze`, torch imports as before — or, for a venv this run created, removes it. The temporary wheelhouse
   (hundreds of MB for a ROCm torch) and the snapshot folders are removed however the run ends.

SIGTERM (a CI job's timeout, `kill`) and SIGHUP (a closed terminal or SSH session) used to end the process on the
spot, leaving a half-changed environment, the wheelhouse and `site-packages.rtd-backup-*` behind (issue #18,
defect 10). While `apply` runs they raise `Interrupted`, which takes the same path as Ctrl-C; while the restore
itself runs, further signals are held back until it is done.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

from rocm_triton_doctor.install import env as envmod
from rocm_triton_doctor.install.plan import Plan

Progress = Callable[[str], None]


class InstallFailed(Exception):
    """The install did not complete; the environment was restored (the message says so).

    `signum` is the signal that stopped it (SIGINT for Ctrl-C), or None; the CLI may exit 128+signum."""

    def __init__(self, message: str, signum: int | None = None):
        super().__init__(message)
        self.signum = signum


class Interrupted(BaseException):  # noqa: N818 - a BaseException like KeyboardInterrupt, not an error
    """SIGTERM or SIGHUP arrived while the install ran."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


_STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def _stop_signals_raise() -> Iterator[None]:
    """SIGTERM and SIGHUP raise Interrupted (as Ctrl-C raises KeyboardInterrupt) for the duration."""
    if threading.current_thread() is not threading.main_thread():  # signal handlers live in the main thread only
        yield
        return

    def handler(signum: int, _frame: object) -> None:
        raise Interrupted(signum)

    old = {s: signal.signal(s, handler) for s in _STOP_SIGNALS}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@contextlib.contextmanager
def _held_signals() -> Iterator[None]:
    """While restoring: a second Ctrl-C/SIGTERM/SIGHUP must not abandon a half-restored environment."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    sigs = (signal.SIGINT, *_STOP_SIGNALS)
    old = {s: signal.signal(s, signal.SIG_IGN) for s in sigs}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@dataclass
class Outcome:
    python: str
    log: str
    installed: dict[str, str] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)
    restored: bool = False
    seconds: float = 0.0


def log_path() -> str:
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "rocm-triton-doctor"
    try:
        base.mkdir(parents=True, exist_ok=True)
    except OSError:
        base = Path(tempfile.gettempdir())
    return str(base / f"install-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log")


def _index_args(plan: Plan) -> list[str]:
    args: list[str] = []
    if plan.offline:
        args.append("--no-index")
    elif plan.index_url:
        args += ["--index-url", plan.index_url]
        u = urlsplit(plan.index_url)
        if u.scheme == "http" and u.hostname:
            args += ["--trusted-host", u.hostname]  # loopback mirrors only (plan.check_url)
    if plan.find_links:
        args += ["--find-links", plan.find_links]
    return args


def _run(argv: list[str], log: str, progress: Progress | None, what: str) -> int:
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(f"\n$ {' '.join(argv)}\n")
        fh.flush()
        env = {k: v for k, v in os.environ.items() if k not in ("PIP_REQUIRE_VIRTUALENV",)}
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        env["PYTHONUNBUFFERED"] = "1"
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                fh.write(line)
                if progress and line.strip():
                    progress(f"{what}: {line.strip()[:100]}")
            return proc.wait()
        except BaseException:
            try:  # pip may already be gone (a signal sent to the whole process group)
                proc.kill()
            except ProcessLookupError:
                pass
            proc.wait()
            raise


def freeze(python: str) -> dict[str, str]:
    code = ("import json, importlib.metadata as m; "
            "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions() if d.metadata['Name']}))")
    import json

    res = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=120)
    return {k.lower().replace("_", "-"): v for k, v in json.loads(res.stdout or "{}").items()}


def installer_argv(python: str, installer: str) -> list[str]:
    if installer == "uv":
        uv = shutil.which("uv")
        if not uv:
            raise InstallFailed("--installer uv was asked for but uv is not on PATH; nothing was changed")
        return [uv, "pip"]
    return [python, "-m", "pip"]


def apply(plan: Plan, installer: str = "pip", progress: Progress | None = None, log: str | None = None) -> Outcome:
    with _stop_signals_raise():
        return _apply(plan, installer, progress, log)


def _apply(plan: Plan, installer: str, progress: Progress | None, log: str | None) -> Outcome:
    t0 = time.monotonic()
    log = log or log_path()
    try:
        target = envmod.prepare(plan.python, plan.venv)
    except envmod.EnvError as exc:
        raise InstallFailed(f"{exc}; nothing was changed") from None
    except (KeyboardInterrupt, Interrupted) as exc:  # prepare removed a venv it was creating
        sig = exc.signum if isinstance(exc, Interrupted) else int(signal.SIGINT)
        raise InstallFailed(f"interrupted by {signal.Signals(sig).name}; nothing was changed", sig) from None
    out = Outcome(target.python, log)
    py_flag = ["--python", target.python] if installer == "uv" else []
    wheelhouse: str | None = None
    snapshot: envmod.EnvBackup | None = None
    try:
        wheelhouse = tempfile.mkdtemp(prefix="rtd-wheels-")
        # 1. download everything first
        if progress:
            progress("downloading wheels")
        dl = [target.python, "-m", "pip", "download", "--dest", wheelhouse, "--only-binary=:all:",
              *_index_args(plan), *plan.installs]
        if _run(dl, log, progress, "download") != 0:
            raise InstallFailed(f"could not download the wheels ({_last_error(log)}); nothing was changed. "
                                f"Full log: {log}")
        before = freeze(target.python)
        # 2. snapshot (an environment we just created needs none: on failure it is removed)
        if not target.created:
            if progress:
                progress("snapshotting the environment")
            snapshot = envmod.EnvBackup(target.dirs)
        # 3. change
        removals = [s.name for s in plan.removals if s.name in before]
        if removals:
            argv = [*installer_argv(target.python, installer), "uninstall", *py_flag]
            argv += ["-y", *removals] if installer == "pip" else removals
            if _run(argv, log, progress, "uninstall") != 0:
                raise _Rollback(f"pip uninstall failed ({_last_error(log)})")
            out.removed = removals
        argv = [*installer_argv(target.python, installer), "install", *py_flag, "--no-index", "--find-links",
                wheelhouse, *plan.installs]
        rc = _run(argv, log, progress, "install")
        if rc != 0:
            why = f"killed by signal {-rc}" if rc < 0 else _last_error(log)
            raise _Rollback(f"pip install failed ({why})")
        after = freeze(target.python)
        out.installed = {k: v for k, v in after.items() if before.get(k) != v}
        if snapshot:
            snapshot.discard()
        out.seconds = time.monotonic() - t0
        return out
    except (_Rollback, KeyboardInterrupt, Interrupted) as exc:
        signum: int | None = None
        if isinstance(exc, Interrupted):
            signum = exc.signum
        elif isinstance(exc, KeyboardInterrupt):
            signum = int(signal.SIGINT)
        reason = str(exc) if isinstance(exc, _Rollback) else "interrupted" + (
            f" by {signal.Signals(signum).name}" if signum and signum != signal.SIGINT else "")
        with _held_signals():
            _undo(target, snapshot)
            if wheelhouse:
                shutil.rmtree(wheelhouse, ignore_errors=True)
        out.restored = True
        state = ("the new virtual environment was removed" if target.created
                 else "the environment was restored as it was")
        raise InstallFailed(f"{reason}; {state}. Full log: {log}", signum) from None
    except InstallFailed:
        if target.created:
            shutil.rmtree(target.root or "", ignore_errors=True)
        raise
    finally:
        if wheelhouse:
            shutil.rmtree(wheelhouse, ignore_errors=True)


class _Rollback(Exception):
    pass


def _undo(target: envmod.InstallTarget, snapshot: envmod.EnvBackup | None) -> None:
    if target.created and target.root:
        shutil.rmtree(target.root, ignore_errors=True)
    elif snapshot is not None:
        snapshot.restore()


def _last_error(log: str) -> str:
    try:
        lines = [ln.strip() for ln in Path(log).read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "see the log"
    errors = [ln for ln in lines if ln.startswith("ERROR") or "Error" in ln.split(":")[0]]
    return (errors[-1] if errors else (lines[-1] if lines else "no output"))[:300]
