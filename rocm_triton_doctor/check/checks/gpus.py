"""Which AMD GPUs are there, and are their gfx targets supported by ROCm and by the installed torch?"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from packaging.version import Version

from rocm_triton_doctor import knowledge
from rocm_triton_doctor.check.checks.base import check, fail, fmt_bytes, info, ok, skip, warn
from rocm_triton_doctor.check.facts import Facts, Gpu, Status
from rocm_triton_doctor.check.facts.platform import amd_host, os_family
from rocm_triton_doctor.check.facts.errors import code_object_errors, named_isas, quote, with_signature
from rocm_triton_doctor.check.facts.gpus import KFD_NODES, kfd_nodes_complete, shows_effective_gfx
from rocm_triton_doctor.check.facts.python import rocm_torch, torch_version
from rocm_triton_doctor.check.findings import Finding, Fix


def torch_arch_list(f: Facts) -> tuple[tuple[str, ...] | None, str]:
    """The gfx targets compiled into the installed ROCm torch: measured if the runtime probe ran, else from the
    knowledge base by the wheel's +rocmX.Y tag."""
    if f.runtime.found and f.runtime.value and f.runtime.value.arch_list and f.runtime.value.hip_version:
        return tuple(knowledge.base_gfx(a) for a in f.runtime.value.arch_list), "torch.cuda.get_arch_list()"
    v = torch_version(f)
    if v and "+rocm" in v:
        tag = v.split("+rocm", 1)[1]
        # Only the index's own tags (`+rocm6.4`, `+rocm6.2.4`): a source or image build (`+rocm7.0.0.git64359f59`,
        # AMD's rocm/pytorch images) or TheRock's nightlies (`+rocm7.0.0rc20250828`) carry targets of their own build
        # (legacy-rocm-build#5404: the image ran on gfx1151, which the rocm7.0 index lacks).
        m = re.fullmatch(r"(\d+\.\d+(?:\.\d+)?)", tag)
        if m:
            for index in (f"rocm{m.group(1)}", "rocm" + ".".join(m.group(1).split(".")[:2])):
                arches = knowledge.index_arches(index, v)
                if arches:
                    return arches, f"knowledge base: download.pytorch.org/whl/{index} (as of {knowledge.as_of()})"
    return None, ""


def newest_wheel_for(gfx: str, python: str | None) -> tuple[str, str] | None:
    """(torch version, index) of the newest release whose ROCm index carries `gfx` (and supports `python`)."""
    for rel in sorted(knowledge.torch_releases(), key=lambda r: Version(r.torch), reverse=True):
        if python and not rel.supports_python(python):
            continue
        for index in reversed(rel.rocm_indexes):
            if gfx in (knowledge.index_arches(index, rel.version_on(index)) or ()):
                return rel.version_on(index), index
    return None


def pip(f: Facts) -> str:
    from rocm_triton_doctor.check.checks.torch import pip as env_pip

    return env_pip(f)


def native_rocm(gfx: str) -> str | None:
    """The first ROCm release whose official support list has `gfx` (knowledge/data/rocm_releases.json), if any.
    TheRock's nightly multi-arch builds (which compile everything, gfx103X-all etc.) are not a support statement."""
    from packaging.version import Version

    from rocm_triton_doctor.knowledge import _load

    for r in sorted(_load("rocm_releases.json")["releases"], key=lambda r: Version(r["version"])):
        if not r.get("therock") and gfx in r.get("gfx", ()):
            return str(r["version"])
    return None


def last_rocm(gfx: str) -> str | None:
    """The newest ROCm release whose official support list still has `gfx` (None when none has it)."""
    from packaging.version import Version

    from rocm_triton_doctor.knowledge import _load

    with_it = [r["version"] for r in _load("rocm_releases.json")["releases"] if not r.get("therock")
               and gfx in r.get("gfx", ())]
    return str(max(with_it, key=Version)) if with_it else None


def _python_version(f: Facts) -> str | None:
    return f.python.value.version if f.python.found and f.python.value else None


def _distinct(gpus: tuple[Gpu, ...]) -> list[Gpu]:
    """One GPU per (real gfx, effective gfx): eight identical MI300X are one line in the support findings."""
    seen: dict[tuple[str | None, str | None], Gpu] = {}
    for g in gpus:
        seen.setdefault((g.gfx, g.effective_gfx), g)
    return list(seen.values())


