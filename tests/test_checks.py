"""Layer (b): checks over small hand-built snapshots (the facts they need, nothing else)."""

from __future__ import annotations

from typing import Any

from rocm_triton_doctor.check.checks import INTERNAL_ERROR, by_id, run_checks, select
from rocm_triton_doctor.check.checks.base import Check
from rocm_triton_doctor.check.facts import build_facts
from rocm_triton_doctor.check.findings import Severity
from rocm_triton_doctor.check import diagnose

from .conftest import minimal_snapshot

KFD = "/sys/class/kfd/kfd/topology/nodes"


def run(check_id: str, snap: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f.severity.value, f.title) for f in run_checks(build_facts(snap), [by_id()[check_id]])]


def gpu(node: int, gtv: int, dev: int = 0) -> dict[str, str]:
    return {f"{KFD}/{node}/properties": f"simd_count 80\nsimd_per_cu 2\ngfx_target_version {gtv}\ndevice_id {dev}\n"}


def rocm_python(torch: str, triton: tuple[str, str] | None = None, extra: dict[str, str] | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {"torch": {"version": torch, "requires": [f"{triton[0]}=={triton[1]}"] if triton else []}}
    if triton:
        d[triton[0]] = {"version": triton[1], "requires": []}
    for k, v in (extra or {}).items():
        d[k] = {"version": v, "requires": []}
    return {"version": "3.12.3", "distributions": d, "triton_owners": [n for n in d if "triton" in n]}


def test_invalid_override_fails_with_reason() -> None:
    out = run("hsa-override-format", minimal_snapshot(env={"HSA_OVERRIDE_GFX_VERSION": "gfx1030"}))
    assert out[0][0] == "fail" and "gfx name" in out[0][1]
    assert run("hsa-override-format", minimal_snapshot(env={}))[0][0] == "ok"
    assert run("hsa-override-format", minimal_snapshot())[0][0] == "skip"  # env not recorded: never guess


def test_per_node_override_on_old_rocm_and_wrong_node() -> None:
    files = {**gpu(1, 100301)}
    snap = minimal_snapshot(files=files, env={"HSA_OVERRIDE_GFX_VERSION_1": "10.3.0"},
                            python=rocm_python("2.3.1+rocm6.0"))
    assert run("hsa-override-format", snap)[0][0] == "warn"  # per-node needs ROCm >= 6.3
    snap["env"] = {"HSA_OVERRIDE_GFX_VERSION_3": "10.3.0"}
    assert "not a GPU node" in run("hsa-override-format", snap)[0][1]


def test_override_needed_gives_exact_value() -> None:
    snap = minimal_snapshot(files=gpu(1, 100302), env={}, python=rocm_python("2.5.1+rocm6.2"))
    out = run("hsa-override-needed", snap)
    title = "node 1: Navi 23 (Radeon RX 6600, Radeon RX 6600 XT, Radeon RX 6650 XT…) (gfx1032) needs HSA_OVERRIDE_GFX_VERSION=10.3.0"
    assert out == [("fail", title)]


def test_override_not_needed_when_native_is_harmful() -> None:
    snap = minimal_snapshot(files=gpu(1, 110501), env={"HSA_OVERRIDE_GFX_VERSION": "11.0.0"},
                            python=rocm_python("2.13.0+rocm7.2"))
    out = run("hsa-override-harmful", snap)
    assert out[0][0] == "warn" and "natively" in out[0][1]


def test_kfd_root_only_needs_udev_rule_not_usermod() -> None:
    snap = minimal_snapshot(paths={"/dev/kfd": {"exists": True, "mode": "0o20600", "owner": "root", "group": "root"}},
                            user={"name": "bob", "uid": 1000, "groups": ["bob", "render"]})
    f = run_checks(build_facts(snap), [by_id()["kfd-access"]])[0]
    assert f.severity is Severity.FAIL and f.fix is not None
    assert any("udev" in c for c in f.fix.commands)


def test_kfd_group_added_but_session_old_needs_relogin() -> None:
    snap = minimal_snapshot(paths={"/dev/kfd": {"exists": True, "mode": "0o20660", "owner": "root", "group": "render"}},
                            user={"name": "bob", "uid": 1000, "groups": ["bob"], "groups_configured": ["bob", "render"]})
    f = run_checks(build_facts(snap), [by_id()["kfd-access"]])[0]
    assert f.severity is Severity.FAIL and f.fix is not None and f.fix.needs_relogin and not f.fix.needs_sudo


def test_measured_access_wins_over_mode() -> None:
    snap = minimal_snapshot(paths={"/dev/kfd": {"exists": True, "mode": "0o20666", "owner": "root", "group": "render",
                                                "readable": False, "writable": False}},
                            user={"name": "bob", "uid": 1000, "groups": ["bob"]})
    assert run("kfd-access", snap)[0][0] == "fail"


def test_triton_pin_mismatch_and_wrong_distribution() -> None:
    py = rocm_python("2.9.1+rocm6.4", ("pytorch-triton-rocm", "3.5.1"))
    py["distributions"]["pytorch-triton-rocm"]["version"] = "3.4.0"
    assert run("triton-version-pin", minimal_snapshot(python=py))[0][0] == "fail"
    py = rocm_python("2.9.1+rocm6.4", ("pytorch-triton-rocm", "3.5.1"))
    del py["distributions"]["pytorch-triton-rocm"]
    py["distributions"]["triton"] = {"version": "3.5.1", "requires": []}
    out = run("triton-version-pin", minimal_snapshot(python=py))
    assert out[0][0] == "fail" and "triton 3.5.1 is installed" in out[0][1]


def test_torch_family_mismatch_detects_pypi_torchvision() -> None:
    py = rocm_python("2.7.1+rocm6.3", extra={"torchvision": "0.22.1"})
    assert run("torch-family-mismatch", minimal_snapshot(python=py))[0][0] == "fail"
    py = rocm_python("2.6.0+rocm6.4.1.git1ded221d", extra={"torchvision": "0.21.0+rocm6.4.1.git4040d51f"})
    assert run("torch-family-mismatch", minimal_snapshot(python=py))[0][0] == "ok"


def test_ld_library_path_pulls_system_rocm() -> None:
    snap = minimal_snapshot(env={"LD_LIBRARY_PATH": "/opt/rocm-6.1.0/lib:/usr/local/lib"},
                            python=rocm_python("2.8.0+rocm6.4"))
    assert run("ld-library-path-rocm", snap)[0][0] == "warn"


def test_crashing_check_becomes_internal_error_and_exit_4() -> None:
    def boom(_facts: object) -> list[object]:
        raise RuntimeError("kaboom")

    bad = Check("boom", "probes", "x", "y", "z", boom)  # type: ignore[arg-type]
    report = diagnose(minimal_snapshot(env={}), [bad, by_id()["hsa-override-format"]])
    ids = [f.id for f in report.findings]
    assert ids == [INTERNAL_ERROR, "hsa-override-format"]
    assert "kaboom" in report.findings[0].title
    assert int(report.verdict.exit_code) == 4


def test_only_skips_and_could_not_check() -> None:
    report = diagnose(minimal_snapshot(), [by_id()["hsa-override-format"]])
    assert report.verdict.status == "could-not-check" and int(report.verdict.exit_code) == 3


def test_select_by_group_and_unknown_name() -> None:
    assert {c.id for c in select(["overrides"])} == {"hsa-override-format", "hsa-override-needed",
                                                      "hsa-override-harmful"}
    assert "wsl" not in {c.id for c in select(skip=["wsl"])}
    try:
        select(["no-such-check"])
    except ValueError as exc:
        assert "no-such-check" in str(exc)
    else:
        raise AssertionError("unknown id accepted")


def test_strict_turns_warnings_into_exit_1() -> None:
    snap = minimal_snapshot(env={"LD_LIBRARY_PATH": "/opt/rocm/lib"}, python=rocm_python("2.8.0+rocm6.4"))
    assert int(diagnose(snap, [by_id()["ld-library-path-rocm"]]).verdict.exit_code) == 0
    assert int(diagnose(snap, [by_id()["ld-library-path-rocm"]], strict=True).verdict.exit_code) == 1


def test_torch_index_url_drops_amd_git_suffix() -> None:
    from rocm_triton_doctor.check.facts.python import torch_index_url

    assert torch_index_url("2.9.1+rocm6.4") == "https://download.pytorch.org/whl/rocm6.4"
    # AMD's repo.radeon.com builds carry '.git<hash>' after the ROCm version; the index has no such suffix.
    assert torch_index_url("2.6.0+rocm6.4.1.git1ded221d") == "https://download.pytorch.org/whl/rocm6.4.1"
    assert torch_index_url("2.9.1+cu128") is None
