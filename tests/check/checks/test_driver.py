"""checks/driver.py: one test per severity each check can give."""

from __future__ import annotations

from ..conftest import AMD_LIVE, minimal_snapshot, node, one, run


def test_amdgpu_loaded_ok_when_live() -> None:
    assert one("amdgpu-loaded", files=AMD_LIVE).title == "amdgpu loaded (in-tree kernel driver)"


def test_amdgpu_loaded_skip_when_unknown() -> None:
    assert one("amdgpu-loaded").title == "amdgpu state unknown"


def test_amdgpu_loaded_fail_when_not_live() -> None:
    f = one("amdgpu-loaded", files={"/sys/module/amdgpu/initstate": "coming\n"})
    assert (f.severity.value, f.title) == ("fail", "amdgpu module state is 'coming', not 'live'")


def test_kfd_present_ok() -> None:
    assert one("kfd-present", paths={"/dev/kfd": node()}).severity.value == "ok"


def test_kfd_present_skip_when_not_probed() -> None:
    assert one("kfd-present").title == "/dev/kfd not probed"


def test_kfd_present_fail_when_amdgpu_live_without_kfd() -> None:
    f = one("kfd-present", files={**AMD_LIVE, "/run/.containerenv": None}, paths={"/dev/kfd": None, "/.dockerenv": None})
    assert (f.severity.value, f.title) == ("fail", "amdgpu is loaded but there is no /dev/kfd")


def test_kfd_present_skip_when_it_may_be_a_container() -> None:
    # no container markers recorded: /dev/kfd may just not be passed through
    assert one("kfd-present", files=AMD_LIVE, paths={"/dev/kfd": None}).severity.value == "skip"


def test_amdgpu_loaded_ok_when_an_smi_table_lists_gpus_through_it() -> None:
    f = one("amdgpu-loaded", system={"amdgpu_gpus_listed": 1})
    assert f.severity.value == "ok" and "SMI tool lists 1 GPU" in f.title


# -- the kernel command line (/proc/cmdline) ------------------------------------------------------------------------------

def test_amdgpu_loaded_names_the_parameter_that_keeps_it_from_loading() -> None:
    cmdline = {"/proc/cmdline": "BOOT_IMAGE=/vmlinuz root=UUID=x ro quiet splash nomodeset\n",
               "/sys/module/amdgpu/initstate": None}
    f = one("amdgpu-loaded", files=cmdline)
    assert f.severity.value == "fail" and "nomodeset" in f.title
    assert f.fix is not None and "GRUB_CMDLINE_LINUX_DEFAULT" in f.fix.text and not f.fix.commands
    unknown = one("amdgpu-loaded", files={"/proc/cmdline": "ro modprobe.blacklist=nouveau,amdgpu quiet\n"})
    assert unknown.severity.value == "warn" and "modprobe.blacklist=nouveau,amdgpu" in unknown.title
    # blacklisting another module, or amdgpu.modeset=1, is not a cause
    assert one("amdgpu-loaded", files={"/proc/cmdline": "ro modprobe.blacklist=nouveau amdgpu.modeset=1\n"}
               ).title == "amdgpu state unknown"


def test_amdgpu_loaded_warns_about_a_misspelled_amdgpu_parameter() -> None:
    # llamacpp-rocm#39: the CWSR workaround written `aamdgpu.cwsr_enable=0` reached no module.
    found = run("amdgpu-loaded",
                minimal_snapshot(files={**AMD_LIVE, "/proc/cmdline": "ro quiet aamdgpu.cwsr_enable=0 amd_iommu=off\n"}))
    assert [f.severity.value for f in found] == ["warn", "ok"]
    assert "aamdgpu.cwsr_enable=0" in found[0].title and "amdgpu.cwsr_enable=0" in (found[0].fix.text if found[0].fix else "")
    assert one("amdgpu-loaded", files={**AMD_LIVE, "/proc/cmdline": "ro amdgpu.cwsr_enable=0 amd_iommu=off\n"}
               ).severity.value == "ok"


def test_amdgpu_loaded_from_lsmod_or_the_dkms_version_file() -> None:
    # gpu-operator#183: `lsmod | grep amdgpu` (used by 4) and `cat /sys/module/amdgpu/version` on an MI300X node
    f = one("amdgpu-loaded", commands={"lsmod": "amdgpu              17424384  4\namdttm                 94208  2 amdgpu\n"})
    assert f.severity.value == "ok" and "used by 4" in f.title
    assert one("amdgpu-loaded", commands={"lsmod": "amdgpu              17424384  0\n"}).severity.value != "ok"
    # two runs pasted together (rocm#1888: before and after amdgpu-dkms): two states, neither decides
    twice = "amdgpu               7393280  21\nkvm_amd               147456  0\nkvm_amd               155648  0\n"
    assert one("amdgpu-loaded", commands={"lsmod": twice}).severity.value != "ok"
    v = one("amdgpu-loaded", files={"/sys/module/amdgpu/version": "6.12.12\n"})
    assert v.severity.value == "ok" and "6.12.12" in v.title


# -- session 20, round 35: AMD's DKMS driver as `dkms status` shows it --------------------------------------------

def _dkms(*texts: str) -> list[tuple[str, str]]:
    from rocm_triton_doctor.check.sources import snapshot_from_text

    return [(f.severity.value, f.title) for f in run("amdgpu-dkms", snapshot_from_text(list(texts)))]


def test_amdgpu_dkms_fails_when_the_package_is_installed_but_dkms_lists_nothing() -> None:
    # ROCm/amdgpu#115 (MI200, ROCm 4.3.1): rock-dkms installed, `dkms status` empty, the kernel's own amdgpu loaded.
    text = ("$ dpkg -l | grep rock\nii  rock-dkms    1:4.3-59    all    amdgpu driver in DKMS format.\n\n"
            "$ dkms status\n\n$ modprobe amdgpu\n")
    from rocm_triton_doctor.check.sources import snapshot_from_text

    f = run("amdgpu-dkms", snapshot_from_text([text]))[0]
    assert f.severity.value == "fail" and "rock-dkms 1:4.3-59 is installed" in f.title
    assert f.fix is not None and f.fix.commands == ("sudo apt install --reinstall rock-dkms", "dkms status")
    # the same empty output without the package: the kernel's own driver by choice, nothing to say
    assert _dkms("$ dkms status\n\n$ modprobe amdgpu\n")[0][0] == "skip"
    # the command with no next prompt (the paste may be cut there): not evidence of an empty list
    assert _dkms("ii  rock-dkms    1:4.3-59    all    x\n$ dkms status\n")[0][0] == "skip"


def test_amdgpu_dkms_fails_when_the_module_is_only_added_or_built_for_another_kernel() -> None:
    assert _dkms("$ dkms status\namdgpu/6.3.6-1718217.22.04: added\n")[0][0] == "fail"
    other = "amdgpu/6.16.13-2303411.24.04, 7.0.0-14-generic, x86_64: installed\n"
    got = _dkms(other, "$ uname -r\n7.0.0-22-generic\n")
    assert got[0][0] == "fail" and "not for the running kernel 7.0.0-22-generic" in got[0][1]
    assert _dkms(other, "$ uname -r\n7.0.0-14-generic\n")[0][0] == "ok"
    assert _dkms(other)[0] == ("ok", ("amdgpu DKMS module installed for 7.0.0-14-generic (the running kernel is not "
                                     "shown)"))


def test_amdgpu_dkms_skips_without_dkms_status() -> None:
    assert one("amdgpu-dkms").severity.value == "skip"
