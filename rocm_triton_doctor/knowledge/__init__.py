"""Compatibility knowledge as data (DESIGN §4): ROCm releases, torch wheels, gfx targets, PCI ids, overrides.

Every row in data/*.json carries its source; each file carries an `as_of` date. Code asks questions here and
never hard-codes a version table.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version


@cache
def _load(name: str) -> dict[str, Any]:
    text = resources.files(__package__).joinpath("data").joinpath(name).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def as_of() -> str:
    """The oldest `as_of` date among the data files: how old the doctor's knowledge is."""
    return min(_load(n)["as_of"] for n in ("gfx.json", "rocm_releases.json", "torch_releases.json", "rocm_indexes.json"))


# -- gfx targets ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class GfxTarget:
    gfx: str
    gfx_target_version: int
    family: str
    arch: str
    kind: str  # dgpu | igpu | dcgpu
    wave_size: int
    chip: str
    products: tuple[str, ...]
    pci_ids: tuple[str, ...]
    source: str
    verified: bool = True

    @property
    def integrated(self) -> bool:
        return self.kind == "igpu"


@dataclass(frozen=True)
class OverrideRule:
    gfx: tuple[str, ...]
    target: str
    value: str
    verified: bool
    source: str


@cache
def _targets() -> dict[str, GfxTarget]:
    out = {}
    for r in _load("gfx.json")["targets"]:
        out[r["gfx"]] = GfxTarget(
            gfx=r["gfx"], gfx_target_version=r["gfx_target_version"], family=r["family"], arch=r["arch"],
            kind=r["kind"], wave_size=r["wave_size"], chip=r["chip"], products=tuple(r["products"]),
            pci_ids=tuple(r["pci_ids"]), source=r["source"], verified=r.get("verified", True))
    return out


def gfx_info(gfx: str | None) -> GfxTarget | None:
    return _targets().get(base_gfx(gfx)) if gfx else None


def all_gfx() -> tuple[str, ...]:
    return tuple(_targets())


def base_gfx(name: str | None) -> str:
    """'gfx90a:sramecc+:xnack-' -> 'gfx90a'; 'amdgcn-amd-amdhsa--gfx1100' -> 'gfx1100'."""
    if not name:
        return ""
    name = name.strip().rsplit("--", 1)[-1]
    return name.split(":", 1)[0].lower()


def gfx_from_target_version(value: int) -> str | None:
    """KFD `gfx_target_version` (major*10000 + minor*100 + stepping) -> LLVM name (libhsakmt.h macros)."""
    if value <= 0:
        return None
    major, rest = divmod(value, 10000)
    minor, step = divmod(rest, 100)
    if minor > 15 or step > 15:
        return None
    return f"gfx{major}{minor:x}{step:x}"


_OVERRIDE_RE = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")


def parse_override(value: str) -> tuple[str | None, str | None]:
    """Parse an HSA_OVERRIDE_GFX_VERSION value the way libhsakmt's sscanf("%u.%u.%u%c") does.

    Returns (gfx name, None) or (None, reason). Source: ROCR-Runtime libhsakmt/src/topology.c (rocm-facts §3.1):
    three decimal numbers, major <= 63, minor/stepping <= 255, nothing after them; the gfx name uses hex digits
    for minor and stepping.
    """
    m = _OVERRIDE_RE.match(value)
    if not m:
        if value.strip() != value:
            return None, "has leading/trailing whitespace"
        if re.match(r"^gfx[0-9a-f]{3,4}\b", value, re.I):  # `gfx1030`, not a message that starts "GFX version …"
            return None, "is a gfx name; the variable wants MAJOR.MINOR.STEPPING numbers (e.g. 10.3.0)"
        return None, "is not three dot-separated decimal numbers MAJOR.MINOR.STEPPING"
    major, minor, step = (int(x) for x in m.groups())
    if major > 63 or minor > 255 or step > 255:
        return None, "is out of range (major <= 63, minor and stepping <= 255)"
    if minor > 15 or step > 15:
        return None, "names no existing gfx target (minor/stepping above 15)"
    return f"gfx{major}{minor:x}{step:x}", None


def override_value(gfx: str) -> str:
    """gfx1030 -> '10.3.0', gfx90a -> '9.0.10' (inverse of parse_override)."""
    info = gfx_info(gfx)
    if info:
        major, rest = divmod(info.gfx_target_version, 10000)
        minor, step = divmod(rest, 100)
        return f"{major}.{minor}.{step}"
    m = re.match(r"^gfx(\d+)([0-9a-f])([0-9a-f])$", gfx)
    if not m:
        raise ValueError(f"not a gfx name: {gfx}")
    return f"{int(m.group(1))}.{int(m.group(2), 16)}.{int(m.group(3), 16)}"


def override_rules(gfx: str) -> tuple[OverrideRule, ...]:
    """Same-family targets that can stand in for `gfx`, best first (rocm-facts §3.2)."""
    out = []
    for r in _load("gfx.json")["overrides"]:
        if gfx in r["gfx"]:
            out.append(OverrideRule(tuple(r["gfx"]), r["target"], r["value"], r["verified"], r["source"]))
    return tuple(out)


def pci_lookup(device_id: int | str) -> GfxTarget | None:
    did = device_id if isinstance(device_id, str) else f"0x{device_id:04x}"
    did = did.lower()
    for t in _targets().values():
        if did in t.pci_ids:
            return t
    return None


# -- ROCm releases --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RocmRelease:
    version: str
    gfx: tuple[str, ...]
    gfx_deprecated: tuple[str, ...]
    distros: dict[str, tuple[str, ...]] | None
    verified: bool
    source: str
    therock: bool = False
    gfx_builds: tuple[str, ...] = ()  # TheRock rows: every target built (wheels exist) ...
    gfx_build_only: tuple[str, ...] = ()  # ... of which these are "Build Passing" only, not validated (SUPPORTED_GPUS.md)


