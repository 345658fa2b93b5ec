"""The amdgpu kernel driver and its KFD compute interface."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

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


# AMD's out-of-tree driver packages: amdgpu-dkms (ROCm 3.x on), rock-dkms before it (ROCm/amdgpu#115: ROCm 4.3).
_DKMS_PACKAGES = ("amdgpu-dkms", "rock-dkms")


@check("amdgpu-dkms", "driver", "AMD's DKMS driver, where its package is installed, is built for the running kernel.",
       "amdgpu-dkms (rock-dkms before ROCm 5) builds AMD's amdgpu for each kernel through DKMS. Where `dkms status` "
       "lists it only as 'added', or not at all, or for other kernels than the running one, the kernel's own (often "
       "older) amdgpu runs instead, and a GPU newer than that driver is not seen (ROCm/amdgpu#115).",
       "Rebuild the module for this kernel (dkms autoinstall, or reinstall the package) and read DKMS's make.log "
       "where the build fails.")
def amdgpu_dkms(f: Facts) -> Iterable[Finding]:
    raw_system, raw_pkgs = f.raw.get("system"), f.raw.get("packages")
    system: dict[str, Any] = raw_system if isinstance(raw_system, dict) else {}
    if not system.get("dkms_status_shown"):
        yield skip("no `dkms status` output in the evidence", "Paste `dkms status` to check AMD's DKMS driver.")
        return
    rows = [r for r in system.get("dkms_status") or [] if isinstance(r, dict) and r.get("module") == "amdgpu"]
    pkgs: dict[str, Any] = raw_pkgs if isinstance(raw_pkgs, dict) else {}
    pkg = next((p for p in _DKMS_PACKAGES if p in pkgs), None)
    installed = sorted({str(r.get("kernel")) for r in rows if r.get("state") == "installed" and r.get("kernel")})
    running = f.kernel_release.value if f.kernel_release.found else None
    where = "/var/lib/dkms/amdgpu/*/build/make.log"
    if not rows:
        if pkg is None:
            yield skip("`dkms status` lists no amdgpu module, and no amdgpu-dkms package is shown (the kernel's own "
                       "driver, as AMD's --no-dkms install leaves it)")
            return
        tool = {"dpkg": f"sudo apt install --reinstall {pkg}", "rpm": f"sudo dnf reinstall {pkg}"}.get(
            str(system.get("package_tool")))  # the database that listed the package says which tool reinstalls it
        yield fail(f"{pkg} {pkgs[pkg]} is installed, but DKMS holds no amdgpu module",
                   "Its module was never registered or built for this kernel, so the kernel's own amdgpu is the one "
                   "that loads (ROCm/amdgpu#115: AMD reads an empty `dkms status` this way).",
                   evidence=("dkms status", pkg),
                   fix=Fix(f"Reinstall {pkg} so DKMS builds its module, then check `dkms status` says 'installed' "
                           f"for `uname -r`; if the build fails, {where} says why.",
                           (tool, "dkms status") if tool else (), needs_sudo=True, needs_reboot=True))
        return
    if not installed:
        states = ", ".join(sorted({str(r.get("state")) for r in rows}))
        yield fail(f"the amdgpu DKMS module is only {states}, installed for no kernel",
                   "'added' (or 'built') without 'installed' means its build or install failed (ROCm/amdgpu#115), "
                   "so the kernel's own amdgpu runs.", evidence=("dkms status",),
                   fix=Fix(f"Build and install it for the running kernel and read {where} if that fails.",
                           ("sudo dkms autoinstall -k $(uname -r)", "dkms status"), needs_sudo=True,
                           needs_reboot=True))
        return
    if running and running not in installed:
        yield fail(f"the amdgpu DKMS module is installed for {', '.join(installed)}, not for the running kernel "
                   f"{running}", "This boot loads the kernel's own amdgpu.", evidence=("dkms status", "uname -r"),
                   fix=Fix(f"Build it for {running} (or boot a kernel it is built for); {where} says why a build "
                           "fails.", (f"sudo dkms autoinstall -k {running}", "dkms status"), needs_sudo=True,
                           needs_reboot=True))
        return
    yield ok(f"amdgpu DKMS module installed for {', '.join(installed)}"
             + ("" if running else " (the running kernel is not shown)"))


CHECKS = (amdgpu_loaded, kfd_present, amdgpu_dkms)
