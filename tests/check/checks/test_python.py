"""checks/python.py: one test per severity each check can give."""

from __future__ import annotations

from ..conftest import AMD_LIVE, one, rocm_python


def test_python_version_wheels_skip_without_python() -> None:
    assert one("python-version-wheels").title == "Python environment unknown"


def test_python_version_wheels_ok() -> None:
    f = one("python-version-wheels", files=AMD_LIVE, python=rocm_python("2.9.1+rocm6.4", version="3.12.3"))
    assert f.severity.value == "ok" and f.title.startswith("Python 3.12.3 has ROCm wheels up to torch ")


def test_python_version_wheels_fail_without_any_wheel() -> None:
    f = one("python-version-wheels", files=AMD_LIVE, python={"version": "3.7.17", "distributions": {}})
    assert (f.severity.value, f.title) == ("fail", "no ROCm torch wheel for Python 3.7.17")
    assert f.fix is not None and f.fix.commands[0].startswith("python3.12 -m venv")


def test_python_version_wheels_warn_for_an_old_python() -> None:
    f = one("python-version-wheels", files=AMD_LIVE, python={"version": "3.9.18", "distributions": {}})
    assert (f.severity.value, f.title) == ("warn", "Python 3.9.18 limits you to torch 2.8.0 on ROCm")


def test_python_version_wheels_info_beside_an_installed_rocm_torch() -> None:
    # A working ROCm torch in an old Python: the version limits upgrades only, nothing to fix now.
    f = one("python-version-wheels", files=AMD_LIVE, python=rocm_python("2.8.0+rocm6.4", version="3.9.18"))
    assert f.severity.value == "info" and f.fix is None


def test_python_version_wheels_skip_without_a_version() -> None:
    f = one("python-version-wheels", files=AMD_LIVE, python={"distributions": {}})
    assert f.severity.value == "skip" and "python --version" in f.detail
