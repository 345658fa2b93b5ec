"""The fault matrix's engine: hostile surroundings and fake broken stacks, built once; cases run as real subprocesses
of the doctor, in parallel; every run checked for the contract (issue #18).

A Case is one (fault, command) cell. Its args, env and cwd may name fixtures as `{name}` (see Fixtures). Every run,
whatever the case, must end with an exit code the case allows, no 'Traceback' and no 'internal error' on stderr,
within its time limit; an error ends in one clear line on stderr. Cases add what they need (text that must or must
not appear, files that must not change).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "tests" / "fixtures" / "scenarios"
COMMANDS = ("check", "install", "smoke", "report", "fleet")
WORKERS = max(2, min(6, (os.cpu_count() or 2) * 2))  # the runs mostly wait on imports and subprocesses


@dataclass(frozen=True)
class Case:
    fault: str
    command: str  # one of COMMANDS: the column of the matrix
    args: tuple[str, ...]
    rc: frozenset[int]
    env: Mapping[str, str | None] = field(default_factory=dict)  # None: unset the variable
    cwd: str = "{work}"
    stdout: str = "pipe"  # pipe | closed (a pipe whose reader is gone) | full (/dev/full)
    has: tuple[str, ...] = ()  # must appear in stdout + stderr
    lacks: tuple[str, ...] = ()  # must not appear in stdout + stderr (secrets, wrong claims)
    one_line_error: bool = False  # stderr is exactly one non-empty line
    unchanged: tuple[str, ...] = ()  # paths whose lstat (type, mode, inode, rdev, link target) must not change
    timeout: float = 90.0
    files_lack: tuple[tuple[str, str], ...] = ()  # (path, text): after the run the file must not contain text

    @property
    def id(self) -> str:
        return f"{self.fault}/{self.command}"


@dataclass(frozen=True)
class Result:
    case: Case
    rc: int | None
    stdout: str
    stderr: str
    seconds: float
    before: dict[str, object]
    after: dict[str, object]
    files: dict[str, str]


class Fixtures:
    """Fake packages, fake interpreters, fake ROCm tools and snapshots, under one temporary directory."""

    def __init__(self, base: Path):
        self.base = base
        self.paths: dict[str, str] = {"work": str(self._dir("work")), "python": sys.executable, "root": str(ROOT)}
        self.paths["home"] = str(self._dir("home"))
        self.paths["cache"] = str(self._dir("cache"))
        self._fake_stacks()
        self._fake_tools()
        self._snapshots()
        self._fleet()
        self._readonly_cwd()

    def _dir(self, name: str) -> Path:
        d = self.base / name
        d.mkdir(parents=True, exist_ok=True)
        return d

    def fmt(self, text: str) -> str:
        return text.format(**self.paths)

    # -- fake torch / triton -------------------------------------------------------------------------------------
    BEHAVIOUR = {
        "raise": "raise ImportError('libtorch_cpu.so: undefined symbol: _ZN3c104impl')\n",
        "segv": "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n",
        "hang": "import time\ntime.sleep(90)\n",  # far beyond every limit used; short enough to never linger
    }

    def _fake_stacks(self) -> None:
        for pkg in ("torch", "triton"):
            for how, body in self.BEHAVIOUR.items():
                site = self._dir(f"site-{pkg}-{how}")
                d = site / pkg
                d.mkdir(exist_ok=True)
                (d / "__init__.py").write_text(body)
                if pkg == "torch":
                    (d / "version.py").write_text("__version__ = '2.13.0+cpu'\ncuda = None\nhip = None\n")
                # A target interpreter: the real one with the fake package first on its path (as a venv would be).
                py = self.base / f"python-{pkg}-{how}"
                py.write_text(f'#!/bin/sh\nPYTHONPATH="{site}${{PYTHONPATH:+:$PYTHONPATH}}" exec {sys.executable} "$@"\n')
                py.chmod(0o755)
                self.paths[f"py_{pkg}_{how}"] = str(py)
        # A torch whose import works, next to a triton that does not: the working CPU torch of this venv is found
        # after the fake triton on sys.path.

    # -- fake ROCm tools -----------------------------------------------------------------------------------------
    TOOLS = ("rocminfo", "rocm-smi", "amd-smi", "rocm_agent_enumerator")

    def _fake_tools(self) -> None:
        bodies = {
            "garbage": "printf '\\377\\376garbage \\033[31m%%s\\n' \"$0\"; head -c 2000 /dev/urandom | tr -d '\\000'; exit 0\n",
            "hang": "sleep 45\n",
            "crash": "echo 'ROCk module is loaded'\nkill -SEGV $$\n",
        }
        for how, body in bodies.items():
            d = self._dir(f"bin-{how}")
            for t in self.TOOLS:
                p = d / t
                p.write_text("#!/bin/sh\n" + body)
                p.chmod(0o755)
            self.paths[f"bin_{how}"] = f"{d}:{os.environ.get('PATH', '/usr/bin:/bin')}"

    # -- snapshots -----------------------------------------------------------------------------------------------
    SECRETS = {"HF_TOKEN": "hf_abcSECRET1234", "AWS_SECRET_ACCESS_KEY": "awsSECRETvalue99",
               "PIP_INDEX_URL": "https://alice:hunter2pw@pypi.corp/simple", "GITHUB_TOKEN": "ghp_0123456789abcdefSECRET",
               "DB_PASSWORD": "pgSECRETpass"}
    SECRET_VALUES = ("hf_abcSECRET1234", "awsSECRETvalue99", "hunter2pw", "ghp_0123456789abcdefSECRET", "pgSECRETpass",
                     "bearerSECRETtoken", "/home/alice")

    def _snapshots(self) -> None:
        d = self._dir("snaps")
        base = json.loads((SCENARIOS / "rx7900xtx-healthy.json").read_text())
        secret = json.loads(json.dumps(base))
        secret["env"] = {**secret.get("env", {}), **self.SECRETS}
        secret.setdefault("commands", {})["rocminfo"] = {
            "argv": ["rocminfo"], "returncode": 0, "stderr": "",
            "stdout": (secret["commands"].get("rocminfo") or {}).get("stdout", "") if isinstance(
                secret["commands"].get("rocminfo"), dict) else "",
        }
        secret["commands"]["rocminfo"]["stderr"] = ("curl -H 'Authorization: Bearer bearerSECRETtoken' "
                                                     "https://bob:hunter2pw@mirror/x HF_TOKEN=hf_abcSECRET1234")
        secret.setdefault("files", {})["/etc/pip.conf"] = "[global]\nindex-url = https://alice:hunter2pw@pypi.corp/simple\n"
        py = secret.setdefault("python", {})
        py["executable"] = "/home/alice/venv/bin/python"
        self._write(d / "secrets.json", secret)
        self.paths["snap_secrets"] = str(d / "secrets.json")
        self._write(d / "schema-only.json", {"schema": "rocm-triton-doctor/snapshot/1"})
        self.paths["snap_schema_only"] = str(d / "schema-only.json")
        for name, bad in WRONG_SECTIONS.items():
            self._write(d / f"wrong-{name}.json", {**base, name: bad})
            self.paths[f"snap_wrong_{name}"] = str(d / f"wrong-{name}.json")
        for name, (section, value) in WRONG_NESTED.items():
            snap = json.loads(json.dumps(base))
            sec = snap.setdefault(section, {})
            sec.update(value)
            self._write(d / f"nested-{name}.json", snap)
            self.paths[f"snap_nested_{name}"] = str(d / f"nested-{name}.json")
        corrupt = self._dir("corrupt-cache")
        (corrupt / "last-smoke.json").write_text("{bad")
        self.paths["corrupt_cache"] = str(corrupt)
        self.paths["corrupt_smoke"] = str(corrupt / "last-smoke.json")
        corrupt2 = self._dir("corrupt-cache-smoke")
        (corrupt2 / "last-smoke.json").write_text("\x00\xff not json")
        self.paths["corrupt_cache_smoke"] = str(corrupt2)
        self.paths["scenario_cpu"] = str(SCENARIOS / "cpu-only.json")
        self.paths["scenario_amd"] = str(SCENARIOS / "rx7900xtx-healthy.json")

    @staticmethod
    def _write(path: Path, data: Any) -> None:
        path.write_text(json.dumps(data, indent=1))

    def _fleet(self) -> None:
        """Two identical CPU nodes' `check --json`, one of which also has the doctor installed next to its torch: the
        doctor is no Triton, so the fleet shows no Triton drift between them (defect 9)."""
        d = self._dir("fleet")
        snaps = self._dir("fleet-snaps")
        base = json.loads((SCENARIOS / "cpu-only.json").read_text())
        for host, with_doctor in (("node-a", True), ("node-b", False)):
            snap = json.loads(json.dumps(base))
            snap.setdefault("system", {})["hostname"] = host
            dists = snap.setdefault("python", {}).setdefault("distributions", {})
            if with_doctor:
                dists["rocm-triton-doctor"] = {"version": "0.1.0", "requires": []}
            else:
                dists.pop("rocm-triton-doctor", None)
            self._write(snaps / f"{host}.json", snap)
            res = subprocess.run([sys.executable, "-m", "rocm_triton_doctor", "check", "--snapshot",
                                  str(snaps / f"{host}.json"), "--json"], capture_output=True, text=True,
                                 timeout=120, cwd=ROOT, env=base_env(self))
            (d / f"{host}.json").write_text(res.stdout)
        self.paths["fleet"] = str(d)

    def _readonly_cwd(self) -> None:
        """A directory where nothing can be created. chmod does not stop root, so a read-only mount is looked for."""
        for cand in ("/sys", "/proc"):
            try:
                with open(os.path.join(cand, ".rtd-write-test"), "w"):
                    pass
            except OSError:
                self.paths["readonly"] = cand
                return
            os.unlink(os.path.join(cand, ".rtd-write-test"))
        ro = self._dir("readonly")
        ro.chmod(0o555)
        self.paths["readonly"] = str(ro)


# Every snapshot section with a value of the wrong type (docs/snapshot.md: each section is an object).
WRONG_SECTIONS: dict[str, Any] = {"python": 5, "env": [], "files": "x", "paths": 7, "commands": [1], "user": "root",
                                  "runtime": 3, "which": [], "system": True}
# One level down: the walk's examples (defect 17) and one per section.
WRONG_NESTED: dict[str, tuple[str, dict[str, Any]]] = {
    "python-executable": ("python", {"executable": 5}),
    "python-dists": ("python", {"distributions": {"torch": 7}}),
    "env-list": ("env", {"HSA_OVERRIDE_GFX_VERSION_1": ["x"]}),
    "files-number": ("files", {"x": 3}),
    "paths-number": ("paths", {"/dev/kfd": 14}),
    "user-groups": ("user", {"groups": 5}),
    "commands-rc": ("commands", {"rocminfo": {"argv": ["rocminfo"], "returncode": "x", "stdout": ""}}),
    "runtime-devices": ("runtime", {"devices": "gpu0"}),
    "which-number": ("which", {"rocminfo": 1}),
    "system-hostname": ("system", {"hostname": 5}),
}


def base_env(fx: Fixtures) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "RTD_", "TRITON_", "LC_"))}
    env.update({"PYTHONPATH": str(ROOT), "HOME": fx.paths["home"], "RTD_CACHE_DIR": fx.paths["cache"],
                "PIP_CONFIG_FILE": os.devnull, "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"})
    env.pop("PYTHONIOENCODING", None)
    return env


def _lstat(path: str) -> object:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    link = os.readlink(path) if stat.S_ISLNK(st.st_mode) else None
    return (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_ino, st.st_rdev, link)


def run(case: Case, fx: Fixtures) -> Result:
    env = base_env(fx)
    for k, v in case.env.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = fx.fmt(v)
    argv = [sys.executable, "-m", "rocm_triton_doctor", *(fx.fmt(a) for a in case.args)]
    unchanged = [fx.fmt(p) for p in case.unchanged]
    before = {p: _lstat(p) for p in unchanged}
    t0 = time.monotonic()
    stdout_target: Any = subprocess.PIPE
    if case.stdout == "full":
        stdout_target = open("/dev/full", "w")  # noqa: SIM115 - closed below
    elif case.stdout == "closed":
        r, w = os.pipe()
        os.close(r)  # the reader is gone before the doctor writes a byte: `doctor | head -0`
        stdout_target = w
    try:
        proc = subprocess.run(argv, stdout=stdout_target, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                              env=env, cwd=fx.fmt(case.cwd), timeout=case.timeout, check=False)
        rc: int | None = proc.returncode
        out = proc.stdout.decode("utf-8", "replace") if isinstance(proc.stdout, bytes) else ""
        err = proc.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as exc:
        rc, out = None, ""
        err = (exc.stderr or b"").decode("utf-8", "replace") + f"\n[timed out after {case.timeout} s]"
    finally:
        if case.stdout == "full":
            stdout_target.close()
        elif case.stdout == "closed":
            os.close(stdout_target)
    files = {}
    for path, _text in case.files_lack:
        p = fx.fmt(path)
        try:
            files[p] = Path(p).read_text(errors="replace")
        except OSError:
            files[p] = ""
    after = {p: _lstat(p) for p in unchanged}
    return Result(case, rc, out, err, time.monotonic() - t0, before, after, files)


def problems(res: Result, fx: Fixtures) -> list[str]:
    """Everything wrong with one run; empty when the cell holds."""
    c, out = res.case, []
    both = res.stdout + res.stderr
    if res.rc not in c.rc:
        out.append(f"exit code {res.rc}, expected {sorted(c.rc)}")
    for bad in ("Traceback", "internal error"):
        if bad in res.stderr:
            out.append(f"{bad!r} on stderr")
    for text in c.has:
        if fx.fmt(text) not in both:
            out.append(f"missing {text!r}")
    for text in c.lacks:
        if fx.fmt(text) in both:
            out.append(f"must not print {text!r}")
    if c.one_line_error:
        lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
        if len(lines) != 1:
            out.append(f"expected one line on stderr, got {len(lines)}")
    for p in res.before:
        if res.before[p] != res.after[p]:
            out.append(f"{p} changed: {res.before[p]} -> {res.after[p]}")
    for path, text in c.files_lack:
        if fx.fmt(text) in res.files.get(fx.fmt(path), ""):
            out.append(f"{path} contains {text!r}")
    if out:
        out.append(f"stderr: {res.stderr[-1500:]!r}\nstdout: {res.stdout[-1500:]!r}")
    return out


def run_all(cases: list[Case], fx: Fixtures) -> dict[str, Result]:
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        return dict(zip((c.id for c in cases), pool.map(lambda c: run(c, fx), cases)))


def cleanup(fx: Fixtures) -> None:
    ro = Path(fx.paths["readonly"])
    if ro.is_relative_to(fx.base):
        ro.chmod(0o755)
    shutil.rmtree(fx.base, ignore_errors=True)
