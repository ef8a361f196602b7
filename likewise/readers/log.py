"""Transaction logs: CSV/TSV (optionally compressed), Parquet or JSON Lines, read in two streamed passes.

One row per (basket, item) pair, e.g. ``order_id,customer_id,product_id,ts``; the log need not be
sorted. :func:`scan_log` (pass 1) counts the items; :func:`iter_log_groups` (pass 2) groups rows into
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

**One order's size**: an order is never split across partitions, so its rows are held together while
its partition is sorted; the corpus writer then cuts an order of more than
:data:`~likewise.readers.MAX_SEQUENCE_LENGTH` lines into consecutive orders of at most that many, as
a text line is cut.

**Basket order in the corpus**: ascending by the basket hash, ties by basket key. That order does not
depend on the row order of the log or on ``P`` (the partitions are hash *ranges*, so concatenating them
is the global hash order) -- in effect a deterministic shuffle, which is also what SGD wants.

Item keys become strings: text is kept as written (CSV items are read as text), integers are written
without ``.0`` (``12`` and ``12.0`` both give ``"12"``). Basket keys compare as int64 when every batch
has an integer basket column of a type that fits int64 (any but uint64), otherwise as strings. A null or
empty (``""``) basket or item is an error that names the file and the row.

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
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._arrays import unique
from ..errors import InputError
from ._batches import iter_log_batches
from ._checks import (
    as_strings,
    check_empty,
    check_float_keys,
    check_length,
    check_line_breaks,
    check_nulls,
    check_quantity,
    check_utf8,
    column_seconds,
)
from ._files import LOG_FORMATS, InputSpec, first_line, input_format, log_progress, resolve_files

__all__ = [
    "GROUP_MEMORY_BUDGET",
    "MAX_PARTITIONS",
    "CheckedBatch",
    "LogScan",
    "check_log_batch",
    "column_seconds",
    "hash_keys",
    "iter_log_groups",
    "n_partitions",
    "scan_log",
]

#: Memory one partition of a log may take while it is sorted (bytes). Tests lower it to force spills.
GROUP_MEMORY_BUDGET = 512 * 2**20
#: Most spill files open at once during grouping (each partition is one file).
MAX_PARTITIONS = 1024
_PARTITION_TARGET = 16 * 2**20  # bytes of rows per in-memory partition: sorts stay cache friendly


@dataclass
class LogScan:
    """What pass 1 over a log learned: item counts and the facts pass 2 needs.

    Attributes
    ----------
    keys : list of str
        The distinct item keys (unsorted).
    counts : ndarray of int64
        The rows of each key, aligned with ``keys``.
    n_rows : int
        Rows of the whole log.
    basket_is_int : bool
        Every batch had an integer basket column that fits int64 (so keys compare as int64).
    order_type : pyarrow.DataType or None
        The one type the order column is cast to, None without ``order_col``.
    est_bytes : int
        Bytes of the (hash, basket, order, id) rows once in memory; sizes the partitions of pass 2.
    files : list of Path
        The files read, so pass 2 reads the same ones.
    user_keys : list of str or None
        With ``user_col``: the distinct customers, in order of first appearance in the log.
    skipped : dict of str to int
        Rows left out by cause (``on_bad_rows="skip"``), e.g. ``{"null 'product_id'": 3}``; not in
        ``n_rows``.
    """

    keys: list[str]
    counts: np.ndarray
    n_rows: int
    basket_is_int: bool
    order_type: pa.DataType | None
    est_bytes: int  # bytes of the (hash, basket, order, id) rows once in memory
    files: list[Path] = field(default_factory=list)
    user_keys: list[str] | None = None
    skipped: dict[str, int] = field(default_factory=dict)


def _basket_fits_int64(t: pa.DataType) -> bool:
    """Integer basket keys are compared as int64; uint64 may not fit, so it is hashed as text."""
    return pa.types.is_integer(t) and t != pa.uint64()


# --------------------------------------------------------------------------------------------- pass 1


def _merge_counts(parts: list[pa.Table]) -> pa.Table:
    table = pa.concat_tables(parts)
    return table.group_by("k").aggregate([("c", "sum")]).rename_columns(["k", "c"])


@dataclass
class CheckedBatch:
    """One batch of a log, checked (:func:`check_log_batch`): its columns as keys and numbers.

    Attributes
    ----------
    basket : pyarrow.Array
        int64 when the column is an integer type that fits, else strings.
    items : pyarrow.Array
        Item keys as strings (``type:item`` in a typed log).
    user : pyarrow.Array or None
        Customer keys as strings, with ``user_col``.
    seconds : ndarray of int64 or None
        Times as seconds since 1970, with ``time_col``.
    quantity : ndarray of float64 or None
        Units bought, with ``quantity_col``.
    """

    basket: pa.Array
    items: pa.Array
    user: pa.Array | None
    seconds: np.ndarray | None
    quantity: np.ndarray | None


def check_log_batch(spec: InputSpec, path: Path, first_row: int, batch: pa.RecordBatch) -> CheckedBatch:
    """Check a batch of :func:`~likewise.readers.iter_log_batches` as every log reader does.

    Raises
    ------
    InputError
        A null or empty basket, item or customer; a key that is not UTF-8 or (item, customer) holds a
        line break or is longer than ``MAX_ITEM_CHARS`` characters; a time that does not parse; a
        quantity that is not a number >= 0. The message names the file, the column and the data row.
    """
    basket, item = batch.column(0), batch.column(1)
    check_nulls(path, first_row, spec.basket_col or "", basket)
    check_nulls(path, first_row, spec.item_col or "", item)
    if spec.order_col:
        check_nulls(path, first_row, spec.order_col, batch.column(2))
    if _basket_fits_int64(basket.type):
        basket = basket.cast(pa.int64())
    else:
        check_float_keys(path, first_row, spec.basket_col or "", basket)
        basket = as_strings(basket, path, spec.basket_col)
        check_utf8(path, first_row, spec.basket_col or "", basket)
        check_empty(path, first_row, spec.basket_col or "", basket)
    keys = {}
    for name in (spec.item_col, spec.user_col):
        if name:
            col = batch.column(1) if name == spec.item_col else batch.column(name)
            check_nulls(path, first_row, name, col)
            check_float_keys(path, first_row, name, col)
            col = as_strings(col, path, name)
            check_utf8(path, first_row, name, col)
            check_empty(path, first_row, name, col)
            check_line_breaks(path, first_row, name, col)
            check_length(path, first_row, name, col)
            keys[name] = col
    seconds = quantity = None
    if spec.time_col:
        times = batch.column(spec.time_col)
        check_nulls(path, first_row, spec.time_col, times)
        seconds = column_seconds(path, spec.time_col, times, first_row)
    if spec.quantity_col:
        quantity = check_quantity(path, first_row, spec.quantity_col, batch.column(spec.quantity_col))
    user = keys.get(spec.user_col) if spec.user_col else None
    return CheckedBatch(basket, keys[spec.item_col], user, seconds, quantity)


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
    users: list[pa.Array] = []
    last_path = None
    batches = iter_log_batches(spec, files, fmt)
    for path, first_row, batch in batches:
        if progress and path != last_path:
            log_progress(f"counting items in {path}", progress)
            last_path = path
        checked = check_log_batch(spec, path, first_row, batch)
        basket, item_keys = checked.basket, checked.items
        if spec.order_col:
            order = batch.column(2)
            if order.type not in order_types:
                order_types.append(order.type)
            est += order.nbytes
        basket_is_int = basket_is_int and pa.types.is_integer(basket.type)
        est += basket.nbytes + 12 * batch.num_rows
        n_rows += batch.num_rows
        if checked.user is not None:
            users.append(pc.unique(checked.user))
            if sum(len(u) for u in users) > 4_000_000 and len(users) > 1:
                users = [pc.unique(pa.concat_arrays(users))]  # keeps the order of first appearance
            est += 4 * batch.num_rows
        if spec.time_col:
            est += (16 if spec.session_gap else 8) * batch.num_rows  # sessions: time is the order too
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
        order_type=pa.int64() if spec.session_gap else _common_order_type(spec.order_col, order_types),
        est_bytes=est,
        files=files,
        user_keys=pc.unique(pa.concat_arrays(users)).to_pylist() if spec.user_col else None,
        skipped=dict(batches.skipped),
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

    Parameters
    ----------
    col : pyarrow.Array
        Basket keys: an integer array (hashed as int64, splitmix64) or a string/binary one (a
        tabulation hash of the bytes, vectorised).

    Returns
    -------
    ndarray of uint64
        One hash per key, ``len(col)`` long.
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
    """Spill partitions needed so one partition (x3 for sorting) fits in ``budget`` bytes.

    Parameters
    ----------
    est_bytes : int
        :attr:`LogScan.est_bytes` of the log.
    budget : int
        Bytes one partition may take, >= 1.

    Returns
    -------
    int
        Between 1 and :data:`MAX_PARTITIONS`.

    Raises
    ------
    InputError
        ``budget`` is below 1.
    """
    if budget < 1:
        raise InputError(f"memory budget == {budget}, must be >= 1 byte")
    return max(1, min(MAX_PARTITIONS, math.ceil(3 * est_bytes / budget)))


def _pass2_table(
    batch: pa.RecordBatch,
    value_set: pa.Array,
    scan: LogScan,
    spec: InputSpec,
    users: pa.Array | None,
    path: Path,
) -> pa.Table:
    basket = batch.column(0)
    basket = basket.cast(pa.int64()) if scan.basket_is_int else as_strings(basket)
    ids = pc.index_in(as_strings(batch.column(1)), value_set=value_set).fill_null(-1).cast(pa.int32())
    user = None
    if users is not None and spec.user_col:
        user = pc.index_in(as_strings(batch.column(spec.user_col)), value_set=users)
        user = user.fill_null(-1).cast(pa.int32())  # every customer was scanned
    seconds = None
    if spec.time_col:
        seconds = pa.array(column_seconds(path, spec.time_col, batch.column(spec.time_col)))
    if spec.session_gap is not None and user is not None:
        basket = user.cast(pa.int64())  # sessions: a customer's lines in time order, cut at gaps later
    elif spec.basket_scope == "customer" and user is not None:  # a basket is a (customer, order) pair
        basket = pc.binary_join_element_wise(user.cast(pa.string()), basket.cast(pa.string()), "\x1f")
    columns = {"h": pa.array(hash_keys(basket)), "b": basket}
    if spec.session_gap is not None:
        columns["o"] = seconds
    elif scan.order_type is not None:
        order = batch.column(2)
        columns["o"] = order if order.type == scan.order_type else order.cast(scan.order_type)
    columns["i"] = ids
    if user is not None:
        columns["u"] = user
    if spec.order_ids:  # the order id's hash, kept per line; of its text, so 12 and "12" are one order
        columns["k"] = (
            columns["h"] if not scan.basket_is_int else pa.array(hash_keys(basket.cast(pa.string())))
        )
    if seconds is not None:
        columns["t"] = seconds
    return pa.table(columns)


def _cut_sessions(
    ids: np.ndarray, lengths: np.ndarray, side: dict[str, np.ndarray], gap: int
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Cut each customer's time-ordered lines into sessions where ``gap`` seconds pass without a line."""
    t = side["time"]
    start = np.zeros(len(ids), dtype=bool)
    start[np.cumsum(lengths) - lengths] = True
    start[1:] |= np.diff(t) > gap
    starts = np.flatnonzero(start)
    return ids, np.diff(np.append(starts, len(ids))).astype(np.int64), side


