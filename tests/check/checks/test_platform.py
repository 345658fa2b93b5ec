"""checks/platform.py: one test per severity each check can give."""

from __future__ import annotations

from ..conftest import AMD_LIVE, node, one, rocm_python

UBUNTU_2404 = 'ID=ubuntu\nVERSION_ID="24.04"\nPRETTY_NAME="Ubuntu 24.04.1 LTS"\n'
UBUNTU_2204 = 'ID=ubuntu\nVERSION_ID="22.04"\nPRETTY_NAME="Ubuntu 22.04.5 LTS"\n'
ARCH = 'ID=arch\nPRETTY_NAME="Arch Linux"\n'
WSL_VERSION = "Linux version 5.15.167.4-microsoft-standard-WSL2 (root@f9c826d3017f) (gcc (GCC) 11.2.0) #1 SMP\n"


def rocm(version: str) -> dict[str, str]:
    return {"/opt/rocm/.info/version": version + "\n"}


def test_os_supported_skip_without_os_release() -> None:
    assert one("os-supported").severity.value == "skip"


def test_os_supported_ok_when_listed() -> None:
    f = one("os-supported", files={"/etc/os-release": UBUNTU_2204, **rocm("6.4.0")})
    assert (f.severity.value, f.title) == ("ok", "Ubuntu 22.04.5 LTS is supported by ROCm 6.4.0")


def test_os_supported_info_without_system_rocm_on_amd() -> None:
    f = one("os-supported", files={"/etc/os-release": UBUNTU_2404, "/opt/rocm/.info/version": None, **AMD_LIVE})
    assert f.severity.value == "info" and "no system ROCm" in f.title


def test_os_supported_warn_for_unlisted_distribution() -> None:
    f = one("os-supported", files={"/etc/os-release": ARCH, **rocm("6.4.0")})
    assert f.severity.value == "warn" and "not an AMD-supported distribution" in f.title


def test_os_supported_fail_for_release_too_new_for_rocm() -> None:
    f = one("os-supported", files={"/etc/os-release": UBUNTU_2404, **rocm("5.7.0")})
    assert (f.severity.value, f.title) == ("fail", "ROCm 5.7.0 does not support Ubuntu 24.04.1 LTS")
    assert f.fix is not None and f.fix.needs_reboot


def test_wsl_skip_without_proc_version() -> None:
    assert one("wsl").severity.value == "skip"


def test_wsl_ok_on_plain_linux() -> None:
    assert one("wsl", files={"/proc/version": "Linux version 6.8.0-45-generic (buildd@lcy02)\n"}).title == "not WSL"


def test_wsl_fail_with_a_download_pytorch_org_wheel() -> None:
    f = one("wsl", files={"/proc/version": WSL_VERSION}, python=rocm_python("2.9.1+rocm6.4"),
            runtime={"torch_version": "2.9.1+rocm6.4", "hip_version": "6.4.1", "cuda_version": None, "is_available": False})
    assert f.severity.value == "fail" and f.fix is not None and f.fix.commands


def test_wsl_fail_when_rocminfo_itself_dies() -> None:
    # legacy-rocm-build#4584: the WSL thunk asserts (a second, NVIDIA adapter): rocminfo aborts with no agent.
    died = ("WSL environment detected.\nrocminfo: ./sources/wsl/libhsakmt/src/thunk_proxy/thunk_proxy.cpp:111: void "
            "thunk_proxy::QueryAdapterInfo(D3DKMT_HANDLE, ATIADAPTERINFO*): Assertion `ret == STATUS_SUCCESS' failed."
            "\nAborted (core dumped)")
    f = one("wsl", files={"/proc/version": WSL_VERSION},
            commands={"rocminfo": {"argv": ["rocminfo"], "returncode": 134, "stdout": died, "stderr": ""}})
    assert f.severity.value == "fail"


def test_wsl_warn_in_words_when_nothing_shows_a_failure() -> None:
    f = one("wsl", files={"/proc/version": WSL_VERSION}, python=rocm_python("2.9.1+rocm6.4"))
    assert f.severity.value == "warn" and f.fix is not None and not f.fix.commands and "Ubuntu 22.04" in f.fix.text


