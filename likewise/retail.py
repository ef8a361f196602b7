"""Retail: an order log -> product and customer vectors, "also bought", basket completion, lookalikes.

The flow::

    order log (CSV / Parquet / JSONL: order, customer, product[, time, quantity])
      -> read_order_log            one validated, dictionary-encoded table in memory
      -> log_sequences             one sequence per order, or per customer session (--sessions 30m)
      -> likewise.train            product vectors (basket or sequence mode)
      -> build_customer_vectors    a weighted mean of each customer's products: a second table
      -> queries                   also_bought, complete_basket, for_customer, similar_customers, lookalike

Customer vectors are means of unit product vectors, so they live in the product space: a customer can
be compared with a product (``for_customer``) and with other customers (``similar_customers``,
``lookalike``). The customer table carries the product space's fingerprint and each customer's bought
products (``indptr`` + product ids), and is saved in the same folder as the product vectors.

The log is read whole into Arrow memory (about 40 bytes a line: 25 M lines take ~1 GB); the streaming
reader of :mod:`likewise.readers` is the path for logs larger than memory when no customer table is
needed.
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ._check import check_k
from .customers import CustomerTable
from .embeddings import Embeddings
from .errors import InputError, NotFittedError
from .search import top_k_search
from .space import Neighbours
from .vocab import Vocab

__all__ = [
    "CustomerTable",
    "OrderLog",
    "affinity_top_k",
    "also_bought",
    "build_customer_vectors",
    "complete_basket",
    "fit_order_log",
    "for_customer",
    "holdout_hit_rates",
    "lookalike",
    "lookalike_precision",
    "log_sequences",
    "parse_duration",
    "read_order_log",
    "similar_customers",
    "split_last_order",
    "train_from_log",
    "write_audience",
]

_UNITS = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}


# --------------------------------------------------------------------------------------- the log


def parse_duration(text: str | int | float) -> int:
    """Seconds in a duration like ``"30m"``, ``"2h"``, ``"45s"``, ``"1d"`` (a bare number is seconds).

    Raises
    ------
    InputError
        The text is not a positive number followed by one of ``s``, ``m``, ``min``, ``h``, ``d``.
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
    if not seconds > 0:
        raise InputError(f"duration {text!r} must be > 0")
    return int(round(seconds))


@dataclass
class OrderLog:
    """An order log, dictionary-encoded: one entry per line in every array.

    Attributes
    ----------
    basket : ndarray of int64
        Code of the line's order (basket), ``0..n_baskets-1`` in first-seen order.
    item : ndarray of int64
        Index into ``item_keys``.
    user : ndarray of int64 or None
        Index into ``user_keys`` (None without a customer column).
    time : ndarray of int64 or None
        Seconds since the Unix epoch (None without a time column).
    quantity : ndarray of int64 or None
    item_keys, user_keys : list of str
    columns : dict
        The column names read (``basket_col``, ``item_col``, ``user_col``, ``time_col``).
    """

    basket: np.ndarray
    item: np.ndarray
    user: np.ndarray | None
    time: np.ndarray | None
    quantity: np.ndarray | None
    item_keys: list[str]
    user_keys: list[str]
    columns: dict[str, str | None] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.item)


class _EmptyFile(InputError):
    """A file without data: an error when named, skipped when found in a folder."""


def _row_error(path: Path, first_row: int, mask: np.ndarray, what: str) -> InputError:
    at = int(np.flatnonzero(mask)[0])
    return InputError(
        f"{what} in {path} at data row {first_row + at + 1} (rows count from 1, header not counted)"
    )


def _read_table(path: Path, fmt: str, cols: list[str], id_cols: list[str], delimiter: str | None):
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.json as pjson
    import pyarrow.parquet as pq

    from .readers import _compression, _first_line

    if path.stat().st_size == 0:
        raise _EmptyFile(f"{path} is empty (0 bytes)")
    try:
        if fmt == "parquet":
            names = list(pq.ParquetFile(str(path)).schema_arrow.names)
        elif fmt == "csv":
            sep = delimiter or ("\t" if ".tsv" in [s.lower() for s in path.suffixes] else ",")
            parse = pcsv.ParseOptions(delimiter=sep, newlines_in_values=True)
            with pa.input_stream(str(path), compression=_compression(path)) as s:
                names = list(pcsv.open_csv(s, parse_options=parse).schema.names)
        else:
            table = pjson.read_json(pa.input_stream(str(path), compression=_compression(path)))
            names = table.column_names
    except (pa.ArrowInvalid, OSError) as e:
        if "Empty CSV file" in str(e) or "Empty JSON" in str(e):
            raise _EmptyFile(f"{path} is empty: no header line") from None
        raise InputError(f"cannot read {path} as {fmt}: {_first_line(e)}") from None
    for c in cols:
        if c not in names:
            raise InputError(
                f"column {c!r} not found in {path}; available columns: {', '.join(map(repr, names))}"
            )
    try:
        if fmt == "parquet":
            table = pq.read_table(str(path), columns=cols)
        elif fmt == "csv":
            convert = pcsv.ConvertOptions(
                include_columns=cols,
                column_types={c: pa.string() for c in id_cols},
                strings_can_be_null=True,
                null_values=[""],
                quoted_strings_can_be_null=False,
            )
            with pa.input_stream(str(path), compression=_compression(path)) as s:
                table = pcsv.read_csv(s, parse_options=parse, convert_options=convert)
        else:
            table = table.select(cols)
    except (pa.ArrowInvalid, OSError) as e:
        raise InputError(f"cannot read {path} as {fmt}: {_first_line(e)}") from None
    if table.num_rows == 0:
        raise _EmptyFile(f"{path} is empty: it has no data rows")
    return table.combine_chunks()