def amd_gpus(f: Facts) -> tuple[Gpu, ...]:
    return f.gpus.value if f.gpus.found and f.gpus.value else ()


def _dropped_beside_supported(gpus: Sequence[Gpu]) -> Fix | None:
    """Where a GPU that current ROCm no longer supports (gfx803 …) sits next to one it does, ROCr's start-up can fail
    for both (legacy-rocm-build#5942: an RX 580 beside an RX 7800 XT, 'HSA_STATUS_ERROR: A generic error'): keep the
    old one out of ROCr's enumeration. Words only: the order ROCR_VISIBLE_DEVICES counts is rocminfo's, not shown."""
    rel = knowledge.rocm_release(knowledge.newest_rocm())
    if rel is None:
        return None
    current = set(rel.gfx) | set(rel.gfx_deprecated)
    old = [g for g in gpus if g.gfx and g.gfx not in current]
    ok_ = [g for g in gpus if g.gfx and g.gfx in current]
    if not (old and ok_):
        return None
    return Fix(f"{', '.join(g.label for g in old)} is not supported by current ROCm and can stop the runtime from starting "
               f"for every GPU: keep it out of ROCr's enumeration with ROCR_VISIBLE_DEVICES set to "
               f"{', '.join(g.label for g in ok_)}'s index (ROCr's order; with ROCR_VISIBLE_DEVICES unset, try each "
               "index), or remove the card.")


@check("gpus-detected", "gpus", "Lists the AMD GPUs ROCm can see: gfx target, name, VRAM, wave size, iGPU or dGPU.",
       "Everything else depends on the real gfx target of each GPU.",
       "If a GPU is missing, see the driver and access findings.")
def gpus_detected(f: Facts) -> Iterable[Finding]:
    gpus = amd_gpus(f)
    for g in gpus:
        kind = "?" if g.integrated is None else ("iGPU" if g.integrated else "dGPU")
        arch = f"{g.info.arch}, " if g.info else ""
        extra = "" if g.info else " — gfx target not in the doctor's knowledge base"
        ov = f"; runtime sees {g.effective_gfx} via {g.override_var}={g.override}" if g.override else ""
        yield info(f"{g.label} — {kind}, {arch}wave{g.wave_size or '?'}, {fmt_bytes(g.vram_bytes)}",
                   f"{g.compute_units or '?'} CUs, PCI device id "
                   f"{f'0x{g.device_id:04x}' if g.device_id else '?'}; source {g.source}{ov}{extra}",
                   evidence=(g.source,))
    if gpus:
        if len(f.pci_amd_gpus) > len(gpus):
            # A fix only where the GPU list is known complete (every listed KFD node read): a paste, or a snapshot
            # that lost a node's files, can show fewer nodes than the machine has (tests/check/test_properties.py).
            complete = f.gpus.source == KFD_NODES and kfd_nodes_complete(f.raw)
            yield warn(f"{len(f.pci_amd_gpus)} AMD display devices on PCI but only {len(gpus)} GPU node(s) "
                       f"{'in KFD' if complete else 'in the evidence'}",
                       "A GPU without a KFD node is unsupported by this kernel's KFD or lacks PCIe atomics."
                       + ("" if complete else " The evidence may not list every node: paste "
                          "`ls /sys/class/kfd/kfd/topology/nodes` and `sudo dmesg | grep -iE 'kfd|atomics'`."),
                       fix=Fix("Read the kernel log.", ("sudo dmesg | grep -iE 'kfd|atomics'",), needs_sudo=True)
                       if complete else None)
        rep = f.rocminfo.value
        if rep is not None and rep.errors and not rep.gpus and not any(
                g.source.split(" ")[0] in ("rocminfo", "kfd", "torch") or g.source.startswith("/sys/") for g in gpus):
            # GPUs known only from lspci or names, while rocminfo failed: the runtime still sees none. Said here too,
            # so that knowing the GPU's name never hides the failure (removing evidence never raises the verdict;
            # legacy-rocm-build#6166 had it the other way round).
            yield fail("rocminfo could not enumerate GPUs", "; ".join(rep.errors[:3]), evidence=(f.rocminfo.source,),
                       fix=_dropped_beside_supported(gpus))
        return
    wsl = bool(f.wsl.found and f.wsl.value)
    if not f.dev_kfd.found and (wsl or (f.container.found and amd_host(f) is not False)):
        yield skip("no /dev/kfd here: see 'wsl' / 'container-passthrough'")
        return
    if f.rocminfo.value is not None and f.rocminfo.value.errors:
        yield fail("rocminfo could not enumerate GPUs", "; ".join(f.rocminfo.value.errors[:3]),
                   evidence=(f.rocminfo.source,))
        return
    if f.dev_kfd.found and f.kfd_topology.found and f.gpus.status is Status.ABSENT:
        yield fail("KFD is present but has no GPU node",
                   "Only CPU nodes in /sys/class/kfd/kfd/topology/nodes.",
                   fix=Fix("Read the kernel log for the reason.", ("sudo dmesg | grep -iE 'kfd|amdgpu'",),
                           needs_sudo=True))
        return
    if f.nvidia_gpus_present and f.nvidia.value:
        names = ", ".join(g.name for g in f.nvidia.value.gpus)
        yield info(f"no AMD GPU; NVIDIA GPU(s): {names}", "The NVIDIA/CUDA path is checked instead.")
        return
    if amd_host(f) and f.gpus.status is Status.ABSENT:
        yield fail("no AMD GPU visible to ROCm", f"KFD topology: {f.gpus.describe()}")
        return
    if amd_host(f):
        yield skip("AMD GPU(s) not identified",
                   "Paste `rocminfo | grep gfx` (or `cat /sys/class/kfd/kfd/topology/nodes/*/properties`).")
        return
    if f.gpus.known or f.kfd_topology.known:
        yield info("no GPU found (CPU-only machine)",
                   "torch runs on the CPU; Triton kernels run only in interpreter mode (TRITON_INTERPRET=1).")
        return
    yield skip("GPU list unknown", f.gpus.describe())


