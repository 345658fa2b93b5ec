"""Does the installed stack really carry GPU code for each device? (issue #15: `get_arch_list()` is not enough.)

Reads the code-object audit (check/facts/codeobjects.py): the targets inside torch's HIP libraries, rocBLAS/hipBLASLt
Tensile files, MIOpen kernel databases and TheRock .kpack files, compared with each device's real gfx and its
xnack/sramecc state. Known failures this catches: a gfx in the arch list whose libraries lack it
(patientx-cfz/comfyui-rocm#71), Tensile libraries without the target ("Cannot read TensileLibrary.dat … for GPU
arch: gfx1103", ggml-org/llama.cpp#20839), and xnack-only kpack files on an xnack- device (ROCm/TheRock#7081).
"""

from __future__ import annotations

from collections.abc import Iterable

from rocm_triton_doctor.check.checks.base import check, fail, info, ok, skip, warn
from rocm_triton_doctor.check.facts import Facts, Gpu
from rocm_triton_doctor.check.facts.codeobjects import CodeObjects, CodeObjectSet, features, runs_on
from rocm_triton_doctor.check.findings import Finding, Fix

# Sets whose lack of a target breaks work outright; MIOpen kernel dbs are only a precompiled cache (MIOpen builds the
# kernel at first use, slowly), so their lack is information.
_BREAKS = {"hip-fatbin": "its GPU kernels fail with hipErrorNoBinaryForGpu / 'invalid device function'",
           "pasted": "its GPU kernels fail with hipErrorNoBinaryForGpu / 'invalid device function'",
           "rocblas": "GEMMs fail ('Cannot read TensileLibrary.dat … for GPU arch')",
           "hipblaslt": "hipBLASLt GEMMs fail or fall back", "tensile": "GEMMs through this library fail",
           "kpack": "kernels from these packs fail with hipErrorInvalidImage"}


def _audit(f: Facts) -> CodeObjects | None:
    v = f.codeobjects.value if f.codeobjects.found else None
    return v if isinstance(v, CodeObjects) else None


def _devices(f: Facts) -> list[tuple[Gpu, str, dict[str, str]]]:
    """(gpu, the gfx its code objects must be for, its known xnack/sramecc state), one per distinct target."""
    isa: dict[int | None, str] = {}
    if f.rocminfo.found and f.rocminfo.value:
        for a in f.rocminfo.value.gpus:
            named = next((i for i in a.isas if ":" in i), a.isas[0] if a.isas else a.name)
            isa[a.node] = named.rsplit("--", 1)[-1]
    out: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[Gpu, str, dict[str, str]]] = {}
    for g in (f.gpus.value or ()) if f.gpus.found else ():
        gfx = g.effective_gfx or g.gfx
        if not gfx:
            continue
        feats = features(isa.get(g.node, ""))
        xnack = f.env_var("HSA_XNACK")
        if "xnack" not in feats and xnack in ("0", "1"):
            feats["xnack"] = "+" if xnack == "1" else "-"
        out.setdefault((gfx, tuple(sorted(feats.items()))), (g, gfx, feats))
    return list(out.values())


def _short(names: Iterable[str], n: int = 6) -> str:
    names = list(names)
    return ", ".join(names[:n]) + (f" (+{len(names) - n} more)" if len(names) > n else "")


def _label(s: CodeObjectSet) -> str:
    return s.name.rsplit("/", 1)[-1] if s.kind in ("hip-fatbin", "pasted") else f"{s.kind} ({s.name})"


@check("codeobject-target-missing", "codeobjects",
       "Each GPU's real gfx target (with its xnack/sramecc state) has code objects in every GPU library of the stack.",
       "torch.cuda.get_arch_list() is the wheel's word; a library without code for the device fails at its first "
       "kernel (hipErrorNoBinaryForGpu, invalid device function, hipErrorInvalidImage, TensileLibrary errors).",
       "Install the build that carries the target (see `rocm-triton-doctor install --dry-run`), or a same-family "
       "HSA override where the install plan proposes one.")
