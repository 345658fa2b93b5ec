"""facts/nvidia.py: nvidia-smi CSV and /proc/driver/nvidia/version."""

from __future__ import annotations

from rocm_triton_doctor.check.facts import Status
from rocm_triton_doctor.check.facts.nvidia import parse_nvidia_proc_version, parse_nvidia_smi_csv

from ..conftest import facts

SMI = "NVIDIA H200, 580.159.03, 143771 MiB, 9.0, 00000000:19:00.0\n"


def test_nvidia_smi_csv_and_proc_version() -> None:
    gpus = parse_nvidia_smi_csv(SMI + "\ngarbage\n")
    assert [(g.name, g.driver_version, g.compute_cap) for g in gpus] == [("NVIDIA H200", "580.159.03", "9.0")]
    assert parse_nvidia_proc_version(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.03  Thu Oct  9 2025\n") == "580.159.03"


def test_driver_from_smi_when_proc_is_missing() -> None:
    f = facts(commands={"nvidia-smi": {"argv": ["nvidia-smi"], "returncode": 0, "stdout": SMI}})
    assert f.nvidia.value is not None and f.nvidia.value.driver_version == "580.159.03" and f.nvidia_gpus_present


def test_nvidia_absent_or_unknown() -> None:
    assert facts(files={"/proc/driver/nvidia/version": None}).nvidia.status is Status.ABSENT
    assert facts(commands={"nvidia-smi": None}).nvidia.source == "nvidia-smi"
    assert facts().nvidia.status is Status.UNKNOWN
