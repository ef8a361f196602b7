"""Tables read from files and keyed by item or customer: the one reader they share, and their key checks.

Item attributes (``train --item-attrs``), new products (``place --attrs-file``), labels (``eval``,
``plot`` and ``export --labels``) and seed customers (``lookalike --seeds-file``, ``campaigns
--customers-file``) are all read by :func:`read_table_file`, and their keys checked by
:func:`key_column`, under one set of rules:

* **Format by content.** A file that starts and ends with ``PAR1`` is Parquet, whatever its name; a
  ``.jsonl`` / ``.ndjson`` file is JSON Lines; anything else is CSV / TSV text (plain, ``.gz``, ``.bz2``
  or ``.zst``), its separator a tab when the first line holds one (or the name ends ``.tsv``), else a
  comma. A file that is neither Parquet nor text (a NUL byte in its first 64 KiB) is refused.
* **Header by content.** An attribute table always has a header. A label or seed file may not: its
  first line (blank lines and ``#`` comments skipped) is a header when a :class:`HeaderRule` says so;
  otherwise the file is *plain lines*: fields split at the separator, taken as written (no quoting),
  blank lines and lines starting with ``#`` skipped, every line with as many fields as the first.
* **Keys as written.** The key column of a CSV / TSV file (and every column of a label or seed file)
  is read as text, as the log reader reads its keys: ``00012``, ``1e3``, ``1.50`` and ``TRUE`` stay
  what the user wrote, so a table's key is the same text as the log's. Other columns of an attribute
  table keep Arrow's types (a numeric column is banded). Parquet and JSON Lines keep their own types.
* **Types.** A column is read as text when it holds text, numbers or dates; one that holds structs,
  maps, or bytes that are not UTF-8 is one :class:`~likewise.errors.InputError` naming the file, the
  column and its type (:func:`text_column`).
* **Keys** get the checks a log's keys get (``likewise.readers._checks``): no null, no empty key, UTF-8,
  no line break, at most :data:`~likewise.readers.MAX_ITEM_CHARS` characters; the error names the file,
  the column and the data row (rows count from 1; the header, blank lines and comments not counted).
"""

from __future__ import annotations

import csv
import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError, shown
from ._files import arrow_reason, compression, detect_format

__all__ = ["PARQUET_MAGIC", "HeaderRule", "key_column", "read_table_file", "sniff_format", "text_column"]

#: The first (and last) four bytes of every Parquet file.
PARQUET_MAGIC = b"PAR1"
_HEAD_BYTES = 65536
_FORMATS = ("auto", "csv", "text", "parquet", "jsonl")


@dataclass(frozen=True)
class HeaderRule:
    """How the first line of a text table tells a header from data (``read_table_file(header=...)``).

    The first line is a header when it is comma-separated with two or more fields (a CSV file has a
    header), when it has more fields than a line of the file's plain form, or when one of its fields is
    one of ``names`` (compared with surrounding spaces trimmed, case-insensitively).

    Parameters
    ----------
    names : collection of str
        The columns a caller asks for, and the names such columns usually have (``customer_id``,
        ``item``, ``label``, ...).
    plain_width : int
        Fields of a line of the plain form: 1 for one id per line, 2 for ``item<TAB>label``.
    """

    names: Collection[str]
    plain_width: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", frozenset(n.strip().casefold() for n in self.names))

    def is_header(self, fields: list[str], sep: str) -> bool:
        """Whether a first line split into ``fields`` at ``sep`` is a header."""
        if (sep == "," and len(fields) >= 2) or len(fields) > self.plain_width:
            return True
        return any(f.strip().casefold() in self.names for f in fields)


def sniff_format(path: Path, format: str = "auto") -> str:
    """The format of a table file: ``"parquet"`` by its content, ``"jsonl"`` by its name, else ``"csv"``.

    Parameters
    ----------
    path : Path
        An existing, non-empty file.
    format : {"auto", "csv", "text", "parquet", "jsonl"}
        ``"auto"`` decides as the module docstring says; any other value is taken as given (``"text"``
        is CSV).

    Returns
    -------
    str
        ``"parquet"``, ``"jsonl"`` or ``"csv"``.
    """
    if format not in _FORMATS:
        raise InputError(f"format == {format!r}, must be one of {', '.join(map(repr, _FORMATS))}")
    if format != "auto":
        return "csv" if format == "text" else format
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(4)
        f.seek(max(size - 4, 0))
        tail = f.read(4)
    if size >= 8 and head == PARQUET_MAGIC and tail == PARQUET_MAGIC:
        return "parquet"
    return "jsonl" if detect_format(path) == "jsonl" else "csv"


