"""HSA_OVERRIDE_GFX_VERSION[_<node>]: valid, needed, harmful? (rocm-facts §3, libhsakmt topology.c)"""

from __future__ import annotations

import re

from collections.abc import Iterable

from packaging.version import InvalidVersion, Version

from rocm_triton_doctor import knowledge
from rocm_triton_doctor.check.checks.base import check, fail, info, ok, skip, warn
from rocm_triton_doctor.check.checks.gpus import amd_gpus, native_rocm, torch_arch_list
from rocm_triton_doctor.check.facts.errors import with_signature
from rocm_triton_doctor.check.facts import Facts, Gpu
from rocm_triton_doctor.check.facts.gpus import INFERRED_OVERRIDE
from rocm_triton_doctor.check.facts.python import rocm_torch, torch_rocm, torch_version
from rocm_triton_doctor.check.findings import Finding, Fix

VAR = "HSA_OVERRIDE_GFX_VERSION"
PER_NODE_SINCE = Version("6.3")  # ROCR-Runtime commit 84567b64 "Allow overriding gfx version per-node" (ROCm 6.3)


def _override_vars(f: Facts) -> dict[str, str]:
    env = f.env.value if f.env.found and f.env.value else {}
    return {k: v for k, v in env.items() if k == VAR or k.startswith(VAR + "_")}


def _hidden(g: Gpu) -> str:
    """For an override read from rocminfo's agent names rather than the environment: where to look for it."""
    if not g.source.startswith(INFERRED_OVERRIDE):
        return ""
    return (f" The environment shown does not set it, but rocminfo lists this {g.gfx} chip as {g.effective_gfx}, "
            f"which only an override does: look for {g.override_var} in ~/.bashrc, ~/.profile, /etc/environment, "
            "systemd units and the container's definition, and run `env | grep HSA` where the program runs.")


def _runtime_rocm(f: Facts) -> Version | None:
    """The ROCm whose libhsakmt reads the variable: torch's bundled one, else the system's."""
    bundled = torch_rocm(f)
    if bundled and torch_version(f) and "+rocm" in (torch_version(f) or ""):
        return Version(bundled)
    if f.rocm.found and f.rocm.value and f.rocm.value.version:
        try:
            return Version(f.rocm.value.version)
        except InvalidVersion:
            return None
    return None


@check("hsa-override-format", "overrides", "Every HSA_OVERRIDE_GFX_VERSION[_N] value is well-formed.",
       "libhsakmt parses it with sscanf('%u.%u.%u%c'); anything else makes HSA initialisation fail, silently unless "
       "HSAKMT_DEBUG_LEVEL is set, so torch just sees no GPU.",
       "Use three decimal numbers MAJOR.MINOR.STEPPING (10.3.0 for gfx1030, 11.0.0 for gfx1100), or unset it.", needs=("env",),
       ok_is_evidence=False)