def codeobject_target_missing(f: Facts) -> Iterable[Finding]:
    audit = _audit(f)
    if audit is None:
        yield skip("the installed stack's code objects were not audited" if not f.codeobjects.known else
                   "no torch or ROCm Python packages to audit")
        return
    devices = _devices(f)
    if not devices:
        yield skip("not applicable: no AMD GPU with a known gfx target")
        return
    sets = [s for s in audit.sets if s.targets]
    if not sets:
        yield skip("the stack has no GPU code objects to compare (see codeobject-gpu-code)")
        return
    for g, gfx, feats in devices:
        lacking, wrong_features, good = [], [], []
        for s in sets:
            if any(runs_on(t, gfx, feats) for t in s.targets):
                good.append(s)
            elif any(runs_on(t.split(":", 1)[0], gfx, feats) for t in s.targets):
                wrong_features.append(s)
            else:
                lacking.append(s)
        who = f"{gfx}, your GPU ({g.label})"
        for s in lacking:
            sev = info if s.kind == "miopen" else fail
            yield sev(f"{_label(s)} has {_short(s.gfx)} — not {who}",
                      ("MIOpen has no precompiled kernels for it: the first convolution builds them (slow start)"
                       if s.kind == "miopen" else f"Without a code object for {gfx}, {_BREAKS.get(s.kind, 'it fails')}.")
                      + ("" if s.complete else " (part of this library could not be read: " + (s.error or "time budget") + ")"),
                      evidence=(s.source,),
                      fix=None if s.kind == "miopen" else Fix(f"Install a build whose libraries carry {gfx}: "
                                                              "`rocm-triton-doctor install --dry-run` shows the plan."))
        for s in wrong_features:
            have = _short(t for t in s.targets if t.split(":", 1)[0] == gfx)
            state = ", ".join(f"{k}{v}" for k, v in sorted(feats.items())) or "unknown"
            yield fail(f"{_label(s)} has {have} only — {gfx} here runs with {state}",
                       f"A code object built for another xnack/sramecc setting does not load: {_BREAKS.get(s.kind, 'it fails')}. "
                       "ROCm/TheRock#7081: removing the xnack± kpack files made the kernels run.",
                       evidence=(s.source,),
                       fix=Fix("Install the build for this setting, or set HSA_XNACK to match the code objects "
                               "(HSA_XNACK=1 for xnack+, only on GPUs and kernels that support it)."))
        if good and not lacking and not wrong_features:
            yield ok(f"{gfx} ({g.label}): code objects present in {len(good)} GPU librar{'y' if len(good) == 1 else 'ies'}",
                     _short((_label(s) for s in good), 4), evidence=tuple(sorted({s.source for s in good}))[:4])


@check("codeobject-gpu-code", "codeobjects",
       "The installed torch / ROCm Python packages contain GPU code at all, and the audit could read it.",
       "A CPU build of torch has no GPU code: nothing runs on the GPU whatever the drivers say.",
       "Install a ROCm build of torch (`rocm-triton-doctor install`).")
def codeobject_gpu_code(f: Facts) -> Iterable[Finding]:
    audit = _audit(f)
    if audit is None:
        yield skip("the installed stack's code objects were not audited" if not f.codeobjects.known else
                   "no torch or ROCm Python packages installed in the target interpreter")
        return
    hip = audit.hip_libraries
    has_gpu = bool(_devices(f))
    if not any(s.targets for s in audit.sets) and not any(s.error for s in hip):
        where = ", ".join(audit.roots) or "the environment"
        msg = f"no GPU code in {where}: {audit.shared_objects} shared objects, none with a .hip_fatbin section"
        if has_gpu:
            yield warn(msg, "This is a CPU build; the AMD GPU cannot be used by it.",
                       fix=Fix("Install a ROCm build: `rocm-triton-doctor install --dry-run` shows which."))
        else:
            yield info(msg + " (a CPU build)")
        return
    unread = [s for s in hip if not s.complete]
    for s in unread:
        yield info(f"{_label(s)}: only part of its code objects could be read", s.error or "time budget reached",
                   evidence=(s.source,))
    gfx = sorted({g for s in audit.sets for g in s.gfx})
    secs = f" in {audit.elapsed_s:.2f} s" if audit.elapsed_s is not None else ""
    yield ok(f"GPU code for {_short(gfx, 12)} in {len(hip)} HIP librar{'y' if len(hip) == 1 else 'ies'}"
             f"{secs}", ", ".join(sorted({s.kind for s in audit.sets})))


CHECKS = (codeobject_target_missing, codeobject_gpu_code)
