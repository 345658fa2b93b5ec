"""Host-level hints that no single tool prints as a file: installed OS packages, loaded modules, the container
command line, and Windows.

* `apt show X` / `dpkg -l` / `dnf list` / `rpm -qa` -> `packages` {name: version} (an excerpt: partial by nature;
  a package not listed is unknown). `apt show rocm-libs` tells the system ROCm version.
* `lsmod` -> `commands.lsmod` verbatim.
* a shell prompt whose hostname is a container id (`root@101acc334128:/#`) -> `system.container_prompt`;
* `docker run` / `podman run` / `singularity exec` -> `container_run`: runtime, devices passed (`--device`),
  groups added (`--group-add`), `--privileged`, user (`-u`), image. The environment it sets goes to `env`
  (env.py).
* A Windows prompt or path (`C:\\Users\\…>`, `e:\\ai\\…\\site-packages`) -> `system.os_family` "windows".
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from rocm_triton_doctor.check.sources._frag import Fragment, command, merge

_LSMOD = re.compile(r"^(Module\s+Size\s+Used by|[a-z0-9_]+\s+\d{4,}\s+\d+(\s+\S+)?)\s*$")
_DPKG = re.compile(r"^ii\s+(?P<name>\S+?)(?::\w+)?\s+(?P<ver>\S+)\s")
_DNF = re.compile(r"^(?P<name>[A-Za-z0-9_.+-]+)\.(?:x86_64|noarch|aarch64|i686)\s+(?:\d+:)?(?P<ver>\d\S*)\s+\S+\s*$")
_WINDOWS = re.compile(r"(?:^|[\s(\"'=])[A-Za-z]:\\(?:Users|ai|Program Files|ProgramData|Windows|[\w .-]+\\[\w .-]+)", re.M)
# A program's own platform line: `Operating System: Windows 10.0.22631` (audio-separator), ComfyUI's `** Platform:
# Windows` and its error report's `**OS:** win32`, Python's `platform.platform()` (`Windows-10-10.0.22631-SP0`)
_WINDOWS_SAYS = re.compile(r"\b(?:Operating System|Platform|OS):?(?:\*\*)?\s+(?:Windows\b|win32\b)|\bWindows-1[01]-10\.0\.\d+")


def detect_lsmod(text: str) -> bool:
    return sum(1 for ln in text.splitlines() if _LSMOD.match(ln.strip())) >= 3


def parse_lsmod(text: str, cmd: str | None = None) -> Fragment:
    lines = [ln.rstrip() for ln in text.splitlines() if _LSMOD.match(ln.strip())]
    return command("lsmod", "\n".join(lines)) if lines else {}


def parse_packages(text: str, cmd: str | None = None) -> Fragment:
    pkgs: dict[str, str] = {}
    name: str | None = None
    tool: str | None = None
    for ln in text.splitlines():
        s = ln.rstrip()
        m = re.match(r"^Package:\s*(\S+)", s)
        if m:
            name = m.group(1)
            continue
        m = re.match(r"^Version:\s*(\S+)", s)
        if m and name:
            pkgs.setdefault(name, m.group(1))
            name = None
            continue
        m = _DPKG.match(s) or _DNF.match(s.strip())
        if m:
            pkgs.setdefault(m.group("name"), m.group("ver"))
            tool = "dpkg" if m.re is _DPKG else "rpm"
    if not pkgs:
        return {}
    # Which package database listed them (a dpkg `ii` line, a dnf/yum line): the tool a reinstall goes through.
    return {"packages": pkgs, **({"system": {"package_tool": tool}} if tool else {})}


def detect_packages(text: str) -> bool:
    return bool(re.search(r"^Package:\s*\S+\s*\n(?:.*\n)*?Version:\s*\S+", text, re.M)
                or any(_DPKG.match(ln) or _DNF.match(ln.strip()) for ln in text.splitlines()))


def _distrobox(s: str) -> Fragment:
    """`distrobox create -n NAME --image IMG --additional-flags "--device /dev/kfd --group-add render"`: a podman
    container (distrobox drives podman where it is installed, rootless), its engine flags in --additional-flags
    (amd-strix-halo-toolboxes#53)."""
    try:
        args = shlex.split(s)
    except ValueError:
        return {}
    flags: list[str] = []
    image = None
    for i, a in enumerate(args):
        nxt = args[i + 1] if i + 1 < len(args) else ""
        if a in ("--additional-flags", "-a"):
            flags.append(nxt)
        elif a.startswith("--additional-flags="):
            flags.append(a.split("=", 1)[1])
        elif a in ("--image", "-i"):
            image = nxt
    inner = parse_container_run("podman run " + " ".join(flags) + (f" {image}" if image else ""))
    runs = inner.get("container_run") or []
    for r in runs:
        r["via"] = "distrobox"
    return inner


def _toolbox(s: str) -> Fragment:
    """`toolbox create NAME --image IMG -- --device /dev/kfd --group-add render …`: a podman container (toolbox drives
    rootless podman); what follows `--` goes to `podman create` (kyuz0/amd-strix-halo-vllm-toolboxes#6)."""
    head, sep, flags = s.partition(" -- ")
    m = re.search(r"(?:--image|-i)[ =](\S+)", head)
    inner = parse_container_run("podman run " + (flags if sep else "") + (f" {m.group(1)}" if m else ""))
    for r in inner.get("container_run") or []:
        r["via"] = "toolbox"
    return inner


def parse_compose(text: str, cmd: str | None = None) -> Fragment:
    """A docker compose service with `image:` and `devices:` (ollama#738): the run it describes, as a docker run line
    gives it: device paths, group_add entries, privileged. Simple block YAML only (`- /dev/kfd` items)."""
    if not re.search(r"^\s*services:\s*$", text, re.M) or not re.search(r"^\s*devices:\s*$", text, re.M):
        # A compose file's device item left commented out, as shipped (hartmark/sd-rocm#4: `#      - "/dev/kfd:/dev/kfd"
        # # remove this line if running on non ROCm`): the service starts without that device.
        off = re.findall(r"^\s*#\s*-\s*[\"']?(/dev/(?:kfd|dri))\b[^\n]*$", text, re.M)
        if off and not re.search(r"^\s*-\s*[\"']?/dev/kfd\b", text, re.M):
            return {"container_run": [{"runtime": "docker", "devices": [], "group_add": [], "privileged": False,
                                       "via": "compose", "commented_out": sorted(set(off))}]}
        return {}
    run: dict[str, Any] = {"runtime": "docker", "devices": [], "group_add": [], "privileged": False, "via": "compose"}
    key = None
    for ln in text.splitlines():
        m = re.match(r"^\s*(?P<k>[\w-]+):\s*(?P<v>.*?)\s*$", ln)
        item = re.match(r"^\s*-\s*[\"']?(?P<v>[^\"'#]+?)[\"']?\s*$", ln)
        if m and not item:
            key, value = m.group("k"), m.group("v")
            if key == "image" and value:
                run["image"] = value.strip("\"'")
            elif key == "privileged":
                run["privileged"] = value.lower() == "true"
            continue
        if item and key in ("devices", "group_add"):
            value = item.group("v").split(":")[0] if key == "devices" else item.group("v")
            run["devices" if key == "devices" else "group_add"].append(value)
    return {"container_run": [run]} if run["devices"] or run.get("image") else {}


def parse_container_run(text: str, cmd: str | None = None) -> Fragment:
    frag: Fragment = {}
    text = re.sub(r"\\\n\s*", " ", text)  # a command continued over lines with backslashes is one command
    for line in ([cmd] if cmd else []) + text.splitlines():
        s = line.strip().strip("`")
        if re.search(r"\bdistrobox(?:\s+|-)create\b", s):
            merge(frag, _distrobox(s[re.search(r"\bdistrobox", s).start():]))  # type: ignore[union-attr]
            continue
        if re.search(r"\btoolbox\s+create\b", s):
            merge(frag, _toolbox(s[re.search(r"\btoolbox", s).start():]))  # type: ignore[union-attr]
            continue
        m = re.search(r"\b(docker|podman|singularity|apptainer|buildah)\s+(run|exec|create|from)\b(.*)$", s)
        if not m or (m.group(1) == "buildah") != (m.group(2) == "from") or (
                m.group(2) == "exec" and m.group(1) in ("docker", "podman")):
            # `docker exec NAME cmd` runs in a container that already exists: it passes no devices, so it says
            # nothing about how the container was started (VoiceStudio#1274). Singularity's exec starts one.
            continue
        try:
            args = shlex.split(m.group(3))
        except ValueError:
            args = m.group(3).split()
        # buildah builds through the same user-namespaced containers as podman (legacy-rocm-build#1549)
        run: dict[str, Any] = {"runtime": "podman" if m.group(1) == "buildah" else m.group(1), "devices": [],
                               "group_add": []}
        env: dict[str, str] = {}
        i = 0
        while i < len(args):
            a = args[i]
            val = args[i + 1] if i + 1 < len(args) else ""
            for flag, key in (("--device", "devices"), ("--group-add", "group_add")):
                if a == flag:
                    run[key].append(val)
                    i += 1
                elif a.startswith(flag + "="):
                    run[key].append(a.split("=", 1)[1])
            # `-e HSA_OVERRIDE_GFX_VERSION=11.5.1`: the environment the container's programs run with
            # (jammsen/proxmox-setup-scripts#1)
            ev = val if a in ("-e", "--env") else a.split("=", 1)[1] if a.startswith("--env=") else ""
            if "=" in ev and re.match(r"^(HSA_OVERRIDE_GFX_VERSION|[A-Z]+_VISIBLE_DEVICES)=", ev):
                k, v = ev.split("=", 1)
                env[k] = v
            if a in ("-u", "--user"):
                run["user"] = val
            elif a.startswith("--user="):
                run["user"] = a.split("=", 1)[1]
            elif a == "--privileged":
                run["privileged"] = True
            elif a in ("--gpus", "--runtime=nvidia") or a.startswith("--gpus="):
                run["gpus"] = True
            elif a == "--rocm":
                run["rocm_flag"] = True
            i += 1
        image = _image(args)
        if image:
            run["image"] = image  # the first bare word: the image, when no option takes a separate value before it
        if m.group(1) in ("docker", "podman"):
            run.setdefault("privileged", False)
        if re.search(r"\bsudo\b.*\bpodman\b", s):
            run["rootful"] = True  # `sudo podman …`: root's podman keeps no user namespace
        merge(frag, {"container_run": [run]})
        if env:
            merge(frag, {"env": env})
    return frag


# A shell prompt whose hostname is 12 hex digits: docker and podman name a container's host after the first 12
# digits of its id (`root@101acc334128:/var/lib/jenkins#`), which no installer picks for a real machine.
_CONTAINER_PROMPT = re.compile(r"^\s*(?:\([^)]*\)\s*)?[A-Za-z0-9_.-]*@(?P<host>[0-9a-f]{12}):\S*\s?[#$]", re.M)


def parse_prompt(text: str, cmd: str | None = None) -> Fragment:
    m = _CONTAINER_PROMPT.search(text)
    return {"system": {"container_prompt": m.group("host")}} if m else {}


# `dkms status` lines: DKMS 3 `amdgpu/6.16.13-2303411.24.04, 7.0.0-14-generic, x86_64: installed`, DKMS 2
# `amdgpu, 5.11.32-1509511.20.04, 5.4.0-90-generic, x86_64: installed`, a module only registered `amdgpu/6.3.6: added`.
_DKMS_LINE = re.compile(r"^\s*(?P<mod>[\w-]+)(?:/|,\s*)(?P<ver>[^,\s:]+)(?:,\s*(?P<kernel>[^,\s]+),\s*[^:\s]+)?:\s*"
                        r"(?P<state>added|built|installed)\b", re.M)
_DKMS_CMD = re.compile(r"^[ \t]*(?:\S*[$#][ \t]*)?(?:sudo[ \t]+)?dkms[ \t]+status[ \t]*$", re.M)
_PROMPT_LINE = re.compile(r"^\s*(?:[\w.@:~/-]*[$#]|>>>)\s")


def parse_dkms_status(text: str, cmd: str | None = None) -> Fragment:
    """`dkms status` (ROCm/amdgpu#115: AMD asks for it; "installed" means the module is built and in place for that
    kernel, "added" that it is registered but its build failed) -> `system.dkms_status`: one {module, version,
    kernel, state} per line. Read on the whole paste because an EMPTY output is evidence too: the command line
    followed by the next prompt with nothing between gives `system.dkms_status_shown` with no entries."""
    entries = [{"module": m.group("mod"), "version": m.group("ver"), "kernel": m.group("kernel"),
                "state": m.group("state")} for m in _DKMS_LINE.finditer(text)]
    shown = bool(entries)
    for m in _DKMS_CMD.finditer(text):
        rest = text[m.end():].split("\n")[1:]  # the lines after the command's own
        body: list[str] = []
        for ln in rest:
            if _PROMPT_LINE.match(ln):
                # the next command: the output ended (only an output that ended says "nothing listed")
                shown = shown or not any(b.strip() for b in body)
                break
            body.append(ln)
    if not shown:
        return {}
    return {"system": {"dkms_status_shown": True, **({"dkms_status": entries} if entries else {})}}


def parse_rocm_sdk_targets(text: str, cmd: str | None = None) -> Fragment:
    """`rocm-sdk targets` (TheRock's pip-installed ROCm): the gfx targets its installed libraries were built for,
    `gfx1100;gfx1101;gfx1102` -> `rocm_sdk.targets`."""
    found = re.findall(r"\bgfx[0-9a-f]{3,4}\b", text)
    return {"rocm_sdk": {"targets": sorted(set(found))}} if found else {}


# Options of docker/podman run that take a separate value (`--device /dev/kfd`), so that value is not the image.
_VALUED = {"--device", "--group-add", "-e", "--env", "-v", "--volume", "--name", "-u", "--user", "--network", "--net",
           "--ipc", "--shm-size", "--security-opt", "--cap-add", "--cap-drop", "-p", "--publish", "-w", "--workdir",
           "--entrypoint", "--runtime", "--gpus", "--env-file", "--mount", "-h", "--hostname", "--platform", "-m",
           "--memory", "--ulimit", "--label", "-l", "--tmpfs", "--pid", "--userns"}


def _image(args: list[str]) -> str | None:
    """The image of a run command: the first argument that is neither an option nor an option's value."""
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a in _VALUED:
            skip = True
            continue
        if not a.startswith("-"):
            return a
    return None


def parse_service(text: str, cmd: str | None = None) -> Fragment:
    """`journalctl -u NAME` (or `systemctl status NAME`) with output: the GPU program runs as that systemd unit."""
    rx = r"\b(?:journalctl\s+(?:-\S+\s+)*-u\s*|systemctl\s+status\s+)([A-Za-z0-9@_.:-]+)"
    m = re.search(rx, cmd or "") or re.search(r"^\s*" + rx[2:], text, re.M)  # also a bare command line in the paste
    if m and re.search(r"systemd\[1\]: Start|\w\[\d+\]: ", text):
        return {"system": {"service_unit": m.group(1)}}
    return {}


_SLURM_JOB = re.compile(r"(?:^|[\s$#>`])(srun|salloc)\s+(?P<args>-[^\n]*)", re.M)


def parse_slurm_job(text: str, cmd: str | None = None) -> Fragment:
    """A Slurm job step started in the paste (`srun … --pty bash`, `salloc …`) or its environment (`SLURM_JOB_ID=`):
    `system.slurm_job`, with `gpus_requested` when the command line asks for GPUs (`--gres=gpu…`, `--gpus…`,
    `-G`). With ConstrainDevices=yes a job's device cgroup holds only the devices it was allocated
    (ComputeCanada/puppet-magic_castle#460: an srun without --gres, then EPERM on /dev/kfd)."""
    frag: Fragment = {}
    for line in ([cmd] if cmd else []) + text.splitlines():
        m = _SLURM_JOB.search(line)
        if m:
            asks = bool(re.search(r"--gres[= ]\S*gpu|--gpus(?:-per-\w+)?[= ]|(?:^|\s)-G\s*\d", m.group("args")))
            merge(frag, {"system": {"slurm_job": {"gpus_requested": asks}}})
            if asks:
                break
    if not frag and re.search(r"^\s*(?:export\s+)?SLURM_JOB_ID=\d+", text, re.M):
        frag = {"system": {"slurm_job": {}}}
    return frag


def parse_cluster_devices(text: str, cmd: str | None = None) -> Fragment:
    """`kubectl get nodes -o custom-columns=…amd\\.com/gpu` and its rows -> `system.k8s_amd_gpu_capacity` (0 for
    `<none>`: the device plugin advertised no GPU, ROCm/k8s-device-plugin#148); a Proxmox LXC device line
    `/dev/dri/renderD128,gid=993` -> the node exists in the container with that gid (Hal0ai/hal0#2213)."""
    frag: Fragment = {}
    if re.search(r"capacity\.amd\\?\.com/gpu", text):
        caps = [m.group(1) for m in re.finditer(r"^\S+\s+(<none>|\d+)\s*$", text, re.M)]
        if caps:
            merge(frag, {"system": {"k8s_amd_gpu_capacity": sum(int(c) for c in caps if c.isdigit())}})
    for m in re.finditer(r"(/dev/(?:dri/renderD\d+|kfd)),gid=(\d+)", text):
        merge(frag, {"system": {"lxc_device_gids": {m.group(1): int(m.group(2))}}})
    return frag


def parse_amdgpu_install(text: str, cmd: str | None = None) -> Fragment:
    """`amdgpu-install --usecase=wsl,rocm --no-dkms`: AMD's ROCm-on-WSL install (legacy-rocm-build#6204), which is run
    only inside WSL -> `system.wsl_install`."""
    for line in ([cmd] if cmd else []) + text.splitlines():
        m = re.search(r"\bamdgpu-install\b.*--usecase[= ](?P<cases>[\w,]+)", line)
        if m and "wsl" in m.group("cases").split(","):
            return {"system": {"wsl_install": True}}
    return {}


# WSL2's kernel release (`uname -r`: `5.15.167.4-microsoft-standard-WSL2`), also where a report names it in prose
# ("kernel 6.18.x-microsoft-standard-WSL2", rocm-cli#276): Microsoft builds no other kernel with that suffix.
_WSL2_RELEASE = re.compile(r"\b\d+\.\d+[\w.]*-microsoft-standard-WSL2\b")


# The WSL kernel's GPU paravirtualisation driver in its log (`hv_vmbus: registering driver dxgkrnl`, `misc dxg: dxgk:
# dxgkio_query_adapter_info: Ioctl failed: -22`, microsoft/WSL#41654): it exists only in Microsoft's WSL kernels.
_DXGKRNL = re.compile(r"registering driver dxgkrnl\b|\bmisc dxg: dxgk:")


def parse_wsl_kernel(text: str, cmd: str | None = None) -> Fragment:
    """A WSL2 kernel release or the dxgkrnl driver's log lines anywhere in the text -> `system.wsl` (the machine is
    WSL)."""
    return {"system": {"wsl": True}} if _WSL2_RELEASE.search(text) or _DXGKRNL.search(text) else {}


def parse_nvidia_hints(text: str, cmd: str | None = None) -> Fragment:
    """NVIDIA's CUDA toolkit (`nvcc --version`: `Cuda compilation tools, release 11.4`), nvidia-smi's driver version,
    and a missing nvidia-smi (`nvidia-smi: command not found`, inside a container started without --gpus) -> `system`."""
    frag: Fragment = {}
    m = re.search(r"Cuda compilation tools, release (\d+\.\d+)", text)
    if m:
        merge(frag, {"system": {"cuda_toolkit": m.group(1)}})
    # nvidia-smi's table header, `| NVIDIA-SMI 566.14   Driver Version: 566.14   CUDA Version: 12.7 |`: the driver
    # answered, which it does only with an NVIDIA GPU present (Eddycrack864/UVR5-UI#31, the rows cut from the paste)
    m = re.search(r"NVIDIA-SMI \d[\d.]*\s+Driver Version:\s*(\d+\.\d+(?:\.\d+)?)", text)
    if m:
        merge(frag, {"system": {"nvidia_driver": m.group(1), "nvidia_smi_table": True}})
    if re.search(r"nvidia-smi: (?:command )?not found", text) or (cmd and "nvidia-smi" in cmd and "not found" in text):
        merge(frag, {"system": {"nvidia_smi_missing": True}})
    return frag


def parse_windows(text: str, cmd: str | None = None) -> Fragment:
    if _WINDOWS.search(text) or (cmd and _WINDOWS.search(cmd)) or _WINDOWS_SAYS.search(text):
        return {"system": {"os_family": "windows"}}
    return {}


def parse_apt_sources(text: str, cmd: str | None = None) -> Fragment:
    """AMD's apt repository lines (`deb [arch=amd64 signed-by=…] https://repo.radeon.com/rocm/apt/6.2.2 jammy main`,
    legacy-rocm-build#3946) -> `system.rocm_apt`: which repository, release (unless a shell variable) and
    distribution suite the machine installs ROCm from."""
    out: dict[str, Any] = {}
    for m in re.finditer(r"^\s*(?:echo\s+[\"']?)?deb\s+(?:\[[^\]]*\]\s+)?https?://repo\.radeon\.com/(?P<repo>rocm|amdgpu)/"
                         r"(?:apt|ubuntu)/(?P<ver>[^\s/]+)/?\s+(?P<suite>[a-z]+)\b", text, re.M):
        entry = {"suite": m.group("suite")}
        if not m.group("ver").startswith("$"):
            entry["version"] = m.group("ver")
        out.setdefault(m.group("repo"), entry)
    return {"system": {"rocm_apt": out}} if out else {}

