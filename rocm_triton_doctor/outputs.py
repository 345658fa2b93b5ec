"""The one writer for every file a command writes on request (--save-snapshot, --save, --junit, --plot, --output,
--lock): issue #18 "Outputs".

* a new path or an existing regular file: written atomically (a temporary file in the same directory, then
  os.replace), so a half-written result never replaces a good one and concurrent runs never interleave;
* an existing device node, FIFO or symlink: written THROUGH, exactly as the shell's `> path` would (opened,
  truncated, written). Replacing it would turn /dev/null or /dev/stdout into a regular file — as root that breaks
  the system until reboot (newcomer-walk.md defect 4);
* a directory, or a path whose parent directory does not exist: a usage error, found before any work (`check_path`).
"""

from __future__ import annotations

import os
import secrets
import stat


class OutputPathError(ValueError):
    """The path can never be written (a directory, a missing parent): a usage error, exit 2."""


def check_path(path: str) -> str:
    """Validate an output path before any work is done; returns it unchanged."""
    if os.path.isdir(path):
        raise OutputPathError(f"{path} is a directory; name a file")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise OutputPathError(f"cannot write {path}: the directory {parent} does not exist")
    return path


def write_bytes(path: str, data: bytes) -> None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise OutputPathError(f"{path} is a directory; name a file")
    if st is not None and not stat.S_ISREG(st.st_mode):
        with open(path, "wb") as fh:  # device node, FIFO, symlink: through, as `> path` does
            fh.write(data)
        return
    parent = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(parent, f".{os.path.basename(path)}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    # 0o666 through the umask, like open(); an existing file keeps its own mode.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        if st is not None:
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_text(path: str, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))
