"""checks/errors.py: one test per severity each error-signature check can give. The error lines are the messages the
knowledge/data/errors.json rows cite (their `example` or the issue the row links), in the snapshot's `errors` section
as check/sources writes it ({"text": ..., "from": ...})."""

from __future__ import annotations

from typing import Any

from rocm_triton_doctor.check.findings import Severity

from ..conftest import AMD_LIVE, NO_HIP, gpu, minimal_snapshot, one, pasted, rocm_python, run

MIOPEN = "MIOpen(HIP): Error [SQLiteBase] Failed to exec: sqlite3 step: disk I/O error"
AMDSMI = "NameError: name 'amdsmi' is not defined"
NO_NVIDIA = "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU"
SCHED = "amdgpu: sched_policy has invalid value, using default"
KEY = "modprobe: ERROR: could not insert 'amdgpu': Key was rejected by service"
KEY_OTHER = "dkms.systemd[1627]: modprobe: ERROR: could not insert 'clevo_acpi': Key was rejected by service"
DOCKER = ('docker: Error response from daemon: error gathering device information while adding custom device "/dev/kfd": '
          "no such file or directory.")


def py(torch: str, **more: Any) -> dict[str, Any]:
    return {**rocm_python(torch), **more}


# -- miopen-user-db ---------------------------------------------------------------------------------------------------

def test_miopen_user_db_skip_without_the_error() -> None:
    f = one("miopen-user-db", errors=pasted(NO_HIP))
    assert f.severity is Severity.SKIP and "MIOpen" in f.title


def test_miopen_user_db_fail_quotes_the_line_and_moves_the_db() -> None:
    f = one("miopen-user-db", errors=pasted("Traceback ...\n" + MIOPEN + "\nmore"))
    assert f.severity is Severity.FAIL and f.id == "miopen-user-db"
    assert f.evidence == (f"text: {MIOPEN}",)
    assert f.fix is not None and any("MIOPEN_USER_DB_PATH" in c for c in f.fix.commands)


def test_miopen_user_db_fail_when_it_cannot_create_its_cache_directory() -> None:
    # cms-sw/cmssw#51819: the cache directory read-only for the user; an Error aborts the operation.
    line = "MIOpen Error: filesystem error: cannot create directories: Permission denied [/tmp/miopen-cache/3.5.2.]"
    f = one("miopen-user-db", errors=pasted(line))
    assert f.severity is Severity.FAIL and f.evidence == (f"text: {line}",)
    assert f.fix is not None and any("mkdir -p" in c for c in f.fix.commands)
    assert any("MIOPEN_CUSTOM_CACHE_DIR" in c for c in f.fix.commands)


def test_miopen_user_db_warn_when_only_a_warning_says_the_directory_failed() -> None:
    # LUMI-AI-Guide#81/#108: torchrun ranks racing to create a fresh MIOPEN_USER_DB_PATH; MIOpen warns and goes on.
    line = 'MIOpen(HIP): Warning [PlainTextDb] Unable to create a directory: "/tmp/tmp.C1tl0S4LqD/config"'
    f = one("miopen-user-db", errors=pasted(line))
    assert f.severity is Severity.WARN
    assert f.fix is not None and any("MIOPEN_USER_DB_PATH" in c for c in f.fix.commands)


# -- nvml-bindings-error ----------------------------------------------------------------------------------------------

def test_nvml_bindings_error_skip_without_the_error() -> None:
    assert one("nvml-bindings-error", errors=pasted(MIOPEN)).severity is Severity.SKIP


def test_nvml_bindings_error_fail_uninstalls_the_bindings_found() -> None:
    f = one("nvml-bindings-error", errors=pasted(AMDSMI),
            python=rocm_python("2.4.0+rocm6.1", extra={"pynvml": "11.5.0"}) | {"executable": "/venv/bin/python"})
    assert f.severity is Severity.FAIL and "pynvml" in f.title and "nvidia-ml-py" not in f.title
    assert f.fix is not None and f.fix.commands == ("/venv/bin/python -m pip uninstall -y pynvml",)


# -- cuda-torch-error -------------------------------------------------------------------------------------------------

