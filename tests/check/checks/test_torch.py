"""checks/torch.py: one test per severity each check can give."""

from __future__ import annotations

from typing import Any

from ..conftest import AMD_LIVE, gpu, one, rocm_python

NO_AMD = {"/sys/module/amdgpu/initstate": None}  # amdgpu probed and absent: not an AMD machine
NVIDIA_SMI = {"nvidia-smi": {"argv": ["nvidia-smi"], "returncode": 0,
                             "stdout": "NVIDIA H200, 580.159.03, 143771 MiB, 9.0, 00000000:19:00.0\n"}}
MI300X = "AMD Instinct MI300X"


def no_torch() -> dict[str, Any]:
    py = rocm_python("2.9.1+rocm6.4")
    del py["distributions"]["torch"]
    return py


def runtime(available: bool, *names: str) -> dict[str, Any]:
    return {"torch_version": "2.9.1+rocm6.4", "hip_version": "6.4.43482", "is_available": available,
            "devices": [{"index": i, "name": n, "gcnArchName": "gfx942:sramecc+:xnack-"} for i, n in enumerate(names)]}


def test_torch_missing_skip_without_python() -> None:
    assert one("torch-missing").title == "whether torch is installed is unknown"


def test_torch_missing_skip_with_a_partial_package_list() -> None:
    snap_python = {**no_torch()}
    f = one("torch-missing", files=AMD_LIVE, python=snap_python, partial=["python.distributions"])
    assert f.severity.value == "skip" and "pip list" in f.detail


def test_torch_missing_ok() -> None:
    assert one("torch-missing", python=rocm_python("2.9.1+rocm6.4")).title == "torch 2.9.1+rocm6.4 installed"


def test_torch_missing_fail_on_a_gpu_machine() -> None:
    f = one("torch-missing", files={**AMD_LIVE, **gpu(1, 110000)}, python=no_torch())
    assert f.severity.value == "fail" and f.fix is not None and "--index-url" in f.fix.commands[0]


def test_torch_missing_names_no_index_while_the_gpu_is_unknown() -> None:
    f = one("torch-missing", files=AMD_LIVE, python=no_torch())  # AMD, but which gfx (and so which index) is unknown
    assert f.severity.value == "fail" and f.fix is not None and not f.fix.commands and "rocminfo" in f.fix.text


def test_torch_missing_warn_on_a_cpu_machine() -> None:
    f = one("torch-missing", files=NO_AMD, commands={"nvidia-smi": None}, python=no_torch())
    assert f.severity.value == "warn" and f.fix is not None and f.fix.commands[0].endswith("/whl/cpu")


def test_torch_build_mismatch_skip_when_torch_unknown() -> None:
    assert one("torch-build-mismatch").title == "torch build unknown"


def test_torch_build_mismatch_info_gpu_build_on_cpu_machine() -> None:
    f = one("torch-build-mismatch", files=NO_AMD, commands={"nvidia-smi": None}, python=rocm_python("2.9.1+rocm6.4"))
    assert (f.severity.value, f.title) == ("info", "torch 2.9.1+rocm6.4 is a ROCM build on a machine without that GPU")


def test_torch_build_mismatch_ok() -> None:
    f = one("torch-build-mismatch", files=AMD_LIVE, python=rocm_python("2.9.1+rocm6.4"))
    assert (f.severity.value, f.title) == ("ok", "torch 2.9.1+rocm6.4 is a ROCm build, matching this AMD machine")


def test_torch_build_mismatch_fail_cuda_torch_on_amd() -> None:
    f = one("torch-build-mismatch", files=AMD_LIVE, python=rocm_python("2.9.1+cu128"))
    assert (f.severity.value, f.title) == ("fail", "torch 2.9.1+cu128 is a CUDA build on an AMD GPU machine")


def test_torch_build_mismatch_fail_cpu_torch_on_nvidia() -> None:
    f = one("torch-build-mismatch", commands=NVIDIA_SMI, python=rocm_python("2.9.1+cpu"))
    assert (f.severity.value, f.title) == ("fail", "torch 2.9.1+cpu is a CPU-only build on an NVIDIA GPU machine")


