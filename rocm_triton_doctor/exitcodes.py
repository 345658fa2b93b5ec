"""The one exit-code contract shared by every command (DESIGN §6)."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    HEALTHY = 0  # warnings allowed; --strict turns warnings into PROBLEMS
    PROBLEMS = 1  # a `fail` finding, a wrong result, a failed install
    USAGE = 2  # bad options (Click's own code)
    COULD_NOT_CHECK = 3  # no verdict possible: probes broke, smoke could not start
    CRASHED = 4  # the doctor itself crashed
