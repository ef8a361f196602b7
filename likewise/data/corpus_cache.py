"""Where compiled corpora are cached, and the bound on the cache's size.

:func:`~likewise.data.corpus.build_corpus` keeps each compiled input in ``ROOT/KEY`` (``KEY``: 32 hex
characters of :func:`~likewise.data.corpus.cache_key`). Without a bound the cache would grow with every
new input, so every build or use of an entry marks it used (its folder's modification time) and then
evicts the least recently used entries until the cache holds at most ``LIKEWISE_CACHE_MAX`` bytes; the
entry in use is never evicted, nor one used in the last minute (another process may be about to open
it). An entry is removed by renaming it aside first (:func:`likewise._fileio.discard`), so another
process opening it sees it whole or not at all, and rebuilds it; one that has it open already keeps
reading (its files stay while open, on POSIX).
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from .._fileio import discard
from ..errors import InputError

__all__ = [
    "CACHE_MAX_DEFAULT",
    "CACHE_MAX_VARIABLE",
    "GRACE_SECONDS",
    "cache_max",
    "cache_root",
    "evict",
    "parse_size",
    "touch",
]

#: The environment variable bounding the cache, in bytes (``500M``, ``2G``; 0 keeps only the entry in use).
CACHE_MAX_VARIABLE = "LIKEWISE_CACHE_MAX"
#: The bound without it: 2 GiB.
CACHE_MAX_DEFAULT = 2 * 2**30
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(?:([kmgt])(?:i?b)?|b)?\s*", re.IGNORECASE)
_UNIT = {"k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
_ENTRY = re.compile(r"[0-9a-f]{32}")  # a cache key's first 32 characters: nothing else is ever removed
#: An entry used this recently is not evicted: another process may be between building it and opening it.
GRACE_SECONDS = 60.0


def cache_root(cache_dir: str | os.PathLike | None) -> Path:
    """``cache_dir``, else ``$LIKEWISE_CACHE``, else ``~/.cache/likewise/corpora``."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    env = os.environ.get("LIKEWISE_CACHE")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "likewise" / "corpora"


def parse_size(text: str, name: str = CACHE_MAX_VARIABLE) -> int:
    """Bytes in ``"2147483648"``, ``"500M"``, ``"2G"``, ``"1.5GiB"`` (K, M, G, T are powers of 1024).

    Raises
    ------
    InputError
        Naming ``name`` and the value, with the forms accepted.
    """
    m = _SIZE.fullmatch(text)
    if m is None:
        raise InputError(
            f"{name} == {text!r} is not a size: give bytes, or a number with K, M, G or T "
            "(powers of 1024, e.g. 500M, 2G); 0 keeps no corpus but the one in use"
        )
    return int(float(m[1]) * _UNIT.get((m[2] or "").lower(), 1))


def cache_max() -> int:
    """The cache's bound in bytes: ``$LIKEWISE_CACHE_MAX`` (:func:`parse_size`), else 2 GiB."""
    value = os.environ.get(CACHE_MAX_VARIABLE)
    return CACHE_MAX_DEFAULT if value is None or not value.strip() else parse_size(value)


def touch(entry: Path) -> None:
    """Mark ``entry`` used now (its folder's modification time), so it is the last to be evicted."""
    try:
        os.utime(entry)
    except OSError:  # a read-only cache: nothing is evicted from it either
        pass


def _size(entry: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(entry):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:  # removed meanwhile
                pass
    return total


def evict(root: Path, keep: Path, max_bytes: int) -> list[Path]:
    """Remove the least recently used entries of the cache ``root`` until it holds at most ``max_bytes``.

    Parameters
    ----------
    root : Path
        The cache folder; only its entries (folders named by a cache key) are counted and removed.
    keep : Path
        The entry in use: counted, never removed (so the cache may stay over ``max_bytes`` by it); nor
        is one used in the last :data:`GRACE_SECONDS` (another process's, about to be opened).
    max_bytes : int
        The bound, from :func:`cache_max`.

    Returns
    -------
    list of Path
        The entries removed, oldest first.
    """
    entries = []
    try:
        with os.scandir(root) as it:
            for e in it:
                if _ENTRY.fullmatch(e.name) and e.is_dir(follow_symlinks=False):
                    try:
                        entries.append((e.stat(follow_symlinks=False).st_mtime, Path(e.path)))
                    except OSError:
                        continue
    except OSError:
        return []
    sizes = {path: _size(path) for _, path in entries}
    total = sum(sizes.values())
    removed = []
    recent = time.time() - GRACE_SECONDS
    for used, path in sorted(entries):
        if total <= max_bytes:
            break
        if path.name == keep.name or used > recent:
            continue
        if discard(path):
            removed.append(path)
        total -= sizes[path]  # gone, or going: another process is removing it
    return removed
