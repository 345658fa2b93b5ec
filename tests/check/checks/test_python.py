"""checks/python.py: one test per severity each check can give."""

from __future__ import annotations

from rocm_triton_doctor.check.findings import Severity

from ..conftest import AMD_LIVE, NO_HIP, PIP, gpu, one, pasted, rocm_python


def test_python_version_wheels_skip_without_python() -> None:
    assert one("python-version-wheels").title == "Python environment unknown"


def test_python_version_wheels_ok() -> None:
    f = one("python-version-wheels", files=AMD_LIVE, python=rocm_python("2.9.1+rocm6.4", version="3.12.3"))
    assert f.severity.value == "ok" and f.title.startswith("Python 3.12.3 has ROCm wheels up to torch ")


def test_python_version_wheels_fail_without_any_wheel() -> None:
    f = one("python-version-wheels", files=AMD_LIVE, python={"version": "3.7.17", "distributions": {}})
    assert (f.severity.value, f.title) == ("fail", "no ROCm torch wheel for Python 3.7.17")
    assert f.fix is not None and f.fix.commands[0].startswith("python3.12 -m venv")


def test_python_version_wheels_warn_for_an_old_python() -> None:
    f = one("python-version-wheels", files=AMD_LIVE, python={"version": "3.9.18", "distributions": {}})
    assert (f.severity.value, f.title) == ("warn", "Python 3.9.18 limits you to torch 2.8.0 on ROCm")


def test_python_version_wheels_info_beside_an_installed_rocm_torch() -> None:
    # A working ROCm torch in an old Python: the version limits upgrades only, nothing to fix now.
    f = one("python-version-wheels", files=AMD_LIVE, python=rocm_python("2.8.0+rocm6.4", version="3.9.18"))
    assert f.severity.value == "info" and f.fix is None


def test_python_version_wheels_skip_without_a_version() -> None:
    f = one("python-version-wheels", files=AMD_LIVE, python={"distributions": {}})
    assert f.severity.value == "skip" and "python --version" in f.detail


ROCM_IDX = "https://download.pytorch.org/whl/rocm6.2"
PYPI_IDX = "https://pypi.org/simple"


def _pip_log(wheel: str, *indexes: str) -> dict[str, object]:
    return {"version": "3.12.3", "executable": "/home/bob/venv/bin/python", "pip_indexes": list(indexes),
            "pip_downloads": [wheel]}


def test_pip_index_order_skip_without_a_pip_log() -> None:
    f = one("pip-index-order", python={"version": "3.12.3"})
    assert f.id == "pip-index-order" and (f.severity.value, f.title) == ("skip", "no pip install log for torch in the evidence")


def test_pip_index_order_skip_when_only_the_rocm_index_was_searched() -> None:
    f = one("pip-index-order", python=_pip_log("torch-2.5.1+rocm6.2-cp312-cp312-linux_x86_64.whl", ROCM_IDX))
    assert (f.severity.value, f.title) == ("skip", f"pip searched {ROCM_IDX} only")


def test_pip_index_order_skip_when_pip_chose_the_rocm_wheel() -> None:
    f = one("pip-index-order", python=_pip_log("torch-2.5.1+rocm6.2-cp312-cp312-linux_x86_64.whl", PYPI_IDX, ROCM_IDX))
    assert f.severity.value == "skip" and "2.5.1+rocm6.2" in f.title


def test_pip_index_order_fail_pypi_torch_won() -> None:
    # ComfyUI-Installer#15: --extra-index-url for ROCm beside PyPI; PyPI's newer CUDA torch wins.
    f = one("pip-index-order", python=_pip_log("torch-2.6.0-cp312-cp312-manylinux_2_28_x86_64.whl", PYPI_IDX, ROCM_IDX))
    assert f.severity.value == "fail" and f.title == f"pip took torch 2.6.0 from PyPI although a ROCm index ({ROCM_IDX}) was given"
    assert f.fix is not None and f.fix.commands == (
        f"/home/bob/venv/bin/python -m pip install --force-reinstall torch torchvision torchaudio --index-url {ROCM_IDX}",)


def _kept(version: str, *indexes: str) -> dict[str, object]:
    return {"version": "3.13.5", "executable": "/home/z/venv/bin/python", "pip_indexes": list(indexes),
            "pip_kept": {"torch": version}}


