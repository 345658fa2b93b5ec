"""Can this user open /dev/kfd and the render nodes?"""

from __future__ import annotations

from collections.abc import Iterable

from rocm_triton_doctor.check.checks.base import check, fail, ok, skip, warn
from rocm_triton_doctor.check.facts import DeviceNode, Facts, Status, User
from rocm_triton_doctor.check.facts.platform import os_family
from rocm_triton_doctor.check.findings import Finding, Fix

DOCS = "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/install/prerequisites.html"


def _access(node: DeviceNode, user: User | None, in_container: bool = False) -> tuple[bool | None, str]:
    """(can open read-write?, why). Measured access wins; otherwise derive it from mode, owner and groups. A "no"
    derived from the mode is only a "cannot tell" when `ls -l` showed an ACL ("+"): logind's uaccess ACL opens the
    node to the desktop user whatever the mode says."""
    if node.open_error:
        return False, f"opening it failed: {node.open_error}"
    if node.readable is not None and node.writable is not None:
        if node.readable and node.writable:
            return True, "open for read-write (measured)"
        return False, "not openable read-write (measured)"
    can, why = _from_mode(node, user, in_container)
    if can is False and node.acl:
        return None, "an ACL ('+' after the mode) may grant access (paste `getfacl` of the node)"
    return can, why


def _from_mode(node: DeviceNode, user: User | None, in_container: bool) -> tuple[bool | None, str]:
    if node.mode is None:
        return None, "mode unknown"
    if node.world_rw:
        return True, "world read-write"
    if user is not None and (user.uid == 0 or user.name == "root"):
        return True, "root"
    if not node.group_rw and node.owner == "root":
        # Root-only (0600 root): no group membership opens it, so who the user is does not matter unless it is root.
        # Inside a container the process usually is root, so there it stays undecided until `id` is shown.
        if user is None and in_container:
            return None, "root-only, and a container's process is usually root (paste `id`)"
        return False, "only root can open it"
    if user is None:
        return None, "user unknown"
    if not user.groups_known:
        return None, "the user's groups are unknown (paste `id`)"
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
        desc = f"mode {node.perms}, owner {node.owner or '?'}:{node.group or '?'}"
        special = _special(node, user, f, what, desc)
        if special is not None:
            yield special
            continue
        can, why = _access(node, user, f.container.found or bool(_container_runs(f)))
        if can:
            yield ok(f"{node.path} accessible ({why})", desc)
            continue
        if can is None and node.group == "root" and node.mode is not None and not node.world_rw and not node.acl \
                and not (f.container.found or _container_runs(f)):
            # Group root and no access for others (hal0#420: `/dev/kfd` = `crw-rw---- root root` in an LXC after every
            # reboot): only root opens it, whoever the program's user is; the GPU stack's nodes belong to render.
            yield (fail if f.errors.found and f.errors.value else warn)(
                f"{node.path} belongs to group root ({node.perms}): only root can open it",
                f"{desc}. A GPU program running as any other user finds no GPU (ROCm's nodes belong to the render "
                f"group); without access {what}.",
                evidence=(node.path,),
                fix=Fix("Give the node to the render group now, and make it stay with a udev rule (inside an LXC, "
                        "where udev does not run for the host's nodes, re-apply the group at boot).",
                        (f"sudo chgrp render {node.path}", *_udev_render_rule(node.path)),
                        needs_sudo=True),
                links=(DOCS,))
            continue
        if can is None:
            yield skip(f"{node.path}: cannot tell whether this user can open it", f"{desc}; {why}")
            continue
        uname = user.name if user and user.name not in ("", "?") else "this user"
        if node.mode is not None and not node.group_rw and not node.world_rw:
            # Root-only node: adding the user to a group cannot help; a udev rule must change the mode.
            yield fail(f"{node.path} is root-only ({node.perms}); {uname} cannot open it",
                       f"{desc}. The group has no access, so joining a group does not help: the device mode "
                       f"must change. Without it {what}.",
                       evidence=(node.path,),
                       fix=Fix("Add a udev rule that gives the render group read-write access, reload udev, "
                               "then join the group.",
                               (*_udev_render_rule(node.path), "sudo usermod -a -G render,video $LOGNAME"),
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
                           "container, pass --group-add video --group-add render instead."
                           + ("" if node.mode is not None else " (`sudo usermod -a -G render,video $LOGNAME`; the "
                              "node's mode is unknown: if `ls -l` shows crw------- root, a udev rule is needed)"),
                           ("sudo usermod -a -G render,video $LOGNAME",) if node.mode is not None else (),
                           needs_sudo=True, needs_relogin=True),
                   links=(DOCS,))


