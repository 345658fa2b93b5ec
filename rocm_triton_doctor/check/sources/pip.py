"""pip text: `pip list`, `pip freeze`, `pip show`, and what `pip install` prints.

* `pip list` (the "Package  Version" table) and `pip freeze` (name==version, name @ url) give
  `python.distributions`. Only an unfiltered list proves that a package is NOT installed: the list counts as
  complete when it has the table header (list) or ≥ 10 lines (freeze), no `| grep` in its command line, and it
  shows pip's own packaging tools (pip, setuptools or wheel) — otherwise `python.distributions` is marked partial.
* `pip show X` gives X's version, `Requires` (-> `requires`) and `Location`; never completeness.
* `pip install` logs give "Requirement already satisfied: X==v in <dir>" and "Successfully installed a-1 b-2"
  (partial), the indexes pip searched (`python.pip_indexes`) and wheels it downloaded (`python.pip_downloads`).
"""

from __future__ import annotations

import re
from typing import Any

from rocm_triton_doctor import knowledge
from rocm_triton_doctor.check.sources._frag import Fragment, merge

_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]*"
_LIST_ROW = re.compile(rf"^(?P<name>{_NAME})\s+(?P<ver>\d[^\s]*)(?:\s+(?P<loc>/\S*|[A-Za-z]:\\\S*))?(?:\s+\S+)?\s*$")
_FREEZE_ROW = re.compile(rf"^(?P<name>{_NAME})\s*(?:==\s*(?P<ver>\d[^\s;]*)|\s@\s(?P<url>\S+))")


def detect(text: str) -> bool:
    return bool(re.search(r"^Package\s+Version\s*$|^Package\s+Version\s+", text, re.M)
                or re.search(r"^Name:\s+\S+\s*\n-?Version:\s+\S+", text, re.M)
                or re.search(r"Requirement already satisfied:|Successfully installed |Looking in indexes:|"
                             r"Could not find a version that satisfies the requirement|"
                             r"pip's dependency resolver does not currently take", text)
                or re.search(r"^\s*(?:Collecting \S+.*\n\s*)?(?:Downloading|Using cached) \S+\.whl\b", text, re.M)
                or len(re.findall(rf"^{_NAME}==\d\S*\s*$", text, re.M)) >= 3
                # `pip list` rows pasted without their header: name, 2+ spaces of alignment, a version
                or len(re.findall(rf"^{_NAME}[ \t]{{2,}}\d[\w.+!-]*[ \t]*$", text, re.M)) >= 3)


def parse(text: str, cmd: str | None = None) -> Fragment:
    filtered = bool(cmd and re.search(r"\|\s*(grep|rg|findstr|head|tail|awk|sed)\b", cmd))
    frag: Fragment = {}
    sub = (cmd or "").split()
    if "show" in sub or re.search(r"^Name:\s+\S+\s*$", text, re.M):
        merge(frag, _show(text))
    dists, complete = _list_or_freeze(text, filtered)
    if dists:
        merge(frag, {"python": {"distributions": dists}})
        if complete:
            merge(frag, {"python": {"distributions_complete": True}})
    merge(frag, _install_log(text))
    return frag


def _show(text: str) -> Fragment:
    frag: Fragment = {}
    for block in re.split(r"^---\s*$", text, flags=re.M):
        kv: dict[str, str] = {}
        for ln in block.splitlines():
            m = re.match(r"^-?(?P<k>[A-Za-z-]+):\s?(?P<v>.*)$", ln.strip())
            if m:
                kv.setdefault(m.group("k").lower(), m.group("v").strip())
        name, ver = kv.get("name"), kv.get("version")
        if not name or not ver or not re.match(r"^\d", ver):
            continue
        d: dict[str, Any] = {"version": ver}
        if "requires" in kv:
            d["requires"] = [r.strip() for r in kv["requires"].split(",") if r.strip()]
        if kv.get("location"):
            d["location"] = kv["location"]
        if "required-by" in kv:
            d["required_by"] = [r.strip() for r in kv["required-by"].split(",") if r.strip()]
        merge(frag, {"python": {"distributions": {name.lower(): d}}})
    return frag


