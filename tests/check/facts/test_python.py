"""facts/python.py: the Python environment and the installed torch's build, version, bundled ROCm and index."""

from __future__ import annotations

from rocm_triton_doctor.check.facts import Distribution, Status
from rocm_triton_doctor.check.facts.python import (
    build_tag,
    norm_name,
    rocm_torch,
    torch_build,
    torch_index_url,
    torch_rocm,
    torch_version,
)

from ..conftest import facts, rocm_python


def test_torch_index_url_drops_amd_git_suffix() -> None:
    assert torch_index_url("2.9.1+rocm6.4") == "https://download.pytorch.org/whl/rocm6.4"
    # AMD's repo.radeon.com builds carry '.git<hash>' after the ROCm version; the index has no such suffix.
    assert torch_index_url("2.6.0+rocm6.4.1.git1ded221d") == "https://download.pytorch.org/whl/rocm6.4.1"
    assert torch_index_url("2.9.1+cu128") is None


def test_build_tag_and_names() -> None:
    assert build_tag("rocm6.4.1.git1ded221d") == "rocm6.4.1" and build_tag("") == "" and build_tag("cu128") == "cu128"
    assert norm_name("PyTorch_Triton.ROCm") == "pytorch-triton-rocm"


def test_distributions_are_normalised_and_hand_written_ones_accepted() -> None:
    env = facts(python={"version": "3.12.3", "distributions": {"Torch": "2.7.1+rocm6.3"},
                        "triton_owners": ["PyTorch_Triton_ROCm"]}).python.value
    assert env is not None and env.dist("torch") == Distribution("torch", "2.7.1+rocm6.3", ())
    assert env.triton_owners == ("pytorch-triton-rocm",)
    assert facts(python={"error": "no python"}).python.status is Status.ERROR


def test_pinned_ignores_extras() -> None:
    d = Distribution("torch", "2.9.1+rocm6.4", ("pytorch-triton-rocm==3.5.1", "triton; extra == 'dev'"))
    assert d.local == "rocm6.4"
    assert d.pinned({"pytorch-triton-rocm", "triton"}) == ("pytorch-triton-rocm", "==3.5.1")


def test_torch_build_from_wheel_metadata() -> None:
    assert torch_build(facts(python=rocm_python("2.9.1+rocm6.4"))) == "rocm"
    assert torch_build(facts(python=rocm_python("2.9.1+cpu"))) == "cpu"
    pypi = rocm_python("2.9.1")
    pypi["distributions"]["torch"]["requires"] = ["nvidia-cublas-cu12==12.8.4.1"]
    assert torch_build(facts(python=pypi)) == "cuda"  # PyPI's Linux torch is the CUDA build
    del pypi["distributions"]["torch"]
    assert torch_build(facts(python=pypi)) == "missing"
    assert torch_build(facts()) == "unknown"


def test_runtime_probe_wins_over_metadata() -> None:
    f = facts(python=rocm_python("2.9.1+cpu"), runtime={"torch_version": "2.9.1+rocm6.4", "hip_version": "6.4.43482"})
    assert (torch_build(f), torch_version(f), rocm_torch(f), torch_rocm(f)) == ("rocm", "2.9.1+rocm6.4", True, "6.4")
    hip_only = facts(runtime={"torch_version": "2.9.0a0", "hip_version": "7.0.51831"})
    assert torch_rocm(hip_only) == "7.0"
