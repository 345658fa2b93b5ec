"""checks/triton.py: one test per severity each check can give."""

from __future__ import annotations

from typing import Any

from rocm_triton_doctor.check.findings import Severity

from ..conftest import AMD_LIVE, NO_HIP, PTXAS, gpu, one, pasted, rocm_python

NO_AMD = {"/sys/module/amdgpu/initstate": None}
PIN = ("pytorch-triton-rocm", "3.5.1")


def pinned_torch_without_triton() -> dict[str, Any]:
    py = rocm_python("2.9.1+rocm6.4", PIN)
    del py["distributions"]["pytorch-triton-rocm"]
    py["triton_owners"] = []
    return py


def runtime(**triton: Any) -> dict[str, Any]:
    return {"torch_version": "2.9.1+rocm6.4", "hip_version": "6.4.43482", "is_available": True,
            "devices": [{"index": 0, "name": "AMD Instinct MI300X"}], "triton_version": "3.5.1",
            "triton_backend": "hip", "triton_arch": "gfx942", **triton}


def test_triton_missing_skip_without_python() -> None:
    assert one("triton-missing").title == "Python environment unknown"


def test_triton_missing_ok() -> None:
    f = one("triton-missing", python=rocm_python("2.9.1+rocm6.4", PIN))
    assert (f.severity.value, f.title) == ("ok", "Triton installed: pytorch-triton-rocm 3.5.1")


def test_triton_missing_fail_when_torch_pins_one() -> None:
    f = one("triton-missing", python=pinned_torch_without_triton())
    assert f.severity.value == "fail" and f.detail == "torch requires pytorch-triton-rocm==3.5.1."
    assert f.fix is not None and "--index-url https://download.pytorch.org/whl/rocm6.4" in f.fix.commands[0]


def test_triton_missing_warn_on_amd_without_torch() -> None:
    py = rocm_python("2.9.1+rocm6.4")
    del py["distributions"]["torch"]
    assert one("triton-missing", files=AMD_LIVE, python=py).severity.value == "warn"


def test_triton_duplicate_dists_skip_without_python() -> None:
    assert one("triton-duplicate-dists").title == "Python environment unknown"


def test_triton_duplicate_dists_ok() -> None:
    f = one("triton-duplicate-dists", python=rocm_python("2.9.1+rocm6.4", PIN))
    assert (f.severity.value, f.title) == ("ok", "one Triton distribution (pytorch-triton-rocm)")


def test_triton_duplicate_dists_fail() -> None:
    py = rocm_python("2.9.1+rocm6.4", PIN, extra={"triton": "3.5.1"})
    f = one("triton-duplicate-dists", python=py)
    assert f.severity.value == "fail" and f.title.startswith("2 Triton distributions installed")
    assert f.fix is not None and f.fix.commands[0] == "pip uninstall -y pytorch-triton-rocm triton"


def test_triton_version_pin_skip_without_a_pin() -> None:
    assert one("triton-version-pin", python=rocm_python("2.9.1+rocm6.4")).title == "torch declares no Triton requirement here"
    assert one("triton-version-pin").title == "Python environment unknown"


def test_triton_pin_mismatch_and_wrong_distribution() -> None:
    py = rocm_python("2.9.1+rocm6.4", PIN)
    py["distributions"]["pytorch-triton-rocm"]["version"] = "3.4.0"
    f = one("triton-version-pin", python=py)
    assert f.severity.value == "fail" and f.fix is not None and "pytorch-triton-rocm==3.5.1" in f.fix.text
    py = rocm_python("2.9.1+rocm6.4", PIN)
    del py["distributions"]["pytorch-triton-rocm"]
    py["distributions"]["triton"] = {"version": "3.5.1", "requires": []}
    f = one("triton-version-pin", python=py)
    assert f.severity.value == "fail" and "triton 3.5.1 is installed" in f.title


def test_triton_version_pin_ok() -> None:
    f = one("triton-version-pin", python=rocm_python("2.9.1+rocm6.4", PIN))
    assert (f.severity.value, f.title) == ("ok", "pytorch-triton-rocm 3.5.1 satisfies torch's pin ==3.5.1")


def test_triton_backend_skip_without_runtime() -> None:
    assert one("triton-backend").title == "runtime probe not run"


def test_triton_backend_fail_when_the_backend_cannot_start() -> None:
    f = one("triton-backend", files=gpu(1, 90402), runtime=runtime(triton_error="0 active drivers ([])"))
    assert (f.severity.value, f.title, f.detail) == ("fail", "Triton cannot start its GPU backend", "0 active drivers ([])")


def test_triton_backend_warn_for_another_arch() -> None:
    f = one("triton-backend", files=gpu(1, 90402), runtime=runtime(triton_arch="gfx90a"))
    assert (f.severity.value, f.title) == ("warn", "Triton targets gfx90a, but the GPU(s) are gfx942")


def test_triton_backend_ok() -> None:
    f = one("triton-backend", files=gpu(1, 90402), runtime=runtime())
    assert (f.severity.value, f.title) == ("ok", "Triton 3.5.1 backend hip, target gfx942")


def toolchain(python_h: bool, **which: str | None) -> dict[str, Any]:
    py = rocm_python("2.9.1+rocm6.4", PIN)
    py.update(python_h=python_h, include_dir="/usr/include/python3.12")
    return {"python": py, "which": which, "env": {}}


def test_triton_build_toolchain_skip_when_not_probed() -> None:
    assert one("triton-build-toolchain", python=rocm_python("2.9.1+rocm6.4")).title == "toolchain not probed"