def hsa_override_format(f: Facts) -> Iterable[Finding]:
    ovs = _override_vars(f)
    if not ovs:
        if f.env_complete:
            yield ok(f"{VAR} is not set")
        else:
            yield skip(f"whether {VAR} is set is unknown", "Paste `env | grep -E 'HSA|HIP|ROCR|VISIBLE'`.")
        return
    nodes = {g.node for g in amd_gpus(f) if g.node is not None}
    rocm = _runtime_rocm(f)
    for name, value in sorted(ovs.items()):
        if value == "":
            yield fail(f"{name} is set to an empty string",
                       "An empty value is still 'set': the runtime parses it and fails, and ROCm enumerates no GPU "
                       "(seen in containers whose env files or compose templates such as `${VAR:-}` leave it blank).",
                       fix=Fix("Unset it; in a compose or env file remove the line (define it only with a real "
                               "value), since a template with an empty default still defines it.", (f"unset {name}",)))
            continue
        gfx, why = knowledge.parse_override(value)
        if gfx is None:
            # Quotes that reached the process (`Environment="X=\"10.3.0\""`, docker `-e X="10.3.0"` via an env
            # file) or stray blanks: the intended value is plain to see (ollama#5090).
            clean = value.strip().strip("\"'").strip()
            meant, _ = knowledge.parse_override(clean) if clean != value else (None, None)
            fix = (Fix(f"Set the value without quotes or blanks where it is defined (shell, systemd Environment=, "
                       f"container env file): {name}={clean}.", (f"export {name}={clean}",)) if meant
                   else Fix("Set MAJOR.MINOR.STEPPING numbers, or unset it.", (f"unset {name}",)))
            yield fail(f"{name}={value!r} is invalid: it {why}",
                       "HSA initialisation fails on an invalid value and ROCm reports no GPU, without saying why "
                       "(re-run with HSAKMT_DEBUG_LEVEL=7 to see 'HSA_OVERRIDE_GFX_VERSION ... is invalid').",
                       evidence=("env",), fix=fix)
            continue
        if name != VAR:
            suffix = name[len(VAR) + 1:]
            if not suffix.isdigit():
                yield fail(f"{name}: '{suffix}' is not a KFD node number", "The runtime only reads _<node id>.",
                           fix=Fix("Rename it.", (f"unset {name}",)))
                continue
            if nodes and int(suffix) not in nodes:
                yield warn(f"{name} names node {suffix}, which is not a GPU node",
                           f"GPU nodes here: {', '.join(str(n) for n in sorted(nodes))} (node 0 is usually the CPU).",
                           fix=Fix("Use the GPU's KFD node number (rocminfo 'Node:').", (f"unset {name}",)))
                continue
            if rocm is not None and rocm < PER_NODE_SINCE:
                yield warn(f"{name} needs ROCm >= 6.3; this runtime is ROCm {rocm}",
                           "Per-node overrides were added in ROCR-Runtime 84567b64 (ROCm 6.3); older runtimes "
                           "ignore them.", fix=Fix(f"Upgrade, or use the global {VAR}."))
                continue
        yield ok(f"{name}={value} is well-formed (→ {gfx})")


def _needed(f: Facts) -> tuple[list[tuple[Gpu, knowledge.OverrideRule]], tuple[str, ...] | None, str]:
    arches, source = torch_arch_list(f)
    needs = []
    if arches:
        for g in amd_gpus(f):
            # A target that a ROCm release supports natively (gfx1151, gfx1201, gfx950 …) needs that release, not
            # another target's code: the ISAs differ enough to fault (issue #10; ROCm/hip#3807, legacy#5824).
            if g.gfx and g.gfx not in arches and not native_rocm(g.gfx):
                rules = [r for r in knowledge.override_rules(g.gfx) if r.target in arches]
                if rules:
                    needs.append((g, rules[0]))
    return needs, arches, source


@check("hsa-override-needed", "overrides", "Says which override value (global or per node) a GPU needs when torch "
       "lacks its gfx but carries a same-family target.",
       "Without it, consumer GPUs such as gfx1031/gfx1032 (RX 6700/6600) abort with hipErrorNoBinaryForGpu.",
       "Export the value the finding prints (per node on mixed machines); better, use a wheel that has the target.")
