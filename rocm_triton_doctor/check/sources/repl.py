"""Interactive Python sessions (`>>> expr` / IPython `In [n]: expr` followed by the printed value) -> `runtime`.

Only expressions whose value is unambiguous are read: `torch.__version__`, `torch.version.hip`,
`torch.version.cuda`, `torch.cuda.is_available()`, `torch.cuda.device_count()`, and
`torch.cuda.get_device_name(…)` (recorded as device 0 only when the same session says there is one device).
The interpreter banner gives python.version.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from rocm_triton_doctor.check.sources._frag import Fragment, log_line

_EXPR = {
    "torch.__version__": "torch_version",
    "torch.version.hip": "hip_version",
    "torch.version.cuda": "cuda_version",
    "torch.cuda.is_available()": "is_available",
    "torch.cuda.device_count()": "device_count",
}


def is_torch_expr(cmd: str | None) -> bool:
    return bool(cmd and re.match(r"^(print\()?\s*torch\.", cmd.strip()))


def _value(body: str) -> str | None:
    for ln in body.splitlines():
        s = ln.strip()
        if not s:
            continue
        s = re.sub(r"^Out\[\d+\]:\s*", "", s)
        return s
    return None


def parse(text: str, cmd: str | None = None) -> Fragment:
    if not cmd:
        return {}
    expr = re.sub(r"^print\((.*)\)$", r"\1", cmd.strip()).replace(" ", "")
    raw = _value(text)
    if raw is None:
        return {}
    rt: dict[str, Any] = {}
    key = _EXPR.get(expr)
    if key in ("torch_version", "hip_version", "cuda_version"):
        if raw == "None":
            rt[key] = None
        elif re.match(r"^['\"]?\d[\w.+-]*['\"]?$", raw):
            rt[key] = raw.strip("'\"")
    elif key == "is_available" and raw in ("True", "False"):
        rt[key] = raw == "True"
    elif key == "device_count" and raw.isdigit():
        rt[key] = int(raw)
    elif re.match(r"^torch\.cuda\.get_device_name\(", expr) and re.match(r"^['\"].+['\"]$", raw):
        rt["_device_name"] = raw.strip("'\"")
    return {"runtime": rt} if rt else {}


# What check scripts print, one labelled value per line (`torch version = 2.2.1+rocm5.7`, `torch.__version__:
# 2.6.0+cu124`, `torch.version.hip: None`, `CUDA available: False`, `cuda version = None`): label, then ":" or "=".
_LABELS = (
    (re.compile(r"^(?:torch(?:\.__version__|[ _]version)|pytorch[ _.]version)\s*[:=→]\s*(?P<v>\S+)\s*$", re.I),
     "torch_version"),
    # kohya_ss's launcher: `INFO     Torch 2.1.2+rocm5.6` (bmaltais/kohya_ss#2228); SD.Next: `Torch: torch==2.8.0+cpu …`
    (re.compile(r"^Torch\s+(?P<v>\d[\w.+-]*)\s*$"), "torch_version"),
    (re.compile(r"^Torch:\s+torch==(?P<v>\d[\w.+-]*)(?:\s.*)?$"), "torch_version"),
    # `python -m xformers.info`: `pytorch.version:  2.12.1+cu130`, `pytorch.cuda:  available` (xformers#1399)
    (re.compile(r"^pytorch\.cuda\s*:\s*(?P<v>available|not available)\s*$", re.I), "is_available"),
    (re.compile(r"^(?:torch\.version\.hip|hip[ _]version)\s*[:=→]\s*(?P<v>\S+)\s*$", re.I), "hip_version"),
    # `torch: 2.7.1+git99ccf24` and `HIP: 6.4.43484-123eb5128`, alone on a line or as pairs of one line (see _pairs:
    # `torch: … HIP: …`, unsloth#3385)
    (re.compile(r"^torch\s*:\s*(?P<v>\d\S*)\s*$"), "torch_version"),
    (re.compile(r"^HIP\s*:\s*(?P<v>\d\S*)\s*$"), "hip_version"),
    (re.compile(r"^(?:torch\.version\.cuda|cuda[ _]version)\s*[:=]\s*(?P<v>\S+)\s*$", re.I), "cuda_version"),
    (re.compile(r"^(?:(?:torch\.)?cuda\.is_available(?:\(\))?|cuda[ _]available|rocm[ _]available|is[ _]available)\s*[:=→]\s*"
                r"(?P<v>True|False)\s*$",
                re.I), "is_available"),
)


_PAIR = r"[A-Za-z][\w.]*(?:\(\))?\s*:\s*\S+"


def _pairs(s: str) -> list[str]:
    """A line made only of `label: value` pairs (`cuda.is_available: True bf16_supported: True`) -> one string per
    pair; any other line as it is."""
    if re.fullmatch(rf"\s*{_PAIR}(?:\s+{_PAIR})+\s*", s):
        return [m.group(0) for m in re.finditer(_PAIR, s)]
    return [s]


def parse_labels(text: str, cmd: str | None = None) -> Fragment:
    """Labelled values a script printed (see _LABELS) -> `runtime`, read only when the value has the shape the label
    promises (a version starting with a digit or None; True/False), so prose never fills a fact."""
    rt: dict[str, Any] = {}
    for ln in text.splitlines():
        for s in _pairs(log_line(ln)):
            for rx, key in _LABELS:
                m = rx.match(s)
                if not m or key in rt:
                    continue
                v = m.group("v").strip("'\"")
                if key == "is_available":
                    rt[key] = v.lower() in ("true", "available")
                elif v == "None":
                    rt[key] = None
                elif re.match(r"^\d[\w.+-]*$", v):
                    rt[key] = v
    # A tensor printed on the GPU (`tensor(10433.3145, device='cuda:0', grad_fn=…)`, pytorch#102968): torch created it
    # there, so torch.cuda.is_available() was True in that process (ROCm builds name HIP devices 'cuda' too).
    if "is_available" not in rt and re.search(r"^\s*(?:#\s*|Out\[\d+\]:\s*)?tensor\(.*\bdevice='cuda:\d+'", text, re.M):
        rt["is_available"] = True
    # A script's printed GPU count (`Number of GPUs: 4`, ray#46563; `Device count: 1`): torch.cuda.device_count().
    counts = [(m.group("label"), int(m.group("n"))) for m in re.finditer(
        r"^(?P<label>Number of GPUs|GPU count|(?:torch\.cuda\.)?device[ _]count(?:\(\))?)\s*[:=]\s*(?P<n>\d+)\s*$",
        "\n".join(log_line(ln) for ln in text.splitlines()), re.M | re.I)]
    if counts and "device_count" not in rt:
        rt["device_count"] = counts[0][1]
    # `Device count: 1` (torch.cuda.device_count(), karpathy/nanochat#449), and ComfyUI's `VAE load device: cuda:0`
    # (model_management puts models on cuda:N only when torch.cuda is available, legacy-rocm-build#5834)
    if "is_available" not in rt:
        device_count = next((n for label, n in counts if label.lower().startswith(("device", "torch"))), None)
        if device_count is not None:
            rt["is_available"] = device_count > 0
        elif re.search(r"\bload device: cuda:\d+", text):
            rt["is_available"] = True
        elif re.search(r"^\s*(?:torch\.cuda\.)?mem_get_info(?:\(\))?\s+(?:total|free)\s*:\s*\d", text, re.M | re.I):
            # torch.cuda.mem_get_info() answering with numbers (unsloth#7960: `mem_get_info total: 62.47 GiB`): it
            # asks the runtime about an opened device, so torch had the GPU
            rt["is_available"] = True
    frag: Fragment = {"runtime": rt} if rt else {}
    # `torch:        2.9.1+rocm7.2.1`, `torchvision: 0.24.1` (a version summary): the distributions (partial list)
    # (also quoted, as a JSON dependency report: `"torch": "2.4.1+cu121",`, invoke-ai/InvokeAI#7520)
    for m in re.finditer(r"^\s*\"?(?P<n>torch|torchvision|torchaudio|triton|pytorch-triton-rocm|xformers)\"?\s*:\s*"
                         r"\"?(?P<v>\d[\w.+-]*)\"?,?\s*$", text, re.M):
        frag.setdefault("python", {"distributions": {}})["distributions"][m.group("n")] = {"version": m.group("v")}
    # kohya_ss: `Torch detected GPU: AMD Radeon RX 7800 XT VRAM 16368 Arch (11, 0) Cores 30` (torch opened it)
    kg = re.search(r"Torch detected GPU:\s+(?P<n>.+?)\s+VRAM\b", text)
    if kg:
        frag["gpus_seen"] = [{"tool": "torch", "name": kg.group("n")}]
        frag.setdefault("runtime", {})["is_available"] = True
        return frag
    m = re.search(r"^\s*(?:name|device[ _]name|gpu[ _]name|torch\.cuda\.get_device_name\(\d*\))\s*[:=→]\s*"
                  r"['\"]?(?P<n>(?:AMD|Radeon)\b[^'\"\n]*?)['\"]?\s*$", text, re.M | re.I)
    if m:
        frag["gpus_seen"] = [{"tool": "torch", "name": m.group("n")}]
        if m.group(0).lstrip().startswith("torch.cuda.get_device_name"):
            # get_device_name returns only for a device torch opened (VoiceStudio#1165: `… → 'AMD Radeon RX 7900 XTX'`)
            frag.setdefault("runtime", {})["is_available"] = True
    return frag


def _top_level_args(args: str) -> list[str]:
    """`a, f(b, c), [d for d in e]` -> ['a', 'f(b, c)', '[d for d in e]']: commas outside brackets."""
    out, depth, cur = [], 0, ""
    for ch in args:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return [*out, cur.strip()] if cur.strip() else out


def parse_commented(text: str, cmd: str | None = None) -> Fragment:
    """A script pasted with what it printed as a comment under each line (TheRock#5543):
    `print(torch.__version__, torch.cuda.is_available())` / `# 2.10.0+rocm7.13.0a20260508 True`, and
    `print([torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())])` / `# ['AMD Radeon(TM) Graphics',
    'AMD Radeon RX 7900 XT']` (device names in torch's order, so indices are known). Read only when the printed
    values match the expressions one for one, with the shapes the expressions promise."""
    rt: dict[str, Any] = {}
    seen: list[dict[str, Any]] = []
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for code, out in zip(lines, lines[1:]):
        if code.startswith("#") or not out.startswith("#"):
            continue
        m = re.match(r"^(?:print\((?P<args>.*)\)|(?P<expr>torch\.[\w.]+(?:\(\))?))\s*$", code)
        if not m:
            continue
        exprs = [e.replace(" ", "") for e in (_top_level_args(m.group("args")) if m.group("args") else [m.group("expr")])]
        value = out.lstrip("#").strip()
        if len(exprs) == 1 and "get_device_name" in exprs[0] and value.startswith("["):
            try:
                names = ast.literal_eval(value)
            except (ValueError, SyntaxError):
                continue
            if isinstance(names, list) and names and all(isinstance(n, str) and n for n in names):
                rt.setdefault("device_count", len(names))
                rt.setdefault("is_available", True)
                seen += [{"tool": "torch", "name": n, "index": i} for i, n in enumerate(names)]
            continue
        _assign(exprs, value, rt)
    frag: Fragment = {"runtime": rt} if rt else {}
    if seen:
        frag["gpus_seen"] = seen
    return frag


def _assign(exprs: list[str], value: str, rt: dict[str, Any]) -> None:
    """What `print(e1, e2, …)` printed, read into rt when the values match the expressions one for one."""
    values = value.split()
    if len(values) != len(exprs):
        return
    for e, v in zip(exprs, values):
        key = _EXPR.get(e)
        v = v.strip("'\"")
        if key in ("torch_version", "hip_version", "cuda_version") and re.match(r"^\d[\w.+-]*$", v):
            rt.setdefault(key, v)
        elif key == "is_available" and v in ("True", "False"):
            rt.setdefault(key, v == "True")
        elif key == "device_count" and v.isdigit():
            rt.setdefault(key, int(v))


_PYTHON_C = re.compile(r"""\bpython[\d.]*(?:\.exe)?\s+-c\s+(?P<q>["'])(?P<code>.*?)(?P=q)\s*$""")


_ON_GPU = re.compile(r"device\s*=\s*['\"]cuda|\.cuda\(\)|\.to\(\s*['\"]cuda")
_FAILED = re.compile(r"Traceback \(most recent call last\)|^\w*(?:Error|Exception)\b|Segmentation fault|core dumped",
                     re.M)


def parse_python_c(text: str, cmd: str | None = None) -> Fragment:
    """A one-line `python -c "import torch; print(torch.__version__, torch.version.hip)"` (also after `docker exec
    NAME`) and the line it printed (debpalash/VoiceStudio#1274: `2.8.0+rocm7.2.4.git6bea3e0b 7.2.53211-97f5574fe2`):
    read as parse_commented reads a commented script, when the code ends in one print of torch expressions."""
    rt: dict[str, Any] = {}
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    if cmd:  # the command line shown apart from what it printed (a `$ ` prompt line)
        lines = [cmd, *lines]
    for i, (code_line, out) in enumerate(zip(lines, lines[1:])):
        m = _PYTHON_C.search(code_line)
        if not m:
            continue
        stmts = [st.strip() for st in m.group("code").split(";")]
        prints = [pm.group("args") for st in stmts if (pm := re.match(r"^print\((?P<args>.*)\)$", st))]
        last = re.match(r"^print\((?P<args>.*)\)$", stmts[-1])
        if not last or _PYTHON_C.search(out):
            continue
        if _ON_GPU.search(m.group("code")) and not _FAILED.search("\n".join(lines[i + 1:i + 4])):
            # The snippet put tensors on the GPU and printed its result with no error after it (VoiceStudio#1274:
            # a bf16 matmul loop on device='cuda' printing `50 matmul 8192x8192 BF16: 2.17s - 25.31 TFLOPS`): torch
            # ran work on the GPU, which it does only when torch.cuda.is_available() is True.
            rt.setdefault("is_available", True)
        if len(prints) > 1 and all(len(_top_level_args(a)) == 1 for a in prints):
            # one value per print, one line each (Comfy-Org/ComfyUI-Manager#2724: `print(torch.__version__);
            # print(torch.version.hip); print(torch.cuda.is_available())`); a crash may cut the last lines
            outs = [o.strip() for o in lines[i + 1:i + 1 + len(prints)]]
            outs = outs[:next((j for j, o in enumerate(outs) if _PYTHON_C.search(o) or " " in o), len(outs))]
            for expr, value in zip(prints, outs):
                _assign([expr.replace(" ", "")], value, rt)
            continue
        _assign([e.replace(" ", "") for e in _top_level_args(last.group("args"))], out.strip(), rt)
    return {"runtime": rt} if rt else {}


def parse_banner(text: str, cmd: str | None = None) -> Fragment:
    """The interpreter's banner: `Python 3.7.13 (default, Mar 29 2022, 02:18:16)` -> python.version; also what
    environment tools print when they create the interpreter: uv's `Using CPython 3.12.3 interpreter at: …`,
    `Installing Python 3.14.0.` (Windows installer scripts), `python --version`'s `Python 3.10.12` line alone."""
    m = (re.search(r"^Python (\d+\.\d+\.\d+)\s+\(", text, re.M)
         or re.search(r"^\s*(?:Using C?Python|Installing Python) (\d+\.\d+\.\d+)\b", text, re.M)
         or re.search(r"^Python (\d+\.\d+\.\d+)\s*$", text, re.M))
    return {"python": {"version": m.group(1)}} if m else {}


_SITE = re.compile(r"/lib(?:64)?/python(\d\.\d+)/(?:site|dist)-packages\b")


def parse_site_packages(text: str, cmd: str | None = None) -> Fragment:
    """`…/lib/python3.12/site-packages/…` in a traceback or pip log names the interpreter's minor version. Kept
    aside (`_py_from_path`) and used only when no text states python.version itself."""
    found = sorted(set(_SITE.findall(text)))
    return {"_py_from_path": found} if found else {}


def finish(runtime: dict[str, Any]) -> None:
    """A device name from get_device_name becomes devices[0] when the session showed exactly one device."""
    name = runtime.pop("_device_name", None)
    if name and runtime.get("device_count") == 1 and "devices" not in runtime:
        runtime["devices"] = [{"index": 0, "name": name}]
