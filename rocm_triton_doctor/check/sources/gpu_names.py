"""GPU names and gfx targets in the forms other tools print them -> `gpus_seen` (tool, gfx, name, index, pci_id).

* ollama server log: `detected amdgpu versions [gfx1103]`, `amdgpu [0] gfx1103 is not supported by … [list]`,
  `amdgpu is not supported (supported types:[…])" gpu_type=gfx1031`, `inference compute … compute=gfx1030`; the
  list of SUPPORTED types is not a GPU. Its `skipping rocm gfx compatibility check" HSA_OVERRIDE_GFX_VERSION="…"`
  line shows the server's own override (Go-quoted) -> `env`.
* llama.cpp: `Device 0: AMD Radeon Graphics, gfx1152 (0x1152), VMM: no`; HIP runtime: `No compatible code objects
  found for: gfx1152`; AMD_LOG_LEVEL: `Gfx Major/Minor/Stepping: 11/0/2`.
* clinfo / rocm-clinfo (`Board name:` + `Name: gfx…`), vulkaninfo (`(RADV GFX1151)`), tensorflow-rocm
  (`with AMDGPU version : gfx1031`), lspci (`[AMD/ATI] Navi 22 [Radeon RX 6700 …]`, `1002:1638`).
"""

from __future__ import annotations

import json
import re

from rocm_triton_doctor.check.sources._frag import Fragment, command, gfx_names, gpu_seen, merge, log_line


# ROCm's issue form renders its GPU field as a `### GPU` heading with the reporter's answer under it
# (legacy-rocm-build#5264: `2x AMD Radeon (TM) Pro WX 5100 Graphics`; #5942: `Primary: RX 7800 XT, Secondary: RX 580`).
_FORM_GPU = re.compile(r"^###\s*GPU(?: model)?\s*\n+\s*(?P<v>[^\n#]+)", re.M)  # InvokeAI's form: `### GPU model`


def _form_gpus(text: str, frag: Fragment) -> None:
    m = _FORM_GPU.search(text)
    if not m:
        return
    for part in re.split(r"[,;+/]|\band\b", m.group("v")):
        name = re.sub(r"^\s*(?:\d+\s*x\s*|(?:primary|secondary)\s*:\s*)", "", part, flags=re.I).strip()
        if re.search(r"\b(?:Radeon|Instinct|MI\d{2,3}X?|RX\s*\d{3,4})\b", name, re.I):
            merge(frag, gpu_seen("text", None, name))


# An APU's processor name carries its integrated GPU: `AMD Ryzen AI 9 HX 370 w/ Radeon 890M` (TheRock#3046),
# `Model name: AMD Ryzen 7 7840HS w/ Radeon 780M Graphics` (lscpu, collect_env's CPU section).
_APU_IGPU = re.compile(r"\bRyzen\b[^\n]*?\bw/\s*(?P<n>Radeon\s+\d{3,4}M)\b")


