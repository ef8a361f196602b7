"""Memory-mapped arrays read in passes: give their pages back after each block.

:func:`release_pages` is shared by the corpus (checksums and id checks at open) and the numba trainer's
passes over the corpus, so a pass over a corpus larger than memory keeps one block resident.
"""

from __future__ import annotations

import mmap

import numpy as np

__all__ = ["release_pages"]


def _file_mapping(arr: np.ndarray) -> mmap.mmap | None:
    """The read-only file mapping ``arr`` is a view of, or None (an array in memory, a writeable map)."""
    if arr.flags.writeable:
        return None  # dropping pages of a private writeable map would lose its changes
    base = arr.base
    while base is not None and not isinstance(base, mmap.mmap):
        base = getattr(base, "base", None)
    return base


def release_pages(arr: np.ndarray, start: int, stop: int) -> None:
    """Let the kernel take back the resident pages of ``arr[start:stop]`` when ``arr`` is memory-mapped.

    A corpus is read through a read-only memory map, so every page read stays in the process's resident
    memory until it is unmapped; a pass over a corpus larger than memory would push out everything else.
    Released pages are read again from the page cache (or the disk) on the next access, so training
    calls this after each block: its resident share of the corpus is one block, whatever the corpus size.
    Only the pages wholly inside the range are released. No effect on an array held in memory, on a
    writeable map, or where ``madvise`` is not available.

    Parameters
    ----------
    arr : ndarray, 1-D and C-contiguous
        Typically ``Corpus.ids`` or ``Corpus.offsets``.
    start, stop : int
        Element range; clipped to the array.
    """
    mapping = _file_mapping(arr) if arr.ndim == 1 and arr.flags.c_contiguous else None
    if mapping is None or not hasattr(mapping, "madvise"):
        return
    start, stop = max(0, int(start)), min(len(arr), int(stop))
    if stop <= start:
        return
    origin = np.frombuffer(mapping, dtype=np.uint8).__array_interface__["data"][0]
    first = arr.__array_interface__["data"][0] - origin + start * arr.itemsize
    last = first + (stop - start) * arr.itemsize
    page = mmap.PAGESIZE
    lo, hi = -(-first // page) * page, last // page * page
    if hi > lo:
        mapping.madvise(mmap.MADV_DONTNEED, lo, hi - lo)
