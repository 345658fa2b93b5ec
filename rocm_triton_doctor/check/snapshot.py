"""The snapshot: everything the probes saw, as a versioned, hand-writable JSON document (DESIGN §2).

A missing section or key means "not probed / unknown"; inside `files`, `null` means "probed, and absent".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
    """Write atomically: a half-written snapshot must never replace a good one."""
    p = Path(path)
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    tmp.replace(p)
