"""Environment variables as pasted text shows them -> `env`.

Sources: an `env`/`printenv` dump (complete: every variable not listed is unset), `export X=Y` lines, a JSON object
of upper-case variables (an app's sysinfo "Environment"),
`X=Y command …` prefixes (also in the command line of a prompt), `docker run -e X=Y`, cmd.exe's `set X=Y`, Python
`os.environ["X"] = "Y"`, ollama's `msg="server config" env="map[X:Y …]"` log line. Only names that matter to a GPU
stack are kept (the probes keep an allow-list too).
Values that are shell templates (`${X:-}`) are not values and are skipped. Everything but a full dump leaves
`env` partial: a variable the text does not show is unknown, not unset.
"""

from __future__ import annotations

import re

from rocm_triton_doctor.check.sources._frag import Fragment, log_line

RELEVANT = re.compile(r"^(HSA_\w+|HIP_\w+|ROCR_\w+|ROCM_\w+|ROCM_PATH|CUDA_VISIBLE_DEVICES|GPU_DEVICE_ORDINAL|"
                      r"LD_LIBRARY_PATH|LD_PRELOAD|PYTORCH_\w+|MIOPEN_\w+|AMD_\w+|TORCH_\w+|TRITON_\w+|HCC_\w+|"
                      r"OLLAMA_\w+|GGML_\w+|NCCL_\w+|RCCL_\w+|PATH|PYTHONPATH|VIRTUAL_ENV|CONDA_PREFIX|HOME|XDG_CACHE_HOME|"
                      r"PIP_(?:EXTRA_)?INDEX_URL|UV_(?:EXTRA_)?INDEX_URL|UV_DEFAULT_INDEX|UV_INDEX)$")
_ASSIGN = r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>\"[^\"]*\"|'[^']*'|[^\s\"';|&]*)"
_EXPORT = re.compile(r"^\s*(?:export|set -x|declare -x|ENV)\s+" + _ASSIGN.replace("=", "[= ]", 1))
_PREFIX = re.compile(r"^\s*(?:sudo\s+(?:-E\s+)?)?((?:[A-Za-z_][A-Za-z0-9_]*=(?:\"[^\"]*\"|'[^']*'|\S*)\s+)+)(?=\S|$)")
_DOCKER_E = re.compile(r"(?:^|\s)(?:-e|--env)[ =]" + _ASSIGN)
# cmd.exe's `set NAME=value`, and a Windows launcher's own log of it (`  ::  Set TRITON_OVERRIDE_ARCH=gfx1200`,
# patientx/ComfyUI-Zluda#263)
_WINSET = re.compile(r"^(?:::\s+)?@?set\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>[^\s\"&|<>]*)\s*$", re.I)
_PYENV = re.compile(r"os\.environ\[['\"](?P<name>\w+)['\"]\]\s*=\s*['\"](?P<value>[^'\"]*)['\"]")
_DUMP_LINE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=.*$")
# The variables that choose or relabel GPUs: a printed value (_PRINTED_VAR) and a sentence (_SAID_SET) read only these.
_GPU_VARS = r"(?:ROCR|HIP|CUDA)_VISIBLE_DEVICES|HSA_OVERRIDE_GFX_VERSION"
_PRINTED_VAR = re.compile(rf"^(?P<name>{_GPU_VARS})\s*:\s*"
                          r"(?P<value>(?!None\s*$)[\w.,-]+)\s*$")  # Python prints an unset one as None
# A JSON object of variables (AUTOMATIC1111's sysinfo "Environment": {"TORCH_COMMAND": "pip install …"},
# stable-diffusion-webui#15542): upper-case names only, so a JSON document's own keys are not read as variables.
_JSON_VAR = re.compile(r'^\s*"(?P<name>[A-Z][A-Z0-9_]*)"\s*:\s*"(?P<value>(?:[^"\\]|\\.)*)"\s*,?\s*$')
# A Makefile's (or an .env/INI file's) assignment with spaces: `HSA_OVERRIDE_GFX_VERSION = "GFX version detection
# error"`, `HIP_VISIBLE_DEVICES ?= 0` (HardAndHeavy/comfyui-rocm-docker#2, whose Makefile passed that string on to
# the container): only the variables that choose or relabel GPUs, a whole line each.
_MAKE_VAR = re.compile(r"^\s*(?P<name>HSA_OVERRIDE_GFX_VERSION(?:_\d+)?|(?:ROCR|HIP|CUDA)_VISIBLE_DEVICES)\s*[?:+]?=\s*"
                       r"(?P<value>\"[^\"]*\"|'[^']*'|[^\s\"'#]*)\s*(?:#.*)?$")
# A sentence saying what a launcher set: `Running env on the task reveals that Flux set CUDA_VISIBLE_DEVICES=7`
# (flux-core#7807): only the GPU variables, after "set"/"sets"/"exported" in the line.
_SAID_SET = re.compile(rf"\b(?:set|sets|exported|exports)\s+(?P<name>{_GPU_VARS})=(?P<value>[\w.,-]+)")


def _value(raw: str) -> str:
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        return raw[1:-1]
    return raw


def _keep(name: str, value: str) -> bool:
    return bool(RELEVANT.match(name)) and "${" not in value and "$(" not in value