def test_torch_sees_gpu_skip_without_runtime_probe() -> None:
    assert one("torch-sees-gpu").title.startswith("runtime probe not run")


def test_torch_sees_gpu_fail_when_rocm_torch_sees_nothing() -> None:
    f = one("torch-sees-gpu", files={**AMD_LIVE, **gpu(1, 90402)}, runtime=runtime(False))
    assert (f.severity.value, f.title) == ("fail", "torch 2.9.1+rocm6.4 does not see any GPU")


def test_torch_sees_gpu_ok() -> None:
    f = one("torch-sees-gpu", files=gpu(1, 90402), runtime=runtime(True, MI300X))
    assert (f.severity.value, f.title) == ("ok", "torch sees 1 GPU(s): 0: AMD Instinct MI300X (gfx942:sramecc+:xnack-)")


def test_torch_sees_gpu_warn_when_a_gpu_is_missing() -> None:
    f = one("torch-sees-gpu", files={**gpu(1, 90402), **gpu(2, 90402)}, env={}, runtime=runtime(True, MI300X))
    assert (f.severity.value, f.title) == ("warn", "torch sees 1 of 2 GPUs")


def test_torch_family_mismatch_skip_without_python() -> None:
    assert one("torch-family-mismatch").title == "Python environment unknown"


def test_torch_family_mismatch_detects_pypi_torchvision() -> None:
    py = rocm_python("2.7.1+rocm6.3", extra={"torchvision": "0.22.1"})
    assert one("torch-family-mismatch", python=py).severity.value == "fail"
    py = rocm_python("2.6.0+rocm6.4.1.git1ded221d", extra={"torchvision": "0.21.0+rocm6.4.1.git4040d51f"})
    assert one("torch-family-mismatch", python=py).severity.value == "ok"


def test_nvml_with_rocm_torch_skip_without_python() -> None:
    assert one("nvml-with-rocm-torch").title == "Python environment unknown"


def test_nvml_with_rocm_torch_ok() -> None:
    assert one("nvml-with-rocm-torch", python=rocm_python("2.9.1+rocm6.4")).severity.value == "ok"


def test_nvml_with_rocm_torch_warn() -> None:
    f = one("nvml-with-rocm-torch", python=rocm_python("2.9.1+rocm6.4", extra={"pynvml": "12.0.0"}))
    assert (f.severity.value, f.title) == ("warn", "pynvml installed next to a ROCm torch")


def test_torch_family_mismatch_leaves_an_untagged_nightly_alone() -> None:
    # triton-lang/triton#8539: torchvision 0.25.0.dev20251025 (no build tag) beside torch 2.10.0.dev20251024+cu130.
    py = rocm_python("2.10.0.dev20251024+cu130", extra={"torchvision": "0.25.0.dev20251025"})
    assert one("torch-family-mismatch", python=py).severity.value == "ok"
    # a tagged nightly of another build still fails, in words (its nightly index is not known here)
    py = rocm_python("2.10.0.dev20251024+cu130", extra={"torchvision": "0.25.0.dev20251025+cpu"})
    f = one("torch-family-mismatch", python=py)
    assert f.severity.value == "fail" and f.fix is not None and f.fix.commands == () and "nightly" in f.fix.text


def test_torchvision_ops_error_skip_without_the_message() -> None:
    assert one("torchvision-ops-error").severity.value == "skip"


def test_torchvision_ops_error_reinstalls_from_torchs_index() -> None:
    # utensils/comfyui-nix#46: ComfyUI dies on `operator torchvision::nms does not exist` beside torch 2.10.0+rocm7.1.
    err = [{"text": "RuntimeError: operator torchvision::nms does not exist", "from": "text"}]
    f = one("torchvision-ops-error", errors=err, runtime={"torch_version": "2.10.0+rocm7.1"})
    assert f.severity.value == "fail" and f.fix is not None
    assert f.fix.commands and "torch==2.10.0+rocm7.1 torchvision" in f.fix.commands[0] and "whl/rocm7.1" in f.fix.commands[0]
    bare = one("torchvision-ops-error", errors=err)  # torch's version unknown: the advice in words
    assert bare.fix is not None and bare.fix.commands == ()


