"""Sequences of item keys -> a compiled corpus: packed int32 ids + int64 offsets on disk, memory-mapped.

A corpus folder holds::

    ids.npy        int32, every kept item id, all sequences concatenated
    offsets.npy    int64, n_sequences + 1 entries; sequence i is ids[offsets[i]:offsets[i + 1]]
    vocab.json     the keys in id order (a JSON list of strings)
    counts.npy     int64, the count of each key in the input
    manifest.json  format version, sizes, input description, dropped counts, sha256 of the arrays
                   (``sha256``: of the data of ids and offsets; ``files``: of vocab.json and counts.npy)

Items below ``min_count`` (or past ``max_items``) are removed from their sequences; sequences left
empty are removed; the manifest records how many of each. A corpus is written into a temporary folder
beside its destination and renamed into place, so a reader never sees a half-written corpus.

:func:`build_corpus` compiles an :class:`~likewise.readers.InputSpec` once and caches the result
under a key that covers the input files' contents (their sha256); :func:`corpus_from_sequences`
compiles any iterable of key sequences (generated data, a demo), or a sparse matrix's rows, into a folder.

Text and in-memory sequences are compiled in one pass over the input: each new key gets a
provisional id as it is first seen (a ``defaultdict`` whose factory is its own ``__len__``, so the
per-token work is one C-level ``__getitem__``), provisional ids stream to a scratch file, and the
final frequency-sorted ids are applied afterwards with one vectorised table lookup. Memory holds the
key table, not the tokens.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np

from .. import readers
from .._fileio import atomic_folder, file_sha256, tidy
from .._pages import release_pages
from .._readfile import read_json, read_npy
from .._secrets import redact
from ..errors import CorruptModelError, InputError, ItemIndexError
from ..readers import InputSpec
from .corpus_build import (
    FORMAT,
    FORMAT_VERSION,
    SEQ_CHUNK,
    SIDE_ARRAYS,
    compile_log,
    compile_matrix,
    compile_sequences,
)
from .corpus_cache import cache_max, cache_root, evict, touch
from .vocab import Dropped, Vocab

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "Corpus",
    "build_corpus",
    "cache_key",
    "corpus_from_sequences",
    "release_pages",
]

_FILES = ("ids.npy", "offsets.npy", "vocab.json", "counts.npy", "manifest.json")
_HASH_ELEMENTS = 1 << 22  # array elements hashed at a time when verifying checksums
MAX_VOCAB_BYTES = 1 << 34  # vocab.json is read whole: a bound far above any real vocabulary


class Corpus:
    """A compiled, memory-mapped corpus of integer sequences.

    Parameters
    ----------
    ids : ndarray of int32
        All sequences concatenated.
    offsets : ndarray of int64
        ``n_sequences + 1`` offsets into ``ids``, starting at 0 and ending at ``len(ids)``.
    vocab : Vocab
        The keys of the ids.
    path : Path
        The folder holding the files.
    manifest : dict, optional
        The parsed ``manifest.json``.
    side : dict of str to ndarray, optional
        A log's side arrays, one value per token (memory-mapped): ``"user"`` (int32 codes into
        ``user_keys``) and ``"time"`` (int64 seconds since 1970).
    user_keys : list of str, optional
        The customers ``side["user"]`` codes name, in order of first appearance in the log.

    Notes
    -----
    Use :meth:`open`, :func:`build_corpus` or :func:`corpus_from_sequences` rather than the constructor.
    """

    def __init__(
        self,
        ids: np.ndarray,
        offsets: np.ndarray,
        vocab: Vocab,
        path: Path,
        manifest: dict[str, Any] | None = None,
        side: dict[str, np.ndarray] | None = None,
        user_keys: list[str] | None = None,
    ) -> None:
        self.ids = ids
        self.offsets = offsets
        self.vocab = vocab
        self.side: dict[str, np.ndarray] = side or {}
        self.user_keys = user_keys
        self.path = Path(path)
        self.manifest: dict[str, Any] = manifest or {}

    @property
    def n_sequences(self) -> int:
        """Number of sequences (baskets, sessions, lines)."""
        return len(self.offsets) - 1

    @property
    def n_tokens(self) -> int:
        """Number of item occurrences over all sequences."""
        return len(self.ids)

    def __len__(self) -> int:
        return self.n_sequences

    def __repr__(self) -> str:
        return (
            f"Corpus({self.n_sequences:,} sequences, {self.n_tokens:,} tokens, "
            f"{len(self.vocab):,} {self.vocab.what}s, path={str(self.path)!r})"
        )

    def sequence(self, i: int) -> np.ndarray:
        """Item ids of sequence ``i`` (a read-only view); negative ``i`` counts from the end."""
        n = self.n_sequences
        j = int(i)
        if j < 0:
            j += n
        if not 0 <= j < n:
            raise ItemIndexError(int(i), n, what="sequence")
        return self.ids[self.offsets[j] : self.offsets[j + 1]]

    def keys(self, i: int) -> list[str]:
        """Item keys of sequence ``i``."""
        keys = self.vocab.keys
        return [keys[j] for j in self.sequence(i).tolist()]

    @classmethod
    def open(cls, path: str | Path, *, verify: bool = True) -> Corpus:
        """Open a corpus folder, memory-mapping ``ids.npy`` and ``offsets.npy``.

        Parameters
        ----------
        path : str or Path
            The corpus folder.
        verify : bool
            Check the sha256 of ``ids.npy``, ``offsets.npy``, ``vocab.json`` and ``counts.npy`` against
            the manifest. This reads each file once, in chunks (constant memory); pass False to skip it
            for a corpus just written. (A corpus written before the manifest listed ``vocab.json`` and
            ``counts.npy`` has only its two arrays checked.) Either way every id, offset and customer
            code is checked to be in range, one pass in chunks.

        Returns
        -------
        Corpus
            Memory-mapped from ``path``.

        Raises
        ------
        CorruptModelError
            A file is missing, the format version is unknown, the arrays disagree with the manifest or
            hold an id out of range, or (with ``verify``) a checksum differs from the manifest's.
        """
        path = Path(path)
        for name in _FILES:
            if not os.path.lexists(path / name):  # one that is there but not a regular file: see below
                raise CorruptModelError(f"{path} is not a complete likewise corpus: {name} is missing")
        # bounded reads: a lying .npy header, a deep or huge JSON file or a FIFO is a CorruptModelError
        manifest = read_json(path / "manifest.json", what="a likewise corpus")
        version = manifest.get("format_version") if isinstance(manifest, dict) else None
        if version != FORMAT_VERSION:
            raise CorruptModelError(
                f"corpus {path} has format version {version!r}; this likewise reads version {FORMAT_VERSION}"
            )
        keys = read_json(path / "vocab.json", what="a likewise corpus", max_bytes=MAX_VOCAB_BYTES)
        ids = read_npy(path / "ids.npy", mmap=True)
        offsets = read_npy(path / "offsets.npy", mmap=True)
        counts = read_npy(path / "counts.npy")
        problems = []
        for name, arr, dtype in (
            ("ids", ids, np.int32),
            ("offsets", offsets, np.int64),
            ("counts", counts, np.int64),
        ):
            if arr.dtype != dtype or arr.ndim != 1:
                problems.append(f"{name}.npy is {arr.dtype}{arr.shape}, expected 1-D {np.dtype(dtype)}")
        if problems:
            raise CorruptModelError(f"corpus {path} is inconsistent: " + "; ".join(problems))
        if len(offsets) < 1:
            problems.append("offsets.npy is empty, expected at least one entry")
        elif offsets[0] != 0 or offsets[-1] != len(ids):
            problems.append(f"offsets run from {offsets[0]} to {offsets[-1]}, expected 0 to {len(ids)}")
        if len(ids) != manifest.get("n_tokens") or len(offsets) - 1 != manifest.get("n_sequences"):
            problems.append(
                f"{len(ids)} tokens / {len(offsets) - 1} sequences on disk, manifest says "
                f"{manifest.get('n_tokens')} / {manifest.get('n_sequences')}"
            )
        if not isinstance(keys, list) or len(keys) != len(counts) or len(keys) != manifest.get("vocab_size"):
            problems.append(
                f"vocab.json and counts.npy disagree with vocab_size={manifest.get('vocab_size')}"
            )
        if problems:
            raise CorruptModelError(f"corpus {path} is inconsistent: " + "; ".join(problems))
        side, user_keys = _open_side(path, manifest, len(ids))
        _check_ranges(path, ids, offsets, len(keys), side.get("user"), user_keys)  # verify or not
        if verify:
            arrays = {"ids.npy": ids, "offsets.npy": offsets} | {f"{k}.npy": v for k, v in side.items()}
            _verify_checksums(path, manifest, arrays)
            _verify_files(path, manifest)
        try:
            vocab = Vocab(keys, counts, what=str(manifest.get("what", "item")))
        except InputError as e:
            raise CorruptModelError(f"corpus {path}: vocab.json and counts.npy: {e}") from None
        if manifest.get("dropped_keys"):
            try:
                vocab = vocab.with_dropped(Dropped.from_dict(manifest["dropped_keys"]))
            except InputError as e:
                raise CorruptModelError(f"corpus {path}: {e}") from None
        return cls(ids, offsets, vocab, path, manifest, side, user_keys)


def _array_sha256(arr: np.ndarray) -> str:
    """sha256 of a 1-D array's data bytes (not the ``.npy`` header), hashed a chunk at a time."""
    sha = hashlib.sha256()
    for start in range(0, len(arr), _HASH_ELEMENTS):
        sha.update(np.ascontiguousarray(arr[start : start + _HASH_ELEMENTS]).data)
        release_pages(arr, start, start + _HASH_ELEMENTS)
    return sha.hexdigest()


