"""Small but real wheels, named and versioned like the real ones, and a PEP 503 index on 127.0.0.1 serving them."""

from __future__ import annotations

import base64
import hashlib
import http.server
import re
import socketserver
import threading
import zipfile
from contextlib import contextmanager
from pathlib import Path
from collections.abc import Iterator


def _hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def make_wheel(out: Path, name: str, version: str, requires: tuple[str, ...] = (),
               files: dict[str, str] | None = None) -> Path:
    dist = name.replace("-", "_")
    path = out / f"{dist}-{version}-py3-none-any.whl"
    info = f"{dist}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    entries = dict(files or {})
    entries[f"{info}/METADATA"] = meta
    entries[f"{info}/WHEEL"] = "Wheel-Version: 1.0\nGenerator: rtd-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = [f"{p},{_hash(c.encode())},{len(c.encode())}" for p, c in entries.items()]
    record.append(f"{info}/RECORD,,")
    entries[f"{info}/RECORD"] = "\n".join(record) + "\n"
    with zipfile.ZipFile(path, "w") as z:
        for p, c in entries.items():
            z.writestr(p, c)
    return path


_FAKE_TENSOR = """
class _T(list):
    def __add__(self, k): return _T(v + k for v in self)
    def __eq__(self, k): return _T(v == k for v in self)
    def all(self): return _T([all(self)])
    def item(self): return self[0]
    def tolist(self): return list(self)
def ones(n, device=None): return _T([1.0] * n)
"""


def fake_torch(version: str, requires: tuple[str, ...], hip: str | None = None, cuda: str | None = None,
               arch: tuple[str, ...] = ()) -> dict[str, str]:
    return {
        # Just enough tensor for verify's tiny kernel (install/devicekernel.py): ones(8, device=d) + 1 == 2, all, item.
        "torch/__init__.py": f"__version__ = {version!r}\nfrom . import version, cuda\n" + _FAKE_TENSOR,
        "torch/version.py": f"__version__ = {version!r}\ncuda = {cuda!r}\nhip = {hip!r}\n",
        "torch/cuda/__init__.py": ("def is_available():\n    return False\n\ndef device_count():\n    return 0\n\n"
                                   f"def get_arch_list():\n    return {list(arch)!r}\n"),
    }


def build(out: Path) -> Path:
    """The wheels the install tests use."""
    out.mkdir(parents=True, exist_ok=True)
    W = make_wheel
    W(out, "torch", "2.9.1+rocm6.4", ("pytorch-triton-rocm==3.5.1",),
      fake_torch("2.9.1+rocm6.4", (), hip="6.4.43482", arch=("gfx942", "gfx1100")))
    W(out, "pytorch-triton-rocm", "3.5.1", (), {"triton/__init__.py": "__version__ = '3.5.1'\n"})
    W(out, "torch", "2.11.0+rocm7.2", ("triton-rocm==3.6.0",),
      fake_torch("2.11.0+rocm7.2", (), hip="7.2.53211", arch=("gfx942", "gfx1100", "gfx1151")))
    W(out, "triton-rocm", "3.6.0", (), {"triton/__init__.py": "__version__ = '3.6.0'\n"})
    W(out, "torch", "2.9.1", ("triton==3.5.1", "nvidia-cuda-runtime-cu12==12.8.90"),
      fake_torch("2.9.1", (), cuda="12.8"))
    W(out, "triton", "3.5.1", (), {"triton/__init__.py": "__version__ = '3.5.1'\n"})
    W(out, "nvidia-cuda-runtime-cu12", "12.8.90", (), {"nvidia/cuda_runtime/__init__.py": ""})
    W(out, "torchvision", "0.24.1+rocm6.4", ("torch==2.9.1+rocm6.4",), {"torchvision/__init__.py": ""})
    W(out, "torchvision", "0.24.1", ("torch==2.9.1",), {"torchvision/__init__.py": ""})
    W(out, "torch", "2.15.0+cpu", (), fake_torch("2.15.0+cpu", ()))
    # A torchaudio with many files: slow enough to be killed in the middle of its installation.
    W(out, "torchaudio", "2.9.1+rocm6.4", ("torch==2.9.1+rocm6.4",),
      {f"torchaudio/m{i // 500}/f{i}.py": f"x = {i}\n" for i in range(30000)})
    return out


def write_index(wheels: Path, root: Path) -> Path:
    simple = root / "simple"
    by: dict[str, list[Path]] = {}
    for w in sorted(wheels.glob("*.whl")):
        by.setdefault(norm(w.name.split("-")[0]), []).append(w)
    for name, ws in by.items():
        d = simple / name
        d.mkdir(parents=True, exist_ok=True)
        links = "".join(f'<a href="/files/{w.name}">{w.name}</a><br>\n' for w in ws)
        (d / "index.html").write_text(f"<html><body>\n{links}</body></html>\n")
    files = root / "files"
    files.mkdir(exist_ok=True)
    for w in wheels.glob("*.whl"):
        target = files / w.name
        if not target.exists():
            target.symlink_to(w)
    return simple


@contextmanager
def serve(root: Path) -> Iterator[str]:
    """A PEP 503 'simple' index over HTTP on 127.0.0.1; yields its URL."""

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a: object, **k: object) -> None:
            super().__init__(*a, directory=str(root), **k)  # type: ignore[arg-type]

        def log_message(self, *a: object) -> None:
            pass

    with socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler) as srv:
        t = threading.Thread(target=srv.serve_forever, daemon=True)
        t.start()
        try:
            yield f"http://127.0.0.1:{srv.server_address[1]}/simple"
        finally:
            srv.shutdown()
