"""What a training input is: the one place that decides (:func:`resolve_input`).

Whatever the front end (``likewise.train``, ``likewise train``, :func:`likewise.retail.train_from_log`,
:func:`likewise.retail.update.update`), the data and its reading options arrive here and leave as one
of four shapes the corpus compiler knows:

* an :class:`InputSpec` (files, a glob, a folder, a URL, a database query; a table in memory -- pyarrow,
  pandas, polars, or a DuckDB relation's rows -- written to a Parquet file first, so it is read by the
  same log reader with the same checks);
* :class:`SparseBaskets` (a user × item matrix: a basket per row);
* a compiled corpus, passed through (it was read when it was compiled);
* in-memory sequences (lists of item keys, or sets: a basket each), compiled by the trainer.

A new kind of input is one branch of :func:`resolve_input`. The options are one object,
:class:`ReadOptions`, checked once: a log's columns, its customers and times, sessions, types and item
attributes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import re
from collections.abc import Iterable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from .._check import is_matrix
from ..errors import InputError
from ._files import InputSpec
from .matrix import SparseBaskets, sparse_baskets
from .table import as_arrow_table, is_table, write_table
from .typed_log import parse_type_map

__all__ = ["ReadOptions", "Resolved", "parse_duration", "resolve_input"]

_UNITS = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}


def parse_duration(text: str | int | float) -> int:
    """Seconds in a duration like ``"30m"``, ``"2h"``, ``"45s"``, ``"1d"`` (a bare number is seconds).

    Raises
    ------
    InputError
        The text is not a number followed by one of ``s``, ``m``, ``min``, ``h``, ``d``, or is less than
        one second.
    """
    if isinstance(text, int | float) and not isinstance(text, bool):
        seconds = float(text)
    else:
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(s|m|min|h|d)?\s*", str(text))
        if m is None:
            raise InputError(
                f"duration {text!r} is not understood; write a number and a unit, e.g. '30m', '2h', '45s'"
            )
        seconds = float(m.group(1)) * _UNITS[m.group(2) or "s"]
    if isinstance(seconds, float) and math.isinf(seconds):
        raise InputError(f"duration {text!r} is not a finite number of seconds; e.g. '30m', '2h', '45s'")
    if not seconds >= 1:  # times are whole seconds: a shorter gap would be rounded to none
        raise InputError(
            f"duration {text!r} is {seconds:g} seconds; it must be at least 1 second (times are read to the "
            "second), e.g. '1s', '30m', '2h'"
        )
    return int(round(seconds))


#: :class:`ReadOptions` fields :meth:`ReadOptions.to_dict` leaves out: they name the data, not how to read it.
NOT_SAVED = ("item_attrs", "sql", "item_keys", "user_keys")


@dataclasses.dataclass(frozen=True)
class ReadOptions:
    """How to read a training input: every option of :class:`InputSpec` but where the data is.

    Parameters
    ----------
    format, delimiter, tokenize
        As in :class:`InputSpec`.
    basket_col, item_col, order_col, user_col, time_col, quantity_col
        A log's columns (:class:`InputSpec`).
    sessions : str or int, optional
        Train on each customer's sessions, a new one after this gap (``"30m"``; :func:`parse_duration`).
    type_col, type_map, type_cols
        A typed event log (:class:`InputSpec`); ``type_map`` may be ``"view=product,purchase=product"``.
    basket_scope : {"order", "customer"}
        What a basket of a log with customers is (:class:`InputSpec`): an order id, refused when it holds
        lines of two customers, or each (customer, order) pair.
    item_attrs : path or table, optional
        Item attributes trained as side information; ``attrs_item_col`` is its item column (default:
        one named like ``item_col``, else its first).
    sql : str, optional
        A query; the data is then the database's URI.
    item_keys, user_keys : sequence of str, optional
        A user × item matrix's column and row names.
    on_bad_rows, na_values
        What a row without a key does and which texts mean a missing value (:class:`InputSpec`).
    as_order_log : bool
        Read the log as an order log whatever else is given (:func:`likewise.retail.train_from_log`
        does): its keys are products and the space records what was read (:attr:`order_log`).
    """

    format: str = "auto"
    delimiter: str | None = None
    tokenize: str = "none"
    basket_col: str | None = None
    item_col: str | None = None
    order_col: str | None = None
    user_col: str | None = None
    time_col: str | None = None
    quantity_col: str | None = None
    sessions: str | int | None = None
    type_col: str | None = None
    type_map: Any = None
    type_cols: Any = None
    item_attrs: Any = None
    attrs_item_col: str | None = None
    basket_scope: str = "order"
    sql: str | None = None
    item_keys: Any = None
    user_keys: Any = None
    on_bad_rows: str = "raise"
    na_values: Any = None
    as_order_log: bool = False

    def __post_init__(self) -> None:
        if self.sessions is not None:
            parse_duration(self.sessions)  # a bad gap fails before anything is read
        if self.type_map is not None:
            pairs = self.type_map
            if isinstance(pairs, tuple | list):  # an InputSpec's pairs
                pairs = dict(pairs)
            object.__setattr__(self, "type_map", parse_type_map(pairs))

    def to_dict(self) -> dict[str, Any]:
        """How the input was read, as a JSON object (saved with a space trained on an order log,
        ``meta["read"]``; :meth:`from_dict` reads it back).

        Left out (:data:`NOT_SAVED`): what names the data rather than how to read it: ``item_attrs``
        (a path or a table; its tokenising rules are saved as ``meta["attributes"]``), ``sql`` (a query of
        the database the data names) and a matrix's ``item_keys`` / ``user_keys``.
        """
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name in NOT_SAVED:
                continue
            value = getattr(self, f.name)
            if f.name == "type_cols" and value is not None:
                value = dict(value.items() if hasattr(value, "items") else value)  # pairs or a mapping
            elif f.name == "na_values" and isinstance(value, tuple | list):
                value = list(value)
            out[f.name] = value
        return out

    @classmethod
    def from_dict(cls, d: Any) -> ReadOptions:
        """The options :meth:`to_dict` saved, checked as on construction.

        Raises
        ------
        InputError
            ``d`` is not a JSON object, names an option this version does not know or one that is never
            saved (:data:`NOT_SAVED`), or holds a bad value.
        """
        if not isinstance(d, dict):
            raise InputError(f"saved read options must be a JSON object, got {type(d).__name__}")
        known = {f.name for f in dataclasses.fields(cls)} - set(NOT_SAVED)
        unknown = sorted(set(d) - known)
        if unknown:
            raise InputError(
                f"saved read options: unknown option {unknown[0]!r}; known: {', '.join(sorted(known))}"
            )
        try:
            return cls(**d)
        except InputError as e:
            raise InputError(f"saved read options: {e}") from None

    @classmethod
    def of_spec(cls, spec: InputSpec) -> ReadOptions:
        """The reading options of ``spec`` (all but where its data is)."""
        own = {name: getattr(spec, name) for name in _SHARED}
        return cls(**own, sessions=spec.session_gap, item_attrs=spec.attrs)

    def over(self, base: ReadOptions) -> ReadOptions:
        """These options where they are set (not their defaults), ``base``'s elsewhere."""
        given = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if (value is not None) if f.default is None else (value != f.default):
                given[f.name] = value
        return dataclasses.replace(base, **given)

    @property
    def typed(self) -> bool:
        """Items of several types (``type_col`` or ``type_cols``)."""
        return bool(self.type_col or self.type_cols)

    @property
    def order_log(self) -> bool:
        """A log read with more than its baskets and items: customers, times, quantities, sessions,
        types or item attributes (the space records what was read, ``meta["retail"]``)."""
        extra = (self.user_col, self.time_col, self.quantity_col, self.sessions, self.item_attrs)
        return self.as_order_log or self.typed or any(v is not None for v in extra)

    @property
    def what(self) -> str:
        """What a key names in messages and the corpus: ``"product"`` in an order log of one item type,
        else ``"item"``."""
        return "product" if self.order_log and not self.typed else "item"

    def log_options(self) -> list[str]:
        """The names of the log options that are set (``basket_col``, ..., ``sql``)."""
        names = ("basket_col", "item_col", "order_col", "user_col", "time_col", "quantity_col", "sessions")
        names += ("type_col", "type_map", "type_cols", "item_attrs", "attrs_item_col", "sql")
        return [n for n in names if getattr(self, n) is not None]

    def spec(self, paths: tuple[str, ...] = (), sql: str | None = None, uri: str | None = None) -> InputSpec:
        """The :class:`InputSpec` of these options over ``paths`` (or a query ``sql`` on ``uri``)."""
        shared = {name: getattr(self, name) for name in _SHARED}
        gap = None if self.sessions is None else parse_duration(self.sessions)
        attrs = None if self.item_attrs is None else os.fspath(self.item_attrs)
        return InputSpec(paths=paths, sql=sql, uri=uri, **shared, session_gap=gap, attrs=attrs)