@check("igpu-with-dgpu", "gpus", "An integrated GPU next to a discrete one is hidden from ROCm.",
       "ROCm may pick the iGPU as device 0, load the wrong code object, or crash ('invalid device function', "
       "hipErrorNoBinaryForGpu; ROCm 6.2.4 docs: disable the IGP in the BIOS).",
       "Hide the iGPU with ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES, or disable it in the BIOS.")
def igpu_with_dgpu(f: Facts) -> Iterable[Finding]:
    gpus = amd_gpus(f)
    igpus = [g for g in gpus if g.integrated]
    dgpus = [g for g in gpus if g.integrated is False]
    if not (igpus and dgpus):
        yield skip("not applicable: not an iGPU + dGPU machine") if gpus else skip("not applicable: no AMD GPU")
        return
    hidden = f.env_var("ROCR_VISIBLE_DEVICES") or f.env_var("HIP_VISIBLE_DEVICES") or f.env_var("CUDA_VISIBLE_DEVICES")
    names = ", ".join(g.label for g in igpus)
    if hidden is not None:
        yield ok(f"iGPU present ({names}); device visibility is restricted ({hidden!r})",
                 "Make sure the listed indices select the discrete GPU(s): indices follow ROCm's enumeration order.")
        return
    windows = os_family(f) == "windows"
    links = ("https://github.com/ROCm/rocm-systems/issues/11549",)
    seen_by_runtime = _runtime_gfx(f)
    if seen_by_runtime and all(_integrated(g) for g in seen_by_runtime):
        # The runtime enumerated the iGPU alone while the machine has a discrete GPU (legacy-rocm-build#4390:
        # amdgpu-arch printed only gfx1036 beside an RX 6800 XT): no visibility index can select a GPU the runtime
        # does not list. AMD's advice there: disable the iGPU.
        dnames = ", ".join(g.label for g in dgpus)
        yield fail(f"the ROCm runtime sees only the integrated GPU ({', '.join(sorted(seen_by_runtime))}), not {dnames}",
                   "Programs run on (or fail on) the iGPU; the discrete GPU is not in the runtime's device list, so "
                   "HIP_VISIBLE_DEVICES cannot select it.",
                   evidence=tuple(g.source for g in igpus + dgpus),
                   fix=Fix("Disable the integrated GPU in the BIOS/UEFI"
                           + (" (or in Device Manager)" if windows else "")
                           + ", then check that amdgpu-arch / rocminfo lists the discrete GPU's target."),
                   links=links)
        return
    # A visibility index is given only when the GPU order is the runtime's own (torch, rocminfo/KFD, amdgpu-arch);
    # Windows' adapter list or lspci order says nothing about HIP's numbering.
    order = list(gpus)
    runtime_order = all(g.source.split(" ")[0] in RUNTIME_ORDER or g.source.startswith("/sys/") for g in gpus)
    dgpu_idx = ",".join(str(i) for i, g in enumerate(order) if g.integrated is False)
    # Which variable the indices are for: torch's device numbers are HIP's (HIP_VISIBLE_DEVICES, also the only one
    # Windows' HIP reads; TheRock#5543); KFD/rocminfo order is ROCr's (ROCR_VISIBLE_DEVICES).
    torch_order = all(g.source.startswith(("torch", "amdgpu-arch", "llama.cpp")) for g in gpus)
    var = "HIP_VISIBLE_DEVICES" if windows or torch_order else "ROCR_VISIBLE_DEVICES"
    where = "torch's device numbers" if var == "HIP_VISIBLE_DEVICES" else "KFD node order; check with rocminfo"
    cmd = (f'$env:{var}="{dgpu_idx}"' if windows else f"export {var}={dgpu_idx}") if runtime_order else None
    # A GPU program that already failed on such a machine (the pasted error) is the iGPU problem until shown otherwise.
    crashed = bool(f.errors.found and f.errors.value)
    named = named_isas(code_object_errors(f.errors)) if crashed else set()
    if any(g.gfx in named for g in dgpus) and all(g.gfx not in named for g in igpus):
        # The error names the discrete GPU's own target: the build lacks it, which 'gpu-code-object' reports; the
        # iGPU is a side issue here (lamikr/rocm_sdk_builder#246).
        crashed = False
    opened = [g for g in gpus if g.source.startswith("torch")]
    if opened and all(g.integrated for g in opened) and not torch_order:
        # torch's own line names only the integrated GPU while another tool names the discrete one (comfyui-rocm#115:
        # the launcher found gfx1200, ComfyUI's torch opened gfx1036): programs run on the iGPU. The discrete GPU's
        # torch index is not in the evidence, so no visibility value is given.
        yield fail(f"torch opened the integrated GPU ({', '.join(g.gfx or g.name for g in opened)}), not the discrete "
                   f"{', '.join(g.label for g in dgpus)}",
                   "Single-device programs run on torch's device 0, here the iGPU: slow, short of memory, or failing "
                   "where the build lacks the iGPU's target.",
                   evidence=tuple(g.source for g in igpus + dgpus),
                   fix=Fix("Disable the integrated GPU in the BIOS/UEFI" + (" (or in Device Manager)" if windows else "")
                           + f", or hide it with {var} set to the discrete GPU's torch index (list them with "
                           "`python -c \"import torch; print([torch.cuda.get_device_name(i) for i in "
                           "range(torch.cuda.device_count())])\"`)."),
                   links=links)
        return
    if not crashed and torch_order and order and order[0].integrated is False and f.runtime.found \
            and f.runtime.value is not None and f.runtime.value.is_available is True:
        # torch enumerated both and its default device (0) is the discrete GPU, with no error in the evidence
        # (InvokeAI#9490: RX 7900 XTX cuda:0, 760M cuda:1, the app ran on cuda:0): single-device programs run there.
        # What is left is advice for programs that use every GPU (a model split across devices, DataParallel).
        yield ok(f"iGPU present ({names}); torch's default device 0 is the discrete GPU ({order[0].label})",
                 "Programs that use every visible GPU (a model split across devices) would use the iGPU too.",
                 fix=Fix(f"For those, hide the iGPU with {var} (indices follow {where}).", (cmd,) if cmd else ()))
        return
    yield (fail if crashed else warn)(f"integrated GPU next to a discrete GPU: {names}",
               "Both are visible to ROCm. torch may select the iGPU, and a global HSA_OVERRIDE_GFX_VERSION applies "
               "to it too (memory faults, hangs).",
               evidence=tuple(g.source for g in igpus),
               fix=Fix(f"Hide the iGPU from ROCm for GPU programs with {var} (indices follow {where}), or disable it "
                       "in the BIOS." + ("" if cmd else " The runtime's device numbers are not in the evidence: "
                                         "list them with amdgpu-arch, rocminfo or torch.cuda.get_device_name(i)."),
                       (cmd,) if cmd else ()),
               links=links)


