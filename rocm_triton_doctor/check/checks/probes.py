"""How the probing itself went: tools that hung or could not run, a Python probe that failed."""

from __future__ import annotations

from collections.abc import Iterable

from rocm_triton_doctor.check.checks.base import check, ok, skip, warn
from rocm_triton_doctor.check.probes.runner import crash_signal
from rocm_triton_doctor.check.facts import Facts
from rocm_triton_doctor.check.findings import Finding, Fix


@check("probe-timeout", "probes", "Every external tool (rocminfo, amd-smi, nvidia-smi, the Python probes) answered in time.",
       "A tool that hangs usually means a wedged driver or GPU; the doctor stops waiting at its timeout.",
       "Read the kernel log; a reboot or driver reload usually clears a wedged GPU.", ok_is_evidence=False)
def probe_timeout(f: Facts) -> Iterable[Finding]:
    if "commands" not in f.raw and "python" not in f.raw:  # nothing was probed: no "✓" for an empty snapshot
        yield skip("the snapshot records no tool or probe runs")
        return
    hung = [c for c in f.commands if c.timed_out]
    broken = [c for c in f.commands if c.error]
    # A tool killed by a signal (SIGSEGV, SIGABRT) did not answer, whatever it printed first (issue #18, defect 18).
    crashed = [(c, crash_signal(c.returncode)) for c in f.commands if crash_signal(c.returncode)]
    for c in hung:
        nvidia = c.name == "nvidia-smi"
        yield warn(f"{c.name} did not answer in time and was stopped",
                   f"`{' '.join(c.argv)}` was killed at the doctor's timeout. " +
                   ("A hanging nvidia-smi usually means a stuck NVIDIA driver or GPU" if nvidia else
                    "A hanging ROCm tool often means a wedged KFD/driver") + "; findings that need its output are skipped.",
                   evidence=(c.name,),
                   fix=Fix("Look for GPU resets or hangs in the kernel log; raise --timeout if the machine is just slow.",
                           ("sudo dmesg | grep -iE " + ("'nvrm|xid' | tail -n 40" if nvidia else
                                                        "'amdgpu|kfd|hang|reset' | tail -n 40"),), needs_sudo=True))
    for c in broken:
        yield warn(f"{c.name} could not be run: {c.error}", f"`{' '.join(c.argv)}`")
    for c, sig in crashed:
        yield warn(f"{c.name} crashed (killed by {sig})",
                   f"`{' '.join(c.argv)}` died of {sig} instead of answering; its output, if any, is not trusted. "
                   "A ROCm tool that crashes usually means a ROCm userspace that does not match the driver, or a "
                   "broken install.", evidence=(c.name,),
                   fix=Fix("Run it yourself to see the crash, and check the kernel log:",
                           (" ".join(c.argv), "sudo dmesg | tail -n 40"), needs_sudo=True))
    py = f.raw.get("python")
    py_failed = isinstance(py, dict) and bool(py.get("error"))
    if py_failed and isinstance(py, dict):
        yield warn(f"the Python environment probe failed: {py['error']}")
    if not hung and not broken and not crashed and not py_failed:
        # Pasted output (origin "text") proves nothing about how the probes went: only runs the doctor made count.
        raw_origin = f.raw.get("origin")
        origin: dict[str, object] = raw_origin if isinstance(raw_origin, dict) else {}
        ran = [c for c in f.commands if origin.get(f"commands.{c.name}") != "text"]
        if ran:
            yield ok(f"{len(ran)} tool(s) answered: {', '.join(c.name for c in ran)}")
        else:
            yield skip("no external tool was run")


CHECKS = (probe_timeout,)
