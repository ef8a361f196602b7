"""The one way likewise writes files and folders: into a temporary beside the target, then renamed.

Every writer in the package (saved spaces, indexes, corpora, splits, projector exports, data sets,
audiences, next-token models) goes through :func:`atomic_folder` or :func:`atomic_file`, so a crash or a
``kill -9`` never leaves a half-written file under the target's name, and a fix here reaches them all.
Files written by others are read through :mod:`likewise._readfile` (bounded, never blocking); where an
output may go (never inside a saved folder, never over what it should not replace) is
:mod:`likewise._targets`.

Temporaries are named ``.NAME.tmp-PID.HOST.RANDOM`` (and a folder being replaced is set aside as
``.NAME.old-PID.HOST.RANDOM``): the random part is unguessable, and files are created with ``O_EXCL``
(folders with ``mkdir``), which never follows a symlink planted under the name. :func:`tidy`, run before
every write and on every load, puts an aside back when a writer was killed between the two renames of
:func:`publish` (the target is missing) and removes the temporaries and asides of writers that are gone.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import math
import os
import re
import secrets
import shutil
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, TypeVar

import numpy as np

from .errors import InputError, LikewiseError, WriteError

__all__ = [
    "MANIFEST",
    "atomic_file",
    "atomic_folder",
    "discard",
    "file_entry",
    "file_sha256",
    "finite_json",
    "fsync_dir",
    "fsync_file",
    "fsync_tree",
    "publish",
    "recover",
    "tidy",
    "write_error",
    "write_npy",
    "write_text",
]

_T = TypeVar("_T")
MANIFEST = "manifest.json"
_CHUNK = 1 << 20  # bytes per read when hashing
#: A temporary or aside whose writer cannot be checked (another host, Windows, an older likewise) is
#: removed once nothing in it has changed for this long.
STALE_SECONDS = 3600.0
_TRIES = 100  # fresh random names tried before giving up on creating a temporary
# which machine wrote a temporary: a process id means something only on the host that issued it
_HOST = hashlib.sha256(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:6]
_NEW_TAG = re.compile(r"(?P<pid>[0-9]+)\.(?P<host>[0-9a-f]{6})\.[0-9a-f]{12}")
_OLD_TAG = {"tmp": re.compile(r"[0-9a-f]{12}"), "old": re.compile(r"[0-9a-f]{8}")}  # before this scheme
_O_EXCL_FLAGS = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


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


def fsync_file(path: Path) -> None:
    """Flush a file that another library wrote (an hnswlib graph) to disk."""
    # Windows commits a file only through a descriptor that may write
    fd = os.open(path, (os.O_RDWR if os.name == "nt" else os.O_RDONLY) | getattr(os, "O_BINARY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_tree(folder: Path) -> None:
    """Flush every file and folder under ``folder`` (itself included) to disk, symlinks not followed.

    :func:`atomic_folder` calls it before publishing, so a file written into the temporary by any means
    (``np.save``, hnswlib, pyarrow) is on disk before the folder appears under its name.
    """
    for root, dirs, files in os.walk(folder):
        for name in files:
            path = Path(root) / name
            if not path.is_symlink():
                fsync_file(path)
        for name in dirs:
            fsync_dir(Path(root) / name)
    fsync_dir(folder)


# what the operating system says, and what the user can do about it
_FULL = "free space on that file system (or raise its quota), or write elsewhere"
_FIXES = {
    errno.ENOSPC: _FULL,
    getattr(errno, "EDQUOT", errno.ENOSPC): _FULL,
    errno.EFBIG: "the file is larger than that file system allows: write elsewhere",
    errno.EROFS: "the file system is read-only: write elsewhere",
    errno.EACCES: "allow writing there (the folder's permissions), or write elsewhere",
    errno.EPERM: "allow writing there (the folder's permissions), or write elsewhere",
}
#: Errors of the file system, not of the path: wherever in a write they arise, the output failed.
_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EFBIG, errno.EROFS, getattr(errno, "EDQUOT", errno.ENOSPC)})
_SHORT_WRITE = re.compile(r"(\d+) requested and (\d+) written")  # numpy's tofile on a full disk


def write_error(target: str | os.PathLike, e: OSError, inside: str | None = None) -> WriteError:
    """The one-line error for an ``OSError`` met while writing ``target``: the path, the operating
    system's reason and what to do. ``inside`` names the file of a folder that was being written.

    The caller has removed (or never published) what it wrote: the message says nothing was replaced.
    """
    code = e.errno
    said = " ".join(map(str, e.args)) if code is None else str(e.strerror)  # str(e) would add the path
    short = _SHORT_WRITE.search(said)
    if code is None and short:
        code = errno.ENOSPC
        reason = f"a short write ({short[1]} bytes requested, {short[2]} written): the disk is probably full"
    elif e.errno is not None:
        reason = f"{os.strerror(e.errno).lower()} [Errno {e.errno}]"
    else:
        reason = said or type(e).__name__
    fix = _FIXES.get(code, "write elsewhere") if code is not None else "write elsewhere"
    where = f" (writing {inside})" if inside else ""
    err = WriteError(
        f"cannot write {str(target)!r}{where}: {reason}; nothing was replaced there and the partial "
        f"copy was removed: {fix}"
    )
    err.errno = code
    return err


def _write_failure(e: BaseException, tmp: Path, final: Path, *, ours: bool) -> WriteError | None:
    """The :class:`WriteError` for ``e``, raised while the temporary ``tmp`` of ``final`` was filled or
    published, or None when ``e`` is no failure to write. ``ours``: raised by the flush or rename after
    the caller's block, so any ``OSError`` is one. In the block only a full or read-only file system, a
    short write or an error on a path under ``tmp`` is: a missing input the block was reading is not."""
    if not isinstance(e, OSError) or isinstance(e, LikewiseError):
        return None
    name = e.filename if isinstance(e.filename, str | os.PathLike) else None
    inside = None
    if name is not None and tmp in Path(name).parents:
        inside = Path(name).relative_to(tmp).as_posix()
    if (
        ours
        or e.errno in _WRITE_ERRNOS
        or (e.errno is None and _SHORT_WRITE.search(" ".join(map(str, e.args))))
        or (name is not None and (Path(name) == tmp or inside is not None))
    ):
        return write_error(final, e, inside)
    return None


@contextlib.contextmanager
def _naming(path: Path) -> Iterator[None]:
    """Give an ``OSError`` without a file name (numpy's and a full disk's have none) ``path``, so the
    :class:`WriteError` of the folder being written says which file failed."""
    try:
        yield
    except OSError as e:
        if e.filename is None and not isinstance(e, LikewiseError):
            e.filename = str(path)
        raise


def write_npy(path: Path, arr: np.ndarray) -> None:
    """Write one array as ``.npy`` (never pickled) and fsync it; an ``OSError`` names ``path``."""
    with _naming(path), open(path, "wb") as f:
        np.save(f, arr, allow_pickle=False)
        f.flush()
        os.fsync(f.fileno())


def write_text(path: Path, text: str) -> None:
    """Write UTF-8 text with ``\\n`` line ends and fsync it; an ``OSError`` names ``path``."""
    with _naming(path), open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def _non_finite(value: Any, at: str) -> tuple[str, float] | None:
    """The JSON Pointer of the first NaN or infinity in ``value`` (dicts, lists, numbers), and it."""
    if isinstance(value, float | np.floating) and not math.isfinite(value):
        return at or "/", float(value)
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = _non_finite(item, f"{at}/{str(key).replace('~', '~0').replace('/', '~1')}")
        if found is not None:
            return found
    return None


def finite_json(value: Any, what: str, **dumps: Any) -> str:
    """``json.dumps(value, **dumps)``, refusing NaN and infinities: JSON has neither, and a strict reader
    (``likewise info``, any other language) fails on the ``NaN`` Python would write.

    Call it before anything is replaced (inside :func:`atomic_folder`, or before it): the target is then
    left as it was. ``what`` names the file in the message.

    Raises
    ------
    InputError
        A non-finite number, named by its key (a JSON Pointer such as ``/meta/itemitem/validation_mrr/1``).
    """
    bad = _non_finite(value, "")
    if bad is not None:
        key, number = bad
        raise InputError(
            f"{what} would hold {number!r} at {key}: JSON has no NaN or infinity, so nothing was written "
            "(a finite number or null is needed there)"
        )
    return json.dumps(value, allow_nan=False, **dumps)


def _temp_name(target: Path, kind: str = "tmp") -> Path:
    """A fresh candidate name beside ``target``; the caller creates it exclusively (it may exist)."""
    return target.parent / f".{target.name}.{kind}-{os.getpid()}.{_HOST}.{secrets.token_hex(6)}"


def _make_temp_folder(target: Path) -> Path:
    """Create a new empty folder beside ``target`` (``mkdir`` fails on any existing name, symlinks too)."""
    for _ in range(_TRIES):
        tmp = _temp_name(target)
        try:
            tmp.mkdir()
        except FileExistsError:
            continue
        return tmp
    raise FileExistsError(f"could not create a temporary folder beside {str(target)!r}")


def _make_temp_file(target: Path) -> tuple[Path, int]:
    """Create a new empty file beside ``target`` with ``O_EXCL``; returns its path and descriptor.

    ``O_EXCL`` with ``O_CREAT`` fails when the name exists, a symlink included, so a link planted by
    another user is never followed. The mode is ``0o666`` less the umask, as ``open`` would give.
    """
    for _ in range(_TRIES):
        tmp = _temp_name(target)
        try:
            return tmp, os.open(tmp, _O_EXCL_FLAGS, 0o666)
        except FileExistsError:
            continue
    raise FileExistsError(f"could not create a temporary file beside {str(target)!r}")


def _aside_name(target: Path) -> Path:
    for _ in range(_TRIES):
        aside = _temp_name(target, "old")
        if not os.path.lexists(aside):
            return aside
    raise FileExistsError(f"could not choose a free name to set {str(target)!r} aside")


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists (POSIX; not called on Windows)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it exists, owned by someone else
        return True
    return True


def _last_change(path: Path) -> float:
    """The newest mtime of ``path`` and the entries directly inside it (a long write keeps it fresh)."""
    newest = path.lstat().st_mtime
    if path.is_dir() and not path.is_symlink():
        with os.scandir(path) as it:
            for entry in it:
                with contextlib.suppress(OSError):
                    newest = max(newest, entry.stat(follow_symlinks=False).st_mtime)
    return newest


def _litter(target: Path) -> list[tuple[Path, str, bool]]:
    """The temporaries (``"tmp"``) and asides (``"old"``) of ``target``, each with whether it is stale.

    Stale: written on this host by a process that is gone, or (when that cannot be told) unchanged for
    :data:`STALE_SECONDS`. A live writer's temporary is never stale.
    """
    prefix = f".{target.name}."
    found = []
    try:
        with os.scandir(target.parent) as it:
            names = [e.name for e in it if e.name.startswith(prefix)]
    except OSError:
        return []
    now = time.time()
    for name in names:
        kind, _, tag = name[len(prefix) :].partition("-")
        if kind not in _OLD_TAG:
            continue
        path = target.parent / name
        new = _NEW_TAG.fullmatch(tag)
        try:
            if new and new["host"] == _HOST and os.name != "nt":
                stale = not _pid_alive(int(new["pid"]))
            elif new or _OLD_TAG[kind].fullmatch(tag):
                stale = now - _last_change(path) > STALE_SECONDS
            else:
                continue
        except OSError:  # vanished meanwhile (its writer finished)
            continue
        found.append((path, kind, stale))
    return found


def _remove(path: Path) -> None:
    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
    else:
        shutil.rmtree(path, ignore_errors=True)


def recover(target: str | os.PathLike) -> bool:
    """Put ``target`` back from its aside when a writer was killed between the two renames of a publish.

    Parameters
    ----------
    target : str or path-like
        A file or folder written through :func:`publish`.

    Returns
    -------
    bool
        True when ``target`` was missing and exactly one aside of a writer that is gone existed (the
        complete previous ``target``: it was set aside by one rename) and was renamed back.
    """
    final = Path(target)
    if os.path.lexists(final):
        return False
    asides = [path for path, kind, stale in _litter(final) if kind == "old" and stale]
    if len(asides) != 1:
        return False  # none, or ambiguous: leave them for a person to look at
    try:
        os.rename(asides[0], final)
    except OSError:
        return False  # another process recovered it first, or the folder is read-only
    fsync_dir(final.parent)
    return True


def discard(folder: str | os.PathLike) -> bool:
    """Remove ``folder`` as a whole: renamed to a temporary name first (one atomic step, so a reader
    finds it whole or not at all), then deleted; if this process dies meanwhile, :func:`tidy` removes
    the rest as a dead writer's temporary. Returns False when it was already gone (or cannot be moved)."""
    path = Path(folder)
    moved = _temp_name(path)
    try:
        os.rename(path, moved)
    except OSError:
        return False
    shutil.rmtree(moved, ignore_errors=True)
    return True