def parse(text: str, cmd: str | None = None) -> Fragment:
    frag: Fragment = {}
    _form_gpus(text, frag)
    for apu in _APU_IGPU.finditer(text):
        merge(frag, gpu_seen("text", None, apu.group("n")))
    agent_names = re.search(r"^\s*Name:\s+gfx[0-9a-f]{3,4}\s*$", text, re.M) is not None
    for ln in text.splitlines():
        s = log_line(ln)
        _ollama(s, frag)
        # An installer's or app's own GPU line: `gpu  AMD ROCm (gfx1201)` (unsloth#8731), a setup list's `Ryzen AI 7 350 /
        # Radeon 860M (gfx1152)` (lemonade#2002): AMD, ROCm or Radeon and a target in parentheses
        m = re.search(r"\b(?:AMD|ROCm|Radeon)\b[^()\n]*\((gfx[0-9a-f]{3,4})\)", s)
        if m and "supported" not in s.lower():
            merge(frag, gpu_seen("text", m.group(1).lower()))
        # hipDeviceProp_t.gcnArchName as programs print it: `gcnArchName=gfx906:sramecc+:xnack-` (AlphaMine-Tech/
        # alpha-miner#5), `gcnArchName: 'gfx90a:sramecc+:xnack-'`: the HIP runtime's own device, so its real target
        m = re.search(r"\bgcnArchName\s*[=:]\s*['\"]?(gfx[0-9a-f]{3,4})\b", s)
        if m and "DeviceProperties(" not in s:  # torch's own properties repr is read with its name (repl.py)
            merge(frag, gpu_seen("hip", m.group(1).lower()))
        # A launcher's detection line: `::  Detected GPU via Windows registry: AMD Radeon RX 9070 XT`
        # (patientx/ComfyUI-Zluda#263)
        m = re.search(r"\b(?:Detected|Found|Using) GPU(?: via [^:\n]+)?:\s+(?P<n>(?:AMD\s+)?Radeon\b[^\n]*?)\s*$", s)
        if m:
            merge(frag, gpu_seen("text", None, m.group("n")))
        # Tensile's and hipBLASLt's benchmark banner: `# Detected local GPU with ISA: gfx942`, one line per GPU the
        # runtime enumerated (ROCm/Tensile#2071, 8x MI300X); lemonade's backend table: `Unsupported GPU: gfx1036`
        # (lemonade#2302: the GPU it found, which its ROCm backend lacks).
        m = re.search(r"Detected local GPU with ISA:\s*(gfx[0-9a-f]{3,4})\b|\bUnsupported GPU:\s*(gfx[0-9a-f]{3,4})\b", s)
        if m:
            merge(frag, gpu_seen("text", (m.group(1) or m.group(2)).lower()))
        # SD.Next (Windows, HIP SDK): `ROCm: version=6.4, using agent gfx1200` (vladmandic/sdnext#4211)
        m = re.search(r"ROCm: version=[\w.]+, using agent (gfx[0-9a-f]{3,4})\b", s)
        if m:
            merge(frag, gpu_seen("text", m.group(1).lower()))
        # ComfyUI's startup: `AMD arch: gfx1151` (torch's gcnArchName for the device it opened: the runtime's view),
        # also where a reply quotes it inside a sentence (comfyui-rocm#115: "… later it says : [INFO] AMD arch: gfx1036").
        m = re.search(r"(?:^|[\s\]:])AMD arch:\s*(gfx[0-9a-f]{3,4})\b", s)
        if m:
            merge(frag, gpu_seen("torch", m.group(1).lower()))
        # The AMD GPU node labeller's Kubernetes labels: `amd.com/gpu.device-id: 74b5` (k8s-device-plugin#112, AKS MI300X):
        # the PCI device id it read from the GPU.
        m = re.search(r"\bamd\.com/gpu\.device-id:\s*\"?([0-9a-fA-F]{4})\b", s)
        if m:
            merge(frag, gpu_seen("node-labeller", None, pci_id="1002:" + m.group(1).lower()))
        # comfyui-rocm's launcher (`[INFO] Detecting GPU architecture...` then `[INFO] GPU arch: gfx1200`): the GPU its
        # Windows detector found, not necessarily the one torch opens (comfyui-rocm#115: the dGPU, while torch's device
        # 0 was the iGPU).
        m = re.match(r"^GPU arch:\s*(gfx[0-9a-f]{3,4})\b", s)
        if m:
            merge(frag, gpu_seen("text", m.group(1).lower()))
        # `torch.cuda.get_device_properties(i)` printed: name and gcnArchName of a device torch opened.
        m = re.search(r"_CudaDeviceProperties\(name='(?P<name>[^']*)'.*?gcnArchName='(?P<gfx>gfx[0-9a-f]{3,4})", s)
        if m:
            merge(frag, gpu_seen("torch", m.group("gfx").lower(), m.group("name")))
            merge(frag, {"runtime": {"is_available": True}})
        m = re.search(r"Device (\d+): (?P<name>[^,]+), (?P<gfx>gfx\w+)(?::[\w+-:]+)? \(0x[0-9a-f]+\)", s)
        if m:
            merge(frag, gpu_seen("llama.cpp", m.group("gfx").lower(), m.group("name").strip(), index=int(m.group(1))))
        # llama.cpp's device list (`--list-devices`: `ROCm0: AMD Radeon RX 7900 XTX (24560 MiB, 24472 MiB free)`;
        # lemonade: `ROCm0 : AMD Radeon(TM) 8060S Graphics`): the GPUs its ROCm backend got from the HIP runtime.
        m = re.search(r"\bROCm(\d+)\s*:\s*(?P<name>(?:AMD|Radeon)\b[^`\n]*?)\s*(?:\(\d[^)]*MiB|`|$)", s)
        if m:
            merge(frag, gpu_seen("llama.cpp", None, m.group("name").strip(), index=int(m.group(1))))
        m = re.search(r"Device (\d+): (?P<name>[^,]+), compute capability", s)
        if m:
            merge(frag, gpu_seen("llama.cpp", None, m.group("name").strip(), index=int(m.group(1))))
        m = re.search(r"No compatible code objects found for: (gfx\w+)", s)
        if m:
            merge(frag, gpu_seen("hip", m.group(1).lower()))
        m = re.search(r"Gfx Major/Minor/Stepping: (\d+)/(\d+)/(\d+)", s)
        if m:
            merge(frag, gpu_seen("hip", f"gfx{int(m.group(1))}{int(m.group(2))}{int(m.group(3)):x}"))
        m = re.search(r"GPU id = (\d+) \((?P<name>.+) \(RADV (?P<gfx>GFX\w+)\)\)", s)
        if m:
            merge(frag, gpu_seen("vulkaninfo", m.group("gfx").lower(), m.group("name"), index=int(m.group(1))))
        m = re.search(r"with AMDGPU version\s*:\s*(gfx\w+)", s)
        if m:
            merge(frag, gpu_seen("tensorflow", m.group(1).lower()))
        m = re.search(r"(?:VGA compatible controller|Display controller|Class 03\d\d): (?P<desc>.*)$", s)
        if m and ("AMD" in m.group("desc") or "1002:" in m.group("desc")):
            pid = re.search(r"\b1002:([0-9a-fA-F]{4})\b", m.group("desc"))
            name = re.sub(r"\s*\[1002:[0-9a-fA-F]{4}\]|\s*\(rev \w+\)", "", m.group("desc")).strip()
            merge(frag, gpu_seen("lspci", None, name if "Advanced Micro Devices" in name else None,
                                 pci_id=("1002:" + pid.group(1).lower()) if pid else None))
        m = re.match(r"^(?:Device|GPU):\s+(?P<name>(?:AMD|Radeon)\b.*)$", s)
        if m:
            merge(frag, gpu_seen("torch", None, m.group("name")))
        # ComfyUI / Fooocus / Forge (model_management): `Device: cuda:0 AMD Radeon RX 6600 XT : native` is printed
        # after torch.cuda initialised the device, so torch itself saw this GPU.
        # (its error report lists the same as `- **Name:** cuda:0 AMD Radeon RX 7900 XT : native`, ComfyUI#14881)
        m = re.match(r"^(?:Device:|-\s+\*\*Name:\*\*)\s+cuda:(?P<i>\d+)\s+(?P<name>(?:AMD|Radeon)\b.*?)\s*:\s*"
                     r"(?:native|cudaMallocAsync|\w+)\s*$", s)
        if m:
            merge(frag, gpu_seen("torch", None, m.group("name"), index=int(m.group("i"))))
            merge(frag, {"runtime": {"is_available": True}})
        # InvokeAI: `Using torch device: AMD Radeon RX 7900 XTX` or, with several, `Using torch device: [AMD Radeon RX
        # 7900 XTX (cuda:0), AMD Radeon 760M Graphics (cuda:1)]` (InvokeAI#9490): names torch.cuda gave it.
        m = re.search(r"\bUsing torch device:\s*(?P<list>.+?)\s*$", s)
        if m:
            found = re.findall(r"((?:AMD|Radeon)\b[^,\]\[]*?)\s*\(cuda:(\d+)\)", m.group("list"))
            if not found and re.match(r"(?:AMD|Radeon)\b[^\[\],]*$", m.group("list")):
                found = [(m.group("list"), "0")]
            for name, index in found:
                merge(frag, gpu_seen("torch", None, name.strip(), index=int(index)))
            if found:
                merge(frag, {"runtime": {"is_available": True}})
        # torch.backends.cudnn.version() printed by an app (`cuDNN version: 3005001`): a ROCm torch reports MIOpen's
        # version as MAJOR·1000000 + MINOR·1000 + PATCH (pytorch torch/csrc/cuda/shared/cudnn.cpp, getVersionInt),
        # cuDNN's own numbers stay under a million (8902, 90100).
        m = re.search(r"(?:^|\s)cuDNN version:\s*(\d{7,})\s*$", s)
        if m:
            v = int(m.group(1))
            merge(frag, {"runtime": {"miopen_version": f"{v // 1000000}.{v // 1000 % 1000}.{v % 1000}"}})
        # rocBLAS: `Cannot read …/TensileLibrary.dat: … for GPU arch : gfx1032` names the GPU it ran on.
        m = re.search(r"\bfor GPU arch\s*:\s*(gfx[0-9a-f]{3,4})\b", s)
        if m:
            merge(frag, gpu_seen("rocblas", m.group(1).lower()))
        # An ISA name (rocminfo's `Name: amdgcn-amd-amdhsa--gfx803`, issue forms, amd-smi): the GPU's own target;
        # the `gfx11-generic` style names are the family's generic ISA, not a GPU.
        if not agent_names:  # in a full rocminfo the agents' own `Name: gfx…` lines already say it
            for g in re.findall(r"\bamdgcn-amd-amdhsa--(gfx[0-9a-f]{3,4})(?![\w-])", s):
                merge(frag, gpu_seen("isa", g.lower()))
    _clinfo(text, frag)
    return frag


