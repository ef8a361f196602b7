"""Where an output may be written: the checks every writer makes before any work.

Every writer of a saved folder (a space, an index, a next-token model) calls :func:`check_target`, and
every writer of a file (an export, an audience, a picture, a names file) :func:`check_output_file`, so
the rules hold for every command and for the Python API:

* nothing is written inside a saved likewise folder (a space, an index, a corpus, a checkpoint), where
  it would change or break that folder and where replacing that folder later would delete it; the one
  exception is a folder's own part in its place (a space's ``index/``: :data:`OWN_PARTS`);
* an existing target is replaced only when asked (``overwrite``), and then only if it is what is being
  written (a saved folder of the same format; a file, not a folder), and never when it holds another
  saved folder;
* a target whose parent path runs through a file is refused, naming that file, before any work.

The writes themselves are atomic (:mod:`likewise._fileio`).
"""

from __future__ import annotations

import os
from pathlib import Path

from ._fileio import MANIFEST, tidy
from ._readfile import read_json
from .errors import CorruptModelError, InputError

__all__ = [
    "OWN_PARTS",
    "check_output_file",
    "check_outside_saved",
    "check_target",
    "has_format",
    "likewise_folder_of",
    "nested_saved_folder",
]

#: The saved likewise folders that a folder of each format holds as parts of itself, by name: a space's
#: approximate index (``MODEL/index``), a next-token model's space (``MODEL/space``). Replacing the folder
#: replaces them with it; any other saved folder found inside is another model, never deleted unasked.
OWN_PARTS: dict[str, dict[str, str]] = {
    "likewise.embeddings": {"index": "likewise.index"},
    "likewise.nexttoken": {"space": "likewise.embeddings"},
}


def has_format(path: Path, fmt: str, manifest: str = MANIFEST) -> bool:
    """True if ``path`` is a folder whose manifest names format ``fmt`` (any version)."""
    try:
        found = read_json(path / manifest, what="a likewise folder")
    except CorruptModelError:
        return False
    return isinstance(found, dict) and found.get("format") == fmt


def _named(path: str | os.PathLike, wanted: str) -> Path:
    """``path`` as a Path, refusing the empty path: ``Path("")`` is ``.``, so ``-o ""`` was taken as the
    current folder (and said "'.' already exists")."""
    if not os.fspath(path).strip():
        raise InputError(f"the output path is empty ({os.fspath(path)!r}); give the name of {wanted}")
    return Path(path)


def check_target(
    path: str | os.PathLike,
    *,
    overwrite: bool = False,
    fmt: str = "likewise.embeddings",
    what: str = "saved likewise space",
    manifest: str = MANIFEST,
    own_part: bool = False,
) -> Path:
    """Raise now if a save to ``path`` would be refused (so a long run is not wasted).

    Every writer of a saved folder (a space, a next-token model) calls it, so the rules hold for every
    command: a folder is never written inside another saved likewise folder (where a later overwrite of
    the outer one would delete it), and an overwrite never deletes a saved folder nested inside the one
    it replaces.

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
    own_part : bool
        ``path`` may be the own part of the saved folder that holds it (:data:`OWN_PARTS`: a space's
        ``index/``, written by ``likewise index``); anywhere else inside a saved folder is still refused.

    Returns
    -------
    Path
        ``path`` as a :class:`~pathlib.Path`.

    Raises
    ------
    InputError
        ``path`` lies inside a saved likewise folder (not as its own part), or below a file; ``path``
        exists and ``overwrite`` is False; it exists and is not a folder of format ``fmt`` (which is never
        replaced); or it holds another saved likewise folder (:func:`nested_saved_folder`), which
        replacing it would delete.
    """
    target = _named(path, f"a folder for the {what}")
    check_outside_saved(target, part=fmt if own_part else None)
    tidy(target)  # a save killed between its two renames left the old folder aside: put it back
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
        nested = nested_saved_folder(target, fmt)
        if nested is not None:
            raise InputError(
                f"refusing to overwrite {str(target)!r}: it holds another saved likewise folder, "
                f"{str(nested[0])!r} (format {nested[1]!r}), which replacing it would delete; "
                "move that one out first"
            )
    return target


def _likewise_format(folder: Path) -> str | None:
    """The format ``folder``'s manifest names when it is a saved likewise folder, else None."""
    if not (folder / MANIFEST).is_file():
        return None
    try:
        found = read_json(folder / MANIFEST, what="a likewise folder")
    except CorruptModelError:
        return None
    fmt = found.get("format") if isinstance(found, dict) else None
    return fmt if isinstance(fmt, str) and fmt.startswith("likewise") else None


def nested_saved_folder(folder: str | os.PathLike, fmt: str | None) -> tuple[Path, str] | None:
    """A saved likewise folder inside ``folder`` (of format ``fmt``) that is not one of its own parts.

    Parameters
    ----------
    folder : str or path-like
        The folder about to be replaced.
    fmt : str or None
        Its format; its own parts (:data:`OWN_PARTS`, e.g. a space's ``index``) are not counted, and
        are searched in turn. Symlinks are not followed.

    Returns
    -------
    (Path, str) or None
        The first such folder found and its format.
    """
    parts = OWN_PARTS.get(fmt or "", {})
    try:
        with os.scandir(folder) as it:
            subs = sorted(e.name for e in it if e.is_dir(follow_symlinks=False))
    except OSError:
        return None
    for name in subs:
        sub = Path(folder) / name
        found = _likewise_format(sub)
        if found is not None and parts.get(name) != found:
            return sub, found
        deeper = nested_saved_folder(sub, found)
        if deeper is not None:
            return deeper
    return None