def test_cuda_torch_error_skip_without_the_error() -> None:
    assert one("cuda-torch-error", errors=pasted(AMDSMI)).severity is Severity.SKIP


def test_cuda_torch_error_skip_when_torch_is_rocm() -> None:
    f = one("cuda-torch-error", errors=pasted(NO_NVIDIA), python=rocm_python("2.5.1+rocm6.2"), files=AMD_LIVE)
    assert f.severity is Severity.SKIP and "ROCm build" in f.title


def test_cuda_torch_error_warn_when_the_machine_is_unknown() -> None:
    f = one("cuda-torch-error", errors=pasted(NO_NVIDIA), python=rocm_python("2.5.1+cu121"))
    assert f.severity is Severity.WARN and f.fix is None
    assert f.evidence == (f"text: {NO_NVIDIA}",)


def test_cuda_torch_error_fail_on_an_amd_machine_reinstalls_from_rocm() -> None:
    f = one("cuda-torch-error", errors=pasted("AssertionError: Torch not compiled with CUDA enabled"),
            python=rocm_python("2.5.1+cu121"), files={**AMD_LIVE, **gpu(1, 110000)})
    assert f.severity is Severity.FAIL and f.title == "a CUDA/CPU torch on an AMD GPU machine"
    assert f.fix is not None and len(f.fix.commands) == 1 and "rocm" in f.fix.commands[0]


CUDA_COUNT = ("UserWarning: cudaGetDeviceCount() returned cudaErrorNotSupported, likely using older driver or on CPU "
              "machine (Triggered internally at C:\\actions-runner\\_work\\pytorch\\pytorch\\pytorch\\c10\\cuda\\"
              "CUDAFunctions.cpp:88.)")


def test_cuda_torch_error_fail_on_a_cuda_builds_device_count_warning_beside_a_discrete_amd_gpu() -> None:
    # Wan2GP-Desktop-Tauri#15: an RX 9070 XT alone (Windows' adapter list), torch's warning from c10/cuda.
    seen = [{"tool": "wmi", "name": "AMD Radeon RX 9070 XT"}]
    f = one("cuda-torch-error", errors=pasted(CUDA_COUNT), gpus_seen=seen)
    assert f.severity is Severity.FAIL and f.title == "a CUDA/CPU torch on an AMD GPU machine"


def test_cuda_torch_error_skip_on_a_device_count_warning_beside_an_igpu_or_an_nvidia_gpu() -> None:
    # An iGPU laptop with a GeForce whose driver fails prints the same warning: that wants the NVIDIA driver.
    igpu = [{"tool": "wmi", "name": "AMD Radeon(TM) Graphics"}]
    assert one("cuda-torch-error", errors=pasted(CUDA_COUNT), gpus_seen=igpu).severity is Severity.SKIP
    both = [{"tool": "wmi", "name": "AMD Radeon RX 9070 XT"}]
    f = one("cuda-torch-error", errors=pasted(CUDA_COUNT), gpus_seen=both, system={"nvidia_gpus": ["NVIDIA GeForce RTX 4090"]})
    assert f.severity is Severity.SKIP
    assert one("known-error", errors=pasted(CUDA_COUNT), gpus_seen=igpu).severity is Severity.SKIP  # claimed


# -- amdgpu-driver-error ----------------------------------------------------------------------------------------------

def test_amdgpu_driver_error_skip_for_another_vendors_module() -> None:
    # Secure Boot rejecting clevo_acpi is not an amdgpu problem (the row's own example).
    assert one("amdgpu-driver-error", errors=pasted(KEY_OTHER)).severity is Severity.SKIP


def test_amdgpu_driver_error_fail_per_signature_needs_sudo_and_reboot() -> None:
    out = run("amdgpu-driver-error", minimal_snapshot(errors=pasted(SCHED, KEY)))
    assert [f.severity for f in out] == [Severity.FAIL, Severity.FAIL]
    assert [f.evidence for f in out] == [(f"text: {SCHED}",), (f"text: {KEY}",)]
    assert all(f.fix is not None and f.fix.needs_sudo and f.fix.needs_reboot for f in out)


