"""What this machine's last saved `smoke` runs showed about torch.compile (issue #17 item 2).

`check` runs nothing on the GPU; `smoke --compile` and `smoke --model` do, and keep their result
(check/probes/smoke_history.py reads it). When inductor, torch.compile's backend, cannot generate or compile Triton
code for this GPU (a gfx target the installed Triton's AMD backend does not handle, an LLVM failure), every
torch.compile'd model fails here while eager PyTorch works. That result is only trusted for the software and the
host that produced it: a run from other torch/Triton versions, or from another host sharing this home directory,
is reported as such and judges nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from rocm_triton_doctor.check.checks.base import check, fail, info, ok, skip, warn
from rocm_triton_doctor.check.facts import Facts, Status
from rocm_triton_doctor.check.facts.smoke_history import SavedRun
from rocm_triton_doctor.check.findings import Finding, Fix

RUN_ONE = Fix("Test torch.compile's Triton code generation on this GPU (a minute or two; the result is kept for "
              "`check` and `report`):", ("rocm-triton-doctor smoke --model tiny-llama --forms sdpa,compile",))


def _where(r: SavedRun) -> str:
    if r.device_name and r.arch:
        return f"{r.device_name} ({r.arch})"
    return r.device_name or r.arch or "this GPU"


def _stale(f: Facts, r: SavedRun) -> str | None:
    """Why the run does not describe this machine's current stack, or None."""
    rt = f.runtime.value if f.runtime.found else None
    if rt is not None:
        for name, then, now in (("torch", r.torch, rt.torch_version), ("Triton", r.triton, rt.triton_version)):
            if then and now and then != now:
                return f"it ran with {name} {then}, and this environment has {name} {now}"
    system = f.raw.get("system")
    host = system.get("hostname") if isinstance(system, dict) else None
    if r.host and host and r.host != host:
        return f"it ran on host {r.host}, not on this one ({host}): a home directory shared between machines"
    return None


@check("inductor-codegen", "smoke_history",
       "torch.compile (inductor) generated and ran Triton code for this GPU in the last saved `smoke` run.",
       "torch.compile turns a model into Triton kernels for the GPU; where inductor cannot generate or compile them "
       "for this target, every compiled model fails while eager PyTorch works.",
       "Run eager (no torch.compile) until the torch/Triton build supports the target; report the error upstream.")
def inductor_codegen(f: Facts) -> Iterable[Finding]:
    fact = f.smoke_results
    if fact.status is Status.UNKNOWN:
        yield skip("saved smoke results were not read (a snapshot or pasted text has none)")
        return
    if fact.status is Status.ABSENT:
        yield skip("no saved `smoke --compile` or `smoke --model` result on this machine", fix=RUN_ONE)
        return
    if not fact.found or fact.value is None:
        yield skip(f"the saved smoke results could not be read: {fact.error}")
        return
    runs: tuple[SavedRun, ...] = fact.value
    for r in runs:
        if r.error:
            yield info(f"the saved {r.kind} smoke result could not be read: {r.error}", evidence=(r.path,))
    tried = [r for r in runs if r.attempts]
    if not tried:
        yield skip("the saved smoke runs did not use torch.compile", fix=RUN_ONE)
        return
    for r in tried:
        when = r.started or r.modified or "an unknown time"
        stale = _stale(f, r)
        if stale:
            yield info(f"the last {r.kind} smoke run's torch.compile result does not describe this environment",
                       f"{stale}; rerun it to test the current one.", evidence=(r.path,), fix=RUN_ONE)
            continue
        bad = [a for a in r.attempts if not a.ok]
        good = [a for a in r.attempts if a.ok]
        versions = f"torch {r.torch or '?'}, Triton {r.triton or '?'}"
        if r.on_cpu:  # inductor's CPU backend writes C++, not Triton: nothing about the GPU's code generation
            yield info(f"the last {r.kind} smoke run compiled on the CPU ({len(good)} worked, {len(bad)} failed): it "
                       "says nothing about Triton code for a GPU", f"{versions}." + (f" First error: {bad[0].error}"
                                                                                    if bad else ""),
                       evidence=(r.path,), fix=RUN_ONE)
            continue
        if not bad:
            yield ok(f"torch.compile generated Triton code for {_where(r)} ({len(good)} compiled "
                     f"{'form' if r.kind == 'model' else 'case'}{'s' if len(good) != 1 else ''} in the {r.kind} smoke "
                     f"run of {when})", f"{versions}.", evidence=(r.path,))
            continue
        first = bad[0]
        detail = (f"In `smoke`'s {r.kind} run of {when} ({versions}) torch.compile failed for "
                  f"{', '.join(a.what for a in bad[:5])}{' and more' if len(bad) > 5 else ''}"
                  f"{f' and worked for {len(good)} other(s)' if good else ''}. The first error: {first.error}")
        report = Fix("Eager PyTorch (no torch.compile) does not need inductor. This error is inductor's or the "
                     "Triton backend's: report it to PyTorch with the machine's details, which `report` collects:",
                     ("rocm-triton-doctor report > report.md",))
        if good:
            yield warn(f"torch.compile failed for {len(bad)} of {len(r.attempts)} things it compiled on {_where(r)}",
                       detail, evidence=(r.path,), fix=report)
        else:
            yield fail(f"torch.compile (inductor) could not generate Triton code for {_where(r)}", detail,
                       evidence=(r.path,), fix=report)


CHECKS = (inductor_codegen,)