def read_table_file(
    source: Any,
    format: str = "auto",
    delimiter: str | None = None,
    *,
    what: str = "item attributes",
    header: bool | HeaderRule = True,
    key: str | Sequence[str | None] | None = None,
    text: bool = False,
) -> tuple[Any, str, str]:
    """Read a table keyed by item or customer from a file (see the module docstring for the rules).

    Parameters
    ----------
    source : path, or a pyarrow Table / pandas / polars DataFrame
        Parquet, JSON Lines, or CSV / TSV text (optionally compressed).
    format : {"auto", "csv", "text", "parquet", "jsonl"}
        ``"auto"`` decides by the content (Parquet) and the name (JSON Lines).
    delimiter : str, optional
        The separator of a text file (default: a tab when its first line holds one, else a comma).
    what : str
        What the file is, for messages: ``"item attributes"``, ``"labels"``, ``"seeds"``.
    header : bool or HeaderRule
        Whether the first line of a text file is a header: True (attribute tables), False (plain lines),
        or decided by its content.
    key : str or sequence of str, optional
        The key column of a CSV / TSV file, read as text so its keys stay as written: a name, or names
        to try in order (None entries skipped); the first column when none is given or in the file.
    text : bool
        Read every column of a CSV / TSV file as text (labels and seeds: all their values are keys or
        labels).

    Returns
    -------
    table : pyarrow.Table
        A plain-lines file has columns ``column 1``, ``column 2``, ...
    where : str
        How messages name it (the path, or ``f"the {what} table"``).
    fmt : str
        ``"table"`` (given in memory), ``"parquet"``, ``"jsonl"``, ``"csv"`` (with a header) or
        ``"lines"`` (plain lines).

    Raises
    ------
    InputError
        The file is missing, empty, not text (and not Parquet), or not readable as its format; a plain
        line has a different number of fields than the first.
    """
    import pyarrow as pa

    from .table import as_arrow_table, is_table

    if is_table(source):
        where = f"the {what} table"
        return _named_once(as_arrow_table(source), where), where, "table"
    path = Path(os.fspath(source))
    where = str(path)
    if not path.is_file():
        raise InputError(f"{what} file {where!r} does not exist (or is not a file)")
    if path.stat().st_size == 0:
        raise InputError(f"{what} file {where!r} is empty (0 bytes)")
    fmt = sniff_format(path, format)
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            table, how = pq.read_table(str(path)), "parquet"
        elif fmt == "jsonl":
            import pyarrow.json as pjson

            from ._batches import refuse_null_rows

            refuse_null_rows(path)  # pyarrow's JSON reader dies on such a row (apache/arrow#47409)
            with pa.input_stream(str(path), compression=compression(path)) as s:
                table, how = pjson.read_json(s), "jsonl"
        else:
            table, how = _read_text(path, where, what, delimiter, header, _Text(key, text))
    except (pa.ArrowException, OSError, UnicodeDecodeError) as e:
        name = {"csv": "CSV", "parquet": "Parquet", "jsonl": "JSON Lines"}[fmt]
        block = 1 << 20  # pyarrow's default block, for CSV and JSON alike
        raise InputError(f"cannot read {what} {where!r} as {name}: {arrow_reason(e, block)}") from None
    return _named_once(table, where), where, how


def _named_once(table: Any, where: str) -> Any:
    """``table``, once its column names are checked: UTF-8 text, none given twice (a lookup needs one)."""
    try:
        names = table.column_names
    except UnicodeDecodeError:
        raise InputError(f"the column names of {where!r} are not all UTF-8 text") from None
    seen: set[str] = set()
    twice = next((n for n in names if n in seen or seen.add(n)), None)  # type: ignore[func-returns-value]
    if twice is not None:
        raise InputError(f"column {shown(twice)} appears twice in the header of {where!r}; name each once")
    return table