def test_amdgpu_driver_error_reads_a_dkms_compiler_error_in_amdgpus_own_sources() -> None:
    # amdgpu#187: `apt install amdgpu-dkms` on kernel 6.14 (the dkms build's relative paths); amdgpu#209: the make.log
    # header and an error in a kcl header. A kernel tree's own build (drivers/gpu/drm/amd/…) is not the DKMS module.
    apt = " amd/amdgpu/amdgpu_drv.c:2416:25: error: implicit declaration of function 'drm_fbdev_ttm_setup'"
    log = ("DKMS make.log for amdgpu-6.16.13-2278356.24.04 for kernel 6.18.14-061814-generic (x86_64)\n"
           "././include/kcl/kcl_preempt.h:61:29: error: static declaration of 'migrate_enable' follows non-static "
           "declaration")
    for text in (apt, log):
        f = one("amdgpu-driver-error", errors=pasted(text))
        assert f.severity is Severity.FAIL and "DKMS" in f.title
    tree = "drivers/gpu/drm/amd/amdgpu/amdgpu_drv.c:2416:25: error: implicit declaration of function 'x'"
    assert one("amdgpu-driver-error", errors=pasted(tree)).severity is Severity.SKIP


def test_known_error_fails_on_a_rocm_package_needing_another_releases_library() -> None:
    # legacy-rocm-build#4042: ROCm packages built for Ubuntu 22.04 on 24.04; rocm-llvm's GCC form has its own row.
    text = " hipsolver : Depends: libcholmod3 but it is not installable"
    f = one("known-error", errors=pasted(text))
    assert f.severity is Severity.FAIL and f.fix is not None and not f.fix.commands
    assert "hipsolver needs libcholmod3" in f.fix.text and "lsb_release -cs" in f.fix.text
    llvm = " rocm-llvm : Depends: libstdc++-5-dev but it is not installable"
    from rocm_triton_doctor.knowledge import errors as known

    row = known.by_id("rocm-package-needs-library-of-another-release")
    assert row is not None and row.search(text) and not row.search(llvm)


def test_known_error_fails_on_a_triton_without_torchs_triton_key() -> None:
    # unsloth#3526: inductor's import of triton_key fails: the importable triton is not torch's pinned release.
    text = "ImportError: cannot import name 'triton_key' from 'triton.compiler.compiler' (/venv/triton/compiler/compiler.py)"
    f = one("known-error", errors=pasted(text))
    assert f.severity is Severity.FAIL and f.fix is not None and not f.fix.commands and "pip list" in f.fix.text


# -- triton-vendor-error ----------------------------------------------------------------------------------------------


# -- pip-no-torch-wheel -----------------------------------------------------------------------------------------------


# -- container-host-no-kfd --------------------------------------------------------------------------------------------

def test_container_host_no_kfd_skip_without_the_error() -> None:
    assert one("container-host-no-kfd", errors=pasted(NO_HIP)).severity is Severity.SKIP


def test_container_host_no_kfd_fail_names_docker_desktop_on_windows() -> None:
    f = one("container-host-no-kfd", errors=pasted(DOCKER), system={"os_family": "windows"})
    assert f.severity is Severity.FAIL and "Docker Desktop" in f.detail
    assert f.fix is not None and f.fix.commands == ()
    assert "Docker Desktop" not in one("container-host-no-kfd", errors=pasted(DOCKER)).detail


# -- gpu-code-object --------------------------------------------------------------------------------------------------


# -- known-error ------------------------------------------------------------------------------------------------------

def test_known_error_skip_for_a_claimed_signature() -> None:
    assert one("known-error", errors=pasted(MIOPEN)).severity is Severity.SKIP


def test_known_error_warn_quotes_the_message_and_its_source() -> None:
    f = one("known-error", errors=pasted(NO_HIP))
    assert f.severity is Severity.WARN and f.evidence == (f"text: {NO_HIP}",)
    assert f.links == ("https://github.com/ROCm/hip/issues/3799",) and f.fix is not None and f.fix.commands == ()