def tidy(target: str | os.PathLike) -> None:
    """Recover ``target`` (:func:`recover`), then remove the stale temporaries and asides beside it.

    Run before every write and on every load. While ``target`` is missing its asides are kept (an
    ambiguous recovery is left to a person). Errors (a read-only folder) are ignored: tidying is best
    effort and never stops a read.
    """
    final = Path(target)
    try:
        recover(final)
        present = os.path.lexists(final)
        for path, kind, stale in _litter(final):
            if stale and (kind == "tmp" or present):
                _remove(path)
    except OSError:
        pass


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
        aside = _aside_name(target)
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


def _start(target: str | os.PathLike, make: Callable[[Path], _T]) -> tuple[Path, _T]:
    """``target`` as a Path, its parent folder made, litter tidied, the temporary created by ``make``; a
    failure to create either (a full disk, no permission) is a :class:`WriteError` naming ``target``."""
    if not os.fspath(target).strip():  # Path("") is the current folder: never replace that
        raise InputError("the output path is empty; give the name of a file or folder to write")
    final = Path(target)
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        tidy(final)
        return final, make(final)
    except OSError as e:
        if isinstance(e, LikewiseError):
            raise
        raise write_error(final, e) from None


@contextlib.contextmanager
def atomic_folder(target: str | os.PathLike, *, replace: bool = True) -> Iterator[Path]:
    """Yield an empty temporary folder beside ``target``; publish it there when the block ends cleanly.

    The folder is made with ``os.mkdir`` under a fresh random name (as ``tempfile.mkdtemp`` does, but
    without its 0700 mode, so the result gets the umask's mode); ``mkdir`` never follows a symlink.
    Stale temporaries of ``target`` are removed first (:func:`tidy`); every file in the folder is
    fsynced before it is published (:func:`fsync_tree`). On any exception,
    ``KeyboardInterrupt`` included, the temporary is removed and ``target`` is left as it was.
    ``replace`` is passed to :func:`publish`.
    """
    final, tmp = _start(target, _make_temp_folder)
    ours = False
    try:
        yield tmp
        ours = True
        fsync_tree(tmp)  # whatever wrote the files, they are on disk before the rename
        publish(tmp, final, replace=replace)
    except BaseException as e:
        shutil.rmtree(tmp, ignore_errors=True)
        failure = _write_failure(e, tmp, final, ours=ours)
        if failure is not None:
            raise failure from None
        raise