def test_torch_family_mismatch_pypi_torchvision_is_the_pair_of_a_cuda_torch() -> None:
    # invoke-ai/InvokeAI#7520: torch 2.4.1+cu121 beside PyPI's torchvision 0.19.1 (a CUDA build itself on Linux).
    py = rocm_python("2.4.1+cu121", extra={"torchvision": "0.19.1"})
    assert one("torch-family-mismatch", python=py).severity.value == "ok"


def test_torch_build_mismatch_on_windows_nvidia_names_the_cuda_index_without_a_pypi_command() -> None:
    # Eddycrack864/UVR5-UI#31: torch 2.4.1+cpu beside nvidia-smi's table on Windows, where PyPI's torch is the CPU
    # build: `pip install --force-reinstall torch` would install the same CPU build again.
    smi = {"nvidia_driver": "566.14", "nvidia_smi_table": True}
    f = one("torch-build-mismatch", python=rocm_python("2.4.1+cpu"), system={"os_family": "windows", **smi})
    assert f.severity.value == "fail" and f.fix is not None and f.fix.commands == ()
    assert "https://download.pytorch.org/whl/cu" in f.fix.text
    linux = one("torch-build-mismatch", python=rocm_python("2.4.1+cpu"), system=smi,
                files={"/proc/sys/kernel/osrelease": "6.8.0-50-generic\n"})
    assert linux.fix is not None and linux.fix.commands and "torch" in linux.fix.commands[0]
    unknown = one("torch-build-mismatch", python=rocm_python("2.4.1+cpu"), system=smi)  # OS not shown: words
    assert unknown.fix is not None and unknown.fix.commands == () and "on Windows" in unknown.fix.text
    # a driver version alone (collect_env on an MI60 whose NVIDIA driver package stayed, vllm#9319) is no NVIDIA GPU
    assert one("torch-build-mismatch", python=rocm_python("2.4.1+cpu"),
               system={"nvidia_driver": "550.90.07"}).severity.value != "fail"


# -- torch-configured-index (stable-diffusion-webui#15542: torch 2.2.2+cu121 under a ROCm TORCH_COMMAND) ---------------

ROCM_CMD = "pip install torch torchvision --index-url https://download.pytorch.org/whl/nightly/rocm5.7"


def test_torch_configured_index_fails_when_torch_says_it_has_no_gpu() -> None:
    f = one("torch-configured-index", python=rocm_python("2.2.2+cu121"), env={"TORCH_COMMAND": ROCM_CMD},
            runtime={"torch_version": "2.2.2+cu121", "cuda_version": "12.1", "hip_version": None, "is_available": False,
                     "devices": []})
    assert f.severity.value == "fail" and "TORCH_COMMAND" in f.title
    assert f.fix is not None and not f.fix.commands  # no GPU shown: the user's own index, in words
    assert "--index-url https://download.pytorch.org/whl/nightly/rocm5.7" in f.fix.text


def test_torch_configured_index_warns_without_the_runtime_and_skips_otherwise() -> None:
    env = {"PIP_INDEX_URL": "https://download.pytorch.org/whl/rocm6.4"}
    assert one("torch-configured-index", python=rocm_python("2.7.0+cpu"), env=env).severity.value == "warn"
    assert one("torch-configured-index", python=rocm_python("2.7.0+rocm6.4"), env=env).severity.value == "skip"
    assert one("torch-configured-index", python=rocm_python("2.7.0+cu126"),
               env={"PIP_INDEX_URL": "https://download.pytorch.org/whl/cu126"}).severity.value == "skip"
    # an AMD GPU shown: torch-build-mismatch gives the command
    assert one("torch-configured-index", python=rocm_python("2.7.0+cu126"), env=env,
               files=gpu(1, 110000)).severity.value == "skip"