def _ollama(s: str, frag: Fragment) -> None:
    m = re.search(r"detected amdgpu versions \[(?P<list>[^\]]*)\]", s)
    if m:
        for g in gfx_names(m.group("list")):
            merge(frag, gpu_seen("ollama", g))
    m = re.search(r"amdgpu \[(\d+)\] (gfx\w+) is not supported", s)
    if m:
        merge(frag, gpu_seen("ollama", m.group(2).lower(), None, index=int(m.group(1))))
    # older ollama (0.1.x): `msg="AMD GPU too old, falling back to CPU gfx803"` (ollama#2465)
    m = re.search(r"AMD GPU too old, falling back to CPU (gfx\w+)", s)
    if m:
        merge(frag, gpu_seen("ollama", m.group(1).lower()))
    m = re.search(r"\bgpu_type=(gfx\w+)(?:.*?\bgpu=(\d+))?", s)
    if m:
        merge(frag, gpu_seen("ollama", m.group(1).lower(), None, index=int(m.group(2)) if m.group(2) else None))
    # ollama 0.12's discovery dropping a GPU its runner could not use (ollama#12708: `removing unsupported or
    # overlapping GPU combination" libDir=/usr/lib/ollama description="AMD Radeon RX 6700 XT" compute=gfx1031`): the
    # GPU is real either way.
    if "removing unsupported or overlapping GPU combination" in s:
        gm = re.search(r"\bcompute=(gfx\w+)", s)
        dm = re.search(r'\bdescription="([^"]+)"', s)
        if gm:
            merge(frag, gpu_seen("ollama", gm.group(1).lower(), dm.group(1) if dm else None))
    if "inference compute" in s and re.search(r"\blibrary=rocm\b", s, re.I):  # `library=ROCm` since ollama 0.12
        gm = re.search(r"\bcompute=(gfx\w+)", s)
        # ollama 0.12+: name=ROCm1 (its own device label) and description="AMD Radeon RX 7900 XTX" (the product)
        nm = (re.search(r'\bdescription=(?:"(?P<q>[^"]*)"|(?P<p>\S+))', s)
              or re.search(r'\bname=(?:"(?P<q>[^"]*)"|(?P<p>\S+))', s))
        name = (nm.group("q") or nm.group("p")) if nm else None
        merge(frag, gpu_seen("ollama", gm.group(1).lower() if gm else None, name or None))
    # ollama echoes the server's own override: `skipping rocm gfx compatibility check" HSA_OVERRIDE_GFX_VERSION=…`, and
    # in 2025+ runners `msg="user overrode visible devices" HSA_OVERRIDE_GFX_VERSION=11.0.0` (project-nomad#810).
    m = re.search(r'(?:skipping rocm gfx compatibility check|user overrode visible devices)"?\s+'
                  r'HSA_OVERRIDE_GFX_VERSION=(?P<v>"(?:[^"\\]|\\.)*"|\S+)', s)
    if m:
        raw = m.group("v")
        try:
            value = json.loads(raw) if raw.startswith('"') else raw
        except ValueError:
            value = raw
        merge(frag, {"env": {"HSA_OVERRIDE_GFX_VERSION": str(value)}})


