"""Read baskets, sessions and sentences from text files and transaction logs, streamed.

Two kinds of input:

* **text** -- one sentence / basket / session per line, items separated by whitespace (or a
  ``delimiter``); plain, ``.gz``, ``.bz2`` or ``.zst``. :func:`iter_text_sequences` yields one
  ``list[str]`` per non-blank line; :func:`iter_text_chunks` yields the same lines in lists of a few
  megabytes so the corpus builder pays the Python price per line, not per token.
* **transaction logs** -- CSV/TSV (optionally compressed), Parquet or JSON Lines with one row per
  (basket, item) pair, e.g. ``order_id,customer_id,product_id,ts``. The log need not be sorted.
  :func:`scan_log` (pass 1) counts the items; :func:`iter_log_groups` (pass 2) groups rows into
  baskets. Neither builds a Python object per row.

How a log is grouped (pass 2)
-----------------------------
Record batches are streamed (``pyarrow.csv.open_csv``, ``ParquetFile.iter_batches``,
``pyarrow.json.open_json``); item keys are mapped to vocabulary ids with ``pc.index_in``; each
basket key gets a fixed 64-bit hash (splitmix64 of an integer key; a vectorised tabulation hash of the
UTF-8 bytes of a string key). The (hash, basket, order, item id) rows are range-partitioned on the
hash into ``P`` Arrow IPC spill files, ``P`` chosen from the size measured in pass 1 so that one
partition fits in :data:`GROUP_MEMORY_BUDGET` (512 MiB) with room for sorting. Each partition is then
read back and stably sorted by (hash, basket, order column); Arrow's sort is stable, so items of a
basket keep file order unless ``order_col`` is given (then they follow it, ties in file order).

**Basket order in the corpus**: ascending by the basket hash, ties by basket key. That order does not
depend on the row order of the log or on ``P`` (the partitions are hash *ranges*, so concatenating them
is the global hash order) -- in effect a deterministic shuffle, which is also what SGD wants.

Item keys become strings: text is kept as written (CSV items are read as text), integers are written
without ``.0`` (``12`` and ``12.0`` both give ``"12"``). Basket keys compare as int64 when every batch
has an integer basket column of a type that fits int64 (any but uint64), otherwise as strings. A null or
empty (``""``) basket or item is an error that names the file and the row.

Empty files: a file named explicitly that has no data (0 bytes, a header-only CSV, a 0-row Parquet
file, a text file with no non-blank line) is an error; a file found by expanding a folder may be
empty (Spark writes such parts for empty partitions) and is skipped, as long as the whole input has
some data.

Why pyarrow (measured)
----------------------
``bench/group_logs.py --rows N`` writes a seeded, unsorted ``order_id,customer_id,product_id,ts`` CSV
and runs each method in a fresh process (2 shared cores; wall time and peak RSS). likewise does the
whole job (count, vocabulary, ids, group, write the compiled corpus); the others only group:

==========================  ==================  ===================
method                      5 M rows (129 MiB)  25 M rows (668 MiB)
==========================  ==================  ===================
likewise (this module)      2.7 s,   384 MiB    15.0 s,   395 MiB
likewise, 32 MiB budget     2.6 s,   389 MiB    12.9 s,   398 MiB
pyarrow read_csv + sort_by  2.1 s,   551 MiB    13.1 s, 2,223 MiB
polars group_by, eager      1.0 s,   564 MiB     6.3 s, 1,654 MiB
polars, streaming engine    1.1 s,   521 MiB     5.3 s, 1,669 MiB
duckdb list() GROUP BY      1.7 s,   768 MiB     9.2 s, 2,716 MiB
==========================  ==================  ===================

polars groups 2-3x faster, but at default settings every peer's memory grows with the log (each
materialises the groups), while likewise's stays flat: a log larger than RAM is the case that must
work, and pyarrow is already a core dependency (for Parquet), so grouping uses pyarrow + numpy with
its own spill. Sorting each partition with polars would be the way to win back wall time.

Arrow's streaming CSV reader reads several blocks ahead, so the block size sets the reader's share:
with 16 MiB blocks a bare ``open_csv`` loop held ~480 MiB in Arrow's pool and the whole build peaked
at 541 MiB (5 M rows) and 1 GB (25 M rows); the 4 MiB blocks used here cost no speed (1 MiB blocks:
259 MiB but ~20 % slower).

Text input compiles at ~2.1-2.4 M tokens/s (10 M tokens, 500 k lines, 163 k keys: 4.6 s, 357 MiB
peak; ``str.split`` and the per-token dict lookup are ~70% of it).
"""

