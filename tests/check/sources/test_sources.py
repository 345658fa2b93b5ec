"""Paste-in sources: text -> the snapshot contract (DESIGN §2). Inputs are real pastes: corpus captures
(tests/fixtures/captures, named) or public outputs cited in place. Property tests: nothing raises on any text."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rocm_triton_doctor.check.sources import diagnose_text, snapshot_from_text
from rocm_triton_doctor.check.sources.split import command_word, segments
from tests.check.corpus import all_captures, load

CAPTURES = Path(__file__).resolve().parents[2] / "fixtures" / "captures"


def snap_of(name: str) -> dict:  # type: ignore[type-arg]
    return snapshot_from_text(list(load(CAPTURES / f"{name}.txt").blocks))


# -- the contract: only what the text shows; missing stays missing -------------------------------------------

def test_empty_and_unrelated_text_give_an_empty_snapshot() -> None:
    for texts in ([], [""], ["hello, I have a problem with my GPU, please help"]):
        snap = snapshot_from_text(texts)
        assert set(snap) == {"schema", "source", "origin"}, snap


def test_sections_the_text_does_not_show_stay_missing() -> None:
    snap = snapshot_from_text(["$ ls -l /dev/kfd\ncrw-rw---- 1 root render 509, 0 Aug 22 21:34 /dev/kfd"])
    assert snap["paths"] == {"/dev/kfd": {"exists": True, "mode": "0o20660", "owner": "root", "group": "render"}}
    for section in ("user", "python", "runtime", "env", "files", "commands"):
        assert section not in snap
    assert snap["origin"] == {"paths./dev/kfd": "text"}


def test_pip_show_of_one_package_is_partial_but_full_pip_list_is_complete() -> None:
    show = snap_of("sd-rocm-3-pip-show-torch-no-rocm-suffix")
    assert show["python"]["distributions"]["torch"]["version"] == "2.5.1"
    assert "python.distributions" in show["partial"]  # triton is NOT shown absent
    full = snapshot_from_text([("$ pip list\nPackage    Version\n---------- -------\npip        24.0\nsetuptools 69.5.1\n"
                               "torch      2.7.1+rocm6.3\n")])
    assert "partial" not in full and set(full["python"]["distributions"]) == {"pip", "setuptools", "torch"}
    grep = snapshot_from_text(["$ pip list | grep torch\ntorch      2.7.1+rocm6.3\npip  24.0"])
    assert grep["partial"] == ["python.distributions"]


def test_collect_env_fills_runtime_and_python_only_partially() -> None:
    snap = snap_of("healthy-pytorch-152941-mi100-collect-env")
    assert snap["runtime"] == {"torch_version": "2.7.0+rocm6.3", "hip_version": "6.3.42131-fa1d09cbd", "cuda_version": None,
                               "is_available": True, "hip_runtime_version": "6.3.42131", "miopen_version": "3.3.0",
                               "devices": [{"index": 0, "name": "AMD Instinct MI100", "gcnArchName": "gfx908:sramecc+:xnack-"}],
                               "device_count": 1}
    assert snap["python"] == {"version": "3.12.3"}  # no distributions key: unknown, not "none installed"
    assert snap["files"]["/proc/sys/kernel/osrelease"] == "5.19.0-46-generic\n"
    nv = snap_of("healthy-vllm-10147-nvidia-v100s-cu118")
    assert nv["runtime"]["hip_version"] is None and nv["runtime"]["cuda_version"] == "11.8"
    assert [d["name"] for d in nv["runtime"]["devices"]] == ["Tesla V100S-PCIE-32GB"] * 3
    wsl = snap_of("rocm-4864-wsl2-nightly-torch-no-hip")
    assert "microsoft-standard-WSL2" in wsl["files"]["/proc/sys/kernel/osrelease"]
    assert wsl["runtime"]["is_available"] is False and "devices" not in wsl["runtime"]


def test_collect_env_library_lines_are_partial() -> None:
    snap = snap_of("pytorch-164346-gfx1151-torch-rocm70-invalid-device-function")
    d = snap["python"]["distributions"]
    assert d["torch"] == "2.10.0.dev20250929+rocm7.0" and d["pytorch-triton-rocm"] == "3.5.0+gitbbb06c03"
    assert "python.distributions" in snap["partial"]


# -- device nodes, users, rocminfo ----------------------------------------------------------------------------

def test_ls_in_a_container_with_relative_names_and_numeric_groups() -> None:
    snap = snap_of("healthy-rocm-docker-pr93-gfx90a-container")
    assert snap["paths"]["/dev/dri/renderD128"]["group"] == "render"
    assert snap["paths"]["/dev/kfd"]["mode"] == "0o20660"
    assert snap["container_run"][0]["group_add"] == ["video", "render"]
    k8s = snap_of("k8s-device-plugin-39-render-gid-nobody")
    assert k8s["paths"]["/dev/kfd"]["group"] == "106"


def test_ls_cannot_access_is_probed_absent() -> None:
    snap = snap_of("cachyos-643-kfd-sched-policy-invalid")
    assert snap["paths"]["/dev/kfd"] == {"exists": False}
    assert snap["files"]["/proc/config.gz"] == "CONFIG_HSA_AMD=y\nCONFIG_HSA_AMD_SVM=y\n"
    assert "sched_policy has invalid value" in snap["commands"]["dmesg"]


def test_rocminfo_kfd_open_errors() -> None:
    assert snap_of("rocm-docker-116-rocm-terminal-render-group")["paths"]["/dev/kfd"] == {
        "exists": True, "open_error": "Permission denied"}
    assert snap_of("rocm-1361-wsl2-rx580-no-kfd")["paths"]["/dev/kfd"] == {"exists": False}
    assert snap_of("rocm-2232-pitcairn-not-supported-kfd")["paths"]["/dev/kfd"]["open_error"] == "Cannot allocate memory"
    assert snap_of("k8s-device-plugin-65-amdgpu-get-auth-eperm")["paths"]["/dev/dri/renderD128"]["open_error"] == \
        "Operation not permitted"


def test_id_and_groups() -> None:
    snap = snapshot_from_text(["$ id\nuid=1000(alice) gid=1000(alice) groups=1000(alice),44(video),992(render)"])
    assert snap["user"] == {"uid": 1000, "name": "alice", "groups": ["alice", "video", "render"]}
    assert snap_of("rocm-docker-116-rocm-terminal-render-group")["user"] == {"groups": ["rocm-user", "sudo", "video"]}


def test_rocminfo_text_goes_to_commands_verbatim() -> None:
    snap = snap_of("legacy-1797-gfx1032-w6600-docker-nobinary")
    assert "gfx1032" in snap["commands"]["rocminfo"] and "AMD Radeon PRO W6600" in snap["commands"]["rocminfo"]


# -- gfx names in other tools' forms --------------------------------------------------------------------------

def test_rocm_smi_showhw() -> None:
    # https://github.com/ROCm/ROCm/issues/6031 (2 x MI210), verbatim but for trailing blanks
    text = """$ rocm-smi --showhw