#: The reading options :class:`ReadOptions` and :class:`InputSpec` share by name (``sql`` says where
#: the data is, so a spec's own query is kept apart).
_SHARED = tuple(
    f.name
    for f in dataclasses.fields(InputSpec)
    if f.name in {g.name for g in dataclasses.fields(ReadOptions)} and f.name != "sql"
)


@dataclasses.dataclass(frozen=True)
class Resolved:
    """A training input in one of the shapes the compiler reads.

    Attributes
    ----------
    data : InputSpec, SparseBaskets, corpus or iterable of sequences
        What to compile (a corpus is passed through).
    options : ReadOptions
        How it was read (a table's or attribute table's copy in place of the table).
    cache_dir : Path, optional
        Where its corpus must be compiled: a table has no file to key a cache on, so it is compiled
        once, in the scratch folder (None: the caller's choice).
    table : str, optional
        A table in memory: how messages name it (``"the pandas DataFrame"``), not its Parquet copy.
    row_labels : sequence, optional
        A pandas table's index: a message names a bad row by its position and its label.
    """

    data: Any
    options: ReadOptions
    cache_dir: Path | None = None
    table: str | None = None
    row_labels: Any = None

    def messages(self) -> contextlib.AbstractContextManager:
        """Within the block, a reader's message about a table's Parquet copy names the table and the
        table's own row (its position from 0, and its index label) instead of the copy's path."""
        if self.table is None:
            return contextlib.nullcontext()
        return _named_as_table(Path(self.data.paths[0]), self.table, self.row_labels)

    @property
    def matrix(self) -> SparseBaskets | None:
        """The matrix, when the input is one."""
        return self.data if isinstance(self.data, SparseBaskets) else None


