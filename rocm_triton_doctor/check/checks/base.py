"""What a check is, and the small helpers every check module uses."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from rocm_triton_doctor import knowledge
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


def amd_host(f: Facts) -> bool | None:
    """Is this an AMD GPU machine? True/False when we can tell, None when the snapshot does not say."""
    if f.amd_gpus_present:
        return True
    if f.pci_amd_gpus:
        return True
    if f.amdgpu_initstate.found and f.amdgpu_initstate.value == "live":
        return True
    if f.dev_kfd.found:
        return True
    if f.amd_gpus_present is False or f.amdgpu_initstate.known:
        return False
    return None


def rocm_torch(f: Facts) -> bool:
    return torch_build(f) == "rocm"


def torch_build(f: Facts) -> str:
    """rocm | cuda | cpu | missing | unknown: from the runtime probe when it ran, else from wheel metadata."""
    if f.runtime.found and f.runtime.value and f.runtime.value.torch_version:
        return f.runtime.value.build
    if f.python.found and f.python.value:
        d = f.python.value.dist("torch")
        if d is None:
            return "missing"
        local = d.local.lower()
        if local.startswith("rocm"):
            return "rocm"
        if local.startswith("cu"):
            return "cuda"
        if local.startswith("cpu"):
            return "cpu"
        # No local tag: PyPI's Linux x86_64 torch is the CUDA build (it requires nvidia-* runtime wheels).
        if any(r.lower().startswith(("nvidia-", "cuda-")) for r in d.requires):
            return "cuda"
        return "unknown"
    if f.runtime.found and f.runtime.value and f.runtime.value.torch_import_failed:
        return "missing"
    return "unknown"


def torch_version(f: Facts) -> str | None:
    if f.runtime.found and f.runtime.value and f.runtime.value.torch_version:
        return f.runtime.value.torch_version
    if f.python.found and f.python.value:
        d = f.python.value.dist("torch")
        return d.version if d else None
    return None


def torch_rocm(f: Facts) -> str | None:
    """The ROCm major.minor bundled in the installed torch: from its +rocmX.Y tag, else from torch.version.hip."""
    import re

    v = torch_version(f)
    text = v.split("+rocm", 1)[1] if v and "+rocm" in v else None
    if text is None and f.runtime.found and f.runtime.value and f.runtime.value.hip_version:
        text = f.runtime.value.hip_version
    m = re.match(r"^(\d+\.\d+)", text or "")
    return m.group(1) if m else None


def torch_index_url(version: str) -> str | None:
    """The download.pytorch.org index a ROCm torch came from: '2.9.1+rocm6.4' -> .../whl/rocm6.4. AMD's builds carry
    '.git<hash>' after the ROCm version ('+rocm6.4.1.git1ded221d'); it is not part of the index name."""
    if "+rocm" not in version:
        return None
    return knowledge.index_url("rocm" + version.split("+rocm", 1)[1].split(".git")[0])


def fmt_bytes(n: int | None) -> str:
    if not n:
        return "?"
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"
