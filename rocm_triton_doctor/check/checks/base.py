"""What a check is, and the small helpers every check module uses."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from rocm_triton_doctor.check.facts import Fact, Facts
from rocm_triton_doctor.check.findings import CIRCUMSTANTIAL, Finding, Fix, Severity

CheckFn = Callable[[Facts], Iterable[Finding]]
T = TypeVar("T")

# Facts a check can declare with `needs=`: when the snapshot does not hold one (a partial snapshot, --no-runtime), the
# check is not run and says `skip` with this title: never guess from missing facts (DESIGN §2).
NEEDS: dict[str, str] = {
    "python": "Python environment unknown",
    "runtime": "runtime probe not run",
    "env": "environment not recorded",
}


@dataclass(frozen=True)
class Check:
    id: str  # stable kebab-case; every finding this check yields carries it
    group: str
    what: str  # one line for the catalogue
    why: str  # what breaks when it fails
    fix: str  # the usual remedy, in words
    fn: CheckFn
    needs: tuple[str, ...] = ()  # Facts fields (keys of NEEDS) without which the check skips

    def __call__(self, facts: Facts) -> Iterable[Finding]:
        for name in self.needs:
            fact = getattr(facts, name)
            if not fact.found or fact.value is None:
                return [skip(NEEDS[name])]
        return self.fn(facts)


def check(id: str, group: str, what: str, why: str, fix: str, needs: tuple[str, ...] = (),
          ok_is_evidence: bool = True) -> Callable[[CheckFn], Check]:
    """Register a check. `ok_is_evidence=False`: its ok shows a part in place, not that GPU work would succeed, so it
    alone never makes a snapshot healthy (findings.CIRCUMSTANTIAL, issue #10)."""
    unknown = [n for n in needs if n not in NEEDS]
    if unknown:
        raise ValueError(f"check {id!r} needs {unknown}, which NEEDS does not know")
    if not ok_is_evidence:
        CIRCUMSTANTIAL.add(id)

    def wrap(fn: CheckFn) -> Check:
        return Check(id, group, what, why, fix, fn, needs)

    return wrap


def needed(fact: Fact[T]) -> T:
    """The value of a fact the check declared in `needs=` (the check is not called without it)."""
    if fact.value is None:
        raise LookupError(f"a check read {fact.source or 'a fact'} without declaring it in needs=")
    return fact.value


def finding(severity: Severity, title: str, detail: str = "", *, evidence: Iterable[str] = (),
            fix: Fix | None = None, links: Iterable[str] = ()) -> Finding:
    """A finding without id/group: the registry runner stamps them from the check that yielded it."""
    return Finding("", severity, title, detail, tuple(evidence), fix, tuple(links))


def ok(title: str, detail: str = "", **kw: object) -> Finding:
    return finding(Severity.OK, title, detail, **kw)  # type: ignore[arg-type]


def info(title: str, detail: str = "", **kw: object) -> Finding:
    return finding(Severity.INFO, title, detail, **kw)  # type: ignore[arg-type]


def warn(title: str, detail: str = "", **kw: object) -> Finding:
    return finding(Severity.WARN, title, detail, **kw)  # type: ignore[arg-type]


def fail(title: str, detail: str = "", **kw: object) -> Finding:
    return finding(Severity.FAIL, title, detail, **kw)  # type: ignore[arg-type]


def skip(title: str, detail: str = "", **kw: object) -> Finding:
    return finding(Severity.SKIP, title, detail, **kw)  # type: ignore[arg-type]


def fmt_bytes(n: int | None) -> str:
    if not n:
        return "?"
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"
