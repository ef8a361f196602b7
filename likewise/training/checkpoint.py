"""Checkpoints that resume a training run: plain ``.npy`` tables and a JSON manifest, written atomically.

``train(..., checkpoint_dir=DIR)`` keeps one checkpoint, ``DIR/checkpoint/``, replaced as a whole by
:func:`likewise._fileio.atomic_folder` (temporary folder, every file fsynced, rename): a run killed at
any instant, ``kill -9`` included, leaves either the previous checkpoint or the new one, never a mix.
It is written at the end of every epoch and, with ``checkpoint_every`` minutes, between blocks (numba)
or steps (torch) once that much time has passed since the last one.

Inside:

* ``manifest.json`` -- ``format`` and ``version``; ``identity`` (the backend, the hyper-parameters that
  shape training, sha256 digests of the corpus's ids, offsets and counts and of the vocabulary's keys,
  and the layout that fixes the random streams); ``state`` (the epoch and the position in it, the
  number of passes of the run, the learning rate, the finished epochs' history, the counters of the
  epoch so far, the notes ``epochs="auto"`` made, and the random state); ``world_size``; ``tables``;
  ``files`` with the sha256 and size of every other file.
* ``W.R-of-N.npy`` and ``C.R-of-N.npy`` -- the input and output tables, rows ``R, R + N, ...`` in
  shard ``R`` of ``N`` (one shard for one process; bfloat16 tables are stored as their uint16 bits).
  :meth:`Saved.rows` reads any rows from any number of shards, so a checkpoint of 2 processes
  resumes on 1 or 4.

Random state: both backends draw from streams that are functions of (seed, epoch, position) -- the
numba kernel seeds each block's chunks from the seed, the epoch and the block's first sequence; the
torch kernel hashes the seed, the epoch and each token's corpus position (:mod:`likewise.kernels.draws`)
-- so the manifest's ``rng`` records those keys and no generator has hidden state to save. The
starting tables, drawn from ``seed``, are in the checkpoint itself.

A checkpoint is read with ``allow_pickle=False``, every field of its manifest checked
(:mod:`likewise.training._checkpoint_manifest`: a field missing, of the wrong type or out of range is a
:class:`~likewise.errors.CorruptModelError` naming it), its checksums verified and its tables checked to
be finite, and it is resumed only by a run with the same identity; any difference is refused with a
message naming it.

One run at a time: :func:`lock_folder` holds ``DIR/checkpoint.lock`` (``fcntl.flock``) for the whole of
a training run, so a second run on the same directory is refused at once instead of overwriting the
first one's checkpoints. The kernel drops the lock when the process ends, however it ends, so a killed
run leaves no stale lock.
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import hashlib
import json
import os
import socket
import stat
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._fileio import (
    MANIFEST,
    atomic_folder,
    file_entry,
    file_sha256,
    tidy,
    write_npy,
    write_text,
)
from .._readfile import read_json, read_npy
from .._targets import check_outside_saved
from ..errors import CorruptModelError, InputError, shown
from . import distributed
from ._checkpoint_manifest import MUST_MATCH, MUST_MATCH_TORCH, check_manifest, shard_name
from .distributed import Dist

try:  # POSIX; elsewhere (Windows) a checkpoint directory is not locked: see lock_folder
    import fcntl
except ImportError:  # pragma: no cover - not on the POSIX systems CI runs on
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "FOLDER",
    "FORMAT",
    "LOCK",
    "MUST_MATCH",
    "MUST_MATCH_TORCH",
    "VERSION",
    "Checkpoints",
    "Saved",
    "check_apart",
    "data_identity",
    "lock_folder",
    "run_state",
]

FORMAT = "likewise-checkpoint"
VERSION = 1
#: The checkpoint's folder inside the checkpoint directory.
FOLDER = "checkpoint"
#: The lock file inside the checkpoint directory, held by the run that uses it (:func:`lock_folder`).
LOCK = "checkpoint.lock"


def _digest(arr: np.ndarray) -> str:
    h = hashlib.sha256()
    flat = np.ascontiguousarray(arr).reshape(-1)
    step = 1 << 24  # hash a memory-mapped corpus a slice at a time
    for start in range(0, len(flat), step):
        h.update(memoryview(flat[start : start + step]).cast("B"))
    return h.hexdigest()


def data_identity(
    ids: np.ndarray, offsets: np.ndarray, counts: np.ndarray, keys: Any = None
) -> dict[str, Any]:
    """What a checkpoint records of the data: sizes and sha256 digests of the arrays (and the keys)."""
    out: dict[str, Any] = {
        "n_items": len(counts),
        "n_sequences": len(offsets) - 1,
        "n_tokens": int(offsets[-1]) if len(offsets) else 0,
        "ids_sha256": _digest(np.asarray(ids, dtype=np.int32)),
        "offsets_sha256": _digest(np.asarray(offsets, dtype=np.int64)),
        "counts_sha256": _digest(np.asarray(counts, dtype=np.int64)),
    }
    if keys is not None:
        out["keys_sha256"] = hashlib.sha256("\n".join(map(str, keys)).encode("utf-8")).hexdigest()
    return out


def _differences(saved: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    """Readable differences between two identities (saved first)."""
    out = []
    if saved.get("backend") != ours.get("backend"):
        out.append(f"backend {saved.get('backend')!r} there, {ours.get('backend')!r} here")
    for section, what in (("config", ""), ("layout", "layout ")):
        a, b = saved.get(section, {}), ours.get(section, {})
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                out.append(f"{what}{key} {a.get(key)!r} there, {b.get(key)!r} here")
    a, b = saved.get("data", {}), ours.get("data", {})
    changed = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    if changed:
        sizes = ", ".join(f"{k} {a[k]} there, {b[k]} here" for k in changed if not k.endswith("_sha256"))
        out.append("another corpus or vocabulary (" + (sizes or ", ".join(changed) + " differ") + ")")
    return out


def run_state(
    passes: Any,
    backend: str,
    seed: int,
    epoch: int,
    step: int,
    epochs: int,
    history: list[dict[str, Any]],
    partial: dict[str, float],
    notes: dict[str, Any],
) -> dict[str, Any]:
    """The ``state`` of a checkpoint taken before step ``step`` of pass ``epoch`` (0-based; a checkpoint
    at the end of a pass is ``(epoch + 1, 0)``). ``passes`` gives the learning rate there."""
    if backend == "torch":
        rng = {
            "kind": "counter-based: lowbias32 of (seed, epoch, corpus position, purpose)",
            "epoch_keys": "splitmix64(splitmix64(seed) ^ epoch)",
        }
    else:
        rng = {
            "kind": "64-bit LCG per chunk, seeded by splitmix64 of (seed_of_epoch, block start, chunk)",
            "seed_of_epoch": "(seed * 1000003 + epoch) mod 2**63",
        }
    rng |= {"seed": seed, "epoch": epoch, "step": step}
    return {
        "epoch": epoch,
        "step": step,
        "epochs": epochs,
        "lr": passes.lr_at(epoch, step) if epoch < epochs else None,
        "history": list(history),
        "partial": dict(partial),
        "notes": {k: v for k, v in notes.items() if k != "epochs"},
        "rng": rng,
    }


def _lock_holder(path: Path) -> str:
    """`` (process PID on HOST)`` as the lock's holder wrote it, or ``""`` when it cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            words = f.read(200).split()
    except OSError:
        return ""
    return f" (process {words[0]} on {words[1]})" if len(words) == 2 and words[0].isdigit() else ""


