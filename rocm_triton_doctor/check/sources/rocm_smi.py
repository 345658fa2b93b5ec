"""`rocm-smi` (concise table, `--showhw`, `--showproductname`) and `amd-smi static` / `amd-smi list`.

The text is kept under `commands` (`rocm-smi`, `amd-smi`). GPU names and gfx targets these tools print go to
`gpus_seen` (tool, gfx, name): `--showhw` has a `GFX VER` column (`gfx1100`), `--showproductname` a
`GFX Version:` line, `amd-smi static` `TARGET_GRAPHICS_VERSION: gfx942` and `MARKET_NAME:`.
"""

from __future__ import annotations

import re

from rocm_triton_doctor.check.sources._frag import Fragment, command, gfx_names, gpu_seen, merge

_SMI = re.compile(r"ROCm System Management Interface|=+ (Concise Info|Concise Hardware Info|Product Info) =+|"
                  r"End of ROCm SMI Log")
_AMDSMI = re.compile(r"^\s*(TARGET_GRAPHICS_VERSION|MARKET_NAME|ASIC:|GPU: \d+|BDF:)\b", re.M)


def detect_rocm_smi(text: str) -> bool:
    return bool(_SMI.search(text) or re.search(r"^GPU\[\d+\]\s*:\s*(Card|GFX|Device|Unique)", text, re.M))


def detect_amd_smi(text: str) -> bool:
    return "TARGET_GRAPHICS_VERSION:" in text or ("MARKET_NAME:" in text and len(_AMDSMI.findall(text)) >= 2)


def parse_rocm_smi(text: str, cmd: str | None = None) -> Fragment:
    frag = command("rocm-smi", text)
    lines = text.splitlines()
    header = next((i for i, ln in enumerate(lines) if re.match(r"^\s*GPU\s+(NODE\s+)?DID\b", ln)), None)
    if header is not None:  # --showhw: one row per GPU; newer versions add NODE, GUID and a GFX VER column
        cols = re.sub(r"\b(GFX|SDMA|UMC) (VER|RAS)\b|\bPARTITION ID\b", lambda m: m.group(0).replace(" ", "_"),
                      lines[header]).split()
        for ln in lines[header + 1:]:
            cells = ln.split()
            if not cells or not cells[0].isdigit() or len(cells) < len(cols) - 1:
                continue
            row = dict(zip(cols, cells))
            gs = gfx_names(row.get("GFX_VER", ""))
            did = row.get("DID", "").lower().removeprefix("0x")
            merge(frag, gpu_seen("rocm-smi", gs[0] if gs else None, None, index=int(cells[0]),
                                 node=int(row["NODE"]) if row.get("NODE", "").isdigit() else None,
                                 pci_id=f"1002:{did}" if re.match(r"^[0-9a-f]{4}$", did) else None,
                                 bus=row.get("BUS")))
    for m in re.finditer(r"^GPU\[(\d+)\]\s*:\s*GFX Version:\s*(\S+)", text, re.M):
        g = gfx_names(m.group(2))
        if g:
            merge(frag, gpu_seen("rocm-smi", g[0], None, index=int(m.group(1))))
    for m in re.finditer(r"^GPU\[(\d+)\]\s*:\s*Card (?:series|Series|SKU|model):\s*(.+)$", text, re.M):
        merge(frag, gpu_seen("rocm-smi", None, m.group(2).strip(), index=int(m.group(1))))
    # concise table, ROCm 6.1+ layout (Syllo/nvtop#341): a `Device  Node  IDs` header over `(DID,     GUID)`, and rows
    # `0  2  0x74a1,   32700  39.0°C …`. rocm-smi fills the table from amdgpu's sysfs, so each row is a GPU the
    # driver brought up (as amd-smi's table rows are: `system.amdgpu_gpus_listed`).
    if any(re.match(r"^\s*Device\s+Node\s+IDs\b", ln) for ln in lines):
        rows = [r for ln in lines if (r := re.match(r"^(\d+)\s+(\d+)\s+0x([0-9a-fA-F]{4}),", ln))]
        for r in rows:
            merge(frag, gpu_seen("rocm-smi", None, None, index=int(r.group(1)), node=int(r.group(2)),
                                 pci_id="1002:" + r.group(3).lower()))
        if rows:
            merge(frag, {"system": {"amdgpu_gpus_listed": len(rows)}})
    # per-field output (`rocm-smi --showvbios --showuse …`: `GPU[0]		: VBIOS version: 113-STRXLGEN-001`,
    # lemonade-sdk/llamacpp-rocm#9): each GPU[N] is one amdgpu brought up, as the tables' rows are.
    # (also a field the GPU does not report: `GPU[3] : get_volt_metric, Not supported on the given system`,
    # legacy-rocm-build#4278: rocm-smi reached GPU 3 to ask)
    fields = {m.group(1) for m in re.finditer(r"^GPU\[(\d+)\]\s*:\s*(?:[A-Za-z%(][^:\n]*:\s*\S|\w+, Not supported\b)",
                                              text, re.M)}
    if fields and "amdgpu_gpus_listed" not in frag.get("system", {}):
        merge(frag, {"system": {"amdgpu_gpus_listed": len(fields)}})
    # concise table (ROCm 6): the model name sits on the line under the numbers ("Instinct MI210")
    for i, ln in enumerate(lines[:-1]):
        if re.match(r"^\d+\s+\[0x[0-9a-f]+\s*:\s*0x[0-9a-f]+\]", ln):
            name = lines[i + 1].strip()
            if name and not re.match(r"^[=\d]", name):
                merge(frag, gpu_seen("rocm-smi", None, name, index=int(ln.split()[0])))
    return frag