def _is_corpus(data: Any) -> bool:
    """A compiled corpus (:class:`likewise.data.corpus.Corpus`)."""
    from ..data.corpus import Corpus  # the compiler, beside the readers (L4)

    return isinstance(data, Corpus)


def _scratch(stack: ExitStack, holder: list[Path]) -> Path:
    """A temporary folder that lives as long as ``stack`` (made on first use)."""
    if not holder:
        import tempfile

        holder.append(Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="likewise-input-"))))
    return holder[0]


def resolve_input(data: Any, options: ReadOptions, stack: ExitStack) -> Resolved:
    """Decide what ``data`` is and give it the shape the compiler reads (see the module docstring).

    Parameters
    ----------
    data : path, paths, InputSpec, table, matrix, corpus or iterable of sequences
        The training input; with ``options.sql``, the database's URI.
    options : ReadOptions
        How to read it.
    stack : ExitStack
        Owns the scratch folder a table is written to: keep it open while the input is compiled.

    Returns
    -------
    Resolved

    Raises
    ------
    InputError
        An option that does not apply to this kind of input, a log without its basket and item
        columns, or data of no kind training reads; the message names the option or the type.
    """
    scratch: list[Path] = []
    if (
        is_matrix(data)
        or isinstance(data, SparseBaskets)
        or options.item_keys is not None
        or options.user_keys is not None
    ):
        return Resolved(_matrix(data, options), options)
    if options.tokenize != "none" and not isinstance(data, str | os.PathLike | InputSpec):
        got = type(data).__name__
        raise InputError(f"tokenize={options.tokenize!r} reads text files: give a path, got {got}")
    if _is_corpus(data):
        _no_log_options(data, options)
        return Resolved(data, options)
    if type(data).__module__.startswith("duckdb") and hasattr(data, "fetch_arrow_table"):
        # a DuckDB relation: its rows, read as any table (sql= on the database streams instead)
        data = data.to_arrow_table() if hasattr(data, "to_arrow_table") else data.fetch_arrow_table()
    if is_table(data):
        _needs_columns(options, "training on a table")
        if options.item_attrs is not None:
            options = _with_attrs(options, stack, scratch)
        if options.order_log and options.order_col is not None:
            raise InputError("with an order log, name the order time with time_col=, not order_col=")
        named = [options.basket_col, options.item_col, options.order_col, options.user_col, options.time_col]
        named += [options.quantity_col, options.type_col, *dict(options.type_cols or {}).values()]
        path = write_table(
            data, _scratch(stack, scratch) / "log.parquet", list(dict.fromkeys(c for c in named if c))
        )
        spec = dataclasses.replace(options, format="parquet", delimiter=None).spec(paths=(str(path),))
        return Resolved(spec, options, scratch[0] / "cache", _table_name(data), _row_labels(data))
    if isinstance(data, InputSpec):  # its rows, read as it says where the options do not say otherwise
        merged = options.over(ReadOptions.of_spec(data))
        if data.sql is not None and options.sql is None:
            return _resolved(data.uri, dataclasses.replace(merged, sql=data.sql), stack, scratch)
        return _resolved(data.paths, merged, stack, scratch)
    return _resolved(data, options, stack, scratch)


