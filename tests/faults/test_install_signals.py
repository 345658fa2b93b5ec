"""Defect 10 of the newcomer walk: `install` killed by SIGTERM (a CI timeout) or SIGHUP (a closed terminal) restored
nothing and left a half-made venv, wheelhouses of ~193 MB in the temp folder and `site-packages.rtd-backup-*`. Now it
restores exactly as Ctrl-C does. Real processes, real pip, the loopback index of the install tests, real signals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from rocm_triton_doctor.install import executor
from tests.install import wheelhouse
from tests.faults.engine import ROOT, SCENARIOS
from tests import venvs

DRIVER = r"""
import dataclasses, json, sys
from rocm_triton_doctor.check.facts import build_facts
from rocm_triton_doctor.check.probes.collect import Collector
from rocm_triton_doctor.install import executor
from rocm_triton_doctor.install.plan import Options, make_plan

scenario, py, index, venv = sys.argv[1:5]
snap = json.load(open(scenario))
snap.pop("runtime", None)
if py != "-":
    snap["python"] = Collector(python=py, runtime=False).python_env()
opts = Options(torch="2.9.1", index_url=index, with_=("torchaudio",), venv=None if venv == "-" else venv)
plan = make_plan(build_facts(snap), opts, "%d.%d.%d" % sys.version_info[:3], sys.executable)
if py != "-":
    plan = dataclasses.replace(plan, python=py)
try:
    executor.apply(plan, progress=lambda m: print("STEP", m.split(":")[0], flush=True))
except executor.InstallFailed as exc:
    print("FAILED", exc.signum, exc, flush=True)
    sys.exit(5)
print("DONE", flush=True)
"""


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    wheels = wheelhouse.build(tmp_path_factory.mktemp("wheels"))
    root = tmp_path_factory.mktemp("index")
    wheelhouse.write_index(wheels, root)
    with wheelhouse.serve(root) as url:
        yield url


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    (tmp / "tmpdir").mkdir(exist_ok=True)
    env.update({"PYTHONPATH": str(ROOT), "PIP_CONFIG_FILE": os.devnull, "TMPDIR": str(tmp / "tmpdir"),
                "XDG_CACHE_HOME": str(tmp / "cache")})
    return env


def _wait_for_child(proc: subprocess.Popen[str], words: tuple[str, ...], timeout: float = 180) -> None:
    """Until a descendant of proc has all `words` on its command line (pip doing the step we want to interrupt)."""
    me = psutil.Process(proc.pid)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        for p in me.children(recursive=True):
            try:
                cmd = p.cmdline()
            except psutil.Error:
                continue
            if all(w in cmd for w in words):
                return
        time.sleep(0.02)
    raise AssertionError(f"never saw {words}; driver output: {proc.communicate()[0] if proc.poll() is not None else ''}")


def _venv_with_cuda_torch(path: Path, index: str) -> str:
    py = venvs.make(path)
    subprocess.run([py, "-m", "pip", "install", "-q", "--index-url", index, "--trusted-host", "127.0.0.1", "torch===2.9.1"],
                   check=True, timeout=300, env={**os.environ, "PIP_CONFIG_FILE": os.devnull})
    return py


@pytest.mark.slow
@pytest.mark.parametrize("sig,group", [(signal.SIGTERM, False), (signal.SIGHUP, True)], ids=["SIGTERM", "SIGHUP-group"])
def test_signal_mid_install_restores_and_cleans_up(index: str, tmp_path: Path, sig: signal.Signals, group: bool) -> None:
    py = _venv_with_cuda_torch(tmp_path / "env", index)
    before = executor.freeze(py)
    proc = subprocess.Popen([sys.executable, "-c", DRIVER, str(SCENARIOS / "cuda-torch-on-amd.json"), py, index, "-"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=_env(tmp_path), cwd=ROOT,
                            start_new_session=True)
    _wait_for_child(proc, ("install", "--no-index"))
    time.sleep(0.5)  # pip is writing files now (the torchaudio wheel has 30000 of them)
    if group:  # a closed terminal: the whole session gets SIGHUP, pip included
        os.killpg(proc.pid, sig)
    else:  # `kill` / a CI runner's timeout: only the doctor
        os.kill(proc.pid, sig)
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 5, out
    assert f"FAILED {int(sig)} interrupted by {sig.name}; the environment was restored as it was" in out, out
    assert executor.freeze(py) == before
    res = subprocess.run([py, "-c", "import torch, triton; print(torch.__version__, triton.__version__)"],
                         capture_output=True, text=True, timeout=60)
    assert res.stdout.split() == ["2.9.1", "3.5.1"], res.stderr
    assert not list((tmp_path / "env").rglob("*.rtd-backup-*")) and not list((tmp_path / "env").rglob("*.rtd-trash"))
    assert not list((tmp_path / "tmpdir").glob("rtd-wheels-*")), "the temporary wheelhouse was left behind"


@pytest.mark.slow
def test_sigterm_while_downloading_into_a_new_venv_removes_it(index: str, tmp_path: Path) -> None:
    venv = tmp_path / "new-venv"
    proc = subprocess.Popen([sys.executable, "-c", DRIVER, str(SCENARIOS / "rx7900xtx-healthy.json"), "-", index, str(venv)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=_env(tmp_path), cwd=ROOT,
                            start_new_session=True)
    _wait_for_child(proc, ("download",))
    os.kill(proc.pid, signal.SIGTERM)
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 5 and "interrupted by SIGTERM; the new virtual environment was removed" in out, out
    assert not venv.exists(), "a half-made venv was left behind"
    assert not list((tmp_path / "tmpdir").glob("rtd-wheels-*")), "the temporary wheelhouse was left behind"


def test_held_signals_defer_nothing_outside_apply() -> None:
    """The handlers are the caller's again once apply() returns: SIGTERM is not swallowed for the rest of the run."""
    old = signal.getsignal(signal.SIGTERM)
    with executor._stop_signals_raise():
        assert signal.getsignal(signal.SIGTERM) is not old
    assert signal.getsignal(signal.SIGTERM) is old
    assert json.dumps(executor.InstallFailed("x", 15).signum) == "15"
