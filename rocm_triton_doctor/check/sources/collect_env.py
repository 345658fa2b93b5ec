"""`python -m torch.utils.collect_env` (torch's and vLLM's variant, "key: value" or "key   : value"), and the
short torch self-checks people print ("Torch version: …", "CUDA available: True", `torch.__version__`).

What it gives, per torch/utils/collect_env.py:
* `PyTorch version` = torch.__version__ -> runtime.torch_version;
* `ROCM used to build PyTorch` = torch.version.hip ("N/A" when None) -> runtime.hip_version (null on N/A);
* `CUDA used to build PyTorch` = torch.version.cuda -> runtime.cuda_version (null on N/A);
* `Is CUDA available` -> runtime.is_available; `GPU models and configuration` -> runtime.devices (gcnArchName from
  the "(gfx…)" suffix that ROCm builds print);
* `Python version` -> python.version; `Python platform` "Linux-<release>-<machine>-with-…" -> the kernel release
  (the text of /proc/sys/kernel/osrelease); `OS:` -> system.os (free text, not /etc/os-release);
* `[pip3] name==version` / `[conda] name version …` lines: only "relevant libraries" (collect_env filters them by
  name), so `python.distributions` is marked partial.
"""

from __future__ import annotations

import re
from typing import Any

from rocm_triton_doctor.check.sources._frag import Fragment, file, gfx_names, merge

_KEY = re.compile(r"^(?P<key>[A-Za-z][A-Za-z0-9 _./()-]*?)\s*:\s?(?P<value>.*)$")
_NA = {"n/a", "none", "could not collect", "no cuda", ""}


# torch.utils.collect_env.get_env_info()'s fields as JSON (AUTOMATIC1111's sysinfo "Torch env info", ModelSurge/
# sd-webui-comfyui#209) -> the labels collect_env prints them under.
_JSON_KEYS = {"torch_version": "PyTorch version", "cuda_compiled_version": "CUDA used to build PyTorch",
              "hip_compiled_version": "ROCM used to build PyTorch", "is_cuda_available": "Is CUDA available",
              "nvidia_gpu_models": "GPU models and configuration", "nvidia_driver_version": "Nvidia driver version",
              "hip_runtime_version": "HIP runtime version", "miopen_runtime_version": "MIOpen runtime version",
              "python_version": "Python version", "python_platform": "Python platform", "os": "OS"}
_JSON_LINE = re.compile(r'^\s*"(?P<key>[a-z_]+)"\s*:\s*(?:"(?P<s>(?:[^"\\]|\\.)*)"|(?P<lit>null|true|false))\s*,?\s*$')


def _from_json(text: str) -> str:
    """get_env_info()'s JSON lines rewritten as collect_env's `Label: value` lines ("" when there are none)."""
    out = []
    for ln in text.splitlines():
        m = _JSON_LINE.match(ln)
        if m and m.group("key") in _JSON_KEYS:
            value = m.group("s") if m.group("s") is not None else {"null": "N/A"}.get(m.group("lit"), m.group("lit"))
            out.append(f"{_JSON_KEYS[m.group('key')]}: {value}")
    return "\n".join(out) if len(out) >= 2 else ""


def detect(text: str) -> bool:
    if '"torch_version"' in text and _from_json(text):
        return True
    keys = ("PyTorch version", "ROCM used to build PyTorch", "Is CUDA available", "CUDA used to build PyTorch",
            "HIP runtime version", "Collecting environment information", "Torch version", "CUDA available",
            "torch.__version__", "torch.version.hip")
    return sum(1 for k in keys if k in text) >= 2 or bool(re.search(r"^\[(pip3?|conda)\] \S", text, re.M))


def _na(value: str) -> bool:
    return value.strip().lower() in _NA


