"""What torch and Triton said when the runtime probe imported them in the target Python (DESIGN §2)."""

from __future__ import annotations

import re
import signal
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from rocm_triton_doctor.check.facts.base import Fact, Status, error, found, safe, unknown


@dataclass(frozen=True)
class RuntimeDevice:
    index: int
    name: str
    gcn_arch: str | None
    capability: tuple[int, ...]
    total_memory: int | None


@dataclass(frozen=True)
class Runtime:
    torch_version: str | None
    hip_version: str | None
    cuda_version: str | None
    is_available: bool | None
    devices: tuple[RuntimeDevice, ...]
    arch_list: tuple[str, ...] | None
    triton_version: str | None
    triton_backend: str | None
    triton_arch: str | None
    triton_error: str | None
    error: str | None
    torch_import_failed: bool = False
    timed_out: bool = False
    # Both torch.version.hip and torch.version.cuda were recorded (null = probed None). A pasted `torch.__version__`
    # line alone does not say which build it is: the missing keys are unknown, not None (DESIGN §2).
    versions_recorded: bool = True
    device_count: int | None = None  # torch.cuda.device_count() as recorded (the probe, a printed count)

    @property
    def build(self) -> str:
        """rocm | cuda | cpu | unknown, from torch.version.{hip,cuda}, else the version's local tag."""
        if self.torch_version is None:
            return "unknown"
        if self.hip_version:
            return "rocm"
        if self.cuda_version:
            return "cuda"
        local = self.torch_version.split("+", 1)[1].lower() if "+" in self.torch_version else ""
        for prefix, build in (("rocm", "rocm"), ("cu", "cuda"), ("cpu", "cpu")):
            if local.startswith(prefix):
                return build
        return "cpu" if self.versions_recorded else "unknown"


def died_how(r: Mapping[str, Any]) -> str | None:
    """The probe's error, saying how a killed probe died: a negative exit status is the signal that killed it
    (`import torch` killed by SIGSEGV), not "exited with code -11: no output" (issue #10 item 8)."""
    err = r.get("error")
    if not isinstance(err, str) or not err:
        return None
    rc = r.get("returncode")
    m = re.search(r"exited with code (-\d+)", err)
    code = rc if isinstance(rc, int) else (int(m.group(1)) if m else None)
    if code is None or code >= 0:
        return err
    try:
        sig = signal.Signals(-code).name
    except ValueError:
        sig = f"signal {-code}"
    tail = err.split(":", 1)[1].strip() if ":" in err else ""
    return (f"the runtime probe (`import torch`, device queries) was killed by {sig}"
            + (f"; last output: {tail}" if tail and tail != "no output" else "; it printed nothing"))


class RuntimeFacts(TypedDict):
    runtime: Fact[Runtime]


def build(snap: Mapping[str, Any]) -> RuntimeFacts:
    return RuntimeFacts(runtime=safe("runtime", lambda: _runtime(snap)))


def _runtime(snap: Mapping[str, Any]) -> Fact[Runtime]:
    r = snap.get("runtime")
    if r is None:
        return unknown("runtime")
    if not isinstance(r, dict):
        return error("runtime", "not an object")
    devices: list[RuntimeDevice] = []
    for d in r.get("devices") or []:
        if isinstance(d, dict):
            cap = d.get("capability") or ()
            devices.append(RuntimeDevice(int(d.get("index", len(devices))), str(d.get("name", "")),
                                         d.get("gcnArchName"), tuple(int(x) for x in cap), d.get("total_memory")))
    arch = r.get("arch_list")
    def text(key: str) -> str | None:  # a hand-written or pasted value of another type is not a version string
        v = r.get(key)
        return v if isinstance(v, str) and v else None

    avail = r.get("is_available")
    rt = Runtime(text("torch_version"), text("hip_version"), text("cuda_version"), avail if isinstance(avail, bool) else None,
                 tuple(devices), tuple(str(a) for a in arch) if isinstance(arch, list) else None, text("triton_version"),
                 text("triton_backend"), text("triton_arch"), text("triton_error"), died_how(r),
                 bool(r.get("torch_import_failed")), bool(r.get("timed_out")),
                 "hip_version" in r and "cuda_version" in r,
                 count if isinstance(count := r.get("device_count"), int) and not isinstance(count, bool) else None)
    if rt.timed_out:
        return Fact(Status.ERROR, rt, "runtime probe", str(r.get("error") or "timed out"))
    if rt.torch_version is None and rt.error and not rt.torch_import_failed:
        return Fact(Status.ERROR, rt, "runtime probe", rt.error)
    return found(rt, "runtime probe")
