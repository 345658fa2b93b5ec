"""The environment the GPU workload really runs with (issue #15 item 4): `check --pid PID` / `check --unit NAME`.

The shell that runs `check` is often not the process that uses the GPU: a systemd service (ollama, a model server)
or a container gets its environment from its unit or launcher, so an HSA_OVERRIDE_GFX_VERSION exported in ~/.bashrc
never reaches it (ollama/ollama#3107, #5090). This probe reads that environment:
* a process: /proc/PID/environ (NUL-separated; the environment it was exec'd with — proc(5)); readable only by the
  process's owner or root;
* a systemd unit: `systemctl show NAME -p Environment -p EnvironmentFiles` and the files listed there. systemd.exec(5):
  variables from EnvironmentFile= override those from Environment=; `-` before a path (or `(ignore_errors=yes)` in
  `systemctl show`) means the file is optional.

Only allow-listed variables are kept (no secrets in a snapshot). Section written to the snapshot as `workload_env`
(docs/snapshot.md): {"source": "pid 1234" | "unit ollama.service", "env": {...}, ...} or {"source", "error"}.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Callable, Mapping

from rocm_triton_doctor.check.probes.runner import Runner

NAMES = ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "LD_LIBRARY_PATH",
         "ROCM_PATH", "PYTORCH_ROCM_ARCH", "MIOPEN_USER_DB_PATH")
PREFIXES = ("HSA_",)  # HSA_OVERRIDE_GFX_VERSION[_N], HSA_XNACK, HSA_ENABLE_SDMA …
_UNIT = re.compile(r"^[A-Za-z0-9@_.:\\-]+$")  # systemd unit name characters (systemd.unit(5)); never a shell word


def relevant(name: str) -> bool:
    return name in NAMES or name.startswith(PREFIXES)


def keep(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in sorted(env.items()) if relevant(k)}


def parse_environ(data: str) -> dict[str, str]:
    """/proc/PID/environ: NAME=value entries separated by NUL (or by newlines, as `tr '\\0' '\\n'` prints them)."""
    out: dict[str, str] = {}
    for item in re.split(r"[\0\n]", data):
        name, eq, value = item.partition("=")
        if eq and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            out.setdefault(name, value)
    return out


def parse_show(text: str) -> tuple[dict[str, str], list[tuple[str, bool]]]:
    """`systemctl show -p Environment -p EnvironmentFiles` -> (Environment= variables, [(file, optional)]).

    Environment= is printed space-separated, an entry with blanks in double quotes (`Environment="A=1 2" B=3`);
    EnvironmentFiles= one line per file, `/etc/x (ignore_errors=yes)`."""
    env: dict[str, str] = {}
    files: list[tuple[str, bool]] = []
    for line in text.splitlines():
        key, eq, value = line.strip().partition("=")
        if not eq:
            continue
        if key == "Environment":
            try:
                words = shlex.split(value)
            except ValueError:
                words = value.split()
            for w in words:
                name, eq2, v = w.partition("=")
                if eq2:
                    env[name] = v
        elif key == "EnvironmentFiles" and value.strip():
            m = re.match(r"^(-?)(\S+)(?:\s+\(ignore_errors=(yes|no)\))?", value.strip())
            if m:
                files.append((m.group(2), bool(m.group(1)) or m.group(3) == "yes"))
    return env, files


def parse_env_file(text: str) -> dict[str, str]:
    """An EnvironmentFile: NAME=value lines, `#`/`;` comments, optional quotes (systemd.exec(5))."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        s = line.strip()
        if not s or s[0] in "#;":
            continue
        name, eq, value = s.partition("=")
        name, value = name.strip(), value.strip()
        if eq and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            out[name] = value
    return out


def read_pid(pid: int, read: Callable[[str], bytes | None]) -> dict[str, object]:
    """`read(path)` returns the bytes, None when absent, and raises PermissionError when not allowed."""
    source = f"pid {pid}"
    try:
        data = read(f"/proc/{pid}/environ")
    except PermissionError:
        return {"source": source, "error": f"permission denied reading /proc/{pid}/environ", "permission": True}
    except OSError as exc:
        return {"source": source, "error": f"cannot read /proc/{pid}/environ: {exc.strerror or exc}"}
    if data is None:
        return {"source": source, "error": f"no process {pid}", "missing": True}
    out: dict[str, object] = {"source": source, "env": keep(parse_environ(data.decode("utf-8", "replace"))),
                              "complete": True}
    try:
        comm = read(f"/proc/{pid}/comm")
    except OSError:
        comm = None
    if comm:
        out["command"] = comm.decode("utf-8", "replace").strip()
    return out


def read_unit(unit: str, runner: Runner, environ: Mapping[str, str], read: Callable[[str], bytes | None],
              timeout: float) -> dict[str, object]:
    source = f"unit {unit}"
    if not _UNIT.match(unit):
        return {"source": source, "error": f"not a systemd unit name: {unit!r}"}
    exe = shutil.which("systemctl", path=environ.get("PATH", os.defpath))
    if not exe:
        return {"source": source, "error": "systemctl not found (no systemd here?)", "missing": True}
    res = runner([exe, "show", unit, "-p", "LoadState", "-p", "Environment", "-p", "EnvironmentFiles"], timeout,
                 {**environ, "LC_ALL": "C"})
    if res.timed_out:
        return {"source": source, "error": f"systemctl show timed out after {timeout:g} s"}
    if res.missing or res.error or res.returncode != 0:
        tail = (res.stderr.strip().splitlines() or [res.error or f"exit {res.returncode}"])[-1][:300]
        return {"source": source, "error": f"systemctl show {unit} failed: {tail}"}
    if re.search(r"^LoadState=not-found", res.stdout, re.M):
        return {"source": source, "error": f"no unit {unit}", "missing": True}
    env, files = parse_show(res.stdout)
    unread: list[str] = []
    for path, optional in files:  # later files and files over Environment= (systemd.exec(5))
        try:
            data = read(path)
        except OSError as exc:
            unread.append(f"{path}: {exc.strerror or exc}")
            continue
        if data is None:
            if not optional:
                unread.append(f"{path}: missing (the unit fails to start without it)")
            continue
        env.update(parse_env_file(data.decode("utf-8", "replace")))
    out: dict[str, object] = {"source": source, "env": keep(env), "complete": not unread,
                              "files": [p for p, _ in files]}
    if unread:
        out["unread"] = unread
    return out