def _first_outside(arr: np.ndarray, low: int, high: int) -> int | None:
    """The first position of ``arr`` whose value is outside ``[low, high)``, read a chunk at a time."""
    for start in range(0, len(arr), _HASH_ELEMENTS):
        chunk = np.asarray(arr[start : start + _HASH_ELEMENTS])
        if len(chunk) and (int(chunk.min()) < low or int(chunk.max()) >= high):
            return start + int(np.flatnonzero((chunk < low) | (chunk >= high))[0])
        release_pages(arr, start, start + _HASH_ELEMENTS)
    return None


def _check_ranges(
    path: Path, ids: np.ndarray, offsets: np.ndarray, n_keys: int, users: np.ndarray | None, user_keys: Any
) -> None:
    """Every id names a key, the offsets never go back, every customer code names a customer (or is -1,
    an attribute token's): the cheap checks a corpus opened with ``verify=False`` still gets, so one
    damaged (or written by another tool with matching checksums) is a :class:`CorruptModelError` here,
    not a read past a table's end later. One pass over each array, a chunk at a time."""
    bad = _first_outside(ids, 0, n_keys)
    if bad is not None:
        raise CorruptModelError(
            f"corpus {path}: ids.npy holds id {int(ids[bad])} at token {bad}, outside the vocabulary of "
            f"{n_keys} keys (0..{n_keys - 1}); rebuild the corpus"
        )
    for start in range(0, len(offsets) - 1, _HASH_ELEMENTS):
        step = np.diff(np.asarray(offsets[start : start + _HASH_ELEMENTS + 1]))
        if len(step) and int(step.min()) < 0:
            at = start + int(np.flatnonzero(step < 0)[0])
            raise CorruptModelError(
                f"corpus {path}: offsets.npy goes back at sequence {at} ({int(offsets[at])} then "
                f"{int(offsets[at + 1])}); offsets must never decrease"
            )
    if users is not None:
        bad = _first_outside(users, -1, len(user_keys))
        if bad is not None:
            raise CorruptModelError(
                f"corpus {path}: user.npy holds customer {int(users[bad])} at token {bad}, outside the "
                f"{len(user_keys)} customers of customers.json"
            )


