"""Training from an order log: product vectors, then customer vectors in the same space."""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..space.customers import CustomerTable, customer_table
from ..space.embeddings import Embeddings
from ..training.config import config_with, min_count_for
from .log import OrderLog, parse_duration
from .typed import parse_type_map


def _attrs_key(source: Any, item_col: str | None) -> str | None:
    """The attribute table's item column: one named like the log's item column, else its first column."""
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
        return None  # read_item_attributes names the problem
    return item_col if item_col in names else None


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
    return customer_table(
        emb.vectors,
        emb.counts,
        emb.fingerprint,
        list(user_keys),
        np.asarray(user_codes, dtype=np.int64),
        item_ids,
        times=times,
        half_life_days=half_life_days,
        popularity_power=popularity_power,
        now=now,
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
    type_col: str | None = None,
    type_map: Any = None,
    type_cols: Any = None,
    item_attrs: Any = None,
    attrs_item_col: str | None = None,
    typed_negatives: bool = False,
    cache_dir: str | os.PathLike | None = None,
    checkpoint_dir: str | os.PathLike | None = None,
    checkpoint_every: float | None = None,
    resume: bool = False,
    sql: str | None = None,
    **overrides: Any,
) -> Embeddings:
    """Train product vectors from an order log and attach customer vectors built from the same log.

    Every log streams through :func:`likewise.training.train.train` like any other input: compiled once into
    the corpus cache by the one log reader (the customer and time of each line beside its product, customer
    sessions cut, a typed log's keys typed and item attributes added as tokens as it is read), trained
    with checkpoints if asked, and the customer vectors built in one bounded pass over the compiled
    corpus. A table in memory is written to a temporary Parquet file and read the same way.

    Parameters
    ----------
    paths, basket_col, item_col, user_col, time_col, quantity_col, format, delimiter
        As in :func:`read_order_log`.
    type_col, type_map, type_cols
        A typed event log (products, campaigns, articles in one space): see :func:`read_order_log`;
        ``type_map`` may be a mapping or ``"view=product,purchase=product"``.
    item_attrs : path or table, optional
        Item attributes (CSV/Parquet keyed by item: its first column, or ``attrs_item_col``, or a column
        named like ``item_col``) trained as side information (:mod:`likewise.retail.side`).
    typed_negatives : bool
        Draw each pair's negatives from the type of the item it predicts (needs types).
    config : TrainConfig, optional
        Training parameters; keyword ``overrides`` replace single fields.
    sessions : str or int, optional
        Train on customer sessions (``"30m"``) instead of orders (see :func:`log_sequences`); use
        ``mode="sequence"`` so the order inside a session is learned.
    half_life_days, popularity_power
        Customer vector weights (see :func:`build_customer_vectors`).
    cache_dir, checkpoint_dir, checkpoint_every, resume
        As in :func:`likewise.training.train.train`; not for a typed log (see above).
    sql : str, optional
        Read the log by this query; ``paths`` is then the database's URI (``postgresql://...``,
        ``sqlite:///orders.db``, a ``.duckdb`` file, ``duckdb:``; :mod:`likewise.readers.sources`).

    Returns
    -------
    Embeddings
        With ``emb.customers`` set when ``user_col`` is given; ``meta["retail"]`` records the options.
    """
    return _train_streamed(
        paths,
        config,
        basket_col=basket_col,
        item_col=item_col,
        user_col=user_col,
        time_col=time_col,
        quantity_col=quantity_col,
        sessions=sessions,
        typing={"type_col": type_col, "type_map": parse_type_map(type_map), "type_cols": type_cols},
        attrs=(item_attrs, attrs_item_col),
        typed_negatives=typed_negatives,
        format=format,
        delimiter=delimiter,
        half_life_days=half_life_days,
        popularity_power=popularity_power,
        progress=progress,
        cache_dir=cache_dir,
        checkpoint_dir=checkpoint_dir,
        checkpoint_every=checkpoint_every,
        resume=resume,
        overrides=overrides,
        sql=sql,
    )


