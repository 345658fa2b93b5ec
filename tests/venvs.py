"""Virtual environments for the install tests. `python -m venv PATH` costs about 5 CPU-s (ensurepip installs pip from
its wheel every time) and the tests make a dozen, so the first one a test process makes is kept as a template and the
others are copies of it (about 0.3 s): the same files, with the template's path rewritten where venv writes it (the
scripts in bin/ and pyvenv.cfg) — what `python -m venv PATH` would have left there. The product's own venvs
(`install --venv`) are still made by the product."""

from __future__ import annotations

import atexit
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_TEMPLATE: list[Path] = []


def make(path: Path) -> str:
    """A venv with pip at `path` (which must not exist); returns its python."""
    if not _TEMPLATE:
        tpl = Path(tempfile.mkdtemp(prefix="rtd-venv-template-")) / "env"
        atexit.register(shutil.rmtree, tpl.parent, ignore_errors=True)  # ~26 MB a test process: not left in /tmp
        subprocess.run([sys.executable, "-m", "venv", str(tpl)], check=True, timeout=300)
        _TEMPLATE.append(tpl)
    tpl = _TEMPLATE[0]
    shutil.copytree(tpl, path, symlinks=True)
    old, new = str(tpl).encode(), str(path).encode()
    for f in [path / "pyvenv.cfg", *(path / "bin").iterdir()]:
        if f.is_file() and not f.is_symlink() and old in (data := f.read_bytes()):
            f.write_bytes(data.replace(old, new))
    return str(path / "bin" / "python")