# `HSA_OVERRIDE_GFX_VERSION=${HSA_OVERRIDE_GFX_VERSION:-}` (compose files, env templates): the variable is DEFINED
# and empty whenever the host leaves it unset, and an empty override makes ROCm enumerate no GPU (Osmantic/ODS#1779).
_EMPTY_DEFAULT = re.compile(r"(?:^|[\s\"'-])(?P<name>HSA_OVERRIDE_GFX_VERSION(?:_\d+)?)[=:]\s*[\"']?\$\{(?P=name):?-\}")


# ollama logs its configuration at start: `msg="server config" env="map[CUDA_VISIBLE_DEVICES:0 … HIP_VISIBLE_DEVICES:1
# HSA_OVERRIDE_GFX_VERSION: …]"` (Jeffser/Alpaca#1091). It prints every variable it reads, set or not, so an empty
# value there is not "defined empty": only non-empty ones are kept. A pasted line cut inside the map loses its last
# token, which is dropped too.
_OLLAMA_MAP = re.compile(r'msg="?server config"?\s+env="?map\[(?P<body>[^\]\n]*)')


# ollama's debug log of the runner it starts: `msg=subprocess environment="[PATH=… HIP_VISIBLE_DEVICES=1
# ROCR_VISIBLE_DEVICES=GPU-… HSA_OVERRIDE_GFX_VERSION=10.3.0]"` (ollama#10421): the variables the GPU runner got.
_OLLAMA_SUBPROCESS = re.compile(r'msg="?subprocess"?\s+environment="?\[(?P<body>[^\]\n]*)')


def _ollama_env(text: str) -> dict[str, str]:
    env: dict[str, str] = {}
    for m in _OLLAMA_SUBPROCESS.finditer(text):
        cut = not re.search(r"\]", text[m.end():m.end() + 1])
        tokens = m.group("body").split(" ")
        for tok in tokens[:-1] if cut else tokens:
            name, sep, value = tok.partition("=")
            if sep and value and _keep(name, value) and "…" not in value:
                env.setdefault(name, value)
    for m in _OLLAMA_MAP.finditer(text):
        body = m.group("body")
        cut = not re.search(r"\]", text[m.end():m.end() + 1])
        tokens = body.split(" ")
        for tok in tokens[:-1] if cut else tokens:
            name, sep, value = tok.partition(":")
            if sep and value and RELEVANT.match(name) and "…" not in value and "[" not in value:
                env.setdefault(name, value)
    return env


def parse(text: str, cmd: str | None = None) -> Fragment:
    """Inline assignments anywhere in the segment, including its command line."""
    env: dict[str, str] = _ollama_env(text)
    for t in _EMPTY_DEFAULT.finditer("\n".join(([cmd] if cmd else []) + text.splitlines())):
        env.setdefault(t.group("name"), "")
    for line in ([cmd] if cmd else []) + text.splitlines():
        s = line.strip().strip("`")
        m = _EXPORT.match(s)
        if m and _keep(m.group("name"), m.group("value")):
            env.setdefault(m.group("name"), _value(m.group("value")))
            continue
        m = _WINSET.match(s)
        if m and _keep(m.group("name"), m.group("value")):
            env.setdefault(m.group("name"), m.group("value"))
            continue
        m = _PREFIX.match(s + " ")
        if m:
            for a in re.finditer(_ASSIGN, m.group(1)):
                if _keep(a.group("name"), a.group("value")):
                    env.setdefault(a.group("name"), _value(a.group("value")))
        if re.match(r"^\s*(?:sudo\s+)?(docker|podman)\s+(run|create|exec)\b", s):
            for a in _DOCKER_E.finditer(s):
                if _keep(a.group("name"), a.group("value")):
                    env.setdefault(a.group("name"), _value(a.group("value")))
        for a in _PYENV.finditer(s):
            if _keep(a.group("name"), a.group("value")):
                env.setdefault(a.group("name"), a.group("value"))
        # A script printing the variables it runs with: `ROCR_VISIBLE_DEVICES: 0,1` (ray#46563, behind Ray's prefix).
        m = _PRINTED_VAR.match(log_line(line))
        if m and _keep(m.group("name"), m.group("value")):
            env.setdefault(m.group("name"), m.group("value"))
        m = _JSON_VAR.match(line)
        if m and _keep(m.group("name"), m.group("value")):
            env.setdefault(m.group("name"), m.group("value").replace('\\"', '"'))
        m = _MAKE_VAR.match(s)
        if m and _keep(m.group("name"), m.group("value")):
            env.setdefault(m.group("name"), _value(m.group("value")))
        for a in _SAID_SET.finditer(s):
            value = a.group("value").rstrip(".,")  # the sentence's own punctuation
            if value and _keep(a.group("name"), value):
                env.setdefault(a.group("name"), value)
    return {"env": env} if env else {}


def parse_dump(text: str, cmd: str | None = None) -> Fragment:
    """`env` / `printenv` output: one NAME=value per line. Complete unless the command filtered it."""
    env: dict[str, str] = {}
    lines = [ln for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if _DUMP_LINE.match(ln):
            name, _, value = ln.partition("=")
            if RELEVANT.match(name):
                env[name] = value
    filtered = bool(cmd and re.search(r"\|", cmd)) or bool(cmd and len(cmd.split()) > 1 and cmd.split()[0] == "printenv")
    complete = not filtered and len(lines) >= 5 and sum(1 for ln in lines if _DUMP_LINE.match(ln)) >= 0.8 * len(lines)
    frag: Fragment = {"env": env} if env or complete else {}
    if complete:
        frag["_env_complete"] = True
    return frag