def _clinfo(text: str, frag: Fragment) -> None:
    if re.search(r"Platform Name\s+AMD Accelerated Parallel Processing", text) and re.search(
            r"^Number of devices\s+\d+", text, re.M):
        merge(frag, command("clinfo", text))  # the AMD OpenCL platform and how many devices it has (0 is a fact too)
    board: str | None = None
    for ln in text.splitlines():
        m = re.match(r"^\s*Board name:\s*(.+?)\s*$", ln)
        if m:
            board = m.group(1)
            continue
        m = re.match(r"^\s*Name:\s*(gfx\w+)(?::\S*)?\s*$", ln)
        if m and board is not None:
            merge(frag, gpu_seen("clinfo", m.group(1).lower(), board))
            board = None


def _ollama_rocm_devices(text: str) -> int:
    """ollama's `msg="inference compute" id=0 library=ROCm …` lines: GPUs its ROCm runner enumerated (one per id)."""
    ids = {m.group(1) for m in re.finditer(r'inference compute"?\s+id=(\S+)[^\n]*\blibrary=rocm\b', text, re.I)}
    return len(ids)


def parse_hip_device_count(text: str, cmd: str | None = None) -> Fragment:
    """llama.cpp's device list from the HIP runtime: `ggml_cuda_init: found 1 ROCm devices:` (or, in its hipBLAS
    builds of 2023, `ggml_init_cublas: found 1 CUDA devices:`) followed by `Device 0: Radeon …` lines -> the number of
    AMD GPUs a HIP program enumerated (`system.hip_devices_seen`), counted only when the devices listed are AMD's."""
    ollama = _ollama_rocm_devices(text)
    if ollama:  # ollama's discovery ran its ROCm runner on these GPUs (ollama#12564, Windows)
        return {"system": {"hip_devices_seen": ollama}}
    # Weights a ggml program placed on a ROCm device: ollama's `msg="model weights" device=ROCm0 size=…` (in 0.9:
    # `buffer=ROCm0`, ollama#11420: 19.0 GiB of a model too large for the card, the rest on the CPU) and
    # llama.cpp's `ROCm0 model buffer size = … MiB` (ollama#13085: 37/37 layers on an R9700): the HIP runtime opened
    # that GPU and allocated on it.
    placed = set(re.findall(r'msg="?(?:model weights|kv cache)"?\s+(?:device|buffer)=ROCm(\d+)\b', text))
    placed |= set(re.findall(r"\bROCm(\d+) (?:model|KV) buffer size\s*=", text))
    if placed:
        return {"system": {"hip_devices_seen": len(placed)}}
    # llama.cpp's `--list-devices` (`ROCm0: AMD Radeon RX 7900 XTX (24560 MiB, 24472 MiB free)`) and lemonade's
    # `ROCm0 : AMD Radeon(TM) 8060S Graphics` (rocm-cli#276): the ROCm backend's devices, named by the HIP runtime.
    listed = set(re.findall(r"\bROCm(\d+)\s*:\s*(?:AMD|Radeon)\b", text))
    if listed:
        return {"system": {"hip_devices_seen": len(listed)}}
    # llama.cpp of 2026 adds the total: `found 1 ROCm devices (Total VRAM: 12272 MiB):` (llama.cpp#26702).
    m = re.search(r"ggml_(?:cuda_init|init_cublas): found (\d+) (?:ROCm|CUDA) devices(?: \([^)\n]*\))?:\s*\n"
                  r"((?:\s*Device \d+: [^\n]+\n?)+)", text)
    if not m or int(m.group(1)) < 1:
        return {}
    names = re.findall(r"Device \d+: ([^,\n]+)", m.group(2))
    if not names or not all(re.search(r"\b(?:Radeon|AMD|Instinct)\b", n) for n in names):
        return {}
    return {"system": {"hip_devices_seen": int(m.group(1))}}