def test_wsl_ok_when_a_rocm_torch_sees_the_gpu() -> None:
    f = one("wsl", files={"/proc/version": WSL_VERSION}, python=rocm_python("2.9.1+rocm6.4"),
            runtime={"torch_version": "2.9.1+rocm6.4", "hip_version": "6.4.1", "cuda_version": None, "is_available": True,
                     "devices": [{"index": 0, "name": "AMD Radeon RX 7900 XTX", "gcnArchName": "gfx1100"}]})
    assert f.severity.value == "ok"


def test_wsl_ok_when_a_rocm_torch_has_a_gpu_without_a_device_list() -> None:
    # legacy-rocm-build#5000: ComfyUI under WSL prints only `Device: cuda:0 AMD Radeon RX 7900 XTX` (is_available).
    f = one("wsl", files={"/proc/version": WSL_VERSION}, python=rocm_python("2.6.0+rocm6.4.1.git1ded221d"),
            runtime={"torch_version": "2.6.0+rocm6.4.1.git1ded221d", "is_available": True})
    assert f.severity.value == "ok"


def test_wsl_fail_when_rocminfo_lists_no_gpu_agent() -> None:
    # legacy-rocm-build#4490: the issue form's rocminfo names hold only the CPU under WSL.
    f = one("wsl", files={"/proc/version": WSL_VERSION}, system={"wsl": True, "rocminfo_gpu_agents": 0},
            python=rocm_python("2.6.0+rocm6.3.4.git1ded221d"))
    assert f.severity.value == "fail"


def test_wsl_warn_with_amds_wsl_wheel() -> None:
    # repo.radeon.com builds carry .git<hash>: AMD documents them for WSL, so only a warning remains.
    f = one("wsl", files={"/proc/version": WSL_VERSION}, python=rocm_python("2.6.0+rocm6.4.1.git1ded221d"))
    assert f.severity.value == "warn"


def test_container_passthrough_skip_when_unknown() -> None:
    assert one("container-passthrough").severity.value == "skip"


def test_container_passthrough_ok_outside_containers() -> None:
    f = one("container-passthrough", files={"/proc/1/cgroup": "0::/init.scope\n", "/run/.containerenv": None},
            paths={"/.dockerenv": None})
    assert (f.severity.value, f.title) == ("ok", "not in a container")


def test_container_passthrough_fail_without_devices() -> None:
    f = one("container-passthrough", paths={"/.dockerenv": {"exists": True}, "/dev/kfd": None, "/dev/dri": None})
    assert f.severity.value == "fail" and f.title.startswith("docker container without /dev/kfd")
    assert f.fix is not None and "--device=/dev/kfd" in f.fix.commands[0]


def test_container_run_advice_follows_the_gpu_vendor() -> None:
    # A pasted run line without devices: AMD flags only when the paste shows ROCm, NVIDIA's --gpus when it shows
    # CUDA, nothing when it shows neither (held-out anomalib#584: AMD flags on an NVIDIA container were harmful).
    bare = [{"runtime": "docker", "devices": [], "group_add": [], "privileged": False, "image": "test"}]
    assert one("container-passthrough", container_run=bare).severity.value == "skip"
    amd = one("container-passthrough", container_run=[{**bare[0], "image": "rocm/pytorch:latest"}])
    assert amd.severity.value == "fail" and amd.fix is not None and "--device=/dev/kfd" in amd.fix.commands[0]
    nv = one("container-passthrough", container_run=bare, system={"cuda_toolkit": "11.4", "nvidia_smi_missing": True})
    assert nv.severity.value == "fail" and nv.fix is not None and nv.fix.commands == ("docker run --gpus all IMAGE",)
    assert "/dev/kfd" not in nv.fix.text + " ".join(nv.fix.commands)


