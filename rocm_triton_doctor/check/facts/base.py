"""What every fact is: a value with its status (found / absent / error / unknown / not-applicable) and its source.

`unknown` means the snapshot did not record it (a partial snapshot written from a forum post): checks must `skip`,
never guess. `absent` means it was probed and is not there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Status(str, Enum):
    FOUND = "found"
    ABSENT = "absent"
    ERROR = "error"
    UNKNOWN = "unknown"
    NOT_APPLICABLE = "not-applicable"


@dataclass(frozen=True)
class Fact(Generic[T]):
    status: Status
    value: T | None = None
    source: str = ""
    error: str = ""

    @property
    def found(self) -> bool:
        return self.status is Status.FOUND

    @property
    def known(self) -> bool:
        return self.status in (Status.FOUND, Status.ABSENT)

    def describe(self) -> str:
        where = f" ({self.source})" if self.source else ""
        return f"{self.status.value}{where}" + (f": {self.error}" if self.error else "")


def found(value: T, source: str = "") -> Fact[T]:
    return Fact(Status.FOUND, value, source)


def absent(source: str = "") -> Fact[Any]:
    return Fact(Status.ABSENT, None, source)


def unknown(source: str = "") -> Fact[Any]:
    return Fact(Status.UNKNOWN, None, source)


def error(source: str, message: str) -> Fact[Any]:
    return Fact(Status.ERROR, None, source, message)


def section(snap: Mapping[str, Any], key: str, not_object: str) -> Mapping[str, Any] | Fact[Any]:
    """The snapshot's object under `key`, or the Fact a builder returns instead: unknown when the key is missing (not
    recorded: a pasted or partial snapshot), absent when it was probed and is null, an error saying `not_object` when
    it is not an object."""
    if key not in snap:
        return unknown(key)
    sec = snap[key]
    if sec is None:
        return absent(key)
    if not isinstance(sec, Mapping):
        return error(key, not_object)
    return sec


def safe(source: str, fn: Callable[[], Fact[T]]) -> Fact[T]:
    """A parser that trips on garbage gives an `error` fact, never a traceback."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001
        return error(source, f"could not parse: {type(exc).__name__}: {exc}")
