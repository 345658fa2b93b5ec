"""Layer (a): parsers on real captured text, and garbage in -> no traceback (hypothesis)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from rocm_triton_doctor.check.facts import build_facts
from rocm_triton_doctor.check.facts.gpus import parse_amd_smi_static, parse_kfd_properties
from rocm_triton_doctor.check.facts.nvidia import parse_nvidia_proc_version, parse_nvidia_smi_csv
from rocm_triton_doctor.check.facts.platform import container_from, is_wsl, parse_kernel_config, parse_key_value
from rocm_triton_doctor.check.facts.rocm import parse_rocm_version
from rocm_triton_doctor.check.facts.rocminfo import parse_agent_enumerator, parse_rocminfo

TEXT = Path(__file__).parent / "fixtures" / "text"


def read(name: str) -> str:
    return (TEXT / name).read_text()


def test_rocminfo_mi300x_agent() -> None:
    rep = parse_rocminfo(read("rocminfo-mi300x-agent.txt"))
    assert len(rep.gpus) == 1
    gpu = rep.gpus[0]
    assert (gpu.name, gpu.marketing_name, gpu.node, gpu.chip_id) == ("gfx942", "AMD Instinct MI300X", 2, 0x74A1)
    assert gpu.uuid == "GPU-8af705259683161c"


def test_rocminfo_7900xtx_block_after_pool_lines() -> None:
    rep = parse_rocminfo(read("rocminfo-2x7900xtx.txt"))
    assert [(a.name, a.node, a.compute_units, a.chip_id) for a in rep.gpus] == [("gfx1100", 2, 96, 0x744C)]


def test_rocminfo_cpu_agent_is_not_a_gpu() -> None:
    rep = parse_rocminfo(read("rocminfo-rx5600-cpu-agent.txt"))
    assert rep.rock_loaded is True
    assert len(rep.agents) == 1 and rep.gpus == []
    assert rep.agents[0].device_type == ""  # the capture ends before 'Device Type'


def test_rocminfo_errors_are_kept_verbatim() -> None:
    rep = parse_rocminfo(read("rocminfo-permission-denied.txt"))
    assert rep.agents == []
    assert rep.errors[0] == "Unable to open /dev/kfd read-write: Permission denied"
    rep = parse_rocminfo(read("rocminfo-enomem.txt"))
    assert any("HSA_STATUS_ERROR_OUT_OF_RESOURCES" in e for e in rep.errors)


def test_kernel_config_not_set_line() -> None:
    cfg = parse_kernel_config(read("kernel-config-talos.txt"))
    assert cfg["CONFIG_HSA_AMD"] == "n"
    assert cfg["CONFIG_DRM_AMD_DC_FP"] == "y"
    assert "CONFIG_DRM_AMD_SECURE_DISPLAY" in cfg


def test_kfd_properties_ignores_junk_lines() -> None:
    props = parse_kfd_properties("simd_count 80\ngfx_target_version 110501\njunk\nx y z\nbad value\n")
    assert props == {"simd_count": 80, "gfx_target_version": 110501}


def test_os_release_quotes() -> None:
    kv = parse_key_value('NAME="Ubuntu"\nVERSION_ID="24.04"\nID=ubuntu\n# comment\nBROKEN\n')
    assert kv == {"NAME": "Ubuntu", "VERSION_ID": "24.04", "ID": "ubuntu"}


def test_nvidia_smi_csv_and_proc_version() -> None:
    gpus = parse_nvidia_smi_csv("NVIDIA H200, 580.159.03, 143771 MiB, 9.0, 00000000:19:00.0\n\ngarbage\n")
    assert [(g.name, g.driver_version, g.compute_cap) for g in gpus] == [("NVIDIA H200", "580.159.03", "9.0")]
    assert parse_nvidia_proc_version(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.03  Thu Oct  9 2025\n") == "580.159.03"


def test_amd_smi_static_json_shapes() -> None:
    text = '[{"gpu": 0, "asic": {"market_name": "MI325X", "device_id": "0x74a5", "target_graphics_version": "gfx942"}}]'
    assert parse_amd_smi_static(text)[0]["target_graphics_version"] == "gfx942"
    assert parse_amd_smi_static('{"gpu_data": ' + text + "}")[0]["device_id"] == "0x74a5"
    assert parse_amd_smi_static("not json") == []


def test_container_and_wsl_detection() -> None:
    assert container_from("0::/kubepods/besteffort/pod1", False, None) == "kubernetes"
    assert container_from(None, True, None) == "docker"
    assert container_from("0::/init.scope", False, None) is None
    assert is_wsl("Linux version 5.15.146.1-microsoft-standard-WSL2", None)
    assert not is_wsl("Linux version 6.8.0-45-generic", "6.8.0-45-generic")


PARSERS = [parse_rocminfo, parse_kfd_properties, parse_kernel_config, parse_key_value,
           parse_agent_enumerator, parse_nvidia_smi_csv, parse_nvidia_proc_version,
           parse_amd_smi_static, parse_rocm_version]


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_parsers_never_raise_on_garbage(text: str) -> None:
    for parse in PARSERS:
        parse(text)


json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=30))
json_value = st.recursive(json_leaf, lambda kids: st.one_of(st.lists(kids, max_size=4),
                                                            st.dictionaries(st.text(max_size=10), kids, max_size=4)),
                          max_leaves=12)
PATHS = ["/etc/os-release", "/proc/version", "/proc/sys/kernel/osrelease", "/sys/module/amdgpu/initstate",
         "/sys/class/kfd/kfd/topology/nodes/1/properties", "/opt/rocm/.info/version", "/dev/kfd",
         "/sys/class/kfd/kfd/topology/nodes/1/mem_banks/0/properties", "/boot/config-6.8.0"]


@settings(max_examples=150, deadline=None)
@given(files=st.dictionaries(st.sampled_from(PATHS), st.one_of(st.none(), st.text(max_size=200), json_value)),
       paths=st.dictionaries(st.sampled_from(PATHS), json_value),
       env=json_value, python=json_value, runtime=json_value, commands=json_value, user=json_value)
def test_facts_and_checks_survive_garbage_snapshots(files: dict, paths: dict, env: object, python: object,
                                                     runtime: object, commands: object, user: object) -> None:
    """Garbage anywhere in a snapshot gives findings (possibly `error` facts), never a traceback."""
    from rocm_triton_doctor.check.checks import INTERNAL_ERROR, run_checks

    snap = {"schema": "rocm-triton-doctor/snapshot/1", "files": files, "paths": paths, "env": env, "python": python,
            "runtime": runtime, "commands": commands, "user": user}
    findings = run_checks(build_facts(snap))
    crashed = [f.title for f in findings if f.id == INTERNAL_ERROR]
    assert not crashed, crashed
