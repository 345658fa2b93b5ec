"""Refresh the torch / Triton versions available per wheel index and flag knowledge rows that went stale.

    python scripts/refresh_knowledge.py [--base URL] [--index rocm7.14 ...] [--out PATH] [--check]

Reads each index's simple API (PEP 691 JSON when the server offers it, else PEP 503 HTML) for the projects `torch`
and every Triton distribution name, and writes `rocm_triton_doctor/knowledge/data/index_versions.json`:
the versions found per index, and a `stale` list naming each `torch_releases.json` row that the index contradicts
(a newer patch of the same minor, a minor the knowledge lacks, the row's torch or Triton pin not on the index).
An index that cannot be read is recorded as `unreachable` (its rows are not judged). `--check` exits 1 when
anything is stale (for CI). Standard library plus `packaging` only; no project import, so it runs from a checkout.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import html.parser
import json
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

DATA = Path(__file__).resolve().parents[1] / "rocm_triton_doctor" / "knowledge" / "data"
TRITONS = ("triton-rocm", "pytorch-triton-rocm", "triton", "amd-triton")
PEP691 = "application/vnd.pypi.simple.v1+json"


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            href = dict(attrs).get("href") or ""
            self.names.append(urllib.parse.unquote(href.split("#", 1)[0].rsplit("/", 1)[-1]))


def project_files(base: str, project: str, timeout: float = 20.0) -> list[str] | None:
    """File names the index lists for `project`; [] when the project is absent (404), None when unreachable."""
    url = f"{base.rstrip('/')}/{project}/"
    req = urllib.request.Request(url, headers={"Accept": f"{PEP691}, text/html;q=0.1"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            body = resp.read()
            ctype = resp.headers.get("Content-Type", "")
    except urllib.error.HTTPError as exc:
        return [] if exc.code == 404 else None
    except (urllib.error.URLError, OSError, ValueError):
        return None
    if PEP691 in ctype:
        try:
            return [str(f["filename"]) for f in json.loads(body)["files"]]
        except (ValueError, KeyError, TypeError):
            return None
    p = _Links()
    p.feed(body.decode("utf-8", "replace"))
    return p.names


def wheel_versions(files: list[str]) -> list[str]:
    """Distinct versions of the wheels in `files`, newest first (`torch-2.14.1+rocm7.14-cp312-…whl` -> 2.14.1+rocm7.14)."""
    out: set[str] = set()
    for name in files:
        if not name.endswith(".whl"):
            continue
        parts = name.split("-")
        if len(parts) >= 5:
            try:
                out.add(str(Version(parts[1])))
            except InvalidVersion:
                continue
    return sorted(out, key=Version, reverse=True)


def _public(v: str) -> Version:
    return Version(v.split("+", 1)[0])


def stale_rows(releases: list[dict[str, Any]], index: str, torch_versions: list[str],
               tritons: dict[str, list[str]]) -> list[str]:
    """What the index contradicts in `releases` (rows of torch_releases.json), one sentence each."""
    out: list[str] = []
    on_index = torch_versions  # a per-index page lists only that index's wheels
    minors = {(_public(v).major, _public(v).minor) for v in on_index}
    rows = {(Version(r["torch"]).major, Version(r["torch"]).minor): r for r in releases}
    for mm in sorted(minors - set(rows)):
        out.append(f"{index}: torch {mm[0]}.{mm[1]} is on the index but has no knowledge row")
    for (major, minor), r in rows.items():
        mm = (major, minor)
        if index not in r.get("rocm_indexes", ()):
            if mm in minors:
                out.append(f"{index}: torch {r['torch']} row does not list {index}, but the index has {mm[0]}.{mm[1]}")
            continue
        want = (r.get("index_versions") or {}).get(index, r["torch"])
        have = sorted((_public(v) for v in on_index if _public(v).release[:2] == mm), reverse=True)
        if not have:
            out.append(f"{index}: torch {want} row lists {index}, but the index has no {mm[0]}.{mm[1]} wheel")
            continue
        if have[0] > Version(want):
            out.append(f"{index}: torch {want} row is behind: the index has {have[0]}")
        elif Version(want) not in have:
            out.append(f"{index}: torch {want} is not on the index (it has {', '.join(map(str, have))})")
        pkg = r.get("triton_rocm_package")
        if pkg and pkg in tritons and not any(_public(v) == Version(r["triton"]) for v in tritons[pkg]):
            out.append(f"{index}: {pkg}=={r['triton']} (torch {want}'s pin) is not on the index")
    return out


def refresh(base: str, indexes: list[str], releases: list[dict[str, Any]], today: str | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"as_of": today or _dt.date.today().isoformat(), "base_url": base,
                              "generated_by": "scripts/refresh_knowledge.py", "indexes": {}, "stale": []}
    for index in indexes:
        url = f"{base.rstrip('/')}/{index}"
        files = project_files(url, "torch")
        if files is None:
            result["indexes"][index] = {"url": url, "unreachable": True}
            continue
        tritons: dict[str, list[str]] = {}
        for t in TRITONS:
            tf = project_files(url, t)
            if tf:
                tritons[t] = wheel_versions(tf)
        torch_versions = wheel_versions(files)
        result["indexes"][index] = {"url": url, "torch": torch_versions, "triton": tritons}
        result["stale"] += stale_rows(releases, index, torch_versions, tritons)
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    known = json.loads((DATA / "rocm_indexes.json").read_text())
    ap.add_argument("--base", default=known["base_url"], help="index root (default: %(default)s)")
    ap.add_argument("--index", action="append", help="an index under --base (default: every rocm index known)")
    ap.add_argument("--out", type=Path, default=DATA / "index_versions.json")
    ap.add_argument("--check", action="store_true", help="exit 1 when a row is stale (writes nothing)")
    a = ap.parse_args(argv)
    releases = json.loads((DATA / "torch_releases.json").read_text())["releases"]
    result = refresh(a.base, a.index or list(known["indexes"]), releases)
    for line in result["stale"]:
        print("stale:", line)
    for name, row in result["indexes"].items():
        if row.get("unreachable"):
            print(f"unreachable: {name} ({row['url']})", file=sys.stderr)
    if a.check:
        return 1 if result["stale"] else 0
    result["note"] = ("output of scripts/refresh_knowledge.py against the live indexes; `stale` lists knowledge rows the "
                      "index contradicts")
    a.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