def hsa_override_needed(f: Facts) -> Iterable[Finding]:
    gpus = amd_gpus(f)
    if not gpus:
        yield skip("not applicable: no AMD GPU")
        return
    if not rocm_torch(f):
        yield skip("no ROCm build of torch to compare against")
        return
    needs, arches, source = _needed(f)
    if arches is None:
        yield skip("torch's gfx list is unknown")
        return
    if needs and not f.env.found and not (f.errors.found and f.errors.value):
        # No environment and no failure shown: an override may already be in place. A pasted GPU error says it
        # is not (a working override would have run the kernels).
        yield skip("whether an HSA override is already set is unknown", "Paste `env | grep HSA`.")
        return
    if not needs:
        native = sorted({g.gfx for g in gpus if g.gfx and g.gfx not in arches and native_rocm(g.gfx)})
        if native:
            yield info(f"no override for {', '.join(native)}: ROCm {native_rocm(native[0])}+ supports it natively",
                       "Install a build that carries it (see 'gfx-torch-arch'); another target's code faults on it.")
        else:
            yield ok("no override needed: torch carries every GPU's own gfx target"
                     if all((g.gfx in arches) for g in gpus if g.gfx) else "no same-family override can help here")
        return
    single = len(gpus) == 1 or len({r.value for _, r in needs}) == 1 and len(needs) == len(gpus)
    for g, rule in needs:
        node = g.node
        var = VAR if single else f"{VAR}_{node}"
        if g.effective_gfx in arches and g.override:
            yield ok(f"{g.label}: override in effect ({g.override_var}={g.override} → {g.effective_gfx})")
            continue
        caveat = "" if rule.verified else " This pairing is a community report, not confirmed."
        per_node = "" if single else (" On a machine with several GPUs the per-node variable (ROCm >= 6.3) keeps "
                                      "the other GPUs on their own code.")
        yield fail(f"{g.label} needs {var}={rule.value}",
                   f"torch has no {g.gfx} code but carries {rule.target} ({source}); the ISA is close enough to "
                   f"run it. AMD does not support this.{caveat}{per_node} Source: {rule.source}.",
                   evidence=(g.source, source),
                   fix=Fix("Set it in the environment of the process that runs torch (shell, systemd unit or "
                           "container -e), or install a wheel that has the real target.",
                           (f"export {var}={rule.value}",)))


@check("hsa-override-harmful", "overrides", "An override that is set where it hurts: native support exists, "
       "another GPU family, or a global value on a machine with mixed GPUs.",
       "The runtime loads code built for another ISA: it loses tuned kernels at best and faults or hangs at worst.",
       "Unset it, or use the per-node form for the GPU that needs it.", ok_is_evidence=False)