def _list_or_freeze(text: str, filtered: bool) -> tuple[dict[str, dict[str, Any]], bool]:
    out: dict[str, dict[str, Any]] = {}
    lines = [ln.rstrip() for ln in text.splitlines()]
    header = any(re.match(r"^Package\s+Version\b", ln) for ln in lines)
    rows = 0
    for ln in lines:
        s = ln.strip()
        if not s or s.startswith(("Package ", "-----", "#", "WARNING", "DEPRECATION", "[notice]")):
            continue
        m = _FREEZE_ROW.match(s)
        if m and (m.group("ver") or m.group("url")):
            rows += 1
            if m.group("ver"):  # `name @ url` rows carry no version: the name alone is still evidence
                out.setdefault(m.group("name").lower(), {"version": m.group("ver")})
            continue
        m = _LIST_ROW.match(s)
        if m and (header or len(s.split()) <= 3):
            rows += 1
            d: dict[str, Any] = {"version": m.group("ver")}
            if m.group("loc"):
                d["location"] = m.group("loc")
            out.setdefault(m.group("name").lower(), d)
    tools = {"pip", "setuptools", "wheel"} & set(out)
    complete = bool(out) and not filtered and bool(tools) and (header or rows >= 10)
    return out, complete


def _install_log(text: str) -> Fragment:
    frag: Fragment = {}
    for m in re.finditer(rf"Requirement already satisfied:\s*(?P<name>{_NAME})==(?P<ver>[^\s]+)\s+in\s+(?P<loc>\S+)", text):
        merge(frag, {"python": {"distributions": {m.group("name").lower(): {"version": m.group("ver"),
                                                                             "location": m.group("loc")}}}})
    # pip >= 20: `Requirement already satisfied: torch in /…/site-packages (2.7.1)`; the wheel pip KEPT, whatever
    # index it was given, so a non-ROCm torch here survives a ROCm install command.
    # (with `(from -r requirements.txt (line 4))` between the place and the version when a requirement file asked)
    for m in re.finditer(rf"Requirement already satisfied:\s*(?P<name>{_NAME})\s+in\s+(?P<loc>\S+)"
                         r"(?:\s+\(from [^()\n]*(?:\([^()\n]*\)[^()\n]*)*\))?\s+\((?P<ver>\d[^)\s]*)\)", text):
        name = m.group("name").lower()
        merge(frag, {"python": {"distributions": {name: {"version": m.group("ver"), "location": m.group("loc")}},
                                "pip_kept": {name: m.group("ver")}}})
    for m in re.finditer(r"Successfully installed (?P<list>.+)$", text, re.M):
        for item in m.group("list").split():
            mm = re.match(rf"^(?P<name>{_NAME})-(?P<ver>\d[^\s-]*)$", item)
            if mm:
                merge(frag, {"python": {"distributions": {mm.group("name").lower(): {"version": mm.group("ver")}}}})
    # The resolver's conflict report: `torch 2.5.1+cu121 requires triton==3.1.0; platform_system == "Linux" …, but
    # you have triton 3.0.0+gite82dfd99 which is incompatible.` (triton-lang/triton#5058; pasted wrapped over lines).
    # Both versions are installed ones, and the requirement is the package's own pin.
    flat = re.sub(r"\s+", " ", text)
    for m in re.finditer(rf"(?P<pkg>{_NAME}) (?P<pv>\d[^\s,]*) requires (?P<req>(?P<dep>{_NAME})[^,;]*?)(?:;[^,]*)?, "
                         rf"but you have (?P<dname>{_NAME}) (?P<dv>\d[^\s,]*) which is incompatible", flat):
        if m.group("dep").lower() != m.group("dname").lower():
            continue
        merge(frag, {"python": {"distributions": {
            m.group("pkg").lower(): {"version": m.group("pv"), "requires": [m.group("req").replace(" ", "")]},
            m.group("dname").lower(): {"version": m.group("dv")}}}})
    idx = [u.strip().rstrip(",") for m in re.finditer(r"Looking in indexes:\s*(.+)$", text, re.M) for u in m.group(1).split(",")]
    if idx:
        merge(frag, {"python": {"pip_indexes": [u for u in idx if u]}})
    # `Collecting torch==2.4.0 (from torchaudio)`: a package pip resolves only because another one requires it
    # (ROCm/pytorch#1533: torchaudio from PyPI pulling PyPI's torch into a ROCm image).
    pulled = {m.group("name").lower(): m.group("by").lower() for m in re.finditer(
        rf"Collecting (?P<name>{_NAME})(?:[=<>!~]=?[^\s(]+)? \(from (?P<by>{_NAME})", text)}
    if pulled:
        merge(frag, {"python": {"pip_pulled_by": pulled}})
    downloads = list(dict.fromkeys(re.findall(r"(?:Downloading|Collecting|Using cached)\s+(\S+\.whl)", text)))
    if downloads:
        merge(frag, {"python": {"pip_downloads": downloads}})
    if re.search(r"Could not find a version that satisfies the requirement", text):
        merge(frag, {"python": {"pip_errors": re.findall(r"^.*(?:Could not find a version that satisfies the requirement|"
                                                          r"No matching distribution found for).*$", text, re.M)}})
    return frag