===================================== ROCm System Management Interface =====================================
========================================== Concise Hardware Info ===========================================
GPU  NODE  DID     GUID   GFX VER  GFX RAS  SDMA RAS  UMC RAS  VBIOS            BUS           PARTITION ID
0    1     0x740f  20068  gfx90a   ENABLED  ENABLED   ENABLED  113-D67301V-075  0000:01:00.0  0
1    2     0x740f  48932  gfx90a   ENABLED  ENABLED   ENABLED  113-D67301V-075  0000:02:00.0  0
============================================================================================================
=========================================== End of ROCm SMI Log ============================================"""
    seen = snapshot_from_text([text])["gpus_seen"]
    assert [(g["index"], g["node"], g["gfx"], g["pci_id"]) for g in seen] == [(0, 1, "gfx90a", "1002:740f"),
                                                                               (1, 2, "gfx90a", "1002:740f")]


def test_amd_smi_static() -> None:
    # amd-smi static on a Ryzen AI (gfx1150) as published in a public write-up, excerpt
    text = """GPU: 0
    ASIC:
        MARKET_NAME: AMD Radeon Graphics
        VENDOR_ID: 0x1002
        DEVICE_ID: 0x150e
        NUM_COMPUTE_UNITS: 16
        TARGET_GRAPHICS_VERSION: gfx1150
    BUS:
        BDF: 0000:c5:00.0"""
    assert snapshot_from_text([text])["gpus_seen"] == [
        {"tool": "amd-smi", "name": "AMD Radeon Graphics", "index": 0, "pci_id": "1002:150e", "gfx": "gfx1150",
         "bus": "0000:c5:00.0"}]


def test_ollama_log_gfx_and_the_servers_override() -> None:
    assert {g["gfx"] for g in snap_of("ollama-8772-systemd-override-not-reaching-server")["gpus_seen"]} == {"gfx1031"}
    # (its processor line also names the 780M, without a target: the name is resolved later, in facts/gpus)
    seen = snap_of("ollama-4099-gfx1103-780m-docker-not-supported")["gpus_seen"]
    assert {g["gfx"] for g in seen if "gfx" in g} == {"gfx1103"}
    quoted = snap_of("ollama-5090-override-value-with-literal-quotes")
    assert quoted["env"] == {"HSA_OVERRIDE_GFX_VERSION": '"10.3.0"'}  # the quotes ARE part of the value
    assert quoted["partial"] == ["env"]


def test_llama_cpp_vulkaninfo_clinfo_tensorflow_and_hip_log_names() -> None:
    assert snap_of("llamacpp-19949-gfx1152-no-code-objects-override-11-5-0")["gpus_seen"][0]["gfx"] == "gfx1152"
    seen = snap_of("legacy-5696-override-12-0-1-8060s-reports-gfx1201")["gpus_seen"]
    assert {(g["tool"], g["gfx"], g["name"]) for g in seen} >= {("vulkaninfo", "gfx1151", "Radeon 8060S Graphics"),
                                                              ("clinfo", "gfx1201", "Radeon 8060S Graphics")}
    assert snap_of("legacy-2353-rx6800m-gfx1031-tf-ignoring-device")["gpus_seen"] == [{"tool": "tensorflow", "gfx": "gfx1031"}]
    assert {"tool": "hip", "gfx": "gfx1102"} in snap_of("rocm-pytorch-2730-rx7600-gfx1102-docker-invalid-device-function")["gpus_seen"]


# -- environment, REPL sessions, errors ------------------------------------------------------------------------

def test_env_from_exports_prefixes_and_dumps() -> None:
    assert snap_of("swarmui-565-rocr-and-hip-visible-both-set")["env"] == {"ROCR_VISIBLE_DEVICES": "1", "HIP_VISIBLE_DEVICES": "1"}
    assert snap_of("legacy-5824-gfx1151-rocm631-override-11-0-0-memory-fault")["env"]["HSA_OVERRIDE_GFX_VERSION"] == "11.0.0"
    # `HSA_OVERRIDE_GFX_VERSION=${HSA_OVERRIDE_GFX_VERSION:-}` defines it empty whenever the host leaves it unset
    assert snap_of("ods-1779-empty-override-no-rocm-devices")["env"] == {"HSA_OVERRIDE_GFX_VERSION": ""}
    assert "env" not in snapshot_from_text(["export ROCM_PATH=${ROCM_PATH:-/opt/rocm}"])  # other templates: no value
    dump = snapshot_from_text([("$ env\nHOME=/home/a\nPATH=/usr/bin\nSHELL=/bin/bash\nLANG=C.UTF-8\nTERM=xterm\n"
                               "HSA_OVERRIDE_GFX_VERSION=10.3.0")])
    assert dump["env"] == {"HOME": "/home/a", "PATH": "/usr/bin", "HSA_OVERRIDE_GFX_VERSION": "10.3.0"}
    assert "partial" not in dump  # a full dump: every other variable is unset


def test_python_session_values() -> None:
    snap = snap_of("comfyui-1712-rx6700xt-rocm57-invalid-device-function")
    assert snap["runtime"] == {"torch_version": "2.2.0.dev20231010+rocm5.7", "is_available": True, "device_count": 1,
                               "devices": [{"index": 0, "name": "AMD Radeon RX 6700 XT"}]}
    assert snap_of("swarmui-565-rocr-and-hip-visible-both-set")["runtime"] == {"is_available": False}
    assert snap_of("legacy-1743-gfx90c-docker-override-9-0-0")["python"] == {"version": "3.7.13"}


def test_error_text_is_kept_verbatim_with_its_signatures() -> None:
    snap = snap_of("hip-337-rx580-video-group-sudo-works")
    assert snap["errors"] == [{"text": "      error: 'hipErrorInvalidDevice'(1010) at square.cpp:60", "from": "text",
                               "signatures": ["hip-invalid-device"]}]
    sigs = {s for e in snap_of("rocminfo-27-polaris12-kfd-not-supported-asic")["errors"] for s in e.get("signatures", [])}
    assert sigs == {"hsa-out-of-resources", "kfd-open-no-memory", "kfd-asic-not-supported"}


def test_packages_windows_and_container_hints() -> None:
    assert snap_of("flash-attention-1652-ext-built-vs-rocm64-torch-rocm60")["packages"] == {"rocm-libs": "6.4.0.60400-47~22.04"}
    assert snap_of("rocm-1893-docker-windows-no-kfd")["system"] == {"os_family": "windows"}
    run = snap_of("gfx803-docker-4-podman-kfd-permission")["container_run"][0]
    assert run["runtime"] == "podman" and run["group_add"] == ["video"] and run["devices"] == ["/dev/kfd", "/dev/dri"]


# -- the dispatcher ---------------------------------------------------------------------------------------------

def test_a_whole_issue_body_with_fences_and_prompts() -> None:
    body = """### Problem Description
torch does not see my GPU.

```
$ ls -l /dev/kfd
crw-rw---- 1 root render 235, 0 Jan  5 10:00 /dev/kfd
$ groups
alice adm sudo
```

<details><summary>pip list</summary>

```
(venv) alice@box:~$ pip list | grep -i torch
torch                    2.7.1+rocm6.3
```
</details>

Traceback (most recent call last):
  File "<string>", line 1, in <module>
