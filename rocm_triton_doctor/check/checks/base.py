"""What a check is, and the small helpers every check module uses."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from rocm_triton_doctor.check.facts import Facts
from rocm_triton_doctor.check.findings import Finding, Fix, Severity

CheckFn = Callable[[Facts], Iterable[Finding]]


@dataclass(frozen=True)
class Check:
    id: str  # stable kebab-case; every finding this check yields carries it
    group: str
    what: str  # one line for the catalogue
    why: str  # what breaks when it fails
    fix: str  # the usual remedy, in words
    fn: CheckFn

    def __call__(self, facts: Facts) -> Iterable[Finding]:
        return self.fn(facts)


def check(id: str, group: str, what: str, why: str, fix: str) -> Callable[[CheckFn], Check]:
    def wrap(fn: CheckFn) -> Check:
        return Check(id, group, what, why, fix, fn)

    return wrap


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
