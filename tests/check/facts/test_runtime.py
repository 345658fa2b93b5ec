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
