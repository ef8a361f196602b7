"""What the readers share: :class:`InputSpec`, the files it names, their format and compression.

Also the helpers more than one reader module uses: the error for an input with no data, the first line
of a library's error message, and the progress line. All are public names re-exported by
:mod:`likewise.readers`, so no module reaches into another's private names.
"""

from __future__ import annotations

import glob
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._progress import note
from .._secrets import redact
from ..errors import InputError

__all__ = [
    "BASKET_SCOPES",
    "COMPRESSION_SUFFIXES",
    "FORMATS",
    "LOG_FORMATS",
    "ON_BAD_ROWS",
    "TOKENIZE",
    "InputSpec",
    "compression",
    "detect_format",
    "first_line",
    "input_format",
    "is_dataset",
    "is_hive_folder",
    "is_url",
    "log_progress",
    "named_files",
    "no_data_error",
    "resolve_files",
]

FORMATS = ("auto", "text", "csv", "parquet", "jsonl")
LOG_FORMATS = ("csv", "parquet", "jsonl")
#: How text is cut into items (``InputSpec.tokenize``).
TOKENIZE = ("none", "simple")
#: What a basket of a log with customers is (``InputSpec.basket_scope``).
BASKET_SCOPES = ("order", "customer")

#: What a log row without a key (a null or empty basket, item, customer, time, ...) does
#: (``InputSpec.on_bad_rows``, ``likewise train --on-bad-rows``): stop with its file, column and row, or
#: be left out and counted (pandas' ``on_bad_lines``). The first is the default.
ON_BAD_ROWS = ("raise", "skip")
COMPRESSION_SUFFIXES = {".gz": "gzip", ".bz2": "bz2", ".zst": "zstd", ".zstd": "zstd"}
_EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
}


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
    tokenize : {"none", "simple"}
        Text: ``"none"`` (the default) keeps items exactly as written, split at whitespace (or
        ``delimiter``): "users." and "users" are two words, as in word2vec's C tool. ``"simple"``
        lower-cases and splits at every character that is not a letter or a digit (punctuation,
        underscores, apostrophes), as gensim's ``simple_preprocess`` does, without its length limits.
    user_col, time_col : str, optional
        Logs: side columns compiled beside the items, one value per kept line: the customer of each line
        (``user.npy``, codes into ``customers.json``) and its time (``time.npy``, seconds since 1970).
        They do not change training; customer vectors are built from them (:mod:`likewise.space.customers`).
    quantity_col : str, optional
        Logs: units bought per line, checked to be numbers >= 0 (not used in training).
    session_gap : int, optional
        Logs: group lines into customer sessions instead of baskets: a customer's lines in time order
        (ties in file order), a new session whenever the time since the previous line exceeds this many
        seconds. Needs ``user_col`` and ``time_col``; ``basket_col`` is still read and checked.
    type_col, type_map, type_cols : optional
        Logs: a typed event log (:mod:`likewise.readers.typed_log`): each row's type from ``type_col``
        (renamed by ``type_map``, value -> type), or from which of ``type_cols`` (type -> column) the row
        fills; the item key read is then ``type:item``. With ``type_cols`` no ``item_col`` is needed.
        Mappings are kept as tuples of pairs.
    attrs, attrs_item_col : str, optional
        Logs: an item attribute table (CSV/TSV or Parquet, one row per item; :mod:`likewise.readers.attrs`)
        whose tokens (``attr:category=outdoor``) are compiled into the sequences that hold each item, and
        the table's item column (default: its first). An item key of the log may not start ``attr:``.
    basket_scope : {"order", "customer"}
        Logs with ``user_col``: what a basket is. ``"order"`` (the default): the rows of one
        ``basket_col`` value, and an order holding lines of two customers is refused, counted with
        examples (order ids that restart, daily receipt numbers, would mix two customers' histories);
        ``"customer"``: the rows of one (customer, ``basket_col``) pair.
    on_bad_rows : {"raise", "skip"}
        Logs: a row with a null or empty key (basket, item, customer, order, time) or a null quantity
        stops the read with an error naming the file, the column and the row (``"raise"``), or is left
        out and counted by cause (``"skip"``: the counts are the corpus's ``skipped_rows``).
    na_values : tuple of str, optional
        Logs: texts that mean a missing value in any column read (``("NA", "NULL")``); by default only an
        empty field is missing, so a product keyed ``NA`` is a product. A str is split at commas.
    sql, uri : str, optional
        A log read by a query instead of from files (:mod:`likewise.readers.sources`): ``sql`` is the
        query, ``uri`` the database (``postgresql://user@host/db``, ``sqlite:///orders.db``, a
        ``.duckdb`` file, or ``duckdb:`` for DuckDB's SQL over Parquet/CSV files). No ``paths`` with them.

    Notes
    -----
    A path may also be a glob (``orders/*.parquet``: its files, sorted), a folder of hive partitions
    (``year=2024/``), or an object-store URL (``s3://bucket/orders/``, ``gs://...``); the last two are
    read as an Arrow dataset (:mod:`likewise.readers.sources`).
    """

    paths: tuple[str, ...] = ()
    format: str = "auto"
    delimiter: str | None = None
    basket_col: str | None = None
    item_col: str | None = None
    order_col: str | None = None
    user_col: str | None = None
    time_col: str | None = None
    tokenize: str = "none"
    quantity_col: str | None = None
    session_gap: int | None = None
    type_col: str | None = None
    type_map: tuple[tuple[str, str], ...] | None = None
    type_cols: tuple[tuple[str, str], ...] | None = None
    attrs: str | None = None
    attrs_item_col: str | None = None
    basket_scope: str = "order"
    on_bad_rows: str = "raise"
    na_values: tuple[str, ...] | None = None
    sql: str | None = None
    uri: str | None = None

    def __post_init__(self) -> None:
        paths = self.paths
        if isinstance(paths, str | os.PathLike):
            paths = (paths,)
        paths = tuple(os.fspath(p) for p in paths)
        if self.sql is not None or self.uri is not None:
            _check_query(self.sql, self.uri, paths)
        elif not paths:
            raise InputError("paths is empty: give at least one file or folder (or sql= and uri=)")
        object.__setattr__(self, "paths", paths)
        if self.format not in FORMATS:
            raise InputError(f"format == {self.format!r}, must be one of {', '.join(map(repr, FORMATS))}")
        if self.tokenize not in TOKENIZE:
            choices = ", ".join(map(repr, TOKENIZE))
            raise InputError(f"tokenize == {self.tokenize!r}, must be one of {choices}")
        if self.tokenize != "none" and (self.delimiter is not None or self.basket_col or self.item_col):
            raise InputError(
                f"tokenize={self.tokenize!r} splits text into words itself: it takes no delimiter and no "
                "log columns"
            )
        if self.delimiter is not None and (not isinstance(self.delimiter, str) or self.delimiter == ""):
            raise InputError(f"delimiter == {self.delimiter!r}, must be a non-empty string or None")
        if self.format == "text" and (
            self.basket_col or self.item_col or self.order_col or self.user_col or self.time_col
        ):
            raise InputError(
                "basket_col, item_col, order_col, user_col and time_col apply to csv/parquet/jsonl logs, "
                "not text"
            )
        for name in ("type_map", "type_cols"):  # mappings as pairs: the spec stays hashable
            value = getattr(self, name)
            if isinstance(value, Mapping):
                object.__setattr__(self, name, tuple((str(k), str(v)) for k, v in value.items()))
        if self.attrs is not None:
            object.__setattr__(self, "attrs", os.fspath(self.attrs))
            if not self.basket_col:
                raise InputError("attrs (item attributes) apply to a log with basket_col and item_col")
        self._check_roles()
        if self.basket_scope not in BASKET_SCOPES:
            choices = ", ".join(map(repr, BASKET_SCOPES))
            raise InputError(f"basket_scope == {self.basket_scope!r}, must be one of {choices}")
        if self.basket_scope != "order" and (not self.user_col or self.session_gap is not None):
            raise InputError(
                f"basket_scope={self.basket_scope!r} makes each (customer, order) a basket: it needs a "
                "customer column (user_col, --user-col) and applies to orders, not sessions"
            )
        self._check_bad_rows()
        typing = self.typing()  # checks the typing options
        if typing is not None:
            object.__setattr__(self, "item_col", typing.item_col)  # "(a, b)" with type_cols
        if self.session_gap is not None:
            gap = self.session_gap
            if isinstance(gap, bool) or not isinstance(gap, int) or gap < 1:
                raise InputError(f"session_gap == {gap!r}, must be a whole number of seconds >= 1")
            if not (self.user_col and self.time_col):
                raise InputError("sessions need a customer column and a time column (--user-col, --time-col)")
            if self.order_col:
                raise InputError("sessions are ordered by time_col: give no order_col with them")

    def __repr__(self) -> str:
        """As a dataclass shows itself, with the secrets of ``uri`` and ``paths`` redacted."""
        fields = {name: getattr(self, name) for name in self.__dataclass_fields__}
        fields["paths"] = tuple(redact(p) for p in self.paths)
        fields["uri"] = None if self.uri is None else redact(self.uri)
        return f"InputSpec({', '.join(f'{k}={v!r}' for k, v in fields.items())})"

    def _check_bad_rows(self) -> None:
        """``on_bad_rows`` one of :data:`ON_BAD_ROWS`; ``na_values`` as a tuple of texts (None: none)."""
        if self.on_bad_rows not in ON_BAD_ROWS:
            raise InputError(
                f"on_bad_rows == {self.on_bad_rows!r}, must be one of {', '.join(map(repr, ON_BAD_ROWS))}"
            )
        na = self.na_values
        if isinstance(na, str):
            na = [v.strip() for v in na.split(",")]
        if na is not None:
            na = tuple(str(v) for v in na)
            if not na or any(v == "" for v in na):
                raise InputError(
                    f"na_values == {self.na_values!r}: give the texts that mean a missing value, e.g. "
                    "'NA,NULL' (an empty field is missing already)"
                )
            object.__setattr__(self, "na_values", na)

    def _check_roles(self) -> None:
        """A column read in two roles (basket and item, item and customer, time and quantity, ...) is
        refused naming both. ``order_col`` may share the time column (a basket's lines in time order)."""
        roles: list[tuple[str, str | None]] = [("basket_col", self.basket_col)]
        if self.type_cols:  # the item is read from these (item_col and type_col are typing's to refuse)
            roles += [(f"type_cols[{t!r}]", c) for t, c in self.type_cols]
        else:
            roles += [("item_col", self.item_col), ("type_col", self.type_col)]
        roles += [("user_col", self.user_col), ("time_col", self.time_col)]
        roles += [("quantity_col", self.quantity_col)]
        seen: dict[str, str] = {}
        for role, col in roles:
            if col is None:
                continue
            if col in seen:
                raise InputError(
                    f"column {col!r} is given as both {seen[col]} and {role}: each of these reads its own "
                    "column; name another one"
                )
            seen[col] = role

    def extras(self) -> dict[str, object]:
        """The optional reading options that are set, by name: part of a corpus's description and key.

        Only options away from their defaults appear, so corpora built without them keep their keys.
        """
        out: dict[str, object] = {}
        for name in ("user_col", "time_col", "quantity_col", "session_gap", "type_col", "attrs_item_col"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        for name in ("type_map", "type_cols"):
            if getattr(self, name) is not None:
                out[name] = [list(pair) for pair in getattr(self, name)]
        if self.tokenize != "none":
            out["tokenize"] = self.tokenize
        if self.basket_scope != "order":
            out["basket_scope"] = self.basket_scope
        if self.order_ids:  # corpora compiled before order ids were kept lack them: a new key
            out["order_ids"] = True
        if self.on_bad_rows != "raise":
            out["on_bad_rows"] = self.on_bad_rows
        if self.na_values is not None:
            out["na_values"] = list(self.na_values)
        if self.attrs is not None:
            out["attrs"] = str(Path(self.attrs).expanduser().resolve())
        return out

    @property
    def order_ids(self) -> bool:
        """A log of orders with customers: each line's order id is kept (hashed) beside it, so an update
        can tell an order it has already seen."""
        return bool(self.basket_col and self.user_col and self.session_gap is None)

    def typemap(self) -> dict[str, str] | None:
        """``type_map`` as a dict (None when not given)."""
        return None if self.type_map is None else dict(self.type_map)

    def typecols(self) -> dict[str, str] | None:
        """``type_cols`` as a dict, type -> column (None when not given)."""
        return None if self.type_cols is None else dict(self.type_cols)

    def typing(self):  # -> ItemTyping | None (imported lazily: pyarrow is not needed for text)
        """The :class:`~likewise.readers.typed_log.ItemTyping` of a typed log, else None."""
        if self.type_col is None and self.type_cols is None:
            return None
        from .typed_log import ItemTyping

        return ItemTyping(self.item_col, self.type_col, self.typemap(), self.typecols())


def _check_query(sql: str | None, uri: str | None, paths: tuple[str, ...]) -> None:
    """A query input names its query and its database, and no files."""
    if not isinstance(sql, str) or not sql.strip():
        raise InputError(f"sql == {sql!r}: a query input needs the query text (sql=) with its uri=")
    if not isinstance(uri, str) or not uri.strip():
        raise InputError(f"uri == {uri!r}: the query needs the database it runs on (uri=)")
    if paths:
        shown = tuple(redact(p) for p in paths)
        raise InputError(f"give paths or sql= with uri=, not both (paths == {shown!r})")


#: Characters that make a path a glob pattern.
GLOB_CHARS = "*?["


def is_url(path: str) -> bool:
    """``scheme://...`` with a scheme of two letters or more (``C:\\`` is a Windows drive, not a URL)."""
    scheme, sep, _ = path.partition("://")
    return bool(sep) and len(scheme) > 1 and scheme.replace("+", "").isalnum()


def is_hive_folder(path: Path) -> bool:
    """A folder holding partitions named ``key=value`` (Spark and Hive's layout)."""
    try:
        return path.is_dir() and any(q.is_dir() and "=" in q.name for q in path.iterdir())
    except OSError:
        return False


def is_dataset(spec: InputSpec) -> bool:
    """Whether ``spec`` is a query or an Arrow dataset (:mod:`likewise.readers.sources`), not files."""
    if spec.sql is not None:
        return True
    return any(is_url(p) or is_hive_folder(Path(p).expanduser()) for p in spec.paths)


def resolve_files(spec: InputSpec) -> list[Path]:
    """Expand ``spec.paths`` into the list of files to read, in order.

    Parameters
    ----------
    spec : InputSpec
        The input; a folder stands for its files, sorted by name, without hidden and ``_`` names; a
        glob pattern (``orders/*.parquet``, ``**`` for any depth) for the files it matches, sorted.

    Returns
    -------
    list of Path
        The files, in the order of ``spec.paths``.

    Raises
    ------
    InputError
        A path does not exist, a folder or a pattern holds no input files, or ``spec`` is a query or a
        dataset (:func:`is_dataset`: read only where a corpus is compiled).
    """
    if is_dataset(spec):
        what = "a query" if spec.sql is not None else f"the dataset {redact(spec.paths[0])!r}"
        raise InputError(
            f"{what} is read when a corpus is compiled (train, update); this command reads files: "
            "export the rows to Parquet first"
        )
    files: list[Path] = []
    for raw in spec.paths:
        p = Path(raw).expanduser()
        if any(c in raw for c in GLOB_CHARS) and not p.exists():
            matches = (Path(q) for q in glob.glob(os.path.expanduser(raw), recursive=True))
            found = sorted(q for q in matches if q.is_file() and not q.name.startswith((".", "_")))
            if not found:
                raise InputError(f"the pattern {raw!r} matches no file")
            files.extend(found)
            continue
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


def named_files(spec: InputSpec) -> set[Path]:
    """The paths given explicitly in ``spec`` (resolved), to tell them from files found in a folder.

    Parameters
    ----------
    spec : InputSpec
        The input.

    Returns
    -------
    set of Path
        ``spec.paths`` expanded (``~``) and resolved; a file found by expanding a folder is not in it.
    """
    return {Path(raw).expanduser().resolve() for raw in spec.paths}


def no_data_error(spec: InputSpec, n_files: int, what: str) -> InputError:
    """The error for an input none of whose ``n_files`` files has ``what`` (e.g. ``"data rows"``)."""
    paths = ", ".join(map(repr, spec.paths))
    return InputError(f"the input ({paths}) is empty: none of its {n_files} file(s) has {what}")


def detect_format(path: str | Path, format: str = "auto") -> str:
    """Format of one file: ``format`` itself unless it is ``"auto"``, then by extension.

    Parameters
    ----------
    path : str or Path
        The file; a compression suffix (``.gz``, ``.bz2``, ``.zst``) is ignored.
    format : str
        One of :data:`FORMATS`.

    Returns
    -------
    str
        ``"text"``, ``"csv"``, ``"parquet"`` or ``"jsonl"``; an unknown extension is text.
    """
    if format != "auto":
        return format
    p = Path(path)
    suffixes = [s.lower() for s in p.suffixes]
    if suffixes and suffixes[-1] in COMPRESSION_SUFFIXES:
        suffixes = suffixes[:-1]
    return _EXTENSIONS.get(suffixes[-1], "text") if suffixes else "text"


def input_format(spec: InputSpec, files: list[Path]) -> str:
    """The one format shared by all ``files``, checked against the columns ``spec`` names.

    Parameters
    ----------
    spec : InputSpec
        The input (its ``format`` and log columns).
    files : list of Path
        Its resolved files (:func:`resolve_files`), at least one.

    Returns
    -------
    str
        ``"text"``, ``"csv"``, ``"parquet"`` or ``"jsonl"``.

    Raises
    ------
    InputError
        The files have different formats, a log lacks ``basket_col``/``item_col``, or text has them.
    """
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


def compression(path: Path) -> str | None:
    """The compression of ``path`` by its last suffix (``"gzip"``, ``"bz2"``, ``"zstd"``), or None.

    Parameters
    ----------
    path : Path
        A file name; only its last suffix is looked at (case-insensitively).

    Returns
    -------
    str or None
        A value of :data:`COMPRESSION_SUFFIXES` (a codec name pyarrow's ``input_stream`` takes), or
        None for an uncompressed file.
    """
    return COMPRESSION_SUFFIXES.get(path.suffix.lower())


def first_line(e: BaseException) -> str:
    """The first line of an exception's message (its type name when it has none), for short errors.

    Parameters
    ----------
    e : BaseException
        Typically a pyarrow error, whose message may run over many lines.

    Returns
    -------
    str
        The first non-blank line of ``str(e)``, or ``type(e).__name__``.
    """
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


def arrow_reason(e: BaseException, block: int) -> str:
    """:func:`first_line` of a reading error, except Arrow's block-size hint: a CSV field or a JSON line
    longer than the reader's block says "straddles two block boundaries (try to increase block size?)",
    and likewise has no such option. ``block`` is the reader's block size in bytes, for the message."""
    text = first_line(e)
    if "straddl" in text or "block size" in text:
        return (
            f"a field or line is larger than the reader's block of {block:,} bytes (each row must fit in "
            "one); convert the file to Parquet, or shorten such fields"
        )
    return text


def log_progress(msg: str, progress: Any = True) -> None:
    """Say one progress line: ``likewise: <msg>`` on stderr beside a bar (flushed, so it shows at once),
    or a line of the ``likewise`` logger when ``progress`` asks for log lines.

    Parameters
    ----------
    msg : str
        The message, without the ``likewise:`` prefix.
    progress : Progress or bool
        The run's progress setting (:func:`likewise._progress.progress_of`); false says nothing.
    """
    msg = redact(msg)
    if getattr(progress, "mode", None) == "log":
        note(msg, progress)
    elif progress:
        print(f"likewise: {msg}", file=sys.stderr, flush=True)