#: Side columns carried through grouping: one value per line, kept in the lines' new order.
_SIDE = {"u": "user", "t": "time", "k": "order"}


def _side(table: pa.Table, idx: np.ndarray | None) -> dict[str, np.ndarray]:
    """The side columns of ``table`` (in the order ``idx``, when given) by their corpus names."""
    out = {}
    for col, name in _SIDE.items():
        if col in table.column_names:
            values = table.column(col).to_numpy()
            out[name] = values[idx] if idx is not None else values
    return out


def _group(table: pa.Table, ordered: bool) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], Any]:
    """Sort one partition by (hash, basket, order) -- stably, so ties keep file order -- and cut it: the
    ids, the baskets' lengths, the side columns and each basket's key."""
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
    return ids, lengths, _side(table, idx), table.column("b").take(pa.array(idx[starts]))


def _group_arrow(table: pa.Table, ordered: bool) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], Any]:
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
    ids = table.column("i").to_numpy().astype(np.int32, copy=False)
    return ids, lengths, _side(table, None), b.take(pa.array(starts))


def _spanning(lengths: np.ndarray, user: np.ndarray) -> np.ndarray:
    """Which baskets hold lines of more than one customer (bool, one per basket)."""
    if len(lengths) == 0:
        return np.zeros(0, dtype=bool)
    starts = np.cumsum(lengths) - lengths
    return np.minimum.reduceat(user, starts) != np.maximum.reduceat(user, starts)