def test_miopen_system_db_memvfs_asks_where_the_install_lives() -> None:
    # MIOpen#1010: `open memvfs` is the read-only system database, not the user DB MIOPEN_USER_DB_PATH moves.
    text = ("MIOpen(HIP): Warning [FindWinogradSolutions] /MIOpen/src/sqlite_db.cpp:109: open memvfs: unable to open "
            "database file")
    f = one("miopen-user-db", errors=pasted(text))
    assert f.severity is Severity.WARN and "system database" in f.title and f.fix is not None and f.fix.commands == ()


def test_amdsmi_missing_fails_only_where_the_program_lost_its_platform() -> None:
    lost = ("DEBUG Failed to import from amdsmi with ModuleNotFoundError(\"No module named 'amdsmi'\")\n"
            "DEBUG No platform detected, vLLM is running on UnspecifiedPlatform")
    assert one("amdsmi-missing", errors=pasted(lost)).severity is Severity.FAIL
    f = one("amdsmi-missing", errors=pasted("ModuleNotFoundError: No module named 'amdsmi'"))
    assert f.severity is Severity.WARN and f.fix is not None and "amd_smi" in f.fix.text
    assert one("amdsmi-missing", errors=pasted(NO_HIP)).severity is Severity.SKIP


def test_rocm_glibc_mismatch() -> None:
    text = ("rocminfo: /lib/x86_64-linux-gnu/libc.so.6: version GLIBC_2.34 not found (required by "
            "/opt/rocm-5.4.3/bin/../lib/libhsa-runtime64.so.1)")
    f = one("rocm-glibc-mismatch", errors=pasted(text))
    assert f.severity is Severity.FAIL and f.fix is not None and f.fix.commands == ()
    assert one("rocm-glibc-mismatch", errors=pasted(NO_HIP)).severity is Severity.SKIP


def test_amdgpu_driver_error_fails_on_pcie_atomics_and_an_old_kernel_driver() -> None:
    # legacy-rocm-build#827 (RX 550 laptop) and #1423 (Radeon VII, Fedora's kernel older than ROCm 4.1's userspace).
    f = one("amdgpu-driver-error", errors=pasted("kfd kfd: skipped device 1002:699f, PCI rejects atomics"))
    assert f.severity is Severity.FAIL and f.fix is not None and "atomic" in f.fix.text
    g = one("amdgpu-driver-error", errors=pasted("HSA Error:  Incompatible kernel and userspace, Vega 20 [Radeon VII] "
                                                 "disabled. Upgrade amdgpu."))
    assert g.severity is Severity.FAIL and g.fix is not None and "amdgpu-dkms" in g.fix.text


def test_amdsmi_missing_fails_when_the_bindings_and_the_library_come_from_two_rocms() -> None:
    # amdsmi#186: a pip amdsmi package loading /opt/rocm-7.0.1's libamd_smi.so under the 7.1.1 CLI.
    text = ("AttributeError: /opt/rocm-7.0.1/lib/libamd_smi.so: undefined symbol: "
            "amdsmi_get_gpu_partition_metrics_info")
    f = one("amdsmi-missing", errors=pasted(text))
    assert f.severity is Severity.FAIL and f.fix is not None and "/opt/rocm/share/amd_smi" in f.fix.text


def test_known_error_on_windows_names_the_hip_sdk_tools() -> None:
    f = one("known-error", errors=pasted('checkHipErrors() HIP API error = 0100 "no ROCm-capable device is detected"'),
            system={"os_family": "windows"})
    assert f.severity is Severity.FAIL and f.fix is not None and "hipInfo.exe" in f.fix.text  # zero devices: fails


def test_an_unrecognised_hip_runtime_error_is_a_warning_without_a_command() -> None:
    # pytorch/pytorch#126015: `HIP error: invalid argument` from mem_get_info beside a working torch.
    f = one("known-error", errors=pasted("RuntimeError: HIP error: invalid argument\nFor debugging consider passing "
                                         "AMD_SERIALIZE_KERNEL=3"))
    assert f.severity is Severity.WARN and f.fix is not None and f.fix.commands == ()
    # the known messages keep their own signatures
    assert "hip-runtime-error" not in [s.id for s in __import__("rocm_triton_doctor.knowledge.errors", fromlist=["x"])
                                       .match("RuntimeError: HIP error: invalid device function")]


