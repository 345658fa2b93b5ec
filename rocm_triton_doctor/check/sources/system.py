"""`uname -a` / `uname -r`, `/etc/os-release` (and `lsb_release -a`), `/proc/version`, kernel config lines.

Only texts that ARE a file's content are stored under that file's path: the os-release lines, the /proc/version
line, `uname -r` (which is /proc/sys/kernel/osrelease). `uname -a` also gives system.hostname/machine. Kernel
config lines (`zgrep CONFIG_HSA_AMD /proc/config.gz`, `grep … /boot/config-$(uname -r)`) go to the file the
command read; they are an excerpt, so a key they do not show stays unknown.
"""

from __future__ import annotations

import re

from rocm_triton_doctor.check.sources._frag import Fragment, file, gpu_seen, merge

_UNAME_A = re.compile(r"^Linux\s+(?P<host>\S+)\s+(?P<rel>\d+\.\d+\S*)\s+#.*?\s(?P<mach>x86_64|aarch64|ppc64le|s390x)\b")
_PROC_VERSION = re.compile(r"^Linux version \d+\.\d+\S*\s+\(.*$")
_OS_KEYS = re.compile(r"^(NAME|ID|ID_LIKE|VERSION_ID|VERSION|PRETTY_NAME|VERSION_CODENAME|UBUNTU_CODENAME)=.+$")
_CONFIG = re.compile(r"^(?:CONFIG_\w+=\S+|# CONFIG_\w+ is not set)\s*$")


def detect_uname(text: str) -> bool:
    return any(_UNAME_A.match(ln.strip()) for ln in text.splitlines())


def detect_os_release(text: str) -> bool:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return sum(1 for ln in lines if _OS_KEYS.match(ln)) >= 2


def detect_proc_version(text: str) -> bool:
    return any(_PROC_VERSION.match(ln.strip()) for ln in text.splitlines())


def detect_kernel_config(text: str) -> bool:
    return any(_CONFIG.match(ln.strip()) for ln in text.splitlines())


def parse_uname(text: str, cmd: str | None = None) -> Fragment:
    frag: Fragment = {}
    for ln in text.splitlines():
        m = _UNAME_A.match(ln.strip())
        if m:
            merge(frag, file("/proc/sys/kernel/osrelease", m.group("rel") + "\n"))
            merge(frag, {"system": {"hostname": m.group("host"), "machine": m.group("mach")}})
            return frag
    if cmd and re.search(r"uname\s+-r\b", cmd):
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        if lines and re.match(r"^\d+\.\d+\S*$", lines[0]):
            merge(frag, file("/proc/sys/kernel/osrelease", lines[0] + "\n"))
    return frag


def parse_os_release(text: str, cmd: str | None = None) -> Fragment:
    lines = [ln.strip() for ln in text.splitlines() if _OS_KEYS.match(ln.strip())]
    return file("/etc/os-release", "\n".join(lines) + "\n") if lines else {}


def parse_proc_version(text: str, cmd: str | None = None) -> Fragment:
    for ln in text.splitlines():
        if _PROC_VERSION.match(ln.strip()):
            return file("/proc/version", ln.strip() + "\n")
    return {}


# The kernel command line as pasted: the kernel's own log line (`Kernel command line: …`, `Command line: …`), a line
# that starts with BOOT_IMAGE=, or a run of at least three parameters naming one the GPU stack cares about (a
# `cat /proc/cmdline` shown without its command, ds4 PR 871, whose author cut its start: "… iommu.passthrough=0 …").
# Stored as /proc/cmdline, where the probe puts the live file. A cut line still says which parameters ARE set; no
# check reads a parameter's absence from it.
_CMDLINE_LOG = re.compile(r"(?:Kernel command line|\bCommand line):\s+(?P<line>\S.*)$")
_PARAM = re.compile(r"^[A-Za-z_][\w.-]*(?:=\S*)?$")
_GPU_PARAM = re.compile(r"^(?:BOOT_IMAGE=|root=|nomodeset$|amdgpu\.|ttm\.|iommu|amd_iommu|intel_iommu|pci=|pcie_|"
                        r"modprobe\.blacklist=|module_blacklist=|\w+\.\w+=)")


def _cmdline_of(line: str) -> str | None:
    s = line.strip().strip("`").lstrip("…").removeprefix("[…]").strip()
    m = _CMDLINE_LOG.search(s)
    if m:
        return m.group("line").strip()
    tokens = s.split()
    if s.startswith("BOOT_IMAGE="):
        return s
    if (len(tokens) >= 3 and all(_PARAM.match(t) for t in tokens) and sum("=" in t for t in tokens) >= 2
            and any(_GPU_PARAM.match(t) for t in tokens)):
        return s
    return None


# HIP's headers as a `find` or `ls` prints their paths (`/usr/include/hip/hip_bf16.h`, `/opt/rocm-6.4.3/include/hip/…`,
# llama.cpp#15196): the prefix each HIP tree is installed under.
_HIP_HEADER = re.compile(r"^\s*(?P<root>/(?:usr(?:/local)?|opt/rocm[\w.-]*))/include/hip/[\w./-]+\.h\s*$", re.M)


def parse_hip_headers(text: str, cmd: str | None = None) -> Fragment:
    roots = list(dict.fromkeys(m.group("root") for m in _HIP_HEADER.finditer(text)))
    return {"system": {"hip_include_roots": roots}} if roots else {}