def _seconds(path: Path, name: str, col) -> np.ndarray:
    """A time column as int64 seconds since the epoch: timestamps, dates, numbers or ISO 8601 text."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = col.type
    if pa.types.is_timestamp(t) or pa.types.is_date(t):
        return pc.cast(pc.cast(col, pa.timestamp("s")), pa.int64()).to_numpy(zero_copy_only=False)
    if pa.types.is_integer(t) or pa.types.is_floating(t):
        return np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.float64).astype(np.int64)
    strings = pc.cast(col, pa.string())
    try:
        parsed = pc.cast(strings, pa.timestamp("s"))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        parsed = None
    if parsed is None:  # find the first value that does not parse, to name its row
        for i, v in enumerate(strings.to_pylist()):
            try:
                pa.scalar(v, pa.string()).cast(pa.timestamp("s"))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                raise InputError(
                    f"time column {name!r} in {path} at data row {i + 1} (rows count from 1, header not "
                    f"counted) holds {v!r}, which is not a time (expected ISO 8601 such as "
                    "'2026-03-01 12:30:00', or seconds since 1970)"
                ) from None
        raise InputError(f"time column {name!r} in {path} cannot be read as times")
    return pc.cast(parsed, pa.int64()).to_numpy(zero_copy_only=False)


def read_order_log(
    paths: str | os.PathLike | Sequence[str | os.PathLike],
    *,
    basket_col: str = "order_id",
    item_col: str = "product_id",
    user_col: str | None = "customer_id",
    time_col: str | None = None,
    quantity_col: str | None = None,
    format: str = "auto",
    delimiter: str | None = None,
) -> OrderLog:
    """Read and check an order log (CSV/TSV, Parquet or JSON Lines; one row per order line).

    Parameters
    ----------
    paths : path or sequence of paths
        Files and/or folders (a folder stands for its files, as in :class:`~likewise.readers.InputSpec`).
    basket_col, item_col : str
        The order (basket) and product columns.
    user_col : str, optional
        The customer column.
    time_col : str, optional
        Order time: a timestamp or date column, seconds since 1970, or ISO 8601 text.
    quantity_col : str, optional
        Units bought; checked to be >= 0.
    format : {"auto", "csv", "parquet", "jsonl"}
        As in :class:`~likewise.readers.InputSpec`.
    delimiter : str, optional
        CSV field separator.

    Returns
    -------
    OrderLog

    Raises
    ------
    InputError
        One clear message naming the file and the column or data row: a missing column, an empty file,
        a null or empty order / product / customer, a product or customer id with a line break in it,
        a negative quantity, a time that does not parse.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from .readers import InputSpec, _named_files, input_format, resolve_files

    plist = (paths,) if isinstance(paths, str | os.PathLike) else tuple(paths)
    spec = InputSpec(
        paths=tuple(os.fspath(p) for p in plist),
        format=format,
        delimiter=delimiter,
        basket_col=basket_col,
        item_col=item_col,
    )
    files = resolve_files(spec)
    fmt = input_format(spec, files)
    if fmt == "text":
        raise InputError(f"{files[0]} is read as text; an order log must be csv, parquet or jsonl")
    id_cols = [c for c in (basket_col, item_col, user_col) if c]
    cols = list(dict.fromkeys(id_cols + [c for c in (time_col, quantity_col) if c]))
    baskets, items, users, times, quantities = [], [], [], [], []
    named = _named_files(spec)
    for path in files:
        try:
            table = _read_table(path, fmt, cols, id_cols, delimiter)
        except _EmptyFile:
            if path.resolve() in named:
                raise
            continue  # an empty part found in a folder (Spark writes them), as in likewise.readers
        for name in id_cols:
            col = table.column(name).combine_chunks()
            if col.null_count:
                raise _row_error(path, 0, col.is_null().to_numpy(zero_copy_only=False), f"null {name!r}")
            if name == basket_col and pa.types.is_integer(col.type):
                baskets.append(col.cast(pa.int64()))
                continue
            keys = pc.cast(col, pa.string())
            empty = pc.equal(pc.utf8_length(keys), 0).to_numpy(zero_copy_only=False)
            if empty.any():
                raise _row_error(path, 0, empty, f"empty {name!r} value")
            if name != basket_col:
                broken = pc.match_substring_regex(keys, r"[\r\n]").to_numpy(zero_copy_only=False)
                if broken.any():
                    i = int(np.flatnonzero(broken)[0])
                    raise _row_error(
                        path, 0, broken, f"{name!r} value {keys[i].as_py()!r} contains a line break"
                    )
            {basket_col: baskets, item_col: items, user_col: users}[name].append(keys)
        if quantity_col:
            q = table.column(quantity_col).combine_chunks()
            if not (pa.types.is_integer(q.type) or pa.types.is_floating(q.type)):
                raise InputError(
                    f"quantity column {quantity_col!r} in {path} holds {q.type}, expected numbers"
                )
            qn = np.asarray(q.to_numpy(zero_copy_only=False), dtype=np.float64)
            bad = ~(qn >= 0)  # also catches NaN / nulls
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise _row_error(
                    path,
                    0,
                    bad,
                    f"quantity {q[i].as_py()!r} in column {quantity_col!r} (must be a number >= 0)",
                )
            quantities.append(qn.astype(np.int64))
        if time_col:
            t = table.column(time_col).combine_chunks()
            if t.null_count:
                raise _row_error(path, 0, t.is_null().to_numpy(zero_copy_only=False), f"null {time_col!r}")
            times.append(_seconds(path, time_col, t))

    if not items:
        raise InputError(f"the input ({', '.join(map(repr, spec.paths))}) is empty: no file has data rows")

    def encode(parts: list) -> tuple[np.ndarray, list]:
        kinds = {str(p.type) for p in parts}
        if len(kinds) > 1:  # an integer basket column in one file, text in another
            parts = [pc.cast(p, pa.string()) for p in parts]
        enc = pa.chunked_array(parts).combine_chunks().dictionary_encode()
        return enc.indices.to_numpy(zero_copy_only=False).astype(np.int64), enc.dictionary.to_pylist()

    basket, _ = encode(baskets)
    item, item_keys = encode(items)
    user, user_keys = encode(users) if user_col else (None, [])
    return OrderLog(
        basket=basket,
        item=item,
        user=user,
        time=np.concatenate(times) if time_col else None,
        quantity=np.concatenate(quantities) if quantity_col else None,
        item_keys=[str(k) for k in item_keys],
        user_keys=[str(k) for k in user_keys],
        columns={"basket_col": basket_col, "item_col": item_col, "user_col": user_col, "time_col": time_col},
    )