def test_wsl_leaves_an_nvidia_machine_alone() -> None:
    # vllm#9293: a CUDA torch that sees an RTX 4070 under WSL2 is NVIDIA's own supported path.
    rt = {"torch_version": "2.4.0+cu121", "cuda_version": "12.1", "hip_version": None, "is_available": True,
          "devices": [{"index": 0, "name": "NVIDIA GeForce RTX 4070 Laptop GPU"}]}
    f = one("wsl", files={"/proc/version": WSL_VERSION}, runtime=rt)
    assert f.severity.value == "ok" and "NVIDIA" in f.title
    assert one("wsl", files={"/proc/version": WSL_VERSION}).severity.value == "skip"  # nothing says ROCm


def test_kernel_config_hsa_ok_with_kfd() -> None:
    assert one("kernel-config-hsa", paths={"/dev/kfd": node()}).severity.value == "ok"


def test_kernel_config_hsa_skip_without_amd_gpu() -> None:
    assert one("kernel-config-hsa").title == "not applicable: no AMD GPU"


def test_kernel_config_hsa_fail_without_config_hsa_amd() -> None:
    f = one("kernel-config-hsa", files={**AMD_LIVE, "/proc/sys/kernel/osrelease": "6.8.0\n",
                                        "/boot/config-6.8.0": "# CONFIG_HSA_AMD is not set\nCONFIG_DRM_AMDGPU=m\n"})
    assert (f.severity.value, f.title) == ("fail", "kernel 6.8.0 was built without CONFIG_HSA_AMD")


def test_wsl_engine_id_assertion_is_the_windows_driver_not_an_override() -> None:
    # legacy-rocm-build#6204: `amdgpu-install --usecase=wsl,rocm --no-dkms`, then rocminfo aborts on the EngineId
    # assertion (whose text names HSA_OVERRIDE_GFX_VERSION).
    err = [{"text": "Assertion `props.EngineId.ui32.Major && \"HSA_OVERRIDE_GFX_VERSION may be needed\"' failed.",
            "from": "text"}]
    f = one("wsl", errors=err, system={"wsl_install": True})
    assert f.severity.value == "fail" and f.fix is not None and f.fix.commands == ()
    assert "HSA_OVERRIDE" not in f.fix.text and "Windows" in f.fix.text
    assert one("wsl", errors=err).severity.value == "skip"  # no sign of WSL: not this finding


def test_wsl_ok_when_llama_cpps_rocm_backend_lists_the_gpu() -> None:
    # rocm-cli#276: lemonade's llama.cpp ran on `ROCm0 : AMD Radeon(TM) 8060S Graphics` under WSL2 with librocdxg
    seen = [{"tool": "llama.cpp", "name": "AMD Radeon(TM) 8060S Graphics", "index": 0}]
    f = one("wsl", system={"wsl": True}, gpus_seen=seen)
    assert f.severity.value == "ok" and "llama.cpp's ROCm backend lists AMD Radeon(TM) 8060S Graphics" in f.title
    # an error beside it: the listing alone does not settle it
    assert one("wsl", system={"wsl": True}, gpus_seen=seen, rocminfo_gpu_agents=None,
               errors=[{"text": "HSA_STATUS_ERROR_OUT_OF_RESOURCES", "from": "text"}]).severity.value != "ok"


def test_a_compose_file_with_its_kfd_item_commented_out_fails() -> None:
    # hartmark/sd-rocm#4: the shipped compose file comments /dev/kfd out; the image then finds no GPU
    from rocm_triton_doctor.check.sources import diagnose_text

    report = diagnose_text(['#      - "/dev/kfd:/dev/kfd" # remove this line if running on non ROCm',
                            "stable-diffusion-comfyui-1  | GFX version detection error"])
    (f,) = [x for x in report.findings if x.id == "container-passthrough"]
    assert f.severity.value == "fail" and "/dev/kfd" in f.title and f.fix is not None and "Uncomment" in f.fix.text
    live = diagnose_text([('services:\n  app:\n    image: rocm/pytorch\n    devices:\n      - /dev/kfd\n      - /dev/dri\n'
                          '#      - "/dev/kfd:/dev/kfd"')])
    assert all(x.severity.value != "fail" for x in live.findings if x.id == "container-passthrough")
