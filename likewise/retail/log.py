"""Reading an order log: one validated, dictionary-encoded table in memory, and its sequences."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError
from ..readers.resolve import parse_duration  # re-exported: likewise.retail.parse_duration

# --------------------------------------------------------------------------------------- the log


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
        The column names read (``basket_col``, ``item_col``, ``user_col``, ``time_col``; for a typed
        log also ``type_col``, ``type_map`` and ``type_cols``).
    """

    basket: np.ndarray
    item: np.ndarray
    user: np.ndarray | None
    time: np.ndarray | None
    quantity: np.ndarray | None
    item_keys: list[str]
    user_keys: list[str]
    columns: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.item)


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
    type_col: str | None = None,
    type_map: Mapping[str, str] | None = None,
    type_cols: Mapping[str, str] | None = None,
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
    type_col, type_map, type_cols : optional
        A typed event log (:mod:`likewise.retail.events`): each row's type from a column (renamed by
        ``type_map``), or from which of ``type_cols`` (type -> column) the row fills. Item keys then
        read ``type:item``.

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

    from ..readers import InputSpec, check_log_batch, input_format, iter_log_batches, resolve_files

    plist = (paths,) if isinstance(paths, str | os.PathLike) else tuple(paths)
    spec = InputSpec(
        paths=tuple(os.fspath(p) for p in plist),
        format=format,
        delimiter=delimiter,
        basket_col=basket_col,
        item_col=item_col,
        user_col=user_col,
        time_col=time_col,
        quantity_col=quantity_col,
        type_col=type_col,
        type_map=type_map,
        type_cols=type_cols,
    )
    files = resolve_files(spec)
    fmt = input_format(spec, files)
    if fmt == "text":
        raise InputError(f"{files[0]} is read as text; an order log must be csv, parquet or jsonl")
    baskets, items, users, times, quantities = [], [], [], [], []
    for path, first_row, batch in iter_log_batches(spec, files, fmt):  # the one reader, the one check
        checked = check_log_batch(spec, path, first_row, batch)
        baskets.append(checked.basket)
        items.append(checked.items)
        users.append(checked.user)
        times.append(checked.seconds)
        quantities.append(checked.quantity)

    def encode(parts: list) -> tuple[np.ndarray, list]:
        kinds = {str(p.type) for p in parts}
        if len(kinds) > 1:  # an integer basket column in one file, text in another
            parts = [pc.cast(p, pa.string()) for p in parts]
        enc = pa.chunked_array(parts).combine_chunks().dictionary_encode()
        return enc.indices.to_numpy(zero_copy_only=False).astype(np.int64), enc.dictionary.to_pylist()

    basket, _ = encode(baskets)
    item, item_keys = encode(items)
    user, user_keys = encode(users) if user_col else (None, [])
    typing = spec.typing()
    return OrderLog(
        basket=basket,
        item=item,
        user=user,
        time=np.concatenate(times) if time_col else None,
        quantity=np.concatenate(quantities).astype(np.int64) if quantity_col else None,
        item_keys=[str(k) for k in item_keys],
        user_keys=[str(k) for k in user_keys],
        columns={"basket_col": basket_col, "item_col": spec.item_col, "user_col": user_col}
        | {"time_col": time_col}
        | (typing.describe() if typing is not None else {}),
    )


def log_codes(
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
    ids, offsets = log_codes(log, np.arange(len(log.item_keys)), sessions=sessions, seed=seed)
    names = np.asarray(log.item_keys, dtype=object)[ids]
    return [s.tolist() for s in np.split(names, offsets[1:-1])]
