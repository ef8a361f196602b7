"""Record batches of a log file: CSV/TSV (optionally compressed), Parquet or JSON Lines.

:func:`iter_log_batches` streams the basket, item (and order) columns of every file of an input, file
by file, and turns the ways a file can be empty, unreadable or short of a column into one
:class:`~likewise.errors.InputError` that names the file.

Arrow's streaming CSV reader reads several blocks ahead, so the block size sets the reader's share:
with 16 MiB blocks a bare ``open_csv`` loop held ~480 MiB in Arrow's pool and the whole build peaked
at 541 MiB (5 M rows) and 1 GB (25 M rows); the 4 MiB blocks used here cost no speed (1 MiB blocks:
259 MiB but ~20 % slower).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from ._files import InputSpec, arrow_reason, compression, first_line, named_files, no_data_error

__all__ = ["LogBatches", "iter_log_batches", "read_columns", "refuse_null_rows", "refuse_twice"]

_BATCH_BYTES = 4 * 2**20  # CSV / JSON block size; Arrow reads several blocks ahead, so this caps memory
_PARQUET_BATCH_ROWS = 1 << 20
_SPACES = b" \t\r"  # JSON whitespace within a line
_NULL_ROW = re.compile(rb"^[ \t\r]*null[ \t\r]*$", re.MULTILINE)


class _EmptyFileError(InputError):
    """A file with no content at all; skipped when it came from a folder, an error when named."""


def _missing_column(path: Path, col: str, available: list[str]) -> InputError:
    return InputError(
        f"column {col!r} not found in {path}; available columns: {', '.join(map(repr, available))}"
    )


def _log_columns(spec: InputSpec) -> list[str]:
    """The columns a batch has once read (and typed): basket, item[, order][, side columns]."""
    cols = [spec.basket_col, spec.item_col]
    if spec.order_col:
        cols.append(spec.order_col)
    for side in (spec.user_col, spec.time_col, spec.quantity_col):  # by name; a column named twice: once
        if side and side not in cols:
            cols.append(side)
    return [c for c in cols if c is not None]


def read_columns(spec: InputSpec, typing=None) -> list[str]:
    """The columns read from a file: those of :func:`_log_columns`, a typed log's item and type columns."""
    typing = spec.typing() if typing is None else typing
    cols = _log_columns(spec)
    if typing is None:
        return cols
    cols = [c for c in cols if c != spec.item_col]
    return cols + [c for c in typing.read_cols if c not in cols]


def _csv_batches(path: Path, spec: InputSpec, cols: list[str], typing=None) -> Iterator[pa.RecordBatch]:
    import pyarrow.csv as pcsv

    delimiter = spec.delimiter
    if delimiter is None:
        stem_suffix = Path(path.stem).suffix.lower() if compression(path) else path.suffix.lower()
        delimiter = "\t" if stem_suffix == ".tsv" else ","
    if len(delimiter) != 1:
        raise InputError(f"delimiter == {delimiter!r}, CSV needs a single character")
    # Basket and item are read as text: keys stay exactly as written, and a later block can never
    # disagree with the type Arrow guessed from the first one. Empty fields are nulls (and errors); a
    # quoted empty field ("") is read as '' and scan_log rejects it the same way.
    keys = [spec.basket_col, spec.item_col, spec.user_col] + (typing.read_cols if typing else [])
    column_types = {c: pa.string() for c in keys if c in cols}
    convert = pcsv.ConvertOptions(
        include_columns=cols,
        column_types=column_types,
        strings_can_be_null=True,
        null_values=["", *(spec.na_values or ())],  # only what the user says is missing
        quoted_strings_can_be_null=False,
    )
    read = pcsv.ReadOptions(block_size=_BATCH_BYTES)
    parse = pcsv.ParseOptions(delimiter=delimiter)
    stream = pa.input_stream(str(path), compression=compression(path))
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
                if header and c not in header:
                    raise _missing_column(path, c, header) from None
        raise InputError(f"cannot read {path} as CSV: {arrow_reason(e, read.block_size)}") from None
    with stream:
        header = _csv_header(path, read, parse)
        for c in cols:
            refuse_twice(path, c, header)
        yield from reader


def refuse_twice(path: Path | str, col: str, names: list[str]) -> None:
    """A column read from a file whose header names it twice: which one is meant cannot be told."""
    if names.count(col) > 1:
        raise InputError(
            f"column {col!r} appears {names.count(col)} times in the header of {path}; rename all but one"
        )


