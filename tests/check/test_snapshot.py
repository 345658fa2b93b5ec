"""check/snapshot.py: loading and validating a snapshot, saving it atomically, and the evidence accessors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rocm_triton_doctor.check import snapshot
from rocm_triton_doctor.check.facts import Status
from rocm_triton_doctor.check.snapshot import CommandRun, SnapshotError

from .conftest import minimal_snapshot

ROOT = Path(__file__).resolve().parents[2]


def test_load_rejects_what_it_cannot_use(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match="not found"):
        snapshot.load(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(SnapshotError, match="not valid JSON"):
        snapshot.load(bad)
    bad.write_text(json.dumps({"schema": "rocm-triton-doctor/snapshot/99"}))
    with pytest.raises(SnapshotError, match="not supported"):
        snapshot.load(bad)
    bad.write_text(json.dumps({"schema": snapshot.SCHEMA, "files": []}))
    with pytest.raises(SnapshotError, match="'files' must be a JSON object"):
        snapshot.load(bad)


def test_save_then_load_round_trips(tmp_path: Path) -> None:
    snap = minimal_snapshot(env={"ROCM_PATH": "/opt/rocm"})
    snapshot.save(snap, tmp_path / "s.json")
    assert snapshot.load(tmp_path / "s.json") == snap
    assert not (tmp_path / "s.json.tmp").exists()


def test_file_accessor_statuses() -> None:
    snap = minimal_snapshot(files={"/a": "text", "/b": None, "/c": {"error": "EACCES"}, "/d": 3})
    assert snapshot.file(snap, "/a").value == "text"
    assert snapshot.file(snap, "/b").status is Status.ABSENT
    assert (snapshot.file(snap, "/c").status, snapshot.file(snap, "/c").error) == (Status.ERROR, "EACCES")
    assert snapshot.file(snap, "/d").status is Status.ERROR
    assert snapshot.file(snap, "/e").status is Status.UNKNOWN
    assert snapshot.file(minimal_snapshot(), "/a").status is Status.UNKNOWN


def test_path_accessor_statuses() -> None:
    snap = minimal_snapshot(paths={"/dev/kfd": {"exists": True, "mode": "0o20666"}, "/x": {"exists": False}, "/y": None})
    assert snapshot.path(snap, "/dev/kfd").value == {"exists": True, "mode": "0o20666"}
    assert snapshot.path(snap, "/x").status is Status.ABSENT and snapshot.path(snap, "/y").status is Status.ABSENT
    assert snapshot.path(snap, "/z").status is Status.UNKNOWN


def test_command_accessor_and_the_command_list() -> None:
    snap = minimal_snapshot(commands={"rocminfo": {"argv": ["rocminfo"], "returncode": 0, "stdout": "x"},
                                      "amd-smi": {"argv": ["amd-smi"], "missing": True}, "nvidia-smi": None,
                                      "pasted": "text a user pasted", "odd": 5})
    run = snapshot.command(snap, "rocminfo")
    assert run.value == CommandRun("rocminfo", ("rocminfo",), 0, False, False, None, "x", "") and run.source == "rocminfo"
    assert snapshot.command(snap, "amd-smi").status is Status.ABSENT
    assert snapshot.command(snap, "nvidia-smi").status is Status.ABSENT
    assert snapshot.command(snap, "pasted").value.stdout == "text a user pasted"  # type: ignore[union-attr]
    assert snapshot.command(snap, "odd").status is Status.ERROR
    assert [c.name for c in snapshot.commands(snap)] == ["rocminfo", "pasted"]


def test_snapshot_imports_first_without_a_cycle() -> None:
    # snapshot.py imports facts.base while every facts topic imports snapshot: either may be imported first.
    for first in ("rocm_triton_doctor.check.snapshot", "rocm_triton_doctor.check.facts.gpus"):
        res = subprocess.run([sys.executable, "-c", f"import {first}"], capture_output=True, text=True, timeout=60,
                             cwd=ROOT)
        assert res.returncode == 0, res.stderr