def _udev_render_rule(path: str) -> tuple[str, str]:
    """The commands that write a udev rule giving `path`'s kind of node to the render group (mode 0660), and reload."""
    match = 'KERNEL=="kfd"' if path == "/dev/kfd" else 'SUBSYSTEM=="drm", KERNEL=="renderD*"'
    return (f"echo '{match}, GROUP=\"render\", MODE=\"0660\"' | sudo tee /etc/udev/rules.d/70-amdgpu-compute.rules",
            "sudo udevadm control --reload-rules && sudo udevadm trigger")


def _container_runs(f: Facts) -> list[dict[str, object]]:
    runs = f.raw.get("container_run")
    return [r for r in runs if isinstance(r, dict)] if isinstance(runs, list) else []


def _special(node: DeviceNode, user: User | None, f: Facts, what: str, desc: str) -> Finding | None:
    """Cases the mode/group arithmetic cannot see: an open error a tool reported, a group that is a bare gid (the
    host's group inside a container), a container started without the device's group."""
    err = (node.open_error or "").lower()
    if "cannot allocate memory" in err or "enomem" in err:
        # KFD refuses GPUs it does not support with ENOMEM on open (ROCm/rocminfo#27, ROCm#2232): no group,
        # mode or override changes that.
        return fail(f"{node.path} cannot be opened: KFD does not support this GPU ({node.open_error})",
                    "The GPU is not supported by KFD on this kernel (dmesg says 'not supported in kfd' / 'kfd not "
                    "supported on this ASIC'); ROCm compute cannot use it.",
                    evidence=(node.path,),
                    fix=Fix("Not fixable by configuration: the GPU is not supported by ROCm's kernel driver. Use a "
                            "GPU that ROCm supports (GCN 3 / gfx8 or newer; the support matrix lists the current ones)."),
                    links=("https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/system-requirements.html",))
    root = user is not None and (user.uid == 0 or user.name == "root")
    if node.group and node.group.isdigit() and node.group_rw and not node.world_rw and not root:
        gid = node.group
        return fail(f"{node.path} belongs to group id {gid}, which has no name here",
                    f"{desc}. A bare gid means the host's render/video group does not exist in this container's "
                    "/etc/group, so no named group the container user joins grants access; the process needs that gid "
                    "as a supplementary group.", evidence=(node.path,),
                    fix=Fix(f"Run the container with the device's gid as a supplementary group (Kubernetes: the pod's "
                            f"securityContext.supplementalGroups: [{gid}]; podman: --group-add keep-groups).",
                            (f"docker run --group-add {gid} --device=/dev/kfd --device=/dev/dri IMAGE",)))
    system = f.raw.get("system")
    slurm = system.get("slurm_job") if isinstance(system, dict) else None
    if ("operation not permitted" in err or "eperm" in err) and isinstance(slurm, dict):
        # Inside a Slurm job with ConstrainDevices=yes, the job's device cgroup holds only the GPUs it was allocated
        # (ComputeCanada/puppet-magic_castle#460: srun without --gres, then EPERM on /dev/kfd).
        asked = slurm.get("gpus_requested")
        return fail(f"{node.path}: operation not permitted inside a Slurm job"
                    + ("" if asked else " that requested no GPU"),
                    "EPERM comes from the job's device cgroup, not from the file mode or groups: Slurm lets a job open "
                    "only the devices it allocated.", evidence=(node.path,),
                    fix=Fix("Request the GPUs in the job (`--gres=gpu:N` or `--gpus=N`). If a job that requested them "
                            "still gets EPERM, the cluster's gres.conf must also cover /dev/kfd, which every AMD GPU "
                            "job opens beside its /dev/dri/renderD* node (a question for the cluster's admins)."
                            if not asked else
                            "The job requested GPUs, so the cluster's gres.conf or cgroup configuration does not grant "
                            "/dev/kfd (every AMD GPU job opens it beside its /dev/dri/renderD* node): ask the cluster's "
                            "admins to allow it for GPU jobs (gres.conf File= / Slurm's AMD autodetection)."))
    if "operation not permitted" in err or "eperm" in err:
        # EPERM (not EACCES) on a node whose mode would allow access: the container's device cgroup denies it
        # (ROCm/k8s-device-plugin#65: torch's access() check on the render node).
        return fail(f"{node.path}: operation not permitted (the container's device cgroup denies it)",
                    "EPERM comes from the device cgroup, not from the file mode or groups: the node is visible in the "
                    "container but the runtime did not allow the device.", evidence=(node.path,),
                    fix=Fix("Let the container runtime grant the device (its cgroup device rule): Kubernetes through "
                            "the AMD GPU device plugin's allocation (request amd.com/gpu), docker/podman with "
                            "--device=/dev/kfd --device=/dev/dri rather than a bind mount; changing modes or groups "
                            "does not help."))
    if err and not any(s in err for s in ("permission denied", "eacces")):
        # Any other errno (EINVAL, EIO, ENODEV…) comes from the driver, not from the file's mode or the user's groups,
        # so no group, udev or newgrp advice applies (ROCm/legacy-rocm-build#4043: root in a container, 'Invalid
        # argument', was told to newgrp render). Say what the error is and what would decide it: a failure, since no
        # ROCm program runs while /dev/kfd does not open (ROCm/ROCm#5657: rocminfo stops at it).
        return fail(f"{node.path} cannot be opened: {node.open_error}",
                    f"{desc}. This error is not a permission problem (that would be 'Permission denied'), so group "
                    "membership and the device mode are not the cause; the kernel driver refused the open. Paste "
                    "`sudo dmesg | grep -iE 'kfd|amdgpu'` from the host, and for a container the run command.",
                    evidence=(node.path,))
    if "permission denied" not in err and "eacces" not in err:
        return None
    drm_group = system.get("drm_access_group") if isinstance(system, dict) else None
    if (drm_group in ("nogroup", "nobody", "65534") or node.group in ("nogroup", "nobody", "65534")) and not root:
        # The overflow group: the device's real group (the host's render/video gid) is not mapped into this user
        # namespace, which is what a rootless container (podman, distrobox, toolbox) shows; no group the user joins
        # inside can be that one (distrobox#1230: joining "nogroup" in the box changed nothing).
        return fail(f"{node.path}: permission denied; its group shows as '{drm_group or node.group}' (unmapped)",
                    f"{desc}. 'nogroup' is the name a user namespace gives a group it does not map: the node belongs "
                    "to the host's render/video group, which this rootless container did not carry in, so joining a "
                    "group inside does not help.", evidence=(node.path,),
                    fix=Fix("Carry your host groups into the container: with podman, --group-add keep-groups (needs "
                            "crun); with distrobox, recreate the box with --additional-flags \"--group-add keep-groups\"; "
                            "check on the host that your user is in the render and video groups (`id`).",
                            ("podman run --group-add keep-groups --device=/dev/kfd --device=/dev/dri IMAGE",)))
    if root:
        # Root is refused only by a device cgroup or a security module (SELinux/AppArmor), never by mode or groups.
        return warn(f"{node.path}: permission denied although the process is root",
                    f"{desc}. Root bypasses the file mode and groups, so what refuses it is a device cgroup (a "
                    "container started without the device) or a security module (SELinux/AppArmor). Paste the run "
                    "command, and `sudo dmesg | grep -iE 'denied|kfd'`.", evidence=(node.path,))
    for run in _container_runs(f):
        raw_groups = run.get("group_add")
        groups = [str(g) for g in raw_groups] if isinstance(raw_groups, list) else []
        if run.get("runtime") == "podman" and "keep-groups" not in groups and not run.get("rootful"):
            # (distrobox creates such a podman container: its --additional-flags carry these flags)
            return fail(f"{node.path}: permission denied inside a " + ("distrobox (rootless podman)" if run.get("via")
                                                                       == "distrobox" else "podman container"),
                        "With rootless podman, --group-add video adds the container's own video gid, not your host "
                        "user's video/render membership, so the device opens as 'other'.", evidence=(node.path,),
                        fix=Fix("Keep your host groups in the container: replace --group-add video with "
                                "--group-add keep-groups (needs crun).",
                                ("podman run --group-add keep-groups --device=/dev/kfd --device=/dev/dri IMAGE",)))
        if run.get("runtime") != "podman" and "render" not in groups:
            return fail(f"{node.path}: permission denied inside the container, started without the render group",
                        f"The run command adds {', '.join(groups) or 'no groups'}; on current hosts /dev/kfd and the "
                        "render nodes belong to 'render', so a non-root container user cannot open them.",
                        evidence=(node.path,),
                        fix=Fix("Start the container with both groups.",
                                ("docker run --device=/dev/kfd --device=/dev/dri --group-add video --group-add render IMAGE",)))
    if node.mode is None and (user is None or not user.groups_known):
        if f.container.found or _container_runs(f):
            return warn(f"{node.path}: permission denied inside a container", f"{what}. Paste the run command, "
                        "`ls -l /dev/kfd /dev/dri/renderD*` and `id` from inside the container.", evidence=(node.path,))
        # EACCES for an ordinary user on the host: distributions create these nodes 0660 root:render (udev), so the
        # user is not in the group; a root-only node (0600) is the exception, which `ls -l` shows.
        return fail(f"{node.path}: permission denied — this user is not in the group that owns it",
                    f"{what}. Distributions give the GPU nodes to the 'render' group (older ones: 'video').",
                    evidence=(node.path,),
                    # Words, not a command: the node's mode is unknown, and for a 0600 root node group membership
                    # cannot help (fix safety, issue #10).
                    fix=Fix("Join the render and video groups (`sudo usermod -a -G render,video $LOGNAME`), then log "
                            "in again (a new ssh/desktop session). If `ls -l` shows the node as crw------- root, a udev "
                            "rule is needed instead.", needs_sudo=True, needs_relogin=True),
                    links=(DOCS,))
    return None


