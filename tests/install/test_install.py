"""`install` against a real PEP 503 index on 127.0.0.1 serving small generated wheels, with real pip and real
virtual environments. No internet, no GPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any
from collections.abc import Iterator

import psutil
import pytest

from rocm_triton_doctor.check.facts import Facts, build_facts
from rocm_triton_doctor.install import executor, lock
from rocm_triton_doctor.install.plan import BadOption, NoWheel, Options, make_plan
from rocm_triton_doctor.check.probes.collect import Collector
from rocm_triton_doctor.result import status_for_error

from . import wheelhouse
from ..conftest import SCENARIOS, load_scenario
from .. import venvs

ROOT = Path(__file__).resolve().parents[2]
PY = ".".join(map(str, sys.version_info[:3]))
GOLDEN_PLANS = Path(__file__).parents[1] / "fixtures" / "golden" / "plans"


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return wheelhouse.build(tmp_path_factory.mktemp("wheels"))


@pytest.fixture(scope="module")
def index(wheels: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("index")
    wheelhouse.write_index(wheels, root)
    with wheelhouse.serve(root) as url:
        yield url


@pytest.fixture(autouse=True)
def isolated_pip(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the test index: no pip.conf, no find-links or extra indexes from the machine."""
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    for var in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL"):
        monkeypatch.delenv(var, raising=False)


def venv_with(path: Path, index: str, *reqs: str) -> str:
    py = venvs.make(path)
    if reqs:
        subprocess.run([py, "-m", "pip", "install", "-q", "--index-url", index, "--trusted-host", "127.0.0.1", *reqs],
                       check=True, timeout=300)
    return py


def freeze(py: str) -> dict[str, str]:
    return executor.freeze(py)


def facts_for(scenario: str, python: str | None) -> Facts:
    """A scenario's machine, with its Python section replaced by a live probe of `python` (when given)."""
    snap = load_scenario(scenario)
    snap.pop("runtime", None)
    if python:
        snap["python"] = Collector(python=python, runtime=False).python_env()
    return build_facts(snap)


def amd_plan(facts: Facts, **kw: Any) -> Any:
    return make_plan(facts, Options(**kw), PY, sys.executable)


def test_fresh_venv(index: str, tmp_path: Path) -> None:
    env = tmp_path / "env"
    plan = amd_plan(facts_for("rx7900xtx-healthy", None), torch="2.9.1", index_url=index, venv=str(env))
    assert plan.installs == ["torch==2.9.1+rocm6.4", "pytorch-triton-rocm==3.5.1"] and plan.triton == "pytorch-triton-rocm==3.5.1"
    out = executor.apply(plan)
    got = freeze(out.python)
    assert got["torch"] == "2.9.1+rocm6.4" and got["pytorch-triton-rocm"] == "3.5.1"
    assert Path(out.log).exists()


def test_replace_cuda_torch(index: str, tmp_path: Path) -> None:
    py = venv_with(tmp_path / "env", index, "torch===2.9.1")
    assert freeze(py)["torch"] == "2.9.1" and "triton" in freeze(py)
    facts = facts_for("cuda-torch-on-amd", py)
    plan = replace(amd_plan(facts, torch="2.9.1", index_url=index), python=py)
    assert {s.name for s in plan.removals} == {"torch", "triton"}
    executor.apply(plan)
    got = freeze(py)
    assert got["torch"] == "2.9.1+rocm6.4" and got["pytorch-triton-rocm"] == "3.5.1" and "triton" not in got


def test_remove_duplicate_triton(index: str, tmp_path: Path) -> None:
    py = venv_with(tmp_path / "env", index, "torch==2.9.1+rocm6.4", "triton==3.5.1")
    assert {"triton", "pytorch-triton-rocm"} <= set(freeze(py))
    plan = replace(amd_plan(facts_for("rx7900xtx-healthy", py), torch="2.9.1", index_url=index), python=py)
    # pytorch-triton-rocm too: uninstalling triton deletes files of triton/ that both own; it is reinstalled clean
    assert [s.name for s in plan.removals] == ["triton", "pytorch-triton-rocm"]
    executor.apply(plan)
    got = freeze(py)
    assert "triton" not in got and got["pytorch-triton-rocm"] == "3.5.1"
    # exactly one distribution owns triton/ again, and it is the ROCm one
    probe = Collector(python=py, runtime=False).python_env()
    assert probe["triton_owners"] == ["pytorch-triton-rocm"]


