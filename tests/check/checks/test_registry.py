"""The check registry's rules (checks/__init__.py, checks/base.py): a newcomer finds a check from its id in one step
because module == group and function == id; named sets only name registered checks; the runner selects by id or
group and turns a crash into an `internal-error` finding."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path
from types import ModuleType

import pytest

from rocm_triton_doctor.check import checks
from rocm_triton_doctor.check.checks import INTERNAL_ERROR, REGISTRY, SETS, by_id, run_checks, select
from rocm_triton_doctor.check.checks.base import NEEDS, Check, check, ok
from rocm_triton_doctor.check.findings import Severity

from ..conftest import facts

MODULES: dict[str, ModuleType] = {
    m.name: importlib.import_module(f"{checks.__name__}.{m.name}")
    for m in pkgutil.iter_modules(checks.__path__) if m.name != "base"
}


def test_ids_are_unique_kebab_case() -> None:
    ids = [c.id for c in REGISTRY]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", i) for i in ids), ids


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_check_of_a_module_is_registered(name: str) -> None:
    mod = MODULES[name]
    defined = [v for v in vars(mod).values() if isinstance(v, Check) and v.fn.__module__ == mod.__name__]
    assert defined, f"checks/{name}.py defines no check"
    assert set(defined) == set(mod.CHECKS), f"checks/{name}.py: CHECKS differs from the checks it defines"
    assert all(c in REGISTRY for c in defined)


@pytest.mark.parametrize("c", REGISTRY, ids=lambda c: c.id)
def test_group_is_module_and_function_is_id(c: Check) -> None:
    assert c.fn.__module__ == f"{checks.__name__}.{c.group}", f"{c.id}: group {c.group!r} is not its module"
    assert c.fn.__name__ == c.id.replace("-", "_")


def test_registry_holds_only_module_checks() -> None:
    assert len(REGISTRY) == sum(len(m.CHECKS) for m in MODULES.values())


def test_sets_name_registered_ids() -> None:
    ids = {c.id for c in REGISTRY}
    for name, members in SETS.items():
        assert members and set(members) <= ids, name
        assert len(set(members)) == len(members), name


def test_install_blockers_are_the_system_groups() -> None:
    # install refuses to promise a working torch while one of these fails: what no wheel can fix.
    assert select(SETS["install-blockers"]) == select(["platform", "driver", "access"])


def test_needs_skips_with_the_fact_named() -> None:
    calls = []

    @check("needs-demo", "probes", "w", "w", "f", needs=("python", "runtime"))
    def needs_demo(_f: object) -> list[object]:
        calls.append(1)
        return [ok("ran")]

    out = run_checks(facts(python={"version": "3.12.3"}), [needs_demo])
    assert [(f.id, f.severity, f.title) for f in out] == [("needs-demo", Severity.SKIP, NEEDS["runtime"])]
    assert not calls
    assert [f.title for f in run_checks(facts(python={"version": "3.12.3"}, runtime={}), [needs_demo])] == ["ran"]


def test_needs_rejects_an_unknown_fact() -> None:
    with pytest.raises(ValueError, match="gpu_count"):
        check("x", "probes", "w", "w", "f", needs=("gpu_count",))


def test_select_by_group_and_unknown_name() -> None:
    assert {c.id for c in select(["overrides"])} == {"hsa-override-format", "hsa-override-needed",
                                                      "hsa-override-harmful"}
    assert "wsl" not in {c.id for c in select(skip=["wsl"])}
    try:
        select(["no-such-check"])
    except ValueError as exc:
        assert "no-such-check" in str(exc)
    else:
        raise AssertionError("unknown id accepted")


def test_a_crashing_check_becomes_an_internal_error_finding() -> None:
    def boom(_facts: object) -> list[object]:
        raise RuntimeError("kaboom")

    bad = Check("boom", "probes", "x", "y", "z", boom)  # type: ignore[arg-type]
    out = run_checks(facts(env={}), [bad, by_id()["hsa-override-format"]])
    assert [f.id for f in out] == [INTERNAL_ERROR, "hsa-override-format"]
    assert out[0].severity is Severity.FAIL and "kaboom" in out[0].title and "test_registry.py" in out[0].detail


@pytest.mark.parametrize("c", REGISTRY, ids=lambda c: c.id)
def test_every_check_id_has_a_unit_test_in_its_group_file(c: Check) -> None:
    # Issue #14 item 7: every check id has a unit test, in tests/check/checks/test_<group>.py next to its siblings.
    path = Path(__file__).with_name(f"test_{c.group}.py")
    assert path.is_file(), f"{c.id}: no {path.name} for group {c.group!r}"
    assert f'"{c.id}"' in path.read_text(), f"{c.id}: not named in {path.name}"


def test_every_check_group_has_a_heading() -> None:
    # a group without a title printed its module name ("multigpu") as the renderers' heading
    from rocm_triton_doctor.check.checks import REGISTRY
    from rocm_triton_doctor.check.findings import GROUP_TITLES

    assert {c.group for c in REGISTRY} <= set(GROUP_TITLES)
