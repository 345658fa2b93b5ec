"""facts/gpus.py: KFD node properties -> Gpu (real gfx, overrides, name, VRAM), and the rocminfo fallback."""

from __future__ import annotations

from rocm_triton_doctor.check.facts import Status
from rocm_triton_doctor.check.facts.gpus import parse_amd_smi_static, parse_kfd_properties

from ..conftest import KFD, facts, gpu


def test_kfd_properties_ignores_junk_lines() -> None:
    props = parse_kfd_properties("simd_count 80\ngfx_target_version 110501\njunk\nx y z\nbad value\n")
    assert props == {"simd_count": 80, "gfx_target_version": 110501}


def test_amd_smi_static_json_shapes() -> None:
    text = '[{"gpu": 0, "asic": {"market_name": "MI325X", "device_id": "0x74a5", "target_graphics_version": "gfx942"}}]'
    assert parse_amd_smi_static(text)[0]["target_graphics_version"] == "gfx942"
    assert parse_amd_smi_static('{"gpu_data": ' + text + "}")[0]["device_id"] == "0x74a5"
    assert parse_amd_smi_static("not json") == []


def test_gpu_from_kfd_skips_cpu_nodes_and_sums_vram() -> None:
    files = {f"{KFD}/0/properties": "simd_count 0\n", **gpu(2, 90402, 0x74A1),
             f"{KFD}/2/mem_banks/0/properties": "heap_type 1\nsize_in_bytes 206141652992\n"}
    (g,) = facts(files=files).gpus.value or ()
    assert (g.node, g.gfx, g.effective_gfx, g.compute_units, g.vram_bytes) == (2, "gfx942", "gfx942", 40, 206141652992)
    assert g.integrated is False and g.label.endswith("(gfx942)")


def test_per_node_override_beats_global() -> None:
    env = {"HSA_OVERRIDE_GFX_VERSION": "11.0.0", "HSA_OVERRIDE_GFX_VERSION_2": "10.3.0"}
    g1, g2 = facts(files={**gpu(1, 110000), **gpu(2, 100302)}, env=env).gpus.value or ()
    assert (g1.effective_gfx, g1.override_var) == ("gfx1100", "HSA_OVERRIDE_GFX_VERSION")
    assert (g2.gfx, g2.effective_gfx, g2.override, g2.override_var) == ("gfx1032", "gfx1030", "10.3.0",
                                                                        "HSA_OVERRIDE_GFX_VERSION_2")


def test_torch_device_name_replaces_the_generic_one() -> None:
    runtime = {"devices": [{"index": 0, "name": "AMD Radeon RX 6600"}]}
    assert [g.name for g in facts(files=gpu(1, 100302), runtime=runtime).gpus.value or ()] == ["AMD Radeon RX 6600"]
    hidden = facts(files=gpu(1, 100302), runtime=runtime, env={"HIP_VISIBLE_DEVICES": "0"}).gpus.value or ()
    assert hidden[0].name.startswith("Navi 23")