def parse_amd_smi_header(text: str, cmd: str | None = None) -> Fragment:
    """amd-smi's banner, `| AMD-SMI 26.2.0+unknown  amdgpu version: Linuxver ROCm version: 7.1.1 |` (lemonade-sdk/
    llamacpp-rocm#39, the table rows cut): the ROCm release amd-smi belongs to -> `system.amd_smi_rocm`."""
    m = re.search(r"AMD-SMI \S+\s+amdgpu version:\s*\S+\s+ROCm version:\s*(\d+\.\d+(?:\.\d+)?)", text)
    return {"system": {"amd_smi_rocm": m.group(1)}} if m else {}


def parse_amd_smi(text: str, cmd: str | None = None) -> Fragment:
    frag = command("amd-smi", text)
    gpu: int | None = None
    for ln in text.splitlines():
        m = re.match(r"^\s*GPU:\s*(\d+)", ln)
        if m:
            gpu = int(m.group(1))
            continue
        m = re.match(r"^\s*TARGET_GRAPHICS_VERSION:\s*(\S+)", ln)
        if m and gfx_names(m.group(1)):
            merge(frag, gpu_seen("amd-smi", gfx_names(m.group(1))[0], None, index=gpu))
        m = re.match(r"^\s*MARKET_NAME:\s*(.+?)\s*$", ln)
        if m and m.group(1) not in ("N/A", ""):
            merge(frag, gpu_seen("amd-smi", None, m.group(1), index=gpu))
        m = re.match(r"^\s*DEVICE_ID:\s*0x([0-9a-fA-F]{4})\s*$", ln)
        if m:
            merge(frag, gpu_seen("amd-smi", None, None, index=gpu, pci_id="1002:" + m.group(1).lower()))
        m = re.match(r"^\s*BDF:\s*(\S+)\s*$", ln)
        if m:
            merge(frag, gpu_seen("amd-smi", None, None, index=gpu, bus=m.group(1)))
    return frag


_AMDSMI_HEAD = re.compile(r"AMD-SMI \S+\s+amdgpu version:\s*(?P<drv>[\w.+-]+)\s+ROCm version:\s*(?P<rocm>[\w.+-]+)")
_AMDSMI_ROW = re.compile(r"^\|\s*(?P<bdf>[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d)\s+(?P<name>[^|]*?)\s*\|", re.M)


def parse_amd_smi_table(text: str, cmd: str | None = None) -> Fragment:
    """amd-smi's default table (legacy-rocm-build#5671): `| AMD-SMI 26.1.0+… amdgpu version: 6.16.6 ROCm version:
    7.1.0 |` and one `| 0000:c2:00.0  AMD Radeon Graphics | …` row per GPU. amd-smi lists a GPU only through the loaded
    amdgpu driver, so the rows are GPUs the driver brought up (`system.amdgpu_gpus_listed`), named in `gpus_seen`."""
    head = _AMDSMI_HEAD.search(text)
    rows = _AMDSMI_ROW.findall(text)
    if not head or not rows:
        return {}
    frag: Fragment = {"system": {"amdgpu_gpus_listed": len(rows)}}
    for bdf, name in rows:
        merge(frag, gpu_seen("amd-smi", None, name or None, bus=bdf))
    return frag
