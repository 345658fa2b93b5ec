"""checks/overrides.py: one test per severity each check can give."""

from __future__ import annotations

from rocm_triton_doctor.check.findings import Severity

from ..conftest import AMD_LIVE, gpu, minimal_snapshot, one, rocm_python, run


def sev_titles(check_id: str, **sections: object) -> list[tuple[str, str]]:
    return [(f.severity.value, f.title) for f in run(check_id, minimal_snapshot(**sections))]


def test_invalid_override_fails_with_reason() -> None:
    out = sev_titles("hsa-override-format", env={"HSA_OVERRIDE_GFX_VERSION": "gfx1030"})
    assert out[0][0] == "fail" and "gfx name" in out[0][1]
    assert sev_titles("hsa-override-format", env={})[0][0] == "ok"
    assert sev_titles("hsa-override-format")[0][0] == "skip"  # env not recorded: never guess


def test_per_node_override_on_old_rocm_and_wrong_node() -> None:
    files = {**gpu(1, 100301)}
    snap = minimal_snapshot(files=files, env={"HSA_OVERRIDE_GFX_VERSION_1": "10.3.0"},
                            python=rocm_python("2.3.1+rocm6.0"))
    assert run("hsa-override-format", snap)[0].severity.value == "warn"  # per-node needs ROCm >= 6.3
    snap["env"] = {"HSA_OVERRIDE_GFX_VERSION_3": "10.3.0"}
    assert "not a GPU node" in run("hsa-override-format", snap)[0].title


def test_hsa_override_format_ok_names_the_target() -> None:
    f = one("hsa-override-format", env={"HSA_OVERRIDE_GFX_VERSION": "10.3.0"})
    assert (f.severity.value, f.title) == ("ok", "HSA_OVERRIDE_GFX_VERSION=10.3.0 is well-formed (→ gfx1030)")


def test_hsa_override_needed_skip_without_gpu() -> None:
    assert one("hsa-override-needed", python=rocm_python("2.9.1+rocm6.4")).title == "not applicable: no AMD GPU"


def test_hsa_override_needed_ok_when_torch_has_the_target() -> None:
    f = one("hsa-override-needed", files=gpu(1, 90402), env={}, python=rocm_python("2.9.1+rocm6.4"))
    assert f.severity.value == "ok" and f.title.startswith("no override needed")


def test_override_needed_gives_exact_value() -> None:
    out = sev_titles("hsa-override-needed", files=gpu(1, 100302), env={}, python=rocm_python("2.5.1+rocm6.2"))
    title = "node 1: Navi 23 (Radeon RX 6600, Radeon RX 6600 XT, Radeon RX 6650 XT…) (gfx1032) needs HSA_OVERRIDE_GFX_VERSION=10.3.0"
    assert out == [("fail", title)]


def test_hsa_override_harmful_skip_without_override() -> None:
    assert one("hsa-override-harmful", env={}).title == "no override set"


def test_hsa_override_harmful_info_without_gpu() -> None:
    assert one("hsa-override-harmful", env={"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}).severity.value == "info"


def test_hsa_override_harmful_fail_global_value_on_mixed_gpus() -> None:
    files = {**gpu(1, 100306), **gpu(2, 110000)}
    out = run("hsa-override-harmful", minimal_snapshot(files=files, env={"HSA_OVERRIDE_GFX_VERSION": "11.0.0"},
                                                       python=rocm_python("2.9.1+rocm6.4")))
    assert out[0].severity.value == "fail" and out[0].title.startswith("global HSA_OVERRIDE_GFX_VERSION=11.0.0")


def test_override_not_needed_when_native_is_harmful() -> None:
    out = sev_titles("hsa-override-harmful", files=gpu(1, 110501), env={"HSA_OVERRIDE_GFX_VERSION": "11.0.0"},
                     python=rocm_python("2.13.0+rocm7.2"))
    assert out[0][0] == "warn" and "natively" in out[0][1]


def test_hsa_override_harmful_ok_for_a_needed_same_family_override() -> None:
    f = one("hsa-override-harmful", files=gpu(1, 100302), env={"HSA_OVERRIDE_GFX_VERSION": "10.3.0"},
            python=rocm_python("2.5.1+rocm6.2"))
    assert (f.severity.value, f.title) == ("ok", "the override set here does no harm")


def test_an_override_to_a_newer_minor_isa_points_at_the_sibling() -> None:
    # jammsen/proxmox-setup-scripts#1: a gfx1103 780M run as gfx1151 (11.5.1); its sibling is 11.0.0.
    f = one("hsa-override-harmful", files={**AMD_LIVE, **gpu(1, 110003)}, env={"HSA_OVERRIDE_GFX_VERSION": "11.5.1"})
    assert f.severity.value == "fail" and "newer ISA" in f.title
    assert f.fix is not None and f.fix.commands == ("export HSA_OVERRIDE_GFX_VERSION=11.0.0",)


def test_an_override_read_from_rocminfo_s_agent_names_is_judged_and_located() -> None:
    # ROCm/ROCm#5657: rocminfo lists an RX 9060 XT (chip 0x7590, gfx1200) as gfx1100; the reporter knew of no override
    text = ("HSA Agents\n*******\nAgent 2\n*******\n  Name:                    gfx1100\n"
            "  Marketing Name:          AMD Radeon RX 9060 XT\n  Device Type:             GPU\n"
            "  Chip ID:                 30096(0x7590)\n")
    f = one("hsa-override-harmful", commands={"rocminfo": text})
    assert f.severity is Severity.FAIL and "gfx1200" in f.title and "gfx1100" in f.title
    assert f.fix is not None and "~/.bashrc" in f.fix.text and f.fix.commands == ("unset HSA_OVERRIDE_GFX_VERSION",)
    named = text.replace("gfx1100", "gfx1200")
    assert one("hsa-override-harmful", commands={"rocminfo": named}).severity is Severity.SKIP