def test_pip_kept_non_rocm_torch_skip_without_a_kept_torch() -> None:
    assert one("pip-kept-non-rocm-torch", python={"version": "3.12.3"}).severity.value == "skip"
    assert one("pip-kept-non-rocm-torch", python=_kept("2.7.1", PYPI_IDX)).severity.value == "skip"  # no ROCm index


def test_pip_kept_non_rocm_torch_ok_for_a_rocm_build() -> None:
    assert one("pip-kept-non-rocm-torch", python=_kept("2.7.1+rocm6.3", ROCM_IDX)).severity.value == "ok"


def test_pip_kept_non_rocm_torch_fail_reinstalls_from_the_users_own_index() -> None:
    # ComfyUI#8638: `pip install torch … --index-url …/rocm6.3` answered "already satisfied … (2.7.1)".
    f = one("pip-kept-non-rocm-torch", python=_kept("2.7.1", ROCM_IDX))
    assert f.severity.value == "fail" and "2.7.1" in f.title and f.fix is not None
    assert f.fix.commands == ("/home/z/venv/bin/python -m pip uninstall -y torch torchvision torchaudio",
                              f"/home/z/venv/bin/python -m pip install torch torchvision torchaudio --index-url {ROCM_IDX}")


FAMILY_IDX = "https://rocm.nightlies.amd.com/v2/gfx110X-all/"


def test_pip_retired_index_skip_without_a_per_family_index() -> None:
    assert one("pip-retired-index", python={"install_indexes": [ROCM_IDX]}).severity.value == "skip"


def test_pip_retired_index_warn_names_the_multi_arch_index_in_words_without_a_gpu() -> None:
    # TheRock#5954: the steps to reproduce install from the frozen per-family index; the GPU's target is not shown.
    f = one("pip-retired-index", python={"install_indexes": [FAMILY_IDX]})
    assert f.severity.value == "warn" and "gfx110X-all" in f.title
    assert f.fix is not None and f.fix.commands == () and "whl-multi-arch" in f.fix.text


def test_pip_retired_index_warn_names_the_device_extra_for_a_known_gpu() -> None:
    f = one("pip-retired-index", files={**AMD_LIVE, **gpu(1, 110000)}, python={"version": "3.12.3", "pip_indexes": [FAMILY_IDX]})
    assert f.fix is not None and f.fix.commands == ()
    assert "https://rocm.nightlies.amd.com/whl-multi-arch/" in f.fix.text and "torch[device-gfx1100]" in f.fix.text


def test_pip_retired_index_fails_when_its_libraries_are_for_another_target() -> None:
    # TheRock#3046: the gfx1150 index's torch pulled rocm-sdk-libraries-gfx1151 onto an 890M (gfx1150)
    idx = "https://rocm.nightlies.amd.com/v2-staging/gfx1150"
    apu = [{"tool": "text", "name": "Radeon 890M"}]
    f = one("pip-retired-index", python={"install_indexes": [idx], "sdk_library_targets": ["gfx1151"]}, gpus_seen=apu)
    assert f.severity.value == "fail" and "gfx1151" in f.title and "torch[device-gfx1150]" in f.fix.text  # type: ignore[union-attr]
    # a family package that carries the GPU's target is not another target's
    fam = {"install_indexes": [FAMILY_IDX], "sdk_library_targets": ["gfx110X-all"]}
    assert one("pip-retired-index", python=fam, files={**AMD_LIVE, **gpu(1, 110000)}).severity.value == "warn"
    from rocm_triton_doctor.check.checks.python import _covers

    assert _covers("gfx110X-all", "gfx1103") and _covers("gfx94X-dcgpu", "gfx942") and _covers("gfx1151", "gfx1151")
    assert not _covers("gfx1151", "gfx1150") and not _covers("gfx110X-all", "gfx1150") and not _covers("gfx120X-all", "gfx12")


def test_pip_retired_index_info_when_that_torch_works() -> None:
    # legacy-rocm-build#4846: installed from the per-family index while it was live; ComfyUI runs on the GPU.
    f = one("pip-retired-index", python={"install_indexes": [FAMILY_IDX]},
            runtime={"torch_version": "2.10.0a0+rocm7.11.0a20251205", "is_available": True})
    assert f.severity.value == "info" and f.fix is None