@check("apu-gtt-limit", "gpus", "On an APU that ran out of GPU memory, the GTT pool the kernel gave the GPU.",
       "An APU's GPU allocates system memory through GTT beyond its small BIOS carve-out; amdgpu sizes GTT to half of "
       "the RAM unless the ttm module's pages_limit says otherwise, so a model larger than that fails to load.",
       "Raise GTT with ttm.pages_limit (4 KiB pages) on the kernel command line, up to what the RAM allows.")
def apu_gtt_limit(f: Facts) -> Iterable[Finding]:
    gpus = amd_gpus(f)
    if not gpus or not all(g.integrated for g in gpus):
        yield skip("not applicable: no APU-only machine in the evidence")
        return
    oom = with_signature(f.errors, "hip-out-of-memory")
    if not oom:
        yield skip("no GPU out-of-memory error in the evidence")
        return
    if not f.gtt_mib.found or not f.gtt_mib.value:
        yield skip("the GTT size is not in the evidence",
                   "Needs amdgpu's boot line: `sudo dmesg | grep 'GTT memory ready'`.")
        return
    gib = f.gtt_mib.value / 1024
    params = f.kernel_cmdline.value or () if f.kernel_cmdline.found else ()
    set_by = [p for p in params if p.startswith(("ttm.pages_limit=", "amdgpu.gttsize="))]
    # The default (amdgpu since Linux 6.0, "drm/amdgpu: Adjust logic around GTT size"): max(3 GiB, half of RAM);
    # ttm.pages_limit (4 KiB pages; with ttm.page_pool_size) raises it; amdgpu.gttsize is deprecated in its favour.
    # Linux 7.x caps GTT at the RAM that backs it (drm/amdgpu: cap GTT size to physical RAM on APUs).
    yield fail(f"the APU ran out of GPU memory with {gib:.1f} GiB of GTT",
               "On an APU the GPU's memory beyond the BIOS carve-out is GTT: system memory amdgpu lets it map, "
               + (f"here set by {', '.join(set_by)}." if set_by else
                  "which the kernel sizes to half of the RAM unless ttm.pages_limit says otherwise."),
               evidence=("dmesg: GTT memory ready", *quote(oom)),
               fix=Fix("Raise GTT with the ttm module's pages_limit (4 KiB pages) on the kernel command line, up to what "
                       "the RAM allows with room for the system: e.g. ttm.pages_limit=27648000 ttm.page_pool_size="
                       "27648000 for about 105 GiB on a 128 GiB machine (add them to GRUB_CMDLINE_LINUX_DEFAULT, run "
                       "update-grub or grub2-mkconfig, reboot; amd-debug-tools' `amd-ttm --set <GiB>` does the same). "
                       "Check afterwards with `sudo dmesg | grep 'GTT memory ready'`."),
               links=("https://manpages.debian.org/testing/amd-debug-tools/amd-ttm.1.en.html",))