from __future__ import annotations

import bz2
import gzip
import io
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError

__all__ = [
    "FORMATS",
    "GROUP_MEMORY_BUDGET",
    "InputSpec",
    "LogScan",
    "as_arrow_table",
    "detect_format",
    "is_table",
    "iter_log_groups",
    "iter_text_chunks",
    "iter_text_sequences",
    "resolve_files",
    "scan_log",
    "write_table",
]

FORMATS = ("auto", "text", "csv", "parquet", "jsonl")
LOG_FORMATS = ("csv", "parquet", "jsonl")
COMPRESSION_SUFFIXES = {".gz": "gzip", ".bz2": "bz2", ".zst": "zstd", ".zstd": "zstd"}
_EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
}

#: Memory one partition of a log may take while it is sorted (bytes). Tests lower it to force spills.
GROUP_MEMORY_BUDGET = 512 * 2**20
#: Most spill files open at once during grouping (each partition is one file).
MAX_PARTITIONS = 1024
_BATCH_BYTES = 4 * 2**20  # CSV / JSON block size; Arrow reads several blocks ahead, so this caps memory
_PARQUET_BATCH_ROWS = 1 << 20
_TEXT_CHUNK_CHARS = 1 << 22  # characters of text handed out per chunk
_PARTITION_TARGET = 16 * 2**20  # bytes of rows per in-memory partition: sorts stay cache friendly


@dataclass(frozen=True)
class InputSpec:
    """Where the input is and how to read it.

    Parameters
    ----------
    paths : tuple of str
        Files and/or folders. A folder stands for its files (not sub-folders), sorted by name;
        names starting with ``.`` or ``_`` (hidden files, ``_SUCCESS`` markers) are skipped, and so
        are its files without data (empty shards). A file named here must hold data.
        A single ``str`` or ``Path`` is accepted and wrapped.
    format : {"auto", "text", "csv", "parquet", "jsonl"}
        ``"auto"`` decides per file by extension, ignoring a compression suffix: ``.csv``/``.tsv``
        -> csv, ``.parquet``/``.pq`` -> parquet, ``.jsonl``/``.ndjson`` -> jsonl, anything else -> text.
        All files of one input must have the same format.
    delimiter : str, optional
        Text: the item separator (None = any run of whitespace). CSV: the field separator
        (default ``","``, or a tab for ``.tsv``).
    basket_col, item_col : str, optional
        Logs: the columns naming the basket (order, session) and the item. Required for logs.
    order_col : str, optional
        Logs: a column that orders the items inside a basket (a timestamp, a position).
    """

    paths: tuple[str, ...]
    format: str = "auto"
    delimiter: str | None = None
    basket_col: str | None = None
    item_col: str | None = None
    order_col: str | None = None

    def __post_init__(self) -> None:
        paths = self.paths
        if isinstance(paths, str | os.PathLike):
            paths = (paths,)
        paths = tuple(os.fspath(p) for p in paths)
        if not paths:
            raise InputError("paths is empty: give at least one file or folder")
        object.__setattr__(self, "paths", paths)
        if self.format not in FORMATS:
            raise InputError(f"format == {self.format!r}, must be one of {', '.join(map(repr, FORMATS))}")
        if self.delimiter is not None and (not isinstance(self.delimiter, str) or self.delimiter == ""):
            raise InputError(f"delimiter == {self.delimiter!r}, must be a non-empty string or None")
        if self.format == "text" and (self.basket_col or self.item_col or self.order_col):
            raise InputError("basket_col, item_col and order_col apply to csv/parquet/jsonl logs, not text")


@dataclass
class LogScan:
    """What pass 1 over a log learned: item counts and the facts pass 2 needs."""

    keys: list[str]
    counts: np.ndarray
    n_rows: int
    basket_is_int: bool
    order_type: pa.DataType | None
    est_bytes: int  # bytes of the (hash, basket, order, id) rows once in memory
    files: list[Path] = field(default_factory=list)


# --------------------------------------------------------------------------------------------- files


def resolve_files(spec: InputSpec) -> list[Path]:
    """Expand ``spec.paths`` into the list of files to read, in order.

    Raises
    ------
    InputError
        A path does not exist, or a folder holds no input files.
    """
    files: list[Path] = []
    for raw in spec.paths:
        p = Path(raw).expanduser()
        if not p.exists():
            raise InputError(f"input path {raw!r} does not exist")
        if p.is_dir():
            inside = sorted(q for q in p.iterdir() if q.is_file() and not q.name.startswith((".", "_")))
            if not inside:
                raise InputError(f"folder {raw!r} holds no input files")
            files.extend(inside)
        else:
            files.append(p)
    return files