def test_triton_build_toolchain_skip_when_no_compiler_was_looked_up() -> None:
    # A `which` without cc/gcc/clang says nothing about compilers (the property test deleted exactly those keys).
    f = one("triton-build-toolchain", files=AMD_LIVE, **toolchain(True, python3="/usr/bin/python3"))
    assert f.severity.value == "skip" and "C compiler" in f.title
    # clang looked up and absent, cc/gcc not looked up: still unknown
    f = one("triton-build-toolchain", files=AMD_LIVE, **toolchain(True, clang=None))
    assert f.severity.value == "skip"


def test_triton_build_toolchain_ok() -> None:
    f = one("triton-build-toolchain", **toolchain(True, cc="/usr/bin/cc"))
    assert (f.severity.value, f.title) == ("ok", "C compiler (/usr/bin/cc) and Python.h present")


def test_triton_build_toolchain_fail_on_a_gpu_machine() -> None:
    f = one("triton-build-toolchain", files=AMD_LIVE, **toolchain(True, cc=None, gcc=None, clang=None))
    assert (f.severity.value, f.title) == ("fail", "missing a C compiler: Triton cannot build its driver stub")
    assert f.fix is not None and f.fix.commands == ("sudo apt-get install -y gcc python3.12-dev",)


def test_triton_build_toolchain_warn_on_a_cpu_machine() -> None:
    f = one("triton-build-toolchain", files=NO_AMD, **toolchain(False, cc="/usr/bin/cc"))
    assert (f.severity.value, f.title) == ("warn", "missing Python.h: Triton cannot build its driver stub")


def test_triton_hip_linker_skip_without_the_error() -> None:
    assert one("triton-hip-linker").severity.value == "skip"


def test_triton_hip_linker_points_at_the_pip_rocms_ld_lld() -> None:
    # ROCm/ROCm#4499: a TheRock torch (ROCm in the wheel, no /opt/rocm) under torch.compile / flex_attention.
    err = [{"text": "torch._inductor.exc.InductorError: LoweringException: Exception: ROCm linker "
                    "/opt/rocm/llvm/bin/ld.lld not found. Set 'TRITON_HIP_LLD_PATH' to its path.", "from": "text"}]
    f = one("triton-hip-linker", errors=err)
    assert f.severity.value == "fail" and f.fix is not None
    assert "TRITON_HIP_LLD_PATH=$(rocm-sdk path --root)/llvm/bin/ld.lld" in f.fix.text and f.fix.commands == ()


def test_triton_vendor_error_skip_without_the_error() -> None:
    assert one("triton-vendor-error", errors=pasted(NO_HIP)).severity is Severity.SKIP

def test_triton_vendor_error_warn_when_torch_is_not_rocm() -> None:
    f = one("triton-vendor-error", errors=pasted(PTXAS), python=rocm_python("2.5.1+cu121"), files=AMD_LIVE)
    assert f.severity is Severity.WARN and f.fix is None and "ptxas" in f.title

def test_triton_vendor_error_fail_removes_pypi_triton() -> None:
    f = one("triton-vendor-error", errors=pasted(PTXAS), files=AMD_LIVE,
            python=rocm_python("2.5.1+rocm6.2", ("pytorch-triton-rocm", "3.1.0"), extra={"triton": "3.1.0"}))
    assert f.severity is Severity.FAIL and f.fix is not None
    assert f.fix.commands[0] == "pip uninstall -y triton" and "pytorch-triton-rocm" in f.fix.commands[1]

def test_triton_vendor_error_is_not_an_amd_finding_on_a_cuda_machine() -> None:
    # triton-lang/triton#8539: ptxas on a CUDA torch with no AMD GPU in sight is this machine's own backend.
    err = pasted("ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'")
    f = one("triton-vendor-error", errors=err, runtime={"torch_version": "2.10.0.dev20251024+cu130", "cuda_version": "13.0"})
    assert f.severity is Severity.SKIP


def test_triton_override_arch_skip_ok_and_fail() -> None:
    assert one("triton-override-arch", env={"PATH": "/usr/bin"}).severity is Severity.SKIP
    assert one("triton-override-arch", env={"TRITON_OVERRIDE_ARCH": "gfx1201"}).severity is Severity.SKIP  # no GPU
    ok = one("triton-override-arch", files=gpu(1, 120001), env={"TRITON_OVERRIDE_ARCH": "gfx1201"})
    assert ok.severity is Severity.OK
    # patientx/ComfyUI-Zluda#263: a launcher set gfx1200 for an RX 9070 XT (gfx1201), on Windows
    f = one("triton-override-arch", files=gpu(1, 120001), env={"TRITON_OVERRIDE_ARCH": "gfx1200"},
            system={"os_family": "windows"})
    assert f.severity is Severity.FAIL and f.title == "TRITON_OVERRIDE_ARCH=gfx1200, but the GPU runs as gfx1201"
    assert f.fix is not None and f.fix.commands == ("set TRITON_OVERRIDE_ARCH=gfx1201",)


def test_triton_override_arch_names_the_shell_only_where_the_evidence_shows_it() -> None:
    env = {"TRITON_OVERRIDE_ARCH": "gfx1200"}
    linux = one("triton-override-arch", files={**gpu(1, 120001), "/proc/sys/kernel/osrelease": "6.14.0-37-generic\n"},
                env=env)
    assert linux.fix is not None and linux.fix.commands == ("export TRITON_OVERRIDE_ARCH=gfx1201",)
    unknown = one("triton-override-arch", files=gpu(1, 120001), env=env)
    assert unknown.severity is Severity.FAIL and unknown.fix is not None and unknown.fix.commands == ()
