"""checks/probes.py: one test per severity the check can give."""

from __future__ import annotations

from ..conftest import one, severities


def test_probe_timeout_warn_for_a_hung_tool() -> None:
    f = one("probe-timeout", commands={"rocminfo": {"argv": ["rocminfo"], "timed_out": True, "returncode": None}})
    assert (f.severity.value, f.title) == ("warn", "rocminfo did not answer in time and was stopped")
    assert f.fix is not None and f.fix.needs_sudo


def test_probe_timeout_warn_for_a_failed_python_probe() -> None:
    assert severities("probe-timeout", python={"error": "no such interpreter"}) == ["warn"]


def test_probe_timeout_ok() -> None:
    f = one("probe-timeout", commands={"rocminfo": {"argv": ["rocminfo"], "returncode": 0, "stdout": ""}})
    assert (f.severity.value, f.title) == ("ok", "1 tool(s) answered: rocminfo")
