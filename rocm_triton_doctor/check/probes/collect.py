"""Collect a Snapshot of the live machine (or of a directory tree standing in for one, via `root`).

All reads go through `root` so tests can point the probes at a fake sysfs/dev tree. Commands run only when
root is "/" (the tools of a fake tree cannot be run). The runtime probe starts first, in a subprocess, and runs
while the static probes read files (DESIGN §3).
"""

from __future__ import annotations

import datetime as _dt
import glob
import grp
import json
import os
import pwd
import shutil
import stat
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from rocm_triton_doctor import __version__
from rocm_triton_doctor.check.probes import codeobjects
from rocm_triton_doctor.check.probes.runner import CommandResult, Runner, run_command
from rocm_triton_doctor.check.snapshot import SCHEMA

SCRIPTS = Path(__file__).with_name("scripts")
RUNTIME_MARKER = "@@RTD-RUNTIME@@"

# Environment variables worth recording. Nothing outside this list is ever read into a snapshot, so no secret
# (tokens, passwords) can leak into a bug report.
ENV_NAMES = (
    "HSA_OVERRIDE_GFX_VERSION", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES",
    "GPU_DEVICE_ORDINAL", "PYTORCH_ROCM_ARCH", "HSA_ENABLE_SDMA", "HSA_ENABLE_PEER_SDMA", "HSA_XNACK",
    "HSAKMT_DEBUG_LEVEL", "AMD_LOG_LEVEL", "AMD_SERIALIZE_KERNEL", "AMD_SERIALIZE_COPY", "HIP_LAUNCH_BLOCKING",
    "CUDA_LAUNCH_BLOCKING", "HIP_PATH", "ROCM_PATH", "ROCM_HOME", "CUDA_HOME", "LD_LIBRARY_PATH", "LD_PRELOAD",
    "PATH", "VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH", "PYTHONNOUSERSITE", "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL", "TORCH_BLAS_PREFER_HIPBLASLT", "TORCH_ROCM_FA_PREFER_CK",
    "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL", "HSA_ENABLE_DXG_DETECTION", "CC", "WSL_DISTRO_NAME", "NCCL_PROTO",
)
ENV_PREFIXES = ("HSA_", "TRITON_", "MIOPEN_")  # HSA_*: compared with a workload's (check --pid/--unit)
# Pip index URLs may embed credentials (https://user:token@host/...); they are reduced to scheme+host below.
_URL_ENV = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL")

KERNEL_CONFIG_KEYS = ("CONFIG_HSA_AMD", "CONFIG_HSA_AMD_SVM", "CONFIG_DRM_AMDGPU", "CONFIG_HSA_AMD_P2P",
                      "CONFIG_DRM_AMDGPU_USERPTR")

STATIC_FILES = (
    "/etc/os-release", "/usr/lib/os-release", "/proc/version", "/proc/sys/kernel/osrelease", "/proc/cmdline",
    "/proc/1/cgroup", "/run/.containerenv", "/sys/module/amdgpu/initstate", "/sys/module/amdgpu/version",
    "/proc/driver/nvidia/version", "/opt/rocm/.info/version", "/sys/class/kfd/kfd/topology/system_properties",
    "/sys/class/kfd/kfd/topology/generation_id",
)
KFD_GLOBS = (
    "/sys/class/kfd/kfd/topology/nodes/*/properties",
    "/sys/class/kfd/kfd/topology/nodes/*/name",
    "/sys/class/kfd/kfd/topology/nodes/*/gpu_id",
    "/sys/class/kfd/kfd/topology/nodes/*/mem_banks/*/properties",
    "/opt/rocm-*/.info/version",
)
MAX_FILE = 256 * 1024

TOOLS = ("rocminfo", "rocm_agent_enumerator", "amd-smi", "rocm-smi", "nvidia-smi", "hipconfig", "cc", "gcc",
         "clang", "uv")


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


# The KFD node directory, whose listing paths() records (facts/gpus.py reads it as KFD_NODES).
KFD_NODES = "/sys/class/kfd/kfd/topology/nodes"


def _node_order(name: str) -> tuple[int, str]:
    return (int(name), name) if name.isdigit() else (1 << 30, name)


