"""The target Python environment (version, venv, installed distributions) and what follows from it about torch:
its build (ROCm / CUDA / CPU), version, bundled ROCm and download index."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from rocm_triton_doctor import knowledge
from rocm_triton_doctor.check.facts.base import Fact, error, found, safe, unknown

if TYPE_CHECKING:
    from rocm_triton_doctor.check.facts import Facts

# A ROCm package index: download.pytorch.org/whl/rocm6.4 (and nightly/rocm…), AMD's nightlies, repo.radeon.com's
# wheels, TheRock's repo.amd.com (rocm-facts.md, wheels and indexes).
ROCM_INDEX = re.compile(r"/rocm|rocm\.nightlies|repo\.radeon\.com|repo\.amd\.com")


def norm_name(name: str) -> str:
    """PEP 503 name normalisation: 'PyTorch_Triton.ROCm' -> 'pytorch-triton-rocm'."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Distribution:
    name: str
    version: str
    requires: tuple[str, ...]
    location: str = ""

    @property
    def local(self) -> str:
        return self.version.split("+", 1)[1] if "+" in self.version else ""

    def pinned(self, names: set[str]) -> tuple[str, str] | None:
        """The (distribution, specifier) this one requires among `names`, ignoring extras-only requirements."""
        from packaging.requirements import InvalidRequirement, Requirement

        for req_text in self.requires:
            try:
                req = Requirement(req_text)
            except InvalidRequirement:
                continue
            if req.marker is not None and "extra" in str(req.marker):
                continue
            if req.marker is not None:
                try:
                    if not req.marker.evaluate():
                        continue
                except Exception:  # noqa: BLE001 - a marker we cannot evaluate: keep the requirement
                    pass
            key = norm_name(req.name)
            if key in names:
                return key, str(req.specifier)
        return None


@dataclass(frozen=True)
class PythonEnv:
    executable: str
    version: str
    virtualenv: bool | None
    conda: bool | None
    externally_managed: bool | None
    python_h: bool | None
    include_dir: str
    distributions: Mapping[str, Distribution]
    triton_owners: tuple[str, ...]
    # False when the snapshot holds no package list, or only part of one (a filtered `pip list | grep torch`, a
    # collect_env block: top-level `partial` names python.distributions): a package not listed is then UNKNOWN,
    # never "not installed" (DESIGN §2).
    distributions_complete: bool = True
    pip_indexes: tuple[str, ...] = ()  # the indexes pip said it searched ("Looking in indexes: …"), pasted text
    pip_downloads: tuple[str, ...] = ()  # wheel files pip said it downloaded / took from its cache, pasted text
    pip_kept: Mapping[str, str] = field(default_factory=dict)  # "Requirement already satisfied" (name -> version)
    install_indexes: tuple[str, ...] = ()  # indexes named on a pasted `pip/uv install` command line (asked, not searched)
    pip_pulled_by: Mapping[str, str] = field(default_factory=dict)  # "Collecting torch==X (from torchaudio)": name -> by
    torch_replaced: tuple[str, str] | None = None  # an install's change list: (removed torch, installed torch)
    rocm_indexes_named: tuple[str, ...] = ()  # ROCm wheel indexes the pasted text names (an installer quoting its own)

    def downloaded(self, name: str) -> str | None:
        """The version of `name` in a wheel pip fetched ('triton-3.1.0-cp310-….whl' -> '3.1.0'), if any."""
        for w in self.pip_downloads:
            parts = w.rsplit("/", 1)[-1].split("-")
            if len(parts) >= 2 and norm_name(parts[0]) == norm_name(name):
                return parts[1]
        return None

    @property
    def rocm_indexes(self) -> list[str]:
        """The ROCm indexes pip was pointed at (download.pytorch.org/whl/…rocm…, AMD's nightlies, repo.radeon.com,
        TheRock's repo.amd.com), in pip's order."""
        return [u for u in self.pip_indexes if ROCM_INDEX.search(u)]

    @property
    def wants_rocm(self) -> bool:
        return bool(self.rocm_indexes)

    def dist(self, name: str) -> Distribution | None:
        return self.distributions.get(norm_name(name))

    def has(self, name: str) -> bool | None:
        """True installed, False probed and not installed, None unknown (no complete package list)."""
        if self.dist(name) is not None:
            return True
        return False if self.distributions_complete else None