def _named_files(spec: InputSpec) -> set[Path]:
    """The paths given explicitly in ``spec`` (resolved), to tell them from files found in a folder."""
    return {Path(raw).expanduser().resolve() for raw in spec.paths}


def _no_data_error(spec: InputSpec, n_files: int, what: str) -> InputError:
    paths = ", ".join(map(repr, spec.paths))
    return InputError(f"the input ({paths}) is empty: none of its {n_files} file(s) has {what}")


class _EmptyFileError(InputError):
    """A file with no content at all; skipped when it came from a folder, an error when named."""


def detect_format(path: str | Path, format: str = "auto") -> str:
    """Format of one file: ``format`` itself unless it is ``"auto"``, then by extension."""
    if format != "auto":
        return format
    p = Path(path)
    suffixes = [s.lower() for s in p.suffixes]
    if suffixes and suffixes[-1] in COMPRESSION_SUFFIXES:
        suffixes = suffixes[:-1]
    return _EXTENSIONS.get(suffixes[-1], "text") if suffixes else "text"


def input_format(spec: InputSpec, files: list[Path]) -> str:
    """The one format shared by all ``files``; raises :class:`InputError` when they differ."""
    formats = {f: detect_format(f, spec.format) for f in files}
    kinds = sorted(set(formats.values()))
    if len(kinds) > 1:
        examples = ", ".join(f"{f.name!r} is {k}" for k in kinds for f in files if formats[f] == k)
        raise InputError(f"input mixes formats ({examples}); give files of one format or set format=")
    fmt = kinds[0]
    if fmt in LOG_FORMATS and not (spec.basket_col and spec.item_col):
        raise InputError(
            f"{fmt} input needs basket_col and item_col (--basket-col, --item-col) "
            f"(got basket_col={spec.basket_col!r}, "
            f"item_col={spec.item_col!r})"
        )
    if fmt == "text" and (spec.basket_col or spec.item_col or spec.order_col):
        raise InputError(
            f"{files[0]} is read as text (one basket per line) but basket_col/item_col are set; "
            "set format='csv', 'parquet' or 'jsonl' for a log"
        )
    return fmt


def _compression(path: Path) -> str | None:
    return COMPRESSION_SUFFIXES.get(path.suffix.lower())


# ---------------------------------------------------------------------------------------------- text


def _open_text(path: Path) -> IO[str]:
    comp = _compression(path)
    if comp == "gzip":
        return gzip.open(path, "rt", encoding="utf-8")
    if comp == "bz2":
        return bz2.open(path, "rt", encoding="utf-8")
    if comp == "zstd":
        import zstandard

        raw = open(path, "rb")  # noqa: SIM115 - closed through the wrapper
        reader = zstandard.ZstdDecompressor().stream_reader(raw, closefd=True)
        return io.TextIOWrapper(io.BufferedReader(reader, 1 << 20), encoding="utf-8")
    return open(path, encoding="utf-8")  # noqa: SIM115


def _split_delimited(line: str, delimiter: str) -> list[str]:
    return [t for t in map(str.strip, line.split(delimiter)) if t]


def iter_text_chunks(spec: InputSpec, files: list[Path] | None = None) -> Iterator[list[list[str]]]:
    """Yield the non-blank lines of text input, split into items, a few MB of text at a time.

    Parameters
    ----------
    spec : InputSpec
        The input; ``spec.delimiter`` separates items (None = whitespace; with a delimiter the
        whitespace around each item is removed and empty items are skipped).
    files : list of Path, optional
        The resolved files (default: ``resolve_files(spec)``).

    Yields
    ------
    list of list of str
        Consecutive lines, each a non-empty list of item keys.

    Raises
    ------
    InputError
        A file is unreadable or not UTF-8; a file named in ``spec.paths`` holds no non-blank line
        (an empty file found in a folder is skipped); or the whole input holds no non-blank line.
    """
    files = resolve_files(spec) if files is None else files
    delimiter = spec.delimiter
    named = _named_files(spec)
    total = 0
    for path in files:
        n_lines = 0
        try:
            with _open_text(path) as fh:
                while True:
                    lines = fh.readlines(_TEXT_CHUNK_CHARS)
                    if not lines:
                        break
                    if delimiter is None:
                        split = [ln.split() for ln in lines]
                    else:
                        split = [_split_delimited(ln, delimiter) for ln in lines]
                    split = [s for s in split if s]
                    if split:
                        n_lines += len(split)
                        yield split
        except UnicodeDecodeError as e:
            raise InputError(f"{path} is not UTF-8 text ({e.reason}); is it a csv/parquet/jsonl log?") from e
        except (OSError, EOFError) as e:
            raise InputError(f"cannot read {path} as text: {e}") from e
        except Exception as e:  # zstandard.ZstdError and friends
            if type(e).__module__.startswith("zstandard"):
                raise InputError(f"cannot read {path} as zstd-compressed text: {e}") from e
            raise
        if n_lines == 0 and path.resolve() in named:
            raise InputError(f"{path} is empty: it has no non-blank line")
        total += n_lines
    if total == 0:
        raise _no_data_error(spec, len(files), "a non-blank line")


