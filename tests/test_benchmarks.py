"""The GPU scripts in benchmarks/ and scripts/ run only on a lent GPU, never in CI: at least they must compile. (A
`global` declared after its name's first use in shape_hunt.main() is a SyntaxError that ruff does not report; it broke
shape_hunt.py and gemm_ab_probe.py, which imports it, from session 9 until a device call found it.)"""

from __future__ import annotations

import py_compile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted([*ROOT.glob("benchmarks/*.py"), *ROOT.glob("scripts/*.py")])


def test_there_are_scripts_to_check() -> None:
    assert len(SCRIPTS) > 10


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_script_compiles(path: Path, tmp_path: Path) -> None:
    py_compile.compile(str(path), cfile=str(tmp_path / "x.pyc"), doraise=True)
