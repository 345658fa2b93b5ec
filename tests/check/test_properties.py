"""Evidence monotonicity and robustness over every fixture (issue #10 item 1).

* Deleting any section, or any key of a section, never turns a verdict into `fail` and never ADDS a fix command:
  less evidence can only make the doctor say less. Commands are compared as actions (the interpreter path, version
  pins and the ROCm index version are masked: with the Python unknown the same action is pinned differently).
  Not deleted: metadata (`schema`, `source`, `origin`, `partial`, `notes`), and single entries of the two sections the
  contract reads as complete enumerations — a probed `env` (a variable not listed is unset) and the `/dev/dri/renderD*`
  entries of a probed /dev/dri — because removing one of those describes another machine, not less of this one; the
  whole section is still deleted.
* hypothesis: any subset of sections/keys deleted at once keeps the same two properties; snapshots with arbitrary
  values in the known sections never make a check crash.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rocm_triton_doctor.check import CheckReport, diagnose
from rocm_triton_doctor.check.checks import INTERNAL_ERROR
from rocm_triton_doctor.check.findings import Severity
from rocm_triton_doctor.check.sources import snapshot_from_text
from tests.check.corpus import all_captures
from tests.conftest import SCENARIOS, load_scenario

META = {"schema", "source", "origin", "partial", "notes"}
FIXTURES: list[tuple[str, dict[str, Any]]] = (
    [(p.stem, load_scenario(p.stem)) for p in sorted(SCENARIOS.glob("*.json"))]
    + [(c.name, snapshot_from_text(list(c.blocks))) for c in all_captures()])


def _action(cmd: str) -> str:
    cmd = re.sub(r"\S+ -m pip\b", "pip", cmd)
    cmd = re.sub(r"==\S+", "==V", cmd)
    cmd = re.sub(r"rocm\d[\d.]*", "rocmV", cmd)
    return re.sub(r"python3\.\d+", "python3.X", cmd)


def _commands(r: CheckReport) -> set[str]:
    return {_action(c) for f in r.findings if f.fix for c in f.fix.commands}


def _fails(r: CheckReport) -> bool:
    return any(f.severity is Severity.FAIL for f in r.findings)


def _enumerated(snap: dict[str, Any], section: str, key: str) -> bool:
    partial = snap.get("partial") if isinstance(snap.get("partial"), list) else []
    if section == "env" and "env" not in partial:
        return True
    return section == "paths" and bool(re.match(r"^/dev/dri/renderD\d+$", key))


def _keys(snap: dict[str, Any]) -> Iterator[tuple[str, str | None]]:
    for k, v in snap.items():
        if k in META:
            continue
        yield k, None
        if isinstance(v, dict):
            for kk in v:
                if not _enumerated(snap, k, kk):
                    yield k, kk


def _without(snap: dict[str, Any], keys: list[tuple[str, str | None]]) -> dict[str, Any]:
    d = copy.deepcopy(snap)
    for k, kk in keys:
        if kk is None:
            d.pop(k, None)
        elif isinstance(d.get(k), dict):
            d[k].pop(kk, None)
    return d


def _check_monotone(name: str, base: CheckReport, smaller: CheckReport, what: object) -> None:
    assert not any(f.id == INTERNAL_ERROR for f in smaller.findings), (name, what)
    assert not (_fails(smaller) and not _fails(base)), f"{name}: deleting {what} made the verdict fail"
    new = _commands(smaller) - _commands(base)
    assert not new, f"{name}: deleting {what} added fix commands {sorted(new)}"


@pytest.mark.parametrize("name,snap", FIXTURES, ids=[n for n, _ in FIXTURES])
def test_deleting_any_key_never_adds_a_fail_or_a_fix(name: str, snap: dict[str, Any]) -> None:
    base = diagnose(snap)
    for key in _keys(snap):
        _check_monotone(name, base, diagnose(_without(snap, [key])), key)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_deleting_any_subset_never_adds_a_fail_or_a_fix(data: st.DataObject) -> None:
    name, snap = data.draw(st.sampled_from(FIXTURES))
    keys = list(_keys(snap))
    if not keys:
        return
    drop = data.draw(st.lists(st.sampled_from(keys), unique=True, max_size=len(keys)))
    # dropping a whole section covers its keys; keep the draw as is (overlaps are harmless)
    _check_monotone(name, diagnose(snap), diagnose(_without(snap, drop)), drop)


_JUNK = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=12),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                     max_leaves=8)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_generated_partial_snapshots_never_crash_a_check(data: st.DataObject) -> None:
    name, snap = data.draw(st.sampled_from(FIXTURES))
    keys = list(_keys(snap))
    d = _without(snap, data.draw(st.lists(st.sampled_from(keys), unique=True)) if keys else [])
    # replace some remaining values with junk of any type
    for k, kk in data.draw(st.lists(st.sampled_from(list(_keys(d)) or [("env", None)]), max_size=3)):
        if kk is None:
            d[k] = data.draw(_JUNK)
        elif isinstance(d.get(k), dict):
            d[k][kk] = data.draw(_JUNK)
    report = diagnose(d)
    assert not any(f.id == INTERNAL_ERROR for f in report.findings), [f.title for f in report.findings if f.id == INTERNAL_ERROR]