RuntimeError: No HIP GPUs are available
"""
    snap = snapshot_from_text([body])
    assert snap["paths"]["/dev/kfd"]["group"] == "render"
    assert snap["user"] == {"groups": ["alice", "adm", "sudo"]}
    assert snap["python"]["distributions"] == {"torch": {"version": "2.7.1+rocm6.3"}}
    assert snap["partial"] == ["python.distributions"]
    assert snap["errors"][-1]["signatures"] == ["no-hip-gpus"]


def test_prompt_forms() -> None:
    assert [s.cmd for s in segments("root@c:/# rocminfo\nx\n# CONFIG_HSA_AMD is not set\n$ uname -r\n6.8.0")] == \
        ["rocminfo", "uname -r"]
    assert segments("(.venv) sage@beaker ~/g/nm-vllm (main)> pip list | grep triton\ntriton 3.2.0")[0].cmd == \
        "pip list | grep triton"
    assert command_word("sudo HSA_OVERRIDE_GFX_VERSION=10.3.0 /opt/rocm/bin/rocminfo --support") == "rocminfo"
    assert command_word("python3 -m torch.utils.collect_env") == "collect_env"
    assert command_word("python -m pip freeze") == "pip"


# -- never raise; every capture diagnoses without a crashing check -------------------------------------------

@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.text(max_size=400), max_size=4))
def test_random_text_never_raises(texts: list[str]) -> None:
    snap = snapshot_from_text(texts)
    assert snap["schema"] == "rocm-triton-doctor/snapshot/1"


_CORPUS_TEXTS = ["\n".join(c.blocks) for c in all_captures()]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_CORPUS_TEXTS), st.integers(min_value=0, max_value=10_000), st.integers(min_value=0, max_value=10_000))
def test_truncated_real_captures_never_raise(text: str, start: int, length: int) -> None:
    piece = text[start % max(len(text), 1):][:length]
    snapshot_from_text([piece, text[:length]])


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_CORPUS_TEXTS), st.text(alphabet="$#>`~\n |:=()[]\"'-/\\", max_size=60))
def test_real_captures_with_noise_never_raise(text: str, noise: str) -> None:
    snapshot_from_text([noise + text + noise, text.replace("\n", noise, 3)])


def test_every_capture_diagnoses_without_a_crashing_check() -> None:
    for c in all_captures():
        report = diagnose_text(list(c.blocks))
        assert not [f for f in report.findings if f.id == "internal-error"], c.name
        assert report.source == "pasted text"


# -- file-shaped texts -----------------------------------------------------------------------------------------

def test_kfd_properties_dumps_keep_their_node_number() -> None:
    # "key value" lines as drivers/gpu/drm/amd/amdkfd/kfd_topology.c node_show() prints them
    cpu = "cpu_cores_count 8\nsimd_count 0\nmem_banks_count 1\ngfx_target_version 0\nvendor_id 0\ndevice_id 0\n"
    gpu = ("cpu_cores_count 0\nsimd_count 80\nmem_banks_count 1\nwave_front_size 32\nsimd_per_cu 2\n"
           "gfx_target_version 100301\nvendor_id 4098\ndevice_id 29663\ndrm_render_minor 128\n")
    one = snapshot_from_text([f"$ cat /sys/class/kfd/kfd/topology/nodes/2/properties\n{gpu}"])
    assert one["files"] == {"/sys/class/kfd/kfd/topology/nodes/2/properties": gpu}
    both = snapshot_from_text([cpu + gpu])
    assert set(both["files"]) == {f"/sys/class/kfd/kfd/topology/nodes/{n}/properties" for n in (0, 1)}
    assert both["notes"]  # the numbers were inferred from paste order, and the snapshot says so


def test_os_release_uname_and_proc_version() -> None:
    snap = snapshot_from_text([('$ cat /etc/os-release\nPRETTY_NAME="Ubuntu 24.04.1 LTS"\nNAME="Ubuntu"\n'
                               'VERSION_ID="24.04"\nID=ubuntu\nID_LIKE=debian\n'),
                               ("$ uname -a\nLinux box 6.8.0-45-generic #45-Ubuntu SMP PREEMPT_DYNAMIC Fri Aug 30 12:02:04 UTC "
                               "2024 x86_64 x86_64 x86_64 GNU/Linux"),
                               "Linux version 5.15.167.4-microsoft-standard-WSL2 (root@f9c826d3017f) (gcc (GCC) 11.2.0) #1 SMP"])
    assert snap["files"]["/etc/os-release"].splitlines()[3] == "ID=ubuntu"
    assert snap["files"]["/proc/sys/kernel/osrelease"] == "6.8.0-45-generic\n"
    assert snap["system"] == {"hostname": "box", "machine": "x86_64", "wsl": True}  # the WSL2 kernel of /proc/version
    assert snap["files"]["/proc/version"].startswith("Linux version 5.15.167.4-microsoft-standard-WSL2")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_CORPUS_TEXTS + ["$ id\nuid=0(root) gid=0(root) groups=0(root)", "garbage ~~~ $ # >>>"]),
                max_size=3))
def test_diagnosing_any_mix_of_pastes_never_raises(texts: list[str]) -> None:
    report = diagnose_text(texts)
    assert int(report.verdict.exit_code) in (0, 1, 3, 4)


def test_python_version_from_site_packages_paths_only_when_not_stated() -> None:
    assert snap_of("rocm-install-430-python38-nightly-rocm624-no-wheel")["python"]["version"] == "3.8"
    assert snap_of("comfyui-docker-126-rocm-image-cuda-torch")["python"] == {"version": "3.12"}
    stated = snapshot_from_text([("Python version: 3.10.12 (main) [GCC 11.4.0] (64-bit runtime)\nPyTorch version: 2.5.1+rocm6.2\n"
                                 "ROCM used to build PyTorch: 6.2.41133-dd7f95766"),
                                 '  File "/venv/lib/python3.11/site-packages/torch/cuda/__init__.py", line 1, in x'])
    assert stated["python"]["version"] == "3.10.12"
    assert "_py_from_path" not in stated


def test_cat_of_a_known_file_and_rocminfo_excerpts() -> None:
    snap = snapshot_from_text([("$ cat /opt/rocm/.info/version\n6.4.1-83\n$ cat /sys/module/amdgpu/initstate\nlive\n"
                               "$ cat /proc/driver/nvidia/version\ncat: /proc/driver/nvidia/version: No such file or directory")])
    assert snap["files"] == {"/opt/rocm/.info/version": "6.4.1-83\n", "/sys/module/amdgpu/initstate": "live\n",
                             "/proc/driver/nvidia/version": None}
    assert "files" not in snapshot_from_text(["$ cat notes.txt\nlive"])
    seen = snap_of("healthy-rocm-docker-pr93-gfx90a-container")["gpus_seen"]
    assert [(g["tool"], g["gfx"], g["index"]) for g in seen] == [("rocminfo", "gfx90a", 0), ("rocminfo", "gfx90a", 1)]


# -- forms the held-out captures of 2026-11-23 showed (tests/fixtures/captures/README.md, "Held-out round") -------------

def test_ls_root_only_row_acl_and_lowercase_permission_denied() -> None:
    snap = snapshot_from_text(["$ ls -la /dev | grep kfd\ncrw-------   1 root    root    234,   0 Mai 21 05:13 kfd"])
    assert snap["paths"]["/dev/kfd"] == {"exists": True, "mode": "0o20600", "owner": "root", "group": "root"}
    acl = snapshot_from_text(["$ ls -l /dev/kfd\ncrw-rw----+ 1 root render 234, 0 Jan  1 00:00 /dev/kfd"])
    assert acl["paths"]["/dev/kfd"]["acl"] is True
    ollama = snapshot_from_text([('level=ERROR source=amd_linux.go:404 msg="amdgpu devices detected but permission '
                                 'problems block access" open /dev/kfd: permission denied')])
    assert ollama["paths"]["/dev/kfd"] == {"exists": True, "open_error": "Permission denied"}


def test_container_prompt_marks_a_container() -> None:
    snap = snapshot_from_text([("root@101acc334128:/var/lib/jenkins# /opt/rocm-5.2.0/bin/rocminfo\nROCk module is loaded"
                               "\nUnable to open /dev/kfd read-write: No such file or directory")])
    assert snap["system"]["container_prompt"] == "101acc334128" and snap["paths"]["/dev/kfd"] == {"exists": False}
    assert "system" not in snapshot_from_text(["bob@workstation:~$ rocminfo\nROCk module is loaded"])


def test_labelled_torch_values_and_comfyui_device_line() -> None:
    snap = snapshot_from_text([("torch.__version__: 2.6.0+cu124\ntorch.version.cuda: 12.4\ntorch.version.hip: None\n"
                               "CUDA available: False")])
    assert snap["runtime"] == {"torch_version": "2.6.0+cu124", "cuda_version": "12.4", "hip_version": None,
                               "is_available": False}
    script = snapshot_from_text(["torch version = 2.2.1+rocm5.7\ncuda available = True\nname = AMD Radeon RX 6600 XT"])
    assert script["runtime"] == {"torch_version": "2.2.1+rocm5.7", "is_available": True}
    assert script["gpus_seen"] == [{"tool": "torch", "name": "AMD Radeon RX 6600 XT"}]
    comfy = snapshot_from_text(["Total VRAM 8176 MB\nDevice: cuda:0 AMD Radeon RX 6600 XT : native"])
    assert comfy["gpus_seen"] == [{"tool": "torch", "name": "AMD Radeon RX 6600 XT", "index": 0}]
    assert comfy["runtime"] == {"is_available": True}


def test_a_line_of_several_labelled_values_is_read_pair_by_pair() -> None:
    # unsloth#3385: a script's `torch: … HIP: …` and `cuda.is_available: True bf16_supported: True`
    snap = snapshot_from_text([("torch: 2.7.1+git99ccf24 HIP: 6.4.43484-123eb5128\n"
                               "cuda.is_available: True bf16_supported: True")])
    assert snap["runtime"] == {"torch_version": "2.7.1+git99ccf24", "hip_version": "6.4.43484-123eb5128",
                               "is_available": True}
    # prose with a colon is not a run of pairs, and a value must still have its label's shape
    assert "runtime" not in snapshot_from_text(["Note: torch is fine here"])
    assert "runtime" not in snapshot_from_text(["torch: latest HIP: unknown"])


def test_invokeai_torch_device_list_and_an_apps_miopen_version() -> None:
    # InvokeAI#9490: torch's device list as the app prints it, and torch.backends.cudnn.version() of a ROCm build
    # (MIOpen 3.5.1 as 3005001); a cuDNN number (90100) is not read as MIOpen.
    snap = snapshot_from_text([("[2026-08-12 08:54:28,009]::[InvokeAI]::INFO --> Using torch device: [AMD Radeon RX 7900 "
                               "XTX (cuda:0), AMD Radeon 760M Graphics (cuda:1)]\n"
                               "[2026-08-12 08:54:28,011]::[InvokeAI]::INFO --> cuDNN version: 3005001")])
    assert snap["gpus_seen"] == [{"tool": "torch", "name": "AMD Radeon RX 7900 XTX", "index": 0},
                                 {"tool": "torch", "name": "AMD Radeon 760M Graphics", "index": 1}]
    assert snap["runtime"] == {"is_available": True, "miopen_version": "3.5.1"}
    one = snapshot_from_text(["[InvokeAI]::INFO --> Using torch device: AMD Radeon RX 6800 XT"])
    assert one["gpus_seen"] == [{"tool": "torch", "name": "AMD Radeon RX 6800 XT", "index": 0}]
    cpu = snapshot_from_text(["[InvokeAI]::INFO --> Using torch device: CPU\n[InvokeAI]::INFO --> cuDNN version: 90100"])
    assert "gpus_seen" not in cpu and "runtime" not in cpu


def test_rocblas_arch_isa_names_and_rocm_sdk_targets() -> None:
    snap = snapshot_from_text([("rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: "
                               "No such file or directory for GPU arch : gfx1036")])
    assert snap["gpus_seen"] == [{"tool": "rocblas", "gfx": "gfx1036"}]
    assert snap["errors"][0]["signatures"] == ["rocblas-tensile-missing"]
    isa = snapshot_from_text(["  ISA Info:\n    ISA 1\n      Name:                    amdgcn-amd-amdhsa--gfx803"])
    assert {"tool": "isa", "gfx": "gfx803"} in isa["gpus_seen"]
    generic = snapshot_from_text(["AMD Radeon 780M (amdgcn-amd-amdhsa--gfx1103, amdgcn-amd-amdhsa--gfx11-generic)"])
    assert generic["gpus_seen"] == [{"tool": "isa", "gfx": "gfx1103"}]
    sdk = snapshot_from_text(["$ rocm-sdk targets\ngfx1100;gfx1101;gfx1102"])
    assert sdk["rocm_sdk"] == {"targets": ["gfx1100", "gfx1101", "gfx1102"]}


def test_pip_already_satisfied_new_format() -> None:
    snap = snapshot_from_text([("Looking in indexes: https://download.pytorch.org/whl/rocm6.3\nRequirement already "
                               "satisfied: torch in /home/z/venv/lib/python3.13/site-packages (2.7.1)")])
    assert snap["python"]["pip_kept"] == {"torch": "2.7.1"}
    assert snap["python"]["distributions"]["torch"]["version"] == "2.7.1"


def test_comfyui_startup_lines_device_properties_and_version_summaries() -> None:
    comfy = snapshot_from_text([("[INFO] pytorch version: 2.15.0a0+rocm10.1.0a20260908\n[INFO] AMD arch: gfx1030\n"
                                "[INFO] Device: cuda:0 AMD Radeon RX 6800 XT : native")])
    assert comfy["runtime"] == {"torch_version": "2.15.0a0+rocm10.1.0a20260908", "is_available": True}
    assert {"tool": "torch", "gfx": "gfx1030"} in comfy["gpus_seen"]
    props = snapshot_from_text([(">>> torch.cuda.get_device_properties(0)\n_CudaDeviceProperties(name='AMD Radeon "
                                "Graphics', major=11, minor=5, gcnArchName='gfx1151', total_memory=98304MB)")])
    assert props["gpus_seen"] == [{"tool": "torch", "gfx": "gfx1151", "name": "AMD Radeon Graphics"}]
    summary = snapshot_from_text(["torch:        2.9.1+rocm7.2.1.lw.gitff65f5bc\ntorchvision:  0.24.1\nPython: 3.12"])
    assert summary["python"]["distributions"] == {"torch": {"version": "2.9.1+rocm7.2.1.lw.gitff65f5bc"},
                                                  "torchvision": {"version": "0.24.1"}}


def test_a_tensor_printed_on_the_gpu_means_torch_had_a_gpu() -> None:
    # pytorch#102968: `layer.to('cuda:0')(x.to('cuda:0')).sum()` printed a tensor on cuda:0 (a ROCm torch names its
    # HIP devices cuda too).
    text = "torch.__version__\n# '2.0.1+rocm5.4.2'\n# tensor(10433.3145, device='cuda:0', grad_fn=<SumBackward0>)"
    snap = snapshot_from_text([text])
    assert snap["runtime"]["is_available"] is True
    cpu = snapshot_from_text(["tensor(1619.2983, grad_fn=<SumBackward0>)"])
    assert "is_available" not in cpu.get("runtime", {})
    error = snapshot_from_text(["RuntimeError: expected tensor(1., device='cuda:0') on the same device"])
    assert "is_available" not in error.get("runtime", {})


def test_powershell_prompts_amdgpu_arch_and_windows_adapters() -> None:
    # legacy-rocm-build#4390
    text = ("PS C:\\Users\\banya> & 'C:\\Program Files\\AMD\\ROCm\\6.1\\bin\\amdgpu-arch.exe'\ngfx1036\n"
            "PS C:\\Users\\banya>   (Get-WmiObject win32_VideoController).Name\nAMD Radeon(TM) Graphics\n"
            "AMD Radeon RX 6800 XT\nPS C:\\Users\\banya>")
    assert [s.word for s in segments(text)] == ["amdgpu-arch", "(Get-WmiObject"]
    snap = snapshot_from_text([text])
    assert snap["gpus_seen"] == [{"tool": "amdgpu-arch", "gfx": "gfx1036", "index": 0},
                                 {"tool": "wmi", "name": "AMD Radeon(TM) Graphics"},
                                 {"tool": "wmi", "name": "AMD Radeon RX 6800 XT"}]
    assert command_word("& 'C:\\Program Files\\AMD\\ROCm\\6.1\\bin\\hipInfo.exe'") == "hipInfo"


def test_a_script_with_its_printed_values_as_comments() -> None:
    # TheRock#5543: each print() followed by what it printed, as a comment.
    text = ("import torch\nprint(torch.__version__, torch.cuda.is_available())\n# 2.10.0+rocm7.13.0a20260508 True\n"
            "print([torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())])\n"
            "# ['AMD Radeon(TM) Graphics', 'AMD Radeon RX 7900 XT']")
    snap = snapshot_from_text([text])
    assert snap["runtime"] == {"torch_version": "2.10.0+rocm7.13.0a20260508", "is_available": True, "device_count": 2}
    assert snap["gpus_seen"] == [{"tool": "torch", "name": "AMD Radeon(TM) Graphics", "index": 0},
                                 {"tool": "torch", "name": "AMD Radeon RX 7900 XT", "index": 1}]
    # values that do not match the expressions one for one are not read
    assert "runtime" not in snapshot_from_text(["print(torch.__version__, torch.cuda.is_available())\n# it printed True"])


def test_pip_resolver_conflict_gives_both_installed_versions_and_the_pin() -> None:
    # triton-lang/triton#5058, pasted wrapped over lines.
    text = ("ERROR: pip's dependency resolver does not currently take into account all the packages that are installed."
            "\n\ntorch 2.5.1+cu121 requires triton==3.1.0; \nplatform_system == \"Linux\" and python_version < \"3.13\","
            "\n\nbut you have triton 3.0.0+gite82dfd99 which is incompatible.")
    dists = snapshot_from_text([text])["python"]["distributions"]
    assert dists == {"torch": {"version": "2.5.1+cu121", "requires": ["triton==3.1.0"]},
                     "triton": {"version": "3.0.0+gite82dfd99"}}


def test_indexes_on_a_pasted_install_command_line() -> None:
    text = ("pip install --index-url https://rocm.nightlies.amd.com/v2/gfx110X-all/ torch torchaudio\n"
            "uv pip install -i https://download.pytorch.org/whl/rocm6.4 torch")
    snap = snapshot_from_text([text])
    assert snap["python"]["install_indexes"] == ["https://rocm.nightlies.amd.com/v2/gfx110X-all/",
                                                 "https://download.pytorch.org/whl/rocm6.4"]
    assert "python" not in snapshot_from_text(["see https://rocm.nightlies.amd.com/v2/gfx110X-all/ for wheels"])


def test_distrobox_create_is_a_podman_run_with_its_additional_flags() -> None:
    # amd-strix-halo-toolboxes#53, the command continued over lines with backslashes.
    text = ("distrobox create -n llama-rocm-7.2 \\\n  --image docker.io/kyuz0/amd-strix-halo-toolboxes:rocm-7.2 \\\n"
            '  --additional-flags "--device /dev/kfd --device /dev/dri --group-add video --group-add render"')
    assert snapshot_from_text([text])["container_run"] == [
        {"runtime": "podman", "devices": ["/dev/kfd", "/dev/dri"], "group_add": ["video", "render"],
         "image": "docker.io/kyuz0/amd-strix-halo-toolboxes:rocm-7.2", "privileged": False, "via": "distrobox"}]
    rootful = snapshot_from_text(["sudo podman run --device /dev/kfd --group-add video rocm/pytorch"])
    assert rootful["container_run"][0]["rootful"] is True


def test_the_issue_forms_gpu_section_without_a_gfx_name_means_no_gpu_agent() -> None:
    # legacy-rocm-build#4490 (WSL): ROCm's issue form lists `rocminfo | grep Name` under GPU:, here only the CPU.
    text = ("CPU:\nmodel name      : AMD Ryzen 7 5800X3D 8-Core Processor\nGPU:\n"
            "  Name:                    AMD Ryzen 7 5800X3D 8-Core Processor\n"
            "  Marketing Name:          AMD Ryzen 7 5800X3D 8-Core Processor\n")
    assert snapshot_from_text([text])["system"]["rocminfo_gpu_agents"] == 0
    gpu = snapshot_from_text([text + "  Name:                    gfx1201\n  Marketing Name:          AMD Radeon RX 9070 XT\n"])
    assert "rocminfo_gpu_agents" not in gpu.get("system", {})


def test_llama_cpp_device_list_counts_amd_gpus_the_hip_runtime_enumerated() -> None:
    # ollama#2453 (ROCm build) and llama.cpp#1087 (2023 hipBLAS build printing "CUDA devices").
    rocm = "ggml_cuda_init: found 1 ROCm devices:\n  Device 0: Radeon RX 570 Series, gfx803 (0x803), VMM: no, Wave Size: 64\n"
    assert snapshot_from_text([rocm])["system"]["hip_devices_seen"] == 1
    old = "ggml_init_cublas: found 1 CUDA devices:\n  Device 0: Radeon RX Vega\n"
    assert snapshot_from_text([old])["system"]["hip_devices_seen"] == 1
    nvidia = "ggml_cuda_init: found 1 CUDA devices:\n  Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9\n"
    assert "hip_devices_seen" not in snapshot_from_text([nvidia]).get("system", {})


def test_missing_driver_files_and_markdown_in_ls_rows() -> None:
    # legacy-rocm-build#4098: rocm-smi's own output when amdgpu is not loaded.
    text = ("cat: /sys/module/amdgpu/initstate: No such file or directory\n"
            "ERROR:root:Driver not initialized (amdgpu not found in modules)")
    snap = snapshot_from_text([text])
    assert snap["files"] == {"/sys/module/amdgpu/initstate": None}
    # lemonade#2799: the reporter bolded the group in an ls row
    ls = snapshot_from_text(["crw-rw---- 1 root **148** 236, 0 Jul 23 18:21 /dev/kfd"])
    assert ls["paths"]["/dev/kfd"]["group"] == "148"


def test_a_compose_service_is_the_run_it_describes_and_ollamas_override_echo() -> None:
    # ollama#738 (a compose file under Docker Desktop) and project-nomad#810 (ollama's 2025 runner log).
    compose = ("services:\n  ollama:\n    image: ollama/ollama:0.1.23-rocm\n    devices:\n      - /dev/dri\n"
               "      - /dev/kfd\n    group_add:\n      - video\n    privileged: true\n")
    assert snapshot_from_text([compose])["container_run"] == [
        {"runtime": "docker", "devices": ["/dev/dri", "/dev/kfd"], "group_add": ["video"], "privileged": True,
         "via": "compose", "image": "ollama/ollama:0.1.23-rocm"}]
    log = 'runner.go:485 WARN msg="user overrode visible devices" HSA_OVERRIDE_GFX_VERSION=11.0.0'
    assert snapshot_from_text([log])["env"] == {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}


def test_sglang_check_env_says_rocm_available() -> None:
    # sglang#10562: `python3 -m sglang.check_env` inside its ROCm image.
    assert snapshot_from_text(["Python: 3.12.8\nROCM available: True\nPyTorch: 2.6.0a0+git8d4926e"])["runtime"][
        "is_available"] is True


def test_ollama_inference_compute_lines_count_rocm_gpus() -> None:
    # ollama#12564 (0.12, Windows): library=ROCm, name=ROCm1, the product in description=.
    line = ('time=2025-10-11T00:03:35.623+02:00 level=INFO source=types.go:112 msg="inference compute" id=0 '
            'library=ROCm compute=gfx1100 name=ROCm1 description="AMD Radeon RX 7900 XTX" libdirs=ollama,rocm')
    snap = snapshot_from_text([line])
    assert snap["system"]["hip_devices_seen"] == 1
    assert {"tool": "ollama", "gfx": "gfx1100", "name": "AMD Radeon RX 7900 XTX"} in snap["gpus_seen"]


def test_an_apps_own_rocm_gpu_line_names_the_target() -> None:
    # unsloth#8731: the installer's `gpu  AMD ROCm (gfx1201)`; a list of supported types is not a GPU.
    assert snapshot_from_text(["  gpu            AMD ROCm (gfx1201)"])["gpus_seen"] == [{"tool": "text", "gfx": "gfx1201"}]
    assert "gpus_seen" not in snapshot_from_text(["AMD GPU not supported (gfx1031)"])


def test_amd_smis_default_table_lists_the_gpus_the_driver_brought_up() -> None:
    # legacy-rocm-build#5671 (Debian 13, Strix Halo)
    table = ("+------------------------------------------------------------------------------+\n"
             "| AMD-SMI 26.1.0+5df6c765      amdgpu version: 6.16.6   ROCm version: 7.1.0    |\n"
             "|=====================================+========================================|\n"
             "| 0000:c2:00.0    AMD Radeon Graphics | N/A        N/A   0             N/A/0 W |\n")
    snap = snapshot_from_text([table])
    assert snap["system"]["amdgpu_gpus_listed"] == 1
    assert snap["gpus_seen"] == [{"tool": "amd-smi", "name": "AMD Radeon Graphics", "bus": "0000:c2:00.0"}]


# -- session 14: forms the seventh held-out round showed ------------------------------------------------------------

def test_rocm_smi_concise_table_of_rocm_6_1_lists_the_gpus_through_the_driver() -> None:
    # Syllo/nvtop#341: `Device  Node  IDs` over `(DID, GUID)`; each row is a GPU amdgpu brought up.
    text = ("$ rocm-smi\n=========== ROCm System Management Interface ===========\n"
            "=================== Concise Info ===================\n"
            "Device  Node  IDs              Temp        Power     Partitions          SCLK    MCLK\n"
            "              (DID,     GUID)  (Junction)  (Socket)  (Mem, Compute, ID)\n"
            "====================================================\n"
            "0       2     0x74a1,   32700  39.0°C      134.0W    NPS1, SPX, 0        132Mhz  900Mhz\n"
            "1       3     0x74a1,   3884   41.0°C      139.0W    NPS1, SPX, 0        131Mhz  900Mhz\n")
    snap = snapshot_from_text([text])
    assert [(g.get("index"), g.get("node"), g.get("pci_id")) for g in snap["gpus_seen"]] == [
        (0, 2, "1002:74a1"), (1, 3, "1002:74a1")]
    assert snap["system"]["amdgpu_gpus_listed"] == 2


def test_collect_env_as_json_in_a_webui_sysinfo() -> None:
    # ModelSurge/sd-webui-comfyui#209: AUTOMATIC1111's sysinfo holds get_env_info() as JSON.
    text = ('{\n    "Torch env info": {\n        "torch_version": "2.1.2+rocm5.6",\n'
            '        "cuda_compiled_version": "N/A",\n        "python_version": "3.10.13 (main) [GCC 13.2.1] (64-bit runtime)",\n'
            '        "is_cuda_available": "True",\n        "cuda_runtime_version": null,\n'
            '        "nvidia_driver_version": null,\n        "nvidia_gpu_models": "AMD Radeon RX 6900 XT",\n')
    rt = snapshot_from_text([text])["runtime"]
    assert rt["torch_version"] == "2.1.2+rocm5.6" and rt["is_available"] is True and rt["cuda_version"] is None
    assert [d["name"] for d in rt["devices"]] == ["AMD Radeon RX 6900 XT"]
    assert "runtime" not in snapshot_from_text(['{"torch_version": "2.1.2"}'])  # one key is not the form


def test_python_c_one_liner_and_its_printed_line() -> None:
    # debpalash/VoiceStudio#1274, inside `docker exec`.
    text = ('$ docker exec box python3 -c "import torch; print(torch.__version__, torch.version.hip)"\n'
            "2.8.0+rocm7.2.4.git6bea3e0b 7.2.53211-97f5574fe2\n")
    rt = snapshot_from_text([text])["runtime"]
    assert rt["torch_version"] == "2.8.0+rocm7.2.4.git6bea3e0b" and rt["hip_version"] == "7.2.53211-97f5574fe2"
    two = '$ python -c "import torch; print(torch.__version__, torch.version.hip)"\n2.8.0+rocm7.2.4\n'
    assert "runtime" not in snapshot_from_text([two])  # one value for two expressions: not read


def test_slurm_job_steps_and_whether_they_asked_for_gpus() -> None:
    bare = "[me@login1 ~]$ srun -N 1 --ntasks 1 -p gpu --time=90:00 --pty /bin/bash\n[me@node2 ~]$ rocminfo\n"
    assert snapshot_from_text([bare])["system"]["slurm_job"] == {"gpus_requested": False}
    for asks in ("srun --gres=gpu:1 --pty bash", "salloc --gpus=2 -p mi250", "srun -G 1 python train.py"):
        assert snapshot_from_text([asks])["system"]["slurm_job"] == {"gpus_requested": True}, asks
    assert "system" not in snapshot_from_text(["the srun docs say"]) or "slurm_job" not in snapshot_from_text(
        ["the srun docs say"]).get("system", {})


def test_rocminfo_names_the_drm_access_group() -> None:
    text = ("ROCk module is loaded\nUnable to open /dev/kfd read-write: Permission denied\n"
            'alice is not member of "nogroup" group, the default DRM access group. Users must be a member of the '
            '"nogroup" group or another DRM access group in order for ROCm applications to run successfully.\n')
    assert snapshot_from_text([text])["system"]["drm_access_group"] == "nogroup"


def test_docker_exec_is_not_a_container_start() -> None:
    # VoiceStudio#1274: `docker exec NAME python3 -c …` in a running container had been read as a `docker run`
    # without devices, and a working container got the passthrough failure.
    snap = snapshot_from_text(['$ docker exec omnivoice python3 -c "import torch; print(torch.__version__)"\n2.8.0\n'])
    assert "container_run" not in snap
    assert snapshot_from_text(["singularity exec --rocm image.sif python3 x.py"])["container_run"][0]["rocm_flag"]


def test_xformers_info_versions_and_cuda_state() -> None:
    # facebookresearch/xformers#1399: `python -m xformers.info` on an RTX 5070.
    text = ("xFormers 0.0.35+42fc265.d20260623\nis_triton_available:                               True\n"
            "pytorch.version:                                   2.12.1+cu130\n"
            "pytorch.cuda:                                      available\n"
            "gpu.name:                                          NVIDIA GeForce RTX 5070\n")
    rt = snapshot_from_text([text])["runtime"]
    assert rt["torch_version"] == "2.12.1+cu130" and rt["is_available"] is True
    assert snapshot_from_text(["pytorch.cuda:   not available\n"])["runtime"]["is_available"] is False


def test_rocm_smi_per_field_output_counts_the_gpus_the_driver_brought_up() -> None:
    # lemonade-sdk/llamacpp-rocm#9: `rocm-smi --showvbios --showuse` on a Strix Halo host.
    text = ("$ rocm-smi --showvbios --showuse\n=========== ROCm System Management Interface ===========\n"
            "=========== VBIOS ===========\nGPU[0]\t\t: VBIOS version: 113-STRXLGEN-001\n"
            "=========== % time GPU is busy ===========\nGPU[0]\t\t: GPU use (%): 0\n")
    assert snapshot_from_text([text])["system"]["amdgpu_gpus_listed"] == 1


def test_collect_env_banner_joined_to_its_first_key() -> None:
    # pytorch#145670: the paste put `PyTorch version:` on the banner's line.
    text = ("Collecting environment information...                                     PyTorch version: "
            "2.7.0.dev20250123+rocm6.3\nIs debug build: False\nROCM used to build PyTorch: 6.3.42131-fa1d09cbd\n")
    assert snapshot_from_text([text])["runtime"]["torch_version"] == "2.7.0.dev20250123+rocm6.3"


def test_older_ollama_names_a_gpu_too_old_for_its_rocm() -> None:
    # ollama#2465: `AMD GPU too old, falling back to CPU gfx803`.
    text = 'time=2024-02-12T10:00:00 level=INFO source=gpu.go:250 msg="AMD GPU too old, falling back to CPU gfx803"\n'
    assert [g["gfx"] for g in snapshot_from_text([text])["gpus_seen"]] == ["gfx803"]


def test_collect_env_keys_as_a_markdown_list() -> None:
    # pytorch#174282: the issue template renders `- **PyTorch version**: …`.
    text = "- **PyTorch version**: 2.11.0.dev20260118+rocm7.1\n- **ROCm version**: 7.1.52802\n- **Is CUDA available**: True\n"
    rt = snapshot_from_text([text])["runtime"]
    assert rt["torch_version"] == "2.11.0.dev20260118+rocm7.1" and rt["is_available"] is True


def test_app_launcher_log_lines_with_rich_level_prefixes() -> None:
    # bmaltais/kohya_ss#2228 and vladmandic/sdnext#4211: `HH:MM:SS-micro INFO     …` lines.
    kohya = ("22:09:42-469548 INFO     Torch 2.1.2+rocm5.6\n"
             "22:09:42-537630 INFO     Torch detected GPU: AMD Radeon RX 7800 XT VRAM 16368 Arch (11, 0) Cores 30\n")
    snap = snapshot_from_text([kohya])
    assert snap["runtime"] == {"torch_version": "2.1.2+rocm5.6", "is_available": True}
    assert snap["gpus_seen"][0]["name"] == "AMD Radeon RX 7800 XT"
    sdnext = ("22:01:16-707883 INFO     ROCm: version=6.4, using agent gfx1200\n"
              "22:02:36-990669 INFO     Torch: torch==2.8.0+cpu torchvision==0.23.0+cpu\n")
    snap = snapshot_from_text([sdnext])
    assert snap["runtime"]["torch_version"] == "2.8.0+cpu" and snap["gpus_seen"][0]["gfx"] == "gfx1200"


def test_arrow_printed_values_and_a_device_name_torch_returned() -> None:
    # debpalash/VoiceStudio#1165: `expr → value` lines from a diagnostics script.
    text = "torch.cuda.get_device_name(0) → 'AMD Radeon RX 7900 XTX'\ntorch.version.hip → '7.2.53211-97f5574fe2'\n"
    rt = snapshot_from_text([text])["runtime"]
    assert rt == {"hip_version": "7.2.53211-97f5574fe2", "is_available": True}


def test_container_env_and_buildah() -> None:
    # jammsen/proxmox-setup-scripts#1 (-e in a docker run) and legacy-rocm-build#1549 (rootless buildah from).
    run = snapshot_from_text([("Command: docker run --rm --device /dev/kfd --device /dev/dri -e "
                              "HSA_OVERRIDE_GFX_VERSION=11.5.1 -e HSA_ENABLE_SDMA=0 rocm/rocm-terminal bash")])
    assert run["env"] == {"HSA_OVERRIDE_GFX_VERSION": "11.5.1"}
    built = snapshot_from_text(["me@host:~$ buildah from --device=/dev/kfd:rw --group-add=105 fedora:39"])
    assert built["container_run"][0]["runtime"] == "podman" and built["container_run"][0]["group_add"] == ["105"]
    assert "container_run" not in snapshot_from_text(["docker from the docs"])


def test_cluster_device_lines_and_a_json_dependency_report() -> None:
    # ROCm/k8s-device-plugin#148 (kubectl capacity <none>), Hal0ai/hal0#2213 (an LXC device line with a gid),
    # invoke-ai/InvokeAI#7520 (a JSON dependency report).
    k8s = ('kubectl get nodes -o custom-columns=NAME:.metadata.name,GPU:"status.capacity.amd\\.com/gpu"\n'
           "NAME              GPU\ndesktop-27f4uiq   <none>\n")
    assert snapshot_from_text([k8s])["system"]["k8s_amd_gpu_capacity"] == 0
    assert snapshot_from_text(["host devices: /dev/dri/renderD128,gid=993"])["system"]["lxc_device_gids"] == {
        "/dev/dri/renderD128": 993}
    deps = '{\n  "cuda": "12.1",\n  "torch": "2.4.1+cu121",\n  "torchvision": "0.19.1",\n}\n'
    dists = snapshot_from_text([deps])["python"]["distributions"]
    assert dists["torch"]["version"] == "2.4.1+cu121" and dists["torchvision"]["version"] == "0.19.1"


def test_llama_cpp_2026_device_line_with_its_vram_total() -> None:
    # llama.cpp#26702: `found 1 ROCm devices (Total VRAM: 12272 MiB):`, pasted indented.
    text = ("    ggml_cuda_init: found 1 ROCm devices (Total VRAM: 12272 MiB):\n"
            "    Device 0: AMD Radeon RX 6700 XT, gfx1030 (0x1030), VMM: no, Wave Size: 32, VRAM: 12272 MiB\n")
    assert snapshot_from_text([text])["system"]["hip_devices_seen"] == 1


def test_ollama_server_config_map_is_the_programs_environment() -> None:
    # Jeffser/Alpaca#1091: empty values are variables ollama reads but nobody set; the cut last token is dropped.
    text = ('time=2026-01-29T14:34:19.101+01:00 level=INFO source=routes.go:1631 msg="server config" env="map[CUDA_'
            'VISIBLE_DEVICES:0 GPU_DEVICE_ORDINAL: HIP_VISIBLE_DEVICES:1 HSA_OVERRIDE_GFX_VERSION: OLLAMA_HOST:http://127.0.0.1:11435 '
            'ROCR_VISIBLE_DEVICES:[…]')
    env = snapshot_from_text([text])["env"]
    assert env == {"CUDA_VISIBLE_DEVICES": "0", "HIP_VISIBLE_DEVICES": "1", "OLLAMA_HOST": "http://127.0.0.1:11435"}


def test_fetch_summary_kernel_and_gpus_and_other_small_sources() -> None:
    fetch = ("OS: Fedora Linux 39 (Silverblue) x86_64\nHost: Bravo 15\nKernel: 6.8.8-200.fc39.x86_64\nShell: bash 5.2.26\n"
             "CPU: AMD Ryzen 7 4800H (16) @ 2,90 GHz\nGPU 1: AMD Radeon RX Vega 6 (Ryzen 4000/5000 Mobile Series)\n"
             "GPU 2: AMD Radeon RX 5500M [Discrete]\n")
    snap = snapshot_from_text([fetch])
    assert snap["files"]["/proc/sys/kernel/osrelease"] == "6.8.8-200.fc39.x86_64\n"
    assert [g["name"] for g in snap["gpus_seen"]] == ["AMD Radeon RX Vega 6 (Ryzen 4000/5000 Mobile Series)",
                                                       "AMD Radeon RX 5500M"]
    assert "files" not in snapshot_from_text(["OS: something\nKernel: 6.1\n"])  # two keys are prose, not a summary
    # hipDeviceProp_t.gcnArchName as a program prints it (AlphaMine-Tech/alpha-miner#5)
    arch = snapshot_from_text(["  0: AMD Radeon Graphics gcnArchName=gfx906:sramecc+:xnack- backend=unsupported"])
    assert arch["gpus_seen"] == [{"tool": "hip", "gfx": "gfx906"}]
    # `ollama ps`: ollama's word about where the model sits, kept apart from proof (nixpkgs#375359)
    ps = snapshot_from_text([("$ ollama ps\nNAME             ID              SIZE     PROCESSOR    UNTIL\n"
                             "phi4:14b-q8_0    310d366232f4    19 GB    100% GPU     4 minutes from now\n")])
    assert ps["system"] == {"ollama_processor": "100% GPU"}
    # AMD's apt line with a shell variable for the release (legacy-rocm-build#3946)
    apt = snapshot_from_text([('echo "deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] https://repo.radeon.com/rocm/'
                              'apt/$ROCM_VERSION jammy main" | sudo tee /etc/apt/sources.list.d/rocm.list')])
    assert apt["system"]["rocm_apt"] == {"rocm": {"suite": "jammy"}}
    # a docker build's elapsed-seconds prefix before a labelled value (ROCm/flash-attention#37)
    assert snapshot_from_text(["10.47 torch.__version__  = 2.2.0.dev20231206+rocm5.7"])["runtime"] == {
        "torch_version": "2.2.0.dev20231206+rocm5.7"}


def test_a_rocminfo_excerpt_of_name_and_marketing_name_is_a_gpu_agent() -> None:
    # legacy-rocm-build#6484: no Agent header and no Device Type; an agent named gfxN is a GPU.
    d = diagnose_text(["rocminfo\n[…]\nName: gfx1201\nMarketing Name: AMD Radeon RX 9070 XT\n"])
    f = next(x for x in d.findings if x.id == "kfd-access")
    assert f.severity.value == "ok" and "1 GPU agent" in f.title


def test_a_markdown_quote_a_windows_set_line_and_a_launchers_gpu_line() -> None:
    # Comfy-Org/ComfyUI#9910: ComfyUI's startup pasted as a markdown quote
    quoted = snapshot_from_text([("> pytorch version: 2.8.0+rocm6.4\n> AMD arch: gfx1201\n"
                                  "> Device: cuda:0 AMD Radeon RX 9070 XT : native\n")])
    assert quoted["gpus_seen"] and quoted["runtime"]["torch_version"] == "2.8.0+rocm6.4"
    repl = snapshot_from_text([">>> import torch\n>>> torch.__version__\n'2.5.1+rocm6.2'\n"])  # a REPL is not a quote
    assert repl.get("runtime", {}).get("torch_version") == "2.5.1+rocm6.2"
    # patientx/ComfyUI-Zluda#263: a Windows launcher's detection and `Set` lines
    zluda = snapshot_from_text([("  ::  Detected GPU via Windows registry: AMD Radeon RX 9070 XT\n"
                                "  ::  Set TRITON_OVERRIDE_ARCH=gfx1200\n")])
    assert zluda["env"] == {"TRITON_OVERRIDE_ARCH": "gfx1200"}
    assert zluda["gpus_seen"] == [{"tool": "text", "name": "AMD Radeon RX 9070 XT"}]


def test_log_prefixes_comfyuis_error_report_device_counts_and_nvidia_smis_header() -> None:
    # Python logging's default format (Eddycrack864/UVR5-UI#31) and nvidia-smi's header with its rows cut
    snap = snapshot_from_text([("2025-02-06 11:05:28,056 - INFO - separator - PyTorch Version: 2.4.1+cpu\n"
                               "| NVIDIA-SMI 566.14                 Driver Version: 566.14         CUDA Version: 12.7     |\n")])
    assert snap["runtime"]["torch_version"] == "2.4.1+cpu" and snap["system"]["nvidia_driver"] == "566.14"
    # ComfyUI's error report (Comfy-Org/ComfyUI#14881)
    report = snapshot_from_text(["## Devices\n\n- **Name:** cuda:0 AMD Radeon RX 7900 XT : native\n  - **Type:** cuda\n"])
    assert report["runtime"]["is_available"] is True and report["gpus_seen"][0]["name"] == "AMD Radeon RX 7900 XT"
    assert snapshot_from_text(["GPU: AMD Instinct MI300X VF\nDevice count: 1\n"])["runtime"]["is_available"] is True
    assert snapshot_from_text(["Device count: 0\n"])["runtime"]["is_available"] is False
    assert snapshot_from_text(["VAE load device: cuda:0, offload device: cpu, dtype: torch.bfloat16\n"])["runtime"] == {
        "is_available": True}
    # pip with a requirements file between the place and the version (patientx-cfz/comfyui-rocm#125)
    pip = snapshot_from_text([("Requirement already satisfied: torch in C:\\Users\\me\\AppData\\Roaming\\Python\\Python312"
                              "\\site-packages (from -r requirements.txt (line 4)) (2.4.1)\n")])
    assert pip["python"]["distributions"]["torch"] == {
        "version": "2.4.1", "location": "C:\\Users\\me\\AppData\\Roaming\\Python\\Python312\\site-packages"}


def test_python_c_with_one_print_per_value_and_a_windows_python_exe() -> None:
    # Comfy-Org/ComfyUI-Manager#2724: three prints, the process crashed before the third printed
    text = ('.\\.venv\\Scripts\\python.exe -c "import torch; print(torch.__version__); print(torch.version.hip); '
            'print(torch.cuda.is_available())"\n2.9.1+rocmsdk20260116\n7.2.26024-f6f897bd3d\n')
    assert snapshot_from_text([text])["runtime"] == {"torch_version": "2.9.1+rocmsdk20260116",
                                                     "hip_version": "7.2.26024-f6f897bd3d"}


def test_modprobes_module_directory_and_rocm_smis_unsupported_fields() -> None:
    # harakas/amd_igpu_yolo_v8#1: modprobe inside a container names WSL2's kernel
    wsl = snapshot_from_text([("modprobe: FATAL: Module amdgpu not found in directory "
                              "/lib/modules/5.15.133.1-microsoft-standard-WSL2\n")])
    assert wsl["files"]["/proc/sys/kernel/osrelease"] == "5.15.133.1-microsoft-standard-WSL2\n"
    # legacy-rocm-build#4278: rocm-smi reached each GPU to ask for a field it does not report
    smi = snapshot_from_text([("============================ ROCm System Management Interface ============================\n"
                              "GPU[0]          : get_volt_metric, Not supported on the given system\n"
                              "GPU[1]          : get_volt_metric, Not supported on the given system\n")])
    assert smi["system"]["amdgpu_gpus_listed"] == 2


def test_amd_smis_banner_and_ollamas_missing_version_file() -> None:
    banner = snapshot_from_text(["| AMD-SMI 26.2.0+unknown       amdgpu version: Linuxver ROCm version: 7.1.1    |\n"])
    assert banner["system"] == {"amd_smi_rocm": "7.1.1"}
    ollama = snapshot_from_text([('level=WARN source=amd_linux.go:60 msg="ollama recommends running the https://www.amd.com/'
                                 'en/support/linux-drivers" error="amdgpu version file missing: /sys/module/amdgpu/version '
                                 'stat /sys/module/amdgpu/version: no such file or directory"\n')])
    assert ollama["files"] == {"/sys/module/amdgpu/version": None}


def test_the_kernel_command_line_is_read_from_its_log_line_a_cat_or_a_pasted_run_of_parameters() -> None:
    from rocm_triton_doctor.check.sources import snapshot_from_text

    def cmdline(*texts: str) -> str | None:
        return snapshot_from_text(list(texts)).get("files", {}).get("/proc/cmdline")

    assert cmdline("[    0.000000] Command line: BOOT_IMAGE=/vmlinuz-6.8 root=UUID=1 ro nomodeset") == \
        "BOOT_IMAGE=/vmlinuz-6.8 root=UUID=1 ro nomodeset\n"
    assert cmdline("$ cat /proc/cmdline\nroot=PARTUUID=yada zswap.enabled=0 rw quiet splash\n") == \
        "root=PARTUUID=yada zswap.enabled=0 rw quiet splash\n"
    # ds4 PR 871: the author cut the start with "…"
    assert cmdline("… iommu.passthrough=0 amd_pstate=active ttm.pages_limit=25165824") == \
        "iommu.passthrough=0 amd_pstate=active ttm.pages_limit=25165824\n"
    # an environment prefix or an ollama log line is not a command line
    assert cmdline("HSA_OVERRIDE_GFX_VERSION=10.3.0 HIP_VISIBLE_DEVICES=0 python x.py") is None
    assert cmdline('time=2025-06-11T18:45 level=INFO source=gpu.go:217 msg="looking for compatible GPUs"') is None


def test_weights_a_ggml_program_placed_on_a_rocm_device_prove_the_runtime_opened_it() -> None:
    from rocm_triton_doctor.check.sources import snapshot_from_text

    ollama = ('time=2025-11-14T14:42:28.102Z level=INFO source=backend.go:310 msg="model weights" device=ROCm0 '
              'size="7.5 GiB"\ntime=2025-11-14T14:42:28.102Z level=INFO source=backend.go:321 msg="kv cache" '
              'device=ROCm0 size="576.0 MiB"')
    assert snapshot_from_text([ollama])["system"]["hip_devices_seen"] == 1
    llama = "load_tensors:        ROCm0 model buffer size =  7604.21 MiB\nload_tensors:        ROCm1 model buffer size =  70.2 MiB"
    assert snapshot_from_text([llama])["system"]["hip_devices_seen"] == 2
    assert "system" not in snapshot_from_text(['msg="model weights" device=CPU size="741.9 MiB"'])


def test_comfyui_rocm_launcher_arch_and_a_quoted_amd_arch_line() -> None:
    # comfyui-rocm#115: the launcher's `[INFO] GPU arch: gfx1200` (its detector: a GPU on the machine) and a reply
    # quoting ComfyUI's `AMD arch: gfx1036` (torch's device) inside a sentence
    snap = snapshot_from_text(["[INFO] Detecting GPU architecture...\n[INFO] GPU arch: gfx1200\n",
                               "[INFO] GPU arch: gfx1200 BUT later it says : [INFO] AMD arch: gfx1036 ; how ?"])
    seen = {(e["tool"], e["gfx"]) for e in snap["gpus_seen"]}
    assert seen == {("text", "gfx1200"), ("torch", "gfx1036")}
    assert "gpus_seen" not in snapshot_from_text(["the AMD arch: unknown, GPU arch: none"])


def test_a_wsl2_kernel_release_and_llama_cpps_device_list() -> None:
    # rocm-cli#276: "OS: WSL2 Ubuntu 24.04.4 LTS (kernel 6.18.x-microsoft-standard-WSL2)" and lemonade's device
    snap = snapshot_from_text([("- OS: WSL2 Ubuntu 24.04.4 LTS (kernel 6.18.x-microsoft-standard-WSL2)\n"
                               "- Inference: device `ROCm0 : AMD Radeon(TM) 8060S Graphics`\n")])
    assert snap["system"]["wsl"] is True and snap["system"]["hip_devices_seen"] == 1
    assert snap["gpus_seen"] == [{"tool": "llama.cpp", "name": "AMD Radeon(TM) 8060S Graphics", "index": 0}]
    listed = snapshot_from_text([("Available devices:\n  ROCm0: AMD Radeon RX 7900 XTX (24560 MiB, 24472 MiB free)\n"
                                 "  ROCm1: AMD Radeon RX 7900 XTX (24560 MiB, 24500 MiB free)\n")])
    assert listed["system"]["hip_devices_seen"] == 2
    assert "system" not in snapshot_from_text(["5.15.0-119-generic and a Microsoft keyboard"])
    dxg = snapshot_from_text(["[    1.519442] misc dxg: dxgk: dxgkio_query_adapter_info: Ioctl failed: -22\n"])
    assert dxg["system"]["wsl"] is True  # dxgkrnl logs only in WSL's kernel (microsoft/WSL#41654)


def test_a_makefile_assignment_of_the_gpu_variables() -> None:
    # HardAndHeavy/comfyui-rocm-docker#2: the Makefile passed its detector's error text as the override
    env = snapshot_from_text(['HSA_OVERRIDE_GFX_VERSION = "GFX version detection error"\nHIP_VISIBLE_DEVICES ?= 0'])["env"]
    assert env == {"HSA_OVERRIDE_GFX_VERSION": "GFX version detection error", "HIP_VISIBLE_DEVICES": "0"}
    assert "env" not in snapshot_from_text(["if HSA_OVERRIDE_GFX_VERSION == x:", "OTHER_VAR = 1"])


def test_a_python_c_that_ran_work_on_the_gpu_shows_torch_has_it() -> None:
    # VoiceStudio#1274: a bf16 matmul loop on device='cuda' printed its TFLOPS: torch used the GPU
    ran = ("$ python3 -c \"import torch; a=torch.randn(8,8,device='cuda'); print((a@a).sum().item())\"\n12.5\n")
    assert snapshot_from_text([ran])["runtime"] == {"is_available": True}
    failed = ran.replace("12.5\n", "Traceback (most recent call last):\nRuntimeError: No HIP GPUs are available\n")
    assert "runtime" not in snapshot_from_text([failed])
    cpu = ran.replace("device='cuda'", "device='cpu'")
    assert "runtime" not in snapshot_from_text([cpu])


def test_a_device_nodes_mode_said_in_a_sentence() -> None:
    # hal0#420: "- `/dev/kfd` = `crw-rw---- root root` after boot; `hal0` cannot read it."
    snap = snapshot_from_text(["- `/dev/kfd` = `crw-rw---- root root` after boot; `hal0` cannot read it."])
    assert snap["paths"]["/dev/kfd"] == {"exists": True, "mode": "0o20660", "owner": "root", "group": "root"}
    assert "paths" not in snapshot_from_text(["see /dev/kfd for details"])


def test_ollama_09s_model_weights_buffer_and_a_radeon_name_with_its_target() -> None:
    # ollama#11420: `msg="model weights" buffer=ROCm0 size="19.0 GiB"` (ollama 0.9); lemonade#2002: `Radeon 860M (gfx1152)`
    snap = snapshot_from_text([('time=2025-07-14T16:17:55.773-04:00 level=INFO source=ggml.go:377 msg="model weights" '
                               'buffer=ROCm0 size="19.0 GiB"\n')])
    assert snap["system"]["hip_devices_seen"] == 1
    cpu = snapshot_from_text(['level=INFO source=ggml.go:377 msg="model weights" buffer=CPU size="43.8 GiB"\n'])
    assert "system" not in cpu
    named = snapshot_from_text(["Ryzen AI 7 350 / Radeon 860M (gfx1152)"])
    assert named["gpus_seen"] == [{"tool": "text", "gfx": "gfx1152"}]


def test_ollamas_runner_environment() -> None:
    # ollama#10421: `msg=subprocess environment="[… HIP_VISIBLE_DEVICES=1 ROCR_VISIBLE_DEVICES=GPU-… …]"`
    line = ('time=2025-04-26T15:49:32.368Z level=DEBUG source=server.go:423 msg=subprocess environment="[PATH=/usr/bin '
            'HIP_VISIBLE_DEVICES=1 ROCR_VISIBLE_DEVICES=GPU-7685bd29c5086f3d HSA_OVERRIDE_GFX_VERSION=10.3.0]"')
    env = snapshot_from_text([line])["env"]
    assert env["HIP_VISIBLE_DEVICES"] == "1" and env["ROCR_VISIBLE_DEVICES"] == "GPU-7685bd29c5086f3d"
    assert env["HSA_OVERRIDE_GFX_VERSION"] == "10.3.0"


def test_a_toolbox_create_and_the_node_labellers_device_id() -> None:
    # kyuz0/amd-strix-halo-vllm-toolboxes#6: podman's flags after `--`; k8s-device-plugin#112: the labeller's device id
    run = snapshot_from_text([("toolbox create vllm --image docker.io/kyuz0/vllm:latest -- --device /dev/dri "
                              "--device /dev/kfd --group-add video --group-add render")])["container_run"][0]
    assert (run["runtime"], run["via"], run["devices"], run["group_add"]) == ("podman", "toolbox", ["/dev/dri", "/dev/kfd"],
                                                                               ["video", "render"])
    seen = snapshot_from_text(["    amd.com/gpu.device-id: 74b5\n    beta.amd.com/gpu.device-id: 74b5"])["gpus_seen"]
    assert seen == [{"tool": "node-labeller", "pci_id": "1002:74b5"}]


def test_hip_header_paths_name_their_trees() -> None:
    snap = snapshot_from_text([('❯ find / -name "hip_bf16.h" 2>/dev/null\n/usr/include/hip/hip_bf16.h\n'
                               "/opt/rocm-6.4.3/include/hip/hip_bf16.h\n")])
    assert snap["system"]["hip_include_roots"] == ["/usr", "/opt/rocm-6.4.3"]


def test_collectives_reads_releases_the_launch_size_and_a_reported_hang() -> None:
    from rocm_triton_doctor.check.sources import collectives

    # vllm#40980's environment list and launch; RCCL's own banner; a stated ROCm in an issue form
    env_list = "- **ROCm**: 7.2.1\n- **RCCL**: 2.27.7 (built from source with `--amdgpu_targets gfx1201`)"
    assert collectives.parse(env_list) == {"system": {"rccl_version": "2.27.7", "stated_rocm": "7.2.1"}}
    assert collectives.parse("node0:1:1 [0] NCCL INFO NCCL version 2.27.7+hip7.2")["system"]["rccl_version"] == "2.27.7"
    launch = "vllm serve m --tensor-parallel-size 2 --max-num-seqs 1"
    assert collectives.parse(launch) == {"system": {"gpus_per_launch": 2}}
    assert collectives.parse("torchrun --nproc-per-node 8 train.py")["system"]["gpus_per_launch"] == 8
    assert collectives.parse("TP=2 across two GPUs results in a complete deadlock.")["system"] == {
        "gpus_per_launch": 2, "hang_reported": True}
    # collect_env's build line is torch's HIP, not a stated release; nothing said, nothing kept
    assert collectives.parse("ROCM used to build PyTorch: 7.2.26015-fc0010cf6a") == {}
    assert collectives.parse("Tensor cores: yes") == {}


def test_a_sentence_saying_what_a_launcher_set_is_read() -> None:
    from rocm_triton_doctor.check.sources import env

    text = "(Running env on the task reveals that Flux set CUDA_VISIBLE_DEVICES=7, while the cgroup"
    assert env.parse(text) == {"env": {"CUDA_VISIBLE_DEVICES": "7"}}
    assert env.parse("the wrapper exported HSA_OVERRIDE_GFX_VERSION=11.0.0.") == {
        "env": {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}}
    assert env.parse("we set the variable to 7") == {}


def test_collectives_reads_a_markdown_environment_table() -> None:
    # rocm-systems#8178's environment table
    from rocm_triton_doctor.check.sources import collectives

    table = "| Component | Version |\n|---|---|\n| RCCL | 2.27.7 (`2.27.7-HEAD:96a25b5`) |\n| ROCm | 7.2.3 (`7.2.3.0-90`) |"
    assert collectives.parse(table) == {"system": {"rccl_version": "2.27.7", "stated_rocm": "7.2.3"}}


def test_the_issue_form_s_gpu_field_names_the_gpus() -> None:
    # ROCm's issue form: legacy-rocm-build#5264 (`2x AMD Radeon (TM) Pro WX 5100 Graphics`), #5942 (two cards on a line)
    from rocm_triton_doctor.check.sources import gpu_names

    one_line = gpu_names.parse("### GPU\n\n2x AMD Radeon (TM) Pro WX 5100 Graphics\n\n### ROCm Version\n\n6.4.0")
    assert one_line == {"gpus_seen": [{"tool": "text", "name": "AMD Radeon (TM) Pro WX 5100 Graphics"}]}
    two = gpu_names.parse("### GPU\n\nPrimary: RX 7800 XT, Secondary: RX 580\n")
    assert [e["name"] for e in two["gpus_seen"]] == ["RX 7800 XT", "RX 580"]
    assert gpu_names.parse("### GPU\n\nNone\n\n### CPU\n\nAMD Ryzen AI 9 HX 370") == {}
    report = diagnose_text(["### GPU\n\n2x AMD Radeon (TM) Pro WX 5100 Graphics\n\nHIP error: invalid device function"])
    assert any("gfx803" in f.title for f in report.findings)  # the trademark sign does not hide the product


def test_an_apu_s_processor_name_names_its_integrated_gpu() -> None:
    from rocm_triton_doctor.check.sources import gpu_names

    assert gpu_names.parse("### CPU\n\nAMD Ryzen AI 9 HX 370 w/ Radeon 890M\n") == {
        "gpus_seen": [{"tool": "text", "name": "Radeon 890M"}]}
    lscpu = "Model name:                           AMD Ryzen 7 7840HS w/ Radeon 780M Graphics"
    assert gpu_names.parse(lscpu)["gpus_seen"][0]["name"] == "Radeon 780M"
    assert gpu_names.parse("Model name: AMD Ryzen 9 7950X 16-Core Processor") == {}


def test_a_torch_line_alone_is_the_installed_torch() -> None:
    from rocm_triton_doctor.check.sources import pip

    assert pip.parse_torch_line("torch 2.13.0a0+rocm7.13.0a20260422\nHIP 7.13.26154") == {
        "python": {"distributions": {"torch": {"version": "2.13.0a0+rocm7.13.0a20260422"}}}}
    assert pip.parse_torch_line("torch                   2.10.0.dev20251118+rocm7.1")["python"]["distributions"]
    assert pip.parse_torch_line("we use torch 2.7 here") == {} and pip.parse_torch_line("torchvision 0.22.0") == {}


def test_therock_s_per_target_library_wheels_are_read() -> None:
    from rocm_triton_doctor.check.sources import pip

    uv = "rocm-sdk-libraries-gfx1151 ------------------------------ 169.53 MiB/253.10 MiB"
    assert pip.parse_sdk_libraries(uv) == {"python": {"sdk_library_targets": ["gfx1151"]}}
    listed = "rocm_sdk_libraries_gfx110X_all 7.10.0a20251025"
    assert pip.parse_sdk_libraries(listed) == {"python": {"sdk_library_targets": ["gfx110X-all"]}}
    assert pip.parse_sdk_libraries("rocm-sdk-core 7.11.0") == {}


def test_mem_get_info_answering_means_torch_had_the_gpu() -> None:
    # unsloth#7960: a reviewer's script on a working Strix Halo prints torch.cuda.mem_get_info()'s numbers
    text = "torch 2.13.0a0+rocm7.13.0a20260422\nprops.is_integrated:         1\nmem_get_info total:      62.47 GiB\n"
    snap = snapshot_from_text([text])
    assert snap["runtime"]["is_available"] is True
    assert snap["python"]["distributions"]["torch"]["version"] == "2.13.0a0+rocm7.13.0a20260422"
    assert "runtime" not in snapshot_from_text(["mem_get_info is what we call next"])


def test_invokeai_s_gpu_model_field_and_a_product_name_without_radeon() -> None:
    # invoke-ai/InvokeAI#7574: `### GPU model` / `RX 7600 XT` names a gfx1102
    from rocm_triton_doctor.check.facts.gpus import gfx_for_name
    from rocm_triton_doctor.check.sources import gpu_names

    assert gpu_names.parse("### GPU model\n\nRX 7600 XT\n\n### GPU VRAM\n\n16GB") == {
        "gpus_seen": [{"tool": "text", "name": "RX 7600 XT"}]}
    g = gfx_for_name("RX 7600 XT")
    assert g is not None and g.gfx == "gfx1102"
    assert gfx_for_name("RX 9070 XT") is not None and gfx_for_name("RX 9070 XT").gfx == "gfx1201"  # type: ignore[union-attr]


def test_docker_compose_log_prefixes_are_dropped_where_two_lines_share_one() -> None:
    # text-generation-inference#223: a service's output behind compose's `name-1  | ` prefix.
    text = ("# open-assistant-inference-worker-1     | torch version:  2.0.0+cu118\n"
            "# open-assistant-inference-worker-1     | Torch CUDA:  False\n")
    assert snapshot_from_text([text])["runtime"]["torch_version"] == "2.0.0+cu118"
    # one line with such a shape is not a log (a table row, a sentence): left as it is
    assert "runtime" not in snapshot_from_text(["gpu-0   | torch version:  2.0.0+cu118\n"])