def test_offline_from_wheelhouse(wheels: Path, tmp_path: Path) -> None:
    plan = amd_plan(facts_for("rx7900xtx-healthy", None), torch="2.9.1", find_links=str(wheels), offline=True,
                    venv=str(tmp_path / "env"))
    assert plan.index_url is None
    out = executor.apply(plan)
    assert freeze(out.python)["torch"] == "2.9.1+rocm6.4"


def test_index_down_changes_nothing(index: str, tmp_path: Path) -> None:
    py = venv_with(tmp_path / "env", index, "torch===2.9.1")
    before = freeze(py)
    dead = "http://127.0.0.1:9/simple"  # discard port: connection refused
    plan = replace(amd_plan(facts_for("cuda-torch-on-amd", py), torch="2.9.1", index_url=dead), python=py)
    with pytest.raises(executor.InstallFailed, match="nothing was changed"):
        executor.apply(plan)
    assert freeze(py) == before
    fresh = tmp_path / "fresh"
    plan = amd_plan(facts_for("rx7900xtx-healthy", None), torch="2.9.1", index_url=dead, venv=str(fresh))
    with pytest.raises(executor.InstallFailed):
        executor.apply(plan)
    assert not fresh.exists()  # the half-made venv is gone


def test_no_wheel_for_this_python() -> None:
    with pytest.raises(NoWheel, match=r"no ROCm wheel for Python 3\.16\.0; supported: Python 3\.\d+–3\.15"):
        make_plan(facts_for("rx7900xtx-healthy", None), Options(), "3.16.0", "python3.16")


def test_bad_options() -> None:
    f = facts_for("rx7900xtx-healthy", None)
    with pytest.raises(BadOption, match="refused"):
        make_plan(f, Options(index_url="http://mirror.example.com/simple"), PY, sys.executable)
    with pytest.raises(BadOption, match="--find-links"):
        make_plan(f, Options(offline=True), PY, sys.executable)
    with pytest.raises(BadOption, match="--with"):
        make_plan(f, Options(with_=("xformers",)), PY, sys.executable)


def test_pip_killed_mid_install_restores_everything(index: str, tmp_path: Path) -> None:
    py = venv_with(tmp_path / "env", index, "torch===2.9.1")
    before = freeze(py)
    plan = replace(amd_plan(facts_for("cuda-torch-on-amd", py), torch="2.9.1", index_url=index,
                            with_=("torchaudio",)), python=py)
    killed: list[int] = []

    def killer() -> None:
        me = psutil.Process()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not killed:
            for p in me.children(recursive=True):
                try:
                    cmd = p.cmdline()
                except psutil.Error:
                    continue
                if "install" in cmd and "--no-index" in cmd:
                    time.sleep(0.5)  # let it start writing files
                    p.kill()
                    killed.append(p.pid)
                    return
            time.sleep(0.02)

    t = threading.Thread(target=killer)
    t.start()
    with pytest.raises(executor.InstallFailed, match="killed by signal 9.*restored"):
        executor.apply(plan)
    t.join()
    assert killed
    assert freeze(py) == before
    res = subprocess.run([py, "-c", "import torch, triton; print(torch.__version__, triton.__version__)"],
                         capture_output=True, text=True, timeout=60)
    assert res.stdout.split() == ["2.9.1", "3.5.1"]
    assert not list(Path(tmp_path / "env").rglob("*.rtd-backup-*"))  # no snapshot left behind


