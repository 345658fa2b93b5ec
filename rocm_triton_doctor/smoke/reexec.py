"""`smoke --python P`: run this same command in another interpreter, whose torch and Triton are the ones tested."""

from __future__ import annotations

import importlib
import os
import sys

# The doctor and its pure-Python dependencies; they are appended to the END of the other interpreter's sys.path, so
# its own torch/Triton (and anything else it has) always win.
CARRIED = ("rocm_triton_doctor", "click", "rich", "packaging", "markdown_it", "mdurl", "pygments")


def argv_without_python(argv: list[str]) -> list[str]:
    args, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == "--python":
            skip = True
            continue
        if a.startswith("--python="):
            continue
        args.append(a)
    return args


def reexec_in(python: str) -> None:
    """Replace this process by `python` running the doctor with the same arguments minus --python (never returns)."""
    paths = []
    for name in CARRIED:
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        paths.append(os.path.dirname(os.path.dirname(os.path.abspath(str(mod.__file__)))))
    code = (f"import sys; sys.path.extend({list(dict.fromkeys(paths))!r}); "
            "from rocm_triton_doctor.cli import main; main()")
    sys.stdout.flush()
    os.execv(python, [python, "-c", code, *argv_without_python(sys.argv[1:])])
