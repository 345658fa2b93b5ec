"""knowledge/data/errors.json: every signature is real (found in a corpus capture, or in the verbatim example it
cites) and none fires on a healthy machine's text."""

from __future__ import annotations

import pytest

from rocm_triton_doctor.knowledge import errors
from tests.check.corpus import all_captures

CAPTURES = all_captures()
SIGS = errors.signatures()


def _text(c) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(c.blocks)


def test_rows_are_complete_and_unique() -> None:
    assert len(SIGS) >= 25
    assert len({s.id for s in SIGS}) == len(SIGS)
    assert errors.as_of()
    for s in SIGS:
        assert s.meaning and s.fix and s.causes, s.id
        assert s.source.startswith("https://"), s.id
        assert all(c.cause and c.confirm for c in s.causes), s.id


@pytest.mark.parametrize("sig", SIGS, ids=[s.id for s in SIGS])
def test_every_signature_matches_a_real_message(sig: errors.ErrorSignature) -> None:
    hits = [c.name for c in CAPTURES if sig.search(_text(c))]
    if not hits:
        assert sig.example, f"{sig.id}: matches no capture and cites no real example"
        assert sig.search(sig.example), f"{sig.id}: does not match its own example"


@pytest.mark.parametrize("sig", SIGS, ids=[s.id for s in SIGS])
def test_no_signature_fires_on_a_healthy_capture(sig: errors.ErrorSignature) -> None:
    healthy = [c for c in CAPTURES if c.cause == "healthy"]
    assert healthy
    assert not [c.name for c in healthy if sig.search(_text(c))]


def test_match_is_total() -> None:
    assert errors.match("") == ()
    assert errors.match(None) == ()  # type: ignore[arg-type]
    got = [s.id for s in errors.match("RuntimeError: HIP error: invalid device function\nMemory access fault by GPU node-2")]
    assert got == ["invalid-device-function", "memory-access-fault"]
    assert errors.by_id("hip-no-binary-for-gpu") is not None and errors.by_id("nope") is None
