"""The system ROCm install: /opt/rocm, /opt/rocm-*, ROCM_PATH, and their .info/version."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from rocm_triton_doctor.check import snapshot
from rocm_triton_doctor.check.facts.base import Fact, Status, absent, error, found, safe, unknown


@dataclass(frozen=True)
class RocmInstall:
    version: str | None
    path: str
    versions: tuple[tuple[str, str], ...]  # (prefix, version) for every /opt/rocm-* found
    link_target: str | None


def parse_rocm_version(text: str) -> str | None:
    """`.info/version`: 'X.Y.Z' or 'X.Y.Z-NNN' (rocm-core CMakeLists.txt)."""
    m = re.match(r"^\s*(\d+\.\d+(?:\.\d+)?)", text)
    return m.group(1) if m else None


class RocmFacts(TypedDict):
    rocm: Fact[RocmInstall]


def build(snap: Mapping[str, Any], env: Fact[dict[str, str]]) -> RocmFacts:
    return RocmFacts(rocm=safe("/opt/rocm", lambda: _rocm(snap, env)))


# OS packages whose version is the ROCm release (`apt show rocm-libs`, `dpkg -l | grep rocm`, `rpm -qa`):
# 6.4.0.60400-47~22.04 -> 6.4.0. The meta packages AMD's repositories ship (ROCm install docs, "package list").
ROCM_PACKAGES = ("rocm-core", "rocm-libs", "rocm-hip-runtime", "rocm-hip-libraries", "rocm-dev", "rocm-utils", "rocm")


def _from_packages(snap: Mapping[str, Any]) -> Fact[RocmInstall] | None:
    pkgs = snap.get("packages")
    if not isinstance(pkgs, dict):
        return None
    for name in ROCM_PACKAGES:
        m = re.match(r"^(\d+\.\d+(?:\.\d+)?)", str(pkgs.get(name) or ""))
        if m:
            return found(RocmInstall(m.group(1), "/opt/rocm", (), None), f"package {name} {pkgs[name]}")
    return None


def _rocm(snap: Mapping[str, Any], env: Fact[dict[str, str]]) -> Fact[RocmInstall]:
    files = snap.get("files")
    if not isinstance(files, dict):
        return _from_packages(snap) or unknown("/opt/rocm")
    versions = []
    for p in sorted(files):
        m = re.match(r"^(/opt/rocm-[^/]+)/\.info/version$", p)
        if m and isinstance(files[p], str):
            v = parse_rocm_version(files[p])
            if v:
                versions.append((m.group(1), v))
    link = snapshot.path(snap, "/opt/rocm")
    link_target = (link.value or {}).get("link") if link.found else None
    candidates = []
    rocm_path = env.value.get("ROCM_PATH") if env.found and env.value else None
    if rocm_path:
        candidates.append(rocm_path.rstrip("/") + "/.info/version")
    candidates.append("/opt/rocm/.info/version")
    for c in candidates:
        f = snapshot.file(snap, c)
        if f.found:
            v = parse_rocm_version(f.value or "")
            if v:
                return found(RocmInstall(v, c.rsplit("/.info", 1)[0], tuple(versions), link_target), c)
            return error(c, f"unreadable version text {f.value!r:.40}")
    if versions:  # versioned installs without the /opt/rocm link
        prefix, v = max(versions, key=lambda pv: tuple(int(x) for x in pv[1].split(".")))
        return found(RocmInstall(v, prefix, tuple(versions), link_target), prefix)
    f = snapshot.file(snap, "/opt/rocm/.info/version")
    if f.status is Status.ABSENT:
        return absent("/opt/rocm/.info/version")
    return Fact(f.status, None, f.source, f.error)
