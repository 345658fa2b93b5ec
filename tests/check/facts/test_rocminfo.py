"""facts/rocminfo.py: rocminfo agent blocks on real captures, and the facts built from them."""

from __future__ import annotations

from pathlib import Path

from rocm_triton_doctor.check.facts import Status
from rocm_triton_doctor.check.facts.rocminfo import parse_agent_enumerator, parse_rocminfo

from ...conftest import FIXTURES
from ..conftest import facts

TEXT: Path = FIXTURES / "text"


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


def test_rocminfo_fact_keeps_the_report_of_a_failed_run() -> None:
    run = {"argv": ["rocminfo"], "returncode": 1, "stdout": read("rocminfo-permission-denied.txt")}
    f = facts(commands={"rocminfo": run}).rocminfo
    assert f.status is Status.ERROR and f.error == "Unable to open /dev/kfd read-write: Permission denied"
    assert f.value is not None and f.value.errors
    assert facts(commands={"rocminfo": {"argv": ["rocminfo"], "timed_out": True}}).rocminfo.error == "timed out"
    assert facts(commands={"rocminfo": read("rocminfo-mi300x-agent.txt")}).rocminfo.found  # pasted text


def test_agent_enumerator() -> None:
    assert parse_agent_enumerator("gfx000\ngfx942\nnot a target\ngfx1100\n") == ["gfx000", "gfx942", "gfx1100"]
    f = facts(commands={"rocm_agent_enumerator": {"argv": ["rocm_agent_enumerator"], "stdout": "gfx000\ngfx942\n"}})
    assert f.agent_enumerator.value == ("gfx000", "gfx942")
    assert facts().agent_enumerator.status is Status.UNKNOWN


def test_an_agent_excerpt_without_its_agent_header_is_still_an_agent() -> None:
    # aiter#3139: the reporter pasted one agent from `Name: gfx942` on, no `Agent N` line (indentation stripped).
    text = ("Name:                    gfx942\nMarketing Name:          AMD Instinct MI325X\nVendor Name:             AMD\n"
            "Device Type:             GPU\nChip ID:                 29861(0x74a5)\nCompute Unit:            304\n"
            "Name:                    gfx942\nMarketing Name:          AMD Instinct MI325X\nDevice Type:             GPU\n")
    rep = parse_rocminfo(text)
    assert [(a.name, a.marketing_name, a.chip_id) for a in rep.gpus][0] == ("gfx942", "AMD Instinct MI325X", 0x74A5)
    assert len(rep.gpus) == 2
    # `Name:` without rocminfo's agent keys (pip show) opens nothing
    assert parse_rocminfo("Name: torch\nVersion: 2.9.1\nName: gfx942\n").agents == []
    # amdgpu#209: `rocminfo | grep Name` on a Strix Halo lists the CPU, the GPU with its ISA names and an NPU agent;
    # the NPU's marketing name is not the GPU's
    grep = ("  Name:                    AMD RYZEN AI MAX+ PRO 395 w/ Radeon 8060S\n"
            "  Marketing Name:          AMD RYZEN AI MAX+ PRO 395 w/ Radeon 8060S\n"
            "  Name:                    gfx1151\n  Marketing Name:          AMD Radeon Graphics\n"
            "      Name:                    amdgcn-amd-amdhsa--gfx1151\n"
            "      Name:                    amdgcn-amd-amdhsa--gfx11-generic\n"
            "  Name:                    aie2p\n  Marketing Name:          RyzenAI-npu5\n")
    assert [(a.name, a.marketing_name) for a in parse_rocminfo(grep).gpus] == [("gfx1151", "AMD Radeon Graphics")]