PULLED = {"pip_pulled_by": {"torch": "torchaudio"},
          "pip_downloads": ["torchaudio-2.4.0-cp310-cp310-manylinux1_x86_64.whl", "torch-2.4.0-cp310-cp310-manylinux1_x86_64.whl"]}


def test_pip_pulls_pypi_torch_skip_without_such_a_log_or_off_rocm() -> None:
    assert one("pip-pulls-pypi-torch", python={"version": "3.10"}).severity.value == "skip"
    # nothing shows a ROCm stack: PyPI's torch may be exactly what this machine needs
    assert one("pip-pulls-pypi-torch", python=PULLED).severity.value == "skip"


def test_pip_pulls_pypi_torch_fail_in_a_rocm_image() -> None:
    # ROCm/pytorch#1533: `pip install torchaudio` inside rocm/pytorch pulled torch 2.4.0 from PyPI.
    f = one("pip-pulls-pypi-torch", python=PULLED,
            container_run=[{"runtime": "docker", "devices": [], "image": "rocm/pytorch:rocm6.2_ubuntu22.04_py3.10"}])
    assert f.severity.value == "fail" and "torchaudio" in f.title
    assert f.fix is not None and f.fix.commands == () and "--no-deps" in f.fix.text


def test_pip_retired_index_fails_when_pip_found_nothing_there() -> None:
    # patientx-cfz/comfyui-rocm#59: `rocm[devel,libraries] (from versions: none)` from the frozen gfx120X index.
    idx = "https://rocm.nightlies.amd.com/v2-staging/gfx120X-dgpu/"
    err = ("ERROR: Could not find a version that satisfies the requirement rocm[devel,libraries] (from versions: none)\n"
           "ERROR: No matching distribution found for rocm[devel,libraries]\n")
    f = one("pip-retired-index", python={"pip_indexes": [idx]}, errors=[{"text": err, "from": "text"}])
    assert f.severity.value == "fail" and "nothing to install" in f.title
    assert f.fix is not None and "gfx120X" in f.fix.text and f.fix.commands == ()


def test_installer_cpu_fallback_skip_without_such_a_log() -> None:
    assert one("installer-cpu-fallback").severity.value == "skip"


def test_installer_cpu_fallback_names_rocm_on_linux_and_the_hip_sdk_on_windows() -> None:
    # unsloth#8731 (Linux) and Stable-Diffusion-Info#45 (Windows, ZLUDA launcher).
    linux = [{"text": "[WARN] AMD GPU detected, but no ROCm/HIP install was found to select the matching\n"
                      "       GPU PyTorch build -- falling back to CPU-only PyTorch.", "from": "text"}]
    f = one("installer-cpu-fallback", errors=linux)
    assert f.severity.value == "fail" and f.fix is not None and f.fix.commands == () and "ROCm" in f.fix.text
    win = [{"text": "ROCm: version=None\nZLUDA support: experimental\nUsing CPU-only torch", "from": "text"}]
    f = one("installer-cpu-fallback", errors=win, system={"os_family": "windows"})
    assert "HIP SDK" in f.fix.text and "whl/" not in f.fix.text


def test_pip_no_torch_wheel_skip_without_the_error() -> None:
    assert one("pip-no-torch-wheel", errors=pasted(NO_HIP)).severity is Severity.SKIP

def test_pip_no_torch_wheel_warn_for_a_published_python() -> None:
    idx = "https://download.pytorch.org/whl/rocm6.2"
    f = one("pip-no-torch-wheel", errors=pasted(PIP), python={"version": "3.12.3", "pip_indexes": [idx]})
    assert f.severity is Severity.WARN and f.title == f"pip found no torch on {idx} for Python 3.12.3" and f.fix is None

def test_pip_no_torch_wheel_fail_makes_a_312_venv_on_the_same_index() -> None:
    idx = "https://download.pytorch.org/whl/nightly/rocm6.4"
    f = one("pip-no-torch-wheel", errors=pasted(PIP), python={"version": "3.14.0", "pip_indexes": [idx]})
    assert f.severity is Severity.FAIL and "3.14.0" in f.title and idx in f.title
    assert f.fix is not None and f.fix.commands[0] == "python3.12 -m venv ~/rocm-env"
    assert "--pre " in f.fix.commands[1] and f.fix.commands[1].endswith(f"--index-url {idx}")