def likewise_folder_of(path: str | os.PathLike) -> tuple[Path, str] | None:
    """The nearest folder at or above ``path`` whose manifest names a likewise format, and that format.

    A saved space (``likewise.space.embeddings``), its index (``likewise.index``), a corpus and the like hold
    a ``manifest.json`` whose ``format`` starts with ``likewise``; a file written into one would change
    or break it. Symlinks and ``..`` are resolved first. None when ``path`` is inside no such folder.
    """
    start = Path(path).expanduser().resolve()
    for folder in (start, *start.parents):
        fmt = _likewise_format(folder)
        if fmt is not None:
            return folder, fmt
    return None


def check_outside_saved(path: str | os.PathLike, what: str = "", *, part: str | None = None) -> None:
    """Raise unless ``path`` lies outside every saved likewise folder (the folders above it are looked at),
    and below folders only.

    The one rule for every output: a model, an export, an audience or a projector folder is never
    written inside a saved space, index, corpus or checkpoint, where it would change or break that
    folder, and where replacing that folder later would delete it. A path whose parent runs through a
    file (``notes.txt/out.vec``) is refused naming that file, where creating the parent would fail
    with a bare "File exists" after the work.

    Parameters
    ----------
    path : str or path-like
        What is about to be written.
    what : str
        What it is, for the message (``"a checkpoint to"``: "refusing to write a checkpoint to ...").
    part : str, optional
        The format of the folder written at ``path``, when it may be the own part (:data:`OWN_PARTS`)
        of the saved folder directly above it, as a space's ``index/`` is.

    Raises
    ------
    InputError
        Naming ``path``, the saved folder it lies in and that folder's format; or the file its parent
        path runs through; or saying ``path`` is empty.
    """
    _named(path, "what to write")
    full = Path(os.path.abspath(os.path.expanduser(os.fspath(path))))
    above = full.parent
    while not os.path.lexists(above) and above != above.parent:
        above = above.parent  # the nearest part of the path that exists; the writer makes the rest
    if not above.is_dir():
        raise InputError(
            f"cannot write {what + ' ' if what else ''}{str(path)!r}: {str(above)!r} is a file, not a "
            "folder; choose another path"
        )
    inside = likewise_folder_of(full.parent)
    if inside is not None:
        folder, fmt = inside
        if (
            part is not None
            and folder == full.parent.resolve()
            and OWN_PARTS.get(fmt, {}).get(full.name) == part
        ):
            return  # e.g. MODEL/index: the space's own index, replaced with its checks (check_target)
        raise InputError(
            f"refusing to write {what + ' ' if what else ''}{str(path)!r}: it is inside {str(folder)!r}, "
            f"a saved likewise folder (format {fmt!r}); choose a path outside it"
        )


def _special_kind(target: Path) -> str | None:
    """What ``target`` is when it exists and is not a regular file (following symlinks), else None."""
    import stat

    try:
        mode = target.stat().st_mode
    except OSError:  # absent, or a dangling symlink: the write makes a regular file
        return None
    kinds = [
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
    ]
    kind = next(
        (name for test, name in kinds if test(mode)), None if stat.S_ISREG(mode) else "a special file"
    )
    if kind is not None and target.is_symlink():
        kind = f"a symlink to {kind}"
    return kind


def check_output_file(path: str | os.PathLike, *, overwrite: bool = False, flag: str = "--overwrite") -> Path:
    """Raise now if writing the file ``path`` (an export, an audience, a picture, a names file) would
    clobber what it should not.

    Parameters
    ----------
    path : str or path-like
        The file about to be written.
    overwrite : bool
        Whether an existing file may be replaced.
    flag : str
        The option that sets ``overwrite``, named in the message.

    Returns
    -------
    Path
        ``path`` as a :class:`~pathlib.Path`.

    Raises
    ------
    InputError
        ``path`` lies inside a saved likewise folder (never written, whatever ``overwrite`` says) or below
        a file, is a folder, is a special file (a device such as ``/dev/null``, a FIFO, a socket; or a
        symlink to one: an atomic write would replace it with a regular file, whatever ``overwrite``
        says), or exists and ``overwrite`` is False.
    """
    target = _named(path, "a file to write")
    check_outside_saved(target)
    if target.is_dir():
        raise InputError(f"{str(target)!r} is a folder; give the name of a file to write")
    kind = _special_kind(target)
    if kind is not None:
        raise InputError(
            f"{str(target)!r} is {kind}, not a regular file: it is never replaced (even with {flag}); "
            "give the name of a regular file to write"
        )
    if os.path.lexists(target) and not overwrite:
        raise InputError(f"{str(target)!r} already exists; pass {flag} to replace it")
    return target
