"""facts/base.py: what a fact is."""

from __future__ import annotations

from rocm_triton_doctor.check.facts.base import Fact, Status, absent, error, found, safe, unknown


def test_status_helpers_and_describe() -> None:
    assert found(3, "x").found and found(3).known and absent("x").known
    assert not unknown("x").known and not error("x", "bad").known
    assert error("/dev/kfd", "EACCES").describe() == "error (/dev/kfd): EACCES"
    assert unknown().describe() == "unknown"


def test_safe_turns_a_crashing_parser_into_an_error_fact() -> None:
    def boom() -> Fact[int]:
        raise KeyError("simd_count")

    f = safe("/sys/class/kfd", boom)
    assert (f.status, f.source, f.error) == (Status.ERROR, "/sys/class/kfd", "could not parse: KeyError: 'simd_count'")
    assert safe("x", lambda: found(1)).value == 1
