"""Which GPU targets the installed stack really carries code for, read from the binaries themselves (no GPU needed).

Sources read, headers and indexes only (never a whole file):
* HIP libraries (torch/lib/*.so, TheRock's _rocm_sdk_* libs): the ELF section `.hip_fatbin` holds one clang offload
  bundle per translation unit. Uncompressed bundle (clang/lib/Driver/OffloadBundler.cpp, documented in
  clang/docs/ClangOffloadBundler.rst): magic `__CLANG_OFFLOAD_BUNDLE__`, u64 entry count, then per entry u64 offset,
  u64 size, u64 id length, id (`hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`; `host-…` entries carry no GPU code).
  Compressed bundle (same file, `CompressedOffloadBundle`): magic `CCOB`, u16 version, u16 method (0 zlib, 1 zstd),
  then v1: u32 uncompressed size, u64 hash; v2: u32 file size, u32 uncompressed size, u64 hash; v3: u64 file size,
  u64 uncompressed size, u64 hash; the payload is a whole uncompressed bundle, so only its first KiBs are inflated.
* rocBLAS / hipBLASLt Tensile libraries and MIOpen kernel databases: one file per target, the target in the name
  (`TensileLibrary_lazy_gfx90a.dat`, `…_gfx1100.co`, `Kernels.so-000-gfx90a-xnack-.hsaco`, `gfx90a6e.kdb`).
* TheRock `.kpack` files: their format is not documented in TheRock's repository (2026-08 snapshot), so by file name
  (`torch_gfx90a:xnack+.kpack`, ROCm/TheRock#7081).
Results are cached per file by (size, mtime) in the user cache dir, so a second `check` costs a stat per file.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import time
import zlib
from pathlib import Path
from typing import Any

MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
CMAGIC = b"CCOB"
CACHE_VERSION = 1
MAX_ENTRIES = 4096  # a bundle with more entries than this is corrupt
FIRST_READ = 4096  # one page: a bundle header with a few dozen targets
HEADER_WINDOW = 64 * 1024  # enough for any bundle's entry table
PAYLOAD_READ = 512 * 1024
MAX_COMPRESSED_READ = 4  # compressed bundles inflated per library (each TU is built for the same --offload-arch list)
TIME_BUDGET_S = 1.5

_TARGET_RE = re.compile(r"(gfx[0-9a-f]{3,4}|gfx\d+(?:-\d+)?-generic)((?:[:_-](?:xnack|sramecc)[+-])*)(?![0-9a-zA-Z])")
TENSILE_EXT = (".co", ".dat", ".hsaco", ".msgpack", ".yaml")


class BundleError(ValueError):
    pass


def target_id(text: str) -> str | None:
    """'hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-' / 'Kernels-gfx90a-xnack-.hsaco' -> 'gfx90a:sramecc+:xnack-'."""
    m = _TARGET_RE.search(text)
    if not m:
        return None
    feats = re.findall(r"(xnack|sramecc)([+-])", m.group(2))
    order = {"sramecc": 0, "xnack": 1}  # LLVM writes target-ids with features in alphabetical order
    return m.group(1) + "".join(f":{k}{v}" for k, v in sorted(feats, key=lambda kv: order[kv[0]]))


def parse_bundle(data: bytes) -> tuple[list[tuple[int, int, str]], int]:
    """(entries (offset, size, id), bytes spanned by the bundle) of an uncompressed bundle starting at data[0]."""
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 8:
        raise BundleError("not a clang offload bundle")
    (count,) = struct.unpack_from("<Q", data, len(MAGIC))
    if count > MAX_ENTRIES:
        raise BundleError(f"implausible entry count {count}")
    pos, entries, end = len(MAGIC) + 8, [], 0
    for _ in range(count):
        if pos + 24 > len(data):
            raise BundleError("entry table runs past the data read")
        off, size, idlen = struct.unpack_from("<QQQ", data, pos)
        pos += 24
        if idlen > 1024 or pos + idlen > len(data):
            raise BundleError("bad entry id length")
        entries.append((off, size, data[pos:pos + idlen].decode("ascii", "replace")))
        pos += idlen
        end = max(end, off + size)
    return entries, max(end, pos)


def parse_compressed_header(data: bytes) -> tuple[int, str, int | None, int, int]:
    """(version, method, total size or None for v1, uncompressed size, header size) of a CCOB header."""
    if not data.startswith(CMAGIC) or len(data) < 8:
        raise BundleError("not a compressed offload bundle")
    version, method = struct.unpack_from("<HH", data, 4)
    if method not in (0, 1):
        raise BundleError(f"unknown compression method {method}")
    name = "zlib" if method == 0 else "zstd"
    if version == 1 and len(data) >= 20:
        (usize,) = struct.unpack_from("<I", data, 8)
        return 1, name, None, usize, 20
    if version == 2 and len(data) >= 24:
        total, usize = struct.unpack_from("<II", data, 8)
        return 2, name, total, usize, 24
    if version == 3 and len(data) >= 32:
        total, usize = struct.unpack_from("<QQ", data, 8)
        return 3, name, total, usize, 32
    raise BundleError(f"unknown compressed bundle version {version}")


def inflate_prefix(method: str, payload: bytes, want: int = HEADER_WINDOW) -> bytes | None:
    """The first `want` bytes of a compressed payload (or fewer if it ends), None when it cannot be inflated here."""
    if method == "zlib":
        try:
            return zlib.decompressobj().decompress(payload, want)
        except zlib.error as exc:
            raise BundleError(f"zlib: {exc}") from None
    try:  # zstd: Python 3.14's stdlib, else the zstandard package, else the zstd program
        from compression import zstd  # type: ignore[import-not-found]

        return bytes(zstd.ZstdDecompressor().decompress(payload, want))
    except ImportError:
        pass
    except Exception as exc:  # noqa: BLE001 - a truncated frame is expected, anything else is corrupt data
        raise BundleError(f"zstd: {exc}") from None
    try:
        import zstandard  # type: ignore[import-not-found]

        return bytes(zstandard.ZstdDecompressor().decompressobj().decompress(payload)[:want])
    except ImportError:
        pass
    exe = shutil.which("zstd")
    if exe is None:
        return None
    # A prefix of the frame: zstd writes what it could decode, then complains that the input is truncated.
    res = subprocess.run([exe, "-dc", "-q"], input=payload, capture_output=True, timeout=10)
    return res.stdout[:want] or None


def elf_section(fh: Any, name: str) -> tuple[int, int] | None:
    """(file offset, size) of section `name` in a 64-bit little-endian ELF file, from the section headers only."""
    fh.seek(0)
    ident = fh.read(64)
    if len(ident) < 64 or ident[:4] != b"\x7fELF" or ident[4] != 2 or ident[5] != 1:
        return None
    shoff, = struct.unpack_from("<Q", ident, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", ident, 0x3A)
    if shoff == 0 or shentsize < 64 or shnum == 0 or shnum > 65535 or shstrndx >= shnum:
        return None
    fh.seek(shoff)
    table = fh.read(shentsize * shnum)
    if len(table) < shentsize * shnum:
        return None

    def sh(i: int) -> tuple[int, int, int, int]:
        name_off, stype = struct.unpack_from("<II", table, i * shentsize)
        off, size = struct.unpack_from("<QQ", table, i * shentsize + 0x18)
        return name_off, stype, off, size

    _, _, str_off, str_size = sh(shstrndx)
    fh.seek(str_off)
    strtab = fh.read(min(str_size, 1 << 20))
    want = name.encode()
    for i in range(shnum):
        name_off, stype, off, size = sh(i)
        if strtab[name_off:name_off + len(want) + 1] == want + b"\0" and stype != 8:  # 8 = SHT_NOBITS
            return off, size
    return None


def scan_fatbin(path: str, deadline: float) -> dict[str, Any] | None:
    """Targets in the `.hip_fatbin` section of one library; None when it has no such section (no HIP code)."""
    with open(path, "rb") as fh:
        sec = elf_section(fh, ".hip_fatbin")
        if sec is None:
            return None
        start, size = sec
        out: dict[str, Any] = {"bundles": 0, "compressed": None, "targets": [], "partial": False, "error": None}
        seen: dict[str, int] = {}
        pos, end, inflated = start, start + size, 0
        try:
            while pos < end:
                if time.monotonic() > deadline:
                    out["partial"] = True
                    break
                fh.seek(pos)
                head = fh.read(min(FIRST_READ, end - pos))
                found = [i for i in (head.find(MAGIC), head.find(CMAGIC)) if i >= 0]
                if not found:
                    if len(head) < FIRST_READ:
                        break  # padding to the end of the section
                    pos += len(head) - len(MAGIC)
                    continue
                i = min(found)
                if i:
                    pos += i
                    fh.seek(pos)
                    head = fh.read(min(FIRST_READ, end - pos))
                if head.startswith(MAGIC):
                    try:
                        entries, span = parse_bundle(head)
                    except BundleError:  # an entry table longer than the first read: once more with all of it
                        fh.seek(pos)
                        entries, span = parse_bundle(fh.read(min(HEADER_WINDOW, end - pos)))
                else:
                    version, method, total, _usize, hsize = parse_compressed_header(head)
                    out["compressed"] = method
                    if total is None:  # v1 has no size: the rest of the section cannot be walked
                        out["partial"] = True
                        end = pos
                    span = total or 0
                    if inflated >= MAX_COMPRESSED_READ:
                        out["bundles"] += 1
                        pos += max(span, len(CMAGIC))
                        continue
                    fh.seek(pos + hsize)
                    # zstd emits nothing before a whole block (<= 128 KiB of output) is in: read up to 512 KiB of it
                    payload = fh.read(min(PAYLOAD_READ, (total - hsize) if total else PAYLOAD_READ))
                    inner = inflate_prefix(method, payload)
                    inflated += 1
                    if inner is None:
                        out["error"] = f"{method}-compressed bundles; no zstd decoder here (install zstd)"
                        out["bundles"] += 1
                        pos += max(span, len(CMAGIC))
                        continue
                    entries, _ = parse_bundle(inner)
                out["bundles"] += 1
                for _off, _size, ident in entries:
                    t = target_id(ident) if "amdgcn" in ident else None
                    if t:
                        seen[t] = seen.get(t, 0) + 1
                pos += max(span, len(MAGIC))
        except BundleError as exc:
            out["error"] = f"at offset {pos}: {exc}"
        out["targets"] = sorted(seen)
        out["sampled"] = inflated >= MAX_COMPRESSED_READ  # compressed bundles beyond the first few were counted, not read
        return out


def _names_targets(names: list[str]) -> list[str]:
    return sorted({t for n in names if (t := target_id(n))})


def _miopen_targets(names: list[str], known: tuple[str, ...]) -> list[str]:
    """MIOpen db names are `<gfx><CU count in hex>.kdb` (gfx90a6e.kdb): the longest known gfx that prefixes the stem."""
    out = set()
    for n in names:
        stem = n.split(".", 1)[0].lower()
        best = max((g for g in known if stem.startswith(g)), key=len, default=None)
        if best:
            out.add(best)
    return sorted(out)


def _cache_path() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rocm-triton-doctor" / "codeobjects.json"


def _load_cache() -> dict[str, Any]:
    try:
        data = json.loads(_cache_path().read_text())
        return data["files"] if data.get("version") == CACHE_VERSION else {}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _save_cache(files: dict[str, Any]) -> None:
    p = _cache_path()
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"version": CACHE_VERSION, "files": files}))
        tmp.replace(p)
    except OSError:
        pass  # a read-only home only costs the next run its speed


def audit(roots: list[str], known_gfx: tuple[str, ...] = (), use_cache: bool = True) -> dict[str, Any]:
    """The snapshot's `codeobjects` section for the package directories `roots` (torch/, _rocm_sdk_*/)."""
    t0 = time.monotonic()
    deadline = t0 + TIME_BUDGET_S
    cache = _load_cache() if use_cache else {}
    fresh: dict[str, Any] = {}
    libs: list[dict[str, Any]] = []
    groups: dict[tuple[str, str], list[str]] = {}
    elf_seen = 0
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in ("__pycache__", "include", "testing")]
            rel_dir = os.path.relpath(dirpath, os.path.dirname(root))
            for name in filenames:
                full = os.path.join(dirpath, name)
                low = name.lower()
                if low.endswith(".kpack"):
                    groups.setdefault(("kpack", rel_dir), []).append(name)
                elif low.endswith(".kdb") or low.endswith(".kdb.bz2"):
                    groups.setdefault(("miopen", rel_dir), []).append(name)
                elif low.endswith(TENSILE_EXT) and "gfx" in low:
                    kind = "hipblaslt" if "hipblaslt" in rel_dir.lower() else "rocblas" if "rocblas" in rel_dir.lower() else "other"
                    groups.setdefault((kind, rel_dir), []).append(name)
                elif ".so" in low and not os.path.islink(full):
                    elf_seen += 1
                    try:
                        st = os.stat(full)
                    except OSError:
                        continue
                    key = f"{st.st_size}:{st.st_mtime_ns}"
                    hit = cache.get(full)
                    if hit and hit.get("key") == key:
                        res = hit.get("result")
                    else:
                        try:
                            res = scan_fatbin(full, deadline)
                        except OSError as exc:
                            res = {"bundles": 0, "targets": [], "error": str(exc), "partial": True}
                        if not (res and res.get("partial")):  # a partial read is redone next time, not cached
                            fresh[full] = {"key": key, "result": res}
                    if res is not None:
                        libs.append({"path": os.path.join(rel_dir, name), "abspath": full, "size": st.st_size, **res})
    if use_cache:
        _save_cache({**{k: v for k, v in cache.items() if os.path.exists(k)}, **fresh})
    tensile = [{"lib": kind, "dir": d, "files": len(ns), "targets": _names_targets(ns)}
               for (kind, d), ns in sorted(groups.items()) if kind in ("rocblas", "hipblaslt", "other")]
    miopen = [{"dir": d, "files": len(ns), "targets": _miopen_targets(ns, known_gfx)}
              for (kind, d), ns in sorted(groups.items()) if kind == "miopen"]
    kpack = [{"dir": d, "files": len(ns), "targets": _names_targets(ns), "names": sorted(ns)[:64]}
             for (kind, d), ns in sorted(groups.items()) if kind == "kpack"]
    return {"roots": roots, "shared_objects": elf_seen, "libraries": libs, "tensile": tensile, "miopen": miopen,
            "kpack": kpack, "elapsed_s": round(time.monotonic() - t0, 3)}