def _csv_header(path: Path, read, parse) -> list[str]:
    import pyarrow.csv as pcsv

    try:
        with pa.input_stream(str(path), compression=compression(path)) as stream:
            return list(pcsv.open_csv(stream, read_options=read, parse_options=parse).schema.names)
    except (pa.ArrowException, UnicodeDecodeError):  # a header that is not UTF-8, or not CSV at all
        return []


def refuse_null_rows(path: Path) -> None:
    """Raise :class:`InputError` naming the first line of ``path`` that is the bare JSON value ``null``.

    pyarrow's JSON reader dereferences a null pointer (the process dies: apache/arrow#47409, still in
    pyarrow 26) on a block whose first row is ``null``; such a row is no record anyway. One pass over
    the (decompressed) bytes, a block at a time, with a C regex; the end of a line that runs on into the
    next block is kept only as far as it could still be ``null``.
    """
    line, tail = 1, b""
    with pa.input_stream(str(path), compression=compression(path)) as stream:
        while True:
            chunk = stream.read(_BATCH_BYTES)
            buf = tail + chunk
            cut = buf.rfind(b"\n") + 1 if chunk else len(buf)
            found = _NULL_ROW.search(buf, 0, cut)
            if found:
                n = line + buf.count(b"\n", 0, found.start())
                raise InputError(f"{path} line {n} is null; each line of JSON Lines must be an object")
            if not chunk:
                return
            line += buf.count(b"\n", 0, cut)
            tail = buf[cut:].lstrip(_SPACES)
            if len(tail) > 64:  # too long to be "null" plus spaces, unless it is just that
                tail = b"null " if tail.rstrip(_SPACES) == b"null" else b"x"


def _jsonl_batches(path: Path, cols: list[str]) -> Iterator[pa.RecordBatch]:
    import pyarrow.json as pjson

    refuse_null_rows(path)
    stream = pa.input_stream(str(path), compression=compression(path))
    try:
        reader = pjson.open_json(stream, read_options=pjson.ReadOptions(block_size=_BATCH_BYTES))
    except pa.ArrowInvalid as e:
        stream.close()
        if "Empty JSON file" in str(e) or "Empty JSON stream" in str(e):
            raise _EmptyFileError(f"{path} is empty: no JSON record") from None
        raise InputError(f"cannot read {path} as JSON Lines: {arrow_reason(e, _BATCH_BYTES)}") from None
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
        raise InputError(f"cannot read {path} as Parquet: {first_line(e)}") from None
    names = list(pf.schema_arrow.names)
    for c in cols:
        if c not in names:
            raise _missing_column(path, c, names)
        refuse_twice(path, c, names)
    with pf:
        yield from pf.iter_batches(batch_size=_PARQUET_BATCH_ROWS, columns=cols)


class LogBatches:
    """The batches of a log: iterate for ``(path, first_row, batch)`` (:func:`iter_log_batches`).

    After a pass, :attr:`skipped` holds the rows left out by cause (``{"null 'product_id'": 3}``) when the
    spec skips bad rows (``on_bad_rows="skip"``); a row bad in two columns counts once, under the first.
    """

    def __init__(self, spec: InputSpec, files: list[Path], fmt: str) -> None:
        self.spec, self.files, self.fmt = spec, files, fmt
        self.skipped: dict[str, int] = {}

    def __iter__(self) -> Iterator[tuple[Path, int, pa.RecordBatch]]:
        self.skipped = {}
        return _log_batches(self.spec, self.files, self.fmt, self.skipped)


def iter_log_batches(spec: InputSpec, files: list[Path], fmt: str) -> LogBatches:
    """The batches ``(path, first_row, batch)`` of a log, with columns basket, item[, order][, user][, time]
    in that order (a :class:`LogBatches`: after a pass it holds the rows skipped).

    Parameters
    ----------
    spec : InputSpec
        The log and its ``basket_col``, ``item_col`` (and ``order_col``).
    files : list of Path
        Its resolved files (:func:`~likewise.readers.resolve_files`).
    fmt : {"csv", "parquet", "jsonl"}
        Their format (:func:`~likewise.readers.input_format`).

    Yields
    ------
    path : Path
        The file the batch is from.
    first_row : int
        The 0-based row of the batch's first row within its file (header not counted).
    batch : pyarrow.RecordBatch
        A non-empty batch of the basket, item[, order] columns.

    Texts in ``spec.na_values`` are nulls; with ``spec.on_bad_rows == "skip"`` a row with a null or empty
    key (basket, item, order, customer, time) or a null quantity is left out and counted, so every pass
    over the log reads the same rows. ``first_row`` counts the rows of the file, those left out too.

    Raises
    ------
    InputError
        A missing column, an unreadable file, a file named in ``spec.paths`` without data rows, or an
        input without data rows; a file without data rows found in a folder (an empty Spark part) is
        skipped.
    """
    return LogBatches(spec, files, fmt)