def test_pip_torch_version_missing_names_the_indexes_that_have_it() -> None:
    text = ("Looking in indexes: https://download.pytorch.org/whl/rocm5.6\nERROR: Could not find a version that "
            "satisfies the requirement torch==2.4.1 (from versions: 2.2.0+rocm5.6, 2.2.2+rocm5.6)\n"
            "ERROR: No matching distribution found for torch==2.4.1")
    f = one("pip-torch-version-missing", errors=pasted(text))
    assert f.severity is Severity.FAIL and "torch 2.4.1" in f.title and f.fix is not None
    assert "--index-url https://download.pytorch.org/whl/rocm6.1" in f.fix.text and f.fix.commands == ()
    assert one("pip-torch-version-missing", errors=pasted(NO_HIP)).severity is Severity.SKIP

def test_pip_rocm_triton_missing_names_the_rocm_index_in_words() -> None:
    text = ("ERROR: Could not find a version that satisfies the requirement triton==3.5.1+rocm7.2.0.gita272dfa8; "
            'platform_system == "Linux" (from torch) (from versions: 3.2.0, 3.3.0, 3.6.0)')
    f = one("pip-rocm-triton-missing", errors=pasted(text))
    assert f.severity is Severity.FAIL and f.fix is not None and f.fix.commands == ()
    assert "--index-url https://download.pytorch.org/whl/rocm7.2" in f.fix.text
    assert one("pip-rocm-triton-missing", errors=pasted(NO_HIP)).severity is Severity.SKIP

def test_pip_rocm_triton_missing_older_pin_takes_rocm_from_the_requiring_torch() -> None:
    # pytorch#118233: a torch wheel installed from a file; its pin names the package, the torch names the ROCm.
    text = ("ERROR: Could not find a version that satisfies the requirement pytorch-triton-rocm==2.2.0 (from "
            "torch==2.2.0+rocm5.7) (from versions: 0.0.1, 2.0.0, 2.0.1, 2.1.0)")
    f = one("pip-rocm-triton-missing", errors=pasted(text))
    assert f.severity is Severity.FAIL and "pytorch-triton-rocm==2.2.0" in f.title and "rocm5.7)" not in f.title
    assert f.fix is not None and "https://download.pytorch.org/whl/rocm5.7" in f.fix.text

def test_uv_names_the_pinned_rocm_triton_it_could_not_find() -> None:
    # astral-sh/uv#10712: uv's wording, with environment markers between the package and its version.
    text = ("╰─▶ Because there is no version of pytorch-triton-rocm{python_full_version < '3.13' and platform_machine "
            "== 'x86_64'}==3.1.0 and\n    torch==2.5.1+rocm6.2 depends on pytorch-triton-rocm{python_full_version < "
            "'3.13'}==3.1.0, we can conclude that torch==2.5.1+rocm6.2 cannot be used.\n")
    f = one("pip-rocm-triton-missing", errors=pasted(text))
    assert f.severity is Severity.FAIL and "pytorch-triton-rocm==3.1.0" in f.title
    assert f.fix is not None and "pytorch-triton-rocm" in f.fix.text and "whl/rocm6.2" in f.fix.text


def test_python_user_site_torch_skip_and_fail() -> None:
    user = "C:\\Users\\me\\AppData\\Roaming\\Python\\Python312\\site-packages"
    assert one("python-user-site-torch").severity is Severity.SKIP
    alone = {"version": "3.12.9", "distributions": {"torch": {"version": "2.4.1", "location": user}}}
    assert one("python-user-site-torch", python=alone).severity is Severity.SKIP  # no other environment shown
    # patientx-cfz/comfyui-rocm#125: the user site's CPU torch in front of the app's embedded Python with ROCm packages
    both = {"version": "3.12.9", "distributions": {
        "torch": {"version": "2.4.1", "location": user},
        "torchaudio": {"version": "2.11.0.3+rocm10.1.0a20260905", "location": ".\\python_env\\Lib\\site-packages"}}}
    f = one("python-user-site-torch", python=both, system={"os_family": "windows"})
    assert f.severity is Severity.FAIL and f.title.startswith("torch 2.4.1 comes from the user site-packages")
    assert f.fix is not None and f.fix.commands == ("set PYTHONNOUSERSITE=1",)
    linux = {"version": "3.12.3", "distributions": {
        "torch": {"version": "2.5.1", "location": "/home/me/.local/lib/python3.12/site-packages"},
        "torchvision": {"version": "0.20.1+rocm6.2", "location": "/opt/app/venv/lib/python3.12/site-packages"}}}
    g = one("python-user-site-torch", python=linux)  # OS not shown: the fix in words only
    assert g.severity is Severity.FAIL and g.fix is not None and g.fix.commands == ()