def hsa_override_harmful(f: Facts) -> Iterable[Finding]:
    ovs = _override_vars(f)
    gpus = amd_gpus(f)
    # An override rocminfo's agent names show (a chip listed under another target) though the environment pasted
    # does not: it was in effect where rocminfo ran (facts/gpus.INFERRED_OVERRIDE).
    inferred = [g for g in gpus if g.override and g.source.startswith(INFERRED_OVERRIDE)]
    if not ovs and not inferred:
        yield skip("no override set")
        return
    if not gpus:
        yield info(f"{', '.join(sorted(ovs))} is set; no AMD GPU was identified in the evidence",
                   "Whether it is right depends on the GPU's gfx: paste `rocminfo | grep -E 'Marketing|gfx'`.")
        return
    harmful = False
    distinct = {g.gfx for g in gpus if g.gfx}
    if VAR in ovs and len(distinct) > 1:
        harmful = True
        yield fail(f"global {VAR}={ovs[VAR]} applies to every GPU, and these differ: {', '.join(sorted(distinct))}",
                   "Every GPU node loads the same ISA; with an iGPU + dGPU this causes memory faults and hangs "
                   "(ROCm/rocm-systems#11549).",
                   evidence=("env",) + tuple(g.source for g in gpus),
                   fix=Fix(f"Unset the global value and set {VAR}_<node> (ROCm >= 6.3) only for the GPU that needs "
                           "it, or hide the other GPU.",
                           (f"unset {VAR}",) + tuple(f"export {VAR}_{g.node}={rule.value}"
                                                     for g, rule in _needed(f)[0])))
    arches, _source = torch_arch_list(f)
    for g in gpus:
        if not g.override or not g.gfx or g.effective_gfx == g.gfx:
            continue
        real, forced = knowledge.gfx_info(g.gfx), knowledge.gfx_info(g.effective_gfx)
        rules = knowledge.override_rules(g.gfx)
        if real and forced and _newer_minor_isa(g.gfx, g.effective_gfx) and rules:
            # A newer minor ISA of the same major (gfx1151 / RDNA3.5 code on a gfx1103 780M,
            # jammsen/proxmox-setup-scripts#1): its code may use instructions this GPU lacks. The working overrides
            # map a GPU onto an older or equal sibling (gfx1103 -> 11.0.0).
            harmful = True
            yield fail(f"{g.override_var}={g.override} makes {g.label} run {g.effective_gfx} code, a newer ISA than "
                       f"its own {g.gfx}",
                       f"{g.effective_gfx} ({forced.arch}) code can use instructions {g.gfx} ({real.arch}) lacks; an "
                       "override only works towards an older or equal sibling target. Only where the GPU has such "
                       "a sibling (the override rules) is this said; without one, the override may be all that runs.",
                       fix=Fix(f"Use the sibling {g.gfx} maps to instead: {g.override_var}={rules[0].value} "
                               f"({rules[0].target}).", (f"export {g.override_var}={rules[0].value}",)))
        elif real and forced and (real.family[:5] != forced.family[:5] and not _same_override_family(g.gfx, g.effective_gfx)):
            harmful = True
            yield fail(f"{g.override_var}={g.override} makes {g.label} run {g.effective_gfx} code (another GPU family)",
                       f"{g.gfx} is {real.arch}; {g.effective_gfx} is {forced.arch}. Code for a different ISA family "
                       "crashes or computes garbage; recent runtimes refuse cross-major overrides.",
                       fix=Fix("Unset it." + _hidden(g), (f"unset {g.override_var}",)))
        elif native_rocm(g.gfx) and not (arches and g.gfx in arches):
            # A target a newer ROCm supports natively (gfx1151, gfx1201, gfx950 …): its ISA differs from the
            # override's in ways that fault (legacy#5824: gfx1151 as 11.0.0 -> memory access fault).
            harmful = True
            crashed = bool(with_signature(f.errors, "memory-access-fault", "hsa-invalid-isa", "invalid-device-function"))
            yield (fail if crashed else warn)(
                f"{g.override_var}={g.override} runs {g.effective_gfx} code on {g.label}, which needs ROCm "
                f"{native_rocm(g.gfx)}+ instead",
                f"{g.gfx} is supported natively from ROCm {native_rocm(g.gfx)}; forcing {g.effective_gfx} code onto it "
                "faults or computes garbage" + (" — the error shown is that fault." if crashed else "."),
                evidence=("env", g.source),
                fix=Fix(f"Unset the override and install a ROCm/torch build that carries {g.gfx} (ROCm "
                        f"{native_rocm(g.gfx)} or newer)." + _hidden(g), (f"unset {g.override_var}",)))
        elif arches and g.gfx in arches:
            harmful = True
            yield warn(f"{g.override_var}={g.override} is not needed: torch supports {g.gfx} natively",
                       f"It forces {g.effective_gfx} code onto {g.label} and loses kernels tuned for {g.gfx}.",
                       fix=Fix("Unset it (check ~/.bashrc, /etc/environment, systemd units and container env)."
                               + _hidden(g), (f"unset {g.override_var}",)))
    if not harmful:
        yield ok("the override set here does no harm")


def _isa(gfx: str) -> tuple[int, int] | None:
    """(major, minor) of a gfx name: gfx1103 -> (11, 0), gfx1151 -> (11, 5), gfx90a -> (9, 0)."""
    m = re.match(r"^gfx(\d{1,2}?)([0-9a-f])([0-9a-f])$", gfx)
    return (int(m.group(1)), int(m.group(2), 16)) if m else None


def _newer_minor_isa(real: str, forced: str | None) -> bool:
    a, b = _isa(real), _isa(forced or "")
    return a is not None and b is not None and a[0] == b[0] and b[1] > a[1]


def _same_override_family(real: str, forced: str | None) -> bool:
    return any(r.target == forced for r in knowledge.override_rules(real))


CHECKS = (hsa_override_format, hsa_override_needed, hsa_override_harmful)
