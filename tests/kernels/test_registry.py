"""The kernel registry: every KernelSpec is named after its module, covers fp16/bf16/fp32 in the interpreter, and
describes its AOT configs as AotSpecs; the performance targets it names exist."""

from __future__ import annotations

import pytest
import torch

from rocm_triton_doctor import kernels
from rocm_triton_doctor.kernels.base import AotSpec, KernelSpec
from rocm_triton_doctor.kernels.policy import target_from_name
from rocm_triton_doctor.smoke import targets
from tests.kernels.helpers import interpreter_cases

SPECS = kernels.REGISTRY


@pytest.mark.parametrize("spec", SPECS, ids=kernels.NAMES)
def test_spec_name_is_its_module_and_its_cases_name(spec: KernelSpec) -> None:
    module = next(m for m in vars(kernels).values() if getattr(m, "KERNEL", None) is spec)
    assert module.__name__.rsplit(".", 1)[1] == spec.name
    assert spec.bound in ("memory", "compute")
    assert {c.kernel for c in interpreter_cases(spec)} == {spec.name}


@pytest.mark.parametrize("spec", SPECS, ids=kernels.NAMES)
def test_every_kernel_and_dtype_is_covered_on_cpu(spec: KernelSpec) -> None:
    covered = {c.dtype for c in interpreter_cases(spec)}
    for dt in (torch.float16, torch.bfloat16, torch.float32):
        assert dt in covered, f"{spec.name} has no interpreter case for {dt}"


@pytest.mark.parametrize("target", ["gfx942", "gfx1100", "sm_90"])
@pytest.mark.parametrize("spec", SPECS, ids=kernels.NAMES)
def test_aot_returns_aot_specs_labelled_with_the_kernel_name(spec: KernelSpec, target: str) -> None:
    specs = spec.aot(target_from_name(target))
    assert specs and all(isinstance(a, AotSpec) for a in specs)
    for a in specs:
        assert a.label.startswith(spec.name + " "), a.label
        assert callable(getattr(a.fn, "run", None))  # a @triton.jit function
        assert not set(a.signature) & set(a.constexprs)


def test_registry_names_are_unique_and_lookup_works() -> None:
    assert len(set(kernels.NAMES)) == len(kernels.NAMES)
    for spec in SPECS:
        assert kernels.spec_named(spec.name) is spec
    assert kernels.spec_named("broken") is None


def test_perf_targets_named_by_specs_exist() -> None:
    ids = {t.id for t in targets.TARGETS}
    for spec in SPECS:
        assert set(spec.perf_targets) <= ids, spec.name
    # Every target covers some kernel, and the memory targets only memory-bound ones.
    for t in targets.TARGETS:
        assert any(t.id in s.perf_targets for s in SPECS), t.id
    assert all(s.bound == "memory" for s in SPECS if "mem-copy" in s.perf_targets)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_gpu_quick_preset() -> None:  # pragma: no cover - runs on the lent GPU, not in CI
    from rocm_triton_doctor.smoke.runner import run_smoke

    report = run_smoke("cuda", "quick")
    assert report.exit_code == 0, [r.id for r in report.results if r.status != "pass"]
