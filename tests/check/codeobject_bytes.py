"""Real clang offload bundles, written byte by byte in the documented format, inside a minimal ELF file.

Format: clang/docs/ClangOffloadBundler.rst ("Bundled Code Object Layout"): the magic string
`__CLANG_OFFLOAD_BUNDLE__`, a u64 entry count, then per entry u64 offset (from the bundle start), u64 size, u64 id
length and the id; the code objects follow. Compressed (`CCOB`) header: clang/lib/Driver/OffloadBundler.cpp.
"""

from __future__ import annotations

import struct
import zlib

HOST = "host-x86_64-unknown-linux-gnu-"


def code_object(target: str) -> bytes:
    """A stand-in device ELF (only its bytes travel; nothing parses a code object's inside)."""
    return b"\x7fELF\x02\x01\x01\x40" + target.encode() + b"\0" * 48


def bundle(targets: list[str], host: bool = True, align: int = 4096) -> bytes:
    ids = ([HOST] if host else []) + [f"hipv4-amdgcn-amd-amdhsa--{t}" for t in targets]
    blobs = [b"" if i == HOST else code_object(i) for i in ids]
    header_len = 24 + 8 + sum(24 + len(i) for i in ids)
    offset = -(-header_len // align) * align
    table, data = b"", b""
    for ident, blob in zip(ids, blobs):
        table += struct.pack("<QQQ", offset + len(data) if blob else 0, len(blob), len(ident)) + ident.encode()
        data += blob
    head = b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", len(ids)) + table
    return head + b"\0" * (offset - len(head)) + data


def ccob(raw: bytes, version: int = 3, method: str = "zlib") -> bytes:
    payload = zlib.compress(raw) if method == "zlib" else _zstd(raw)
    m = 0 if method == "zlib" else 1
    if version == 1:
        head = b"CCOB" + struct.pack("<HHIQ", 1, m, len(raw), 0x1234)
    elif version == 2:
        head = b"CCOB" + struct.pack("<HHIIQ", 2, m, 24 + len(payload), len(raw), 0x1234)
    else:
        head = b"CCOB" + struct.pack("<HHQQQ", 3, m, 32 + len(payload), len(raw), 0x1234)
    return head + payload


def _zstd(raw: bytes) -> bytes:
    import subprocess

    return subprocess.run(["zstd", "-q", "-c"], input=raw, capture_output=True, check=True).stdout


def elf(sections: dict[str, bytes]) -> bytes:
    """A little-endian ELF64 shared object with the given PROGBITS sections (and .shstrtab), nothing else."""
    names = b"\0" + b"".join(n.encode() + b"\0" for n in [*sections, ".shstrtab"])
    body, offsets = b"", []
    for data in sections.values():
        pad = -(64 + len(body)) % 4096
        body += b"\0" * pad
        offsets.append(64 + len(body))
        body += data
    str_off = 64 + len(body)
    body += names
    pad = -(64 + len(body)) % 8
    body += b"\0" * pad
    shoff = 64 + len(body)
    shdrs = b"\0" * 64
    name_pos = 1
    for (name, data), off in zip(sections.items(), offsets):
        shdrs += struct.pack("<IIQQQQIIQQ", name_pos, 1, 2, 0, off, len(data), 0, 0, 4096, 0)
        name_pos += len(name) + 1
    shdrs += struct.pack("<IIQQQQIIQQ", name_pos, 3, 0, 0, str_off, len(names), 0, 0, 1, 0)
    shnum = len(sections) + 2
    ident = b"\x7fELF\x02\x01\x01" + b"\0" * 9
    header = ident + struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, shoff, 0, 64, 0, 0, 64, shnum, shnum - 1)
    return header + body + shdrs
