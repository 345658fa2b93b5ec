"""checks/gpus.py: one test per severity each check can give."""

from __future__ import annotations

from ..conftest import AMD_LIVE, gpu, one, rocm_python, run, minimal_snapshot

MI300X = gpu(1, 90402, 0x74A1)  # gfx942
PCI = "/sys/bus/pci/devices"


def pci_amd(address: str, device: str) -> dict[str, str]:
    return {f"{PCI}/{address}/class": "0x030000\n", f"{PCI}/{address}/vendor": "0x1002\n",
            f"{PCI}/{address}/device": f"{device}\n"}


def test_gpus_detected_info_per_gpu() -> None:
    f = one("gpus-detected", files=MI300X)
    assert f.severity.value == "info" and f.title.startswith("node 1: ") and "(gfx942)" in f.title


def test_gpus_detected_warn_when_pci_shows_more_gpus_than_kfd() -> None:
    files = {**MI300X, **pci_amd("0000:03:00.0", "0x74a1"), **pci_amd("0000:83:00.0", "0x74a1")}
    # The probe's listing of the node directory makes the KFD side complete: then the kernel log is the fix.
    listing = {"paths": {"/sys/class/kfd/kfd/topology/nodes": {"exists": True, "entries": ["1"]}}}
    out = run("gpus-detected", minimal_snapshot(files=files, **listing))
    assert [f.severity.value for f in out] == ["info", "warn"]
    assert out[1].title == "2 AMD display devices on PCI but only 1 GPU node(s) in KFD"
    assert out[1].fix is not None and "dmesg" in out[1].fix.commands[0]
    # Without it the evidence may lack a node's files (a paste, a partial snapshot): a warning that asks, no fix.
    out = run("gpus-detected", minimal_snapshot(files=files))
    assert out[1].title == "2 AMD display devices on PCI but only 1 GPU node(s) in the evidence"
    assert out[1].fix is None and "ls /sys/class/kfd/kfd/topology/nodes" in out[1].detail


def test_gpus_detected_skip_when_unknown() -> None:
    assert one("gpus-detected").title == "GPU list unknown"


def test_gpus_detected_fail_on_amd_machine_without_gpu_nodes() -> None:
    f = one("gpus-detected", files={**AMD_LIVE, "/sys/class/kfd/kfd/topology/system_properties": None})
    assert (f.severity.value, f.title) == ("fail", "no AMD GPU visible to ROCm")


def test_gpus_detected_skip_on_amd_machine_whose_gpus_were_not_probed() -> None:
    f = one("gpus-detected", files=AMD_LIVE)  # amdgpu loaded, KFD topology not in the snapshot: unknown, not absent
    assert f.severity.value == "skip" and "rocminfo" in f.detail


IGPU_DGPU = {**gpu(1, 100306), **gpu(2, 110000)}  # gfx1036 (Raphael iGPU) + gfx1100 (Navi 31)


def test_igpu_with_dgpu_skip_with_one_gpu() -> None:
    assert one("igpu-with-dgpu", files=MI300X).title == "not applicable: not an iGPU + dGPU machine"


def test_igpu_with_dgpu_ok_when_visibility_restricted() -> None:
    assert one("igpu-with-dgpu", files=IGPU_DGPU, env={"ROCR_VISIBLE_DEVICES": "1"}).severity.value == "ok"


def test_igpu_with_dgpu_warn_tells_which_indices_to_keep() -> None:
    f = one("igpu-with-dgpu", files=IGPU_DGPU, env={})
    assert f.severity.value == "warn" and f.fix is not None
    assert f.fix.commands == ("export ROCR_VISIBLE_DEVICES=1",)


def test_igpu_with_dgpu_fail_when_amdgpu_arch_lists_only_the_igpu() -> None:
    # legacy-rocm-build#4390 (Windows): amdgpu-arch printed gfx1036 alone; Windows lists the iGPU and an RX 6800 XT.
    f = one("igpu-with-dgpu", system={"os_family": "windows"},
            gpus_seen=[{"tool": "amdgpu-arch", "gfx": "gfx1036", "index": 0},
                       {"tool": "wmi", "name": "AMD Radeon(TM) Graphics"}, {"tool": "wmi", "name": "AMD Radeon RX 6800 XT"}])
    assert f.severity.value == "fail" and "only the integrated GPU" in f.title
    assert f.fix is not None and not f.fix.commands and "BIOS" in f.fix.text  # no index can pick an unlisted GPU


def test_igpu_with_dgpu_gives_no_index_from_an_order_that_is_not_the_runtimes() -> None:
    # Windows' adapter list (or lspci) is not HIP's numbering: the fix says how to find it instead of guessing.
    f = one("igpu-with-dgpu", gpus_seen=[{"tool": "wmi", "name": "AMD Radeon(TM) Graphics"},
                                         {"tool": "wmi", "name": "AMD Radeon RX 6800 XT"}])
    assert f.severity.value == "warn" and f.fix is not None and not f.fix.commands
    assert "amdgpu-arch" in f.fix.text


