"""facts/__init__.py: the Facts bundle and build_facts. Garbage in -> no traceback (hypothesis), for every parser
and for whole snapshots through facts and checks."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rocm_triton_doctor.check.checks import INTERNAL_ERROR, run_checks
from rocm_triton_doctor.check.facts import Status, build_facts
from rocm_triton_doctor.check.facts.gpus import parse_amd_smi_static, parse_kfd_properties
from rocm_triton_doctor.check.facts.nvidia import parse_nvidia_proc_version, parse_nvidia_smi_csv
from rocm_triton_doctor.check.facts.platform import parse_kernel_config, parse_key_value
from rocm_triton_doctor.check.facts.rocm import parse_rocm_version
from rocm_triton_doctor.check.facts.rocminfo import parse_agent_enumerator, parse_rocminfo

from ..conftest import facts, minimal_snapshot

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
    snap = {"schema": "rocm-triton-doctor/snapshot/1", "files": files, "paths": paths, "env": env, "python": python,
            "runtime": runtime, "commands": commands, "user": user}
    findings = run_checks(build_facts(snap))
    crashed = [f.title for f in findings if f.id == INTERNAL_ERROR]
    assert not crashed, crashed


def test_an_empty_snapshot_knows_nothing() -> None:
    f = build_facts(minimal_snapshot())
    unknown = [name for name in ("os", "kernel_release", "gpus", "dev_kfd", "rocm", "python", "runtime", "nvidia",
                                 "env", "which", "user", "pci_display") if getattr(f, name).status is Status.UNKNOWN]
    assert len(unknown) == 12 and f.commands == () and f.amd_gpus_present is None


def test_bundle_helpers() -> None:
    f = facts(env={"HIP_VISIBLE_DEVICES": "0"}, files={"/sys/class/kfd/kfd/topology/nodes/0/properties": "simd_count 0\n"},
              paths={"/sys/class/kfd/kfd/topology/nodes": {"exists": True, "entries": ["0"]}},
              commands={"rocminfo": {"argv": ["rocminfo"], "returncode": 0, "stdout": ""}, "amd-smi": None})
    assert f.env_var("HIP_VISIBLE_DEVICES") == "0" and f.env_var("ROCR_VISIBLE_DEVICES") is None
    assert f.amd_gpus_present is False  # KFD has only a CPU node (its listing says so)
    assert [c.name for c in f.commands] == ["rocminfo"]  # amd-smi: probed and missing
    assert f.raw["env"] == {"HIP_VISIBLE_DEVICES": "0"}
