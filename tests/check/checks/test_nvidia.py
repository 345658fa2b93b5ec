"""checks/nvidia.py: one test per severity the check can give."""

from __future__ import annotations

from ..conftest import one

PROC = {"/proc/driver/nvidia/version": "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.03  Thu Oct  9 2025\n"}
SMI = "NVIDIA H200, 580.159.03, 143771 MiB, 9.0, 00000000:19:00.0\n"


def test_nvidia_driver_skip_without_nvidia() -> None:
    assert one("nvidia-driver").title == "no NVIDIA GPU"


def test_nvidia_driver_warn_when_smi_lists_no_gpu() -> None:
    f = one("nvidia-driver", files=PROC, commands={"nvidia-smi": {"argv": ["nvidia-smi"], "returncode": 9}})
    assert (f.severity.value, f.title) == ("warn", "NVIDIA driver 580.159.03 loaded but nvidia-smi lists no GPU")


def test_nvidia_driver_info() -> None:
    f = one("nvidia-driver", files=PROC, commands={"nvidia-smi": {"argv": ["nvidia-smi"], "returncode": 0, "stdout": SMI}})
    assert (f.severity.value, f.title) == ("info", "NVIDIA driver 580.159.03: 1 GPU(s)")
