"""Where ROCm wheels come from in 2026, and which Triton goes with them (issue #15; knowledge/data/sources.json).

* `pytorch`: download.pytorch.org/whl/rocmX.Y, one index per ROCm release (7.14 included). Chosen by plan.py's search.
* `therock`: AMD's TheRock multi-arch index, one flat index for every GPU; the GPU code comes from the extras
  `torch[device-gfxNNNN]` (package amd-torch-device-gfxNNNN). Without the extra, is_available() is True but every
  kernel fails with hipErrorInvalidImage (astral-sh/uv#21683), so the plan names one extra per distinct real gfx of
  every GPU and refuses when a GPU's gfx is unknown. The only native route for gfx1031/1032/1033-1036, RDNA1 and
  gfx1152/1153 (knowledge-audit §2).
* `amd-repo`: repo.radeon.com/rocm/manylinux/rocm-rel-X.Y/, a flat directory of wheels built for the matching system
  ROCm (legacy <= 7.2): only on request, and only with that system ROCm installed.
* AMD's Triton (`amd-triton`, pypi.amd.com) provides the same triton/ package as the Triton torch pins: it is known
  here so the plan removes it, never installs it beside torch (two owners of triton/).

Decisions follow the same rule as plan.py's: the torch's own Triton, and no other distribution providing triton/.
rocm-bootstrap (AMD, PyPI 0.3.0) reads the same KFD topology for detection and adds a target -> sub-family -> family
hierarchy; TheRock's extras are per gfx, so neither is needed here and it is not a dependency (docs/install.md).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from rocm_triton_doctor import knowledge
from rocm_triton_doctor.check.checks.triton import TRITON_DISTS
from rocm_triton_doctor.check.facts import Gpu

SOURCE_CHOICES = ("auto", "pytorch", "therock", "amd-repo")  # values of `install --source`


class BadOption(ValueError):
    """An option value that cannot be used (e.g. a plain-http index on another host)."""


def check_url(url: str) -> str:
    """Index URLs must be https, file, or http on a loopback address (a local mirror); nothing else."""
    u = urlsplit(url)
    if u.scheme in ("https", "file"):
        return url
    if u.scheme == "http" and u.hostname:
        host = u.hostname
        try:
            if ipaddress.ip_address(host).is_loopback:
                return url
        except ValueError:
            if host == "localhost":
                return url
    raise BadOption(f"index URL {url!r} refused: use https://, file://, or http:// on a loopback address")


@dataclass(frozen=True)
class Step:
    name: str
    reason: str


@dataclass(frozen=True)
class SourceChoice:
    """A torch source other than the pytorch.org search: what to install from where, and why."""

    source: str
    url: str  # index URL (therock) or find-links directory (amd-repo)
    torch_req: str  # the requirement string for torch, extras included
    torch_version: str
    triton_req: str | None
    expected_gfx: tuple[str, ...]
    why: str
    notes: tuple[str, ...] = field(default_factory=tuple)


_NON_ROCM_INDEX = re.compile(r"/whl/(?:nightly/|test/)?(?:cpu|cu\d+|xpu)(?:[-/]|$)")


def wrong_platform_index(url: str) -> bool:
    """True for download.pytorch.org-style CPU/CUDA/XPU indexes (…/whl/cpu, …/whl/cu128): never right on an AMD box."""
    return bool(_NON_ROCM_INDEX.search(urlsplit(url).path))


# Every distribution that ships the top-level `triton/` package. pip treats them as unrelated projects, so installing
# one never uninstalls another: two of them leave files of both in site-packages/triton/ (the `triton-duplicate-dists`
# check). `amd-triton` is AMD's own wheel on pypi.amd.com (anchors.md §1.2, ROCm/aiter#2959); `triton-rocm` is the
# download.pytorch.org name since torch 2.10 (knowledge-audit §1.3); `pytorch-triton-rocm` before it.
TRITON_PROVIDERS = frozenset(TRITON_DISTS | {"amd-triton", "triton-rocm", "pytorch-triton-rocm", "pytorch-triton", "triton"})
ROCM_TRITONS = frozenset({"pytorch-triton-rocm", "triton-rocm", "amd-triton"})


def triton_requirement(torch_version: str, plat: str) -> tuple[str | None, str | None]:
    """(the requirement to install beside torch, the exact `name==version` when known) for `torch_version`.

    The knowledge row is per minor release and records its newest patch's pin, so the version is pinned only when
    the torch patch is that row's; otherwise only the name is named and pip resolves torch's own `==` pin.
    """
    rel = knowledge.torch_release(torch_version)
    if rel is None:
        return None, None
    name = rel.triton_rocm_package if plat == "amd" else ("triton" if plat == "nvidia" else None)
    if not name:
        return None, None
    # The row's pin holds for its own patch and for the patches it names per index (2.14.0 and 2.14.1 both pin
    # triton-rocm 3.8.0, K-USERS); on NVIDIA only from a verified row: the CUDA wheel pins its own otherwise.
    patches = {rel.torch, *dict(rel.index_versions).values()}
    sure = plat == "amd" or rel.unverified is None
    exact = f"{name}=={rel.triton}" if sure and torch_version.split("+", 1)[0] in patches else None
    return (exact or name), exact


def triton_removals(env: Any, plat: str, triton: str | None) -> list[Step]:
    """Uninstall every Triton distribution except the one the new torch pins, in the same transaction.

    `triton` is that pin's requirement (None when unknown). Afterwards exactly one distribution owns triton/:
    * AMD: the pinned ROCm Triton; every other provider goes. With no known pin, every provider goes and torch's own
      dependency brings its Triton back (pip would otherwise keep an old ROCm Triton of another name beside it).
    * NVIDIA: `triton` (PyPI) stays; ROCm Tritons go.
    * CPU: no pin (CPU torch needs none); ROCm Tritons go, one PyPI Triton may stay for interpreter mode.
    If the kept name is installed beside another provider, it is removed too and reinstalled: uninstalling the other
    one deletes files of triton/ that both own, and pip would see the kept one as "already satisfied".
    """
    installed = list(dict.fromkeys(n for n in env.distributions if n in TRITON_PROVIDERS))
    if not installed:
        return []
    keep = triton.split("==")[0] if triton else None
    out: list[Step] = []
    for n in installed:
        if n == keep:
            # AMD's own wheels (TheRock, repo.radeon.com) name their ROCm Triton `triton`, like PyPI's CUDA build: an
            # installed `triton` without a +rocm tag is that CUDA build, and pip would keep it as "already satisfied".
            if plat == "amd" and n == "triton" and "+rocm" not in env.distributions[n].version:
                out.append(Step(n, "the installed triton is PyPI's CUDA build (no +rocm tag); reinstalled as the ROCm one"))
            continue
        if plat == "amd":
            why = ("a PyPI/CUDA Triton that shares the triton/ directory with the ROCm one" if n not in ROCM_TRITONS
                   else f"a ROCm Triton that is not the one this torch pins ({triton or 'torch installs its own'})")
        elif n in ROCM_TRITONS:
            why = "a ROCm Triton on a machine without an AMD GPU"
        elif plat == "nvidia" and keep is not None:
            why = f"not the Triton this torch pins ({triton})"
        else:
            continue
        out.append(Step(n, why))
    left = [n for n in installed if n not in {s.name for s in out}]
    if keep is None and len(left) > 1:
        out += [Step(n, "more than one distribution owns triton/") for n in left[1:]]
    if out and keep is not None and keep in installed and keep not in {x.name for x in out}:
        out.append(Step(keep, f"shares triton/ with {', '.join(s.name for s in out)}; reinstalled clean as {triton}"))
    return out


def _therock_ready() -> tuple[set[str], set[str]]:
    """(Release-Ready targets, every built target) of TheRock, from knowledge rocm_releases.json (SUPPORTED_GPUS.md)."""
    rel = knowledge.rocm_release(str(knowledge.install_sources()["therock"]["rocm"]))
    if rel is None:
        return set(), set()
    return set(rel.gfx), set(rel.gfx_builds) | set(rel.gfx)


def therock_choice(gpus: tuple[Gpu, ...], py: str, ready_only: bool, torch: str | None = None) -> SourceChoice | None:
    """TheRock multi-arch: one `device-<gfx>` extra per distinct real gfx of every GPU; None when it cannot serve
    them all (a GPU without a known gfx, a gfx TheRock does not build, or -- with ready_only -- one it only builds)."""
    row: dict[str, Any] = knowledge.install_sources()["therock"]
    if not gpus or not SpecifierSet(row["requires_python"]).contains(Version(py)):
        return None
    gfx = sorted({g.gfx or "" for g in gpus})
    ready, built = _therock_ready()
    if "" in gfx or not set(gfx) <= (ready if ready_only else built):
        return None
    minor = ".".join((torch or row["torch"]).split("+")[0].split(".")[:2])
    if minor not in row["torch_releases"]:
        return None
    extras = ",".join(row["extra"].format(gfx=g) for g in gfx)
    build_only = sorted(set(gfx) - ready)
    notes = [(f"TheRock torch pulls ROCm {row['rocm']} as pip packages (rocm[libraries], rocm-sdk-*) from the same index; "
              "only the amdgpu kernel driver is needed from the system."),
             f"Not yet confirmed here: {row['unverified']}."]
    if build_only:
        notes.append(f"TheRock only builds {', '.join(build_only)} ('Build Passing', not sanity-tested: device enumeration, "
                     "kernel launch or library loads may fail; ROCm/TheRock SUPPORTED_GPUS.md).")
    why = (f"TheRock's multi-arch index builds {', '.join(gfx)} natively" +
           (" (Release-Ready)" if not build_only else "") + f"; the device extra{'s' if len(gfx) > 1 else ''} "
           f"[{extras}] select{'' if len(gfx) > 1 else 's'} the GPU code (without it every kernel fails with "
           "hipErrorInvalidImage)")
    return SourceChoice("therock", row["url"], f"torch[{extras}]=={minor}.*", f"{minor}.*", row["triton"], tuple(gfx), why,
                        tuple(notes))


def amd_repo_choice(system_rocm: str | None, py: str, torch: str | None = None) -> SourceChoice:
    """AMD's repo.radeon.com wheels for the installed system ROCm X.Y. Raises ValueError with the reason."""
    row: dict[str, Any] = knowledge.install_sources()["amd-repo"]
    if not system_rocm:
        raise ValueError("--source amd-repo needs a system ROCm (its wheels are built for the matching ROCm release); "
                         "none is installed")
    xy = ".".join(system_rocm.split(".")[:2])
    rel = row["releases"].get(xy)
    if rel is None:
        raise ValueError(f"no repo.radeon.com wheel set known for ROCm {xy} (known: {', '.join(row['releases'])})")
    if not SpecifierSet(row["requires_python"]).contains(Version(py)):
        raise ValueError(f"repo.radeon.com wheels are built for Python {row['requires_python']}, not {py}")
    version = torch.split("+")[0] if torch else rel["torch"]
    if torch and version != rel["torch"]:
        raise ValueError(f"torch {version} is not known in repo.radeon.com rocm-rel-{xy} (known: {rel['torch']})")
    # AMD's local versions carry a git hash (2.9.1+rocm7.2.0.git…): `==2.9.1` matches them, and PEP 440 orders a
    # local version above the plain one, so pip prefers it over PyPI's CUDA 2.9.1.
    return SourceChoice("amd-repo", row["url"].format(rocm=xy), f"torch=={version}", version, rel["triton"], (),
                        f"requested with --source amd-repo: AMD's wheels built for the installed ROCm {xy}",
                        (f"Not yet confirmed here: {row['unverified']}.",))
