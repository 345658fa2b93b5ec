"""Split a pasted text (a whole issue body, a terminal session, one tool's output) into segments.

A segment is one command's output: the command line when the paste shows its prompt (`$ rocminfo`,
`root@host:/# ls -l /dev/kfd`, `(venv) user@box:~$ pip list`, `In [3]: torch.__version__`), and the lines that
follow it up to the next prompt. Markdown fences and `<details>` wrappers are dropped; text outside fences is kept
(people paste tool output without fences too).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

# Commands whose prompt lines we recognise even after a `#` (root prompt) or `>` prompt, where a bare `#` could
# also start a comment ("# CONFIG_HSA_AMD is not set"). After `$ ` any word is accepted.
KNOWN = frozenset({
    "rocminfo", "rocm-smi", "amd-smi", "rocm_agent_enumerator", "rocm-clinfo", "clinfo", "vulkaninfo", "nvidia-smi",
    "python", "python3", "pip", "pip3", "uv", "conda", "ls", "id", "groups", "whoami", "uname", "cat", "dmesg",
    "journalctl", "systemctl", "env", "printenv", "export", "lspci", "lsmod", "modinfo", "zgrep", "grep", "zcat",
    "docker", "podman", "singularity", "apptainer", "kubectl", "ollama", "llama-server", "llama-cli", "dkms",
    "apt", "dpkg", "dnf", "rpm", "echo", "strace", "sudo", "amdgpu_top", "wsl", "stat", "getfacl", "ldd",
})

_PROMPT = re.compile(
    r"^(?P<prefix>.{0,80}?)(?:(?<=[\s~/\]):)\w])|^)(?P<sigil>[$#>%λ❯➜])\s+(?P<cmd>\S.*?)\s*$")
_IPY = re.compile(r"^\s*(?:In \[\d+\]:|>>>)\s*(?P<cmd>.*)$")
# PowerShell: `PS C:\Users\banya> & 'C:\Program Files\AMD\ROCm\6.1\bin\amdgpu-arch.exe'` (legacy-rocm-build#4390)
_PS = re.compile(r"^PS [A-Za-z]:\\[^>]{0,120}>\s*(?P<cmd>\S.*?)\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_HTML = re.compile(r"^\s*</?(details|summary|pre|code)\b[^>]*>\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Segment:
    cmd: str | None  # the command line as shown (without the prompt), None for text before any prompt
    body: str

    @property
    def word(self) -> str:
        """The command's program name: 'sudo /opt/rocm/bin/rocminfo --support' -> 'rocminfo'."""
        return command_word(self.cmd or "")


def command_word(cmd: str) -> str:
    cmd = re.sub(r"^&\s*", "", cmd.strip())  # PowerShell's call operator
    q = re.match(r"""^(['"])(?P<path>[^'"]+)\1(?P<rest>.*)$""", cmd)
    if q:  # a quoted program path with spaces ('C:\Program Files\…\amdgpu-arch.exe')
        cmd = q.group("path").replace(" ", "_") + q.group("rest")
    words = [w for w in re.split(r"\s+", cmd.strip()) if w]
    # skip `sudo`, `VAR=value` prefixes and `time`
    while words and (words[0] in ("sudo", "time", "exec", "command") or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0])):
        words = words[1:]
    if not words:
        return ""
    w = re.split(r"[/\\]", words[0])[-1].strip("`'\"")
    w = re.sub(r"\.exe$", "", w, flags=re.I)
    if w in ("python", "python3") or re.match(r"^python3(\.\d+)?$", w):
        rest = " ".join(words[1:])
        if re.match(r"^-m\s+pip\b", rest):
            return "pip"
        if "collect_env" in rest:
            return "collect_env"
        return "python"
    if w in ("pip3",) or re.match(r"^pip3?(\.\d+)?$", w):
        return "pip"
    if w == "uv" and len(words) > 1 and words[1] == "pip":
        return "pip"
    return w


def _prompt_command(line: str) -> str | None:
    m = _PS.match(line)
    if m:
        return m.group("cmd")
    m = _PROMPT.match(line)
    if m:
        prefix, sigil, cmd = m.group("prefix"), m.group("sigil"), m.group("cmd")
        if len(prefix) > 60 or (prefix.strip() and " " in prefix.strip() and not _looks_like_prompt(prefix)):
            return None
        word = command_word(cmd)
        if sigil == "$" and not prefix.strip() and word and re.match(r"^[\w.-]+$", word):
            return cmd
        if word in KNOWN or word in ("collect_env", "pip"):
            return cmd
        return None
    m = _IPY.match(line)
    if m:
        return m.group("cmd") or None
    return None


def _looks_like_prompt(prefix: str) -> bool:
    """'(venv) user@host:~' / 'amnesia λ ~/' / '(.venv) sage@beaker ~/g/nm-vllm (main)' / '➜  ~'."""
    p = prefix.strip()
    return bool(re.search(r"[@:~]|^\(.*\)|^[➜❯]", p)) and len(p) <= 60


_COMPOSE_LOG = re.compile(r"^(?:#\s*)?[A-Za-z][\w.-]*[-_]\d+\s+\|\s?")
_QUOTE = re.compile(r"^\s*>(?!>)[ \t]?")


def clean(text: str) -> str:
    """Drop markdown fences and <details> wrappers, and a markdown quote's `> ` where most lines carry it (output
    pasted as a quote, Comfy-Org/ComfyUI#9910; a REPL's `>>>` is not one); keep everything else verbatim."""
    lines = [ln for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
             if not _FENCE.match(ln) and not _HTML.match(ln)]
    filled = [ln for ln in lines if ln.strip()]
    if filled and sum(1 for ln in filled if _QUOTE.match(ln)) >= 0.6 * len(filled):
        lines = [_QUOTE.sub("", ln, count=1) for ln in lines]
    # docker compose's log prefix, `worker-1  | ` (v1: `worker_1  | `), the same on two lines or more: the service's
    # output is what follows it (text-generation-inference#223: `torch version:  2.0.0+cu118` behind one).
    prefixes = Counter(m.group(0) for ln in lines if (m := _COMPOSE_LOG.match(ln)))
    shared = {p for p, n in prefixes.items() if n >= 2}
    if shared:
        lines = [ln[len(m.group(0)):] if (m := _COMPOSE_LOG.match(ln)) and m.group(0) in shared else ln for ln in lines]
    return "\n".join(lines)


def segments(text: str) -> list[Segment]:
    """Split at prompt lines. The text before the first prompt is a segment with cmd None."""
    out: list[Segment] = []
    cmd: str | None = None
    body: list[str] = []
    for line in clean(text).split("\n"):
        stripped = line.strip().strip("`")
        found = _prompt_command(stripped) if stripped else None
        if found is not None:
            if cmd is not None or any(b.strip() for b in body):
                out.append(Segment(cmd, "\n".join(body).strip("\n")))
            cmd, body = found, []
            continue
        body.append(line)
    if cmd is not None or any(b.strip() for b in body):
        out.append(Segment(cmd, "\n".join(body).strip("\n")))
    return out