def _v(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


def rocm_release(version: str) -> RocmRelease | None:
    """The knowledge row that describes installed ROCm `version`: newest row <= it within the same major.minor."""
    v = _v(version)
    if v is None:
        return None
    best = None
    for r in _load("rocm_releases.json")["releases"]:
        rv = Version(r["version"])
        if (rv.major, rv.minor) == (v.major, v.minor) and rv <= v and (best is None or rv > Version(best["version"])):
            best = r
    if best is None:
        return None
    distros = None
    if best.get("distros") is not None:
        distros = {k: tuple(vs) for k, vs in best["distros"].items()}
    return RocmRelease(best["version"], tuple(best["gfx"]), tuple(best.get("gfx_deprecated", ())), distros,
                       best.get("verified", True), best["source"], best.get("therock", False),
                       tuple(best.get("gfx_builds", ())), tuple(best.get("gfx_build_only", ())))


def newest_rocm() -> str:
    return max((r["version"] for r in _load("rocm_releases.json")["releases"]), key=Version)


# -- torch wheels ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TorchRelease:
    torch: str
    date: str
    rocm_indexes: tuple[str, ...]
    requires_python: str
    triton: str
    triton_rocm_package: str | None
    source: str
    unverified: str | None = None
    index_versions: tuple[tuple[str, str], ...] = ()  # (index, newest patch there) where it differs from `torch`

    def version_on(self, index: str) -> str:
        """The newest patch of this release published on `index` (2.14.1 on rocm7.14, 2.14.0 on rocm7.2)."""
        return dict(self.index_versions).get(index, self.torch)

    def supports_python(self, version: str) -> bool:
        try:
            return Version(version) in SpecifierSet(self.requires_python)
        except (InvalidSpecifier, InvalidVersion):
            return False


def torch_releases() -> tuple[TorchRelease, ...]:
    rows = []
    for r in _load("torch_releases.json")["releases"]:
        rows.append(TorchRelease(r["torch"], r["date"], tuple(r["rocm_indexes"]), r["requires_python"], r["triton"],
                                 r["triton_rocm_package"], r["source"], r.get("unverified"),
                                 tuple(sorted((r.get("index_versions") or {}).items()))))
    return tuple(rows)


def torch_release(version: str) -> TorchRelease | None:
    v = _v(version.split("+", 1)[0])
    if v is None:
        return None
    for r in torch_releases():
        rv = Version(r.torch)
        if (rv.major, rv.minor) == (v.major, v.minor):
            return r
    return None


def index_arches(index: str, torch: str | None = None) -> tuple[str, ...] | None:
    """The gfx targets compiled into `index`'s torch wheels; for `torch` (a version) the list of that release.

    Lists change between torch releases on one index (gfx1103 appears on rocm7.2 only from 2.13, knowledge-audit
    §1.4), so a `by_torch` row that matches `torch` wins; without `torch`, or when none matches, the index's base list
    (the oldest measured one: never promises a target a release may lack).
    """
    row = _load("rocm_indexes.json")["indexes"].get(index)
    if not row:
        return None
    v = _v(torch.split("+", 1)[0]) if torch else None
    if v is not None:
        for b in row.get("by_torch", ()):
            if v in SpecifierSet(b["torch"]):
                return tuple(b["gfx"])
    return tuple(row["gfx"])


def index_bundles_rocm(index: str) -> bool:
    """False for indexes whose torch pulls ROCm as separate pip packages (rocm7.14: TheRock's rocm/rocm-sdk-*)."""
    row = _load("rocm_indexes.json")["indexes"].get(index)
    return bool(row.get("bundles_rocm", True)) if row else True


# A ROCm torch wheel index as a URL: PyTorch's (download.pytorch.org/whl[/nightly|/test]/rocmX.Y), TheRock's nightlies
# (rocm.nightlies.amd.com/…), AMD's (repo.radeon.com/rocm/manylinux/…, repo.amd.com/rocm/whl/…). A trailing slash is
# matched; quotes and punctuation around the URL are not.
ROCM_INDEX_URL = re.compile(r"https?://(?:download\.pytorch\.org/whl/(?:nightly/|test/)?rocm[\d.]+|"
                            r"rocm\.nightlies\.amd\.com/[\w./-]*[\w-]|repo\.radeon\.com/rocm/manylinux/[\w./-]*[\w-]|"
                            r"repo\.amd\.com/rocm/whl/[\w.-]+)/?")


def index_url(index: str) -> str:
    return str(_load("rocm_indexes.json")["base_url"]) + index


def rocm_indexes() -> tuple[str, ...]:
    return tuple(_load("rocm_indexes.json")["indexes"])


def triton_codegen_issue(triton_version: str, target: str) -> str | None:
    """A known 'this Triton cannot compile for this target' fact, phrased for a finding, or None."""
    for r in _load("triton_codegen.json")["issues"]:
        if r["gfx"] == target and triton_version.split("+", 1)[0] == r["triton"]:
            return (f"Known: Triton {r['triton']} fails for {target} ({r['symptom']}); Triton {r['works_with']} "
                    f"compiles these kernels (source: {r['source']})")
    return None


def generic_members(name: str) -> tuple[str, ...]:
    """The targets a generic code object (`gfx11-generic`) runs on, per LLVM's generic-processor table (gfx.json)."""
    return tuple(_load("gfx.json").get("generic", {}).get(name, ()))


def install_sources() -> dict[str, dict[str, Any]]:
    """Where ROCm torch/Triton wheels come from (data/sources.json): pytorch, therock, amd-repo, amd-triton."""
    return dict(_load("sources.json")["sources"])
