"""The snapshot: everything the probes saw, as a versioned, hand-writable JSON document (DESIGN §2).

A missing section or key means "not probed / unknown"; inside `files`, `null` means "probed, and absent".
The evidence accessors at the end (`file`, `path`, `command`) read one entry of a loaded snapshot as a `Fact`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocm_triton_doctor.check.facts.base import Fact, absent, error, found, unknown
from rocm_triton_doctor.check.shape import _json_type, problems

SCHEMA = "rocm-triton-doctor/snapshot/1"
SECTIONS = {"files": dict, "paths": dict, "commands": dict, "env": dict, "user": dict, "python": dict,
            "runtime": dict, "which": dict, "system": dict}


class SnapshotError(Exception):
    """The snapshot cannot be used at all (unreadable, not JSON, wrong schema). Maps to exit code 3."""


def validate(data: Any, origin: str = "snapshot") -> dict[str, Any]:
    if not isinstance(data, dict):
        raise SnapshotError(f"{origin}: expected a JSON object, got {_json_type(data)}")
    schema = data.get("schema")
    if schema is None:
        raise SnapshotError(f"{origin}: missing 'schema' (expected {SCHEMA!r})")
    if not isinstance(schema, str) or not schema.startswith("rocm-triton-doctor/snapshot/"):
        raise SnapshotError(f"{origin}: not a rocm-triton-doctor snapshot (schema {schema!r})")
    if schema != SCHEMA:
        raise SnapshotError(f"{origin}: snapshot schema {schema!r} is not supported by this version (wants {SCHEMA!r})")
    for name, kind in SECTIONS.items():
        if name in data and data[name] is not None and not isinstance(data[name], kind):
            raise SnapshotError(f"{origin}: section {name!r} must be a JSON object, got {_json_type(data[name])}")
    bad = problems(data)  # one level down too (issue #18 defect 17): never "torch is not installed in 5"
    if bad:
        raise SnapshotError(f"{origin}: wrong types inside the snapshot: {'; '.join(bad)}")
    return data


def load(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SnapshotError(f"snapshot file not found: {p}") from None
    except IsADirectoryError:
        raise SnapshotError(f"snapshot path is a directory: {p}") from None
    except OSError as exc:
        raise SnapshotError(f"cannot read snapshot {p}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise SnapshotError(f"snapshot {p} is not UTF-8 text") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SnapshotError(f"snapshot {p} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    return validate(data, origin=str(p))


def save(data: dict[str, Any], path: str | Path) -> None:
    """Atomically for a new or regular file, through a device node, FIFO or symlink (outputs.py)."""
    from rocm_triton_doctor import outputs

    outputs.write_text(str(path), json.dumps(data, indent=2, sort_keys=False) + "\n")


# -- evidence accessors: one snapshot entry -> a Fact -----------------------------------------------------------

@dataclass(frozen=True)
class CommandRun:
    name: str
    argv: tuple[str, ...]
    returncode: int | None
    timed_out: bool
    missing: bool
    error: str | None
    stdout: str
    stderr: str


def file(snap: Mapping[str, Any], path: str) -> Fact[str]:
    files = snap.get("files")
    if not isinstance(files, dict) or path not in files:
        return unknown(path)
    v = files[path]
    if v is None:
        return absent(path)
    if isinstance(v, dict) and "error" in v:
        return error(path, str(v["error"]))
    if not isinstance(v, str):
        return error(path, f"unexpected value of type {type(v).__name__}")
    return found(v, path)


def path(snap: Mapping[str, Any], path: str) -> Fact[dict[str, Any]]:
    paths = snap.get("paths")
    if not isinstance(paths, dict) or path not in paths:
        return unknown(path)
    v = paths[path]
    if v is None or (isinstance(v, dict) and v.get("exists") is False):
        return absent(path)
    if not isinstance(v, dict):
        return error(path, f"unexpected value of type {type(v).__name__}")
    return found(v, path)


def command(snap: Mapping[str, Any], name: str) -> Fact[CommandRun]:
    cmds = snap.get("commands")
    if not isinstance(cmds, dict) or name not in cmds:
        return unknown(name)
    c = cmds[name]
    if c is None:
        return absent(name)
    if isinstance(c, str):  # hand-written snapshot: just the text a user pasted
        return found(CommandRun(name, (name,), 0, False, False, None, c, ""), name)
    if not isinstance(c, dict):
        return error(name, f"unexpected value of type {type(c).__name__}")
    run = CommandRun(name, tuple(c.get("argv") or (name,)), c.get("returncode"), bool(c.get("timed_out")),
                     bool(c.get("missing")), c.get("error"), str(c.get("stdout") or ""), str(c.get("stderr") or ""))
    if run.missing:
        return absent(name)
    return found(run, " ".join(run.argv))


def commands(snap: Mapping[str, Any]) -> tuple[CommandRun, ...]:
    """Every command that ran (found), in snapshot order."""
    cmds = snap.get("commands")
    if not isinstance(cmds, dict):
        return ()
    out = []
    for name in cmds:
        c = command(snap, name)
        if c.found and c.value is not None:
            out.append(c.value)
    return tuple(out)