def _take_lock(folder: Path) -> int | None:
    """Lock ``folder`` (created if missing) for this process; the descriptor holding it (None: no fcntl)."""
    check_outside_saved(folder / FOLDER, "a checkpoint to")  # never inside a saved space or corpus
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise InputError(f"checkpoint_dir {str(folder)!r} is not a folder") from None
    if fcntl is None:  # no flock on this system: runs are not kept apart (documented in lock_folder)
        return None
    path = folder / LOCK
    # O_NONBLOCK: a FIFO planted there is never waited on; O_NOFOLLOW: nor is a symlink followed
    flags = (
        os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    )
    not_regular = (
        f"the lock {str(path)!r} of the checkpoint directory is {{}}, not a regular file: remove it "
        "(a training makes a regular file there) or give another --checkpoint-dir"
    )
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.EISDIR):
            kind = "a symlink" if e.errno == errno.ELOOP else "a folder"
            raise InputError(not_regular.format(kind)) from None
        raise InputError(f"cannot open the lock {str(path)!r} of the checkpoint directory: {e}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):  # flock on a FIFO or a device said only "[Errno 22] Invalid argument"
        os.close(fd)
        raise InputError(
            not_regular.format("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a special file")
        )
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:  # EWOULDBLOCK: another process holds it
        os.close(fd)
        raise InputError(
            f"the checkpoint directory {str(folder)!r} is in use: another training holds its lock "
            f"{LOCK!r}{_lock_holder(path)}. Two runs on one directory would overwrite each other's "
            "checkpoints: wait for that run to end, or give this one another --checkpoint-dir"
        ) from None
    except OSError as e:  # a file system without locks (ENOLCK, EOPNOTSUPP): train, but say so
        os.close(fd)
        warnings.warn(
            f"cannot lock the checkpoint directory {str(folder)!r} ({e}): another run on it would not be "
            "refused",
            stacklevel=4,
        )
        return None
    os.ftruncate(fd, 0)  # who holds it, for the message of a run refused meanwhile
    os.write(fd, f"{os.getpid()} {socket.gethostname()}\n".encode("utf-8", "replace"))
    return fd


@contextlib.contextmanager
def lock_folder(folder: str | os.PathLike | None, dist: Dist | None = None) -> Iterator[None]:
    """Hold the checkpoint directory ``folder`` for the block: one training run at a time uses it.

    Rank 0 creates ``folder`` and takes an exclusive ``fcntl.flock`` on ``folder/checkpoint.lock``
    without waiting; every rank raises when it is refused. The lock is released when the block ends, and
    by the kernel when the process dies (``kill -9`` included), so a killed run never leaves a stale
    lock: the file stays, the lock does not. Where ``fcntl`` does not exist (Windows) nothing is locked.
    On a network file system ``flock`` may lock only within one machine.

    Parameters
    ----------
    folder : path or None
        The checkpoint directory (None: nothing to lock).
    dist : Dist, optional
        This process's place in a multi-process run.

    Raises
    ------
    InputError
        Another process holds the lock (the message names the folder, and the holder's process id when
        it can be read), ``folder`` is not a folder, or it lies inside a saved likewise folder.
    """
    if folder is None:
        yield
        return
    d = dist or Dist()
    fd, error = None, None
    if d.main:
        try:
            fd = _take_lock(Path(folder))
        except InputError as e:
            error = str(e)
    error = distributed.broadcast_object(d, error, "locking the checkpoint directory")
    try:
        if error is not None:
            raise InputError(error)
        yield
    finally:
        if fd is not None:
            os.close(fd)  # closing the only descriptor releases the lock


def check_apart(checkpoint_dir: str | os.PathLike | None, output: str | os.PathLike | None) -> None:
    """Raise unless the checkpoint directory and the model's output folder are apart (neither holds the
    other): the model could not be saved into a folder that holds checkpoints, and a checkpoint
    written into a model's folder would change it; checked before training, not after it.

    Raises
    ------
    InputError
        Naming both paths.
    """
    if checkpoint_dir is None or output is None:
        return
    ck = Path(os.path.abspath(os.path.expanduser(os.fspath(checkpoint_dir)))).resolve()
    out = Path(os.path.abspath(os.path.expanduser(os.fspath(output)))).resolve()
    if ck == out or ck.is_relative_to(out) or out.is_relative_to(ck):
        how = "is" if ck == out else "is inside" if ck.is_relative_to(out) else "holds"
        raise InputError(
            f"--checkpoint-dir {os.fspath(checkpoint_dir)!r} {how} the output -o {os.fspath(output)!r}: "
            "the model's folder and the checkpoints' must be apart; choose another --checkpoint-dir"
        )


@dataclass
class Saved:
    """A checkpoint read back: its folder and manifest (checked), and :meth:`rows` to read tables."""

    folder: Path
    manifest: dict[str, Any]

    @property
    def state(self) -> dict[str, Any]:
        """Where the run stood: epoch, step, passes, history, counters, notes (see the module doc)."""
        return self.manifest["state"]

    def restore(self, passes: Any) -> tuple[list[dict[str, Any]], int, int, dict[str, float]]:
        """Load the tables into ``passes`` and return where the run goes on.

        Parameters
        ----------
        passes : object
            A backend's passes (:mod:`likewise.training.train_numba`, :mod:`likewise.training.train_torch`):
            its ``n_steps`` and ``restore(rows)``.

        Returns
        -------
        history, epoch, step, partial
            The finished epochs' history, the pass and step to continue at, and the pass's counters.

        Raises
        ------
        CorruptModelError
            The step is not one of the pass's ``n_steps`` steps, or a table is damaged (:meth:`rows`).
        """
        s = self.state
        if s["epoch"] < s["epochs"] and not s["step"] < passes.n_steps:
            raise CorruptModelError(
                f"{str(self.folder / MANIFEST)!r}: field 'state.step' is {s['step']}, expected a step of "
                f"the pass, 0 to {passes.n_steps - 1}; the checkpoint is damaged"
            )
        passes.restore(self.rows)
        return list(s["history"]), int(s["epoch"]), int(s["step"]), dict(s["partial"])

    def rows(self, name: str, ids: np.ndarray) -> np.ndarray:
        """Rows ``ids`` of table ``name`` (``"W"`` or ``"C"``), from however many shards it was saved in.

        Returns float32 rows, or the uint16 bit patterns of a bfloat16 table.

        Raises
        ------
        CorruptModelError
            A shard of another shape or dtype than the manifest says, or a row holding NaN or infinity.
        """
        info = self.manifest["tables"][name]
        n_rows, dim = info["shape"]
        n = int(self.manifest["world_size"])
        ids = np.asarray(ids, dtype=np.int64)
        dtype = np.float32 if info["dtype"] == "float32" else np.uint16
        out = np.empty((len(ids), dim), dtype=dtype)
        owner = ids % n
        for shard in range(n):
            path = self.folder / shard_name(name, shard, n)
            arr = read_npy(path, mmap=True)  # the header checked against the file's size first
            if arr.shape != (len(range(shard, n_rows, n)), dim) or arr.dtype != dtype:
                raise CorruptModelError(
                    f"{str(path)!r} holds {arr.dtype}{list(arr.shape)}; the manifest expects "
                    f"{np.dtype(dtype)}[{len(range(shard, n_rows, n))}, {dim}]"
                )
            sel = owner == shard
            out[sel] = arr[ids[sel] // n]
        # bfloat16 bits: all-ones exponent is infinity or NaN
        bad = (out & 0x7F80) == 0x7F80 if dtype == np.uint16 else ~np.isfinite(out)
        rows = np.flatnonzero(bad.any(axis=1))
        if len(rows):
            raise CorruptModelError(
                f"table {name} of the checkpoint in {str(self.folder)!r} holds NaN or infinity (row "
                f"{int(ids[rows[0]])}); it cannot be resumed: start afresh in another --checkpoint-dir"
            )
        return out


class Checkpoints:
    """The checkpoint of one run: find and check it (:meth:`load`), decide when (:meth:`due`), write
    (:meth:`save`). In a multi-process run every rank calls each method at the same point; rank 0
    reads and writes the manifest, each rank writes its own table shards.

    Parameters
    ----------
    folder : path
        The checkpoint directory (``--checkpoint-dir``); the checkpoint is ``folder/checkpoint``.
    every_minutes : float, optional
        Also write one when this many minutes have passed since the last (None: at epoch ends only).
    resume : bool
        Continue from the checkpoint found there. Without it an existing checkpoint is an error, so a
        run never silently overwrites the one that another run could resume.
    identity : dict
        ``backend``, ``config`` (the :data:`MUST_MATCH` fields), ``data`` (:func:`data_identity`) and
        ``layout``; a checkpoint is resumed only when they are equal.
    dist : Dist
        This process's place in the run.
    """

    def __init__(
        self,
        folder: str | Path,
        every_minutes: float | None,
        resume: bool,
        identity: dict[str, Any],
        dist: Dist | None = None,
    ) -> None:
        if every_minutes is not None and not (
            isinstance(every_minutes, int | float)
            and not isinstance(every_minutes, bool)
            and every_minutes > 0
        ):
            raise InputError(f"checkpoint_every == {every_minutes!r}, must be minutes > 0 or None")
        self.target = Path(folder) / FOLDER
        self.every_s = None if every_minutes is None else float(every_minutes) * 60.0
        self.resume = bool(resume)
        self.identity = json.loads(json.dumps(identity))  # as it will read back from JSON
        self.dist = dist or Dist()
        self.last = time.monotonic()
        self.written = 0

    # --- reading -------------------------------------------------------------------------------------

    def _read(self) -> dict[str, Any] | None:
        """Rank 0: the checked manifest, None when there is no checkpoint; raises on a bad one."""
        tidy(self.target)  # a publish killed between its two renames is put back first
        if not self.target.exists():
            return None
        mpath = self.target / MANIFEST
        manifest = read_json(mpath, what="a likewise checkpoint")
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            found = manifest.get("format") if isinstance(manifest, dict) else manifest
            raise CorruptModelError(
                f"{str(self.target)!r} is not a likewise checkpoint: field 'format' of {str(mpath)!r} is "
                f"{shown(found)}, expected {FORMAT!r}"
            )
        version = manifest.get("version")
        if not isinstance(version, int) or isinstance(version, bool) or version != VERSION:
            raise CorruptModelError(
                f"{str(self.target)!r} is checkpoint format version {shown(version)} "
                f"(field 'version' of {str(mpath)!r}); this likewise reads version {VERSION}"
            )
        check_manifest(manifest, str(mpath), self.identity)  # every field, before any is used
        state = manifest["state"]
        where = (
            f"epoch {state['epoch'] + 1} of {state['epochs']}, step {state['step']}"
            if state["epoch"] < state["epochs"]
            else f"finished, {state['epochs']} epochs"
        )
        if not self.resume:
            raise InputError(
                f"{str(self.target)!r} already holds a checkpoint ({where}); pass --resume "
                "(resume=True) to continue it, or choose another --checkpoint-dir"
            )
        diffs = _differences(manifest["identity"], self.identity)
        if diffs:
            raise InputError(
                f"the checkpoint in {str(self.target)!r} ({where}) is of another run: "
                + "; ".join(diffs)
                + ". Resume it with the options and data it was written with, or start afresh in "
                "another --checkpoint-dir"
            )
        for name, entry in manifest["files"].items():
            path = self.target / name
            if (
                not path.is_file()
                or path.stat().st_size != entry["bytes"]
                or file_sha256(path) != entry["sha256"]
            ):
                raise CorruptModelError(
                    f"{str(path)!r} is missing or fails its checksum: the checkpoint is damaged"
                )
        return manifest

    def load(self) -> Saved | None:
        """The checkpoint to resume, or None (none there, or ``resume`` not asked and none there).

        Raises
        ------
        InputError
            A checkpoint exists but ``resume`` was not asked for, or it belongs to another run.
        CorruptModelError
            The checkpoint is damaged or of an unknown format.
        """
        found: dict[str, Any] = {}
        if self.dist.main:
            try:
                found = {"manifest": self._read()}
            except (InputError, CorruptModelError) as e:
                found = {"error": type(e).__name__, "message": str(e)}
        found = distributed.broadcast_object(self.dist, found, "reading the checkpoint")
        if "error" in found:
            raise (InputError if found["error"] == "InputError" else CorruptModelError)(found["message"])
        if found["manifest"] is None:
            return None
        return Saved(self.target, found["manifest"])

    # --- writing -------------------------------------------------------------------------------------

    def due(self) -> bool:
        """True when ``checkpoint_every`` minutes have passed since the last checkpoint (all ranks agree:
        rank 0's clock decides)."""
        if self.every_s is None:
            return False
        late = time.monotonic() - self.last >= self.every_s
        if not self.dist.active:
            return late
        return bool(distributed.broadcast_object(self.dist, late, "agreeing on a checkpoint"))

    def save(
        self, state: dict[str, Any], shards: dict[str, np.ndarray], dtypes: dict[str, str], n_rows: int
    ) -> None:
        """Write this rank's ``shards`` (``{"W": rows rank::world, "C": ...}``) and, on rank 0, the manifest.

        ``dtypes`` says how each table is stored (``"float32"`` or ``"bfloat16"``, whose shard is its
        uint16 bits); ``n_rows`` is the full table's row count.
        """
        d = self.dist
        with contextlib.ExitStack() as stack:
            tmp = stack.enter_context(atomic_folder(self.target)) if d.main else None
            path = Path(
                distributed.broadcast_object(d, str(tmp) if d.main else None, "starting a checkpoint")
            )
            for name, arr in shards.items():
                write_npy(path / shard_name(name, d.rank, d.world), np.ascontiguousarray(arr))
            distributed.barrier(d, "writing the checkpoint's tables")
            if d.main:
                dim = int(next(iter(shards.values())).shape[1])
                files = {p.name: file_entry(p) for p in sorted(path.glob("*.npy"))}
                manifest = {
                    "format": FORMAT,
                    "version": VERSION,
                    "identity": self.identity,
                    "world_size": d.world,
                    "tables": {k: {"dtype": dtypes[k], "shape": [n_rows, dim]} for k in shards},
                    "state": state,
                    "saved_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
                    "files": files,
                }
                write_text(path / MANIFEST, json.dumps(manifest, indent=1, allow_nan=True))
        distributed.barrier(d, "publishing the checkpoint")
        self.last = time.monotonic()
        self.written += 1