def parse_install_commands(text: str, cmd: str | None = None) -> Fragment:
    """Indexes named on `pip install` / `uv pip install` / `python -m pip install` command lines pasted anywhere (an
    issue's steps to reproduce: `pip install --index-url https://rocm.nightlies.amd.com/v2/gfx110X-all/ torch`)
    -> `python.install_indexes`: what the user asked for, apart from what pip said it searched."""
    urls: list[str] = []
    for line in ([cmd] if cmd else []) + text.splitlines():
        if not re.search(r"\b(?:pip3?(?:\.\d+)?|uv pip|-m pip)\s+install\b", line):
            continue
        urls += re.findall(r"(?:--(?:extra-)?index-url|(?<!\S)-i)(?:\s+|=)(https?://\S+)", line)
    urls = [u.strip("'\"") for u in dict.fromkeys(urls)]
    return {"python": {"install_indexes": urls}} if urls else {}


# An install that swapped torch: uv's change list (` - torch==2.11.0+rocm7.13.0` then ` + torch==2.10.0`, unsloth#7275)
# or pip's (`Found existing installation: torch 2.11.0+rocm7.13.0` … `Successfully installed … torch-2.10.0 …`).
_UV_OUT = re.compile(r"^\s*-\s+torch==(?P<v>\d\S*)\s*$", re.M)
_UV_IN = re.compile(r"^\s*\+\s+torch==(?P<v>\d\S*)\s*$", re.M)
_PIP_OUT = re.compile(r"Found existing installation: torch (?P<v>\d\S*)")
_PIP_IN = re.compile(r"Successfully installed (?:.* )?torch-(?P<v>\d[^\s]*)")


def parse_replaced_torch(text: str, cmd: str | None = None) -> Fragment:
    """-> `python.torch_replaced`: [removed version, installed version] when one install shows both, and
    `python.rocm_indexes_named`: the ROCm wheel indexes the text shows on lines of their own."""
    frag: Fragment = {}
    out = _UV_OUT.search(text) or _PIP_OUT.search(text)
    new = _UV_IN.search(text) or _PIP_IN.search(text)
    if out and new and out.group("v") != new.group("v"):
        merge(frag, {"python": {"torch_replaced": [out.group("v"), new.group("v")]}})
    # Only a line that is the URL alone (an installer quoting its index); a URL inside a sentence is prose.
    urls = list(dict.fromkeys(m.group(0) for ln in text.splitlines()
                              if (m := knowledge.ROCM_INDEX_URL.fullmatch(ln.strip()))))
    if urls:
        merge(frag, {"python": {"rocm_indexes_named": urls}})
    return frag



# A line that is the torch distribution and its version alone, as `pip list` prints it without its header or a script
# prints it (unsloth#7960's `torch 2.13.0a0+rocm7.13.0a20260422`; ROCm/ROCm#5657's `torch   2.10.0.dev20251118+rocm7.1`):
# the installed torch, in an excerpt (the other distributions unknown).
_TORCH_LINE = re.compile(r"^\s*torch\s+(?P<v>\d+\.\d+(?:\.\d+)?[\w.+-]*)\s*$", re.M)


def parse_torch_line(text: str, cmd: str | None = None) -> Fragment:
    m = _TORCH_LINE.search(text)
    return {"python": {"distributions": {"torch": {"version": m.group("v")}}}} if m else {}


# TheRock's per-target ROCm library wheels an install pulls or lists (`rocm-sdk-libraries-gfx1151` in uv's download
# progress, TheRock#3046; `rocm_sdk_libraries_gfx110X_all` in a pip list): the targets whose device code they carry.
_SDK_LIBRARIES = re.compile(r"\brocm[-_]sdk[-_]libraries[-_](?P<t>gfx[0-9a-zA-Z]+(?:[-_](?:all|dgpu|dcgpu|igpu))?)\b",
                            re.I)


def parse_sdk_libraries(text: str, cmd: str | None = None) -> Fragment:
    targets = sorted({m.group("t").replace("_", "-") for m in _SDK_LIBRARIES.finditer(text)})
    return {"python": {"sdk_library_targets": targets}} if targets else {}