def _log_codes(
    log: OrderLog, lut: np.ndarray, *, sessions: str | int | None = None, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """The log as packed sequences of ids: ``lut`` maps item codes to ids (-1 = left out).

    Returns ``(ids int32, offsets int64)``; empty sequences are dropped and the sequences shuffled.
    """
    n = len(log)
    if sessions is not None:
        gap = parse_duration(sessions)
        if log.user is None or log.time is None:
            raise InputError("sessions need a customer column and a time column (--user-col, --time-col)")
        order = np.lexsort((np.arange(n), log.basket, log.time, log.user))
        user, t = log.user[order], log.time[order]
        start = np.ones(n, dtype=bool)
        start[1:] = (user[1:] != user[:-1]) | (t[1:] - t[:-1] > gap)
    else:
        keys = (np.arange(n), log.basket) if log.time is None else (np.arange(n), log.time, log.basket)
        order = np.lexsort(keys)
        basket = log.basket[order]
        start = np.ones(n, dtype=bool)
        start[1:] = basket[1:] != basket[:-1]
    ids = lut[log.item[order]]
    seq = np.cumsum(start) - 1
    kept = ids >= 0
    ids, seq = ids[kept], seq[kept]
    lengths = np.bincount(seq, minlength=int(start.sum()))
    lengths = lengths[lengths > 0]
    # shuffle whole sequences: SGD prefers no order, and the log's order is arbitrary
    perm = np.random.default_rng(seed).permutation(len(lengths))
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    new_lengths = lengths[perm]
    take = np.repeat(starts[perm] - np.concatenate([[0], np.cumsum(new_lengths)[:-1]]), new_lengths)
    ids = ids[take + np.arange(len(ids))]
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(new_lengths, out=offsets[1:])
    return ids.astype(np.int32), offsets


def log_sequences(log: OrderLog, *, sessions: str | int | None = None, seed: int = 0) -> list[list[str]]:
    """The log as sequences of product keys: one per order, or one per customer session.

    Parameters
    ----------
    log : OrderLog
    sessions : str or int, optional
        A gap (``"30m"``, or seconds): a customer's lines, in time order, start a new session whenever
        the time since their previous line exceeds it. Needs a customer and a time column. Without it,
        each order is one sequence (its lines in time order when there is a time column, else file order).
    seed : int
        The sequences are shuffled with this seed.

    Returns
    -------
    list of list of str
    """
    ids, offsets = _log_codes(log, np.arange(len(log.item_keys)), sessions=sessions, seed=seed)
    names = np.asarray(log.item_keys, dtype=object)[ids]
    return [s.tolist() for s in np.split(names, offsets[1:-1])]


# ------------------------------------------------------------------------------------- customers


def build_customer_vectors(
    emb: Embeddings,
    customers: Sequence[str] | np.ndarray | OrderLog,
    items: Sequence[str] | np.ndarray | None = None,
    *,
    times: np.ndarray | None = None,
    half_life_days: float | None = None,
    popularity_power: float = 0.0,
    now: int | None = None,
) -> CustomerTable:
    """Customer vectors: the weighted mean of the vectors of the products each customer bought.

    The raw product vectors are averaged (not their unit versions), so ``customer @ context[j]`` is the
    customer's mean affinity for product ``j`` (see :func:`for_customer`); cosine comparisons between
    customers normalise anyway.

    Parameters
    ----------
    emb : Embeddings
        The product space.
    customers : sequence of str, or OrderLog
        The customer of each order line; or an :class:`OrderLog` (then ``items`` and ``times`` come from
        it).
    items : sequence of str
        The product of each line (same length). Products not in ``emb`` (trimmed by ``min_count``) are
        skipped; a customer left with none gets no vector.
    times : ndarray of int64, optional
        Seconds since 1970 per line; needed for ``half_life_days``.
    half_life_days : float, optional
        Recency decay: a line ``half_life_days`` older than ``now`` weighs half as much.
    popularity_power : float
        Down-weight very popular products: each line weighs ``count ** -popularity_power`` (0 = off,
        1 = inverse frequency).
    now : int, optional
        Reference time for the decay (default: the latest time in ``times``).

    Returns
    -------
    CustomerTable
        Rows in order of first appearance in the log; ``vocab.counts`` holds lines per customer.
    """
    if isinstance(customers, OrderLog):
        log = customers
        if log.user is None:
            raise InputError("the order log has no customer column: read it with user_col=")
        user_codes, user_keys = log.user, log.user_keys
        lut = np.array([emb.vocab.index.get(k, -1) for k in log.item_keys], dtype=np.int64)
        item_ids = lut[log.item] if len(lut) else np.zeros(0, np.int64)
        times = log.time if times is None else times
    else:
        if items is None or len(items) != len(customers):
            raise InputError("customers and items must be sequences of the same length (one per order line)")
        enc_keys, user_codes = np.unique(np.asarray(customers, dtype=str), return_inverse=True)
        user_keys = enc_keys.tolist()
        index = emb.vocab.index
        item_ids = np.array([index.get(str(k), -1) for k in items], dtype=np.int64)
    n_lines = len(item_ids)
    weights = np.ones(n_lines, dtype=np.float64)
    if half_life_days is not None:
        if times is None or len(times) != n_lines:
            raise InputError("half_life_days needs a time per line (a time column, --time-col)")
        if not half_life_days > 0:
            raise InputError(f"half_life_days == {half_life_days!r}, must be > 0")
        ref = int(np.max(times)) if now is None else int(now)
        weights *= 0.5 ** ((ref - np.asarray(times, dtype=np.float64)) / (half_life_days * 86400.0))
    if popularity_power < 0:
        raise InputError(f"popularity_power == {popularity_power!r}, must be >= 0")
    known = item_ids >= 0
    user_codes = np.asarray(user_codes, dtype=np.int64)[known]
    item_ids = item_ids[known]
    weights = weights[known]
    if popularity_power:
        weights *= np.maximum(emb.counts[item_ids], 1).astype(np.float64) ** -popularity_power
    lines = np.bincount(user_codes, minlength=len(user_keys))
    has = lines > 0
    if not has.any():
        raise InputError("no customer bought a product of the space: no customer vectors to build")
    rows = np.cumsum(has) - 1  # old code -> row among customers that keep a vector
    r = rows[user_codes]
    n = int(has.sum())
    sums = np.zeros((n, emb.dim), dtype=np.float64)
    vectors = emb.vectors
    step = 1 << 18
    for s in range(0, len(r), step):  # blocks keep the float64 temporary small
        np.add.at(sums, r[s : s + step], vectors[item_ids[s : s + step]] * weights[s : s + step, None])
    wsum = np.bincount(r, weights=weights, minlength=n)
    vectors = (sums / np.maximum(wsum, 1e-300)[:, None]).astype(np.float32)
    pair = np.unique(r * len(emb) + item_ids)
    pr, pid = np.divmod(pair, len(emb))
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(pr, minlength=n), out=indptr[1:])
    keys = [k for k, h in zip(user_keys, has.tolist(), strict=True) if h]
    config = {
        "half_life_days": half_life_days,
        "popularity_power": popularity_power,
        "now": None if half_life_days is None else int(np.max(times) if now is None else now),
        "customers_without_vector": int((~has).sum()),
    }
    return CustomerTable(
        vectors,
        Vocab(keys, lines[has], what="customer"),
        indptr,
        pid.astype(np.int32),
        fingerprint=emb.fingerprint,
        config=config,
    )


