"""The amdgpu kernel driver and its KFD compute interface."""

from __future__ import annotations

import re
from collections.abc import Iterable

from rocm_triton_doctor.check.checks.base import check, fail, ok, skip, warn
from rocm_triton_doctor.check.facts import Facts, Status
from rocm_triton_doctor.check.facts.driver import blocking_params, misspelled_amdgpu
from rocm_triton_doctor.check.facts.platform import amd_host
from rocm_triton_doctor.check.findings import Finding, Fix


@check("amdgpu-loaded", "driver", "The amdgpu kernel module is loaded and live.",
       "Without amdgpu there is no GPU device at all for ROCm (rocminfo: 'ROCk module is NOT loaded').",
       "Load the module (modprobe amdgpu); if it fails, read dmesg (Secure Boot, DKMS build, firmware).")
def amdgpu_loaded(f: Facts) -> Iterable[Finding]:
    yield from _cmdline_typos(f)
    st = f.amdgpu_initstate
    if st.found and st.value == "live":
        if f.amdgpu_version.found and f.amdgpu_version.value:
            yield ok(f"amdgpu {f.amdgpu_version.value.strip()} loaded (DKMS driver)",
                     "/sys/module/amdgpu/version exists only for AMD's out-of-tree amdgpu-dkms driver.")
        else:
            yield ok("amdgpu loaded (in-tree kernel driver)")
        return
    if f.wsl.found and f.wsl.value:
        yield skip("not applicable under WSL (the Windows driver owns the GPU)")
        return
    host = amd_host(f)
    if st.found:  # present but not live
        yield fail(f"amdgpu module state is '{st.value}', not 'live'",
                   "The module is loading or failed to initialise the GPU.",
                   evidence=(st.source,), fix=Fix("Read the kernel log for amdgpu errors.",
                                                  ("sudo dmesg | grep -iE 'amdgpu|kfd' | tail -n 40",), needs_sudo=True))
        return
    if st.status is Status.UNKNOWN and f.amdgpu_version.found and f.amdgpu_version.value:
        # /sys/module/amdgpu/ exists only while the module is loaded, and its `version` only for AMD's DKMS build
        # (gpu-operator#183: `cat /sys/module/amdgpu/version` -> 6.12.12 on an MI300X node).
        yield ok(f"amdgpu {f.amdgpu_version.value.strip()} loaded (DKMS driver: /sys/module/amdgpu/version is there)")
        return
    lsmod = next((c for c in f.commands if c.name == "lsmod"), None)
    mods = re.findall(r"^(\w+)\s+\d+\s+\d+\b", lsmod.stdout, re.M) if lsmod else []
    # A module listed twice: two lsmod runs pasted together (rocm#1888: before and after installing amdgpu-dkms), two
    # machine states; neither decides.
    m = re.search(r"^amdgpu\s+\d+\s+(\d+)\b", lsmod.stdout, re.M) if lsmod and len(mods) == len(set(mods)) else None
    if st.status is Status.UNKNOWN and m and int(m.group(1)) > 0:
        # lsmod lists loaded modules; a use count above 0 means the driver holds devices (gpu-operator#183).
        yield ok(f"amdgpu loaded: lsmod lists it, used by {m.group(1)}")
        return
    system = f.raw.get("system")
    listed = system.get("amdgpu_gpus_listed") if isinstance(system, dict) else None
    if st.status is Status.UNKNOWN and isinstance(listed, int) and listed > 0:
        # amd-smi's table and rocm-smi's concise table list GPUs only through the loaded driver (legacy-rocm-build#5671,
        # Syllo/nvtop#341): measured, not assumed.
        yield ok(f"amdgpu loaded: the SMI tool lists {listed} GPU(s) through it")
        return
    blocked = blocking_params(f.kernel_cmdline.value or ()) if f.kernel_cmdline.found else ()
    if blocked and (st.status is Status.ABSENT or host or f.pci_amd_gpus):
        # The command line says why: nomodeset (KMS drivers refuse to load), amdgpu blacklisted, amdgpu.modeset=0.
        yield fail(f"amdgpu is kept from loading by the kernel command line: {' '.join(blocked)}",
                   "With these parameters the kernel never brings amdgpu up, so there is no /dev/kfd and no GPU for "
                   "ROCm.", evidence=(f.kernel_cmdline.source, st.source),
                   fix=Fix(f"Remove {' '.join(blocked)} from the boot loader's kernel parameters (GRUB: "
                           "GRUB_CMDLINE_LINUX_DEFAULT in /etc/default/grub, then `sudo update-grub` or `sudo grub2-mkconfig "
                           "-o /boot/grub2/grub.cfg`; systemd-boot: the entry's `options` line) and reboot; "
                           "`cat /proc/cmdline` shows what the running kernel got."))
        return
    if st.status is Status.UNKNOWN:
        if blocked:
            yield warn(f"the kernel command line has {' '.join(blocked)}, which keeps amdgpu from loading",
                       "Whether amdgpu is loaded is not shown; with these parameters it cannot be. Paste "
                       "`cat /sys/module/amdgpu/initstate` and `lspci -nn | grep -Ei 'vga|display'`.",
                       evidence=(f.kernel_cmdline.source,))
            return
        yield skip("amdgpu state unknown", st.describe())
        return
    if f.pci_amd_gpus:
        ids = ", ".join(f"{d.address} [1002:{d.device:04x}]" for d in f.pci_amd_gpus)
        yield fail("amdgpu is not loaded, but an AMD GPU is installed",
                   f"PCI display devices from AMD: {ids}. No driver is bound, so ROCm cannot see them.",
                   evidence=("/sys/module/amdgpu/initstate", "/sys/bus/pci/devices"),
                   fix=Fix("Load the driver and read why it failed if it does not come up (Secure Boot rejecting "
                           "an unsigned DKMS module shows 'Key was rejected by service').",
                           ("sudo modprobe amdgpu", "sudo dmesg | grep -iE 'amdgpu|kfd' | tail -n 40"),
                           needs_sudo=True))
        return
    if host:
        yield fail("amdgpu is not loaded", "/sys/module/amdgpu does not exist.",
                   evidence=(st.source,),
                   fix=Fix("Load the amdgpu driver.", ("sudo modprobe amdgpu",), needs_sudo=True))
        return
    yield skip("not applicable: no AMD GPU found")


