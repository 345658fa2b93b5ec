"""outputs.py: the one writer of every output file (issue #18 "Outputs")."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from rocm_triton_doctor import outputs


def test_new_file_is_written_atomically_with_no_temp_left(tmp_path: Path) -> None:
    p = tmp_path / "out.json"
    outputs.write_text(str(p), "new")
    assert p.read_text() == "new" and [x.name for x in tmp_path.iterdir()] == ["out.json"]
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(p.stat().st_mode) == 0o666 & ~umask  # as open() would create it


def test_regular_file_is_replaced_keeping_its_mode(tmp_path: Path) -> None:
    p = tmp_path / "out.json"
    p.write_text("old")
    p.chmod(0o640)
    inode = p.stat().st_ino
    outputs.write_text(str(p), "new")
    assert p.read_text() == "new" and stat.S_IMODE(p.stat().st_mode) == 0o640
    assert p.stat().st_ino != inode  # replaced (atomic), not truncated in place


def test_symlink_is_written_through(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.write_text("old")
    link = tmp_path / "link"
    link.symlink_to(target)
    outputs.write_text(str(link), "new")
    assert link.is_symlink() and target.read_text() == "new"


def test_fifo_is_written_through(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    outputs.write_text(str(fifo), "through")
    reader.join(10)
    assert got == [b"through"] and stat.S_ISFIFO(fifo.lstat().st_mode)


def test_device_node_is_written_through(tmp_path: Path) -> None:
    node = tmp_path / "null"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs root")
    outputs.write_text(str(node), "gone")
    assert node.is_char_device()
    if Path("/dev/full").exists():
        with pytest.raises(OSError):  # a full disk is an OSError the commands turn into exit 3
            outputs.write_text("/dev/full", "x")
        assert Path("/dev/full").is_char_device()


def test_directory_and_missing_parent_are_refused(tmp_path: Path) -> None:
    with pytest.raises(outputs.OutputPathError, match="directory"):
        outputs.check_path(str(tmp_path))
    with pytest.raises(outputs.OutputPathError, match="does not exist"):
        outputs.check_path(str(tmp_path / "no" / "file"))
    with pytest.raises(outputs.OutputPathError):
        outputs.write_text(str(tmp_path), "x")
    assert outputs.check_path(str(tmp_path / "file")) == str(tmp_path / "file")