def train_from_log(
    paths: str | os.PathLike | Sequence[str | os.PathLike],
    config: Any = None,
    *,
    basket_col: str = "order_id",
    item_col: str = "product_id",
    user_col: str | None = "customer_id",
    time_col: str | None = None,
    quantity_col: str | None = None,
    sessions: str | int | None = None,
    half_life_days: float | None = None,
    popularity_power: float = 0.0,
    format: str = "auto",
    delimiter: str | None = None,
    progress: bool | None = None,
    **overrides: Any,
) -> Embeddings:
    """Train product vectors from an order log and attach customer vectors built from the same log.

    Parameters
    ----------
    paths, basket_col, item_col, user_col, time_col, quantity_col, format, delimiter
        As in :func:`read_order_log`.
    config : TrainConfig, optional
        Training parameters; keyword ``overrides`` replace single fields.
    sessions : str or int, optional
        Train on customer sessions (``"30m"``) instead of orders (see :func:`log_sequences`); use
        ``mode="sequence"`` so the order inside a session is learned.
    half_life_days, popularity_power
        Customer vector weights (see :func:`build_customer_vectors`).

    Returns
    -------
    Embeddings
        With ``emb.customers`` set when ``user_col`` is given; ``meta["retail"]`` records the options.
    """
    t0 = time.perf_counter()
    log = read_order_log(
        paths,
        basket_col=basket_col,
        item_col=item_col,
        user_col=user_col,
        time_col=time_col,
        quantity_col=quantity_col,
        format=format,
        delimiter=delimiter,
    )
    emb = fit_order_log(
        log,
        config,
        sessions=sessions,
        half_life_days=half_life_days,
        popularity_power=popularity_power,
        progress=progress,
        **overrides,
    )
    emb.meta["read_seconds"] = time.perf_counter() - t0 - emb.meta["train_seconds"]
    return emb


