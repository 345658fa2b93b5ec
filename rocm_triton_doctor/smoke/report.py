"""What a smoke run produces: one CaseResult per case, the SmokeReport of the run (its `--json` envelope and the
performance targets' findings), and the file `smoke` keeps its last report in for `report`."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from rocm_triton_doctor.result import Result


@dataclass
class CaseResult:
    kernel: str
    case: str
    dtype: str
    status: str  # pass | fail | error | oom
    seed_shape: bool = False
    error: str | None = None
    max_abs: float | None = None
    max_rel: float | None = None
    atol: float | None = None
    rtol: float | None = None
    problems: list[str] = field(default_factory=list)
    dropout: dict[str, Any] | None = None  # the dropout statistics (cases with dropout only)
    eager_slack_max: float | None = None  # the most torch eager's own error allowed ours (Case.eager_slack cases)
    triton_ms: dict[str, float] | None = None
    eager_ms: dict[str, float] | None = None
    compile_ms: dict[str, float] | None = None
    triton_graph_us: float | None = None
    eager_graph_us: float | None = None
    flops: float = 0.0
    bytes: float = 0.0
    achieved: float | None = None  # GB/s or TFLOP/s
    achieved_unit: str = ""
    pct_ceiling: float | None = None
    ceiling: str = ""
    speedup_eager: float | None = None
    speedup_compile: float | None = None
    compile_error: str | None = None  # torch.compile of the eager baseline failed (the row still stands)
    liger_ms: dict[str, float] | None = None
    speedup_liger: float | None = None
    liger: str = ""  # why there is no Liger time: "not installed", "no op", "import failed: ..." or an error
    vs_best: float | None = None  # best of eager / compile / Liger over ours (sweep)
    launch_us: dict[str, float] | None = None  # host µs per call, back to back (--preset launch)
    launch_bound: bool = False
    seconds: float = 0.0
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.kernel}[{self.case}]"

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items()}


@dataclass
class SmokeReport:
    device: str
    device_name: str
    target: str
    preset: str
    versions: dict[str, str]
    results: list[CaseResult]
    ceilings: dict[str, Any] | None
    clocks: dict[str, str]
    notes: list[str]
    started: str
    seconds: float

    @property
    def exit_code(self) -> int:
        return 0 if self.results and all(r.status == "pass" for r in self.results) else 1

    @property
    def status(self) -> str:
        return "passed" if self.exit_code == 0 else "failed"

    def to_result(self) -> Result:
        """The `smoke --json` envelope (docs/smoke.md); the performance targets' verdicts are also findings."""
        import socket

        from rocm_triton_doctor.smoke import targets

        counts: dict[str, int] = {}
        for r in self.results:
            counts[r.status] = counts.get(r.status, 0) + 1
        rows = self.targets()
        return Result("smoke/1", "smoke", self.status, self.exit_code,
                      {"host": socket.gethostname(), "device": self.device, "device_name": self.device_name,
                       "target": self.target, "preset": self.preset, "versions": self.versions, "counts": counts,
                       "ceilings": self.ceilings, "clocks": self.clocks, "notes": self.notes, "started": self.started,
                       "seconds": round(self.seconds, 2), "results": [r.to_dict() for r in self.results],
                       "targets": rows}, targets.findings(rows))

    def to_dict(self) -> dict[str, Any]:
        return self.to_result().to_dict()

    def targets(self) -> list[dict[str, Any]]:
        """Issue #5's performance targets over this run (timed runs only; see smoke/targets.py)."""
        from rocm_triton_doctor.smoke import targets

        if not self.ceilings or self.preset != "bench":  # the targets are defined on the bench preset's cases
            return []
        return targets.evaluate([r.to_dict() for r in self.results])


def last_result_path() -> str:
    """Where `smoke` keeps its last result, for `report` (XDG cache; RTD_CACHE_DIR overrides)."""
    base = os.environ.get("RTD_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "rocm-triton-doctor")
    return os.path.join(base, "last-smoke.json")


def save_last(report: SmokeReport) -> None:
    import json

    path = last_result_path()
    if not (os.environ.get("RTD_CACHE_DIR") or os.environ.get("XDG_CACHE_HOME")) and not os.path.isdir(os.path.expanduser("~")):
        return  # a HOME that does not exist (HOME=/nonexistent for services) is never created for a cache (defect 19)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(report.to_dict(), fh)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only home must not fail the smoke run
