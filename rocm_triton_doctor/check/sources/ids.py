"""`id`, `groups`, `whoami` -> `user`.

`id` prints the uid, the user and every group of the running session: `groups` is then the full list.
`groups` prints the names only (the user is unknown). `id -nG` is the same as `groups`.
"""

from __future__ import annotations

import re

from rocm_triton_doctor.check.sources._frag import Fragment

_ID = re.compile(r"uid=(?P<uid>\d+)(?:\((?P<name>[^)]*)\))?\s+gid=\d+(?:\([^)]*\))?(?:\s+groups=(?P<groups>\S+))?")


def detect(text: str) -> bool:
    return bool(_ID.search(text))


def parse_id(text: str, cmd: str | None = None) -> Fragment:
    m = _ID.search(text)
    if not m:
        return {}
    user: dict[str, object] = {"uid": int(m.group("uid"))}
    if m.group("name"):
        user["name"] = m.group("name")
    if m.group("groups"):
        groups = []
        for g in m.group("groups").split(","):
            gm = re.match(r"^(\d+)(?:\(([^)]*)\))?$", g)
            if gm:
                groups.append(gm.group(2) or gm.group(1))
        user["groups"] = groups
    return {"user": user}


def parse_groups(text: str, cmd: str | None = None) -> Fragment:
    """`groups` -> names; `groups alice` prints 'alice : alice video' (the groups configured in /etc/group)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return {}
    line = lines[0]
    if " : " in line:
        name, _, rest = line.partition(" : ")
        if not re.match(r"^[\w.-]+$", name.strip()):
            return {}
        return {"user": {"name": name.strip(), "groups_configured": rest.split()}}
    words = line.split()
    if not words or not all(re.match(r"^[\w.-]+$", w) for w in words):
        return {}
    return {"user": {"groups": words}}


def parse_whoami(text: str, cmd: str | None = None) -> Fragment:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if len(lines) == 1 and re.match(r"^[\w.-]+$", lines[0]):
        return {"user": {"name": lines[0]}}
    return {}