# -- session 14, round 9: the driver layer ---------------------------------------------------------------------------

def test_amdgpu_dkms_failing_beside_a_working_gpu_advises_the_kernels_own_driver() -> None:
    # legacy-rocm-build#5905: amdgpu-dkms does not build for a mainline kernel while the runtime lists gfx1151.
    dkms = pasted("ERROR (dkms apport): kernel package linux-headers-6.18.7-061807-generic is not supported")
    f = one("amdgpu-driver-error", errors=dkms, files={**AMD_LIVE, **gpu(1, 110501)})
    assert f.severity is Severity.FAIL and "kernel's own amdgpu" in f.title
    assert f.fix is not None and "--no-dkms" in f.fix.text
    # without the GPU shown working: the same failure, with the signature's generic advice (never a weaker verdict)
    assert one("amdgpu-driver-error", errors=dkms).severity is Severity.FAIL


def test_amdgpu_probe_enomem_points_at_bar_space_and_missing_firmware_at_linux_firmware() -> None:
    # legacy-rocm-build#6281 (2x MI210, pci=realloc=off fixed it) and nixpkgs#284403 (firmware not found).
    bar = one("amdgpu-driver-error", errors=pasted("amdgpu 0000:43:00.0: amdgpu: initializing kernel modesetting\n"
                                                   "amdgpu: probe of 0000:43:00.0 failed with error -12"))
    assert bar.severity is Severity.FAIL and bar.fix is not None and "Above 4G" in bar.fix.text
    fw = one("amdgpu-driver-error", errors=pasted("kernel: amdgpu 0000:03:00.0: Direct firmware load for "
                                                  "amdgpu/vcn_4_0_4.bin failed with error -2"))
    assert fw.severity is Severity.FAIL and fw.fix is not None and "linux-firmware" in fw.fix.text


def test_a_missing_psp_trusted_application_firmware_alone_is_not_a_driver_failure() -> None:
    # legacy-rocm-build#912 (2x Radeon VII): vega20_ta.bin not found; AMD: ROCm does not need the TA firmware, and a
    # copied-in one from another release breaks the PSP. Another missing file beside it is still a failure.
    ta = ("[    3.353884] amdgpu 0000:19:00.0: Direct firmware load for amdgpu/vega20_ta.bin failed with error -2\n"
          "[    3.353886] amdgpu 0000:19:00.0: psp v11.0: Failed to load firmware \"amdgpu/vega20_ta.bin\"")
    assert one("amdgpu-driver-error", errors=pasted(ta)).severity is Severity.SKIP
    more = ta + "\n[    3.4] amdgpu 0000:19:00.0: Direct firmware load for amdgpu/vega20_sos.bin failed with error -2"
    assert one("amdgpu-driver-error", errors=pasted(more)).severity is Severity.FAIL


def test_dkms_3_autoinstall_failures_are_read_as_a_failed_amdgpu_build() -> None:
    # ROCm/amdgpu#220 (Ubuntu 26.04): DKMS 3's "(bad exit status: 2)" form of the build failure, no "Bad return status".
    text = ("Autoinstall of module amdgpu/6.19.4-2337710.26.04 for kernel 7.0.0-22-generic (x86_64)\n"
            "Building module(s).............(bad exit status: 2)\nFailed command:\n'make' KERNELVER=7.0.0-22-generic")
    f = one("amdgpu-driver-error", errors=pasted(text))
    assert f.severity is Severity.FAIL and f.fix is not None and "amdgpu-dkms" in f.fix.text
    # another module's failed build is not amdgpu's
    other = text.replace("module amdgpu/", "module nvidia/")
    assert one("amdgpu-driver-error", errors=pasted(other)).severity is Severity.SKIP


def test_amd_smi_missing_groups_is_a_warning_naming_the_groups() -> None:
    # ROCm/amdsmi#184: amd-smi on an HPC node as a user outside render/video.
    f = one("known-error", errors=pasted("RuntimeError: WARNING: User is missing the following required groups: "
                                         "render, video. Please add user to these groups."))
    assert f.severity is Severity.WARN and f.fix is not None and "video" in f.fix.text