def iter_text_sequences(spec: InputSpec) -> Iterator[list[str]]:
    """Yield one list of item keys per non-blank line of text input.

    Parameters
    ----------
    spec : InputSpec
        Text files and/or folders; ``.gz``, ``.bz2`` and ``.zst`` are decompressed on the fly.

    Yields
    ------
    list of str
        The items of one line, in order.
    """
    for chunk in iter_text_chunks(spec):
        yield from chunk


# ----------------------------------------------------------------------------------------- log batches


def _first_line(e: BaseException) -> str:
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


def _missing_column(path: Path, col: str, available: list[str]) -> InputError:
    return InputError(
        f"column {col!r} not found in {path}; available columns: {', '.join(map(repr, available))}"
    )


def _log_columns(spec: InputSpec) -> list[str]:
    cols = [spec.basket_col, spec.item_col]
    if spec.order_col:
        cols.append(spec.order_col)
    return [c for c in cols if c is not None]


def _csv_batches(path: Path, spec: InputSpec, cols: list[str]) -> Iterator[pa.RecordBatch]:
    import pyarrow.csv as pcsv

    delimiter = spec.delimiter
    if delimiter is None:
        stem_suffix = Path(path.stem).suffix.lower() if _compression(path) else path.suffix.lower()
        delimiter = "\t" if stem_suffix == ".tsv" else ","
    if len(delimiter) != 1:
        raise InputError(f"delimiter == {delimiter!r}, CSV needs a single character")
    # Basket and item are read as text: keys stay exactly as written, and a later block can never
    # disagree with the type Arrow guessed from the first one. Empty fields are nulls (and errors); a
    # quoted empty field ("") is read as '' and scan_log rejects it the same way.
    column_types = {spec.basket_col: pa.string(), spec.item_col: pa.string()}
    convert = pcsv.ConvertOptions(
        include_columns=cols,
        column_types=column_types,
        strings_can_be_null=True,
        null_values=[""],
        quoted_strings_can_be_null=False,
    )
    read = pcsv.ReadOptions(block_size=_BATCH_BYTES)
    parse = pcsv.ParseOptions(delimiter=delimiter)
    stream = pa.input_stream(str(path), compression=_compression(path))
    try:
        reader = pcsv.open_csv(stream, read_options=read, parse_options=parse, convert_options=convert)
    except (pa.ArrowInvalid, pa.ArrowKeyError) as e:
        stream.close()
        msg = str(e)
        if "Empty CSV file" in msg:
            raise _EmptyFileError(f"{path} is empty: no header line") from None
        if "include_columns" in msg or "does not exist" in msg:
            header = _csv_header(path, read, parse)
            for c in cols:
                if c not in header:
                    raise _missing_column(path, c, header) from None
        raise InputError(f"cannot read {path} as CSV: {_first_line(e)}") from None
    with stream:
        yield from reader


def _csv_header(path: Path, read, parse) -> list[str]:
    import pyarrow.csv as pcsv

    with pa.input_stream(str(path), compression=_compression(path)) as stream:
        return list(pcsv.open_csv(stream, read_options=read, parse_options=parse).schema.names)


def _jsonl_batches(path: Path, cols: list[str]) -> Iterator[pa.RecordBatch]:
    import pyarrow.json as pjson

    stream = pa.input_stream(str(path), compression=_compression(path))
    try:
        reader = pjson.open_json(stream, read_options=pjson.ReadOptions(block_size=_BATCH_BYTES))
    except pa.ArrowInvalid as e:
        stream.close()
        if "Empty JSON file" in str(e) or "Empty JSON stream" in str(e):
            raise _EmptyFileError(f"{path} is empty: no JSON record") from None
        raise InputError(f"cannot read {path} as JSON Lines: {_first_line(e)}") from None
    names = list(reader.schema.names)
    for c in cols:
        if c not in names:
            stream.close()
            raise _missing_column(path, c, names)
    with stream:
        for batch in reader:
            yield batch.select(cols)