@contextlib.contextmanager
def atomic_file(target: str | os.PathLike, mode: str = "w") -> Iterator[IO[Any]]:
    """Yield a file opened beside ``target`` (text: UTF-8, ``\\n``); it replaces ``target`` when done.

    ``mode`` is ``"w"`` (text) or ``"wb"``. The temporary is created with ``O_EXCL`` under a fresh
    random name (as ``tempfile.mkstemp`` does, but with the umask's mode), so a symlink planted beside
    ``target`` is never followed. The file is flushed and fsynced before the rename; on an exception it
    is removed and ``target`` is untouched.
    """
    if mode not in ("w", "wb"):
        raise InputError(f"mode == {mode!r}, must be 'w' or 'wb'")
    final, (tmp, fd) = _start(target, _make_temp_file)
    ours = False
    try:
        kwargs: dict[str, Any] = {} if mode == "wb" else {"encoding": "utf-8", "newline": "\n"}
        try:
            f = open(fd, mode, **kwargs)  # noqa: SIM115 - closed by the with below
        except BaseException:
            os.close(fd)
            raise
        with f:
            yield f
            ours = True
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, final)
        fsync_dir(final.parent)
    except BaseException as e:
        tmp.unlink(missing_ok=True)
        failure = _write_failure(e, tmp, final, ours=ours)
        if failure is not None:
            raise failure from None
        raise
