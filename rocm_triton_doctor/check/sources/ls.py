"""`ls -l` / `ls -la` / `stat` of /dev/kfd, /dev/dri and /dev/dxg -> `paths`.

A long-listing row gives type+mode, owner and group ("crw-rw---- 1 root render 226, 128 Aug 22 21:34 renderD128");
a row without a path belongs to the directory named in the command (`ls -l /dev/dri`). "ls: cannot access
'/dev/kfd': No such file or directory" records the path as probed-absent (`exists: false`). Numeric groups (a gid
without a name inside a container, "root 106") are kept as the text shows them. `readable`/`writable` are never
set from a listing: they need the user, which the checks combine.
"""

from __future__ import annotations

import re
from typing import Any

from rocm_triton_doctor.check.sources._frag import Fragment, merge

_ROW = re.compile(r"^(?P<type>[cdlbps-])(?P<perm>[rwxsStT-]{9})(?P<alt>[.+@]?)\s+\d+\s+(?P<owner>\S+)\s+(?P<group>\S+)\s+"
                  r"(?:\d+,\s*\d+|\d+)\s+\w{3}\s+\d{1,2}\s+(?:\d{1,2}:\d{2}|\d{4})\s+(?P<name>\S+)(?:\s+->\s+(?P<link>\S+))?\s*$")
_MISSING = re.compile(r"(?:ls|stat): cannot (?:access|stat) '?(?P<path>/dev/[^':\s]+)'?: No such file or directory")
_INTEREST = re.compile(r"^/dev/(kfd|dxg|dri(/(renderD\d+|card\d+|by-path.*))?)$")
_TYPES = {"c": 0o020000, "d": 0o040000, "l": 0o120000, "b": 0o060000, "-": 0o100000, "p": 0o010000, "s": 0o140000}


def detect(text: str) -> bool:
    return bool(_MISSING.search(text) or any(_ROW.match(re.sub(r"(\*\*|__)(\S+?)\1", r"\2", ln.strip()))
                                             and re.search(r"(kfd|renderD\d+|card\d+|dxg)\b", ln)
                                             for ln in text.splitlines()))


def _mode(type_: str, perm: str) -> int:
    bits = 0
    for i, ch in enumerate(perm):
        if ch not in "-ST":
            bits |= 1 << (8 - i)
    return _TYPES.get(type_, 0) | bits


def parse(text: str, cmd: str | None = None) -> Fragment:
    frag: Fragment = {}
    args = [a for a in (cmd or "").split()[1:] if not a.startswith("-")]
    dirs = [a.rstrip("/") for a in args if a.rstrip("/") in ("/dev/dri", "/dev")]
    here = dirs[0] if len(dirs) == 1 else None
    for ln in text.splitlines():
        # Markdown emphasis a reporter put around a field (`root **148**`, lemonade#2799) is not part of it.
        s = re.sub(r"(\*\*|__)(\S+?)\1", r"\2", ln.strip())
        m = _MISSING.search(s)
        if m and _INTEREST.match(m.group("path").rstrip("/")):
            merge(frag, {"paths": {m.group("path").rstrip("/"): {"exists": False}}})
            continue
        m = _ROW.match(s)
        if not m:
            continue
        name = m.group("name")
        if name in (".", ".."):
            continue
        path = name if name.startswith("/") else (f"{here}/{name}" if here else None)
        if path is None and re.match(r"^renderD\d+$|^card\d+$", name):
            path = f"/dev/dri/{name}"
        if path is None and name in ("kfd", "dxg"):
            path = f"/dev/{name}"
        if path is None or not _INTEREST.match(path):
            continue
        entry: dict[str, Any] = {"exists": True, "mode": oct(_mode(m.group("type"), m.group("perm"))),
                                 "owner": m.group("owner"), "group": m.group("group")}
        if m.group("link"):
            entry["link"] = m.group("link")
        if m.group("alt") == "+":  # an ACL: the mode alone does not say who may open the node
            entry["acl"] = True
        merge(frag, {"paths": {path: entry}})
    return frag


# A node's mode and owner said in a sentence: "`/dev/kfd` = `crw-rw---- root root` after boot" (hal0#420), "/dev/kfd
# is crw-rw---- root video": the same fields `ls -l` prints, without its link count, size and date.
_PROSE = re.compile(r"`?(?P<path>/dev/(?:kfd|dri/renderD\d+))`?\s*(?:=|:|is|was)\s*`?(?P<type>c)(?P<perm>[rwxsStT-]{9})"
                    r"\s+(?P<owner>[\w.-]+)\s+(?P<group>[\w.-]+)`?")


def parse_prose_modes(text: str, cmd: str | None = None) -> Fragment:
    frag: Fragment = {}
    for m in _PROSE.finditer(text):
        merge(frag, {"paths": {m.group("path"): {"exists": True, "mode": oct(_mode(m.group("type"), m.group("perm"))),
                                                 "owner": m.group("owner"), "group": m.group("group")}}})
    return frag


_STRACE = re.compile(r"\b(?:open|openat|access|stat)\((?:AT_FDCWD,\s*)?\"(?P<path>/dev/(?:kfd|dri/renderD\d+|dxg))\"[^)]*\)\s*="
                     r"\s*(?:-1\s+(?P<errno>E[A-Z]+)\s*\((?P<msg>[^)]*)\)|(?P<ok>\d+))")
_DEVICE = re.compile(r"/dev/(?:kfd|dri/renderD\d+)\b")


def parse_open_errors(text: str, cmd: str | None = None) -> Fragment:
    """What opening a device node gave, as strace or a program's error shows it.

    strace: `openat(AT_FDCWD, "/dev/kfd", O_RDWR|O_CLOEXEC) = -1 ENOMEM (Cannot allocate memory)`; ENOENT records the
    node as absent. A program error: a segment that names exactly one device node and says "Permission denied"
    (amdgpu_top: `DevicePath { render: "/dev/dri/renderD128" … }` … `Permission denied (os error 13)`)."""
    frag: Fragment = {}
    for m in _STRACE.finditer(text):
        path = m.group("path")
        if m.group("ok") is not None:
            merge(frag, {"paths": {path: {"exists": True}}})
        elif m.group("errno") == "ENOENT":
            merge(frag, {"paths": {path: {"exists": False}}})
        else:
            merge(frag, {"paths": {path: {"exists": True, "open_error": m.group("msg").strip()}}})
    # rocminfo names the group that owns the DRM render nodes when the user is not in it: `alice is not member of
    # "nogroup" group, the default DRM access group` (distrobox#1230: the host's render gid, unmapped in a rootless
    # user namespace, shows as nogroup).
    drm = re.search(r'is not member of "(?P<group>[^"\s]+)" group, the default DRM access group', text)
    if drm:
        merge(frag, {"system": {"drm_access_group": drm.group("group")}})
    # Any case: ollama logs "open /dev/kfd: permission denied" (amd_linux.go), Rust prints "Permission denied".
    if "paths" not in frag and re.search(r"permission denied", text, re.I) and "Unable to open /dev/kfd" not in text:
        found = set(_DEVICE.findall(text))
        if len(found) == 1 and not _ROW.search(text):
            merge(frag, {"paths": {found.pop(): {"exists": True, "open_error": "Permission denied"}}})
    return frag