def test_lock_then_from_lock_roundtrip(index: str, tmp_path: Path) -> None:
    facts = facts_for("rx7900xtx-healthy", None)
    plan = amd_plan(facts, torch="2.9.1", index_url=index, venv=str(tmp_path / "a"))
    out = executor.apply(plan)
    lf = tmp_path / "stack.lock"
    lock.write(str(lf), plan, freeze(out.python), facts)
    data = lock.read(str(lf))
    assert data["packages"] == {"pytorch-triton-rocm": "3.5.1", "torch": "2.9.1+rocm6.4"}
    assert data["verified_on"]["gfx"] == ["gfx1100"]
    assert lock.compatible(data, "amd", PY, facts) == []
    plan2 = make_plan(facts, Options(torch=data["packages"]["torch"], index_url=data["index_url"],
                                     venv=str(tmp_path / "b")), PY, sys.executable)
    plan2.installs = [f"{n}=={v}" for n, v in data["packages"].items()]
    out2 = executor.apply(plan2)
    assert {k: v for k, v in freeze(out2.python).items() if k in data["packages"]} == data["packages"]
    # a machine that differs in a way that matters is refused
    with pytest.raises(lock.LockError, match="Python"):
        lock.compatible({**data, "python": "3.9"}, "amd", PY, facts)
    with pytest.raises(lock.LockError, match="not in the locked torch's arch list"):
        lock.compatible(data, "amd", PY, facts_for("strix-halo-rocm6-wheel", None))
    with pytest.raises(lock.LockError, match="nvidia"):
        lock.compatible(data, "nvidia", PY, facts)


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rocm_triton_doctor", "install", *args], capture_output=True,
                          text=True, timeout=600, cwd=ROOT, env=env or os.environ.copy(), stdin=subprocess.DEVNULL)


def test_cli_install_verify_and_lock_on_this_machine(index: str, tmp_path: Path) -> None:
    """End to end on the CPU-only development/CI machine: plan (CPU build) -> install from the mirror -> verify."""
    lf = tmp_path / "cpu.lock"
    res = cli("--venv", str(tmp_path / "env"), "--index-url", index, "--yes", "--json", "--lock", str(lf))
    data = json.loads(res.stdout)
    assert res.returncode == data["exit_code"] == 0, data
    assert data["installed"]["torch"] == "2.15.0+cpu"
    assert data["plan"]["platform"] == "cpu" and Path(data["log"]).exists()
    assert json.loads(lf.read_text())["packages"] == {"torch": "2.15.0+cpu"}
    # The CPU build brings no Triton, and smoke needs it: "Next:" says how to get it first (issue #18 defect 1).
    assert "-m pip install triton" in data["next"] and "rocm-triton-doctor smoke --python" in data["next"]


def test_cli_refuses_without_yes_and_without_terminal(tmp_path: Path, index: str) -> None:
    res = cli("--venv", str(tmp_path / "env"), "--index-url", index)
    assert res.returncode == 2 and "--yes" in res.stderr and not (tmp_path / "env").exists()
    res = cli("--index-url", "http://example.com/simple", "--dry-run")
    assert res.returncode == 2 and "refused" in res.stderr


@pytest.mark.parametrize("name", sorted(p.stem for p in SCENARIOS.glob("*.json")))
def test_golden_dry_run_plans(name: str, update_golden: bool) -> None:
    res = cli("--snapshot", str(SCENARIOS / f"{name}.json"), "--dry-run", "--json", "--venv", "/tmp/rocm-env")
    data = json.loads(res.stdout.replace(sys.executable, "<python>"))  # no machine-specific paths in goldens
    assert res.returncode == data["exit_code"]
    # The uniform head every envelope has now (result.py) is not part of the older plan goldens: check it here.
    assert data["command"] == "install" and data["findings"] == [] and data["tool_version"]
    assert data["status"] == ("planned" if data["exit_code"] == 0 else status_for_error(data["exit_code"]))
    golden = json.loads((GOLDEN_PLANS / f"{name}.json").read_text()) if not update_golden else data
    data = {k: v for k, v in data.items() if k in golden or k not in ("command", "status", "tool_version", "findings")}
    path = GOLDEN_PLANS / f"{name}.json"
    if update_golden or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    assert json.loads(path.read_text()) == data, f"{name}: plan changed; review and rerun with --update-golden"
