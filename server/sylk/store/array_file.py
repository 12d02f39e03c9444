"""One file of named numpy arrays, written atomically and read memory-mapped.

Layout: ``SYLKARR1``, the length of a JSON header, the header (a format name and
version, caller's metadata, and per array its dtype, shape and offset), then the arrays,
each at an 8-byte boundary, and last the CRC-32 of everything before it. Reading checks
the magic, the header, the size and the checksum, and returns arrays backed by the map
(no copy). A file cut short, garbled or of another format raises ``ArrayFileError``:
the caller rebuilds what the file held, nothing is lost.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import struct
import zlib
from pathlib import Path
from typing import Any

import attrs
import numpy as np

MAGIC = b"SYLKARR1"
_LEN = struct.Struct("<Q")
_CRC = struct.Struct("<I")
_ALIGN = 8


class ArrayFileError(Exception):
    """The file is missing, cut short, garbled or of another format."""


@attrs.frozen(slots=True)
class ArrayFile:
    kind: str  # what the file holds, with its format version ("symbols/1")
    meta: dict[str, Any]
    arrays: dict[str, np.ndarray]


def _pad(n: int) -> int:
    return -n % _ALIGN


def write_array_file(path: Path, content: ArrayFile) -> int:
    """Write ``content`` to ``path`` atomically (a temporary file, fsync, rename). Returns
    the bytes written."""
    specs: dict[str, Any] = {}
    offset = 0
    arrays = {name: np.ascontiguousarray(a) for name, a in content.arrays.items()}
    for name, a in arrays.items():
        specs[name] = {"dtype": a.dtype.str, "shape": list(a.shape), "offset": offset}
        offset += a.nbytes + _pad(a.nbytes)
    header = json.dumps({"kind": content.kind, "meta": content.meta, "arrays": specs},
                        separators=(",", ":")).encode("utf-8")
    head = MAGIC + _LEN.pack(len(header)) + header
    head += b"\0" * _pad(len(head))
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    crc = zlib.crc32(head)
    try:
        with open(tmp, "wb") as f:
            f.write(head)
            for a in arrays.values():
                data = memoryview(a).cast("B") if a.nbytes else b""
                pad = b"\0" * _pad(a.nbytes)
                f.write(data)
                f.write(pad)
                crc = zlib.crc32(pad, zlib.crc32(data, crc))
            f.write(_CRC.pack(crc))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return len(head) + offset + _CRC.size


def read_array_file(path: Path, kind: str) -> ArrayFile:
    """The arrays of ``path``, which must hold ``kind``; raises ArrayFileError."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < len(MAGIC) + _LEN.size + _CRC.size:
                raise ArrayFileError(f"{path.name} is cut short ({size} bytes)")
            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise ArrayFileError(f"cannot read {path.name}: {exc.strerror or exc}") from exc
    if mm[:len(MAGIC)] != MAGIC:
        raise ArrayFileError(f"{path.name} is not a Sylk array file")
    (hlen,) = _LEN.unpack_from(mm, len(MAGIC))
    start = len(MAGIC) + _LEN.size
    if start + hlen + _CRC.size > size:
        raise ArrayFileError(f"{path.name} is cut short (header)")
    try:
        header = json.loads(bytes(mm[start:start + hlen]))
        specs = header["arrays"]
    except (ValueError, KeyError, TypeError) as exc:
        raise ArrayFileError(f"{path.name} has a garbled header") from exc
    if header.get("kind") != kind:
        raise ArrayFileError(f"{path.name} holds {header.get('kind')!r}, not {kind!r}")
    base = start + hlen
    base += _pad(base)
    body_end = size - _CRC.size
    (crc,) = _CRC.unpack_from(mm, body_end)
    if zlib.crc32(memoryview(mm)[:body_end]) != crc:
        raise ArrayFileError(f"{path.name} is damaged (checksum)")
    # the check read every page: drop them from this process's memory, so only what is
    # used comes back (from the page cache, on first touch)
    with contextlib.suppress(AttributeError, OSError):
        mm.madvise(mmap.MADV_DONTNEED)
    arrays: dict[str, np.ndarray] = {}
    try:
        for name, spec in specs.items():
            dtype = np.dtype(spec["dtype"])
            shape = tuple(int(n) for n in spec["shape"])
            count = int(np.prod(shape)) if shape else 1
            at = base + int(spec["offset"])
            if at + count * dtype.itemsize > body_end:
                raise ArrayFileError(f"{path.name} is cut short ({name})")
            arrays[name] = np.frombuffer(mm, dtype=dtype, count=count, offset=at).reshape(shape)
    except (ValueError, KeyError, TypeError) as exc:
        raise ArrayFileError(f"{path.name} has a garbled header ({exc})") from exc
    return ArrayFile(kind, header.get("meta") or {}, arrays)