def parse_cmdline(text: str, cmd: str | None = None) -> Fragment:
    for ln in text.splitlines():
        line = _cmdline_of(ln)
        if line:
            return file("/proc/cmdline", line + "\n")
    return {}


# Files the fact builders read, whose whole content a `cat PATH` shows (DESIGN §2: files under their real paths).
_CAT_FILES = re.compile(r"^(/etc/os-release|/usr/lib/os-release|/proc/version|/proc/sys/kernel/osrelease|/proc/cmdline|"
                        r"/opt/rocm[^/\s]*/\.info/version(?:-\w+)?|/sys/module/amdgpu/(?:initstate|version)|"
                        r"/proc/driver/nvidia/version|/proc/1/cgroup|/run/\.containerenv|"
                        r"/sys/class/kfd/kfd/topology/(?:system_properties|nodes/\d+/(?:properties|mem_banks/\d+/properties))|"
                        r"/sys/bus/pci/devices/[^/\s]+/(?:class|vendor|device))$")


def cat_path(cmd: str | None) -> str | None:
    """The one file a `cat PATH` command prints, when it is a file the facts read."""
    args = [a for a in (cmd or "").split()[1:] if not a.startswith("-")]
    return args[0] if len(args) == 1 and _CAT_FILES.match(args[0]) else None


def parse_cat(text: str, cmd: str | None = None) -> Fragment:
    path = cat_path(cmd)
    if path is None or "No such file or directory" in text or "Permission denied" in text:
        if path and "No such file or directory" in text:
            return file(path, None)  # probed: absent
        return {}
    body = "\n".join(ln.rstrip() for ln in text.splitlines()).strip("\n")
    return file(path, body + "\n") if body else {}


_CAT_MISSING = re.compile(r"^\s*cat: (?P<path>/\S+): No such file or directory\s*$", re.M)


def parse_missing_files(text: str, cmd: str | None = None) -> Fragment:
    """`cat: /sys/module/amdgpu/initstate: No such file or directory` anywhere (a tool's own output: rocm-smi prints
    it when amdgpu is not loaded, legacy-rocm-build#4098) records a file the facts read as probed-absent; rocm-smi's
    'Driver not initialized (amdgpu not found in modules)' says the same of the module."""
    frag: Fragment = {}
    for m in _CAT_MISSING.finditer(text):
        if _CAT_FILES.match(m.group("path")):
            merge(frag, file(m.group("path"), None))
    if re.search(r"amdgpu not found in modules", text):
        merge(frag, file("/sys/module/amdgpu/initstate", None))
    # modprobe names the running kernel's module directory: `Module amdgpu not found in directory
    # /lib/modules/5.15.133.1-microsoft-standard-WSL2` (harakas/amd_igpu_yolo_v8#1: a container on WSL2's kernel)
    # ollama: `amdgpu version file missing: /sys/module/amdgpu/version` (home-assistant/operating-system#3608)
    if re.search(r"amdgpu version file missing: /sys/module/amdgpu/version\b", text):
        merge(frag, file("/sys/module/amdgpu/version", None))
    mod = re.search(r"not found in directory /lib/modules/(\d+\.\d+[^\s/]*)", text)
    if mod:
        merge(frag, file("/proc/sys/kernel/osrelease", mod.group(1) + "\n"))
    return frag


def parse_kernel_config(text: str, cmd: str | None = None) -> Fragment:
    lines = [ln.strip() for ln in text.splitlines() if _CONFIG.match(ln.strip())]
    if not lines:
        return {}
    path = "/proc/config.gz"
    m = re.search(r"(/boot/config-\S+|/proc/config\.gz)", cmd or "")
    if m and "$(" not in m.group(1):
        path = m.group(1)
    return file(path, "\n".join(lines) + "\n")


# neofetch / fastfetch summaries, pasted into issue forms: `Kernel: 6.8.8-200.fc39.x86_64` (fastfetch also `Kernel:
# Linux 6.8.8-…`) and one `GPU[ N]: <name>` line per adapter (flathub/org.blender.Blender#181). Their OS line is a
# pretty name only, not an os-release file, so it is not read.
_FETCH_KEY = re.compile(r"^\s*(OS|Host|Kernel|Uptime|Packages|Shell|DE|WM|Terminal|CPU|GPU(?: \d+)?|Memory|Locale):\s+\S")


def detect_fetch(text: str) -> bool:
    keys = {m.group(1).split()[0] for ln in text.splitlines() if (m := _FETCH_KEY.match(ln))}
    return len(keys) >= 4 and "OS" in keys and bool(keys & {"Kernel", "GPU"})


def parse_fetch(text: str, cmd: str | None = None) -> Fragment:
    frag: Fragment = {}
    for ln in text.splitlines():
        m = re.match(r"^\s*Kernel:\s+(?:Linux\s+)?(\d+\.\d+\S*)\s*$", ln)
        if m:
            merge(frag, file("/proc/sys/kernel/osrelease", m.group(1) + "\n"))
        m = re.match(r"^\s*GPU(?: \d+)?:\s+(?P<n>(?:AMD|ATI)\b.+?)(?:\s+\[(?:Integrated|Discrete)\])?(?:\s+@\s+[\d.]+\s*GHz)?\s*$",
                     ln)
        if m:
            merge(frag, gpu_seen("fetch", None, m.group("n")))
    return frag