def test_known_error_fail_for_a_message_that_is_the_failure_and_names_the_library() -> None:
    # llama.cpp#25807: TheRock's native packages left /opt/rocm/lib out of the loader's path.
    text = ("./llama-cli: error while loading shared libraries: libhipblas.so.3: cannot open shared object file: "
            "No such file or directory")
    f = one("known-error", errors=pasted(text))
    assert f.severity is Severity.FAIL and f.title.startswith("known failure:") and f.fix is not None
    assert "Find libhipblas.so.3 (`ls /opt/rocm*/lib/libhipblas.so.3*`)" in f.fix.text and f.fix.commands == ()


def test_known_error_fail_names_the_missing_symbol() -> None:
    # ollama#8108: a system hipBLAS needing a rocBLAS symbol another ROCm release's rocBLAS lacks.
    text = "/opt/rocm/lib/libhipblas.so.2: undefined symbol: rocblas_sgbmv_64"
    f = one("known-error", errors=pasted(text))
    assert f.severity is Severity.FAIL and f.fix is not None and f.fix.text.startswith("rocblas_sgbmv_64 is missing")


def test_known_error_a_torch_oom_on_hip_warns_without_a_command() -> None:
    text = "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 16.00 GiB. GPU 0 has a total capacity of 15.24 GiB"
    f = one("known-error", errors=pasted(text))
    assert f.severity is Severity.WARN and f.fix is not None and f.fix.commands == () and "gttsize" in f.fix.text


def test_known_error_sdpa_and_blas_messages_name_the_target_and_the_variable() -> None:
    # TheRock#1908: torch's own warning names the GPU's target its AOTriton lacks.
    sdpa = ("UserWarning: Flash attention was not compiled for current AMD GPU architecture. Attempting to run on "
            "architecture gfx1103 (Triggered internally at B:\\src\\torch\\aten\\src\\ATen\\native\\transformers\\hip"
            "\\sdp_utils.cpp:301")
    f = one("known-error", errors=pasted(sdpa))
    assert f.severity is Severity.WARN and f.fix is not None and "AOTriton has no kernels for gfx1103" in f.fix.text
    # Comfy-Org/ComfyUI#3698: hipBLASLt without gfx906 kernels, then the GEMM fails: rocBLAS instead.
    blas = ("rocblaslt warning: No paths matched /venv/lib/python3.10/site-packages/torch/lib/hipblaslt/library/*gfx906*co. "
            "Make sure that HIPBLASLT_TENSILE_LIBPATH is set correctly.\n"
            "!!! Exception during processing!!! CUDA error: HIPBLAS_STATUS_NOT_SUPPORTED when calling `HIPBLAS_STATUS_NOT_SUPPORTED`")
    f = one("known-error", errors=pasted(blas))
    assert f.severity is Severity.FAIL and f.fix is not None and "TORCH_BLAS_PREFER_HIPBLASLT=0" in f.fix.text
    assert "carries gfx906" in f.fix.text and "HIPBLASLT_TENSILE_LIBPATH" not in f.fix.text


def test_known_error_install_failures_name_what_they_matched() -> None:
    uv = "error: invalid value 'rocm6.4' for '--torch-backend <TORCH_BACKEND>'\n  tip: a similar value exists: 'rocm6.2.4'"
    f = one("known-error", errors=pasted(uv))
    assert f.severity is Severity.FAIL and f.fix is not None and "https://download.pytorch.org/whl/rocm6.4" in f.fix.text
    assert "rocm6.2.4" not in f.fix.text  # uv's suggestion is another ROCm release
    dep = 'ERROR: No matching distribution found for intel-openmp==2025.1.1; platform_system == "Windows"'
    f = one("known-error", errors=pasted(dep))
    assert f.severity is Severity.FAIL and f.fix is not None and 'pip install "intel-openmp==2025.1.1"' in f.fix.text
    # the ROCm packages themselves and torch's own are other checks' business
    rocm_pkg = pasted("ERROR: No matching distribution found for rocm-sdk-core==7.0.0")
    assert one("known-error", errors=rocm_pkg).severity is Severity.SKIP
    dll = ('OSError: [WinError 126] The specified module could not be found. Error loading '
           '"C:\\venv\\Lib\\site-packages\\torch\\lib\\fbgemm.dll" or one of its dependencies.')
    f = one("known-error", errors=pasted(dll))
    assert f.severity is Severity.FAIL and f.fix is not None and "fbgemm.dll" in f.fix.text and "libomp140" in f.fix.text


