"""Which Python environment to inspect when the user named none: the doctor's own, unless it has no torch.

The README installs the doctor into its own small venv, so inspecting "the Python running the doctor" made every
newcomer's first verdict "torch is not installed" with a bare `pip install` (issue #18, defect 19). When the
doctor's own environment has no torch, the environments a user most likely means are searched, nearest first:
an activated one ($VIRTUAL_ENV, $CONDA_PREFIX), .venv/venv/env in the current directory and its parents,
~/.virtualenvs/*, ~/miniconda3/envs/*, ~/anaconda3/envs/* (and the base installs), `conda env list` when conda is on
PATH, and python3 on PATH. Detection is static (a torch/ package in the environment's site-packages), so the search
costs milliseconds; only python3 on PATH and conda are asked, with a timeout.
"""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass

from rocm_triton_doctor.check.probes.runner import Runner, run_command

ENV_DIRS = (".venv", "venv", "env")
MAX_PARENTS = 6  # cwd and up to this many parents: enough for a project tree, never a crawl of the disk


@dataclass(frozen=True)
class Candidate:
    python: str
    where: str  # how it was found: "./.venv", "$VIRTUAL_ENV", "conda env list", ...
    torch: str | None  # the torch version installed there, None when none


def torch_in_prefix(prefix: str) -> str | None:
    """torch's version in an environment directory, from its dist-info name; '?' when only the package is there."""
    for sp in sorted(glob.glob(os.path.join(prefix, "lib", "python3*", "site-packages"))):
        if not os.path.isfile(os.path.join(sp, "torch", "__init__.py")):
            continue
        infos = sorted(glob.glob(os.path.join(sp, "torch-*.dist-info")))
        if infos:
            return os.path.basename(infos[-1])[len("torch-"):-len(".dist-info")]
        return "?"
    return None


def _python_of(prefix: str) -> str | None:
    for name in ("python", "python3"):
        p = os.path.join(prefix, "bin", name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def _prefixes(environ: Mapping[str, str], cwd: str, home: str | None, runner: Runner) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for var in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        if environ.get(var):
            out.append((environ[var], f"${var}"))
    here = os.path.abspath(cwd)
    for depth in range(MAX_PARENTS + 1):
        for d in ENV_DIRS:
            rel = os.path.join(*([".."] * depth), d) if depth else os.path.join(".", d)
            out.append((os.path.join(here, d), rel))
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    if home:
        for pattern, label in ((".virtualenvs/*", "~/.virtualenvs"), ("miniconda3/envs/*", "~/miniconda3/envs"),
                               ("anaconda3/envs/*", "~/anaconda3/envs"), ("miniforge3/envs/*", "~/miniforge3/envs")):
            out += [(p, label) for p in sorted(glob.glob(os.path.join(home, pattern)))]
        out += [(os.path.join(home, base), f"~/{base}") for base in ("miniconda3", "anaconda3", "miniforge3")]
    conda = shutil.which("conda", path=environ.get("PATH", os.defpath))
    if conda:
        res = runner([conda, "env", "list", "--json"], 10.0, dict(environ))
        try:
            envs = json.loads(res.stdout).get("envs", []) if res.returncode == 0 else []
        except (json.JSONDecodeError, AttributeError):
            envs = []
        out += [(str(e), "conda env list") for e in envs if isinstance(e, str)]
    py3 = shutil.which("python3", path=environ.get("PATH", os.defpath))
    if py3:
        res = runner([py3, "-c", "import sys; print(sys.prefix)"], 10.0, dict(environ))
        if res.returncode == 0 and res.stdout.strip():
            out.append((res.stdout.strip().splitlines()[-1], "python3 on PATH"))
    return out


def search(environ: Mapping[str, str] | None = None, cwd: str | None = None, home: str | None = None,
           runner: Runner = run_command) -> list[Candidate]:
    """Python environments nearby, nearest first, deduplicated by interpreter."""
    environ = dict(os.environ if environ is None else environ)
    home = home if home is not None else environ.get("HOME")
    seen: set[str] = set()
    found: list[Candidate] = []
    for prefix, where in _prefixes(environ, cwd or _cwd(), home, runner):
        py = _python_of(prefix)
        if py is None:
            continue
        key = os.path.realpath(prefix)
        if key in seen:
            continue
        seen.add(key)
        found.append(Candidate(py, where, torch_in_prefix(prefix)))
    return found


def own_has_torch() -> bool:
    """Does the doctor's own interpreter see torch? find_spec only: nothing is imported."""
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


def choose(environ: Mapping[str, str] | None = None, cwd: str | None = None, own: str | None = None,
           own_torch: bool | None = None, runner: Runner = run_command) -> tuple[str, dict[str, object] | None]:
    """(the interpreter to inspect, a record of the search for the snapshot, or None when no search was needed)."""
    own = own or sys.executable
    if own_torch if own_torch is not None else own_has_torch():
        return own, None
    cands = search(environ, cwd, runner=runner)
    own_real = os.path.realpath(own)
    others = [c for c in cands if os.path.realpath(c.python) != own_real]
    with_torch = [c for c in others if c.torch]
    chosen = with_torch[0].python if with_torch else own
    record: dict[str, object] = {
        "own": own, "own_has_torch": False, "chosen": chosen,
        "candidates": [{"python": c.python, "where": c.where, "torch": c.torch} for c in others],
    }
    return chosen, record


def _cwd() -> str:
    try:
        return os.getcwd()
    except OSError:  # the current directory was removed under us
        return "/"
