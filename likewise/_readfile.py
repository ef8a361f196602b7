"""Reading files that someone else may have written, in bounded time and memory.

A saved model, index, corpus or split is read from a folder that another tool, a hand edit or an
attacker may have changed. Every reader of such a folder goes through these helpers, so a lie in a file
gives a :class:`~likewise.errors.CorruptModelError` naming the file, never a traceback, a hang or an
allocation the size of the lie:

* :func:`open_regular` opens without blocking and refuses anything but a regular file (a FIFO in place
  of a manifest would otherwise block the reader forever);
* :func:`read_json` bounds the bytes it parses and the nesting depth (the C decoder recurses per level);
* :func:`read_npy` checks a ``.npy`` header against the file's size before allocating anything, so a
  header claiming 10^12 rows costs nothing;
* :func:`inside` keeps every name a manifest gives inside the manifest's folder (no ``../x.npy``, no
  absolute path, no symlink out);
* :func:`field` reads one typed field of a manifest, so a missing or mistyped key is a clear error
  rather than a ``KeyError`` or ``TypeError`` deep in a loader.
"""

from __future__ import annotations

import json
import math
import os
import stat
from pathlib import Path
from typing import IO, Any

import numpy as np

from .errors import CorruptModelError, shown

__all__ = [
    "MAX_JSON_DEPTH",
    "MAX_MANIFEST_BYTES",
    "field",
    "inside",
    "open_regular",
    "read_bytes",
    "read_json",
    "read_npy",
]

MAX_MANIFEST_BYTES = 64 * 2**20  # a manifest holds names, checksums, config and bounded metadata
#: Deepest nesting of arrays and objects a JSON file may have; likewise writes at most a few levels
#: (user ``meta`` included, in practice), and the C decoder recurses once per level.
MAX_JSON_DEPTH = 100
_MAX_NPY_HEADER = 10_000  # numpy's own default limit on the header's size
_O_READ = (
    os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
)
_KINDS = {
    stat.S_IFDIR: "a folder",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
}


def open_regular(path: str | os.PathLike, *, missing: str | None = None) -> IO[bytes]:
    """Open ``path`` for reading in binary mode, refusing anything but a regular file.

    The file is opened with ``O_NONBLOCK`` (opening a FIFO for reading would otherwise wait for a
    writer) and checked with ``fstat`` on the open descriptor (no race with a rename in between).

    Parameters
    ----------
    path : str or path-like
        The file.
    missing : str, optional
        The message when ``path`` does not exist (default: ``"PATH is missing"``).

    Returns
    -------
    file object
        Opened ``"rb"``; the caller closes it.

    Raises
    ------
    CorruptModelError
        ``path`` is missing, unreadable, or a folder, FIFO, socket or device.
    """
    p = Path(path)
    try:
        fd = os.open(p, _O_READ)
    except FileNotFoundError:
        raise CorruptModelError(missing or f"{str(p)!r} is missing") from None
    except IsADirectoryError:
        raise CorruptModelError(f"{str(p)!r} is a folder, expected a file") from None
    except OSError as e:
        raise CorruptModelError(f"{str(p)!r} cannot be read: {e.strerror or e}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
            raise CorruptModelError(f"{str(p)!r} is {kind}, expected a regular file")
        return open(fd, "rb")  # noqa: SIM115 - the caller closes it
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: str | os.PathLike, *, max_bytes: int, missing: str | None = None) -> bytes:
    """The whole of a regular file of at most ``max_bytes`` bytes (:func:`open_regular` checks it)."""
    p = Path(path)
    with open_regular(p, missing=missing) as f:
        size = os.fstat(f.fileno()).st_size
        if size > max_bytes:
            raise CorruptModelError(f"{str(p)!r} is {size} bytes, over the {max_bytes}-byte limit for it")
        try:
            data = f.read(size)  # exactly the size: read(n) may allocate n bytes up front
            grew = f.read(1)
        except OSError as e:
            raise CorruptModelError(f"{str(p)!r} cannot be read: {e.strerror or e}") from None
    if len(data) != size or grew:
        raise CorruptModelError(f"{str(p)!r} changed while it was read")
    return data