def test_rocm_glibc_mismatch_of_libraries_apptainer_bound_in_names_the_flag() -> None:
    # apptainer/apptainer#1622: --rocm binds the host's ROCm into /.singularity.d/libs, the image's libstdc++ is older
    text = ("ImportError: /lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.29' not found (required by "
            "/.singularity.d/libs/libhsa-runtime64.so.1)")
    f = one("rocm-glibc-mismatch", errors=pasted(text))
    assert f.severity is Severity.FAIL and "libhsa-runtime64.so.1" in f.title and f.fix is not None
    assert "--rocm" in f.fix.text and "--bind /dev/kfd,/dev/dri" in f.fix.text


def test_known_error_a_gpu_hang_fails_and_selinux_denying_the_device_fails() -> None:
    # legacy-rocm-build#3207: MES stopped answering and the driver reset the GPU: the GPU failed under work (a failure
    # since session 19, ROCm/ROCm#5180), but causes vary, so no command
    hang = "[40869.919369] amdgpu 0000:c3:00.0: amdgpu: MES failed to respond to msg=REMOVE_QUEUE"
    f = one("known-error", errors=pasted(hang))
    assert f.severity is Severity.FAIL and f.fix is not None and f.fix.commands == ()
    # containers/container-selinux#269: the pod's container_t denied the render node
    avc = ('type=AVC msg=audit(1694192866.178:142): avc:  denied  { read write } for  pid=2741395 comm="clinfo" '
           'name="renderD128" dev="devtmpfs" ino=124588 scontext=system_u:system_r:container_t:s0:c17,c28 '
           'tcontext=system_u:object_r:dri_device_t:s0 tclass=chr_file permissive=0')
    f = one("known-error", errors=pasted(avc))
    assert f.severity is Severity.FAIL and f.fix is not None and "container_use_devices" in f.fix.text
    assert "chmod" not in f.fix.text.replace("do not chmod", "")


def test_known_error_a_machine_check_points_at_the_platform_without_a_command() -> None:
    # pytorch#120775: an RX 6800 reset and the machine rebooted, with the CPU's machine check in the journal
    f = one("known-error", errors=pasted("Feb 27 15:09:35 nixos kernel: mce: [Hardware Error]: Machine check events logged"))
    assert f.severity is Severity.WARN and f.fix is not None and f.fix.commands == () and "rasdaemon" in f.fix.text


# -- runtime-error-unexplained ----------------------------------------------------------------------------------------

def test_runtime_error_unexplained_warns_without_a_command() -> None:
    # comfyui#12142: a KSampler failing with miopenStatusInternalError on Windows; no known message explains it.
    text = "- **Exception Type:** RuntimeError\n- **Exception Message:** miopenStatusInternalError"
    f = one("runtime-error-unexplained", errors=pasted(text))
    assert f.severity is Severity.WARN and "miopenStatusInternalError" in f.title
    assert f.fix is None or not f.fix.commands


def test_runtime_error_unexplained_skips_known_messages_memory_faults_and_app_errors() -> None:
    assert one("runtime-error-unexplained", errors=pasted(NO_NVIDIA)).severity is Severity.SKIP  # a signature's
    fault = "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the largest legal"
    assert one("runtime-error-unexplained", errors=pasted(fault)).severity is Severity.SKIP  # a program's bug
    app = "Traceback (most recent call last):\nValueError: awq quantization is not supported on ROCm"
    assert one("runtime-error-unexplained", errors=pasted(app)).severity is Severity.SKIP