class Collector:
    def __init__(self, root: str = "/", runner: Runner = run_command, timeout: float = 10.0,
                 python: str | None = None, runtime: bool = True, runtime_timeout: float = 120.0,
                 environ: Mapping[str, str] | None = None, progress: Callable[[str], None] | None = None,
                 workload_pid: int | None = None, workload_unit: str | None = None):
        self.root = root
        self.workload_pid, self.workload_unit = workload_pid, workload_unit  # check --pid / --unit (probes/workload.py)
        self.live = os.path.realpath(root) == "/"
        self.runner = runner
        self.timeout = timeout
        # No --python: the doctor's own interpreter, or, when that has no torch, the nearest environment that has
        # one (probes/pythons.py); the search is recorded in the snapshot so `check` can say what it inspected.
        self.python_search: dict[str, object] | None = None
        if python:
            self.python = python
        elif self.live:
            from rocm_triton_doctor.check.probes import pythons

            self.python, self.python_search = pythons.choose(os.environ if environ is None else environ, runner=runner)
        else:
            self.python = sys.executable
        self.runtime = runtime
        self.runtime_timeout = runtime_timeout
        self.environ = dict(os.environ if environ is None else environ)
        self.progress = progress or (lambda _msg: None)
        self._pool: ThreadPoolExecutor | None = None
        self._runtime_fut: Future[dict[str, object]] | None = None
        self._python_fut: Future[dict[str, object]] | None = None

    # -- paths under root -------------------------------------------------------------------------------------
    def _p(self, path: str) -> str:
        return path if self.live else os.path.join(self.root, path.lstrip("/"))

    def read_file(self, path: str) -> str | None | dict[str, str]:
        """Content, None when absent, or {"error": ...} when present but unreadable."""
        try:
            with open(self._p(path), "rb") as fh:
                data = fh.read(MAX_FILE)
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            return None
        except OSError as exc:
            return {"error": f"{type(exc).__name__}: {exc.strerror or exc}"}
        return data.decode("utf-8", errors="replace")

    def glob(self, pattern: str) -> list[str]:
        base = self._p(pattern)
        hits = sorted(glob.glob(base))
        if self.live:
            return hits
        prefix = os.path.join(self.root, "")
        return ["/" + h[len(prefix):] if h.startswith(prefix) else h for h in hits]

    def stat_path(self, path: str) -> dict[str, object] | None:
        real = self._p(path)
        try:
            st = os.lstat(real)
        except FileNotFoundError:
            return None
        except OSError as exc:
            return {"exists": True, "error": f"{type(exc).__name__}: {exc.strerror or exc}"}
        info: dict[str, object] = {"exists": True, "mode": oct(st.st_mode), "uid": st.st_uid, "gid": st.st_gid,
                                   "owner": _user_name(st.st_uid), "group": _group_name(st.st_gid)}
        if stat.S_ISLNK(st.st_mode):
            info["link"] = os.readlink(real)
        if self.live:
            info["readable"] = os.access(real, os.R_OK)
            info["writable"] = os.access(real, os.W_OK)
        return info

    # -- sections ---------------------------------------------------------------------------------------------
    def files(self) -> dict[str, object]:
        out: dict[str, object] = {p: self.read_file(p) for p in STATIC_FILES}
        for pattern in KFD_GLOBS:
            for p in self.glob(pattern):
                out[p] = self.read_file(p)
        # Display-class PCI devices (class 0x03xxxx) only: enough to tell "an AMD GPU is plugged in but no driver
        # bound it" from "there is no AMD GPU", without lspci.
        for cls_path in self.glob("/sys/bus/pci/devices/*/class"):
            cls = self.read_file(cls_path)
            if isinstance(cls, str) and cls.strip().startswith("0x03"):
                base = cls_path.rsplit("/", 1)[0]
                out[cls_path] = cls
                for leaf in ("vendor", "device"):
                    out[f"{base}/{leaf}"] = self.read_file(f"{base}/{leaf}")
        rocm_path = self.environ.get("ROCM_PATH")
        if rocm_path:
            p = os.path.join(rocm_path, ".info/version")
            out[p] = self.read_file(p)
        release = out.get("/proc/sys/kernel/osrelease")
        if isinstance(release, str) and release.strip():
            cfg_path = f"/boot/config-{release.strip()}"
            cfg = self.read_file(cfg_path)
            if isinstance(cfg, str):  # keep only the lines the checks read: a full config is ~250 KiB
                keep = [ln for ln in cfg.splitlines()
                        if any(ln.startswith(k + "=") or ln == f"# {k} is not set" for k in KERNEL_CONFIG_KEYS)]
                cfg = "\n".join(keep) + ("\n" if keep else "")
            out[cfg_path] = cfg
        return out

    def paths(self) -> dict[str, object]:
        names = ["/dev/kfd", "/dev/dri", "/dev/dxg", "/.dockerenv", "/run/.containerenv", "/opt/rocm",
                 "/sys/module/amdgpu", "/sys/class/kfd",
                 "/sys/bus/pci/devices"]
        names += self.glob("/dev/dri/renderD*")
        names += self.glob("/opt/rocm-*")
        out: dict[str, object] = {n: self.stat_path(n) for n in names}
        # The KFD node directory's listing: the node files alone cannot tell "KFD has only its CPU node" from "the
        # GPU node's files were not read" (facts/gpus.py needs the list to call a GPU node absent).
        nodes = self.stat_path(KFD_NODES)
        if isinstance(nodes, dict) and "error" not in nodes:
            nodes["entries"] = sorted((p.rsplit("/", 1)[1] for p in self.glob(KFD_NODES + "/*")), key=_node_order)
        out[KFD_NODES] = nodes
        return out

    def env(self) -> dict[str, str]:
        out = {}
        for k, v in self.environ.items():
            if k in ENV_NAMES or k.startswith(ENV_PREFIXES):
                out[k] = _strip_credentials(v) if k in _URL_ENV else v
        return out

    def user(self) -> dict[str, object]:
        uid = os.getuid()
        name = _user_name(uid) or str(uid)
        current = sorted({g for g in (_group_name(gid) for gid in os.getgroups()) if g})
        configured = set()
        try:
            configured.add(grp.getgrgid(pwd.getpwuid(uid).pw_gid).gr_name)
        except (KeyError, OSError):
            pass
        try:
            configured |= {g.gr_name for g in grp.getgrall() if name in g.gr_mem}
        except OSError:
            pass
        return {"name": name, "uid": uid, "groups": current, "groups_configured": sorted(configured)}

    def which(self) -> dict[str, str | None]:
        rocm_bins = [os.path.join(self.environ.get("ROCM_PATH", "/opt/rocm"), "bin"), "/opt/rocm/bin"]
        search = os.pathsep.join([self.environ.get("PATH", os.defpath)] + rocm_bins)
        return {t: shutil.which(t, path=search) for t in TOOLS}

    def commands(self, which: dict[str, str | None]) -> dict[str, object]:
        plan: dict[str, list[str]] = {}
        if which.get("rocminfo"):
            plan["rocminfo"] = [str(which["rocminfo"])]
        if which.get("rocm_agent_enumerator"):
            plan["rocm_agent_enumerator"] = [str(which["rocm_agent_enumerator"])]
        if which.get("amd-smi"):
            plan["amd-smi"] = [str(which["amd-smi"]), "static", "--asic", "--json"]
        elif which.get("rocm-smi"):
            plan["rocm-smi"] = [str(which["rocm-smi"]), "--showproductname"]
        if which.get("nvidia-smi"):
            plan["nvidia-smi"] = [str(which["nvidia-smi"]),
                                  "--query-gpu=name,driver_version,memory.total,compute_cap,pci.bus_id",
                                  "--format=csv,noheader"]
        results: dict[str, object] = {name: None for name in ("rocminfo", "rocm_agent_enumerator", "nvidia-smi")}
        if not plan:
            return results
        env = _tool_env(self.environ)
        with ThreadPoolExecutor(max_workers=len(plan)) as pool:
            futs = {name: pool.submit(self.runner, argv, self.timeout, env) for name, argv in plan.items()}
            for name, fut in futs.items():
                results[name] = fut.result().to_dict()
        return results

    def python_env(self) -> dict[str, object]:
        res = self.runner([self.python, str(SCRIPTS / "pyenv_probe.py")], self.timeout, _python_env(self.environ))
        return _parse_json_result(res, marker=None)

    def runtime_probe(self) -> dict[str, object]:
        """torch (and, when a GPU is usable, Triton) facts from the target interpreter, in a subprocess.

        One process on purpose: Triton's driver selection imports torch itself, so a second process would only
        repeat the import (measured on the H200: no gain)."""
        from rocm_triton_doctor.check.probes.runtime import run_probe

        return run_probe(self.python, self.runtime_timeout, self.environ, self.runner)

    def _read_bytes(self, path: str) -> bytes | None:
        try:
            with open(self._p(path), "rb") as fh:
                return fh.read(MAX_FILE)
        except (FileNotFoundError, NotADirectoryError):
            return None

    def workload_env(self) -> dict[str, object] | None:
        """The environment of the process / systemd unit named by --pid / --unit (None when neither was named)."""
        from rocm_triton_doctor.check.probes import workload

        if self.workload_pid is not None:
            return workload.read_pid(self.workload_pid, self._read_bytes)
        if self.workload_unit:
            return workload.read_unit(self.workload_unit, self.runner, self.environ, self._read_bytes, self.timeout)
        return None

    # -- the whole snapshot -----------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the slow subprocess probes now, so they overlap whatever the caller does next (imports, files)."""
        if self._pool is not None:
            return
        self._pool = ThreadPoolExecutor(max_workers=2)
        self._runtime_fut = self._pool.submit(self.runtime_probe) if (self.runtime and self.live) else None
        self._python_fut = self._pool.submit(self.python_env) if self.live else None

    def collect(self) -> dict[str, object]:
        snap: dict[str, object] = {"schema": SCHEMA, "created": _now(), "tool_version": __version__}
        self.start()
        runtime_fut, python_fut = self._runtime_fut, self._python_fut
        try:
            self.progress("reading system files")
            snap["files"] = self.files()
            snap["paths"] = self.paths()
            snap["env"] = self.env()
            if self.workload_pid is not None or self.workload_unit:
                snap["workload_env"] = self.workload_env()
            if self.live:
                snap["system"] = {"hostname": os.uname().nodename, "machine": os.uname().machine}
                from rocm_triton_doctor.check.probes import smoke_history

                snap["smoke_results"] = smoke_history.read()  # what `smoke` last saw here (torch.compile's verdict)
                snap["user"] = self.user()
                which = self.which()
                snap["which"] = which
                self.progress("running ROCm/NVIDIA tools")
                snap["commands"] = self.commands(which)
            if self.python_search is not None:
                snap["python_search"] = self.python_search
            if python_fut is not None:
                self.progress("inspecting the Python environment")
                snap["python"] = python_fut.result()
                snap["codeobjects"] = codeobjects.section(snap["python"])  # reads the binaries that python has
            if runtime_fut is not None:
                self.progress("importing torch in the target interpreter")
                snap["runtime"] = runtime_fut.result()
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._pool = None
        return snap