def _open_side(
    path: Path, manifest: dict[str, Any], n_tokens: int
) -> tuple[dict[str, np.ndarray], list | None]:
    """The side arrays the manifest lists (memory-mapped, checked against ``n_tokens``) and the customer
    keys; raise :class:`CorruptModelError` for a missing or inconsistent one."""
    names = manifest.get("side", [])
    if not isinstance(names, list) or not all(n in SIDE_ARRAYS for n in names):
        raise CorruptModelError(
            f"corpus {path}: manifest.json side == {names!r}, expected names of {list(SIDE_ARRAYS)}"
        )
    side = {}
    for name in names:
        if not os.path.lexists(path / f"{name}.npy"):
            raise CorruptModelError(f"{path} is not a complete likewise corpus: {name}.npy is missing")
        arr = read_npy(path / f"{name}.npy", mmap=True)
        if arr.dtype != np.dtype(SIDE_ARRAYS[name]) or arr.shape != (n_tokens,):
            raise CorruptModelError(
                f"corpus {path}: {name}.npy is {arr.dtype}{arr.shape}, expected {np.dtype(SIDE_ARRAYS[name])}"
                f"({n_tokens},)"
            )
        side[name] = arr
    user_keys = None
    if "user" in side:
        user_keys = read_json(path / "customers.json", what="a likewise corpus", max_bytes=MAX_VOCAB_BYTES)
        if not isinstance(user_keys, list) or not all(isinstance(k, str) for k in user_keys):
            raise CorruptModelError(f"corpus {path}: customers.json is not a list of strings")
    return side, user_keys


