"""checks/access.py: one test per severity each check can give (and the three ways kfd-access fails)."""

from __future__ import annotations

from rocm_triton_doctor.check.findings import Severity

from ..conftest import bob, node, one


def test_kfd_access_skip_when_not_probed() -> None:
    assert one("kfd-access").title == "/dev/kfd not probed"


def test_kfd_access_ok_world_read_write() -> None:
    f = one("kfd-access", paths={"/dev/kfd": node("0o20666")}, user=bob())
    assert (f.severity.value, f.title) == ("ok", "/dev/kfd accessible (world read-write)")


def test_kfd_root_only_needs_udev_rule_not_usermod() -> None:
    f = one("kfd-access", paths={"/dev/kfd": node("0o20600", group="root")}, user=bob("render"))
    assert f.severity is Severity.FAIL and f.fix is not None
    assert any("udev" in c for c in f.fix.commands)


def test_kfd_root_only_fails_even_when_the_user_is_unknown() -> None:
    # `ls -la /dev | grep kfd` alone (ROCT-Thunk-Interface#36): 0600 root:root opens for root only, whoever asks.
    f = one("kfd-access", paths={"/dev/kfd": node("0o20600", group="root")})
    assert f.severity is Severity.FAIL and "root-only" in f.title and f.fix is not None
    assert any("udev" in c for c in f.fix.commands)
    # ... but an ACL ("+" after the mode) may open it to the desktop user, and a container usually runs as root.
    acl = one("kfd-access", paths={"/dev/kfd": {**node("0o20600", group="root"), "acl": True}})
    assert acl.severity is Severity.SKIP and "ACL" in acl.detail
    boxed = one("kfd-access", paths={"/dev/kfd": node("0o20600", group="root")}, container_run=[{"runtime": "docker"}])
    assert boxed.severity is Severity.SKIP
    assert one("kfd-access", paths={"/dev/kfd": node("0o20600", group="root")},
               user={"name": "root", "uid": 0, "groups": ["root"]}).severity is Severity.OK


def test_kfd_group_added_but_session_old_needs_relogin() -> None:
    f = one("kfd-access", paths={"/dev/kfd": node("0o20660")}, user=bob(configured=["bob", "render"]))
    assert f.severity is Severity.FAIL and f.fix is not None and f.fix.needs_relogin and not f.fix.needs_sudo


def test_measured_access_wins_over_mode() -> None:
    f = one("kfd-access", paths={"/dev/kfd": node("0o20666", readable=False, writable=False)}, user=bob())
    assert f.severity is Severity.FAIL


def test_render_access_warn_kfd_without_render_nodes() -> None:
    f = one("render-access", paths={"/dev/kfd": node(), "/dev/dri": {"exists": True, "mode": "0o40755"}})
    assert (f.severity.value, f.title) == ("warn", "/dev/kfd exists but no /dev/dri/renderD* node was found")


def test_render_access_skip_without_nodes() -> None:
    assert one("render-access").title == "no render nodes to check"


def test_render_access_ok() -> None:
    f = one("render-access", paths={"/dev/dri/renderD128": node("0o20660")}, user=bob("render"))
    assert (f.severity.value, f.title) == ("ok", "/dev/dri/renderD128 accessible (member of render)")


def test_render_access_fail_merges_nodes_with_one_cause() -> None:
    paths = {"/dev/dri/renderD128": node("0o20660"), "/dev/dri/renderD129": node("0o20660")}
    f = one("render-access", paths=paths, user=bob())
    assert f.severity is Severity.FAIL
    assert f.title == "/dev/dri/renderD128, /dev/dri/renderD129: bob is not in the 'render' group"
    assert f.evidence == ("/dev/dri/renderD128", "/dev/dri/renderD129")


def test_kfd_access_denied_in_rootless_podman_keeps_the_host_groups() -> None:
    # amd-strix-halo-toolboxes#53: a distrobox (rootless podman) with the devices and --group-add render; EACCES inside.
    denied = {"/dev/kfd": {"exists": True, "open_error": "Permission denied"}}
    run = {"runtime": "podman", "devices": ["/dev/kfd", "/dev/dri"], "group_add": ["video", "render"],
           "via": "distrobox"}
    f = one("kfd-access", paths=denied, container_run=[run])
    assert f.severity is Severity.FAIL and "distrobox" in f.title
    assert f.fix is not None and any("--group-add keep-groups" in c for c in f.fix.commands)
    # root's podman (`sudo podman run`) keeps no user namespace: keep-groups is not the remedy there
    rootful = one("kfd-access", paths=denied, container_run=[{**run, "rootful": True}])
    assert rootful.fix is None or not any("keep-groups" in c for c in rootful.fix.commands)


