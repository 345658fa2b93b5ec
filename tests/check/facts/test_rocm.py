"""facts/rocm.py: which system ROCm is installed."""

from __future__ import annotations

from rocm_triton_doctor.check.facts import RocmInstall, Status
from rocm_triton_doctor.check.facts.rocm import parse_rocm_version

from ..conftest import facts


def test_parse_rocm_version() -> None:
    assert parse_rocm_version("6.4.1-120\n") == "6.4.1"
    assert parse_rocm_version("garbage") is None


def test_rocm_path_wins_and_other_installs_are_listed() -> None:
    files = {"/opt/rocm-6.2.0/.info/version": "6.2.0-1\n", "/opt/rocm-6.4.0/.info/version": "6.4.0-1\n",
             "/opt/rocm/.info/version": "6.4.0-1\n"}
    f = facts(files=files, env={"ROCM_PATH": "/opt/rocm-6.2.0/"}, paths={"/opt/rocm": {"exists": True, "link": "rocm-6.4.0"}})
    assert f.rocm.value == RocmInstall("6.2.0", "/opt/rocm-6.2.0", (("/opt/rocm-6.2.0", "6.2.0"), ("/opt/rocm-6.4.0", "6.4.0")),
                                       "rocm-6.4.0")


def test_newest_versioned_install_without_the_link() -> None:
    files = {"/opt/rocm-6.10.0/.info/version": "6.10.0\n", "/opt/rocm-6.4.0/.info/version": "6.4.0\n"}
    f = facts(files=files)
    assert f.rocm.value is not None and (f.rocm.value.version, f.rocm.source) == ("6.10.0", "/opt/rocm-6.10.0")


def test_rocm_absent_error_unknown() -> None:
    assert facts(files={"/opt/rocm/.info/version": None}).rocm.status is Status.ABSENT
    assert facts(files={"/opt/rocm/.info/version": "?"}).rocm.status is Status.ERROR
    assert facts().rocm.status is Status.UNKNOWN
