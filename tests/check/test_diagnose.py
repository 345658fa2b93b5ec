"""diagnose(): findings -> verdict and exit code (crash 4, could not check 3, --strict)."""

from __future__ import annotations

from rocm_triton_doctor.check import diagnose
from rocm_triton_doctor.check.checks import INTERNAL_ERROR, by_id
from rocm_triton_doctor.check.checks.base import Check

from .conftest import minimal_snapshot, rocm_python


def test_crashing_check_becomes_internal_error_and_exit_4() -> None:
    def boom(_facts: object) -> list[object]:
        raise RuntimeError("kaboom")

    bad = Check("boom", "probes", "x", "y", "z", boom)  # type: ignore[arg-type]
    report = diagnose(minimal_snapshot(env={}), [bad, by_id()["hsa-override-format"]])
    ids = [f.id for f in report.findings]
    assert ids == [INTERNAL_ERROR, "hsa-override-format"]
    assert "kaboom" in report.findings[0].title
    assert int(report.verdict.exit_code) == 4


def test_only_skips_and_could_not_check() -> None:
    report = diagnose(minimal_snapshot(), [by_id()["hsa-override-format"]])
    assert report.verdict.status == "could-not-check" and int(report.verdict.exit_code) == 3


def test_strict_turns_warnings_into_exit_1() -> None:
    snap = minimal_snapshot(env={"LD_LIBRARY_PATH": "/opt/rocm/lib"}, python=rocm_python("2.8.0+rocm6.4"))
    assert int(diagnose(snap, [by_id()["ld-library-path-rocm"]]).verdict.exit_code) == 0
    assert int(diagnose(snap, [by_id()["ld-library-path-rocm"]], strict=True).verdict.exit_code) == 1
