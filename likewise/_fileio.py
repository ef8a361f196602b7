"""The one way likewise writes files and folders: into a temporary beside the target, then renamed.

Every writer in the package (saved spaces, indexes, corpora, splits, projector exports, data sets,
audiences, next-token models) goes through :func:`atomic_folder` or :func:`atomic_file`, so a crash or a
``kill -9`` never leaves a half-written file under the target's name, and a fix here reaches them all.
Manifests are read with :func:`read_json`, which bounds the bytes it will parse.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np

from .errors import CorruptModelError, InputError

__all__ = [
    "MANIFEST",
    "MAX_MANIFEST_BYTES",
    "atomic_file",
    "atomic_folder",
    "check_target",
    "file_entry",
    "file_sha256",
    "fsync_dir",
    "has_format",
    "publish",
    "read_json",
    "write_npy",
    "write_text",
]

MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 64 * 2**20  # a manifest holds names, checksums, config and bounded metadata
_CHUNK = 1 << 20  # bytes per read when hashing


def file_sha256(path: str | os.PathLike) -> str:
    """Hex sha256 of a file, read in 1 MiB chunks (constant memory for any file size)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def file_entry(path: Path) -> dict[str, Any]:
    """``{"sha256", "bytes"}`` of a written file, as manifests list them."""
    return {"sha256": file_sha256(path), "bytes": path.stat().st_size}


def fsync_dir(path: Path) -> None:
    """Flush a directory entry (renames) to disk; a no-op where directories cannot be opened (Windows)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_npy(path: Path, arr: np.ndarray) -> None:
    """Write one array as ``.npy`` (never pickled) and fsync it."""
    with open(path, "wb") as f:
        np.save(f, arr, allow_pickle=False)
        f.flush()
        os.fsync(f.fileno())


def write_text(path: Path, text: str) -> None:
    """Write UTF-8 text with ``\\n`` line ends and fsync it."""
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def _temp_name(target: Path) -> Path:
    return target.parent / f".{target.name}.tmp-{uuid.uuid4().hex[:12]}"


def publish(tmp: Path, target: Path, *, replace: bool = True) -> None:
    """Move the finished folder ``tmp`` to ``target`` (same file system).

    With ``replace`` the old folder is renamed aside, the new one in, then the old one deleted: at every
    instant ``target`` holds either the complete old folder or the complete new one (or, briefly,
    nothing); if the second rename fails the old folder is put back. A ``target`` that is a symlink is
    replaced itself, and what it pointed at is kept. Without ``replace`` a ``target`` that exists (or
    appears meanwhile, written by a concurrent writer of the same content) is kept and ``tmp`` removed.
    """
    parent = target.parent
    if target.exists() or target.is_symlink():
        if not replace:
            shutil.rmtree(tmp, ignore_errors=True)
            return
        aside = parent / f".{target.name}.old-{uuid.uuid4().hex[:8]}"
        os.rename(target, aside)
        try:
            os.rename(tmp, target)
        except BaseException:
            os.rename(aside, target)
            raise
        fsync_dir(parent)
        if aside.is_symlink():
            aside.unlink()
        else:
            shutil.rmtree(aside, ignore_errors=True)
        return
    try:
        os.rename(tmp, target)
    except OSError:
        if replace or not target.exists():
            raise
        shutil.rmtree(tmp, ignore_errors=True)  # another writer won the race
        return
    fsync_dir(parent)


@contextlib.contextmanager
def atomic_folder(target: str | os.PathLike, *, replace: bool = True) -> Iterator[Path]:
    """Yield an empty temporary folder beside ``target``; publish it there when the block ends cleanly.

    The folder is made with ``os.mkdir`` (not ``tempfile.mkdtemp``, whose folders are 0700) so the
    result gets the umask's mode. On any exception, ``KeyboardInterrupt`` included, the temporary is
    removed and ``target`` is left as it was. ``replace`` is passed to :func:`publish`.
    """
    final = Path(target)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temp_name(final)
    tmp.mkdir()
    try:
        yield tmp
        fsync_dir(tmp)
        publish(tmp, final, replace=replace)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


@contextlib.contextmanager
def atomic_file(target: str | os.PathLike, mode: str = "w") -> Iterator[IO[Any]]:
    """Yield a file opened beside ``target`` (text: UTF-8, ``\\n``); it replaces ``target`` when done.

    ``mode`` is ``"w"`` (text) or ``"wb"``. The file is flushed and fsynced before the rename; on an
    exception it is removed and ``target`` is untouched.
    """
    if mode not in ("w", "wb"):
        raise InputError(f"mode == {mode!r}, must be 'w' or 'wb'")
    final = Path(target)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temp_name(final)
    try:
        kwargs: dict[str, Any] = {} if mode == "wb" else {"encoding": "utf-8", "newline": "\n"}
        with open(tmp, mode, **kwargs) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, final)
        fsync_dir(final.parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def read_json(path: Path, *, what: str, max_bytes: int = MAX_MANIFEST_BYTES) -> Any:
    """Parse a JSON file of at most ``max_bytes``; :class:`CorruptModelError` names the file otherwise.

    ``what`` says what the folder should have been ("a saved likewise space", "an index folder") in the
    message for a missing file.
    """
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise CorruptModelError(f"{str(path.parent)!r} is not {what}: no {path.name}") from None
    except OSError as e:
        raise CorruptModelError(f"{str(path)!r} cannot be read: {e}") from None
    if size > max_bytes:
        raise CorruptModelError(
            f"{str(path)!r} is {size} bytes, over the {max_bytes}-byte limit for a {path.name}"
        )
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise CorruptModelError(f"{str(path)!r} is not valid JSON: {e}") from None
    except OSError as e:
        raise CorruptModelError(f"{str(path)!r} cannot be read: {e}") from None


def has_format(path: Path, fmt: str, manifest: str = MANIFEST) -> bool:
    """True if ``path`` is a folder whose manifest names format ``fmt`` (any version)."""
    try:
        found = read_json(path / manifest, what="a likewise folder")
    except CorruptModelError:
        return False
    return isinstance(found, dict) and found.get("format") == fmt


def check_target(
    path: str | os.PathLike,
    *,
    overwrite: bool = False,
    fmt: str = "likewise.embeddings",
    what: str = "saved likewise space",
    manifest: str = MANIFEST,
) -> Path:
    """Raise now if a save to ``path`` would be refused (so a long run is not wasted).

    Parameters
    ----------
    path : str or path-like
        Where a folder is about to be written.
    overwrite : bool
        Whether an existing folder of format ``fmt`` may be replaced.
    fmt, what : str
        The manifest format a folder must have to be replaced, and its name for messages.
    manifest : str
        The manifest's file name in such a folder.

    Returns
    -------
    Path
        ``path`` as a :class:`~pathlib.Path`.

    Raises
    ------
    InputError
        ``path`` exists and ``overwrite`` is False, or it exists and is not a folder of format ``fmt``
        (which is never replaced).
    """
    target = Path(path)
    if target.exists() or target.is_symlink():
        if not overwrite:
            raise InputError(
                f"{str(target)!r} already exists; pass overwrite=True (--overwrite) to replace it"
            )
        if not target.is_dir() or not has_format(target, fmt, manifest):
            raise InputError(
                f"refusing to overwrite {str(target)!r}: it is not a {what} "
                f"(no {manifest} with format {fmt!r})"
            )
    return target