# -- builder ----------------------------------------------------------------------------------------------------

class PythonFacts(TypedDict):
    python: Fact[PythonEnv]


def build(snap: Mapping[str, Any]) -> PythonFacts:
    return PythonFacts(python=safe("python", lambda: _python(snap)))


def _python(snap: Mapping[str, Any]) -> Fact[PythonEnv]:
    p = snap.get("python")
    if not isinstance(p, dict):
        return unknown("python")
    if p.get("error") and "version" not in p:
        return error("python", str(p["error"]))
    dists = {}
    for name, d in (p.get("distributions") or {}).items():
        if isinstance(d, dict):
            dists[norm_name(name)] = Distribution(norm_name(name), str(d.get("version", "")),
                                                  tuple(str(r) for r in d.get("requires") or ()),
                                                  str(d.get("location") or ""))
        elif isinstance(d, str):  # hand-written: {"torch": "2.7.1+rocm6.3"}
            dists[norm_name(name)] = Distribution(norm_name(name), d, ())
    owners = p.get("triton_owners")
    partial = snap.get("partial")
    complete = isinstance(p.get("distributions"), dict) and not (
        isinstance(partial, list) and "python.distributions" in partial)
    return found(PythonEnv(str(p.get("executable") or ""), str(p.get("version") or ""), p.get("virtualenv"),
                           p.get("conda"), p.get("externally_managed"), p.get("python_h"),
                           str(p.get("include_dir") or ""), dists,
                           tuple(norm_name(o) for o in owners) if isinstance(owners, list) else (), complete,
                           tuple(str(u) for u in p.get("pip_indexes") or () if u),
                           tuple(str(w) for w in p.get("pip_downloads") or () if w),
                           {norm_name(str(k)): str(v) for k, v in (p.get("pip_kept") or {}).items()}
                           if isinstance(p.get("pip_kept"), dict) else {},
                           tuple(str(u) for u in p.get("install_indexes") or () if u),
                           {norm_name(str(k)): norm_name(str(v)) for k, v in (p.get("pip_pulled_by") or {}).items()}
                           if isinstance(p.get("pip_pulled_by"), dict) else {},
                           _pair(p.get("torch_replaced")),
                           tuple(str(u) for u in p.get("rocm_indexes_named") or () if u)), "python")


def _pair(v: Any) -> tuple[str, str] | None:
    return (str(v[0]), str(v[1])) if isinstance(v, list) and len(v) == 2 and all(v) else None


# -- the installed torch, from the runtime probe when it ran, else from wheel metadata ---------------------------

def torch_build(f: Facts) -> str:
    """rocm | cuda | cpu | missing | unknown: from the runtime probe when it ran, else from wheel metadata."""
    if f.runtime.found and f.runtime.value and f.runtime.value.torch_version and f.runtime.value.build != "unknown":
        return f.runtime.value.build
    if f.python.found and f.python.value:
        d = f.python.value.dist("torch")
        if d is None and f.runtime.found and f.runtime.value and f.runtime.value.torch_version:
            return "unknown"  # torch imported, its build not recorded
        if d is None:
            return "missing" if f.python.value.has("torch") is False else "unknown"
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


def rocm_torch(f: Facts) -> bool:
    return torch_build(f) == "rocm"


def torch_version(f: Facts) -> str | None:
    if f.runtime.found and f.runtime.value and f.runtime.value.torch_version:
        return f.runtime.value.torch_version
    if f.python.found and f.python.value:
        d = f.python.value.dist("torch")
        return d.version if d else None
    return None


def torch_rocm(f: Facts) -> str | None:
    """The ROCm major.minor bundled in the installed torch: from its +rocmX.Y tag, else from torch.version.hip."""
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


def build_tag(local: str) -> str:
    """'rocm6.4.1.git1ded221d' -> 'rocm6.4.1'; '' (PyPI default build) stays ''."""
    m = re.match(r"^(rocm\d+(?:\.\d+)*|cu\d+|cpu|xpu)", local)
    return m.group(1) if m else local
