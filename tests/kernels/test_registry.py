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
        # An argument may be in both only as Triton's stride-1 specialisation (aot.py marks every constexpr so).
        assert all(a.constexprs[k] == 1 for k in set(a.signature) & set(a.constexprs)), a.label


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
    # In a subprocess: this test package sets TRITON_INTERPRET=1 for the interpreter tests (conftest.py), and the
    # GPU run must not inherit it.
    import json
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.run([sys.executable, "-m", "rocm_triton_doctor", "smoke", "--device", "cuda", "--preset", "quick",
                           "--json"], capture_output=True, text=True, env=env, timeout=900)
    data = json.loads(proc.stdout)
    assert proc.returncode == data["exit_code"] == 0, [(r["kernel"], r["case"]) for r in data["results"] if r["status"] != "pass"]


_COMPILE = """
import json, sys
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from rocm_triton_doctor import kernels
from rocm_triton_doctor.kernels.policy import target_from_name
from rocm_triton_doctor.smoke.aot import AotResult, _amd_stats
out = []
for name in sys.argv[1:]:
    t = target_from_name(name)
    for spec in kernels.REGISTRY:
        if spec.bound != "memory":
            continue
        for a in spec.aot(t):
            opts = {k: v for k, v in a.options.items() if k not in a.constexprs}
            r = AotResult(a.label, name, ok=False, num_warps=int(opts.get("num_warps", 4)))
            src = ASTSource(a.fn, {**a.signature, **{c: "constexpr" for c in a.constexprs}}, constexprs=a.constexprs)
            k = triton.compile(src, target=GPUTarget("hip", t.arch, t.warp_size), options=opts)
            r.ok = True
            _amd_stats(k.asm["amdgcn"], r, t.arch)
            out.append(r.to_dict())
print("@@" + json.dumps(out))
"""


@pytest.mark.slow
def test_memory_bound_kernels_compile_spill_free_for_amd() -> None:
    # Every AOT config of the row and elementwise kernels (looped vocabulary rows, packed narrow rows, strided
    # elementwise tiles included) compiles for CDNA wave64 and RDNA wave32 with no VGPR/SGPR spills.
    import json
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    res = subprocess.run([sys.executable, "-c", _COMPILE, "gfx942", "gfx1100"], capture_output=True, text=True, env=env,
                         timeout=900)
    assert "@@" in res.stdout, res.stderr[-2000:]
    rows = json.loads(res.stdout.rsplit("@@", 1)[1])
    labels = {r["kernel"] for r in rows}
    assert {s.name for s in SPECS if s.bound == "memory"} <= {label.split(" ")[0] for label in labels}
    assert all(r["ok"] and r["spills"] == 0 and r["vgpr"] for r in rows), [r for r in rows if r["spills"]]