def test_known_error_leaves_kfd_readings_to_the_wsl_check_under_wsl() -> None:
    # rocm-systems#1153: OUT_OF_RESOURCES under WSL; a reading that asks for /dev/kfd does not apply there
    errs = pasted("WSL environment detected.\nCall returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed")
    f = one("known-error", errors=errs, system={"wsl": True})
    assert f.severity is Severity.SKIP and "wsl" in f.title
    native = one("known-error", errors=errs)
    assert native.severity is Severity.WARN and native.fix is not None and "/dev/kfd" in native.fix.text


def test_hip_enumerating_no_device_fails() -> None:
    # legacy-rocm-build#5461: AMD_LOG_LEVEL=3 shows hipGetDeviceCount returning hipErrorNoDevice: no GPU work can run
    f = one("known-error", errors=pasted(":3:hip_device_runtime.cpp :651 : 1341534510d us:  hipGetDeviceCount: "
                                         "Returned hipErrorNoDevice :"))
    assert f.severity is Severity.FAIL and f.fix is not None and not f.fix.commands


def test_a_crash_after_a_working_torch_is_a_warning_without_a_command() -> None:
    # TheRock#2850: torch saw the gfx1151 it was built for, then `Segmentation fault (core dumped) python test.py`
    f = one("runtime-error-unexplained", errors=pasted("torch.cuda.is_available(): True\n"
                                                       "Segmentation fault         (core dumped) python test.py"))
    assert f.severity is Severity.WARN and "Segmentation fault" in f.title and (f.fix is None or not f.fix.commands)


def test_pcie_atomics_warns_alone_and_fails_beside_a_failed_run() -> None:
    # legacy-rocm-build#6520: the GPU in the chipset slot logs no PCIe atomics; the first all-reduce fails on it only
    line = "[    5.335110] amdgpu 0000:07:00.0: PCIE atomic ops is not supported"
    assert one("pcie-atomics", errors=pasted("[drm] add ip block number 0 <soc21_common>")).severity is Severity.SKIP
    alone = one("pcie-atomics", errors=pasted(line))
    assert alone.severity is Severity.WARN and "0000:07:00.0" in alone.title
    assert alone.fix is not None and alone.fix.commands == ("sudo lspci -vvv -s 0000:07:00.0 | grep -i atomic",)
    failed = one("pcie-atomics", errors=pasted(line + "\nNCCL WARN HIP failure 'the operation cannot be performed in "
                                                      "the present state' = `hipErrorIllegalState` (401)."))
    assert failed.severity is Severity.FAIL and "slot" in failed.fix.text
    # drm's older wording, without an address: no command names a device the text does not
    old = one("pcie-atomics", errors=pasted("[   11.172374] [drm] PCIE atomic ops is not supported"))
    assert old.severity is Severity.WARN and old.fix is not None and not old.fix.commands


def test_a_gpu_hang_under_amd_s_dkms_driver_points_at_the_kernel_s_own() -> None:
    # ROCm/ROCm#5908: amdgpu-dkms 6.16.13 (rocminfo: `ROCk module version 6.16.13 is loaded`) hung an R9700
    hang = "amdgpu: ring gfx_0.0.0 timeout, signaled seq=255, emitted seq=255"
    rocminfo = "ROCk module version 6.16.13 is loaded\n=====================\nHSA System Attributes\n"
    f = one("known-error", errors=pasted(hang), commands={"rocminfo": rocminfo})
    assert f.severity is Severity.FAIL and f.fix is not None and "--no-dkms" in f.fix.text and "6.16.13" in f.fix.text
    plain = one("known-error", errors=pasted(hang), commands={"rocminfo": "ROCk module is loaded\n"})
    assert plain.fix is not None and "dkms" not in plain.fix.text


def test_a_windows_access_violation_is_a_crash_no_message_explains() -> None:
    # Comfy-Org/ComfyUI#13593: torch.cuda.is_available() dies with a fatal access violation on Windows
    f = one("runtime-error-unexplained", errors=pasted("crash on startup with a fatal Windows access violation"))
    assert f.severity is Severity.WARN and "access violation" in f.title and (f.fix is None or not f.fix.commands)