def parse_amdgpu_arch(text: str, cmd: str | None = None) -> Fragment:
    """`amdgpu-arch` (LLVM's offload-arch for AMD, shipped in ROCm and the Windows HIP SDK): one `gfxN` line per GPU
    the HIP/HSA runtime enumerates, in its order -> the runtime's view of the GPUs (legacy-rocm-build#4390: only the
    iGPU's gfx1036 on a machine with an RX 6800 XT)."""
    frag: Fragment = {}
    for i, g in enumerate(m.group(1) for m in re.finditer(r"^\s*(gfx[0-9a-f]{3,4})\s*$", text, re.M)):
        merge(frag, gpu_seen("amdgpu-arch", g.lower(), index=i))
    return frag


def parse_wmi_video(text: str, cmd: str | None = None) -> Fragment:
    """Windows' display adapters, `(Get-WmiObject win32_VideoController).Name` / `Get-CimInstance …`: one name per
    line, in Windows' order (not the runtime's: no index is kept). Only AMD names are GPUs for this doctor."""
    frag: Fragment = {}
    for ln in text.splitlines():
        s = ln.strip()
        if re.match(r"^(?:AMD|ATI)\b.*\bRadeon\b|^AMD Instinct\b", s) and not s.startswith("PS "):
            merge(frag, gpu_seen("wmi", None, s))
    return frag


def parse_ollama_ps(text: str, cmd: str | None = None) -> Fragment:
    """`ollama ps`: its PROCESSOR column (`100% GPU`, `48%/52% CPU/GPU`, `100% CPU`) -> `system.ollama_processor`:
    where ollama says the loaded models sit. Its word only (nixpkgs#375359: `100% GPU` while the runner used the
    CPU), so no check takes it as proof that a GPU ran. Without its command line (a pasted table, ollama-for-amd#87)
    the table's own header must be there."""
    if not (cmd and re.search(r"\bollama\s+ps\b", cmd)) and not re.search(r"^NAME\s+ID\s+SIZE\s+PROCESSOR\b", text, re.M):
        return {}
    rows = re.findall(r"^\S+\s+[0-9a-f]{12}\s+[\d.]+\s*[KMGT]?B\s+(\d+%(?:/\d+%)?\s+(?:CPU/GPU|GPU|CPU))\b", text, re.M)
    return {"system": {"ollama_processor": rows[0]}} if rows else {}