def parse(text: str, cmd: str | None = None) -> Fragment:
    if '"torch_version"' in text:
        text = _from_json(text) or text
    # A paste that joined the banner and the first key onto one line (`Collecting environment information...    PyTorch
    # version: 2.7.0.dev20250123+rocm6.3`, pytorch#145670): the key starts its own line again.
    text = re.sub(r"(Collecting environment information\.\.\.)[ \t]+(?=\S)", "\\1\n", text)
    # The same keys as a markdown list, as issue templates render them: `- **PyTorch version**: 2.11.0.dev…+rocm7.1`
    # (pytorch#174282).
    text = re.sub(r"^\s*[-*]\s+\*\*([^*\n]+?)\*\*\s*:", r"\1:", text, flags=re.M)
    kv: dict[str, str] = {}
    lines = text.splitlines()
    gpu_lines: list[str] = []
    for i, ln in enumerate(lines):
        m = _KEY.match(ln.strip())
        if not m:
            continue
        key = re.sub(r"\s+", " ", m.group("key")).strip().lower()
        kv.setdefault(key, m.group("value").strip())
        if key == "gpu models and configuration":
            gpu_lines = [m.group("value").strip()] if m.group("value").strip() else []
            for nxt in lines[i + 1:]:  # NVIDIA: "GPU 0: …" lines follow the key
                if re.match(r"^\s*GPU \d+:", nxt):
                    gpu_lines.append(nxt.strip())
                else:
                    break
    frag: Fragment = {}
    runtime: dict[str, Any] = {}
    tv = kv.get("pytorch version") or kv.get("torch version") or kv.get("torch.__version__")
    if tv and not _na(tv):
        runtime["torch_version"] = tv.strip("'\"")
    hip = kv.get("rocm used to build pytorch") or kv.get("hip version") or kv.get("torch.version.hip")
    if hip is not None:
        runtime["hip_version"] = None if _na(hip) else hip.strip("'\"")
    cuda = kv.get("cuda used to build pytorch") or kv.get("cuda version") or kv.get("torch.version.cuda")
    if cuda is not None:
        runtime["cuda_version"] = None if _na(cuda) else cuda.strip("'\"")
    avail = kv.get("is cuda available") or kv.get("cuda available") or kv.get("torch.cuda.is_available()")
    if avail is not None and avail.strip().lower() in ("true", "false", "yes", "no"):
        runtime["is_available"] = avail.strip().lower() in ("true", "yes")
    xpu = kv.get("is xpu available")
    if xpu is not None and xpu.strip().lower() == "true":
        # An Intel GPU (XPU) build that sees its GPU (torch-xpu-ops#4914): a CUDA-only message on this machine is a
        # program calling torch.cuda, not a wrong wheel. Recorded apart from `runtime` (which is CUDA/HIP's view).
        frag.setdefault("system", {})["xpu_available"] = True
    devices = _devices(gpu_lines, runtime)
    if devices is not None:
        runtime["devices"] = devices
        runtime["device_count"] = len(devices)
    driver = kv.get("nvidia driver version", "N/A")
    nvidia = [n for n in (re.sub(r"^GPU \d+\s*[:：]\s*", "", g).strip() for g in gpu_lines)
              if re.match(r"^(?:NVIDIA|Tesla|Quadro|GeForce)\b", n)]
    if not _na(driver) and re.match(r"^\d+\.\d+", driver.strip()):
        frag.setdefault("system", {})["nvidia_driver"] = driver.strip()
        if nvidia:
            # With a driver version, collect_env got these names from nvidia-smi when torch could not see the GPU:
            # they are the machine's GPUs whatever torch is (a CPU torch on an RTX 4090: textgen#645).
            frag["system"]["nvidia_gpus"] = nvidia
    for key, field in (("hip runtime version", "hip_runtime_version"), ("miopen runtime version", "miopen_version")):
        if key in kv:  # extension keys: what collect_env found at run time ("N/A": none)
            runtime[field] = None if _na(kv[key]) else kv[key]
    if runtime:
        frag["runtime"] = runtime
    # vLLM's collect_env (vllm/platforms/cuda.py) warns when the deprecated `pynvml` package is importable
    if re.search(r"You are using a deprecated `pynvml` package", text):
        merge(frag, {"python": {"distributions": {"pynvml": {}}}})
    py = kv.get("python version")
    if py:
        m = re.match(r"^(\d+\.\d+(?:\.\d+)?)", py)
        if m:
            merge(frag, {"python": {"version": m.group(1)}})
    plat = kv.get("python platform")
    if plat:
        m = re.match(r"^Linux-(?P<rel>.+?)-(?P<mach>x86_64|aarch64|ppc64le|s390x)(?:-with-.*)?$", plat)
        if m:
            merge(frag, file("/proc/sys/kernel/osrelease", m.group("rel") + "\n"))
            merge(frag, {"system": {"machine": m.group("mach")}})
    osname = kv.get("os")
    if osname and not _na(osname):
        merge(frag, {"system": {"os": osname}})
    dists = _libraries(lines)
    if dists:
        merge(frag, {"python": {"distributions": dists}})
    return frag


def _devices(gpu_lines: list[str], runtime: dict[str, Any]) -> list[dict[str, Any]] | None:
    """Devices only when torch saw some: collect_env prints the names only when CUDA/HIP is available."""
    text = " ".join(gpu_lines)
    if not gpu_lines or _na(text) or runtime.get("is_available") is False:
        return None
    out: list[dict[str, Any]] = []
    entries = [re.sub(r"^GPU \d+:\s*", "", g) for g in gpu_lines if not _na(g)]
    for i, entry in enumerate(entries):
        d: dict[str, Any] = {"index": i}
        gs = gfx_names(entry)
        name = re.sub(r"\s*\((gfx[^)]*)\)\s*$", "", entry).strip()
        if name:
            d["name"] = name
        full = re.search(r"\((gfx[^)]*)\)", entry)  # keep the feature suffix: "gfx908:sramecc+:xnack-"
        if full:
            d["gcnArchName"] = full.group(1)
        elif gs:
            d["gcnArchName"] = gs[0]
        out.append(d)
    return out


def _libraries(lines: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for ln in lines:
        m = re.match(r"^\[(?:pip3?|conda)\]\s+(?P<name>[A-Za-z0-9_.-]+)(?:==|\s+)(?P<ver>[0-9][^\s]*)", ln.strip())
        if m:
            out.setdefault(m.group("name").lower(), m.group("ver"))
    return out
