"""checks/runtime.py: one test per severity each runtime check can give (torch-import, triton-import, python-choice),
from `runtime` / `python_search` sections shaped as probes/scripts/runtime_probe.py and the interpreter search write."""

from __future__ import annotations

from rocm_triton_doctor.check.findings import Severity

from ..conftest import one

VENV = {"version": "3.12.3", "executable": "/home/bob/venv/bin/python"}
IMPORT_ERR = "import torch failed: OSError: libamdhip64.so: cannot open shared object file: No such file or directory"


# -- torch-import -----------------------------------------------------------------------------------------------------

def test_torch_import_skip_without_runtime_probe() -> None:
    f = one("torch-import")
    assert f.id == "torch-import" and f.severity is Severity.SKIP and "runtime probe not run" in f.title


def test_torch_import_skip_when_torch_not_installed() -> None:
    f = one("torch-import", runtime={"torch_installed": False})
    assert f.severity is Severity.SKIP and "torch-missing" in f.title


def test_torch_import_ok() -> None:
    f = one("torch-import", runtime={"torch_imported": True, "torch_version": "2.5.1+rocm6.2"})
    assert (f.severity, f.title) == (Severity.OK, "torch 2.5.1+rocm6.2 imports")


def test_torch_import_ok_from_a_pre_18_probe_of_a_gpu_build() -> None:
    f = one("torch-import", runtime={"torch_version": "2.5.1+rocm6.2", "hip_version": "6.2.41133"})
    assert f.severity is Severity.OK


def test_torch_import_skip_cpu_torch_a_pre_18_probe_never_imported() -> None:
    # Issue #18 defect 2: such a torch must not be reported as importing.
    f = one("torch-import", runtime={"torch_version": "2.5.1+cpu"})
    assert f.severity is Severity.SKIP and "2.5.1+cpu" in f.title


def test_torch_import_fail_quotes_the_error_and_reinstalls() -> None:
    f = one("torch-import", python=VENV,
            runtime={"torch_import_failed": True, "error": IMPORT_ERR, "torch_static_version": "2.5.1+rocm6.2"})
    assert f.severity is Severity.FAIL
    assert f.title == "`import torch` fails: OSError: libamdhip64.so: cannot open shared object file: No such file or directory"
    assert "torch 2.5.1+rocm6.2 is installed in /home/bob/venv/bin/python" in f.detail
    assert f.fix is not None and f.fix.commands[0] == "/home/bob/venv/bin/python -c 'import torch'"


# -- triton-import ----------------------------------------------------------------------------------------------------

def test_triton_import_skip_without_runtime_probe() -> None:
    assert one("triton-import").severity is Severity.SKIP


def test_triton_import_skip_when_torch_did_not_import() -> None:
    f = one("triton-import", runtime={"torch_import_failed": True, "error": IMPORT_ERR})
    assert (f.severity, f.title) == (Severity.SKIP, "not tried: torch did not import")


def test_triton_import_ok_on_cpu_says_interpreter_mode() -> None:
    f = one("triton-import", runtime={"triton_imported": True, "triton_version": "3.1.0", "is_available": False})
    assert f.severity is Severity.OK and f.title.startswith("Triton 3.1.0 imports") and "TRITON_INTERPRET=1" in f.title


def test_triton_import_fail_quotes_the_error() -> None:
    err = "ImportError: libtriton.so: undefined symbol: _ZN4mlir6detail"
    f = one("triton-import", python=VENV, runtime={"triton_import_error": err})
    assert f.severity is Severity.FAIL and f.title == f"`import triton` fails: {err}"
    assert f.fix is not None and f.fix.commands == ("/home/bob/venv/bin/python -c 'import triton'",)


# -- python-choice ----------------------------------------------------------------------------------------------------

def test_python_choice_skip_when_named_with_python() -> None:
    assert one("python-choice").severity is Severity.SKIP


def test_python_choice_info_names_the_environment_chosen() -> None:
    search = {"own": "/opt/rtd/bin/python", "chosen": "/home/bob/venv/bin/python",
              "candidates": [{"python": "/home/bob/venv/bin/python", "where": "venv", "torch": "2.5.1+rocm6.2"}]}
    f = one("python-choice", python_search=search)
    assert f.severity is Severity.INFO and f.title == (
        "inspected /home/bob/venv/bin/python: the doctor's own Python (/opt/rtd/bin/python) has no torch")
    assert "torch 2.5.1+rocm6.2" in f.detail
    assert f.fix is not None and f.fix.commands == ("rocm-triton-doctor check --python /home/bob/venv/bin/python",)


def test_python_choice_warn_when_no_environment_has_torch() -> None:
    search = {"own": "/opt/rtd/bin/python", "chosen": "/opt/rtd/bin/python",
              "candidates": [{"python": "/usr/bin/python3", "where": "PATH"}]}
    f = one("python-choice", python_search=search)
    assert f.severity is Severity.WARN and "(/opt/rtd/bin/python)" in f.title
    assert "/usr/bin/python3 (PATH: no torch)" in f.detail
    assert f.fix is not None and "rocm-triton-doctor install --venv ~/rtd-venv" in f.fix.commands


def test_iommu_passthrough_skip_without_rccls_warning() -> None:
    assert one("iommu-passthrough").severity.value == "skip"


def test_iommu_passthrough_fails_on_rccls_own_warning() -> None:
    # ROCm/rccl#1129: all_reduce_perf hangs on 2x MI100; RCCL warns that iommu=pt is missing.
    err = [{"text": 'host:1:1 [0] NCCL INFO init.cc:132 NCCL WARN Missing "iommu=pt" from kernel command line which can '
                    "lead to system instablity or hang!", "from": "text"}]
    f = one("iommu-passthrough", errors=err)
    assert f.severity.value == "fail" and f.fix is not None and "iommu=pt" in f.fix.text and f.fix.needs_reboot