def _resolved(data: Any, options: ReadOptions, stack: ExitStack, scratch: list[Path]) -> Resolved:
    """:func:`resolve_input` for a log or text named by paths or a query, or sequences in memory."""
    if options.order_log:
        _needs_columns(options, "an order log")
        if options.order_col is not None:
            raise InputError("with an order log, name the order time with time_col=, not order_col=")
    cache_dir = None
    if options.item_attrs is not None:
        options = _with_attrs(options, stack, scratch)
        cache_dir = scratch[0] / "cache" if scratch else None  # a table in memory: compiled here, once
    if options.sql is not None:
        return Resolved(_query(data, options.sql, options), options, cache_dir)
    paths = _paths(data, options)
    if paths is not None:
        return Resolved(options.spec(paths=paths), options, cache_dir)
    if isinstance(data, Iterable):
        _no_log_options(data, options)
        return Resolved(data, options)
    raise InputError(
        f"cannot train on {type(data).__name__}: pass a path, an InputSpec, a table (pyarrow, pandas, "
        "polars), a scipy.sparse matrix, a corpus or an iterable of sequences of item keys"
    )


def _matrix(data: Any, options: ReadOptions) -> SparseBaskets:
    """A user × item matrix's rows as baskets; no log option applies to it."""
    if isinstance(data, SparseBaskets):
        return data
    if not is_matrix(data):
        raise InputError(
            "item_keys= and user_keys= name the columns and rows of a user × item matrix (scipy.sparse "
            f"or a 2-D NumPy array of numbers); got {type(data).__name__}"
        )
    unused = options.log_options() + (["tokenize"] if options.tokenize != "none" else [])
    if unused:
        raise InputError(f"{unused[0]}= does not apply to a sparse matrix (each row is a basket)")
    return sparse_baskets(data, options.item_keys, options.user_keys)


def _needs_columns(options: ReadOptions, what: str) -> None:
    """A log is read by its basket and item columns (or one item column per type): the one check."""
    if not (options.basket_col and (options.item_col or options.type_cols)):
        raise InputError(
            f"{what} needs basket_col= and item_col= (--basket-col, --item-col; e.g. 'order_id' and "
            "'product_id'), or type_cols= (--type-cols) for one item column per type"
        )


