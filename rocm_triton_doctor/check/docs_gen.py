"""Docs generated from the code, so they cannot drift: `python -m rocm_triton_doctor.check.docs_gen [--check]`.

Writes docs/findings.md (the findings catalogue) from the ONE check registry.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rocm_triton_doctor.check.checks import INTERNAL_ERROR, REGISTRY
from rocm_triton_doctor.check.findings import GROUP_TITLES

DOCS = Path(__file__).resolve().parents[2] / "docs"


def findings_catalogue() -> str:
    out = ["# Findings catalogue", "",
           "Generated from the check registry by `python -m rocm_triton_doctor.check.docs_gen`; do not edit by hand.",
           ("Every finding carries the id of the check that produced it. Severities: `ok`, `info`, `warn`, `fail`, "
            "`skip` (not applicable, or the facts it needs are unknown)."), ""]
    group = None
    for c in REGISTRY:
        if c.group != group:
            group = c.group
            out += [f"## {GROUP_TITLES.get(group, group)}", ""]
        out += [f"### `{c.id}`", "", f"**What:** {c.what}", "", f"**Why it matters:** {c.why}", "",
                f"**Usual fix:** {c.fix}", ""]
    out += ["## Doctor", "", f"### `{INTERNAL_ERROR}`", "",
            "**What:** a check crashed. The finding names the check and the line; the exit code is 4.", "",
            "**Why it matters:** a crashed check must never read as a pass.", "",
            "**Usual fix:** report it with `rocm-triton-doctor check --save-snapshot snap.json --redact` attached.", ""]
    return "\n".join(out)


def main(argv: list[str]) -> int:
    target = DOCS / "findings.md"
    text = findings_catalogue()
    if "--check" in argv:
        if not target.exists() or target.read_text() != text:
            print(f"{target} is out of date: run python -m rocm_triton_doctor.check.docs_gen", file=sys.stderr)
            return 1
        return 0
    target.write_text(text)
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
