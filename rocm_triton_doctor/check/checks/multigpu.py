"""Collectives between GPUs (RCCL): known failures of a release on a GPU family, read from the releases and the launch
the evidence shows."""

from __future__ import annotations

import re
from collections.abc import Iterable

from rocm_triton_doctor.check.checks.base import check, fail, ok, skip, warn
from rocm_triton_doctor.check.checks.gpus import amd_gpus
from rocm_triton_doctor.check.checks.visibility import VARS, list_entries
from rocm_triton_doctor.check.facts import Facts
from rocm_triton_doctor.check.facts.python import torch_version
from rocm_triton_doctor.check.findings import Finding, Fix

RDNA4 = ("gfx1200", "gfx1201")
LL_DEADLOCK_SOURCE = "https://github.com/ROCm/rocm-systems/issues/5480"


def _rocm_releases(f: Facts) -> list[tuple[str, str]]:
    """(where, version) of every ROCm release the evidence names: /opt/rocm, amd-smi's banner, a stated version, the
    torch wheel's +rocmX.Y tag (a pip torch bundles that release's RCCL)."""
    system = f.raw.get("system")
    system = system if isinstance(system, dict) else {}
    out = []
    if f.rocm.found and f.rocm.value and f.rocm.value.version:
        out.append(("/opt/rocm", f.rocm.value.version))
    for key, where in (("amd_smi_rocm", "amd-smi"), ("stated_rocm", "the text")):
        if isinstance(system.get(key), str):
            out.append((where, system[key]))
    m = re.search(r"\+rocm(\d+\.\d+(?:\.\d+)?)", torch_version(f) or "")
    if m:
        out.append(("torch's wheel", m.group(1)))
    return out


def _visible_count(f: Facts) -> int:
    """GPUs a visibility variable lists (`0,1` is two), 0 when none is set or shown."""
    return max((len(list_entries(f.env_var(v) or "")) for v in VARS), default=0)


@check("rccl-gfx12-protocol", "multigpu",
       "Collectives across RDNA4 GPUs do not run into RCCL 2.27's LL-protocol deadlock.",
       "RCCL 2.27 (ROCm 7.2.x) picks its LL protocol for small single-node all-reduces on gfx12, and its LL code path "
       "lacks the gfx12 memory-ordering fixes its Simple path got: a tensor-parallel run across two or more RDNA4 GPUs "
       "hangs with every GPU busy at 100 % (ROCm/rocm-systems#5480, confirmed by AMD; vllm#40980). ROCm 7.1.1's RCCL "
       "did not; TheRock's RCCL 2.28.3 and later carry the fix.",
       "NCCL_PROTO=Simple in the environment of the run until RCCL is updated.")
def rccl_gfx12_protocol(f: Facts) -> Iterable[Finding]:
    rdna4 = [g for g in amd_gpus(f) if (g.effective_gfx or g.gfx) in RDNA4]
    if not rdna4:
        yield skip("no RDNA4 (gfx1200/gfx1201) GPU in the evidence")
        return
    system = f.raw.get("system")
    system = system if isinstance(system, dict) else {}
    rccl = system.get("rccl_version") if isinstance(system.get("rccl_version"), str) else None
    releases = [(w, v) for w, v in _rocm_releases(f) if re.match(r"7\.2(\.|$)", v)]
    if rccl:
        releases = [("RCCL", rccl)] if rccl.startswith("2.27.") else []
    if not releases:
        yield skip("no RCCL 2.27 / ROCm 7.2 in the evidence (the releases with the LL deadlock on gfx12)")
        return
    launch = system.get("gpus_per_launch")
    per_launch = launch if isinstance(launch, int) else 0
    gpus = max(len(rdna4), _visible_count(f), per_launch)
    if gpus < 2:
        yield skip("one RDNA4 GPU in view: no collective between GPUs")
        return
    proto = f.env_var("NCCL_PROTO")
    if proto and proto.strip().lower() == "simple":
        yield ok("NCCL_PROTO=Simple is set: RCCL's LL protocol (the gfx12 deadlock) is not used")
        return
    where = ", ".join(f"{v} ({w})" for w, v in releases)
    ev = (f"GPUs: {', '.join(sorted({g.effective_gfx or g.gfx or '?' for g in rdna4}))}, {gpus} in one run",
          f"release: {where}")
    fix = Fix("Run the job with NCCL_PROTO=Simple in its environment (export it, or -e NCCL_PROTO=Simple for a "
              "container) until RCCL carries the gfx12 fix; disabling peer-to-peer does not avoid it.",
              ("export NCCL_PROTO=Simple",))
    if system.get("hang_reported"):
        # The known symptom on the known releases and GPUs: the reading AMD confirmed (rocm-systems#5480).
        yield fail("a multi-GPU run on RDNA4 hangs, as RCCL 2.27's LL protocol does on gfx12",
                   f"{where}: RCCL picks its LL protocol for small all-reduces on gfx12, whose LL path lacks gfx12's "
                   "memory ordering; the collective never completes.", evidence=ev, fix=fix,
                   links=(LL_DEADLOCK_SOURCE,))
        return
    yield warn("multi-GPU runs on RDNA4 with RCCL 2.27 (ROCm 7.2) can deadlock in its LL protocol",
               f"{where}: tensor-parallel work across these GPUs hangs unless NCCL_PROTO=Simple is set"
               + ("" if f.env_complete else " (the evidence does not show whether it is)") + ".",
               evidence=ev, fix=fix, links=(LL_DEADLOCK_SOURCE,))


CHECKS = (rccl_gfx12_protocol,)