def stack_roots(python_section: Any) -> list[str]:
    """Package directories to audit, from the snapshot's `python` section (torch's and TheRock's rocm_sdk dists)."""
    if not isinstance(python_section, dict):
        return []
    dists = python_section.get("distributions") or {}
    roots: list[str] = []
    sites = {str(d.get("location")) for d in dists.values() if isinstance(d, dict) and d.get("location")}
    for site in sorted(sites):
        try:
            entries = os.listdir(site)
        except OSError:
            continue
        for e in sorted(entries):
            if e == "torch" or e.startswith(("_rocm_sdk", "rocm_sdk")):
                p = os.path.join(site, e)
                if os.path.isdir(p):
                    roots.append(p)
    return roots


def section(python_section: Any) -> dict[str, Any] | None:
    """The snapshot's `codeobjects` value: the audit of the target interpreter's torch / ROCm packages; None (probed
    absent) when it has none; {"error": …} when the audit itself failed (never an exception)."""
    try:
        roots = stack_roots(python_section)
        if not roots:
            return None
        from rocm_triton_doctor import knowledge

        return audit(roots, knowledge.all_gfx())
    except Exception as exc:  # noqa: BLE001 - a probe reports, never crashes the collection
        return {"error": f"{type(exc).__name__}: {exc}"}
