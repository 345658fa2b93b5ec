"""How the probing itself went: tools that hung or could not run, a Python probe that failed."""

from __future__ import annotations

from collections.abc import Iterable

from rocm_triton_doctor.check.checks.base import check, ok, skip, warn
from rocm_triton_doctor.check.facts import Facts
from rocm_triton_doctor.check.findings import Finding, Fix


@check("probe-timeout", "probes", "Every external tool (rocminfo, amd-smi, nvidia-smi, the Python probes) answered in time.",
       "A tool that hangs usually means a wedged driver or GPU; the doctor stops waiting at its timeout.",
       "Read the kernel log; a reboot or driver reload usually clears a wedged GPU.", ok_is_evidence=False)
def probe_timeout(f: Facts) -> Iterable[Finding]:
    hung = [c for c in f.commands if c.timed_out]
    broken = [c for c in f.commands if c.error]
    for c in hung:
        yield warn(f"{c.name} did not answer in time and was stopped",
                   f"`{' '.join(c.argv)}` was killed at the doctor's timeout. A hanging ROCm tool often means a "
                   "wedged KFD/driver; findings that need its output are skipped.",
                   evidence=(c.name,),
                   fix=Fix("Look for GPU resets or hangs in the kernel log; raise --timeout if the machine is just slow.",
                           ("sudo dmesg | grep -iE 'amdgpu|kfd|hang|reset' | tail -n 40",), needs_sudo=True))
    for c in broken:
        yield warn(f"{c.name} could not be run: {c.error}", f"`{' '.join(c.argv)}`")
    py = f.raw.get("python")
    py_failed = isinstance(py, dict) and bool(py.get("error"))
    if py_failed and isinstance(py, dict):
        yield warn(f"the Python environment probe failed: {py['error']}")
    if not hung and not broken and not py_failed:
        # Pasted output (origin "text") proves nothing about how the probes went: only runs the doctor made count.
        raw_origin = f.raw.get("origin")
        origin: dict[str, object] = raw_origin if isinstance(raw_origin, dict) else {}
        ran = [c for c in f.commands if origin.get(f"commands.{c.name}") != "text"]
        if ran:
            yield ok(f"{len(ran)} tool(s) answered: {', '.join(c.name for c in ran)}")
        else:
            yield skip("no external tool was run")


CHECKS = (probe_timeout,)