@check("kfd-access", "access", "This user can open /dev/kfd read-write.",
       "hsa_init opens /dev/kfd; when that fails every ROCm program sees no GPU (rocminfo: 'Unable to open "
       "/dev/kfd read-write: Permission denied').",
       "Join the group that owns /dev/kfd (usually render); if the node is root-only 0600, add a udev rule.")
def kfd_access(f: Facts) -> Iterable[Finding]:
    rep = f.rocminfo.value if f.rocminfo.found else None
    if rep is not None and rep.gpus and not rep.errors and not f.dev_kfd.found:
        # rocminfo lists GPU agents only after hsa_init opened /dev/kfd read-write as this user: measured access.
        yield ok(f"/dev/kfd opens for this user: rocminfo enumerated {len(rep.gpus)} GPU agent(s)")
        return
    system = f.raw.get("system")
    hip_seen = system.get("hip_devices_seen") if isinstance(system, dict) else None
    if os_family(f) == "windows" and not f.dev_kfd.found:
        yield skip("Windows: there is no /dev/kfd (HIP talks to the Windows driver)")
        return
    if isinstance(hip_seen, int) and hip_seen > 0 and f.wsl.found and f.wsl.value and not f.errors.value:
        # Under WSL the runtime reaches the GPU through /dev/dxg; a HIP program's device list shows it did
        # (rocm-cli#276: llama.cpp's `ROCm0 : AMD Radeon(TM) 8060S Graphics` on WSL2 with librocdxg).
        yield ok(f"WSL: the HIP runtime enumerated {hip_seen} AMD GPU(s) through /dev/dxg (there is no /dev/kfd "
                 "under WSL)")
        return
    if isinstance(hip_seen, int) and hip_seen > 0 and not f.dev_kfd.found and not f.errors.value:
        # A HIP program's own device list (llama.cpp's `found 1 ROCm devices: Device 0: Radeon RX 570 …`) exists only
        # after the runtime opened /dev/kfd in that process: measured access, as rocminfo's agents are.
        yield ok(f"/dev/kfd opens for this program: the HIP runtime enumerated {hip_seen} AMD GPU(s)")
        return
    if not f.dev_kfd.found or f.dev_kfd.value is None:
        yield skip("no /dev/kfd to check" if f.dev_kfd.known else "/dev/kfd not probed")
        return
    yield from _node_findings((f.dev_kfd.value,), f, "ROCm cannot initialise (hsa_init fails)")


@check("render-access", "access", "This user can open every /dev/dri/renderD* node.",
       "libhsakmt silently skips GPUs whose render node it cannot open, so a GPU just disappears.",
       "Join the group that owns the render nodes (render or video); fix the mode with a udev rule if root-only.")
def render_access(f: Facts) -> Iterable[Finding]:
    if not f.render_nodes.found or not f.render_nodes.value:
        if f.dev_kfd.found and f.render_nodes.status is Status.ABSENT:
            yield warn("/dev/kfd exists but no /dev/dri/renderD* node was found",
                       "Every ROCm GPU needs its render node; a container may have been started with /dev/kfd only.",
                       fix=Fix("Pass /dev/dri as well.", ("docker run --device=/dev/kfd --device=/dev/dri ...",)))
        else:
            yield skip("no render nodes to check")
        return
    yield from _node_findings(f.render_nodes.value, f, "ROCm skips that GPU without an error")


CHECKS = (kfd_access, render_access)