def _log_batches(
    spec: InputSpec, files: list[Path], fmt: str, skipped: dict[str, int]
) -> Iterator[tuple[Path, int, pa.RecordBatch]]:
    """:func:`iter_log_batches`'s pass; rows left out are added to ``skipped`` by cause."""
    typing = spec.typing()
    cols = _log_columns(spec)
    read = read_columns(spec, typing)
    named = named_files(spec)
    total = 0
    for path in files:
        is_named = path.resolve() in named
        if path.stat().st_size == 0:
            if is_named:
                raise InputError(f"{path} is empty (0 bytes)")
            continue
        if fmt == "csv":
            batches = _csv_batches(path, spec, read, typing)
        elif fmt == "parquet":
            batches = _parquet_batches(path, read)
        else:
            batches = _jsonl_batches(path, read)
        row = 0
        try:
            for batch in batches:
                if batch.num_rows:
                    first, row = row, row + batch.num_rows
                    if spec.na_values:
                        batch = _as_missing(batch, spec.na_values)
                    if spec.on_bad_rows == "skip":
                        batch = _without_bad_rows(batch, spec, typing is None, skipped)
                        if not batch.num_rows:
                            continue
                    if typing is not None:  # the item column now holds "type:item" keys
                        table = typing.apply(path, pa.Table.from_batches([batch]), first).combine_chunks()
                        batch = table.to_batches()[0]
                    yield path, first, batch.select(cols)
        except _EmptyFileError:
            if is_named:
                raise
            continue
        except (pa.ArrowException, OSError, UnicodeDecodeError) as e:  # any Arrow error: a bad file
            raise InputError(f"cannot read {path} as {fmt}: {arrow_reason(e, _BATCH_BYTES)}") from None
        if row == 0 and is_named:
            raise InputError(f"{path} is empty: it has no data rows")
        total += row
    if total == 0:
        raise no_data_error(spec, len(files), "data rows")


def _as_missing(batch: pa.RecordBatch, na_values: tuple[str, ...]) -> pa.RecordBatch:
    """``batch`` with the texts of ``na_values`` as nulls, in every text column (a CSV's are already)."""
    missing = pa.array(list(na_values), pa.string())
    columns = []
    for col in batch.columns:
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            hit = pc.is_in(col, value_set=missing.cast(col.type))
            if pc.any(hit).as_py():
                col = pc.if_else(hit, pa.scalar(None, col.type), col)
        columns.append(col)
    return pa.RecordBatch.from_arrays(columns, schema=batch.schema)


def _without_bad_rows(
    batch: pa.RecordBatch, spec: InputSpec, item_is_key: bool, skipped: dict[str, int]
) -> pa.RecordBatch:
    """``batch`` without its rows that have a null or empty key or a null quantity; the rows left out are
    added to ``skipped`` by cause (a row under its first bad column)."""
    keys = [spec.basket_col, spec.item_col if item_is_key else None, spec.order_col, spec.user_col]
    keys += [spec.time_col]
    names = batch.schema.names
    bad: Any = None
    for name in [*keys, spec.quantity_col]:
        if not name or name not in names:
            continue
        col = batch.column(names.index(name))
        causes = [("null", col.is_null())]
        if name != spec.quantity_col and (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
            causes.append(("empty", pc.fill_null(pc.equal(pc.binary_length(col), 0), False)))
        for cause, mask in causes:
            new = mask if bad is None else pc.and_(mask, pc.invert(bad))
            n = pc.sum(new).as_py() or 0
            if n:
                key = f"{cause} {name!r}"
                skipped[key] = skipped.get(key, 0) + n
                bad = new if bad is None else pc.or_(bad, new)
    return batch if bad is None else batch.filter(pc.invert(bad))
