"""Small hand-made snapshots for the check pipeline's unit tests: each test states the facts it needs, nothing else."""

from __future__ import annotations

from typing import Any

from rocm_triton_doctor.check.checks import by_id, run_checks
from rocm_triton_doctor.check.facts import Facts, build_facts
from rocm_triton_doctor.check.findings import Finding

KFD = "/sys/class/kfd/kfd/topology/nodes"
SCHEMA = "rocm-triton-doctor/snapshot/1"


def minimal_snapshot(**sections: Any) -> dict[str, Any]:
    snap: dict[str, Any] = {"schema": SCHEMA}
    snap.update(sections)
    return snap


def gpu(node: int, gtv: int, dev: int = 0) -> dict[str, str]:
    """The KFD properties file of one GPU node (gfx_target_version 90402 = gfx942, 110000 = gfx1100, ...)."""
    return {f"{KFD}/{node}/properties": f"simd_count 80\nsimd_per_cu 2\ngfx_target_version {gtv}\ndevice_id {dev}\n"}


def rocm_python(torch: str, triton: tuple[str, str] | None = None, extra: dict[str, str] | None = None,
                version: str = "3.12.3") -> dict[str, Any]:
    """A `python` section: torch (requiring `triton` when given), that triton, and `extra` distributions."""
    d: dict[str, Any] = {"torch": {"version": torch, "requires": [f"{triton[0]}=={triton[1]}"] if triton else []}}
    if triton:
        d[triton[0]] = {"version": triton[1], "requires": []}
    for k, v in (extra or {}).items():
        d[k] = {"version": v, "requires": []}
    return {"version": version, "distributions": d, "triton_owners": [n for n in d if "triton" in n]}


def node(mode: str = "0o20666", owner: str = "root", group: str = "render", **measured: bool) -> dict[str, Any]:
    """A `paths` entry for a device node, as the collector writes it (mode in octal text)."""
    return {"exists": True, "mode": mode, "owner": owner, "group": group, **measured}


def bob(*groups: str, configured: list[str] | None = None) -> dict[str, Any]:
    user: dict[str, Any] = {"name": "bob", "uid": 1000, "groups": ["bob", *groups]}
    if configured is not None:
        user["groups_configured"] = configured
    return user


AMD_LIVE = {"/sys/module/amdgpu/initstate": "live\n"}  # an AMD machine: amdgpu is loaded


def facts(**sections: Any) -> Facts:
    return build_facts(minimal_snapshot(**sections))


def run(check_id: str, snap: dict[str, Any]) -> list[Finding]:
    return run_checks(build_facts(snap), [by_id()[check_id]])


def severities(check_id: str, **sections: Any) -> list[str]:
    return [f.severity.value for f in run(check_id, minimal_snapshot(**sections))]


def one(check_id: str, **sections: Any) -> Finding:
    """The single finding a check gives for this snapshot."""
    out = run(check_id, minimal_snapshot(**sections))
    assert len(out) == 1, [(f.severity.value, f.title) for f in out]
    return out[0]


# Error lines the knowledge/data/errors.json rows cite, in the snapshot's `errors` section as check/sources writes it.
PTXAS = "RuntimeError: Internal Triton PTX codegen error: ptxas fatal   : Value 'sm_' is not defined for option 'gpu-name'"
PIP = ("ERROR: Could not find a version that satisfies the requirement torch (from versions: none)\n"
       "ERROR: No matching distribution found for torch")
NO_BINARY = "HIP error: hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"
NO_HIP = "RuntimeError: No HIP GPUs are available"


def pasted(*texts: str) -> list[dict[str, str]]:
    return [{"text": t, "from": "text"} for t in texts]
