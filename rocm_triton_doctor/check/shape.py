"""Types one level inside a snapshot's sections: wrong ones are a clear error, never nonsense findings.

snapshot.validate() already refuses a section of the wrong type ("section 'files' must be a JSON object"). One level
down, values were coerced with str(): `"python": {"executable": 5}` gave "torch is not installed in 5", a list as an
env value gave `HSA_OVERRIDE_GFX_VERSION_1="['x']" is invalid` (issue #18, defect 17). The rules below are what the
probes write (probes/collect.py, scripts/*.py) and what docs/snapshot.md allows by hand (a command may be given as
its plain text output; a distribution as its version string). `null` stays allowed everywhere: it means "probed,
absent".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Rule = Callable[[Any], bool]


def _json_type(v: Any) -> str:
    """The JSON word for a Python value's type: the user wrote JSON, not Python."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    names: dict[type, str] = {str: "string", list: "array", dict: "object"}
    return names.get(type(v), type(v).__name__)


def _opt(*types: type) -> Rule:
    def rule(v: Any) -> bool:
        return v is None or (isinstance(v, types) and not (isinstance(v, bool) and bool not in types))
    return rule


def _list_of(*types: type) -> Rule:
    return lambda v: v is None or (isinstance(v, list) and all(isinstance(x, types) for x in v))


_STR, _INT, _BOOL, _NUM = _opt(str), _opt(int), _opt(bool), _opt(int, float)

# Known keys only: an unknown key is allowed (newer doctors add keys) and is ignored by the facts.
_FIELDS: dict[str, dict[str, Rule]] = {
    "python": {"executable": _STR, "version": _STR, "implementation": _STR, "prefix": _STR, "virtualenv": _BOOL,
               "conda": _BOOL, "externally_managed": _BOOL, "include_dir": _STR, "python_h": _BOOL, "purelib": _STR,
               "distributions": _opt(dict), "triton_owners": _list_of(str), "error": _STR},
    "runtime": {"torch_version": _STR, "hip_version": _STR, "cuda_version": _STR, "is_available": _BOOL,
                "device_count": _INT, "devices": _list_of(dict), "arch_list": _list_of(str), "triton_version": _STR,
                "triton_backend": _STR, "triton_arch": _STR, "triton_error": _STR, "error": _STR,
                "torch_import_failed": _BOOL, "timed_out": _BOOL, "torch_imported": _BOOL, "triton_installed": _BOOL,
                "triton_imported": _BOOL, "triton_import_error": _STR},
    "user": {"name": _STR, "uid": _INT, "groups": _list_of(str), "groups_configured": _list_of(str)},
    "system": {"hostname": _STR, "machine": _STR},
}
_COMMAND: dict[str, Rule] = {"argv": _list_of(str), "returncode": _INT, "stdout": _STR, "stderr": _STR,
                             "timed_out": _BOOL, "missing": _BOOL, "error": _STR}
_PATH: dict[str, Rule] = {"exists": _BOOL, "mode": _opt(str, int), "uid": _INT, "gid": _INT, "owner": _STR,
                          "group": _STR, "link": _STR, "readable": _BOOL, "writable": _BOOL, "error": _STR}


def problems(snap: Mapping[str, Any], limit: int = 5) -> list[str]:
    """Up to `limit` descriptions like "python.executable must be a string, got number"."""
    out: list[str] = []

    def bad(where: str, want: str, v: Any) -> None:
        out.append(f"{where} must be {want}, got {_json_type(v)}")

    for section, fields in _FIELDS.items():
        sec = snap.get(section)
        if isinstance(sec, dict):
            for key, rule in fields.items():
                if key in sec and not rule(sec[key]):
                    bad(f"{section}.{key}", _want(rule, sec[key]), sec[key])
    files = snap.get("files")
    if isinstance(files, dict):
        for k, v in files.items():
            if not (v is None or isinstance(v, str) or (isinstance(v, dict) and isinstance(v.get("error"), str))):
                bad(f"files[{k!r}]", 'a string, null or {"error": "..."}', v)
    for name in ("env", "which"):
        sec = snap.get(name)
        if isinstance(sec, dict):
            for k, v in sec.items():
                if v is not None and not isinstance(v, str):
                    bad(f"{name}[{k!r}]", "a string or null", v)
    paths = snap.get("paths")
    if isinstance(paths, dict):
        for k, v in paths.items():
            if v is not None and not isinstance(v, dict):
                bad(f"paths[{k!r}]", "an object or null", v)
            elif isinstance(v, dict):
                out += [f"paths[{k!r}].{f} must be {_want(r, v[f])}, got {_json_type(v[f])}"
                        for f, r in _PATH.items() if f in v and not r(v[f])]
    cmds = snap.get("commands")
    if isinstance(cmds, dict):
        for k, v in cmds.items():
            if v is not None and not isinstance(v, (str, dict)):
                bad(f"commands[{k!r}]", "an object, its output as a string, or null", v)
            elif isinstance(v, dict):
                out += [f"commands[{k!r}].{f} must be {_want(r, v[f])}, got {_json_type(v[f])}"
                        for f, r in _COMMAND.items() if f in v and not r(v[f])]
    py = snap.get("python")
    if isinstance(py, dict) and isinstance(py.get("distributions"), dict):
        for k, v in py["distributions"].items():
            if not isinstance(v, (str, dict)) or (isinstance(v, dict) and not isinstance(v.get("version", ""), str)):
                bad(f"python.distributions[{k!r}]", 'a version string or {"version": "..."}', v)
    return out[:limit]


def _want(rule: Rule, value: Any) -> str:
    for probe, word in (("", "a string"), (0, "a number"), (True, "true or false"), ([], "an array"), ({}, "an object")):
        if rule(probe):
            return word + (" (of strings)" if word == "an array" and isinstance(value, list) else "") + " or null"
    return "something else"