def _verify_checksums(path: Path, manifest: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    """Raise :class:`CorruptModelError` naming the first array whose sha256 differs from the manifest."""
    expected = manifest.get("sha256")
    for name, arr in arrays.items():
        want = expected.get(name) if isinstance(expected, dict) else None
        if not isinstance(want, str):
            raise CorruptModelError(f"corpus {path}: manifest.json has no sha256 for {name}")
        got = _array_sha256(arr)
        if got != want:
            raise CorruptModelError(
                f"corpus {path}: {path / name} has sha256 {got}, the manifest expects {want} "
                "(the file is corrupt; rebuild the corpus)"
            )


def _verify_files(path: Path, manifest: dict[str, Any]) -> None:
    """Raise :class:`CorruptModelError` when ``vocab.json`` or ``counts.npy`` differs from the manifest.

    Swapping either for another of the same length changes every key's identity or frequency without
    any shape check noticing, so their size and sha256 are recorded at build time and compared here.
    """
    files = manifest.get("files")
    if files is None:
        return  # written by a likewise that did not record them
    for name in (
        "vocab.json",
        "counts.npy",
        *(("customers.json",) if "user" in manifest.get("side", []) else ()),
    ):
        entry = files.get(name) if isinstance(files, dict) else None
        if not isinstance(entry, dict) or not isinstance(entry.get("sha256"), str):
            raise CorruptModelError(f"corpus {path}: manifest.json has no sha256 for {name}")
        size = (path / name).stat().st_size
        got = file_sha256(path / name) if size == entry.get("bytes") else None
        if got != entry["sha256"]:
            found = f"sha256 {got}" if got else f"{size} bytes (the manifest says {entry.get('bytes')})"
            raise CorruptModelError(
                f"corpus {path}: {path / name} has {found}, the manifest expects sha256 {entry['sha256']} "
                "(the file was changed or replaced; rebuild the corpus)"
            )


# ------------------------------------------------------------------------------------ building


def _check_build_args(min_count: int, max_items: int | None) -> None:
    if isinstance(min_count, bool) or not isinstance(min_count, int | np.integer) or min_count < 1:
        raise InputError(f"min_count == {min_count!r}, must be an int >= 1")
    if max_items is not None and (
        isinstance(max_items, bool) or not isinstance(max_items, int | np.integer) or max_items < 1
    ):
        raise InputError(f"max_items == {max_items!r}, must be an int >= 1 or None")


def _describe(spec: InputSpec, files: list[Path], fmt: str) -> dict[str, Any]:
    source = readers.is_dataset(spec)  # a query or a dataset: what it read, not its copy's path
    local = [str(Path(p).expanduser().resolve()) for p in spec.paths]
    return {
        "paths": [redact(p) for p in spec.paths] if source else local,  # a URL without its secrets
        **({"source": readers.describe_source(spec)} if source else {}),
        "format": fmt,
        "delimiter": spec.delimiter,
        "basket_col": spec.basket_col,
        "item_col": spec.item_col,
        "order_col": spec.order_col,
        **spec.extras(),
        "n_files": len(files),
    }


def cache_key(
    spec: InputSpec, files: list[Path], *, min_count: int, max_items: int | None, what: str = "item"
) -> str:
    """The sha256 (hex) naming a compiled corpus in the cache.

    It covers :data:`FORMAT_VERSION`, the spec with absolute paths, each input file's absolute path,
    size and the sha256 of its bytes (read in 1 MiB chunks: a file rewritten with the same size and
    modification time still gets a new key), the length text lines and log orders are cut at
    (:data:`~likewise.readers.MAX_SEQUENCE_LENGTH`), ``min_count``, ``max_items`` and ``what``.
    """
    if spec.attrs and not Path(spec.attrs).is_file():
        raise InputError(f"item attributes file {spec.attrs!r} does not exist (or is not a file)")
    stats: list[Any] = [readers.identity(spec)] if readers.is_dataset(spec) else []  # rows read, not files
    for f in [*files, *([Path(spec.attrs)] if spec.attrs else [])]:  # the attribute table's bytes too
        stats.append([str(f.resolve()), f.stat().st_size, file_sha256(f)])
    payload = {
        "format_version": FORMAT_VERSION,
        "spec": {
            "paths": [str(Path(p).expanduser().resolve()) for p in spec.paths],
            "format": spec.format,
            "delimiter": spec.delimiter,
            "basket_col": spec.basket_col,
            "item_col": spec.item_col,
            "order_col": spec.order_col,
            **spec.extras(),  # only when given, so the keys of corpora without them stay as they were
        },
        "files": stats,
        "max_sequence_length": readers.text.MAX_SEQUENCE_LENGTH,  # text lines and log orders are cut at it
        "orders_cut": True,  # log orders are cut too (corpora cached before were not)
        "min_count": int(min_count),
        "max_items": None if max_items is None else int(max_items),
        "what": what,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()


def build_corpus(
    spec: InputSpec,
    *,
    min_count: int = 1,
    max_items: int | None = None,
    cache_dir: str | Path | None = None,
    what: str = "item",
    progress: bool = False,
) -> Corpus:
    """Compile ``spec`` into a corpus once, and reuse it while the input files are unchanged.

    Parameters
    ----------
    spec : InputSpec
        Text files or a transaction log (see :class:`~likewise.readers.InputSpec`).
    min_count : int
        Items seen fewer times are removed from their sequences.
    max_items : int, optional
        Keep only the most frequent ``max_items`` items (ties by key).
    cache_dir : str or Path, optional
        Where compiled corpora live; default ``$LIKEWISE_CACHE``, else ``~/.cache/likewise/corpora``.
        The cache is kept under ``$LIKEWISE_CACHE_MAX`` bytes (default 2 GiB), least recently used
        entries evicted (:mod:`likewise.data.corpus_cache`).
    what : str
        What an item is ("item", "word", "product"), used in messages and stored in the vocabulary.
    progress : bool
        Print progress lines to stderr.

    Returns
    -------
    Corpus
        Memory-mapped; ``corpus.path`` is ``cache_dir / cache_key(...)``.

    Notes
    -----
    The cache key covers each file's content (:func:`cache_key` hashes every input file, one read
    of the input, much cheaper than compiling it). A cached corpus is verified when it is opened (the
    checksums of its arrays, vocabulary and counts, recorded when it was built); one that fails is
    rebuilt. Concurrent builds of the same input are safe: each builds in its own temporary folder and
    the first rename wins.
    """
    if not isinstance(spec, InputSpec):
        raise InputError(f"spec must be an InputSpec, got {type(spec).__name__}")
    _check_build_args(min_count, max_items)
    files = [] if readers.is_dataset(spec) else readers.resolve_files(spec)
    fmt = readers.input_format(spec, files) if files else "parquet"  # a query's rows: a Parquet copy
    bound = cache_max()  # a bad LIKEWISE_CACHE_MAX is refused before any work
    root = cache_root(cache_dir)
    final = root / cache_key(spec, files, min_count=min_count, max_items=max_items, what=what)[:32]
    tidy(final)  # drop what builds that were killed left behind
    broken = False
    if final.exists():
        try:
            corpus = Corpus.open(final, verify=True)
        except CorruptModelError:
            broken = True  # rebuild below and replace it
        else:
            if progress:
                readers.log_progress(f"using cached corpus {final}", progress)
            touch(final)
            evict(root, final, bound)
            return corpus
    description = _describe(spec, files, fmt) | {"min_count": min_count, "max_items": max_items}
    # a broken cached corpus is replaced; one that a concurrent builder of the same key published
    # meanwhile is kept (it is identical)
    with atomic_folder(final, replace=broken) as tmp:
        if fmt == "text":
            compile_sequences(
                readers.iter_text_chunks(spec, files),
                tmp,
                min_count=min_count,
                max_items=max_items,
                what=what,
                description=description,
                progress=progress,
            )
        else:
            compile_log(
                spec,
                files,
                tmp,
                min_count=min_count,
                max_items=max_items,
                what=what,
                description=description,
                progress=progress,
            )
    touch(final)
    evict(root, final, bound)  # least recently used entries go, never this one (docs/reliability.md)
    return Corpus.open(final, verify=False)  # just written (or by a concurrent builder of the same key)


def _chunks_of(sequences: Iterable[Sequence[str]], what: str) -> Iterator[list[Sequence[str]]]:
    it = iter(sequences)
    while True:
        chunk = list(islice(it, SEQ_CHUNK))
        if not chunk:
            return
        for i, s in enumerate(chunk):
            if isinstance(s, str | bytes):
                raise InputError(
                    f"each sequence must be a list of {what} keys, got the string {s[:50]!r} (split it first)"
                )
            if isinstance(s, set | frozenset):
                # A set's order is Python's hash order, which changes from process to process for strings:
                # sorted, the same baskets give the same corpus (and deterministic training the same vectors).
                chunk[i] = sorted(s, key=str)
        yield chunk


def corpus_from_sequences(
    sequences: Iterable[Sequence[str]] | readers.SparseBaskets | Any,
    out_dir: str | Path,
    *,
    min_count: int = 1,
    max_items: int | None = None,
    what: str = "item",
) -> Corpus:
    """Compile an iterable of key sequences, or the rows of a sparse matrix, into a corpus folder.

    Parameters
    ----------
    sequences : iterable of sequence of str, SparseBaskets or scipy.sparse matrix
        Each a basket / session / sentence; read once (a generator is fine). A matrix's rows are
        baskets of the columns holding a value > 0 (:func:`likewise.readers.sparse_baskets`; a matrix
        given bare has the column numbers as keys), compiled as its rows listed as keys would be.
    out_dir : str or Path
        The corpus folder to create. An existing corpus there is replaced; an existing folder
        holding anything else raises :class:`InputError`.
    min_count, max_items, what
        As in :func:`build_corpus`.

    Returns
    -------
    Corpus
        Memory-mapped from ``out_dir``.
    """
    _check_build_args(min_count, max_items)
    final = Path(out_dir).expanduser()
    _check_out_dir(final)  # before the work: a folder that is not a corpus is refused now
    matrix = readers.sparse_baskets(sequences) if readers.is_sparse(sequences) else sequences
    source = "matrix" if isinstance(matrix, readers.SparseBaskets) else "sequences"
    args: dict[str, Any] = {"min_count": min_count, "max_items": max_items, "what": what}
    args["description"] = {"source": source, "min_count": min_count, "max_items": max_items}
    with atomic_folder(final) as tmp:
        if source == "matrix":
            compile_matrix(matrix, tmp, **args)
        else:
            compile_sequences(_chunks_of(sequences, what), tmp, **args, progress=False)
        if final.is_dir() and not _check_out_dir(final):  # checked again: it may have changed meanwhile
            final.rmdir()  # empty
    return Corpus.open(final, verify=False)  # just written


def _check_out_dir(final: Path) -> bool:
    """True when ``final`` is an existing corpus to replace; raise when it holds something else.

    Only a folder whose ``manifest.json`` parses and says ``"format": "likewise-corpus"`` is replaced:
    a saved embeddings folder (or anything else with a manifest) is never deleted.
    """
    if not final.exists():
        return False
    if not final.is_dir():
        raise InputError(f"out_dir {str(final)!r} exists and is not a folder")
    mpath = final / "manifest.json"
    if mpath.is_file():
        try:
            manifest = read_json(mpath, what="a likewise corpus")
        except CorruptModelError as e:
            raise InputError(
                f"out_dir {str(final)!r} holds a manifest.json that cannot be read ({e}); "
                "it is not replaced: choose another out_dir"
            ) from None
        fmt = manifest.get("format") if isinstance(manifest, dict) else None
        if fmt == FORMAT:
            return True
        raise InputError(
            f"out_dir {str(final)!r} holds a {fmt!r} folder (manifest.json), not a likewise corpus "
            f"(format {FORMAT!r}); it is not replaced: choose another out_dir"
        )
    if any(final.iterdir()):
        raise InputError(f"out_dir {str(final)!r} exists and is not empty (and is not a likewise corpus)")
    return False