def _spanning_error(spanning: int, baskets: int, examples: list[tuple[str, list[str]]]) -> InputError:
    """The refusal of a log whose order ids hold lines of several customers, with examples."""
    shown = "; ".join(
        f"order {k!r}: customers {', '.join(map(repr, users[:3]))}" + (", ..." if len(users) > 3 else "")
        for k, users in examples
    )
    return InputError(
        f"{spanning:,} of {baskets:,} orders hold lines of more than one customer ({shown}): an order id "
        "shared by customers (receipt numbers that restart daily, say) would mix their histories. If an "
        "order is one customer's, give basket_scope='customer' (--basket-scope customer) to make each "
        "(customer, order) a basket; else fix the log's order ids"
    )


def iter_log_groups(
    spec: InputSpec,
    scan: LogScan,
    vocab_keys: list[str],
    scratch: Path,
    *,
    budget: int | None = None,
    progress: bool = False,
) -> Iterator[tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]]:
    """Pass 2 over a log: yield the baskets as ``(ids, lengths, side)`` chunks.

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
    side : dict of str to ndarray
        With ``user_col`` / ``time_col``: ``"user"`` (int32 codes into ``scan.user_keys``) and
        ``"time"`` (int64 seconds since 1970), one per row, aligned with ``ids``; with both a basket and
        a customer column (:attr:`InputSpec.order_ids`), ``"order"`` (uint64, the hash of the line's
        order id, :func:`hash_keys` of its text); else empty.
    """
    budget = GROUP_MEMORY_BUDGET if budget is None else budget
    n_parts = n_partitions(scan.est_bytes, budget)
    spill_to_disk = n_parts > 1
    # Even when everything fits in memory, sorting cache-sized partitions is faster than one big sort.
    n_parts = max(n_parts, min(MAX_PARTITIONS, math.ceil(scan.est_bytes / _PARTITION_TARGET)))
    files = scan.files or resolve_files(spec)
    fmt = input_format(spec, files)
    value_set = pa.array(vocab_keys, type=pa.string())
    users = pa.array(scan.user_keys, type=pa.string()) if scan.user_keys is not None else None
    ordered = scan.order_type is not None
    in_memory: dict[int, list[pa.Table]] = {}
    writers: dict[int, tuple[pa.NativeFile, pa.ipc.RecordBatchStreamWriter]] = {}
    spill = [scratch / f"part-{p:05d}.arrows" for p in range(n_parts)]
    if progress:
        where = "spilled to disk" if spill_to_disk else "in memory"
        log_progress(
            f"grouping {scan.n_rows:,} rows into baskets ({n_parts} partition(s), {where})", progress
        )
    try:
        for path, _row, batch in iter_log_batches(spec, files, fmt):
            try:
                table = _pass2_table(batch, value_set, scan, spec, users, path)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
                raise InputError(f"cannot group the rows of {path}: {first_line(e)}") from None
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
    # a basket of one order id holding lines of two customers is refused (counted, with examples), unless
    # a basket is a (customer, order) pair
    one_customer = users is not None and spec.basket_scope == "order"
    spanning = baskets = 0
    examples: list[tuple[str, list[str]]] = []
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
            log_progress(f"sorting partition {p + 1}/{n_parts}", progress)
        ids, lengths, side, keys = _group(table, ordered)
        if spec.session_gap is not None:
            ids, lengths, side = _cut_sessions(ids, lengths, side, spec.session_gap)
        elif one_customer:
            spans = _spanning(lengths, side["user"])
            spanning += int(spans.sum())
            baskets += len(lengths)
            starts = np.cumsum(lengths) - lengths
            for b in np.flatnonzero(spans)[: 3 - len(examples)].tolist():
                codes = unique(side["user"][starts[b] : starts[b] + lengths[b]])
                names = [scan.user_keys[c] if c >= 0 else "(none)" for c in codes.tolist()]
                examples.append((str(keys[b].as_py()), names))
            if spanning:
                continue  # the log is refused when every partition is counted
        yield ids, lengths, side
    if spanning:
        raise _spanning_error(spanning, baskets, examples)
