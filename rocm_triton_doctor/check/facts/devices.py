"""Device nodes (/dev/kfd, /dev/dri/renderD*, /dev/dxg) and the user who must open them."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from rocm_triton_doctor.check import snapshot
from rocm_triton_doctor.check.facts.base import Fact, Status, absent, error, found, safe, unknown


@dataclass(frozen=True)
class DeviceNode:
    path: str
    mode: int | None
    owner: str | None
    group: str | None
    readable: bool | None  # None: not measured (snapshot written by hand, or --root)
    writable: bool | None
    open_error: str | None = None  # strerror of a failed open, as a tool reported it (rocminfo, strace, a panic)
    acl: bool = False  # `ls -l` showed "+" after the mode: an ACL (systemd-logind's uaccess) may grant more than it

    @property
    def perms(self) -> str:
        return oct(self.mode & 0o777)[2:].rjust(4, "0") if self.mode is not None else "?"

    @property
    def world_rw(self) -> bool:
        return self.mode is not None and (self.mode & 0o006) == 0o006

    @property
    def group_rw(self) -> bool:
        return self.mode is not None and (self.mode & 0o060) == 0o060


@dataclass(frozen=True)
class User:
    name: str
    uid: int | None
    groups: tuple[str, ...]
    groups_configured: tuple[str, ...] | None
    groups_known: bool = True  # False: the snapshot names the user but not (all of) their groups


class DeviceFacts(TypedDict):
    dev_kfd: Fact[DeviceNode]
    render_nodes: Fact[tuple[DeviceNode, ...]]
    dev_dxg: Fact[bool]
    user: Fact[User]


def build(snap: Mapping[str, Any]) -> DeviceFacts:
    dxg = snapshot.path(snap, "/dev/dxg")
    return DeviceFacts(
        dev_kfd=safe("/dev/kfd", lambda: _device(snap, "/dev/kfd")),
        render_nodes=safe("/dev/dri", lambda: _render_nodes(snap)),
        dev_dxg=Fact(Status.FOUND, True, "/dev/dxg") if dxg.found else Fact(dxg.status, None, dxg.source, dxg.error),
        user=safe("user", lambda: _user(snap)),
    )


def _device(snap: Mapping[str, Any], path: str) -> Fact[DeviceNode]:
    p = snapshot.path(snap, path)
    if not p.found:
        return Fact(p.status, None, p.source, p.error)
    v = p.value or {}
    if "error" in v:
        return error(path, str(v["error"]))
    mode = v.get("mode")
    try:
        mode_int = int(mode, 8) if isinstance(mode, str) else (int(mode) if mode is not None else None)
    except ValueError:
        mode_int = None
    oe = v.get("open_error")
    return found(DeviceNode(path, mode_int, v.get("owner"), v.get("group"), v.get("readable"), v.get("writable"),
                            str(oe) if oe else None, v.get("acl") is True), path)


def _render_nodes(snap: Mapping[str, Any]) -> Fact[tuple[DeviceNode, ...]]:
    paths = snap.get("paths")
    if not isinstance(paths, dict):
        return unknown("/dev/dri")
    names = sorted(p for p in paths if re.match(r"^/dev/dri/renderD\d+$", p))
    nodes = [d.value for d in (_device(snap, n) for n in names) if d.found and d.value]
    if nodes:
        return found(tuple(nodes), "/dev/dri/renderD*")
    if "/dev/dri" in paths or names:
        return absent("/dev/dri/renderD*")
    return unknown("/dev/dri")


def _user(snap: Mapping[str, Any]) -> Fact[User]:
    u = snap.get("user")
    if not isinstance(u, dict):
        return unknown("user")
    groups = tuple(str(g) for g in u.get("groups", []) or [])
    conf = u.get("groups_configured")
    partial = snap.get("partial")
    known = isinstance(u.get("groups"), list) and not (isinstance(partial, list) and "user.groups" in partial)
    return found(User(str(u.get("name", "?")), u.get("uid"), groups,
                      tuple(str(g) for g in conf) if isinstance(conf, list) else None, known), "user")
