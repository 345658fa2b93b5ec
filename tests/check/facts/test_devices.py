"""facts/devices.py: device nodes (mode, owner, measured access) and the user."""

from __future__ import annotations

from rocm_triton_doctor.check.facts import DeviceNode, Status

from ..conftest import facts, node


def test_device_node_mode_and_permissions() -> None:
    f = facts(paths={"/dev/kfd": node("0o20660", readable=True, writable=False)})
    kfd = f.dev_kfd.value
    assert kfd == DeviceNode("/dev/kfd", 0o20660, "root", "render", True, False)
    assert (kfd.perms, kfd.group_rw, kfd.world_rw) == ("0660", True, False)
    assert facts(paths={"/dev/kfd": {"exists": True, "mode": "rw?"}}).dev_kfd.value.mode is None  # type: ignore[union-attr]
    assert facts(paths={"/dev/kfd": {"exists": True, "error": "EACCES"}}).dev_kfd.status is Status.ERROR


def test_render_nodes_found_absent_unknown() -> None:
    f = facts(paths={"/dev/dri/renderD129": node(), "/dev/dri/renderD128": node(), "/dev/dri/card0": node()})
    assert [n.path for n in f.render_nodes.value or ()] == ["/dev/dri/renderD128", "/dev/dri/renderD129"]
    assert facts(paths={"/dev/dri": {"exists": True}}).render_nodes.status is Status.ABSENT
    assert facts(paths={}).render_nodes.status is Status.UNKNOWN


def test_dev_dxg_is_a_boolean_fact() -> None:
    assert facts(paths={"/dev/dxg": {"exists": True}}).dev_dxg.value is True
    assert facts(paths={"/dev/dxg": None}).dev_dxg.status is Status.ABSENT


def test_user_groups_and_configured_groups() -> None:
    u = facts(user={"name": "bob", "uid": 1000, "groups": ["bob"], "groups_configured": ["bob", "render"]}).user.value
    assert u is not None and (u.groups, u.groups_configured) == (("bob",), ("bob", "render"))
    assert facts(user={"name": "bob"}).user.value.groups_configured is None  # type: ignore[union-attr]
    assert facts().user.status is Status.UNKNOWN