# Tools whose GPU order is the runtime's own enumeration (what *_VISIBLE_DEVICES indices count).
RUNTIME_ORDER = ("torch", "rocminfo", "amdgpu-arch", "llama.cpp", "kfd")


def _integrated(gfx: str) -> bool:
    info = knowledge.gfx_info(gfx)
    return bool(info and info.integrated)


def _runtime_gfx(f: Facts) -> set[str]:
    """The gfx targets of amdgpu-arch's full enumeration in the pasted text (torch's lines name only the device a
    program opened, so they cannot show that a GPU is missing from the runtime's list)."""
    seen = f.raw.get("gpus_seen")
    return {str(e["gfx"]) for e in seen if isinstance(e, dict) and e.get("tool") == "amdgpu-arch"
            and e.get("gfx")} if isinstance(seen, list) else set()


@check("gfx-rocm-support", "gpus", "Each GPU's gfx target is in the installed system ROCm's official support list.",
       "Libraries of the system ROCm (rocBLAS, MIOpen, hipBLASLt) ship kernels only for listed targets.",
       "Use a listed GPU/ROCm pair, a newer ROCm, or the PyTorch wheel's own bundled ROCm.")
def gfx_rocm_support(f: Facts) -> Iterable[Finding]:
    gpus = amd_gpus(f)
    if not gpus:
        yield skip("not applicable: no AMD GPU")
        return
    if not f.rocm.found or not f.rocm.value or not f.rocm.value.version:
        yield skip("no system ROCm installed (PyTorch wheels bundle their own)")
        return
    version = f.rocm.value.version
    rel = knowledge.rocm_release(version)
    if rel is None:
        yield info(f"ROCm {version} is not in the doctor's knowledge (as of {knowledge.as_of()})")
        return
    for g in _distinct(gpus):
        if not g.gfx:
            continue
        tag = " (not confirmed: no AMD matrix for this release)" if not rel.verified else ""
        if g.gfx in rel.gfx:
            dep = " (deprecated)" if g.gfx in rel.gfx_deprecated else ""
            yield ok(f"{g.gfx} is supported by ROCm {version}{dep}{tag}")
        else:
            yield warn(f"{g.gfx} ({g.name}) is not in ROCm {version}'s supported targets{tag}",
                       f"ROCm {rel.version} lists: {', '.join(rel.gfx)}. ROCm libraries may lack kernels for it "
                       f"(source: {rel.source}).",
                       evidence=(g.source, f.rocm.source))


