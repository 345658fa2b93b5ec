"""facts/runtime.py: what the runtime probe saw of torch and Triton."""

from __future__ import annotations

from rocm_triton_doctor.check.facts import Status

from ..conftest import facts


def test_runtime_devices_and_build() -> None:
    r = facts(runtime={"torch_version": "2.9.1+rocm6.4", "hip_version": "6.4.43482", "is_available": True,
                       "arch_list": ["gfx942"], "devices": [{"name": "MI300X", "gcnArchName": "gfx942:sramecc+",
                                                             "capability": [9, 4], "total_memory": 1}]}).runtime.value
    assert r is not None and r.build == "rocm" and r.arch_list == ("gfx942",)
    assert (r.devices[0].index, r.devices[0].gcn_arch, r.devices[0].capability) == (0, "gfx942:sramecc+", (9, 4))
    assert facts(runtime={"torch_version": "2.9.1", "cuda_version": "12.8"}).runtime.value.build == "cuda"  # type: ignore[union-attr]
    assert facts(runtime={"torch_version": "2.9.1+cpu"}).runtime.value.build == "cpu"  # type: ignore[union-attr]


def test_runtime_errors_keep_what_was_seen() -> None:
    hung = facts(runtime={"timed_out": True}).runtime
    assert (hung.status, hung.error) == (Status.ERROR, "timed out") and hung.value is not None
    broken = facts(runtime={"error": "ImportError: libamdhip64.so"}).runtime
    assert (broken.status, broken.error) == (Status.ERROR, "ImportError: libamdhip64.so")
    missing = facts(runtime={"error": "No module named 'torch'", "torch_import_failed": True}).runtime
    assert missing.found and missing.value is not None and missing.value.build == "unknown"
    assert facts(runtime=[]).runtime.status is Status.ERROR
    assert facts().runtime.status is Status.UNKNOWN


def test_a_probe_killed_by_a_signal_says_which() -> None:
    from rocm_triton_doctor.check.facts.runtime import died_how

    said = died_how({"error": "probe exited with code -11: no output", "returncode": -11})
    assert said is not None and "killed by SIGSEGV" in said and "code -11" not in said
    assert died_how({"error": "probe exited with code 1: ImportError: libamdhip64.so"}) == \
        "probe exited with code 1: ImportError: libamdhip64.so"


def test_a_pasted_torch_version_alone_does_not_make_a_cpu_build() -> None:
    # `torch.__version__` without torch.version.hip/cuda: unknown build unless the version's tag says it
    assert facts(runtime={"torch_version": "2.4.0a0+git1234"}).runtime.value.build == "unknown"
    assert facts(runtime={"torch_version": "2.4.1+rocm6.1"}).runtime.value.build == "rocm"
    assert facts(runtime={"torch_version": "2.4.0", "hip_version": None, "cuda_version": None}).runtime.value.build == "cpu"