def _train_streamed(
    paths: Any,
    config: Any,
    *,
    basket_col: str,
    item_col: str,
    user_col: str | None,
    time_col: str | None,
    quantity_col: str | None,
    sessions: str | int | None,
    typing: dict[str, Any],
    attrs: tuple[Any, str | None],
    typed_negatives: bool,
    format: str,
    delimiter: str | None,
    half_life_days: float | None,
    popularity_power: float,
    progress: bool | None,
    cache_dir: Any,
    checkpoint_dir: Any,
    checkpoint_every: float | None,
    resume: bool,
    overrides: dict[str, Any],
    sql: str | None = None,
) -> Embeddings:
    """:func:`train_from_log` for a log the streaming reader compiles (see there)."""
    import tempfile

    from ..data.corpus import build_corpus
    from ..readers import InputSpec, as_arrow_table, is_table, write_table
    from ..readers.attrs import item_table
    from ..training.auto import infer_mode
    from ..training.train import train
    from .nextbasket import fit_next_basket

    t0 = time.perf_counter()
    config = config_with(config, overrides)
    config = dataclasses.replace(config, typed_negatives=bool(typed_negatives or config.typed_negatives))
    typed = bool(typing["type_col"] or typing["type_cols"])
    cols = {
        "basket_col": basket_col,
        "item_col": item_col,
        "user_col": user_col,
        "time_col": time_col,
        "quantity_col": quantity_col,
    }
    with tempfile.TemporaryDirectory(prefix="likewise-log-") as tmp:
        if is_table(paths):  # a table in memory goes through the same reader as a file
            kinds = [typing["type_col"]] if typing["type_col"] else list((typing["type_cols"] or {}).values())
            named = list(dict.fromkeys(c for c in [*cols.values(), *kinds] if c))
            paths, format, delimiter = write_table(paths, Path(tmp) / "log.parquet", named), "parquet", None
            cache_dir = Path(tmp) / "cache"  # no file to key a cache on: compile it once, here
        item_attrs, attrs_item_col = attrs
        if item_attrs is not None:
            attrs_item_col = attrs_item_col or _attrs_key(item_attrs, item_col)
            if is_table(item_attrs):
                table = as_arrow_table(item_attrs)
                item_attrs = write_table(table, Path(tmp) / "attrs.parquet", table.column_names)
                cache_dir = Path(tmp) / "cache"
        if isinstance(paths, InputSpec):  # its rows: a query, or its paths (the columns are the arguments)
            paths, sql = (paths.uri, paths.sql) if paths.sql is not None else (paths.paths, sql)
        plist = (paths,) if isinstance(paths, str | os.PathLike) else tuple(paths)
        if sql is not None and len(plist) != 1:
            raise InputError(f"a query runs on one database: give its URI alone, got {len(plist)} paths")
        spec = InputSpec(
            paths=() if sql is not None else tuple(os.fspath(p) for p in plist),
            sql=sql,
            uri=os.fspath(plist[0]) if sql is not None else None,
            format=format,
            delimiter=delimiter,
            session_gap=None if sessions is None else parse_duration(sessions),
            **cols,
            **typing,
            attrs=None if item_attrs is None else os.fspath(item_attrs),
            attrs_item_col=attrs_item_col,
        )
        mode_reason = "set by the caller"
        if config.mode == "auto":  # the one inference: orders are baskets, sessions are sequences
            mode, mode_reason = infer_mode(spec)
            config = dataclasses.replace(config, mode=mode)
        config = dataclasses.replace(config, min_count=min_count_for(config))
        show = sys.stderr.isatty() if progress is None else progress
        corpus = build_corpus(
            spec,
            min_count=config.min_count,
            max_items=config.max_items,
            cache_dir=cache_dir,
            what="item" if typed else "product",
            progress=show,
        )
        read_seconds = time.perf_counter() - t0  # reading and compiling the log (or its cached corpus)
        emb = train(
            corpus,
            config,
            progress=show,
            checkpoint_dir=checkpoint_dir,
            checkpoint_every=checkpoint_every,
            resume=resume,
        )
        if emb is None:  # a rank other than 0 under torchrun: rank 0 holds the space
            return None  # type: ignore[return-value]
        emb.meta["mode_reason"] = mode_reason
        if item_attrs is not None:  # how the table became tokens: a new product is tokenised the same way
            emb.meta["attributes"] = corpus.manifest["input"]["attributes"]
            emb.item_table = item_table(item_attrs, attrs_item_col, emb.keys)  # names for the explorer
        t1 = time.perf_counter()
        if user_col is not None:
            table = customer_table(
                emb.vectors,
                emb.counts,
                emb.fingerprint,
                corpus.user_keys or [],
                corpus.side["user"],
                corpus.ids,
                times=corpus.side.get("time"),
                half_life_days=half_life_days,
                popularity_power=popularity_power,
                offsets=corpus.offsets,
            )
            emb.meta["customer_seconds"] = time.perf_counter() - t1
            t2 = time.perf_counter()
            fitted = fit_next_basket(
                emb,
                table,
                corpus.side["user"],
                corpus.ids,
                corpus.offsets,
                corpus.side.get("time"),
                seed=int(config.seed),
            )
            table.config["next_basket"] = fitted
            emb.attach_customers(table)
            emb.meta["next_basket_seconds"] = time.perf_counter() - t2
        manifest = corpus.manifest
        lines = int(manifest.get("input", {}).get("log_rows", manifest.get("input_tokens", 0)))  # rows read
        del corpus  # its memory maps close before the temporary folder goes
    described = spec.typing().describe() if typed else {}
    emb.meta["retail"] = {
        **cols,
        "item_col": spec.item_col,
        **described,
        "sessions": sessions,
        "lines": lines,
    }
    emb.meta["read_seconds"] = read_seconds
    return emb


