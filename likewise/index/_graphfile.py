"""An hnswlib graph file, checked before hnswlib reads it.

hnswlib trusts its file: a neighbour id, a list length or an entry point out of range makes a search read
out of bounds and kill the process. The checksum in the index manifest catches damage, not a file that
another tool (or a hand edit) wrote with a matching checksum, so :func:`check_graph` reads the layout of
hnswlib 0.8's ``saveIndex`` and refuses anything a search could not follow:

* a header of 96 bytes: offsetLevel0, max_elements, cur_element_count, size_data_per_element,
  label_offset, offsetData (8 bytes each), maxlevel (int32), enterpoint (uint32), maxM, maxM0, M
  (8 bytes each), mult (float64), ef_construction (8 bytes);
* then cur_element_count records of size_data_per_element bytes: a uint16 link count, a flags byte, a
  pad byte, maxM0 uint32 neighbour ids, the float32 vector, a uint64 label;
* then, per element, a uint32 byte length and that many bytes of upper-level lists, each a uint16
  count, two bytes, and maxM uint32 ids.

The file is memory-mapped and checked in blocks, so the check costs bounded memory.
"""

from __future__ import annotations

import mmap
import struct
from pathlib import Path

import numpy as np

from ..errors import CorruptModelError

__all__ = ["check_graph"]

_HEADER = struct.Struct("<QQQQQQiIQQQdQ")  # 96 bytes
_BLOCK = 1 << 16  # records checked at a time


def check_graph(path: Path, size: int, dim: int) -> None:
    """Raise :class:`CorruptModelError` unless ``path`` is an hnswlib graph of ``size`` vectors of ``dim``.

    Every neighbour id, list length, label and the entry point is checked to lie in range, and the file's
    length to be exactly what its header implies.
    """
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        problem = _problem(mm, size, dim)
    if problem:
        raise CorruptModelError(
            f"the index graph {str(path)!r} is not a valid hnswlib graph of {size} vectors of {dim} dims: "
            f"{problem} (rebuild it with `likewise index MODEL --overwrite`)"
        )


def _problem(mm: mmap.mmap, size: int, dim: int) -> str | None:
    if len(mm) < _HEADER.size:
        return f"{len(mm)} bytes, shorter than the header"
    off0, max_el, count, per_el, label_at, data_at, top, entry, max_m, max_m0, m, _, _ = _HEADER.unpack_from(
        mm
    )
    record = 4 + 4 * max_m0 + 4 * dim + 8
    if (off0, data_at, label_at, per_el) != (0, 4 + 4 * max_m0, 4 + 4 * max_m0 + 4 * dim, record):
        return "its record layout does not match the vectors' dimension"
    if count != size or max_el < count:
        return f"it holds {count} elements (room for {max_el})"
    if not (1 <= max_m <= max_m0 <= 1 << 16 and m >= 1) or not 0 <= top < 64 or (count and entry >= count):
        return f"its header is out of range (M {m}, maxM {max_m}, maxM0 {max_m0}, top {top}, entry {entry})"
    rec = np.dtype(
        [("n", "<u2"), ("flags", "u1"), ("pad", "u1"), ("links", "<u4", (max_m0,)),
         ("vector", "<f4", (dim,)), ("label", "<u8")]
    )  # fmt: skip
    if _HEADER.size + count * per_el > len(mm):
        return "the file ends inside the level-0 records"
    level0 = np.frombuffer(mm, dtype=rec, count=count, offset=_HEADER.size)
    for s in range(0, count, _BLOCK):
        block = level0[s : s + _BLOCK]
        bad = _bad_lists(block["n"], block["links"], max_m0, count)
        if bad is not None:
            return f"element {s + bad} has a level-0 neighbour list out of range"
        if block["flags"].any() or (block["label"] >= size).any():
            return "an element is marked deleted or has a label out of range"
        if not np.isfinite(block["vector"]).all():
            return "a vector holds NaN or infinity"
    return _upper_levels(mm, _HEADER.size + count * per_el, count, max_m, top, entry)


def _bad_lists(n: np.ndarray, links: np.ndarray, cap: int, count: int) -> int | None:
    """The first row whose count is over ``cap`` or whose first ``n`` ids are not below ``count``."""
    used = np.arange(cap) < n[:, None].astype(np.int64)
    bad = (n > cap) | ((links >= count) & used).any(axis=1)
    return int(np.flatnonzero(bad)[0]) if bad.any() else None


def _upper_levels(mm: mmap.mmap, pos: int, count: int, max_m: int, top: int, entry: int) -> str | None:
    per_level = 4 + 4 * max_m
    rec = np.dtype([("n", "<u2"), ("pad", "u2"), ("links", "<u4", (max_m,))])
    for i in range(count):
        if pos + 4 > len(mm):
            return "the file ends inside the upper-level lists"
        (nbytes,) = struct.unpack_from("<I", mm, pos)
        pos += 4
        levels, rest = divmod(nbytes, per_level)
        if rest or levels > top or pos + nbytes > len(mm) or (i == entry and levels != top):
            return f"element {i} has upper-level lists of {nbytes} bytes (top level {top})"
        if levels:
            lists = np.frombuffer(mm, dtype=rec, count=levels, offset=pos)
            bad = _bad_lists(lists["n"], lists["links"], max_m, count)
            del lists
            if bad is not None:
                return f"element {i} has a neighbour list out of range on level {bad + 1}"
        pos += nbytes
    if pos != len(mm):
        return f"{len(mm) - pos} bytes follow the last list"
    return None
