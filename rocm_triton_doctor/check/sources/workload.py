"""Pasted workload environment -> `workload_env` (issue #15 item 4; the live probe is check/probes/workload.py).

Recognised: `systemctl show NAME [-p Environment -p EnvironmentFiles]` output (`Environment=A=1 B=2`,
`EnvironmentFiles=/etc/x (ignore_errors=yes)`), `systemctl cat NAME` / unit-file `Environment=` lines, and
`cat /proc/PID/environ | tr '\\0' '\\n'` (or `xargs -0 -n1`, `strings`). The contents of EnvironmentFile= paths are
not in the paste, so a unit that lists one is recorded `complete: false` (its unlisted variables are unknown).
"""

from __future__ import annotations

import re

from rocm_triton_doctor.check.probes.workload import keep, parse_environ, parse_show
from rocm_triton_doctor.check.sources._frag import Fragment

_ENVIRON = re.compile(r"/proc/(\d+|self)/environ")
_SHOW = re.compile(r"^(Environment|EnvironmentFiles|EnvironmentFile)=", re.M)


def detect(cmd: str | None, body: str) -> bool:
    """A systemctl or /proc/PID/environ segment (then the shell-env parser must not read it as this shell's)."""
    c = cmd or ""
    if _ENVIRON.search(c):
        return True
    if re.search(r"\bsystemctl\s+(show|cat)\b", c):
        return True
    return not c and bool(re.search(r"^Environment=\S+=", body, re.M))


def parse(text: str, cmd: str | None = None) -> Fragment:
    c = cmd or ""
    m = _ENVIRON.search(c)
    if m:
        env = keep(parse_environ(text))
        return {"workload_env": {"source": f"pid {m.group(1)}", "env": env, "complete": True}}
    unit = re.search(r"\bsystemctl\s+(?:show|cat)\s+(?:-\S+\s+\S+\s+)*([A-Za-z0-9@_.:\\-]+)", c)
    lines = []
    for ln in text.splitlines():
        s = ln.strip()
        if s.startswith("EnvironmentFile=") and "=" in s:  # unit-file spelling: `-` before the path = optional
            s = "EnvironmentFiles=" + s.split("=", 1)[1]
        lines.append(s)
    if not _SHOW.search("\n".join(lines)):
        return {}
    env, files = parse_show("\n".join(lines))
    sec: dict[str, object] = {"source": f"unit {unit.group(1)}" if unit else "pasted systemctl output", "env": keep(env),
                              "complete": not files}
    if files:
        sec["files"] = [p for p, _ in files]
        sec["unread"] = [f"{p}: contents not shown (paste `cat {p}`)" for p, _ in files]
    return {"workload_env": sec}
