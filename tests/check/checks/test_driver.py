"""checks/driver.py: one test per severity each check can give."""

from __future__ import annotations

from ..conftest import AMD_LIVE, node, one


def test_amdgpu_loaded_ok_when_live() -> None:
    assert one("amdgpu-loaded", files=AMD_LIVE).title == "amdgpu loaded (in-tree kernel driver)"


def test_amdgpu_loaded_skip_when_unknown() -> None:
    assert one("amdgpu-loaded").title == "amdgpu state unknown"


def test_amdgpu_loaded_fail_when_not_live() -> None:
    f = one("amdgpu-loaded", files={"/sys/module/amdgpu/initstate": "coming\n"})
    assert (f.severity.value, f.title) == ("fail", "amdgpu module state is 'coming', not 'live'")


def test_kfd_present_ok() -> None:
    assert one("kfd-present", paths={"/dev/kfd": node()}).severity.value == "ok"


def test_kfd_present_skip_when_not_probed() -> None:
    assert one("kfd-present").title == "/dev/kfd not probed"


def test_kfd_present_fail_when_amdgpu_live_without_kfd() -> None:
    f = one("kfd-present", files={**AMD_LIVE, "/run/.containerenv": None}, paths={"/dev/kfd": None, "/.dockerenv": None})
    assert (f.severity.value, f.title) == ("fail", "amdgpu is loaded but there is no /dev/kfd")


def test_kfd_present_skip_when_it_may_be_a_container() -> None:
    # no container markers recorded: /dev/kfd may just not be passed through
    assert one("kfd-present", files=AMD_LIVE, paths={"/dev/kfd": None}).severity.value == "skip"


def test_amdgpu_loaded_ok_when_an_smi_table_lists_gpus_through_it() -> None:
    f = one("amdgpu-loaded", system={"amdgpu_gpus_listed": 1})
    assert f.severity.value == "ok" and "SMI tool lists 1 GPU" in f.title