@check("gfx-torch-arch", "gpus", "Each GPU's gfx target (after overrides) is compiled into the installed torch.",
       "A torch wheel without code for the GPU fails at the first kernel with 'HIP error: invalid device function' "
       "or aborts with hipErrorNoBinaryForGpu.",
       "Install a torch wheel whose ROCm index carries the gfx, or use a same-family HSA override.")
def gfx_torch_arch(f: Facts) -> Iterable[Finding]:
    gpus = amd_gpus(f)
    if not gpus:
        yield skip("not applicable: no AMD GPU")
        return
    if not rocm_torch(f):
        yield skip("no ROCm build of torch installed (see 'torch-build-mismatch')")
        return
    arches, source = torch_arch_list(f)
    if not arches:
        yield skip("torch's gfx list is unknown", "Run without --no-runtime to measure torch.cuda.get_arch_list().")
        return
    py = _python_version(f)
    for g in _distinct(gpus):
        eff = g.effective_gfx or g.gfx
        if not eff:
            continue
        if eff in arches:
            via = f" (via {g.override_var}={g.override}, real {g.gfx})" if g.override and eff != g.gfx else ""
            yield ok(f"{eff} is in torch's arch list{via}", f"source: {source}")
            continue
        if not f.env.found and not shows_effective_gfx(g):
            # Whether an HSA override makes it run as a target torch has is unknown (no environment recorded). A
            # target the runtime itself reported already includes any override, so there this doubt does not arise.
            yield warn(f"{eff} ({g.name}) is not compiled into torch {torch_version(f)}",
                       f"torch carries {', '.join(arches)} ({source}); unless an HSA_OVERRIDE_GFX_VERSION maps it to one "
                       "of those (the environment was not recorded: paste `env | grep HSA`), kernels fail with "
                       "'invalid device function'.", evidence=(g.source, source),
                       fix=Fix(f"Install a torch build that carries {g.gfx or eff}, or a same-family override "
                               "(see 'hsa-override-needed')."))
            continue
        better = newest_wheel_for(g.gfx or eff, py)
        rules = [] if native_rocm(g.gfx or eff) else [r for r in knowledge.override_rules(g.gfx or "") if r.target in arches]
        cmds: list[str] = []
        text = []
        if better:
            tv, index = better
            text.append(f"torch {tv} from the {index} index carries {g.gfx}.")
            cmds.append(f"{pip(f)} install --force-reinstall torch=={tv} --index-url {knowledge.index_url(index)}")
        if rules:
            text.append(f"Or run it as {rules[0].target} with HSA_OVERRIDE_GFX_VERSION={rules[0].value} "
                        "(see 'hsa-override-needed').")
        yield fail(f"{eff} ({g.name}) is not compiled into torch {torch_version(f)}",
                   f"torch carries {', '.join(arches)} ({source}). Kernels will fail with 'invalid device "
                   "function' or hipErrorNoBinaryForGpu.",
                   evidence=(g.source, source),
                   fix=Fix(" ".join(text) or f"No published torch wheel carries {eff}; build torch from source "
                           f"with PYTORCH_ROCM_ARCH={eff}, or use AMD's TheRock wheels if they list it.", tuple(cmds)),
                   links=("https://github.com/pytorch/pytorch/issues/164346",))


CHECKS = (gpus_detected, igpu_with_dgpu, apu_gtt_limit, gfx_rocm_support, gfx_torch_arch)
