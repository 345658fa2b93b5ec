"""Does the installed stack really carry GPU code for each device? (issue #15: `get_arch_list()` is not enough.)

Reads the code-object audit (check/facts/codeobjects.py): the targets inside torch's HIP libraries, rocBLAS/hipBLASLt
Tensile files, MIOpen kernel databases and TheRock .kpack files, compared with each device's real gfx and its
xnack/sramecc state. Known failures this catches: a gfx in the arch list whose libraries lack it
(patientx-cfz/comfyui-rocm#71), Tensile libraries without the target ("Cannot read TensileLibrary.dat … for GPU
arch: gfx1103", ggml-org/llama.cpp#20839), and xnack-only kpack files on an xnack- device (ROCm/TheRock#7081).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rocm_triton_doctor import knowledge
from rocm_triton_doctor.check.checks.base import check, fail, info, ok, skip, warn
from rocm_triton_doctor.check.checks.gpus import amd_gpus, last_rocm, native_rocm, newest_wheel_for, torch_arch_list
from rocm_triton_doctor.check.checks.torch import pip
from rocm_triton_doctor.check.facts import ErrorText, Facts, Gpu
from rocm_triton_doctor.check.facts.errors import code_object_errors, named_isas, quote, supported_targets
from rocm_triton_doctor.check.facts.platform import os_family
from rocm_triton_doctor.check.facts.python import torch_build
from rocm_triton_doctor.check.facts.gpus import shows_effective_gfx
from rocm_triton_doctor.check.facts.codeobjects import CodeObjects, CodeObjectSet, features, runs_on
from rocm_triton_doctor.check.findings import Finding, Fix

VAR = "HSA_OVERRIDE_GFX_VERSION"

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


def _therock_targets(f: Facts) -> tuple[str, ...] | None:
    sdk = f.raw.get("rocm_sdk")
    targets = sdk.get("targets") if isinstance(sdk, dict) else None
    return tuple(str(t) for t in targets) if isinstance(targets, list) and targets else None

def _build_targets(f: Facts, errs: tuple[ErrorText, ...]) -> tuple[tuple[str, ...] | None, str]:
    therock = _therock_targets(f)
    if therock:
        return therock, "the targets `rocm-sdk targets` lists"
    for e in errs:
        listed = supported_targets(e.text)
        if listed:
            return listed, "the targets the error message lists"
    if torch_build(f) == "rocm":
        return torch_arch_list(f)
    return None, ""

def _service_fix(f: Facts, errs: tuple[ErrorText, ...], value: str) -> tuple[str, tuple[str, ...]]:
    """Where the override must be set: ollama runs as a systemd service (a shell export never reaches it); a
    container needs -e."""
    setting = f"{VAR}={value}"
    # ollama: its own gfx message, or its server log format (`level=INFO source=gpu.go:109 msg=…`)
    if any("ollama-gfx-not-supported" in e.signatures or re.search(r"\bsource=\w+\.go:\d+|\bollama\b", e.text)
           for e in errs):
        docker = (f"docker run -e {setting} --device /dev/kfd --device /dev/dri … ollama/ollama:rocm",)
        in_container = bool(f.raw.get("container_run"))
        return (("Set it in the ollama server's environment: in a container with `-e` on the run command; for the "
                 "systemd service in a drop-in (a shell `export` does not reach the server, and `ollama serve` started "
                 "by hand does not read the unit); then restart it."),
                (*(docker if in_container else ()),
                 "sudo mkdir -p /etc/systemd/system/ollama.service.d",
                 (f"printf '[Service]\\nEnvironment=\"{setting}\"\\n' | sudo tee "
                  "/etc/systemd/system/ollama.service.d/override.conf"),
                 "sudo systemctl daemon-reload && sudo systemctl restart ollama"))
    return ("Export it in the environment of the process that runs the GPU code (shell, systemd unit, container -e).",
            (f"export {setting}",))

def _rocm_in_use(errs: tuple[ErrorText, ...]) -> str | None:
    """The ROCm release whose libraries the error names by path (`/opt/rocm-6.4.0/lib/rocblas/…`)."""
    for e in errs:
        m = re.search(r"/opt/rocm-(\d+\.\d+(?:\.\d+)?)/|\\ROCm\\(\d+\.\d+(?:\.\d+)?)\\", e.text)  # Linux; Windows HIP SDK
        if m:
            return m.group(1) or m.group(2)
    return None

def _newer(a: str, b: str) -> bool:
    from packaging.version import Version

    return Version(a) > Version(b)

def _code_object_finding(f: Facts, g: Gpu, errs: tuple[ErrorText, ...]) -> Finding:
    gfx = g.gfx or ""
    arches, where = _build_targets(f, errs)
    native = native_rocm(gfx)
    py = f.python.value.version if f.python.found and f.python.value and f.python.value.version else None
    wheel = newest_wheel_for(gfx, py)
    wheel_cmd = (f"{pip(f)} install --force-reinstall torch=={wheel[0]} torchvision torchaudio --index-url "
                 f"{knowledge.index_url(wheel[1])}") if wheel and torch_build(f) == "rocm" else None
    wheel_text = f" torch {wheel[0]} from download.pytorch.org/whl/{wheel[1]} carries {gfx}." if wheel else ""
    ev = (*quote(errs), f"GPU: {g.name or '?'} ({gfx}, {g.source})")
    if arches is not None and (g.effective_gfx or gfx) in arches and not g.override:
        return warn(f"the program has code for {gfx}, yet reports no usable code object",
                    f"{where}: {', '.join(arches)}. Another visible GPU or an override may be the cause; paste "
                    "`rocminfo | grep -E 'Marketing|gfx'` and `env | grep -E 'HSA|VISIBLE'`.", evidence=ev)
    running = _rocm_in_use(errs)
    last = last_rocm(gfx) if native else None
    if native and last and running and _newer(running, last):
        # A target this ROCm dropped (gfx906 from 6.4, gfx803 long ago): the ROCm in use is newer than the last
        # release that lists it, so a newer build cannot help and no override maps it to a supported sibling.
        return fail(f"ROCm {running} no longer carries {gfx} ({g.name or 'this GPU'})",
                    f"The libraries of ROCm {running} ship no {gfx} code objects. ROCm supported {gfx} officially up "
                    f"to {last}; later releases carried it as deprecated for a while, then dropped it. An override to "
                    "another target runs another ISA's code and is not a fix.", evidence=ev,
                    fix=Fix(f"Go back to the newest ROCm that still ships {gfx} libraries (the one this GPU last "
                            f"worked with; officially ROCm {last}) and a torch built for it, or use a build compiled "
                            f"for {gfx}; remove any GFX-version override from the environment."))
    if native:
        # Natively supported by a newer ROCm (gfx1151, gfx1201, gfx950 …): an override runs another ISA's code and
        # faults; the fix is a build that carries the target (ROCm release notes; pytorch#164346).
        return fail(f"{gfx} ({g.name or 'this GPU'}) needs a ROCm {native}+ build that carries it",
                    f"The program's ROCm build has no {gfx} code objects. {gfx} is supported natively from ROCm "
                    f"{native}; an HSA_OVERRIDE_GFX_VERSION to another target is not a fix for it.{wheel_text}",
                    evidence=ev,
                    fix=Fix(f"Install a build for {gfx} (ROCm {native} or newer{'; torch: see the command' if wheel_cmd else ''})"
                            # (ByronLeeeee/Ollama-For-AMD-Installer#12: ollama for Windows listed no supported
                            # targets, "supported types:[]", while the override was set)
                            + (f" and unset {VAR} (set here to {set_to}; an override also changes which targets a "
                               "program looks for)." if (set_to := f.env_var(VAR)) else
                               " and remove any GFX-version override from the environment."),
                            (wheel_cmd,) if wheel_cmd else ()))
    if os_family(f) == "windows":
        # Windows (HIP SDK): no HSA runtime, so no HSA_OVERRIDE_GFX_VERSION; the libraries must carry the target.
        return fail(f"no code for {gfx} ({g.name or 'this GPU'}) in this HIP SDK / build",
                    "On Windows the libraries (HIP SDK, rocBLAS, the program's own build) must carry the GPU's target; "
                    "the Linux runtime's gfx override does not exist there.", evidence=ev,
                    fix=Fix(f"Use a HIP SDK / library build that includes {gfx}"
                            + (f" (ROCm {native} or newer)" if native else "")
                            + "; if an integrated GPU is being picked instead of the discrete one, disable it in "
                            "the firmware or select the discrete GPU with HIP_VISIBLE_DEVICES."))
    therock = _therock_targets(f)
    if therock and gfx not in therock:
        # TheRock builds every supported target in some family package, so the fix is the package for this one, not
        # another target's code under an override (rocm-facts §2.6; ROCm/TheRock#1184: gfx1103 run as gfx1100 hung).
        return fail(f"the installed ROCm packages (TheRock) are built for {', '.join(therock)}, not {gfx}",
                    f"`rocm-sdk targets` lists {', '.join(therock)}: the family package installed does not carry "
                    f"{g.name or gfx}'s {gfx} code objects.", evidence=ev,
                    fix=Fix(f"Install the packages for {gfx}: multi-arch torch with the device extra for this GPU "
                            "(or the per-family index whose family includes it), instead of an override.",
                            ((f'{pip(f)} install --force-reinstall "torch[device-{gfx}]" --index-url '
                             "https://repo.amd.com/rocm/whl-multi-arch/"),)))
    if g.integrated and g.source.split(" ")[0] in EXCERPT_TOOLS and not g.override:
        # An integrated GPU known only from a line of the text (an ISA name, a product name), not from a list of the
        # machine's GPUs: a program failing on it most often picked it beside a discrete GPU the excerpt does not
        # show, where an override would apply to both (legacy-rocm-build#4386: a gfx1036 agent's ISA lines and
        # vLLM's invalid device function, with a 7900 XT in the machine).
        return fail(f"no code for {gfx} ({g.name or 'an integrated GPU'}), an integrated GPU",
                    "A program fails like this on an integrated GPU when it picked it instead of a discrete GPU, or "
                    "when the iGPU is all there is; the evidence does not list the machine's GPUs, so it cannot say "
                    "which.", evidence=ev,
                    fix=Fix("If a discrete GPU is installed, hide the integrated one from the program: "
                            "HIP_VISIBLE_DEVICES (or ROCR_VISIBLE_DEVICES in a container) naming only the discrete "
                            "GPU's index among rocminfo's GPU agents, or disable the iGPU in the firmware. Otherwise "
                            "paste `rocminfo | grep -E 'Marketing|gfx'` and the torch version: they decide between a "
                            "build for this target and a same-family override."))
    rules = [r for r in knowledge.override_rules(gfx) if arches is None or r.target in arches]
    if rules:
        rule = rules[0]
        text, cmds = _service_fix(f, errs, rule.value)
        text = f"Run {gfx} as {rule.target}: {VAR}={rule.value}. {text}" + (
            f" Better: install a build that carries {gfx} itself.{wheel_text}" if wheel else "")
        if shows_effective_gfx(g) and not g.override:
            # The target came from the runtime (rocBLAS's `for GPU arch : gfx1035`), which reports it after any
            # override: one set already, or a GPU of another target, would make this advice wrong (ollama#16040: a
            # 780M, gfx1103, whose rocBLAS asked for gfx1035).
            text += (f" {g.source.split(' (', 1)[0]} names the target the runtime reports, after any {VAR}: if one is "
                     f"already set (`env | grep {VAR}`) or the GPU is not {g.name or gfx}, this does not apply; "
                     "paste `rocminfo | grep -E 'Marketing|gfx'` first.")
        hedge = "" if arches is not None else f" (if the build carries {rule.target}, as ROCm builds usually do)"
        if arches is None:
            # The build's targets are unknown: say the value, but offer no command (fix safety: a command follows only
            # from facts that were found; the property test deletes evidence and checks that no command appears).
            cmds = ()
        return fail(f"no code for {gfx} ({g.name or 'this GPU'}); run it as {rule.target} with {VAR}={rule.value}",
                    f"{gfx} has the ISA of {rule.target}{hedge}; AMD does not support this pairing officially"
                    f"{'' if rule.verified else ' and it is a community report'}. Source: {rule.source}.{wheel_text}",
                    evidence=ev, fix=Fix(text, cmds))
    return fail(f"no code for {gfx} ({g.name or 'this GPU'}) in this build, and no same-family target to borrow",
                f"No ROCm release lists {gfx} and no supported target shares its ISA, so an override cannot help.",
                evidence=ev,
                fix=Fix(f"Use a build compiled for {gfx} (build from source with PYTORCH_ROCM_ARCH={gfx} / "
                        f"GPU_TARGETS={gfx}), or a GPU that ROCm supports.{wheel_text}", (wheel_cmd,) if wheel_cmd else ()))

# Tools whose GPU line is a mention in the text (an ISA name, a product name), not a list of the machine's GPUs.
EXCERPT_TOOLS = ("isa", "text")


@check("gpu-code-object", "codeobjects", "No error says the program lacks code for the GPU's gfx target.",
       "hipErrorNoBinaryForGpu, 'invalid device function', 'No compatible code objects found', ollama's 'gfx… is not "
       "supported': the build has no kernels for this target.",
       "A build that carries the target; a same-ISA-family override only where one exists; never an override for "
       "targets a newer ROCm supports natively.")
def gpu_code_object(f: Facts) -> Iterable[Finding]:
    errs = code_object_errors(f.errors)
    if not errs:
        yield skip("no missing-code-object error in the evidence")
        return
    gpus = [g for g in amd_gpus(f) if g.gfx]
    if not gpus:
        # The error says the program could not run (it aborted or refused the GPU), so this fails whatever the
        # cause; only the remedy waits for the GPU's identity (legacy-rocm-build#1815: a Steam Deck's bare
        # hipErrorNoBinaryForGpu).
        yield fail("the program has no code for this GPU's target, and the GPU is not identified",
                   "Which fix applies (a newer build, a same-family override, hiding an iGPU) depends on the GPU: "
                   "paste `rocminfo | grep -E 'Marketing|gfx'` and the torch version "
                   "(`python -c 'import torch; print(torch.__version__, torch.cuda.get_arch_list())'`).",
                   evidence=quote(errs))
        return
    named = named_isas(errs)
    if len({g.gfx for g in gpus}) > 1 and any(g.integrated for g in gpus):
        # The error names the ISA it looked for: when that is a discrete GPU's, the build lacks the dGPU's own target
        # and hiding the iGPU cannot help (lamikr/rocm_sdk_builder#246: `Cannot find CO in the bundle … for ISA:
        # amdgcn-amd-amdhsa--gfx1101` beside a gfx1036 iGPU).
        dgpus = [g for g in gpus if g.integrated is False and g.gfx in named]
        if not dgpus:
            yield skip("iGPU + dGPU: see 'igpu-with-dgpu'")
            return
        gpus = dgpus
    seen: set[str] = set()
    for g in gpus:
        if g.gfx and g.gfx not in seen:
            seen.add(g.gfx)
            yield _code_object_finding(f, g, errs)


CHECKS = (codeobject_target_missing, codeobject_gpu_code, gpu_code_object)
