"""The ONE registry of checks (DESIGN §2), and the runner that turns a crash into an `internal-error` finding."""

from __future__ import annotations

import dataclasses
import traceback
from collections.abc import Iterable, Sequence

from rocm_triton_doctor.check.checks import (
    access,
    codeobjects,
    driver,
    errors,
    gpus,
    multigpu,
    nvidia,
    overrides,
    platform,
    probes,
    python,
    rocm,
    runtime,
    smoke_history,
    torch,
    triton,
    visibility,
    workload,
)
from rocm_triton_doctor.check.checks.base import Check
from rocm_triton_doctor.check.facts import Facts
from rocm_triton_doctor.check.findings import Finding, Severity

REGISTRY: tuple[Check, ...] = (
    *platform.CHECKS,
    *driver.CHECKS,
    *access.CHECKS,
    *gpus.CHECKS,
    *overrides.CHECKS,
    *visibility.CHECKS,
    *multigpu.CHECKS,
    *rocm.CHECKS,
    *python.CHECKS,
    *torch.CHECKS,
    *triton.CHECKS,
    *codeobjects.CHECKS,
    *runtime.CHECKS,
    *probes.CHECKS,
    *nvidia.CHECKS,
    *errors.CHECKS,
    *workload.CHECKS,
    *smoke_history.CHECKS,
)
INTERNAL_ERROR = "internal-error"

# Named subsets that other commands run (like Homebrew's fatal_preinstall_checks): `install` refuses to promise a
# working torch while an "install-blockers" check fails (no wheel fixes those), and verifies its work with
# "after-install" in the new environment.
SETS: dict[str, tuple[str, ...]] = {
    "install-blockers": ("os-supported", "wsl", "container-passthrough", "kernel-config-hsa", "amdgpu-loaded",
                         "kfd-present", "amdgpu-dkms", "kfd-access", "render-access"),
    "after-install": ("torch-missing", "torch-build-mismatch", "torch-sees-gpu", "torch-family-mismatch",
                      "gfx-torch-arch", "triton-missing", "triton-duplicate-dists", "triton-version-pin",
                      "triton-backend", "triton-build-toolchain", "torch-import", "triton-import"),
}

_ids = [c.id for c in REGISTRY]
assert len(_ids) == len(set(_ids)), "duplicate check id"
assert all(i in _ids for ids in SETS.values() for i in ids), "a named check set lists an unknown id"


def by_id() -> dict[str, Check]:
    return {c.id: c for c in REGISTRY}


def select(only: Sequence[str] = (), skip: Sequence[str] = ()) -> tuple[Check, ...]:
    """Checks chosen by --only/--skip (ids or group names). Unknown names raise ValueError."""
    known = set(_ids) | {c.group for c in REGISTRY}
    bad = [n for n in (*only, *skip) if n not in known]
    if bad:
        raise ValueError(f"unknown check id or group: {', '.join(bad)} (see --list-checks)")
    chosen = [c for c in REGISTRY if not only or c.id in only or c.group in only]
    return tuple(c for c in chosen if c.id not in skip and c.group not in skip)


def run_checks(facts: Facts, checks: Iterable[Check] = REGISTRY) -> list[Finding]:
    out: list[Finding] = []
    for c in checks:
        try:
            produced = list(c(facts))
        except Exception as exc:  # noqa: BLE001 - a crashing check must show, never pass silently
            tb = traceback.extract_tb(exc.__traceback__)[-1]
            out.append(Finding(INTERNAL_ERROR, Severity.FAIL, f"check '{c.id}' crashed: {type(exc).__name__}: {exc}",
                               f"at {tb.filename.rsplit('/', 1)[-1]}:{tb.lineno}. This is a bug in rocm-triton-doctor; "
                               "please report it with `rocm-triton-doctor check --save-snapshot snap.json`.",
                               group=c.group))
            continue
        for f in produced:
            out.append(dataclasses.replace(f, id=c.id, group=c.group))
    return out