def _parquet_batches(path: Path, cols: list[str]) -> Iterator[pa.RecordBatch]:
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(str(path))
    except (pa.ArrowInvalid, OSError) as e:
        raise InputError(f"cannot read {path} as Parquet: {_first_line(e)}") from None
    names = list(pf.schema_arrow.names)
    for c in cols:
        if c not in names:
            raise _missing_column(path, c, names)
    with pf:
        yield from pf.iter_batches(batch_size=_PARQUET_BATCH_ROWS, columns=cols)


def iter_log_batches(
    spec: InputSpec, files: list[Path], fmt: str
) -> Iterator[tuple[Path, int, pa.RecordBatch]]:
    """Yield ``(path, first_row, batch)`` with columns basket, item[, order] in that order.

    ``first_row`` is the 0-based row of the batch's first row within its file (header not counted).
    Raises :class:`InputError` for a missing column, an unreadable file, a file named in ``spec.paths``
    without data rows, or an input without data rows; a file without data rows found in a folder (an
    empty Spark part) is skipped.
    """
    cols = _log_columns(spec)
    named = _named_files(spec)
    total = 0
    for path in files:
        is_named = path.resolve() in named
        if path.stat().st_size == 0:
            if is_named:
                raise InputError(f"{path} is empty (0 bytes)")
            continue
        if fmt == "csv":
            batches = _csv_batches(path, spec, cols)
        elif fmt == "parquet":
            batches = _parquet_batches(path, cols)
        else:
            batches = _jsonl_batches(path, cols)
        row = 0
        try:
            for batch in batches:
                if batch.num_rows:
                    yield path, row, batch.select(cols)
                    row += batch.num_rows
        except _EmptyFileError:
            if is_named:
                raise
            continue
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as e:
            raise InputError(f"cannot read {path} as {fmt}: {_first_line(e)}") from None
        if row == 0 and is_named:
            raise InputError(f"{path} is empty: it has no data rows")
        total += row
    if total == 0:
        raise _no_data_error(spec, len(files), "data rows")


def _bad_row(kind: str, path: Path, first_row: int, name: str, mask: pa.Array) -> InputError:
    at = int(np.flatnonzero(mask.to_numpy(zero_copy_only=False))[0])
    return InputError(
        f"{kind} {name!r} value in {path} at data row {first_row + at + 1} (rows count from 1, "
        "header not counted); every row needs a basket and an item"
    )


def _check_nulls(path: Path, first_row: int, name: str, col: pa.Array) -> None:
    if col.null_count:
        raise _bad_row("null", path, first_row, name, col.is_null())


def _check_empty(path: Path, first_row: int, name: str, keys: pa.Array) -> None:
    """Reject empty keys (a quoted ``""`` in CSV, ``""`` in JSON or Parquet) like nulls."""
    empty = pc.equal(pc.binary_length(keys), 0)
    if pc.any(empty).as_py():
        raise _bad_row("empty", path, first_row, name, empty)


def _check_line_breaks(path: Path, first_row: int, name: str, keys: pa.Array) -> None:
    """Reject item keys holding a line break: one-per-line exports (text, TSV, word2vec) would split them."""
    broken = pc.match_substring_regex(keys, r"[\r\n]")
    if pc.any(broken).as_py():
        at = int(np.flatnonzero(broken.to_numpy(zero_copy_only=False))[0])
        raise InputError(
            f"{name!r} value {keys[at].as_py()!r} contains a line break, in {path} at data row "
            f"{first_row + at + 1} (rows count from 1, header not counted)"
        )


def _basket_fits_int64(t: pa.DataType) -> bool:
    """Integer basket keys are compared as int64; uint64 may not fit, so it is hashed as text."""
    return pa.types.is_integer(t) and t != pa.uint64()