# -- pip-replaced-rocm-torch (unsloth#7275: an installer's resolver swapping the ROCm torch for PyPI's) ------------------

def _replaced(*texts: str) -> list[tuple[str, str, tuple[str, ...]]]:
    from rocm_triton_doctor.check.sources import diagnose_text

    return [(f.severity.value, f.title, f.fix.commands if f.fix else ())
            for f in diagnose_text(list(texts)).findings if f.id == "pip-replaced-rocm-torch"]


_ROCM_GPU = "ROCm: version=6.4, using agent gfx1100"  # SD.Next's line: the runtime found an RX 7900


def test_pip_replaced_rocm_torch_fails_and_reinstalls_from_the_index_the_text_names() -> None:
    (sev, title, cmds), = _replaced("- torch==2.11.0+rocm7.13.0\n+ torch==2.10.0",
                                    "https://repo.amd.com/rocm/whl/gfx110X-all/", _ROCM_GPU)
    assert sev == "fail" and "2.11.0+rocm7.13.0 with 2.10.0" in title
    want = "pip install --force-reinstall torch==2.11.0+rocm7.13.0 --index-url https://repo.amd.com/rocm/whl/gfx110X-all/"
    assert cmds == (want,)
    # pip's wording; a PyTorch index tag names its index, a TheRock tag without a named index names none
    (_, _, cmds), = _replaced("Found existing installation: torch 2.7.1+rocm6.3\nUninstalling torch-2.7.1+rocm6.3:\n"
                              "Successfully installed sympy-1.13 torch-2.7.1", _ROCM_GPU)
    assert cmds == ("pip install --force-reinstall torch==2.7.1+rocm6.3 --index-url https://download.pytorch.org/whl/rocm6.3",)
    (_, _, cmds), = _replaced("- torch==2.11.0+rocm7.13.0\n+ torch==2.10.0", _ROCM_GPU)
    assert cmds == ()


def test_pip_replaced_rocm_torch_says_the_command_in_words_while_the_gpu_is_unknown() -> None:
    from rocm_triton_doctor.check.sources import diagnose_text

    f = next(f for f in diagnose_text(["- torch==2.11.0+rocm7.13.0\n+ torch==2.10.0",
                                       "https://repo.amd.com/rocm/whl/gfx110X-all/"]).findings
             if f.id == "pip-replaced-rocm-torch")
    assert f.severity is Severity.FAIL and f.fix is not None and not f.fix.commands
    assert "--index-url https://repo.amd.com/rocm/whl/gfx110X-all/" in f.fix.text


def test_pip_replaced_rocm_torch_skips_other_swaps() -> None:
    assert [s for s, _, _ in _replaced("- torch==2.6.0+rocm6.2\n+ torch==2.7.1+rocm6.3")] == ["skip"]
    assert [s for s, _, _ in _replaced("- torch==2.6.0\n+ torch==2.7.1")] == ["skip"]
    assert [s for s, _, _ in _replaced("Successfully installed torch-2.7.1")] == ["skip"]


def test_vllm_rocm_wheels_need_python_3_12() -> None:
    # vllm#39378: `pip install vllm --extra-index-url https://wheels.vllm.ai/rocm/` into Python 3.13 took PyPI's vLLM
    idx = "https://wheels.vllm.ai/rocm/"
    f = one("vllm-rocm-wheel-python", python={"install_indexes": [idx], "version": "3.13"})
    assert f.severity is Severity.FAIL and "Python 3.13" in f.title
    assert f.fix is not None and f.fix.commands[0] == "uv venv --python 3.12 --seed ~/vllm-rocm"
    assert idx in f.fix.commands[1] and not any("whl/cu" in c or "whl/cpu" in c for c in f.fix.commands)
    assert one("vllm-rocm-wheel-python", python={"install_indexes": [idx], "version": "3.12"}).severity is Severity.OK
    assert one("vllm-rocm-wheel-python", python={"install_indexes": [idx]}).severity is Severity.SKIP  # version unknown
    assert one("vllm-rocm-wheel-python", python={"version": "3.13"}).severity is Severity.SKIP  # no vLLM ROCm index
