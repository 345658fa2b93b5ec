"""The runtime truth: torch and Triton really import in the target interpreter, and which interpreter that was.

These read the snapshot's `runtime` section as the runtime probe wrote it (probes/scripts/runtime_probe.py,
probes/runtime.py), defensively: a hand-written or older snapshot may lack the keys, which means "not probed"
(skip), never "fine". Before issue #18 a CPU torch was recognised from torch/version.py without an import, so a
torch whose import raised or segfaulted was reported as "runs on the CPU", HEALTHY (defect 2).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rocm_triton_doctor.check.checks.base import check, fail, info, ok, skip, warn
from rocm_triton_doctor.check.facts import Facts
from rocm_triton_doctor.check.facts.errors import quote, with_signature
from rocm_triton_doctor.check.findings import Finding, Fix

_NOT_INSTALLED = "import torch failed: No module named 'torch'"


def _runtime(f: Facts) -> Mapping[str, Any] | None:
    r = f.raw.get("runtime")
    return r if isinstance(r, dict) else None


def _exe(f: Facts) -> str:
    if f.python.found and f.python.value and f.python.value.executable:
        return f.python.value.executable
    return "python"


def _how(error: object, prefix: str) -> str:
    text = str(error or "").strip()
    return text[len(prefix):] if text.startswith(prefix) else text


@check("torch-import", "runtime", "`import torch` succeeds in the target interpreter, for every build (CPU included).",
       "A torch that raises, hangs or crashes at import breaks everything, whatever its metadata says.",
       "Reinstall torch in that environment (`rocm-triton-doctor install`); the import error is quoted verbatim.",
       ok_is_evidence=False)
def torch_import(f: Facts) -> Iterable[Finding]:
    r = _runtime(f)
    if r is None:
        yield skip("runtime probe not run (--no-runtime or a snapshot without it)")
        return
    if r.get("torch_installed") is False or (r.get("torch_import_failed") and r.get("error") == _NOT_INSTALLED):
        yield skip("torch is not installed (see 'torch-missing')")
        return
    name = "torch" + (f" {r['torch_static_version']}" if isinstance(r.get("torch_static_version"), str) else "")
    if r.get("torch_import_failed"):
        how = _how(r.get("error"), "import torch failed: ")
        title = (f"{how}" if how.startswith("import torch") else f"`import torch` fails: {how}")
        yield fail(title, f"{name} is installed in {_exe(f)} but cannot be imported; nothing that needs torch can run.",
                   evidence=("runtime probe",),
                   fix=Fix("See the full error, then reinstall torch (a fresh virtual environment is safest):",
                           (f"{_exe(f)} -c 'import torch'", "rocm-triton-doctor install --venv ~/rtd-venv")))
        return
    if r.get("timed_out"):
        yield skip("the runtime probe timed out after the import (see 'torch-sees-gpu')")
        return
    imported = r.get("torch_imported")
    version = r.get("torch_version")
    if imported is None:  # written by a doctor before issue #18: GPU builds were imported, CPU builds were not
        imported = version is not None and bool(r.get("hip_version") or r.get("cuda_version"))
    if imported and version:
        yield ok(f"torch {version} imports")
    elif version:
        yield skip(f"torch {version} was not imported by the probe that wrote this snapshot")
    else:
        yield skip("torch could not be inspected (see 'torch-sees-gpu')")


@check("triton-import", "runtime", "`import triton` succeeds in the target interpreter when Triton is installed.",
       "A Triton that fails to import (a libtriton.so built for another torch, a missing symbol) breaks "
       "torch.compile, every Triton kernel and `smoke`.",
       "Reinstall the Triton that torch pins; the import error is quoted verbatim.")
def triton_import(f: Facts) -> Iterable[Finding]:
    r = _runtime(f)
    if r is None:
        yield skip("runtime probe not run (--no-runtime or a snapshot without it)")
        return
    if r.get("torch_import_failed") or r.get("timed_out"):
        yield skip("not tried: torch did not import")
        return
    if r.get("triton_installed") is False:
        yield skip("Triton is not installed (see 'triton-missing')")
        return
    err = r.get("triton_import_error")
    if err:
        how = str(err)
        title = how if how.startswith("import triton") else f"`import triton` fails: {how}"
        yield fail(title, f"Triton is installed in {_exe(f)} but cannot be imported.", evidence=("runtime probe",),
                   fix=Fix("See the full error, then reinstall the Triton torch pins:", (f"{_exe(f)} -c 'import triton'",)))
        return
    if r.get("triton_imported"):
        where = "" if r.get("is_available") else " (on the CPU it runs in interpreter mode, TRITON_INTERPRET=1)"
        yield ok(f"Triton {r.get('triton_version') or '?'} imports{where}")
        return
    if r.get("triton_version"):  # an older probe imported Triton on GPU machines only
        yield ok(f"Triton {r['triton_version']} imports")
        return
    yield skip("Triton import not probed")


@check("python-choice", "runtime", "Which Python environment was inspected, and how to choose another.",
       "The doctor is often installed in its own small venv without torch; inspecting that one would only say "
       "'torch is not installed'.",
       "Name the interpreter to inspect with --python PATH.")
def python_choice(f: Facts) -> Iterable[Finding]:
    s = f.raw.get("python_search")
    if not isinstance(s, dict):
        yield skip("the interpreter was named with --python, or the doctor's own has torch")
        return
    cands = [c for c in s.get("candidates") or () if isinstance(c, dict)]
    chosen, own = str(s.get("chosen") or ""), str(s.get("own") or "")
    listing = "; ".join(f"{c.get('python')} ({c.get('where')}: " + (f"torch {c['torch']}" if c.get("torch") else "no torch")
                        + ")" for c in cands[:8])
    if chosen and chosen != own:
        yield info(f"inspected {chosen}: the doctor's own Python ({own}) has no torch",
                   "Environments found nearby: " + listing + ". To inspect another, pass --python PATH.",
                   fix=Fix("To inspect another one, name it:", (f"rocm-triton-doctor check --python {chosen}",)))
        return
    detail = ("Environments found nearby, none with torch: " + listing + "." if cands else
              "No virtual or conda environment was found in this directory, its parents, ~/.virtualenvs, "
              "~/miniconda3/envs, ~/anaconda3/envs, conda's list, or python3 on PATH.")
    yield warn(f"no Python environment with torch found; inspected the doctor's own ({own})", detail,
               fix=Fix("Point the doctor at the environment you use, or let it make one:",
                       ("rocm-triton-doctor check --python /path/to/venv/bin/python",
                        "rocm-triton-doctor install --venv ~/rtd-venv")))


@check("iommu-passthrough", "runtime", "The IOMMU is in passthrough mode where RCCL asks for it.",
       "RCCL warns 'Missing \"iommu=pt\" from kernel command line which can lead to system instability or hang': "
       "with a translated IOMMU, peer-to-peer copies between GPUs hang (ROCm/rccl#1129, 2x MI100).",
       "Add iommu=pt to the kernel command line and reboot.")
def iommu_passthrough(f: Facts) -> Iterable[Finding]:
    errs = with_signature(f.errors, "rccl-iommu-pt-missing")
    if not errs:
        yield skip("no RCCL 'Missing iommu=pt' warning in the evidence")
        return
    yield fail("RCCL: the kernel command line lacks iommu=pt",
               "With the IOMMU translating, multi-GPU collectives can hang (RCCL's own warning, quoted).",
               evidence=quote(errs),
               fix=Fix("Add iommu=pt to GRUB_CMDLINE_LINUX in /etc/default/grub, regenerate the GRUB config "
                       "(update-grub, or grub2-mkconfig -o /boot/grub2/grub.cfg) and reboot; check with cat /proc/cmdline.",
                       needs_sudo=True, needs_reboot=True))


CHECKS = (torch_import, triton_import, python_choice, iommu_passthrough)