def _as_strings(col: pa.Array) -> pa.Array:
    """Item / basket keys as a plain string array (ints without '.0': Arrow writes 12.0 as '12')."""
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    if col.type == pa.string():
        return col
    try:
        return pc.cast(col, pa.string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise InputError(f"cannot use values of type {col.type} as keys: {_first_line(e)}") from None


# --------------------------------------------------------------------------------------------- pass 1


def _merge_counts(parts: list[pa.Table]) -> pa.Table:
    table = pa.concat_tables(parts)
    return table.group_by("k").aggregate([("c", "sum")]).rename_columns(["k", "c"])


def scan_log(spec: InputSpec, files: list[Path] | None = None, *, progress: bool = False) -> LogScan:
    """Pass 1 over a log: count each item and check every row has a basket and an item.

    Parameters
    ----------
    spec : InputSpec
        A CSV, Parquet or JSON Lines log with ``basket_col`` and ``item_col``.
    files : list of Path, optional
        The resolved files (default: ``resolve_files(spec)``).
    progress : bool
        Print one line per file to stderr.

    Returns
    -------
    LogScan
        Item keys and counts (unsorted), the row count and size estimates for pass 2.
    """
    files = resolve_files(spec) if files is None else files
    fmt = input_format(spec, files)
    if fmt not in LOG_FORMATS:
        raise InputError(f"scan_log reads csv/parquet/jsonl logs, but {files[0]} is {fmt}")
    parts: list[pa.Table] = []
    pending = 0
    n_rows = 0
    est = 0
    basket_is_int = True
    order_types: list[pa.DataType] = []
    last_path = None
    for path, first_row, batch in iter_log_batches(spec, files, fmt):
        if progress and path != last_path:
            _log(f"counting items in {path}")
            last_path = path
        basket, item = batch.column(0), batch.column(1)
        _check_nulls(path, first_row, spec.basket_col or "", basket)
        _check_nulls(path, first_row, spec.item_col or "", item)
        if spec.order_col:
            order = batch.column(2)
            _check_nulls(path, first_row, spec.order_col, order)
            if order.type not in order_types:
                order_types.append(order.type)
            est += order.nbytes
        if _basket_fits_int64(basket.type):
            est += basket.nbytes
        else:
            basket_is_int = False
            basket_keys = _as_strings(basket)
            _check_empty(path, first_row, spec.basket_col or "", basket_keys)
            est += basket_keys.nbytes
        est += 12 * batch.num_rows
        n_rows += batch.num_rows
        item_keys = _as_strings(item)
        _check_empty(path, first_row, spec.item_col or "", item_keys)
        _check_line_breaks(path, first_row, spec.item_col or "", item_keys)
        vc = pc.value_counts(item_keys)
        parts.append(pa.table({"k": vc.field("values"), "c": vc.field("counts")}))
        pending += len(vc)
        if pending > 4_000_000 and len(parts) > 1:
            parts = [_merge_counts(parts)]
            pending = parts[0].num_rows
    merged = _merge_counts(parts)
    return LogScan(
        keys=merged.column("k").to_pylist(),
        counts=merged.column("c").to_numpy().astype(np.int64),
        n_rows=n_rows,
        basket_is_int=basket_is_int,
        order_type=_common_order_type(spec.order_col, order_types),
        est_bytes=est,
        files=files,
    )


def _common_order_type(name: str | None, types: list[pa.DataType]) -> pa.DataType | None:
    if not types:
        return None
    if len(types) == 1:
        return types[0]
    if all(pa.types.is_integer(t) for t in types):
        return pa.int64()
    if all(pa.types.is_integer(t) or pa.types.is_floating(t) for t in types):
        return pa.float64()
    if all(pa.types.is_string(t) or pa.types.is_large_string(t) for t in types):
        return pa.string()
    raise InputError(
        f"order column {name!r} has different types in different files ({', '.join(map(str, types))}); "
        "it must have one type to sort by"
    )


# --------------------------------------------------------------------------------------------- pass 2


def _mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser, vectorised over a uint64 array (wraps modulo 2**64)."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


_BYTE_TABLE = _mix64(np.arange(64 * 256, dtype=np.uint64)).reshape(64, 256)


def hash_keys(col: pa.Array) -> np.ndarray:
    """A fixed 64-bit hash of each basket key (int64 or string array), as uint64.

    The value depends only on the key, never on batching or platform, so the basket order it
    induces is reproducible.
    """
    if pa.types.is_integer(col.type):
        return _mix64(col.to_numpy(zero_copy_only=False).astype(np.int64).view(np.uint64))
    arr = col.cast(pa.large_binary())
    n = len(arr)
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset : arr.offset + n + 1]
    data_buf = arr.buffers()[2]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    lo, hi = int(offsets[0]), int(offsets[-1])
    rel = offsets - lo
    data = data[lo:hi]
    lengths = np.diff(rel)
    pos = np.arange(hi - lo, dtype=np.int64) - np.repeat(rel[:-1], lengths)
    contrib = _BYTE_TABLE[pos & 63, data]
    csum = np.zeros(len(data) + 1, dtype=np.uint64)
    np.cumsum(contrib, out=csum[1:])
    return _mix64((csum[rel[1:]] - csum[rel[:-1]]) ^ lengths.astype(np.uint64))


