"""Can this user open /dev/kfd and the render nodes?"""

from __future__ import annotations

from collections.abc import Iterable

from rocm_triton_doctor.check.checks.base import check, fail, ok, skip, warn
from rocm_triton_doctor.check.facts import DeviceNode, Facts, User
from rocm_triton_doctor.check.findings import Finding, Fix

DOCS = "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/install/prerequisites.html"


def _access(node: DeviceNode, user: User | None) -> tuple[bool | None, str]:
    """(can open read-write?, why). Measured access wins; otherwise derive it from mode, owner and groups."""
    if node.readable is not None and node.writable is not None:
        if node.readable and node.writable:
            return True, "open for read-write (measured)"
        return False, "not openable read-write (measured)"
    if node.mode is None:
        return None, "mode unknown"
    if node.world_rw:
        return True, "world read-write"
    if user is None:
        return None, "user unknown"
    if user.uid == 0 or user.name == "root":
        return True, "root"
    if node.group_rw and node.group in user.groups:
        return True, f"member of {node.group}"
    if node.owner == user.name and node.mode & 0o600 == 0o600:
        return True, "owner"
    return False, "derived from mode and groups"


def _merged(findings: list[Finding]) -> list[Finding]:
    """One finding per distinct problem: four render nodes with the same cause are one line, not four."""
    import dataclasses

    out: dict[tuple[object, ...], Finding] = {}
    paths: dict[tuple[object, ...], list[str]] = {}
    for f in findings:
        path = f.title.split(" ", 1)[0].rstrip(":")
        key: tuple[object, ...] = (f.severity, f.title.replace(path, "<node>"), f.fix)
        paths.setdefault(key, []).append(path)
        out.setdefault(key, f)
    merged = []
    for key, f in out.items():
        ps = paths[key]
        if len(ps) > 1:
            f = dataclasses.replace(f, title=f.title.replace(ps[0], ", ".join(ps), 1), evidence=tuple(ps))
        merged.append(f)
    return merged


def _node_findings(nodes: tuple[DeviceNode, ...], f: Facts, what: str) -> Iterable[Finding]:
    return _merged(list(_each_node(nodes, f, what)))


def _each_node(nodes: tuple[DeviceNode, ...], f: Facts, what: str) -> Iterable[Finding]:
    user = f.user.value if f.user.found else None
    for node in nodes:
        can, why = _access(node, user)
        desc = f"mode {node.perms}, owner {node.owner or '?'}:{node.group or '?'}"
        if can:
            yield ok(f"{node.path} accessible ({why})", desc)
            continue
        if can is None:
            yield skip(f"{node.path}: cannot tell whether this user can open it", f"{desc}; {why}")
            continue
        uname = user.name if user else "this user"
        if not node.group_rw and not node.world_rw:
            # Root-only node: adding the user to a group cannot help; a udev rule must change the mode.
            kernel = "kfd" if node.path == "/dev/kfd" else "renderD*"
            subsystem = "" if node.path == "/dev/kfd" else 'SUBSYSTEM=="drm", '
            rule = f'{subsystem}KERNEL=="{kernel}", GROUP="render", MODE="0660"'
            yield fail(f"{node.path} is root-only ({node.perms}); {uname} cannot open it",
                       f"{desc}. The group has no access, so joining a group does not help: the device mode "
                       f"must change. Without it {what}.",
                       evidence=(node.path,),
                       fix=Fix("Add a udev rule that gives the render group read-write access, reload udev, "
                               "then join the group.",
                               (f"echo '{rule}' | sudo tee /etc/udev/rules.d/70-amdgpu-compute.rules",
                                "sudo udevadm control --reload-rules && sudo udevadm trigger",
                                "sudo usermod -a -G render,video $LOGNAME"),
                               needs_sudo=True, needs_relogin=True),
                       links=(DOCS,))
            continue
        group = node.group or "render"
        if user and user.groups_configured is not None and group in user.groups_configured:
            yield fail(f"{node.path}: {uname} was added to '{group}' but this session predates it",
                       f"{desc}. /etc/group lists {uname} in '{group}', but the running session's groups are "
                       f"{', '.join(user.groups) or 'none'}.",
                       evidence=(node.path, "user"),
                       fix=Fix("Log out and back in (or reboot) so the new group applies; `newgrp "
                               f"{group}` works for one shell.", (f"newgrp {group}",), needs_relogin=True))
            continue
        yield fail(f"{node.path}: {uname} is not in the '{group}' group",
                   f"{desc}; {uname}'s groups: {', '.join(user.groups) if user else '?'}. Without access {what}.",
                   evidence=(node.path, "user"),
                   fix=Fix(f"Add {uname} to the groups that own the GPU devices, then log out and back in. In a "
                           "container, pass --group-add video --group-add render instead.",
                           ("sudo usermod -a -G render,video $LOGNAME",), needs_sudo=True, needs_relogin=True),
                   links=(DOCS,))


@check("kfd-access", "access", "This user can open /dev/kfd read-write.",
       "hsa_init opens /dev/kfd; when that fails every ROCm program sees no GPU (rocminfo: 'Unable to open "
       "/dev/kfd read-write: Permission denied').",
       "Join the group that owns /dev/kfd (usually render); if the node is root-only 0600, add a udev rule.")
def kfd_access(f: Facts) -> Iterable[Finding]:
    if not f.dev_kfd.found or f.dev_kfd.value is None:
        yield skip("no /dev/kfd to check" if f.dev_kfd.known else "/dev/kfd not probed")
        return
    yield from _node_findings((f.dev_kfd.value,), f, "ROCm cannot initialise (hsa_init fails)")


@check("render-access", "access", "This user can open every /dev/dri/renderD* node.",
       "libhsakmt silently skips GPUs whose render node it cannot open, so a GPU just disappears.",
       "Join the group that owns the render nodes (render or video); fix the mode with a udev rule if root-only.")
def render_access(f: Facts) -> Iterable[Finding]:
    if not f.render_nodes.found or not f.render_nodes.value:
        if f.dev_kfd.found:
            yield warn("/dev/kfd exists but no /dev/dri/renderD* node was found",
                       "Every ROCm GPU needs its render node; a container may have been started with /dev/kfd only.",
                       fix=Fix("Pass /dev/dri as well.", ("docker run --device=/dev/kfd --device=/dev/dri ...",)))
        else:
            yield skip("no render nodes to check")
        return
    yield from _node_findings(f.render_nodes.value, f, "ROCm skips that GPU without an error")


CHECKS = (kfd_access, render_access)