def _parse_json_result(res: CommandResult, marker: str | None) -> dict[str, object]:
    if res.missing:
        return {"error": f"interpreter not found: {res.argv[0]}"}
    if res.timed_out:
        return {"error": f"timed out after {res.seconds:.0f} s", "timed_out": True}
    if res.error:
        return {"error": res.error}
    text = res.stdout
    if marker is not None:
        if marker not in text:
            tail = (res.stderr.strip().splitlines() or ["no output"])[-1][:500]
            return {"error": f"probe exited with code {res.returncode}: {tail}",
                    "returncode": res.returncode, "stderr_tail": res.stderr[-4000:]}
        text = text.rsplit(marker, 1)[1]
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    try:
        data = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        tail = (res.stderr.strip().splitlines() or ["no output"])[-1][:500]
        return {"error": f"probe gave no result (exit {res.returncode}): {tail}"}
    return data


def _python_env(environ: Mapping[str, str]) -> dict[str, str]:
    env = dict(environ)
    env.setdefault("PYTHONIOENCODING", "utf-8")
    env.pop("TRITON_INTERPRET", None)  # the runtime probe must see the real backend
    return env


def _tool_env(environ: Mapping[str, str]) -> dict[str, str]:
    env = dict(environ)
    env["LC_ALL"] = "C"  # parsers expect English tool output
    return env


def _strip_credentials(value: str) -> str:
    from urllib.parse import urlsplit

    parts = []
    for url in value.split():
        u = urlsplit(url)
        parts.append(f"{u.scheme}://{u.hostname}{u.path}" if u.scheme and u.hostname else url)
    return " ".join(parts)


def _user_name(uid: int) -> str | None:
    try:
        return pwd.getpwuid(uid).pw_name
    except (KeyError, OSError):
        return None


def _group_name(gid: int) -> str | None:
    try:
        return grp.getgrgid(gid).gr_name
    except (KeyError, OSError):
        return None


def collect_snapshot(root: str = "/", **kwargs: object) -> dict[str, object]:
    return Collector(root=root, **kwargs).collect()  # type: ignore[arg-type]


__all__: Sequence[str] = ("ENV_NAMES", "Collector", "collect_snapshot")
