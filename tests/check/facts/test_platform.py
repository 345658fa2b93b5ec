"""facts/platform.py: os-release, kernel, WSL, containers, environment; and the machine kind from all topics."""

from __future__ import annotations

from pathlib import Path

from rocm_triton_doctor.check.facts import Status
from rocm_triton_doctor.check.facts.platform import (
    accelerator,
    amd_host,
    container_from,
    is_wsl,
    parse_kernel_config,
    parse_key_value,
)

from ...conftest import FIXTURES
from ..conftest import facts

TEXT: Path = FIXTURES / "text"


def test_kernel_config_not_set_line() -> None:
    cfg = parse_kernel_config((TEXT / "kernel-config-talos.txt").read_text())
    assert cfg["CONFIG_HSA_AMD"] == "n"
    assert cfg["CONFIG_DRM_AMD_DC_FP"] == "y"
    assert "CONFIG_DRM_AMD_SECURE_DISPLAY" in cfg


def test_os_release_quotes() -> None:
    kv = parse_key_value('NAME="Ubuntu"\nVERSION_ID="24.04"\nID=ubuntu\n# comment\nBROKEN\n')
    assert kv == {"NAME": "Ubuntu", "VERSION_ID": "24.04", "ID": "ubuntu"}


def test_container_and_wsl_detection() -> None:
    assert container_from("0::/kubepods/besteffort/pod1", False, None) == "kubernetes"
    assert container_from(None, True, None) == "docker"
    assert container_from("0::/init.scope", False, None) is None
    assert is_wsl("Linux version 5.15.146.1-microsoft-standard-WSL2", None)
    assert not is_wsl("Linux version 6.8.0-45-generic", "6.8.0-45-generic")


def test_os_falls_back_to_usr_lib_and_needs_an_id() -> None:
    f = facts(files={"/etc/os-release": None, "/usr/lib/os-release": 'ID=Fedora\nVERSION_ID=41\nNAME="Fedora Linux"\n'})
    assert f.os.value is not None and (f.os.value.id, f.os.value.pretty_name) == ("fedora", "Fedora Linux")
    assert f.os.source == "/usr/lib/os-release"
    bad = facts(files={"/etc/os-release": "NAME=x\n"}).os
    assert (bad.status, bad.error) == (Status.ERROR, "no ID= line")


def test_kernel_release_from_proc_version_and_its_config() -> None:
    f = facts(files={"/proc/version": "Linux version 6.8.0-45-generic (buildd@lcy02) #45\n",
                     "/boot/config-6.8.0-45-generic": "CONFIG_HSA_AMD=y\n"})
    assert f.kernel_release.value == "6.8.0-45-generic"
    assert f.kernel_config.value == {"CONFIG_HSA_AMD": "y"}
    assert facts().kernel_config.status is Status.UNKNOWN  # no release: cannot know which config to read


def test_wsl_from_dev_dxg_and_container_from_markers() -> None:
    f = facts(files={"/proc/version": "Linux version 6.6.0\n"}, paths={"/dev/dxg": {"exists": True}})
    assert f.wsl.value is True
    assert facts(files={"/run/.containerenv": ""}).container.value == "podman"
    # cgroup v2 shows `0::/` inside containers too: only with the runtimes' markers probed absent is it "no container"
    assert facts(files={"/proc/1/cgroup": "0::/init.scope\n"}).container.status is Status.UNKNOWN
    assert facts(files={"/proc/1/cgroup": "0::/init.scope\n", "/run/.containerenv": None},
                 paths={"/.dockerenv": None}).container.status is Status.ABSENT
    assert facts().container.status is Status.UNKNOWN


def test_env_drops_nulls_and_which_needs_a_section() -> None:
    f = facts(env={"ROCM_PATH": "/opt/rocm", "CC": None})
    assert f.env.value == {"ROCM_PATH": "/opt/rocm"}
    assert facts().which.status is Status.UNKNOWN and facts(which={"cc": None}).which.value == {"cc": None}


def test_amd_host_and_accelerator() -> None:
    assert amd_host(facts()) is None and accelerator(facts()) == "unknown"
    live = facts(files={"/sys/module/amdgpu/initstate": "live\n"})
    assert amd_host(live) is True and accelerator(live) == "amd"
    gone = facts(files={"/sys/module/amdgpu/initstate": None})
    # No amdgpu and nothing said about NVIDIA: the kind of machine is unknown, so no index may be derived from it.
    assert amd_host(gone) is False and accelerator(gone) == "unknown"
    cpu = facts(files={"/sys/module/amdgpu/initstate": None, "/proc/driver/nvidia/version": None},
                commands={"nvidia-smi": None})
    assert amd_host(cpu) is False and accelerator(cpu) == "cpu"
    nv = facts(files={"/proc/driver/nvidia/version": "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.1  x\n"},
               commands={"nvidia-smi": "NVIDIA H200, 580.1, 143771 MiB, 9.0, 00000000:19:00.0\n"})
    assert accelerator(nv) == "nvidia"
