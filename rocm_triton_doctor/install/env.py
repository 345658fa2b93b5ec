"""The target environment: create a venv, find its directories, and snapshot/restore them transactionally.

A snapshot hard-links every file of site-packages and the scripts directory into a sibling folder. pip removes a
file before writing a new one (pip/_internal/operations/install/wheel.py unlinks existing destination files), so the
linked copies keep the old contents: restoring is a rename, and the snapshot costs no disk space.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


class EnvError(Exception):
    """The environment cannot be prepared or protected; nothing was changed."""


@dataclass(frozen=True)
class InstallTarget:
    python: str
    dirs: tuple[str, ...]  # purelib, platlib, scripts (deduplicated, existing)
    created: bool  # a venv this run created (removed again on failure)
    root: str | None  # the venv directory, if any


def interpreter_paths(python: str) -> tuple[str, tuple[str, ...], str]:
    code = ("import json, sys, sysconfig; p = sysconfig.get_paths(); "
            "print(json.dumps({'version': '%d.%d.%d' % sys.version_info[:3], 'dirs': [p['purelib'], p['platlib'], "
            "p['scripts']]}))")
    try:
        res = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EnvError(f"cannot run {python}: {exc}") from None
    if res.returncode != 0:
        raise EnvError(f"cannot run {python}: {(res.stderr.strip().splitlines() or ['?'])[-1]}")
    data = json.loads(res.stdout)
    dirs = tuple(dict.fromkeys(os.path.realpath(d) for d in data["dirs"] if os.path.isdir(d)))
    return data["version"], dirs, python


def venv_python(path: str) -> str:
    return str(Path(path) / "bin" / "python")


def prepare(python: str, venv: str | None) -> InstallTarget:
    if venv:
        root = os.path.abspath(os.path.expanduser(venv))
        if os.path.exists(root):
            if not os.path.exists(os.path.join(root, "pyvenv.cfg")):
                raise EnvError(f"{root} exists and is not a virtual environment; choose another --venv path")
            _, dirs, _ = interpreter_paths(venv_python(root))
            return InstallTarget(venv_python(root), dirs, False, root)
        try:
            res = subprocess.run([python, "-m", "venv", root], capture_output=True, text=True, timeout=300)
            if res.returncode != 0:
                raise EnvError(f"cannot create a virtual environment at {root}: "
                               f"{(res.stderr.strip().splitlines() or ['?'])[-1]}")
            _, dirs, _ = interpreter_paths(venv_python(root))
        except BaseException:  # a failure, Ctrl-C or SIGTERM mid-creation: no half-made venv is left behind
            shutil.rmtree(root, ignore_errors=True)
            raise
        return InstallTarget(venv_python(root), dirs, True, root)
    _, dirs, _ = interpreter_paths(python)
    return InstallTarget(python, dirs, False, None)


class EnvBackup:
    """Hard-link copies of the target's directories, swapped back in by restore()."""

    def __init__(self, dirs: tuple[str, ...]):
        self.pairs: list[tuple[str, str]] = []
        stamp = time.strftime("%Y%m%d-%H%M%S")
        for d in dirs:
            if not os.access(os.path.dirname(d), os.W_OK) or not os.access(d, os.W_OK):
                raise EnvError(f"{d} is not writable by this user; use --venv PATH to install into a fresh "
                               "virtual environment")
            backup = f"{d}.rtd-backup-{stamp}"
            try:
                shutil.copytree(d, backup, symlinks=True, copy_function=_link_or_copy)
            except BaseException as exc:  # an error or a signal mid-copy: no half-made backup is left behind
                shutil.rmtree(backup, ignore_errors=True)
                self.discard()
                if isinstance(exc, OSError):
                    raise EnvError(f"cannot snapshot {d} before changing it: {exc}") from None
                raise
            self.pairs.append((d, backup))

    def restore(self) -> None:
        for d, backup in self.pairs:
            trash = f"{d}.rtd-trash"
            shutil.rmtree(trash, ignore_errors=True)
            if os.path.exists(d):
                os.rename(d, trash)
            os.rename(backup, d)
            shutil.rmtree(trash, ignore_errors=True)
        self.pairs = []

    def discard(self) -> None:
        for _, backup in self.pairs:
            shutil.rmtree(backup, ignore_errors=True)
        self.pairs = []


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)