def _depth(value: Any) -> int:
    """Nesting depth of parsed JSON (a scalar is 0), walked without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            v = list(v.values())
        if isinstance(v, list):
            deepest = max(deepest, d + 1)
            stack.extend((x, d + 1) for x in v if isinstance(x, dict | list))
    return deepest


def read_json(
    path: str | os.PathLike,
    *,
    what: str,
    max_bytes: int = MAX_MANIFEST_BYTES,
    max_depth: int = MAX_JSON_DEPTH,
) -> Any:
    """Parse a JSON file of at most ``max_bytes`` bytes nested at most ``max_depth`` deep.

    Parameters
    ----------
    path : str or path-like
        The file (a regular file: see :func:`open_regular`).
    what : str
        What its folder should have been ("a saved likewise space", "an index folder"), for the message
        when the file is missing.
    max_bytes, max_depth : int
        Limits; a file over either is refused before or while parsing (in time linear in its size).

    Raises
    ------
    CorruptModelError
        The file is missing, not a regular file, too large, not UTF-8, not JSON or nested too deep; the
        message names the file.
    """
    p = Path(path)
    data = read_bytes(p, max_bytes=max_bytes, missing=f"{str(p.parent)!r} is not {what}: no {p.name}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CorruptModelError(f"{str(p)!r} is not UTF-8 text ({e.reason} at byte {e.start})") from None
    try:
        value = json.loads(text)
    except RecursionError:
        raise CorruptModelError(
            f"{str(p)!r} nests arrays or objects deeper than the {max_depth} levels allowed"
        ) from None
    except ValueError as e:  # JSONDecodeError, and integers of more than 4300 digits
        raise CorruptModelError(f"{str(p)!r} is not valid JSON: {e}") from None
    # only a file with enough brackets can be too deep: skip the walk for the usual flat manifest
    if text.count("[") + text.count("{") > max_depth and _depth(value) > max_depth:
        raise CorruptModelError(
            f"{str(p)!r} nests arrays or objects deeper than the {max_depth} levels allowed"
        )
    return value


def read_npy(path: str | os.PathLike, *, mmap: bool = False) -> np.ndarray:
    """Read a ``.npy`` file (never unpickling), checking its header against its size first.

    Parameters
    ----------
    path : str or path-like
        The file (a regular file: see :func:`open_regular`).
    mmap : bool
        Memory-map it read-only instead of reading it.

    Returns
    -------
    numpy.ndarray
        The array, or a read-only ``numpy.memmap``.

    Raises
    ------
    CorruptModelError
        Not a ``.npy`` file, an unreadable header, an object dtype, or a shape and dtype whose data size
        differs from the bytes that follow the header (a truncated file, or a header that lies); nothing
        of the header's claimed size is allocated before this check.
    """
    p = Path(path)
    where = f"{p.name} in {str(p.parent)!r} cannot be read as .npy"
    with open_regular(p) as f:
        try:
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(
                    f, max_header_size=_MAX_NPY_HEADER
                )
            elif version == (2, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(
                    f, max_header_size=_MAX_NPY_HEADER
                )
            else:
                raise ValueError(f"format version {version} is not 1.0 or 2.0")
        except Exception as e:  # numpy's header parser raises ValueError, SyntaxError,
            # tokenize.TokenError, ... on bytes it does not expect: each means the header is not valid
            raise CorruptModelError(f"{where}: the header is not valid ({type(e).__name__}: {e})") from None
        if dtype.hasobject:
            raise CorruptModelError(f"{where}: it holds Python objects ({dtype}), never unpickled")
        offset = f.tell()
        size = os.fstat(f.fileno()).st_size
        need = math.prod(shape) * dtype.itemsize  # Python ints: no overflow for a lying shape
        if size - offset != need:
            raise CorruptModelError(
                f"{where}: its header says {dtype.str} {tuple(shape)} ({need} bytes of "
                f"data), but "
                f"{size - offset} bytes follow the header (truncated, or the header is wrong)"
            )
        order = "F" if fortran else "C"
        try:
            if need == 0:
                return np.empty(shape, dtype=dtype, order=order)
            if mmap:
                return np.memmap(f, dtype=dtype, mode="r", offset=offset, shape=shape, order=order)
            return np.lib.format.read_array(_rewound(f), allow_pickle=False, max_header_size=_MAX_NPY_HEADER)
        except (ValueError, OSError, EOFError) as e:
            raise CorruptModelError(f"{where}: {e}") from None


def _rewound(f: IO[bytes]) -> IO[bytes]:
    f.seek(0)
    return f


def inside(folder: str | os.PathLike, name: Any, *, manifest: str | os.PathLike) -> Path:
    """The path of ``name``, a file that ``manifest`` lists, checked to lie inside ``folder``.

    Parameters
    ----------
    folder : str or path-like
        The folder the manifest describes.
    name : Any
        The relative file name as the manifest gives it.
    manifest : str or path-like
        The manifest, named in the message.

    Returns
    -------
    Path
        ``folder / name``.

    Raises
    ------
    CorruptModelError
        ``name`` is not a non-empty string, is absolute, has a ``..`` part, or resolves (through
        symlinks) to a place outside ``folder``.
    """
    base = Path(folder)
    bad = not isinstance(name, str) or name in ("", ".") or "\x00" in name
    if not bad:
        rel = Path(name)
        bad = rel.is_absolute() or bool(rel.drive) or ".." in rel.parts
    if not bad:
        try:
            bad = not (base / name).resolve().is_relative_to(base.resolve())
        except (OSError, RuntimeError):  # a symlink loop
            bad = True
    if bad:
        raise CorruptModelError(
            f"{str(manifest)!r} names the file {name!r}, which is not inside {str(base)!r}; "
            "a manifest may name only files in its own folder"
        )
    return base / name


def field(manifest: Any, name: str, kind: type | tuple[type, ...], path: str | os.PathLike) -> Any:
    """``manifest[name]``, checked to be of ``kind`` (a bool is never an int or a float).

    Raises
    ------
    CorruptModelError
        ``manifest`` is not a JSON object, lacks ``name``, or holds a value of another type; the message
        names the manifest file, the key and the value found.
    """
    if not isinstance(manifest, dict):
        raise CorruptModelError(f"{str(path)!r} holds a JSON {type(manifest).__name__}, expected an object")
    if name not in manifest:
        raise CorruptModelError(f"{str(path)!r} lacks the field {name!r}")
    value = manifest[name]
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _as_tuple(kind)):
        want = " or ".join(t.__name__ for t in _as_tuple(kind))
        raise CorruptModelError(
            f"{str(path)!r}: field {name!r} is {shown(value)}, expected {_JSON_NAMES.get(want, want)}"
        )
    return value


_JSON_NAMES = {"dict": "an object", "list": "an array", "str": "a string", "int": "an integer"}


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)
