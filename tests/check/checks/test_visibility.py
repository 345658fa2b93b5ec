"""checks/visibility.py: one test per severity visible-devices can give, and its three ways of failing."""

from __future__ import annotations

from rocm_triton_doctor.check.findings import Severity

from ..conftest import AMD_LIVE, gpu, one


def test_visible_devices_skip_when_env_not_recorded() -> None:
    f = one("visible-devices")
    assert f.id == "visible-devices" and f.severity is Severity.SKIP


def test_visible_devices_skip_when_env_is_an_excerpt() -> None:
    f = one("visible-devices", env={"PATH": "/usr/bin"}, partial=["env"])
    assert f.severity is Severity.SKIP and f.title == "*_VISIBLE_DEVICES unknown"


def test_visible_devices_ok_when_none_set() -> None:
    f = one("visible-devices", env={"PATH": "/usr/bin"})
    assert f.severity is Severity.OK and "every GPU is visible" in f.title


def test_visible_devices_info_names_the_selection() -> None:
    f = one("visible-devices", env={"ROCR_VISIBLE_DEVICES": "0"})
    assert f.severity is Severity.INFO and f.title == "GPU selection: ROCR_VISIBLE_DEVICES='0'" and f.fix is None


def test_visible_devices_fail_minus_one_hides_every_gpu() -> None:
    f = one("visible-devices", env={"HIP_VISIBLE_DEVICES": "-1"})
    assert f.severity is Severity.FAIL and f.title == "HIP_VISIBLE_DEVICES='-1' hides every GPU"
    assert f.fix is not None and f.fix.commands == ("unset HIP_VISIBLE_DEVICES",)


def test_visible_devices_fail_hip_index_counts_among_rocr_gpus() -> None:
    # pytorch#140398: ROCR=0 HIP=0,1 asks HIP for a second GPU that ROCr hid.
    f = one("visible-devices", env={"ROCR_VISIBLE_DEVICES": "0", "HIP_VISIBLE_DEVICES": "0,1"})
    assert f.severity is Severity.FAIL and f.title.startswith("HIP_VISIBLE_DEVICES asks for GPU 1")
    assert f.fix is not None and f.fix.commands == ("unset HIP_VISIBLE_DEVICES", "export ROCR_VISIBLE_DEVICES=0")


def test_visible_devices_warn_both_set_but_consistent() -> None:
    f = one("visible-devices", env={"ROCR_VISIBLE_DEVICES": "0,1", "CUDA_VISIBLE_DEVICES": "1"})
    assert f.severity is Severity.WARN and f.title == "both ROCR_VISIBLE_DEVICES and CUDA_VISIBLE_DEVICES are set"
    assert f.fix is not None and f.fix.commands == ("unset CUDA_VISIBLE_DEVICES",)


def test_visible_devices_fail_rocr_index_beyond_kfd_gpus() -> None:
    f = one("visible-devices", env={"ROCR_VISIBLE_DEVICES": "2"}, files={**AMD_LIVE, **gpu(1, 110000)})
    assert f.severity is Severity.FAIL and f.title == "ROCR_VISIBLE_DEVICES names GPU 2, but KFD has 1 GPU(s)"
    assert f.fix is not None and f.fix.commands == ("unset ROCR_VISIBLE_DEVICES",)


def test_visible_devices_ray_refuses_cuda_visible_devices_alone() -> None:
    # ray-project/ray#52701: Ray 2.45 on ROCm asserts HIP_VISIBLE_DEVICES and CUDA_VISIBLE_DEVICES agree.
    err = [{"text": "AssertionError: Inconsistant values found. Please use either HIP_VISIBLE_DEVICES or "
                    "CUDA_VISIBLE_DEVICES.", "from": "text"}]
    f = one("visible-devices", errors=err, env={"CUDA_VISIBLE_DEVICES": "1"})
    assert f.severity.value == "fail" and f.fix is not None
    assert f.fix.commands == ("unset CUDA_VISIBLE_DEVICES", "export HIP_VISIBLE_DEVICES=1")


def test_visible_devices_warn_when_hip_and_cuda_lists_disagree() -> None:
    # Jeffser/Alpaca#1091: the app's ollama ran with HIP_VISIBLE_DEVICES=1 and CUDA_VISIBLE_DEVICES=0 on a one-GPU
    # machine; HIP takes the first, CUDA-minded tools the second.
    f = one("visible-devices", env={"HIP_VISIBLE_DEVICES": "1", "CUDA_VISIBLE_DEVICES": "0"})
    assert f.severity is Severity.WARN and f.title == "HIP_VISIBLE_DEVICES='1' and CUDA_VISIBLE_DEVICES='0' select different GPUs"
    assert f.fix is not None and f.fix.commands == ("unset CUDA_VISIBLE_DEVICES",)
    same = one("visible-devices", env={"HIP_VISIBLE_DEVICES": "0,1", "CUDA_VISIBLE_DEVICES": "0,1"})
    assert same.severity is Severity.INFO  # one selection, written twice


def test_visible_devices_warns_when_torch_sees_more_gpus_than_the_variables_let_through() -> None:
    # ray#46563: a Ray actor printing its environment and torch's count (behind Ray's `(GPUActor pid=N) ` prefix).
    from rocm_triton_doctor.check.sources import diagnose_text

    text = ("(GPUActor pid=3134225) GPU IDs: ['0']\n(GPUActor pid=3134225) ROCR_VISIBLE_DEVICES: 0,1\n"
            "(GPUActor pid=3134225) Number of GPUs: 4")
    found = [f for f in diagnose_text([text]).findings if f.id == "visible-devices"]
    warn = [f for f in found if f.severity.value == "warn"]
    assert len(warn) == 1 and warn[0].title == "torch sees 4 GPUs although ROCR_VISIBLE_DEVICES='0,1' lets 2 through"
    assert warn[0].fix is not None and not warn[0].fix.commands
    # as many GPUs as the list allows, or a variable printed as None (unset): nothing to say
    for ok_text in (text.replace("Number of GPUs: 4", "Number of GPUs: 2"),
                    text.replace("ROCR_VISIBLE_DEVICES: 0,1", "ROCR_VISIBLE_DEVICES: None")):
        assert not [f for f in diagnose_text([ok_text]).findings if f.id == "visible-devices" and f.severity.value == "warn"]


def test_visible_devices_fail_when_a_selection_is_set_and_the_runtime_found_no_gpu() -> None:
    # flux-core#7807: a one-GPU job's cgroup numbers its GPU 0, the launcher set CUDA_VISIBLE_DEVICES=7 (the node's id)
    from ..conftest import pasted

    err = pasted("HIP ERROR: hipGetDeviceCount(&ndev) -> 100 (no ROCm-capable device is detected)")
    f = one("visible-devices", env={"CUDA_VISIBLE_DEVICES": "7"}, partial=["env"], errors=err)
    assert f.severity is Severity.FAIL and f.fix is not None and "CUDA_VISIBLE_DEVICES" in f.fix.text
    assert not f.fix.commands  # how many GPUs the job sees is not in the evidence
    assert one("visible-devices", env={"CUDA_VISIBLE_DEVICES": "7"}, partial=["env"]).severity is Severity.INFO