def _cmdline_typos(f: Facts) -> Iterable[Finding]:
    """A parameter meant for amdgpu whose module name is misspelled sets nothing (legacy-rocm-build: a workaround
    written `aamdgpu.cwsr_enable=0` that never took effect)."""
    pairs = misspelled_amdgpu(f.kernel_cmdline.value or ()) if f.kernel_cmdline.found else ()
    if pairs:
        bad, meant = " ".join(p for p, _ in pairs), ", ".join(m for _, m in pairs)
        yield warn(f"kernel parameter {bad} is not amdgpu's: the kernel ignores it",
                   f"amdgpu reads only parameters spelled amdgpu.NAME=VALUE; this one reaches no module, so the "
                   f"setting it was meant to make ({meant}) is not in effect.", evidence=(f.kernel_cmdline.source,),
                   fix=Fix(f"Correct it to {meant} in the boot loader's kernel parameters (GRUB_CMDLINE_LINUX_DEFAULT "
                           "in /etc/default/grub, then update-grub / grub2-mkconfig) and reboot; check with "
                           "`cat /sys/module/amdgpu/parameters/<name>`."))


@check("kfd-present", "driver", "The KFD compute interface exists (/sys/class/kfd and /dev/kfd).",
       "ROCm's runtime opens /dev/kfd first; without it hsa_init fails and no GPU is visible.",
       "Use a kernel with CONFIG_HSA_AMD, a GPU the kernel's KFD supports, and pass /dev/kfd into containers.")
def kfd_present(f: Facts) -> Iterable[Finding]:
    if f.dev_kfd.found:
        n = f.kfd_topology.value if f.kfd_topology.found else None
        yield ok("/dev/kfd present" + (f", KFD topology has {n} node(s)" if n else ""))
        return
    if f.wsl.found and f.wsl.value:
        yield skip("not applicable under WSL (no /dev/kfd; see finding 'wsl')")
        return
    if f.dev_kfd.status is Status.UNKNOWN:
        yield skip("/dev/kfd not probed")
        return
    if f.container.found and amd_host(f) is not False:
        yield skip("covered by 'container-passthrough'")
        return
    if f.container.status is Status.UNKNOWN:
        yield skip("/dev/kfd is absent, but whether this is a container (not passed through) is unknown",
                   "Paste `ls -la /.dockerenv /run/.containerenv; cat /proc/1/cgroup`.")
        return
    if f.amdgpu_initstate.found and f.amdgpu_initstate.value == "live":
        yield fail("amdgpu is loaded but there is no /dev/kfd",
                   "The kernel was built without CONFIG_HSA_AMD, or KFD rejected the GPU (kernel log: 'GC IP ... "
                   "not supported in kfd' for a GPU newer than the kernel, or 'PCI rejects atomics' when PCIe "
                   "atomics are missing, e.g. behind some risers or Thunderbolt enclosures).",
                   evidence=("/dev/kfd", "/sys/module/amdgpu/initstate"),
                   fix=Fix("Find the reason in the kernel log.",
                           ("sudo dmesg | grep -iE 'kfd|atomics|GC IP'",), needs_sudo=True))
        return
    if amd_host(f):
        yield fail("/dev/kfd does not exist", "No KFD: ROCm cannot run compute work.",
                   evidence=("/dev/kfd",))
        return
    yield skip("not applicable: no AMD GPU found")


CHECKS = (amdgpu_loaded, kfd_present)