@dataclass(frozen=True)
class _Text:
    """Which columns of a text table are read as text: the key column (see ``read_table_file``), or all."""

    key: str | Sequence[str | None] | None
    every: bool

    def types(self, names: list[str]) -> dict[str, Any]:
        """``column_types`` for pyarrow's CSV reader, given the file's column names as pyarrow reads them."""
        import pyarrow as pa

        if self.every:
            return {n: pa.string() for n in names}
        tries = [self.key] if isinstance(self.key, str) else [k for k in self.key or () if k is not None]
        key = next((k for k in tries if k in names), names[0] if names else None)
        return {} if key is None else {key: pa.string()}


def _header_names(path: Path, skip: int, parse: Any) -> list[str]:
    """The column names of a text table as pyarrow itself reads its header (so they match exactly);
    empty when they cannot be read (the full read then says why)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    try:
        with pa.input_stream(str(path), compression=compression(path)) as s:
            return list(
                pcsv.open_csv(
                    s, read_options=pcsv.ReadOptions(skip_rows=skip), parse_options=parse
                ).schema.names
            )
    except (pa.ArrowException, UnicodeDecodeError):
        return []


def _convert(types: dict[str, Any]) -> Any:
    """pyarrow's CSV options: empty fields are nulls; the columns ``types`` names read as text, unchecked
    (:func:`_bytes_unless_utf8` checks them: bytes that are not UTF-8 get the message other columns get)."""
    import pyarrow.csv as pcsv

    return pcsv.ConvertOptions(
        strings_can_be_null=True, null_values=[""], column_types=types, check_utf8=False
    )


def _bytes_unless_utf8(table: Any, types: dict[str, Any]) -> Any:
    """``table`` with each column read as text that is not all UTF-8 seen as the bytes it is (as pyarrow
    reads such a column when it guesses), so :func:`text_column` names the file, the column and its type."""
    import pyarrow as pa

    for name in types:
        i = table.schema.get_field_index(name)
        if i < 0:
            continue
        col = table.column(i)
        try:
            col.validate(full=True)
        except pa.ArrowInvalid:
            table = table.set_column(
                i, name, pa.chunked_array([c.view(pa.binary()) for c in col.chunks], pa.binary())
            )
    return table


def _read_text(
    path: Path, where: str, what: str, delimiter: str | None, header: bool | HeaderRule, text: _Text
) -> tuple[Any, str]:
    """A CSV / TSV file with a header (``"csv"``) or plain lines (``"lines"``): :func:`read_table_file`."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    with pa.input_stream(str(path), compression=compression(path)) as s:
        head = s.read(_HEAD_BYTES)
    if b"\0" in head:
        raise InputError(f"{what} file {where!r} is not text, nor Parquet: give CSV/TSV (UTF-8) or Parquet")
    lines = head.decode("utf-8", errors="replace").split("\n")
    skip = 0
    if header is not True:  # the first line that is not blank and not a comment
        skip = next((i for i, ln in enumerate(lines) if ln.strip() and not ln.startswith("#")), -1)
        if skip < 0:
            raise InputError(f"{what} file {where!r} holds no data: only blank lines and '#' comments")
    first = lines[skip].rstrip("\r")
    if skip == 0:  # a byte-order mark is no part of the first field (pyarrow drops it too)
        first = first.removeprefix("\ufeff")
    tsv = ".tsv" in [x.lower() for x in path.suffixes] or "\t" in first
    sep = delimiter or ("\t" if tsv else ",")
    if len(sep) != 1:
        raise InputError(f"delimiter == {sep!r}, a table needs a single character")
    if isinstance(header, HeaderRule):
        try:
            fields = next(csv.reader([first], delimiter=sep))
        except csv.Error:
            fields = first.split(sep)
        header = header.is_header(fields, sep)
    if header:
        parse = pcsv.ParseOptions(delimiter=sep)
        types = text.types(_header_names(path, skip, parse))
        convert = _convert(types)
        with pa.input_stream(str(path), compression=compression(path)) as s:
            table = pcsv.read_csv(
                s, read_options=pcsv.ReadOptions(skip_rows=skip), parse_options=parse, convert_options=convert
            )
        return _bytes_unless_utf8(table, types), "csv"
    return _read_lines(path, where, what, sep, len(first.split(sep)), text), "lines"


