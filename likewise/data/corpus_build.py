"""Writing a corpus folder: a streamed ``.npy`` writer, and the compilers of sequences and of logs.

:mod:`likewise.data.corpus` chooses the folder (a cache key, an explicit path) and publishes it atomically;
this module fills the temporary folder it is given. See :mod:`likewise.data.corpus` for the layout.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from .. import readers
from .._fileio import file_entry, finite_json, write_npy, write_text
from ..errors import InputError
from ..readers import InputSpec
from .vocab import Vocab, ranked_vocab

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "CorpusWriter",
    "NPY_HEADER",
    "NpyStreamWriter",
    "SEQ_CHUNK",
    "SIDE_ARRAYS",
    "compile_log",
    "compile_matrix",
    "compile_sequences",
    "make_ranked_vocab",
    "make_vocab",
]

#: Version of the on-disk corpus layout (and of the basket order); part of the cache key.
FORMAT_VERSION = 1
#: The ``format`` field of a corpus manifest; a folder whose manifest says otherwise is not a corpus.
FORMAT = "likewise-corpus"
NPY_HEADER = 128  # bytes; fixed so the header can be rewritten with the final length
_BLOCK_TOKENS = 1 << 20  # tokens remapped at a time (bounds the transient arrays to ~20 MiB)
SEQ_CHUNK = 1 << 16  # in-memory sequences taken at a time


class NpyStreamWriter:
    """Append to a 1-D ``.npy`` file whose length is known only at the end.

    The header is padded to a fixed size and rewritten on :meth:`close`; ``np.load`` reads the file
    like any other (padding with spaces is allowed by the format).
    """

    def __init__(self, path: Path, dtype: str) -> None:
        self.dtype = np.dtype(dtype)
        self.n = 0
        self.sha = hashlib.sha256()
        self._fh = open(path, "wb")  # noqa: SIM115 - closed in close()
        self._fh.write(self._header(0))

    def _header(self, n: int) -> bytes:
        text = f"{{'descr': '{self.dtype.str}', 'fortran_order': False, 'shape': ({n},), }}"
        text = text.ljust(NPY_HEADER - 10 - 1) + "\n"
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode("latin1")

    def write(self, arr: np.ndarray) -> None:
        arr = np.ascontiguousarray(arr, dtype=self.dtype)
        if arr.size:
            self._fh.write(arr.data)
            self.sha.update(arr.data)
            self.n += arr.size

    def close(self) -> None:
        if self._fh.closed:
            return
        self._fh.seek(0)
        self._fh.write(self._header(self.n))
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()


#: Side arrays a log may carry beside its ids (one value per kept token) and their dtypes: the customer,
#: the time and, in a log of orders with customers, a 64-bit hash of the line's order id (of the
#: (customer, order) pair with ``basket_scope="customer"``), what an update checks repeated orders by.
SIDE_ARRAYS = {"user": "<i4", "time": "<i8", "order": "<u8"}


def cut_lengths(lengths: np.ndarray, cap: int) -> tuple[np.ndarray, int]:
    """Each sequence longer than ``cap`` cut into consecutive pieces of ``cap`` (the last shorter).

    Returns the new lengths and how many sequences were cut; ``lengths`` itself when none was.
    """
    pieces = np.maximum(1, -(-lengths // cap))
    n_cut = int(np.count_nonzero(pieces > 1))
    if n_cut == 0:
        return lengths, 0
    out = np.full(int(pieces.sum()), cap, dtype=np.int64)
    out[np.cumsum(pieces) - 1] = lengths - (pieces - 1) * cap  # each sequence's last piece
    return out, n_cut


class CorpusWriter:
    """Streams ``(ids, lengths)`` chunks into ``ids.npy`` / ``offsets.npy``, dropping ids == -1.

    ``side`` names the side arrays (of :data:`SIDE_ARRAYS`) each chunk brings: they are written to
    ``<name>.npy``, filtered like the ids, so token ``t``'s customer is ``user[t]``. With ``max_length``
    a sequence of more input ids than that is cut into consecutive sequences of at most that many
    (before ids == -1 are dropped, as a text line is cut by its items as read); ``cut_sequences``
    counts them and the manifest records it.
    """

    def __init__(self, folder: Path, side: Sequence[str] = (), *, max_length: int | None = None) -> None:
        self.folder = folder
        self.max_length = max_length
        self.cut_sequences = 0
        self.cut_at = max_length  # what the manifest records (a writer of pieces cut before says so too)
        self.side = {name: NpyStreamWriter(folder / f"{name}.npy", SIDE_ARRAYS[name]) for name in side}
        self.ids = NpyStreamWriter(folder / "ids.npy", "<i4")
        self.offsets = NpyStreamWriter(folder / "offsets.npy", "<i8")
        self.offsets.write(np.zeros(1, dtype=np.int64))
        self.n_tokens = 0
        self.n_sequences = 0
        self.dropped_tokens = 0
        self.dropped_sequences = 0
        self.input_tokens = 0
        self.input_sequences = 0

    def append(self, ids: np.ndarray, lengths: np.ndarray, side: dict[str, np.ndarray] | None = None) -> None:
        """Add sequences: ``ids`` concatenated (-1 = dropped item), ``lengths`` per sequence, and the
        side arrays named at construction (aligned with ``ids``)."""
        side = side or {}
        if set(side) != set(self.side):
            raise InputError(
                f"side arrays {sorted(side)} given, the corpus was opened for {sorted(self.side)}"
            )
        self.input_tokens += len(ids)
        self.input_sequences += len(lengths)
        if self.max_length is not None:
            lengths, n_cut = cut_lengths(np.asarray(lengths, dtype=np.int64), self.max_length)
            self.cut_sequences += n_cut
        kept = ids >= 0
        n_kept = int(np.count_nonzero(kept))
        if n_kept != len(ids):
            csum = np.zeros(len(ids) + 1, dtype=np.int64)
            np.cumsum(kept, out=csum[1:])
            bounds = np.zeros(len(lengths) + 1, dtype=np.int64)
            np.cumsum(lengths, out=bounds[1:])
            lengths = csum[bounds[1:]] - csum[bounds[:-1]]
            ids = ids[kept]
            side = {name: values[kept] for name, values in side.items()}
            self.dropped_tokens += int(kept.size - n_kept)
        nonempty = lengths > 0
        if not nonempty.all():
            self.dropped_sequences += int(nonempty.size - np.count_nonzero(nonempty))
            lengths = lengths[nonempty]
        self.ids.write(ids)
        for name, values in side.items():
            self.side[name].write(values)
        self.offsets.write(self.n_tokens + np.cumsum(lengths, dtype=np.int64))
        self.n_tokens += len(ids)
        self.n_sequences += len(lengths)

    def finish(
        self, vocab: Vocab, description: dict[str, Any], user_keys: list[str] | None = None
    ) -> dict[str, Any]:
        """Close the arrays and write the vocabulary (and ``customers.json``) and the manifest; return
        the manifest."""
        self.ids.close()
        self.offsets.close()
        for w in self.side.values():
            w.close()
        if user_keys is not None:
            write_text(self.folder / "customers.json", json.dumps(user_keys, ensure_ascii=False))
        write_npy(self.folder / "counts.npy", vocab.counts.astype(np.int64))
        write_text(self.folder / "vocab.json", json.dumps(vocab.keys, ensure_ascii=False))
        manifest = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "n_sequences": self.n_sequences,
            "n_tokens": self.n_tokens,
            "vocab_size": len(vocab),
            "what": vocab.what,
            "input": description,
            "input_sequences": self.input_sequences,
            "input_tokens": self.input_tokens,
            "dropped_tokens": self.dropped_tokens,
            "dropped_sequences": self.dropped_sequences,
            "cut_sequences": self.cut_sequences,
            "max_sequence_length": self.cut_at,
            "dropped_keys": vocab.dropped.to_dict() if vocab.dropped is not None else None,
            "sha256": {
                "ids.npy": self.ids.sha.hexdigest(),
                "offsets.npy": self.offsets.sha.hexdigest(),
                **{f"{name}.npy": w.sha.hexdigest() for name, w in self.side.items()},
            },
            # the whole files (not only their data) of the small ones, as a saved space lists them
            "files": {
                name: file_entry(self.folder / name)
                for name in (
                    "vocab.json",
                    "counts.npy",
                    *(("customers.json",) if user_keys is not None else ()),
                )
            },
        }
        if self.side:
            manifest["side"] = sorted(self.side)
        write_text(self.folder / "manifest.json", finite_json(manifest, "a corpus manifest", indent=2))
        return manifest

    def close(self) -> None:
        """Close the arrays without a manifest (a working corpus that is read back, or a failed one)."""
        self.abort()

    def abort(self) -> None:
        self.ids.close()
        self.offsets.close()
        for w in self.side.values():
            w.close()


def _empty_vocab_error(what: str, n_keys: int, top: str, n: int, min_count: int) -> InputError:
    if n_keys == 0:
        return InputError(f"the input holds no {what}s")
    return InputError(
        f"no {what} occurs at least min_count={min_count} times "
        f"(the most frequent, {top!r}, occurs {n} times): the corpus would be empty"
    )


def make_vocab(counts: dict[str, int], min_count: int, max_items: int | None, what: str) -> Vocab:
    vocab = Vocab.from_counts(counts, min_count=min_count, max_items=max_items, what=what)
    if len(vocab) == 0:
        top, n = max(counts.items(), key=lambda kc: kc[1]) if counts else ("", 0)
        raise _empty_vocab_error(what, len(counts), top, n, min_count)
    return vocab


def make_ranked_vocab(
    keys: list[str], counts: np.ndarray, min_count: int, max_items: int | None, what: str
) -> tuple[Vocab, np.ndarray]:
    """:func:`make_vocab` for parallel keys and counts; also where each vocabulary key was in ``keys``."""
    vocab, source = ranked_vocab(keys, counts, min_count=min_count, max_items=max_items, what=what)
    if len(vocab) == 0:
        top = int(np.argmax(counts)) if len(counts) else 0
        raise _empty_vocab_error(
            what, len(keys), keys[top] if keys else "", int(counts.max(initial=0)), min_count
        )
    return vocab, source


def compile_sequences(
    chunks: Iterable[Sequence[Sequence[str]]],
    folder: Path,
    *,
    min_count: int,
    max_items: int | None,
    what: str,
    description: dict[str, Any],
    progress: bool,
) -> dict[str, Any]:
    """One pass over key sequences -> provisional ids on disk -> frequency-sorted corpus in ``folder``."""
    index: defaultdict[str, int] = defaultdict()
    index.default_factory = index.__len__  # a new key gets the next id: no per-token Python call
    get = index.__getitem__
    prov_ids, prov_lengths = folder / "prov-ids.bin", folder / "prov-lengths.bin"
    t0 = time.perf_counter()
    n_tokens = 0
    with open(prov_ids, "wb") as fi, open(prov_lengths, "wb") as fl:
        for chunk in chunks:
            lengths = np.fromiter(map(len, chunk), dtype=np.int64, count=len(chunk))
            n = int(lengths.sum())
            flat = np.fromiter(map(get, chain.from_iterable(chunk)), dtype=np.int32, count=n)
            fi.write(flat.data)
            fl.write(lengths.data)
            n_tokens += n
    keys = list(index)
    # The factory is a bound method of the dict itself: a reference cycle that only the cyclic
    # collector would free. Break it so the index (every distinct key) goes now.
    index.default_factory = None
    del index, get
    bad = next((k for k in keys if not isinstance(k, str)), None)
    if bad is not None:
        raise InputError(f"{what} keys must be str, got {type(bad).__name__} {bad!r}")
    # str subclasses (numpy.str_ from a string array) hash and compare like the plain str, so the
    # index finds them by the plain key; store plain str so vocab.json and Vocab see one type.
    keys = [k if type(k) is str else str(k) for k in keys]
    if progress:
        dt = time.perf_counter() - t0
        readers.log_progress(
            f"read {n_tokens:,} tokens, {len(keys):,} distinct {what}s in {dt:.1f}s", progress
        )
    n_seq = prov_lengths.stat().st_size // 8
    if n_tokens == 0:
        raise InputError(f"the input holds no {what}s ({n_seq} sequences, all empty)")
    # Provisional ids are read in blocks with plain reads, not a memory map: mapped pages would count
    # in this process's resident memory and grow it with the corpus.
    counts = np.zeros(len(keys), dtype=np.int64)
    with open(prov_ids, "rb") as fh:
        for _ in range(0, n_tokens, _BLOCK_TOKENS):
            counts += np.bincount(np.fromfile(fh, dtype=np.int32, count=_BLOCK_TOKENS), minlength=len(keys))
    vocab, source = make_ranked_vocab(keys, counts, min_count, max_items, what)
    del keys
    lut = np.full(len(counts), -1, dtype=np.int32)
    lut[source] = np.arange(len(vocab), dtype=np.int32)
    writer = CorpusWriter(folder)
    try:
        seq = 0
        with open(prov_ids, "rb") as fh, open(prov_lengths, "rb") as fl:
            while seq < n_seq:
                fl.seek(seq * 8)  # plain reads here too: a map of the lengths would grow with the corpus
                block = np.fromfile(fl, dtype=np.int64, count=SEQ_CHUNK * 16)
                csum = np.cumsum(block)
                cut = max(1, int(np.searchsorted(csum, _BLOCK_TOKENS, side="right")))
                block, n = block[:cut], int(csum[cut - 1])
                writer.append(lut[np.fromfile(fh, dtype=np.int32, count=n)], block)
                seq += cut
    except BaseException:
        writer.abort()
        raise
    prov_ids.unlink()
    prov_lengths.unlink()
    manifest = writer.finish(vocab, description)
    if progress:
        dt = time.perf_counter() - t0
        readers.log_progress(
            f"compiled {n_tokens:,} tokens in {dt:.1f}s ({n_tokens / max(dt, 1e-9):,.0f} tokens/s)", progress
        )
    return manifest


def compile_matrix(
    baskets: readers.SparseBaskets,
    folder: Path,
    *,
    min_count: int,
    max_items: int | None,
    what: str,
    description: dict[str, Any],
) -> dict[str, Any]:
    """The rows of a matrix -> a frequency-sorted corpus in ``folder``, with no Python object per row.

    The column numbers are already packed ids: counting them gives the vocabulary (the columns no row
    holds are not keys of the input, as a key never seen in sequences is not), and one table lookup
    maps a block of them to vocabulary ids. The corpus is the one :func:`compile_sequences` writes for
    the rows as lists of their columns' keys, except that the columns no row holds are noted in
    ``vocab.dropped`` (reason ``"empty"``): a user names the columns of the matrix they built.
    """
    indptr, indices = baskets.indptr, baskets.indices
    counts = np.bincount(indices, minlength=baskets.n_items).astype(np.int64)
    seen = np.flatnonzero(counts)
    keys = baskets.item_keys
    vocab, source = make_ranked_vocab(
        [keys[c] for c in seen.tolist()], counts[seen], min_count, max_items, what
    )
    empty = np.flatnonzero(counts == 0)
    if len(empty) and vocab.dropped is not None:  # noted, so that a query naming one says why it is absent
        vocab = vocab.with_dropped(vocab.dropped.with_empty([keys[c] for c in empty.tolist()]))
    lut = np.full(baskets.n_items, -1, dtype=np.int32)
    lut[seen[source]] = np.arange(len(vocab), dtype=np.int32)
    writer = CorpusWriter(folder)
    try:
        row = 0
        while row < baskets.n_rows:  # blocks of about _BLOCK_TOKENS tokens, at least one row
            end = int(np.searchsorted(indptr, indptr[row] + _BLOCK_TOKENS, side="right")) - 1
            end = min(max(end, row + 1), baskets.n_rows)
            writer.append(lut[indices[indptr[row] : indptr[end]]], np.diff(indptr[row : end + 1]))
            row = end
    except BaseException:
        writer.abort()
        raise
    return writer.finish(vocab, description)


def compile_log(
    spec: InputSpec,
    files: list[Path],
    folder: Path,
    *,
    min_count: int,
    max_items: int | None,
    what: str,
    description: dict[str, Any],
    progress: bool,
) -> dict[str, Any]:
    if readers.is_dataset(spec):  # a query or a dataset: its rows copied once, then read as a file
        staged = readers.stage(spec, folder / "source.parquet", progress=progress)
        try:
            with readers.named_as(Path(staged.paths[0]), readers.label_of(spec)):
                return compile_log(
                    staged,
                    readers.resolve_files(staged),
                    folder,
                    min_count=min_count,
                    max_items=max_items,
                    what=what,
                    description=description,
                    progress=progress,
                )
        finally:
            Path(staged.paths[0]).unlink(missing_ok=True)
    t0 = time.perf_counter()
    scan = readers.scan_log(spec, files, progress=progress)
    # the log's own rows: a summary's "lines" (input_tokens also counts the attribute tokens added)
    description = {**description, "log_rows": int(scan.n_rows)}
    if scan.skipped:  # rows left out (on_bad_rows="skip"), by cause: the summary and emb.report say so
        description["skipped_rows"] = scan.skipped
    vocab = make_vocab(dict(zip(scan.keys, scan.counts.tolist(), strict=True)), min_count, max_items, what)
    scratch = folder / "spill"
    scratch.mkdir()
    side = [name for name, col in (("user", spec.user_col), ("time", spec.time_col)) if col]
    if spec.order_ids:
        side.append("order")
    if spec.attrs is not None:
        trim = (min_count, max_items, what)
        manifest = _compile_with_attrs(spec, scan, folder, scratch, side, trim, description)
        shutil.rmtree(scratch, ignore_errors=True)
        return manifest
    # an order longer than a text line may be is cut as the line is (one order's rows are grouped in
    # memory, but training and the completion model then see pieces of bounded length)
    writer = CorpusWriter(folder, side, max_length=readers.text.MAX_SEQUENCE_LENGTH)
    try:
        for ids, lengths, values in readers.iter_log_groups(
            spec, scan, vocab.keys, scratch, progress=progress
        ):
            writer.append(ids, lengths, values)
    except BaseException:
        writer.abort()
        raise
    shutil.rmtree(scratch, ignore_errors=True)
    manifest = writer.finish(vocab, description, scan.user_keys)
    if progress:
        dt = time.perf_counter() - t0
        readers.log_progress(
            f"compiled {scan.n_rows:,} rows in {dt:.1f}s ({scan.n_rows / max(dt, 1e-9):,.0f} rows/s)",
            progress,
        )
    return manifest


#: Tokens of a working corpus expanded with attribute tokens at a time (bounds the memory of the pass).
_EXPAND_TOKENS = 1 << 22


def _compile_with_attrs(
    spec: InputSpec,
    scan: Any,
    folder: Path,
    scratch: Path,
    side: list[str],
    trim: tuple[int, int | None, str],
    description: dict[str, Any],
) -> dict[str, Any]:
    """A log with item attributes: its items grouped into a working corpus of every item, then read back
    in bounded chunks twice, each item's tokens added (:func:`~likewise.readers.attrs.expand_tokens`):
    once to count items and tokens alike (so ``min_count`` trims both), once to write the corpus.
    Tokens join a basket once each (after its items); in sessions or ordered baskets they follow their
    item. A token's customer is -1 (it is no purchase) and its time that of the line it stands for."""
    from ..readers.attrs import expand_tokens, read_item_attributes
    from ..space.itemtypes import SIDE_TYPE, TYPE_SEP

    attributes = read_item_attributes(spec.attrs, spec.attrs_item_col)
    keys = list(scan.keys)
    prefix = f"{SIDE_TYPE}{TYPE_SEP}"
    clash = next((k for k in keys if k.startswith(prefix)), None)
    if clash is not None:
        raise InputError(
            f"item {clash!r} of the log starts with {prefix!r}, which names attribute tokens; rename such "
            "items, or train without item attributes"
        )
    tokens: dict[str, int] = {}
    per_item = [[tokens.setdefault(t, len(keys) + len(tokens)) for t in attributes.of(k) or ()] for k in keys]
    if not any(attributes.of(k) is not None for k in keys):
        raise InputError(
            f"no item of the log has a row in the item attributes (e.g. {keys[0]!r} is not among "
            f"{attributes.keys[:3]!r}); the first column, or attrs_item_col, must name the items"
        )
    indptr = np.zeros(len(keys) + len(tokens) + 1, dtype=np.int64)
    indptr[1 : len(keys) + 1] = np.cumsum([len(t) for t in per_item])
    indptr[len(keys) + 1 :] = indptr[len(keys)]
    flat = np.fromiter((t for toks in per_item for t in toks), np.int64)
    basket = spec.session_gap is None and spec.order_col is None
    work = folder / "items"
    work.mkdir()
    writer = CorpusWriter(work, side, max_length=readers.text.MAX_SEQUENCE_LENGTH)  # orders cut here
    try:
        for ids, lengths, values in readers.iter_log_groups(spec, scan, keys, scratch):
            writer.append(ids, lengths, values)
    finally:
        writer.close()
    arrays = {name: np.load(work / f"{name}.npy", mmap_mode="r") for name in ["ids", "offsets", *side]}

    # lines per chunk such that the expanded chunk stays near _EXPAND_TOKENS, however many tokens an item has
    step = max(1, _EXPAND_TOKENS // (1 + int(np.diff(indptr).max(initial=0))))

    def expanded():
        ids, offsets = arrays["ids"], arrays["offsets"]
        cuts = np.searchsorted(offsets, np.arange(0, int(offsets[-1]), step))
        for lo, hi in zip(cuts, [*cuts[1:], len(offsets) - 1], strict=True):
            if hi > lo:
                a, b = int(offsets[lo]), int(offsets[hi])
                out = expand_tokens(ids[a:b], offsets[lo : hi + 1] - a, indptr, flat, basket=basket)
                yield a, b, out

    counts = np.zeros(len(keys) + len(tokens), dtype=np.int64)
    for _, _, (e_ids, _, _, _) in expanded():
        counts += np.bincount(e_ids, minlength=len(counts))
    every = keys + list(tokens)
    vocab = make_vocab({every[i]: int(counts[i]) for i in np.flatnonzero(counts)}, *trim)
    lut = np.array([vocab.index.get(k, -1) for k in every], dtype=np.int32)
    out = CorpusWriter(folder, side)
    out.cut_sequences, out.cut_at = writer.cut_sequences, writer.cut_at  # recorded, not cut again
    try:
        for a, b, (e_ids, e_offsets, origin, is_token) in expanded():
            sides = {name: np.asarray(arrays[name][a:b])[origin] for name in side}
            if "user" in sides:
                sides["user"][is_token] = -1
            out.append(lut[e_ids], np.diff(e_offsets), sides)
    except BaseException:
        out.abort()
        raise
    arrays.clear()  # the working corpus's memory maps close before it goes
    shutil.rmtree(work, ignore_errors=True)
    return out.finish(vocab, description | {"attributes": attributes.spec}, scan.user_keys)