def n_partitions(est_bytes: int, budget: int) -> int:
    """Spill partitions needed so one partition (x3 for sorting) fits in ``budget`` bytes."""
    if budget < 1:
        raise InputError(f"memory budget == {budget}, must be >= 1 byte")
    return max(1, min(MAX_PARTITIONS, math.ceil(3 * est_bytes / budget)))


def _pass2_table(batch: pa.RecordBatch, value_set: pa.Array, scan: LogScan) -> pa.Table:
    basket = batch.column(0)
    basket = basket.cast(pa.int64()) if scan.basket_is_int else _as_strings(basket)
    ids = pc.index_in(_as_strings(batch.column(1)), value_set=value_set).fill_null(-1).cast(pa.int32())
    columns = {"h": pa.array(hash_keys(basket)), "b": basket}
    if scan.order_type is not None:
        order = batch.column(2)
        columns["o"] = order if order.type == scan.order_type else order.cast(scan.order_type)
    columns["i"] = ids
    return pa.table(columns)


def _group(table: pa.Table, ordered: bool) -> tuple[np.ndarray, np.ndarray]:
    """Sort one partition by (hash, basket, order) -- stably, so ties keep file order -- and cut it."""
    table = table.combine_chunks()
    n = table.num_rows
    h = table.column("h").to_numpy()
    order_np = None
    if ordered:
        o = table.column("o")
        if pa.types.is_integer(o.type) or pa.types.is_floating(o.type) or pa.types.is_temporal(o.type):
            order_np = o.to_numpy()
    if ordered and order_np is None:  # e.g. a string order column: let Arrow sort it
        return _group_arrow(table, ordered)
    # numpy's stable sorts on the hash alone; equal hashes of different baskets are checked below
    idx = np.lexsort((order_np, h)) if order_np is not None else np.argsort(h, kind="stable")
    h = h[idx]
    change = np.ones(n, dtype=bool)
    np.not_equal(h[1:], h[:-1], out=change[1:])
    if not pa.types.is_integer(table.column("b").type) and n > 1:
        # splitmix64 is a bijection on int64 keys, so only string keys can collide
        b = table.column("b").chunk(0).take(pa.array(idx))
        same_b = pc.equal(b.slice(1), b.slice(0, n - 1)).to_numpy(zero_copy_only=False)
        if np.any(~change[1:] & ~same_b):
            return _group_arrow(table, ordered)
    starts = np.flatnonzero(change)
    lengths = np.diff(np.append(starts, n)).astype(np.int64)
    ids = table.column("i").to_numpy()[idx].astype(np.int32, copy=False)
    return ids, lengths


def _group_arrow(table: pa.Table, ordered: bool) -> tuple[np.ndarray, np.ndarray]:
    keys = [("h", "ascending"), ("b", "ascending")] + ([("o", "ascending")] if ordered else [])
    table = table.sort_by(keys).combine_chunks()  # Arrow's sort is stable: ties keep file order
    h = table.column("h").to_numpy()
    b = table.column("b").chunk(0)
    n = table.num_rows
    change = np.ones(n, dtype=bool)
    if n > 1:
        same_b = pc.equal(b.slice(1), b.slice(0, n - 1)).to_numpy(zero_copy_only=False)
        change[1:] = (h[1:] != h[:-1]) | ~same_b
    starts = np.flatnonzero(change)
    lengths = np.diff(np.append(starts, n)).astype(np.int64)
    return table.column("i").to_numpy().astype(np.int32, copy=False), lengths