def _read_lines(path: Path, where: str, what: str, sep: str, width: int, text: _Text) -> Any:
    """Plain lines: ``width`` fields split at ``sep``, as written; blank lines and ``#`` comments skipped."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    bad: list[Any] = []

    def invalid(row: Any) -> str:
        if not row.text.startswith("#") and not bad:
            bad.append(row)
        return "skip"

    names = [f"column {i + 1}" for i in range(width)]
    types = text.types(names)
    convert = _convert(types)
    with pa.input_stream(str(path), compression=compression(path)) as s:
        table = pcsv.read_csv(
            s,
            read_options=pcsv.ReadOptions(column_names=names, use_threads=False),  # threads: no row numbers
            parse_options=pcsv.ParseOptions(delimiter=sep, quote_char=False, invalid_row_handler=invalid),
            convert_options=convert,
        )
    if bad:
        row = bad[0]
        tab = "a tab" if sep == "\t" else repr(sep)
        raise InputError(
            f"{what} file {where!r} row {row.number} (blank lines not counted): expected {width} field(s) "
            f"separated by {tab}, as on its first line, got {row.actual_columns}: {shown(row.text)}"
        )
    table = _bytes_unless_utf8(table, types)
    first = table.column(0)
    if pa.types.is_string(first.type) or pa.types.is_large_string(first.type):  # comments as wide as data
        table = table.filter(pc.invert(pc.fill_null(pc.starts_with(first, "#"), False)))
    return table


def text_column(
    col: Any,
    name: str,
    where: str,
    *,
    kind: str = "column",
    expected: str = "text, numbers or dates",
    shown: Any = None,
) -> Any:
    """A column's values as a pyarrow string array; a column of another type is one clear error.

    Parameters
    ----------
    col : pyarrow.Array or ChunkedArray
        The values.
    name, where : str
        The column and the file, for the message.
    kind : str
        What the column is, for the message (``"attribute column"``, ``"key column"``).
    expected : str
        What it may hold, for the message.
    shown : optional
        The type the message names (default: the column's; a list's when ``col`` holds its elements).

    Raises
    ------
    InputError
        The column holds structs, maps or lists (of anything), or bytes that are not UTF-8 text: the
        message names the file, the column and its type.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    t = col.type
    if pa.types.is_dictionary(t):
        col, t = col.dictionary_decode(), t.value_type
    try:
        if pa.types.is_nested(t) or pa.types.is_map(t):
            raise pa.ArrowNotImplementedError("nested")
        return pc.cast(col, pa.string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise InputError(
            f"{kind} {name!r} of {where!r} holds {shown or t}; expected {expected} (bytes must be UTF-8 text)"
        ) from None


def key_column(table: Any, name: str, where: str, *, need: str) -> Any:
    """The keys of column ``name`` of ``table`` as text, checked as a log's keys are.

    Parameters
    ----------
    table : pyarrow.Table
        As :func:`read_table_file` returns it.
    name : str
        The key column (it must exist).
    where : str
        The file, for messages.
    need : str
        The end of a null or empty key's message: ``"every row needs an item key"``.

    Returns
    -------
    pyarrow.Array of string

    Raises
    ------
    InputError
        The column's type is not text, numbers or dates; a key is null, empty, not UTF-8, holds a line
        break or is longer than :data:`~likewise.readers.MAX_ITEM_CHARS` characters. The message names
        the file, the column and the data row.
    """
    from ._checks import check_empty, check_length, check_line_breaks, check_nulls, check_utf8

    keys = text_column(table.column(name), name, where, kind="key column")
    check_nulls(where, 0, name, keys, need=need)
    check_utf8(where, 0, name, keys)
    check_empty(where, 0, name, keys, need=need)
    check_line_breaks(where, 0, name, keys)
    check_length(where, 0, name, keys)
    return keys
