"""The environment of the workload named by `check --pid` / `--unit` (or pasted `systemctl show` / environ text).

Snapshot key `workload_env` (docs/snapshot.md; written by check/probes/workload.py or check/sources/workload.py):
missing = no workload was named (unknown), null = probed absent, {"source", "error"} = could not be read,
{"source", "env", "complete"} = read. `complete` False: some of its variables could not be seen (an unreadable
EnvironmentFile, a pasted block whose files were not shown), so a variable it does not list is unknown, not unset.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rocm_triton_doctor.check.facts.base import Fact, Status, error, found, section

KEY = "workload_env"


@dataclass(frozen=True)
class WorkloadEnv:
    source: str  # "pid 1234" | "unit ollama.service" | "pasted systemctl show"
    env: Mapping[str, str]
    complete: bool = True
    command: str = ""  # /proc/PID/comm
    unread: tuple[str, ...] = ()

    @property
    def unit(self) -> str | None:
        return self.source[5:] if self.source.startswith("unit ") else None

    @property
    def pid(self) -> str | None:
        return self.source[4:] if self.source.startswith("pid ") else None

    def get(self, name: str) -> tuple[bool, str | None]:
        """(known, value): value None with known True means unset in the workload."""
        if name in self.env:
            return True, self.env[name]
        return self.complete, None


@dataclass(frozen=True)
class WorkloadError:
    source: str
    message: str
    permission: bool = False


def workload_fact(snap: Mapping[str, Any]) -> Fact[Any]:
    sec = section(snap, KEY, "workload_env is not an object")
    if isinstance(sec, Fact):
        return sec
    source = str(sec.get("source") or "the workload")
    if sec.get("error"):
        # An error that still says whose environment it is, and whether sudo would help.
        return Fact(Status.ERROR, WorkloadError(source, str(sec["error"]), bool(sec.get("permission"))), source,
                    str(sec["error"]))
    env = sec.get("env")
    if not isinstance(env, Mapping):
        return error(source, "workload_env has no env")
    return found(WorkloadEnv(source, {str(k): str(v) for k, v in env.items()}, bool(sec.get("complete", False)),
                             str(sec.get("command") or ""), tuple(str(u) for u in sec.get("unread") or ())), source)