def fit_order_log(
    log: OrderLog,
    config: Any = None,
    *,
    sessions: str | int | None = None,
    half_life_days: float | None = None,
    popularity_power: float = 0.0,
    progress: bool | None = None,
    attributes: Any = None,
    typed_negatives: bool = False,
    **overrides: Any,
) -> Embeddings:
    """Train on an :class:`OrderLog` already in memory (a split of one, say), through the same path.

    The log is written to a temporary Parquet file (order, product, customer and time columns; a typed
    log's keys split into type and item) and trained by :func:`train_from_log`, so a log in memory and
    the file it came from train alike. Parameters are those of :func:`train_from_log`; ``attributes``
    is its ``item_attrs`` (a path or table).
    """
    import tempfile

    import pyarrow as pa
    import pyarrow.parquet as pq

    config = config_with(config, overrides)  # bad settings fail before the log is written
    keys = np.asarray(log.item_keys, dtype=object)[log.item]
    typed = bool(log.columns.get("type_col") or log.columns.get("type_cols"))
    columns: dict[str, Any] = {"order_id": pa.array(log.basket), "product_id": pa.array(keys, pa.string())}
    if typed:  # "type:item" keys back to a type column and an item column
        parts = pa.compute.split_pattern(columns["product_id"], ":", max_splits=1)
        columns["type"] = pa.compute.list_element(parts, 0)
        columns["product_id"] = pa.compute.list_element(parts, 1)
    if log.user is not None:
        columns["customer_id"] = pa.array(np.asarray(log.user_keys, dtype=object)[log.user], pa.string())
    if log.time is not None:
        columns["timestamp"] = pa.array(log.time, pa.int64())
    with tempfile.TemporaryDirectory(prefix="likewise-log-") as tmp:
        path = Path(tmp) / "log.parquet"
        pq.write_table(pa.table(columns), path)
        emb = train_from_log(
            path,
            config,
            basket_col="order_id",
            item_col="product_id",
            user_col="customer_id" if log.user is not None else None,
            time_col="timestamp" if log.time is not None else None,
            sessions=sessions,
            half_life_days=half_life_days,
            popularity_power=popularity_power,
            progress=progress,
            type_col="type" if typed else None,
            item_attrs=attributes,
            typed_negatives=typed_negatives,
            cache_dir=Path(tmp) / "cache",
        )
    emb.meta["retail"] |= {k: log.columns.get(k) for k in ("basket_col", "item_col", "user_col", "time_col")}
    return emb
