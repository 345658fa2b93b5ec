"""--lock / --from-lock: the exact versions and index of a VERIFIED install, and the machine it was verified on."""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path
from typing import Any

from rocm_triton_doctor import __version__, knowledge
from rocm_triton_doctor.check.facts import Facts
from rocm_triton_doctor.install.plan import Plan
from rocm_triton_doctor.install.sources import check_url
from rocm_triton_doctor.check.summary import facts_summary

LOCK_SCHEMA = "rocm-triton-doctor/lock/1"
LOCKED = ("torch", "torchvision", "torchaudio", "triton", "pytorch-triton-rocm", "triton-rocm", "pytorch-triton")


class LockError(Exception):
    """The lock file cannot be used, or this machine differs from the verified one in a way that matters."""


def write(path: str, plan: Plan, installed_env: dict[str, str], verified: Facts) -> dict[str, Any]:
    s = facts_summary(verified)
    lock = {
        "schema": LOCK_SCHEMA, "tool_version": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
        "platform": plan.platform, "index": plan.index, "index_url": plan.index_url,
        "python": ".".join(plan.python_version.split(".")[:2]),
        "packages": {k: v for k, v in sorted(installed_env.items()) if k in LOCKED},
        "env": plan.env,
        "verified_on": {"gfx": sorted({g["effective_gfx"] or g["gfx"] for g in s["amd_gpus"] if g["gfx"]}),
                        "gpus": [g["name"] for g in s["amd_gpus"]] or (s["nvidia"] or {}).get("gpus", []),
                        "rocm": s["rocm"], "amdgpu": s["amdgpu"], "kernel": s["kernel"], "os": s["os"],
                        "torch_arch_list": s["torch_arch_list"], "hip_version": s["hip_version"],
                        "cuda_version": s["cuda_version"]},
    }
    from rocm_triton_doctor import outputs

    outputs.write_text(path, json.dumps(lock, indent=1) + "\n")
    return lock


def read(path: str) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LockError(f"lock file not found: {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LockError(f"cannot read lock file {path}: {exc}") from None
    if not isinstance(data, dict) or data.get("schema") != LOCK_SCHEMA:
        raise LockError(f"{path} is not a rocm-triton-doctor lock file (schema {LOCK_SCHEMA})")
    if not isinstance(data.get("packages"), dict) or "torch" not in data["packages"]:
        raise LockError(f"{path} names no torch version")
    if data.get("index_url"):
        check_url(data["index_url"])
    return data


def compatible(lock: dict[str, Any], platform: str, python_version: str, facts: Facts) -> list[str]:
    """Refuse (LockError) when this machine differs in a way that matters; return notes for harmless differences."""
    notes = []
    if lock["platform"] != platform:
        raise LockError(f"the lock was verified on a {lock['platform']} machine; this one is {platform}")
    py = ".".join(python_version.split(".")[:2])
    if lock["python"] != py:
        raise LockError(f"the lock is for Python {lock['python']} (wheels are built per Python version); this "
                        f"interpreter is {py}: use --python with a Python {lock['python']}")
    if platform == "amd":
        here = sorted({g.effective_gfx or g.gfx for g in (facts.gpus.value or ()) if g.gfx}) if facts.gpus.found else []
        arch = set(lock["verified_on"].get("torch_arch_list") or knowledge.index_arches(lock.get("index") or "") or ())
        arch = {knowledge.base_gfx(a) for a in arch}
        missing = [g for g in here if arch and g not in arch]
        if missing:
            raise LockError(f"this machine's GPU ({', '.join(missing)}) is not in the locked torch's arch list "
                            f"({', '.join(sorted(arch))}); the lock cannot work here")
        if here != lock["verified_on"].get("gfx"):
            notes.append(f"verified on {', '.join(lock['verified_on'].get('gfx') or ['?'])}, this machine has "
                         f"{', '.join(here) or 'none'} (all carried by the locked wheel)")
    s = facts_summary(facts)
    for key in ("kernel", "rocm"):
        if lock["verified_on"].get(key) and s.get(key) and lock["verified_on"][key] != s[key]:
            notes.append(f"{key} differs: locked on {lock['verified_on'][key]}, here {s[key]}")
    return notes