def test_rocminfo_fallback_reports_real_gfx_under_override() -> None:
    text = "Agent 2\n  Name: gfx1030\n  Marketing Name: AMD Radeon RX 6600\n  Node: 1\n  Device Type: GPU\n  Chip ID: 29695(0x73ff)\n"
    (g,) = facts(commands={"rocminfo": text}, env={"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}).gpus.value or ()
    assert (g.gfx, g.effective_gfx, g.source) == ("gfx1032", "gfx1030", "rocminfo")


def test_gpus_absent_or_unknown() -> None:
    cpu_node = {f"{KFD}/0/properties": "simd_count 0\n"}
    # Only a CPU node among the files read: absent only where the node list (the live probe's listing) or a clean
    # rocminfo says there is no other node; a paste of node 0, or a snapshot that lost node 1's files, is unknown.
    assert facts(files=cpu_node).gpus.status is Status.UNKNOWN
    assert facts(files=cpu_node, paths={KFD: {"exists": True, "entries": ["0"]}}).gpus.status is Status.ABSENT
    assert facts(files=cpu_node, paths={KFD: {"exists": True, "entries": ["0", "1"]}}).gpus.status is Status.UNKNOWN
    assert facts(paths={"/sys/class/kfd": None}).gpus.status is Status.ABSENT
    assert facts().gpus.status is Status.UNKNOWN


def test_gpu_names_with_one_word_codenames_and_generic_ones() -> None:
    from rocm_triton_doctor.check.facts.gpus import gfx_for_name

    # hip#3282: lspci names the APU by codename alone
    got = gfx_for_name("Advanced Micro Devices, Inc. [AMD/ATI] Barcelo (prog-if 00 [VGA controller])")
    assert got is not None and got.gfx == "gfx90c"
    assert gfx_for_name("Advanced Micro Devices, Inc. [AMD/ATI] Phoenix1") is None  # not the word Phoenix
    assert gfx_for_name("AMD Radeon Graphics") is None  # generic: never a guessed target


def test_another_tools_gpu_of_the_other_kind_joins_the_list() -> None:
    # comfyui-rocm#115: the launcher's detector named the RX 9060 XT (gfx1200); ComfyUI's torch line the iGPU (gfx1036)
    seen = [{"tool": "text", "gfx": "gfx1200"}, {"tool": "torch", "gfx": "gfx1036"}]
    gpus = facts(gpus_seen=seen).gpus.value or ()
    assert sorted((g.gfx, g.integrated) for g in gpus) == [("gfx1036", True), ("gfx1200", False)]
    # not under an override in the evidence (one GPU can show two targets), and a discrete target the runtime
    # reports (an overridden iGPU reads gfx1030) never joins a list of integrated GPUs
    assert len(facts(gpus_seen=seen, env={"HSA_OVERRIDE_GFX_VERSION": "12.0.0"}).gpus.value or ()) == 1
    runtime_dgpu = [{"tool": "lspci", "name": "Rembrandt [Radeon 680M]"}, {"tool": "torch", "gfx": "gfx1030"}]
    assert [g.integrated for g in facts(gpus_seen=runtime_dgpu).gpus.value or ()] == [True]
    assert len(facts(gpus_seen=runtime_dgpu[::-1]).gpus.value or ()) == 1  # whichever tool's list is taken
    # two tools naming GPUs of one kind: still one tool's list (two descriptions of one GPU are not two GPUs)
    same = [{"tool": "text", "gfx": "gfx1100"}, {"tool": "torch", "gfx": "gfx1101"}]
    assert len(facts(gpus_seen=same).gpus.value or ()) == 1


def test_a_gpu_named_again_without_an_index_is_the_same_gpu() -> None:
    # amd/playbooks#172: run_llm.py's `GPU: AMD Radeon AI PRO R9700` beside torch's device 0 of that name is one GPU;
    # two numbered devices of one name stay two (identical cards).
    from rocm_triton_doctor.check.facts import build_facts

    seen = [{"tool": "torch", "name": "AMD Radeon AI PRO R9700"}]
    dev0 = {"index": 0, "name": "AMD Radeon AI PRO R9700", "gcnArchName": "gfx1201"}
    snap = {"schema": "rocm-triton-doctor/snapshot/1", "gpus_seen": seen,
            "runtime": {"is_available": True, "devices": [dev0]}}
    assert len(build_facts(snap).gpus.value or ()) == 1
    two = {**snap, "gpus_seen": [], "runtime": {"is_available": True, "devices": [dev0, {**dev0, "index": 1}]}}
    assert len(build_facts(two).gpus.value or ()) == 2


def test_a_rocminfo_agent_named_after_another_target_than_its_chip_shows_an_override() -> None:
    # ROCm/ROCm#5657: an RX 9060 XT (chip 0x7590, gfx1200) listed as gfx1100 with no override in the paste
    from rocm_triton_doctor.check.facts import build_facts
    from rocm_triton_doctor.check.facts.gpus import INFERRED_OVERRIDE

    for name, inferred in (("gfx1100", True), ("gfx1200", False)):
        text = ("HSA Agents\n*******\nAgent 2\n*******\n"
                f"  Name:                    {name}\n"
                "  Marketing Name:          AMD Radeon RX 9060 XT\n"
                "  Device Type:             GPU\n"
                "  Chip ID:                 30096(0x7590)\n")
        snap = {"schema": "rocm-triton-doctor/snapshot/1", "commands": {"rocminfo": text}}
        (g,) = build_facts(snap).gpus.value or ()
        assert g.gfx == "gfx1200" and g.effective_gfx == name
        assert g.source.startswith(INFERRED_OVERRIDE) is inferred and (g.override == "11.0.0") is inferred


def test_a_target_line_and_a_named_device_of_that_target_are_one_gpu() -> None:
    # ComfyUI-Docker#171: `AMD arch: gfx1201` and `Device: cuda:0 AMD Radeon AI PRO R9700` are one R9700; two
    # numbered devices of one target stay two
    from rocm_triton_doctor.check.facts import build_facts

    snap = {"schema": "rocm-triton-doctor/snapshot/1",
            "gpus_seen": [{"tool": "torch", "gfx": "gfx1201"}, {"tool": "torch", "name": "AMD Radeon AI PRO R9700",
                                                                "gfx": "gfx1201", "index": 0}]}
    (g,) = build_facts(snap).gpus.value or ()
    assert g.name == "AMD Radeon AI PRO R9700"
    two = {**snap, "gpus_seen": [{"tool": "rocminfo", "gfx": "gfx1201", "index": i} for i in (0, 1)]}
    assert len(build_facts(two).gpus.value or ()) == 2