def fit_order_log(
    log: OrderLog,
    config: Any = None,
    *,
    sessions: str | int | None = None,
    half_life_days: float | None = None,
    popularity_power: float = 0.0,
    progress: bool | None = None,
    **overrides: Any,
) -> Embeddings:
    """Train product vectors (and the context table) on an :class:`OrderLog`; attach customer vectors.

    Parameters are those of :func:`train_from_log`. With the default ``mode="auto"`` orders train as
    baskets and ``sessions`` as sequences; ``meta["mode_reason"]`` says which was used.
    """
    from .train import TrainConfig, resolve_sample, run_notes, train_tables

    known = {f.name for f in dataclasses.fields(TrainConfig)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise InputError(f"unknown training parameter {unknown[0]!r}; known: {', '.join(sorted(known))}")
    config = dataclasses.replace(config or TrainConfig(), **overrides).validate()
    mode_reason = "set by the caller"
    if config.mode == "auto":
        # Sessions chain a customer's orders in time: their order is the signal. A single order's
        # lines carry no order worth learning, whatever the time column says.
        mode = "sequence" if sessions is not None else "basket"
        mode_reason = (
            f"customer sessions (--sessions {sessions}) are ordered in time"
            if sessions is not None
            else f"one basket per {log.columns.get('basket_col') or 'order'}; line order is not used"
        )
        config = dataclasses.replace(config, mode=mode)
    counts = np.bincount(log.item, minlength=len(log.item_keys))
    vocab = Vocab.from_counts(
        dict(zip(log.item_keys, counts.tolist(), strict=True)),
        min_count=config.min_count,
        max_items=config.max_items,
        what="product",
    )
    if len(vocab) == 0:
        raise InputError(f"no product occurs at least min_count={config.min_count} times")
    lut = np.array([vocab.index.get(k, -1) for k in log.item_keys], dtype=np.int64)
    t0 = time.perf_counter()
    ids, offsets = _log_codes(log, lut, sessions=sessions, seed=config.seed)
    sample, sample_reason = resolve_sample(vocab.counts, config.sample, config.mode)
    config = dataclasses.replace(config, sample=sample)
    notes: dict[str, Any] = {}
    show = sys.stderr.isatty() if progress is None else progress
    W, C, history = train_tables(ids, offsets, vocab.counts, config, notes=notes, progress=show)
    config = dataclasses.replace(config, epochs=notes.pop("epochs"))
    meta = {
        **run_notes(history, mode_reason, sample_reason, vocab),
        **notes,
        "backend": "cpu",
        "history": history,
        "train_seconds": time.perf_counter() - t0,
        "corpus": {"n_sequences": len(offsets) - 1, "n_tokens": len(ids)},
        "retail": {**log.columns, "sessions": sessions, "lines": len(log)},
    }
    emb = Embeddings(W, vocab, config=config.to_dict(), meta=meta)
    emb.attach_context(C)
    if log.user is not None:
        emb.attach_customers(
            build_customer_vectors(emb, log, half_life_days=half_life_days, popularity_power=popularity_power)
        )
    return emb


# --------------------------------------------------------------------------------------- queries


def _table(emb: Embeddings) -> CustomerTable:
    table = emb.customers
    if table is None:
        raise NotFittedError(
            "this space has no customer vectors: train from an order log with a customer column "
            "(likewise train LOG --user-col customer_id ...) or attach build_customer_vectors(...)"
        )
    return table


def affinity_top_k(
    emb: Embeddings, queries: np.ndarray, k: int, ex_rows: np.ndarray, ex_ids: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` products by affinity ``q · context[j] + a·log(count[j])`` for each query row.

    ``q`` is a (weighted) mean of input vectors. Skip-gram with negative sampling fits
    ``W[i] · C[j] ≈ PMI(i, j) - log(negative)`` against a noise distribution ``∝ count ** a``
    (``a = ns_exponent``), so adding ``a·log(count[j])`` turns the PMI into ``log P(j | i)`` up to a
    constant: a ranking of what is bought with ``i``, popularity included.

    Returns ``(ids [n, k], scores [n, k])``; ``(ex_rows, ex_ids)`` pairs are never returned.
    """
    table = emb.affinity_table  # raises NotFittedError without a context table
    q = np.hstack([np.asarray(queries, dtype=np.float32), np.ones((len(queries), 1), dtype=np.float32)])
    return top_k_search(table, q, check_k(k), np.asarray(ex_rows, np.int64), np.asarray(ex_ids, np.int64))


def _product_result(emb: Embeddings, ids: np.ndarray, scores: np.ndarray) -> Neighbours:
    keys = emb.keys
    return Neighbours([keys[i] for i in ids.tolist()], ids.astype(np.int64), scores.astype(np.float32))


def also_bought(emb: Embeddings, item: str | int, k: int = 10) -> Neighbours:
    """Products bought with ``item``, best first, ``item`` itself excluded.

    With a context table (spaces trained from an order log) the score is the affinity of
    :func:`affinity_top_k` (complements rank high); otherwise the cosine of product vectors (which
    finds substitutes more than complements).

    Returns
    -------
    Neighbours
        1-D.
    """
    if emb.context is None:
        return emb.similar(item, k=k)
    i = emb.id_of(item)
    ids, scores = emb.affinity_top_k([np.array([i])], check_k(k))
    return _product_result(emb, ids[0], scores[0])


def complete_basket(
    emb: Embeddings,
    items: Sequence[str | int],
    k: int = 10,
    *,
    on_unknown: Literal["raise", "skip"] = "raise",
) -> Neighbours:
    """Products to add to a basket, its own products excluded.

    The score is ``log(mean over the basket's products i of exp(affinity(i, j)))`` (see
    :func:`affinity_top_k`): each product of the basket proposes what goes with it, and a candidate
    that goes well with *one* of them ranks high (a mixture, like summing co-counts over the basket;
    the mean affinity would ask a candidate to go with all of them, and measured 1-2 points of HR@10
    lower). Without a context table: the cosine to the sum of the basket's unit vectors
    (:meth:`Embeddings.recommend`). An unknown product raises ``UnknownItemError`` (with close
    matches); with ``on_unknown="skip"`` unknown products are ignored, and a basket with no known product
    raises :class:`InputError`.
    """
    if isinstance(items, str) or not isinstance(items, Sequence | np.ndarray):
        raise InputError(f"items must be a list of products, got {items!r} (wrap one product in a list)")
    if emb.context is None:
        return emb.recommend(list(items), k=k, on_unknown=on_unknown)
    ids, _ = emb.ids_of(list(items), on_unknown=on_unknown)
    if len(ids) == 0:
        raise InputError(f"the basket has no product known to the space (given {list(items)[:5]!r})")
    out, scores = emb.affinity_top_k([ids], check_k(k))
    return _product_result(emb, out[0], scores[0])


def for_customer(
    emb: Embeddings, customer: str | int, k: int = 10, exclude_bought: bool = True
) -> Neighbours:
    """Products for a customer: the customer's mean affinity (or, without a context table, cosine).

    Parameters
    ----------
    exclude_bought : bool
        Leave out products the customer already bought (set False to include repeat purchases).
    """
    table = _table(emb)
    r = table.row(customer)
    exclude = table.bought(r).astype(np.int64) if exclude_bought else np.zeros(0, np.int64)
    if emb.context is None:
        return emb.similar_to_vector(table.vectors[r], k=k, exclude=exclude.tolist())
    out, scores = affinity_top_k(emb, table.vectors[r : r + 1], k, np.zeros(len(exclude), np.int64), exclude)
    return _product_result(emb, out[0], scores[0])


def _customer_result(table: CustomerTable, rows: np.ndarray, scores: np.ndarray) -> Neighbours:
    keys = table.keys
    return Neighbours([keys[i] for i in rows.tolist()], rows.astype(np.int64), scores.astype(np.float32))


def similar_customers(emb: Embeddings, customer: str | int, k: int = 10) -> Neighbours:
    """The ``k`` customers whose vectors are most cosine-similar to ``customer``'s (itself excluded)."""
    table = _table(emb)
    r = table.row(customer)
    rows, scores = top_k_search(
        table.normed, table.normed[r : r + 1], check_k(k), np.zeros(1, np.int64), np.array([r], np.int64)
    )
    return _customer_result(table, rows[0], scores[0])


def lookalike(
    emb: Embeddings,
    seeds: Sequence[str | int],
    k: int = 100,
    method: Literal["centroid", "knn"] = "centroid",
    *,
    neighbours: int = 50,
) -> Neighbours:
    """The customers closest to a seed audience, seeds excluded, with scores to cut at a threshold.

    Parameters
    ----------
    seeds : sequence of customer keys (or rows)
        The seed audience (unknown keys raise).
    k : int
        Audience size wanted; clamped to the number of non-seed customers.
    method : {"centroid", "knn"}
        ``centroid``: cosine to the mean of the seeds' unit vectors. ``knn``: every seed votes for its
        ``neighbours`` nearest non-seed customers with its cosine; the score is the vote sum divided by
        the number of seeds (customers without a vote are not returned, so fewer than ``k`` may come back).
    neighbours : int
        Votes per seed for ``knn``.

    Returns
    -------
    Neighbours
        Customer keys and row numbers, best first.
    """
    table = _table(emb)
    k = check_k(k)
    if isinstance(seeds, str) or len(seeds) == 0:
        raise InputError(f"seeds must be a non-empty list of customers, got {seeds!r}")
    rows = np.unique(np.array([table.row(s) for s in seeds], dtype=np.int64))
    n = len(table)
    if len(rows) >= n:
        raise InputError(f"the {len(rows)} seeds are all the customers: there is no one else to find")
    if method == "centroid":
        centre = table.normed[rows].mean(axis=0, dtype=np.float64)
        norm = np.linalg.norm(centre)
        q = (centre / (norm if norm > 0 else 1.0)).astype(np.float32)[None, :]
        out, scores = top_k_search(table.normed, q, k, np.zeros(len(rows), np.int64), rows)
        return _customer_result(table, out[0], scores[0])
    if method != "knn":
        raise InputError(f"method == {method!r}, must be 'centroid' or 'knn'")
    m = check_k(neighbours)
    q = table.normed[rows]
    ex_rows = np.repeat(np.arange(len(rows)), len(rows))
    ex_cols = np.tile(rows, len(rows))
    nb, sims = top_k_search(table.normed, q, m, ex_rows, ex_cols)
    votes = np.bincount(nb.ravel(), weights=sims.ravel().astype(np.float64), minlength=n) / len(rows)
    voted = np.zeros(n, dtype=bool)
    voted[nb.ravel()] = True
    cand = np.flatnonzero(voted)
    order = np.lexsort((cand, -votes[cand]))[:k]
    return _customer_result(table, cand[order], votes[cand[order]])


def write_audience(result: Neighbours, path: str | os.PathLike, *, min_score: float | None = None) -> int:
    """Write a :func:`lookalike` result to CSV (``rank,customer_id,score``); returns the rows written.

    Rows scoring below ``min_score`` are cut. The file is written beside ``path`` and renamed into place.
    """
    import csv
    import uuid

    target = Path(path)
    tmp = target.parent / f".{target.name}.tmp-{uuid.uuid4().hex[:8]}"
    n = 0
    try:
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["rank", "customer_id", "score"])
            for key, score in result:
                if min_score is not None and score < min_score:
                    break
                n += 1
                w.writerow([n, key, f"{score:.6f}"])
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return n


# -------------------------------------------------------------------------------------- evidence


def split_last_order(log: OrderLog) -> tuple[OrderLog, OrderLog]:
    """Hold out each customer's last order (by time, then order code) for customers with >= 2 orders.

    Returns
    -------
    train, test : OrderLog
        Two logs sharing the key lists (codes stay comparable).
    """
    if log.user is None:
        raise InputError("split_last_order needs a customer column")
    n_baskets = int(log.basket.max()) + 1
    b_user = np.zeros(n_baskets, dtype=np.int64)
    b_user[log.basket] = log.user
    b_time = np.zeros(n_baskets, dtype=np.int64)
    if log.time is not None:
        np.maximum.at(b_time, log.basket, log.time)
    present = np.zeros(n_baskets, dtype=bool)
    present[log.basket] = True
    order = np.lexsort((np.arange(n_baskets), b_time, b_user))
    order = order[present[order]]
    last = np.ones(len(order), dtype=bool)
    last[:-1] = b_user[order][1:] != b_user[order][:-1]
    n_orders = np.bincount(b_user[order], minlength=len(log.user_keys))
    held = np.zeros(n_baskets, dtype=bool)
    held[order[last & (n_orders[b_user[order]] >= 2)]] = True
    mask = held[log.basket]

    def part(m: np.ndarray) -> OrderLog:
        return OrderLog(
            basket=log.basket[m],
            item=log.item[m],
            user=log.user[m] if log.user is not None else None,
            time=log.time[m] if log.time is not None else None,
            quantity=log.quantity[m] if log.quantity is not None else None,
            item_keys=log.item_keys,
            user_keys=log.user_keys,
            columns=log.columns,
        )

    return part(~mask), part(mask)


def holdout_hit_rates(
    emb: Embeddings,
    train: OrderLog,
    test: OrderLog,
    *,
    k: int = 10,
    baselines: Sequence[str] = ("popular", "cocount"),
    seed: int = 0,
) -> dict[str, dict[str, float]]:
    """HR@k of basket completion and of :func:`for_customer` on held-out orders, model vs count baselines.

    * **Basket completion**: in each held-out order with >= 2 known products one product (drawn with
      ``seed``) is hidden; the rest is the query; a hit when the hidden product is in the top ``k``.
    * **For customer**: for each held-out customer one product of their held-out order that they had not
      bought in ``train`` is the target; the query is the customer (model: their vector; baselines:
      their ``train`` purchases); bought products are excluded for every method.

    The baselines (:func:`likewise.baselines.fit_baselines`) count the ``train`` orders in the space's
    ids. Returns ``{"complete": {method: hr, "n": ...}, "for_customer": {...}}``.
    """
    from .baselines import fit_baselines
    from .evaluate import EmbeddingRecommender

    lut = np.array([emb.vocab.index.get(key, -1) for key in train.item_keys], dtype=np.int64)
    ids, offsets = _log_codes(train, lut, seed=seed)
    models: dict[str, Any] = dict(
        fit_baselines(
            [ids[a:b] for a, b in zip(offsets[:-1], offsets[1:], strict=True)],
            len(emb),
            which=tuple(baselines),
            seed=seed,
        )
    )
    models["likewise"] = EmbeddingRecommender(emb, "likewise")
    rng = np.random.default_rng(seed)
    t_ids, t_off = _log_codes(test, lut, seed=seed)
    ctx, tgt = [], []
    for a, b in zip(t_off[:-1].tolist(), t_off[1:].tolist(), strict=True):
        basket = np.unique(t_ids[a:b]).astype(np.int64)
        if len(basket) >= 2:
            j = int(rng.integers(len(basket)))
            tgt.append(basket[j])
            ctx.append(np.delete(basket, j))
    out: dict[str, dict[str, float]] = {"complete": {"n": float(len(tgt))}, "for_customer": {}}
    target = np.asarray(tgt, dtype=np.int64)
    for name, m in models.items():
        out["complete"][name] = float((m.recommend_ids(ctx, k) == target[:, None]).any(axis=1).mean())
    # for_customer: history = train purchases; target = a new product of the held-out order
    table = _table(emb)
    t_known = lut[test.item] >= 0
    hist_u, hist_i = train.user[lut[train.item] >= 0], lut[train.item][lut[train.item] >= 0]
    order = np.argsort(hist_u, kind="stable")
    hist_u, hist_i = hist_u[order], hist_i[order]
    rows, ctx2, tgt2 = [], [], []
    for u in np.unique(test.user[t_known]).tolist():
        key = test.user_keys[u]
        if key not in table:
            continue
        lo, hi = np.searchsorted(hist_u, [u, u + 1])
        hist = np.unique(hist_i[lo:hi])
        new = np.setdiff1d(lut[test.item[t_known & (test.user == u)]], hist)
        if len(hist) == 0 or len(new) == 0:
            continue
        rows.append(table.row(key))
        ctx2.append(hist)
        tgt2.append(int(rng.choice(new)))
    target2 = np.asarray(tgt2, dtype=np.int64)
    out["for_customer"]["n"] = float(len(tgt2))
    for name, m in models.items():
        if name == "likewise":
            lens = [len(c) for c in ctx2]
            ex_rows = np.repeat(np.arange(len(ctx2)), lens)
            got = affinity_top_k(emb, table.vectors[rows], k, ex_rows, np.concatenate(ctx2))[0]
        else:
            got = m.recommend_ids(ctx2, k)
        out["for_customer"][name] = float((got == target2[:, None]).any(axis=1).mean())
    return out


def lookalike_precision(
    emb: Embeddings,
    labels: dict[str, str],
    *,
    n_seeds: int = 50,
    k: int = 100,
    method: Literal["centroid", "knn"] = "centroid",
    seed: int = 0,
) -> dict[str, float]:
    """Precision@k of :func:`lookalike` at finding customers with the seed audience's hidden label.

    For each label, ``n_seeds`` customers carrying it are the seeds; precision is the share of the
    ``k`` customers returned that carry it too; chance is its share among the other customers.
    Returns the means over labels: ``{"precision", "chance", "labels"}``.
    """
    table = _table(emb)
    rng = np.random.default_rng(seed)
    keys = np.asarray(table.keys, dtype=object)
    lab = np.asarray([labels.get(c) for c in table.keys], dtype=object)
    precision, chance = [], []
    for name in sorted({v for v in lab.tolist() if v is not None}):
        members = np.flatnonzero(lab == name)
        if len(members) < n_seeds + 1:
            continue
        seeds = rng.choice(members, n_seeds, replace=False)
        res = lookalike(emb, keys[seeds].tolist(), k=k, method=method)
        got = lab[res.ids]
        precision.append(float(np.mean(got == name)))
        chance.append((len(members) - n_seeds) / (len(table) - n_seeds))
    if not precision:
        raise InputError(f"no label has more than n_seeds={n_seeds} customers")
    return {
        "precision": float(np.mean(precision)),
        "chance": float(np.mean(chance)),
        "labels": len(precision),
    }