def test_igpu_with_dgpu_uses_hip_visible_devices_for_torchs_numbers() -> None:
    # TheRock#5543: torch listed 'AMD Radeon(TM) Graphics' (the generic APU name: an iGPU) as cuda:0.
    seen = [{"tool": "torch", "name": "AMD Radeon(TM) Graphics", "index": 0},
            {"tool": "torch", "name": "AMD Radeon RX 7900 XT", "index": 1}]
    f = one("igpu-with-dgpu", gpus_seen=seen)
    assert f.severity.value == "warn" and f.fix is not None and f.fix.commands == ("export HIP_VISIBLE_DEVICES=1",)
    win = one("igpu-with-dgpu", gpus_seen=seen, system={"os_family": "windows"})
    assert win.fix is not None and win.fix.commands == ('$env:HIP_VISIBLE_DEVICES="1"',)


def test_igpu_with_dgpu_fails_where_torch_opened_the_igpu_and_another_tool_names_the_dgpu() -> None:
    # comfyui-rocm#115: the launcher found gfx1200, ComfyUI's torch said `AMD arch: gfx1036`; the fix was the BIOS
    seen = [{"tool": "text", "gfx": "gfx1200"}, {"tool": "torch", "gfx": "gfx1036"}]
    f = one("igpu-with-dgpu", gpus_seen=seen, system={"os_family": "windows"})
    assert f.severity.value == "fail" and "torch opened the integrated GPU (gfx1036)" in f.title
    assert f.fix is not None and not f.fix.commands and "BIOS" in f.fix.text and "HIP_VISIBLE_DEVICES" in f.fix.text
    # torch's own list with both GPUs keeps the index rules below
    both = [{"tool": "torch", "gfx": "gfx1036", "index": 0}, {"tool": "torch", "gfx": "gfx1200", "index": 1}]
    assert one("igpu-with-dgpu", gpus_seen=both).severity.value == "warn"


def test_igpu_with_dgpu_ok_where_torchs_device_0_is_the_discrete_gpu_and_it_runs() -> None:
    # InvokeAI#9490: torch listed the RX 7900 XTX as cuda:0 and the 760M as cuda:1, and the app ran on cuda:0.
    seen = [{"tool": "torch", "name": "AMD Radeon RX 7900 XTX", "index": 0},
            {"tool": "torch", "name": "AMD Radeon 760M Graphics", "index": 1}]
    f = one("igpu-with-dgpu", gpus_seen=seen, runtime={"is_available": True})
    assert f.severity.value == "ok" and f.fix is not None and f.fix.commands == ("export HIP_VISIBLE_DEVICES=0",)
    # unknown whether torch runs, or an error shown: still the warning
    assert one("igpu-with-dgpu", gpus_seen=seen).severity.value == "warn"


def test_gfx_rocm_support_skip_without_system_rocm() -> None:
    f = one("gfx-rocm-support", files={**MI300X, "/opt/rocm/.info/version": None})
    assert f.title == "no system ROCm installed (PyTorch wheels bundle their own)"


def test_gfx_rocm_support_info_for_unknown_rocm() -> None:
    f = one("gfx-rocm-support", files={**MI300X, "/opt/rocm/.info/version": "99.0.0\n"})
    assert f.severity.value == "info" and f.title.startswith("ROCm 99.0.0 is not in the doctor's knowledge")


def test_gfx_rocm_support_ok() -> None:
    f = one("gfx-rocm-support", files={**MI300X, "/opt/rocm/.info/version": "6.4.0\n"})
    assert (f.severity.value, f.title) == ("ok", "gfx942 is supported by ROCm 6.4.0")


def test_gfx_rocm_support_warn_for_unlisted_target() -> None:
    f = one("gfx-rocm-support", files={**gpu(1, 100301), "/opt/rocm/.info/version": "6.4.0\n"})
    assert f.severity.value == "warn" and f.title.startswith("gfx1031 (")


def test_gfx_torch_arch_skip_without_rocm_torch() -> None:
    assert one("gfx-torch-arch", files=MI300X, python=rocm_python("2.9.1+cu128")).severity.value == "skip"


def test_gfx_torch_arch_ok() -> None:
    f = one("gfx-torch-arch", files=MI300X, python=rocm_python("2.9.1+rocm6.4"))
    assert (f.severity.value, f.title) == ("ok", "gfx942 is in torch's arch list")


def test_gfx_torch_arch_fail_names_a_wheel_that_has_the_target() -> None:
    f = one("gfx-torch-arch", files=gpu(1, 100301), python=rocm_python("2.5.1+rocm6.2"), env={})
    assert f.severity.value == "fail" and f.title.startswith("gfx1031 (")
    assert f.fix is not None and "HSA_OVERRIDE_GFX_VERSION=10.3.0" in f.fix.text


