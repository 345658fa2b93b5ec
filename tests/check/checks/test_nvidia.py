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


# -- cuda-driver-vs-torch (held-out round 3, 2026-11-23) ----------------------------------------------------------

def test_cuda_driver_vs_torch_skip_without_versions() -> None:
    assert one("cuda-driver-vs-torch").severity.value == "skip"


def test_cuda_driver_vs_torch_fail_on_a_driver_older_than_torchs_cuda() -> None:
    # pytorch#37320: torch 1.5 (CUDA 10.2, needs 440.33) on driver 410.104, CUDA not available.
    rt = {"torch_version": "1.5.0", "cuda_version": "10.2", "hip_version": None, "is_available": False}
    f = one("cuda-driver-vs-torch", runtime=rt, system={"nvidia_driver": "410.104"})
    assert f.severity.value == "fail" and "440.33" in f.detail and f.fix is not None and f.fix.commands == ()
    # The same versions with CUDA available (NVIDIA's forward-compatibility package): fine.
    ok_rt = {**rt, "cuda_version": "12.1", "is_available": True}
    assert one("cuda-driver-vs-torch", runtime=ok_rt, system={"nvidia_driver": "470.57"}).severity.value == "ok"


def test_cuda_driver_vs_torch_reads_torchs_own_messages() -> None:
    too_old = ("UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 11040). "
               "Please update your GPU driver")
    assert one("cuda-driver-vs-torch", errors=[{"text": too_old}]).severity.value == "fail"
    no_sm = "NVIDIA H100 PCIe with CUDA capability sm_90 is not compatible with the current PyTorch installation."
    f = one("cuda-driver-vs-torch", errors=[{"text": no_sm}])
    assert f.severity.value == "fail" and "sm_90" in f.title


def test_cuda_driver_vs_torch_names_the_first_cuda_for_the_capability() -> None:
    # LeggedLab#26: an RTX 5090 (sm_120) with a torch built up to sm_90; CUDA 12.8 (cu128) is the first with sm_120.
    msg = "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation."
    f = one("cuda-driver-vs-torch", errors=[{"text": msg, "from": "text"}])
    assert f.severity.value == "fail" and f.fix is not None and "whl/cu128" in f.fix.text and f.fix.commands == ()


# -- session 14 (the eighth held-out round) --------------------------------------------------------------------------

SM121 = ("triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error\n`ptxas` stderr:\n"
         "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'\n\nRepro command: /env/lib/python3.10/"
         "site-packages/triton/backends/nvidia/bin/ptxas -lineinfo -v --gpu-name=sm_121a /tmp/k.ptx -o /tmp/k.ptx.o\n")


def test_triton_ptxas_arch_skip_without_the_error() -> None:
    assert one("triton-ptxas-arch").severity.value == "skip"


def test_triton_ptxas_arch_fails_and_points_at_a_newer_ptxas() -> None:
    # triton-lang/triton#8539 (a DGX Spark): the wheel's bundled ptxas does not know sm_121a.
    f = one("triton-ptxas-arch", errors=[{"text": SM121, "from": "text"}])
    assert f.severity.value == "fail" and "sm_121a" in f.title and "bundled" in f.detail
    assert f.fix is not None and "TRITON_PTXAS_PATH" in f.fix.text