def _no_log_options(data: Any, options: ReadOptions) -> None:
    """Columns and other log options name what a table or a log file holds: refused for anything else."""
    given = options.log_options()
    if given:
        raise InputError(
            f"{given[0]}= names what a table or a log file holds (its columns, a query); got "
            f"{type(data).__name__}"
        )


def _paths(data: Any, options: ReadOptions) -> tuple[str, ...] | None:
    """The paths ``data`` names: one path, or (for a log, whose options say so) a list of them."""
    if isinstance(data, str | os.PathLike):
        return (os.fspath(data),)
    if isinstance(data, tuple) and data and all(isinstance(p, str) for p in data):
        return data  # an InputSpec's paths
    is_list = isinstance(data, list | tuple) and data and all(isinstance(p, str | os.PathLike) for p in data)
    if is_list and options.log_options():  # without columns a list of str is sequences of items
        return tuple(os.fspath(p) for p in data)
    return None


def _query(uri: Any, sql: str, options: ReadOptions) -> InputSpec:
    """A query on one database: ``uri`` names it."""
    if isinstance(uri, list | tuple):
        if len(uri) != 1:
            raise InputError(f"a query runs on one database: give its URI alone, got {len(uri)} paths")
        uri = uri[0]
    if not isinstance(uri, str | os.PathLike):
        raise InputError(f"a query needs the database's URI (a str), got {type(uri).__name__}")
    return options.spec(sql=sql, uri=os.fspath(uri))


def _with_attrs(options: ReadOptions, stack: ExitStack, scratch: list[Path]) -> ReadOptions:
    """An attribute table in memory written to Parquet, and its item column found."""
    attrs, key = options.item_attrs, options.attrs_item_col
    key = key or _attrs_key(attrs, options.item_col)
    if is_table(attrs):
        table = as_arrow_table(attrs)
        attrs = write_table(table, _scratch(stack, scratch) / "attrs.parquet", table.column_names)
    return dataclasses.replace(options, item_attrs=os.fspath(attrs), attrs_item_col=key)


def _attrs_key(source: Any, item_col: str | None) -> str | None:
    """The attribute table's item column: one named like the log's item column, else its first."""
    if item_col is None:
        return None
    try:
        if isinstance(source, str | os.PathLike) and str(source).endswith(".parquet"):
            import pyarrow.parquet as pq

            names = pq.ParquetFile(os.fspath(source)).schema_arrow.names
        elif isinstance(source, str | os.PathLike):
            with open(source, encoding="utf-8", errors="replace") as f:
                names = [n.strip().strip('"') for n in f.readline().replace("\t", ",").split(",")]
        else:
            names = list(getattr(source, "column_names", getattr(source, "columns", [])))
    except OSError:
        return None  # the attribute reader names the problem
    return item_col if item_col in names else None


def _table_name(data: Any) -> str:
    """How a message names a table in memory."""
    module = type(data).__module__.split(".")[0]
    if module in ("pandas", "polars"):
        return f"the {module} DataFrame"
    if module == "duckdb":
        return "the DuckDB relation"
    return f"the {module} {type(data).__name__}"


def _row_labels(data: Any) -> Any:
    """A pandas table's index when its labels are not its positions (a message then names both)."""
    index = getattr(data, "index", None)
    if type(data).__module__.split(".")[0] != "pandas" or index is None:
        return None
    if type(index).__name__ == "RangeIndex" and index.start == 0 and index.step == 1:
        return None
    return index


#: A reader's row as messages give it (from 1, header not counted).
_AT_ROW = re.compile(r" at data row (\d+) \(rows count from 1, header not counted\)")


def _named_as_table(path: Path, table: str, labels: Any) -> Any:
    """Errors that name the Parquet copy ``path`` of a table in memory name ``table`` and its row."""
    from .sources import named_as

    def row(m: re.Match) -> str:
        at = int(m.group(1)) - 1
        label = f", index label {labels[at]!r}" if labels is not None and at < len(labels) else ""
        return f" at row {at} (position from 0{label})"

    return named_as(path, table, lambda text: _AT_ROW.sub(row, text))