def test_gfx_torch_arch_warns_without_commands_when_the_environment_is_unknown() -> None:
    # an override may already map gfx1031 to gfx1030: no environment, no command
    f = one("gfx-torch-arch", files=gpu(1, 100301), python=rocm_python("2.5.1+rocm6.2"))
    assert f.severity.value == "warn" and f.fix is not None and not f.fix.commands


def test_gfx_torch_arch_fails_when_the_runtime_itself_reports_the_missing_target() -> None:
    # ComfyUI#8211: torch's own gcnArchName says gfx1151; the environment is not recorded, but an override would have
    # changed what the runtime reports, so kernels run as gfx1151 and torch 2.8+rocm6.4 has none.
    rt = {"torch_version": "2.8.0.dev20250518+rocm6.4", "is_available": True}
    f = one("gfx-torch-arch", runtime=rt, gpus_seen=[{"tool": "torch", "gfx": "gfx1151"}])
    assert f.severity.value == "fail"
    # The chip's own id (lspci) does not include an override: there an unrecorded environment leaves it open.
    g = one("gfx-torch-arch", runtime=rt, gpus_seen=[{"tool": "lspci", "pci_id": "1002:1586"}])
    assert g.severity.value == "warn"


def test_rocminfo_failing_beside_a_dropped_gpu_names_rocr_visible_devices() -> None:
    # legacy-rocm-build#5942: an RX 580 (gfx803) beside an RX 7800 XT (gfx1101); rocminfo dies in hsa_init.
    snap = {"gpus_seen": [{"tool": "lspci", "gfx": "gfx1101", "name": "Navi 32"},
                          {"tool": "lspci", "gfx": "gfx803", "name": "Ellesmere"}],
            "commands": {"rocminfo": "ROCk module version 6.12.12 is loaded\nhsa api call failure at: "
                                     "rocminfo.cc:1306\nCall returned HSA_STATUS_ERROR: A generic error has occurred."}}
    fails = [f for f in run("gpus-detected", minimal_snapshot(**snap)) if f.severity.value == "fail"]
    assert fails and fails[0].fix is not None and "ROCR_VISIBLE_DEVICES" in fails[0].fix.text


def test_gfx_torch_arch_does_not_read_a_source_or_image_builds_tag_as_the_index() -> None:
    # legacy-rocm-build#5404: AMD's rocm/pytorch image (`+rocm7.0.0.git64359f59`) ran on gfx1151, which the rocm7.0
    # index's wheels lack; TheRock's nightlies (`+rocm7.0.0rc20250828`) carry their own targets too.
    for v in ("2.8.0+rocm7.0.0.git64359f59", "2.7.1+rocm7.0.0rc20250828"):
        f = one("gfx-torch-arch", files=gpu(1, 110501), python=rocm_python(v), env={})
        assert f.severity.value == "skip" and f.title == "torch's gfx list is unknown", v
    assert one("gfx-torch-arch", files=gpu(1, 110501), python=rocm_python("2.8.0+rocm6.4"), env={}).severity.value == "fail"


STRIX_HALO = gpu(1, 110501)  # gfx1151, an APU
OOM = [{"text": "ds4: ROCm model arena alloc failed for tensor-span:105 (1792.00 MiB chunk): out of memory"}]
GTT = {"dmesg": "[    1.768086] amdgpu 0000:bd:00.0:  63968M of GTT memory ready.\n"}


def test_apu_gtt_limit_fails_where_an_apu_ran_out_at_its_gtt_size() -> None:
    # ds4#475: Strix Halo with the kernel's default GTT (half of 128 GB) could not map an 80 GiB model
    f = one("apu-gtt-limit", files=STRIX_HALO, errors=OOM, commands=GTT)
    assert f.severity.value == "fail" and "62.5 GiB of GTT" in f.title
    assert f.fix is not None and "ttm.pages_limit=" in f.fix.text and "amdgpu.gtt_size" not in f.fix.text
    assert "half of the RAM" in f.detail
    # a GTT size already set on the command line is named instead of the default
    cmdline = {"/proc/cmdline": "BOOT_IMAGE=/vmlinuz quiet ttm.pages_limit=16777216 ttm.page_pool_size=16777216\n"}
    set_ = one("apu-gtt-limit", files={**STRIX_HALO, **cmdline}, errors=OOM, commands=GTT)
    assert set_.severity.value == "fail" and "set by ttm.pages_limit=16777216" in set_.detail


def test_apu_gtt_limit_needs_an_apu_an_oom_and_the_gtt_line() -> None:
    assert one("apu-gtt-limit", files=STRIX_HALO, commands=GTT).severity.value == "skip"  # no OOM
    assert one("apu-gtt-limit", files=STRIX_HALO, errors=OOM).severity.value == "skip"  # GTT unknown
    # a discrete GPU (its own VRAM) or one beside the APU: not this check's question
    assert one("apu-gtt-limit", files=IGPU_DGPU, errors=OOM, commands=GTT).severity.value == "skip"
    assert one("apu-gtt-limit", errors=OOM, commands=GTT).severity.value == "skip"