def test_kfd_access_ok_when_a_hip_program_enumerated_amd_gpus() -> None:
    f = one("kfd-access", system={"hip_devices_seen": 1})
    assert f.severity is Severity.OK and "HIP runtime" in f.title
    denied = one("kfd-access", system={"hip_devices_seen": 1}, paths={"/dev/kfd": node("0o20600", group="root")})
    assert denied.severity is not Severity.OK  # the node's own facts decide when they are known


# -- session 14 (the seventh held-out round) ------------------------------------------------------------------------

def _opened(error: str) -> dict[str, object]:
    return {"/dev/kfd": {"exists": True, "open_error": error}}


def test_an_open_error_that_is_not_a_permission_error_gets_no_group_advice() -> None:
    # ROCm/legacy-rocm-build#4043: root in a container, 'Invalid argument', had been told to `newgrp render`.
    f = one("kfd-access", paths=_opened("Invalid argument"),
            user={"name": "root", "uid": 0, "groups": ["root"], "groups_configured": ["root", "render"]})
    # a failure (no ROCm program can run while /dev/kfd does not open), with no fix: nothing to run until dmesg says why
    assert f.severity is Severity.FAIL and "Invalid argument" in f.title
    assert f.fix is None


def test_root_refused_with_permission_denied_is_a_cgroup_or_security_module() -> None:
    f = one("kfd-access", paths=_opened("Permission denied"), user={"name": "root", "uid": 0, "groups": ["root"]})
    assert f.severity is Severity.WARN and "root" in f.title and f.fix is None


def test_a_node_whose_group_shows_as_nogroup_needs_the_host_groups_carried_in() -> None:
    # distrobox#1230: rocminfo's DRM access group is "nogroup" inside a rootless box; joining it changed nothing.
    f = one("kfd-access", paths=_opened("Permission denied"), user=bob(), system={"drm_access_group": "nogroup"})
    assert f.severity is Severity.FAIL and f.fix is not None
    assert any("keep-groups" in c for c in f.fix.commands) and not any("usermod" in c for c in f.fix.commands)


def test_eperm_inside_a_slurm_job_asks_for_the_gpus_in_the_job() -> None:
    # ComputeCanada/puppet-magic_castle#460: srun without --gres, then EPERM on /dev/kfd.
    bare = one("kfd-access", paths=_opened("Operation not permitted"), system={"slurm_job": {"gpus_requested": False}})
    assert bare.severity is Severity.FAIL and bare.fix is not None and "--gres=gpu" in bare.fix.text
    asked = one("kfd-access", paths=_opened("Operation not permitted"), system={"slurm_job": {"gpus_requested": True}})
    assert asked.fix is not None and "admins" in asked.fix.text and "requested no GPU" not in asked.title


def test_kfd_access_under_wsl_reads_a_hip_device_list_as_dxg_access() -> None:
    # rocm-cli#276: WSL2 has no /dev/kfd; llama.cpp's ROCm backend listing the GPU shows the runtime reached it
    f = one("kfd-access", system={"wsl": True, "hip_devices_seen": 1})
    assert f.severity is Severity.OK and "through /dev/dxg" in f.title


def test_kfd_of_group_root_is_root_only_whoever_runs_the_program() -> None:
    # hal0#420: `/dev/kfd` = `crw-rw---- root root` in an LXC after every reboot; llama.cpp: no ROCm-capable device
    paths = {"/dev/kfd": node("0o20660", "root", "root")}
    warned = one("kfd-access", paths=paths)
    assert warned.severity is Severity.WARN and "only root can open it" in warned.title
    assert warned.fix is not None and warned.fix.commands[0] == "sudo chgrp render /dev/kfd"
    failed = one("kfd-access", paths=paths,
                 errors=[{"text": "ggml_cuda_init: failed to initialize ROCm: no ROCm-capable device is detected"}])
    assert failed.severity is Severity.FAIL
    # a known user in group root, or a container (where programs often run as root): the usual arithmetic
    assert one("kfd-access", paths=paths, system={"container_prompt": "3f2a9c1d7b8e"}).severity is Severity.SKIP