def iter_log_groups(
    spec: InputSpec,
    scan: LogScan,
    vocab_keys: list[str],
    scratch: Path,
    *,
    budget: int | None = None,
    progress: bool = False,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Pass 2 over a log: yield the baskets as ``(ids, lengths)`` chunks.

    Parameters
    ----------
    spec : InputSpec
        The same input :func:`scan_log` read.
    scan : LogScan
        Pass 1's result.
    vocab_keys : list of str
        Keys in id order; items not among them get id -1 (dropped later by the caller).
    scratch : Path
        An existing folder for the spill files (removed as they are consumed).
    budget : int, optional
        Bytes one partition may take (default :data:`GROUP_MEMORY_BUDGET`).
    progress : bool
        Print progress to stderr.

    Yields
    ------
    ids : ndarray of int32
        Item ids of consecutive baskets, -1 for items outside ``vocab_keys``.
    lengths : ndarray of int64
        Number of rows of each basket; sums to ``len(ids)``.
    """
    budget = GROUP_MEMORY_BUDGET if budget is None else budget
    n_parts = n_partitions(scan.est_bytes, budget)
    spill_to_disk = n_parts > 1
    # Even when everything fits in memory, sorting cache-sized partitions is faster than one big sort.
    n_parts = max(n_parts, min(MAX_PARTITIONS, math.ceil(scan.est_bytes / _PARTITION_TARGET)))
    files = scan.files or resolve_files(spec)
    fmt = input_format(spec, files)
    value_set = pa.array(vocab_keys, type=pa.string())
    ordered = scan.order_type is not None
    in_memory: dict[int, list[pa.Table]] = {}
    writers: dict[int, tuple[pa.NativeFile, pa.ipc.RecordBatchStreamWriter]] = {}
    spill = [scratch / f"part-{p:05d}.arrows" for p in range(n_parts)]
    if progress:
        where = "spilled to disk" if spill_to_disk else "in memory"
        _log(f"grouping {scan.n_rows:,} rows into baskets ({n_parts} partition(s), {where})")
    try:
        for path, _row, batch in iter_log_batches(spec, files, fmt):
            try:
                table = _pass2_table(batch, value_set, scan)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
                raise InputError(f"cannot group the rows of {path}: {_first_line(e)}") from None
            if n_parts == 1:
                in_memory.setdefault(0, []).append(table)
                continue
            h = table.column("h").to_numpy()
            part = ((h >> np.uint64(32)) * np.uint64(n_parts)) >> np.uint64(32)  # a range of hashes
            order = np.argsort(part, kind="stable")
            bounds = np.searchsorted(part[order], np.arange(n_parts + 1))
            table = table.take(pa.array(order))
            for p in np.flatnonzero(np.diff(bounds)).tolist():
                piece = table.slice(bounds[p], bounds[p + 1] - bounds[p])
                if not spill_to_disk:
                    in_memory.setdefault(p, []).append(piece)
                    continue
                if p not in writers:
                    sink = pa.OSFile(str(spill[p]), "wb")
                    writers[p] = (sink, pa.ipc.new_stream(sink, table.schema))
                writers[p][1].write_table(piece)
    finally:
        for sink, writer in writers.values():
            writer.close()
            sink.close()
    for p in range(n_parts):
        if p in in_memory:
            table = pa.concat_tables(in_memory.pop(p))
        elif p in writers:
            with pa.OSFile(str(spill[p]), "rb") as src:
                table = pa.ipc.open_stream(src).read_all()
            spill[p].unlink()
        else:
            continue
        if progress and p % max(1, n_parts // 10) == 0:
            _log(f"sorting partition {p + 1}/{n_parts}")
        yield _group(table, ordered)


def _log(msg: str) -> None:
    import sys

    print(f"likewise: {msg}", file=sys.stderr, flush=True)


# --- in-memory tables ----------------------------------------------------------------------------------


def is_table(obj: object) -> bool:
    """True for a pyarrow Table or RecordBatch or a pandas / polars DataFrame (without importing either)."""
    if isinstance(obj, pa.Table | pa.RecordBatch):
        return True
    module = type(obj).__module__.split(".")[0]
    return module in ("pandas", "polars") and type(obj).__name__ == "DataFrame"


def as_arrow_table(obj: object) -> pa.Table:
    """A pyarrow Table from a pyarrow Table / RecordBatch or a pandas / polars DataFrame.

    Raises
    ------
    InputError
        ``obj`` is none of those.
    """
    if isinstance(obj, pa.Table):
        return obj
    if isinstance(obj, pa.RecordBatch):
        return pa.Table.from_batches([obj])
    module = type(obj).__module__.split(".")[0]
    if module == "polars" and hasattr(obj, "to_arrow"):
        return obj.to_arrow()
    if module == "pandas":
        return pa.Table.from_pandas(obj, preserve_index=False)
    raise InputError(
        "expected a pyarrow Table or a pandas / polars DataFrame, "
        f"got {type(obj).__module__}.{type(obj).__name__}"
    )


def write_table(obj: object, path: str | Path, columns: list[str]) -> Path:
    """Write the named ``columns`` of a table (see :func:`as_arrow_table`) to a Parquet file.

    Training reads logs from files, so an in-memory table goes through the same reader, checks and
    error messages as a file would. Raises :class:`InputError` naming a missing column.
    """
    import pyarrow.parquet as pq

    table = as_arrow_table(obj)
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise InputError(
            f"column {missing[0]!r} is not in the table; "
            f"its columns are {', '.join(map(repr, table.column_names))}"
        )
    path = Path(path)
    pq.write_table(table.select(columns), path)
    return path
