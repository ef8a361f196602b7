"""Training from an order log: product vectors, then customer vectors in the same space."""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._arrays import unique
from ..errors import InputError
from ..readers.resolve import ReadOptions
from ..space.customers import CUSTOMER_BLOCK, CustomerTable, check_customer_weights, customer_table
from ..space.embeddings import Embeddings
from ..training.config import config_with
from .log import OrderLog

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


def distinct_orders(order: np.ndarray) -> np.ndarray:
    """The sorted distinct order hashes of a corpus's ``side["order"]`` (uint64, one per line), read
    :data:`~likewise.space.customers.CUSTOMER_BLOCK` lines at a time (a memory-mapped array stays on disk)."""
    parts = [unique(order[s : s + CUSTOMER_BLOCK]) for s in range(0, len(order), CUSTOMER_BLOCK)]
    return unique(np.concatenate(parts)) if parts else np.zeros(0, np.uint64)


@dataclasses.dataclass(frozen=True)
class CustomerOptions:
    """How customer vectors weigh a customer's purchases (``likewise.train(log, customers=...)``, with
    ``user_col``; :func:`build_customer_vectors`).

    Parameters
    ----------
    half_life_days : float, optional
        Recency decay: a purchase ``half_life_days`` older than the newest weighs half as much (default:
        none, every purchase weighs the same).
    popularity_power : float
        Down-weight very popular products: each line weighs ``count ** -popularity_power`` (0 = off,
        1 = inverse frequency).
    """

    half_life_days: float | None = None
    popularity_power: float = 0.0

    def __post_init__(self) -> None:  # bad weights fail before anything is read
        check_customer_weights(self.half_life_days, self.popularity_power)

    @property
    def weighed(self) -> bool:
        """Whether either weight is asked for (a non-default value)."""
        return self.half_life_days is not None or bool(self.popularity_power)


def train(
    data: Any = None,
    config: Any = None,
    *,
    read: Any = None,
    run: Any = None,
    customers: CustomerOptions | None = None,
    name_col: str | None = None,
    names: Any = None,
    **keywords: Any,
) -> Embeddings:
    """:func:`likewise.train`: :func:`likewise.training.train.fit` and the steps after it
    (:func:`after_training`: customer vectors and their next-basket weights, item attributes, the log's
    record), for every input.

    The options arrive whole (``read``: :class:`~likewise.readers.ReadOptions`, ``run``:
    :class:`~likewise.training.run.RunOptions`, ``customers``: :class:`CustomerOptions`, ``config``:
    :class:`~likewise.training.config.TrainConfig`) or as keywords, each put into the one object whose
    field it names, once, here (:func:`likewise.training.config.sort_options`). ``name_col`` names the
    column of ``item_attrs`` (or ``names``) that holds display names (default:
    :func:`likewise.space.names.choose_name_column`'s). ``names``: a table of the items (a CSV/Parquet
    path or a table, keyed by item) kept for display only, its names shown beside every key and its
    columns on the explorer's map, never trained on (``item_attrs`` trains on its columns as side
    information)."""
    from ..training.config import sort_options
    from ..training.run import Run, RunOptions
    from ..training.train import fit, gensim_data

    data = gensim_data(data, keywords)
    objects = {
        "read": (ReadOptions, read),
        "run": (RunOptions, run),
        "customers": (CustomerOptions, customers),
    }
    config, o = sort_options(keywords, config, objects)
    read, weights = o["read"], o["customers"]
    if names is not None and read.item_attrs is not None:
        raise InputError(
            "give names= (--names: display only) or item_attrs= (--item-attrs: trained on, and shown), "
            "not both"
        )
    if name_col is not None and read.item_attrs is None and names is None:
        raise InputError(
            f"name_col={name_col!r} (--name-col) names a column of the item table: give item_attrs= "
            "(--item-attrs) or names= (--names) too"
        )
    if weights.weighed and read.user_col is None and read.user_keys is None:
        raise InputError(
            "half_life_days= and popularity_power= weigh customer vectors: give user_col= (the log's "
            "customer column)"
        )
    steps = after_training(weights, name_col=name_col)
    if names is not None:
        steps.append(_names_step(names, name_col, read.attrs_item_col))
    return fit(data, read, config, Run.of(config, o["run"]), steps)


def _names_step(names: Any, name_col: str | None, item_col: str | None) -> Any:
    """The step that keeps ``names`` (a table of the items) for display: ``emb.item_table``, saved with
    the space, from which answers take each key's display name and the explorer its columns."""
    from ..readers.attrs import item_table
    from ..space.names import choose_name_column

    def step(emb: Embeddings, corpus: Any, source: Any) -> None:
        table = item_table(names, item_col, emb.keys)
        columns = [c for c in table["columns"] if c != table["item_col"]]
        chosen = choose_name_column(columns, name_col, str(names))
        emb.item_table = table if chosen is None else {**table, "name_col": chosen}

    return step


def after_training(customers: CustomerOptions | None = None, *, name_col: str | None = None) -> list[Any]:
    """The steps after training (:func:`likewise.training.train.train`'s ``steps``) that the input asks for.

    A matrix with ``user_keys`` gets a customer vector per row (the mean of its items' vectors). A log
    read with customers, times, quantities, sessions, types or attributes
    (:attr:`~likewise.readers.ReadOptions.order_log`) gets, in order: its attribute tokens recorded
    (``meta["attributes"]``) and the attribute table kept for the explorer (``emb.item_table``); with
    a customer column, customer vectors weighted as ``customers`` says (:class:`CustomerOptions`,
    :func:`build_customer_vectors`) and their next-basket weights fitted on held-out baskets; and
    ``meta["retail"]``, the columns and lines read.
    """
    weights = CustomerOptions() if customers is None else customers

    def step(emb: Embeddings, corpus: Any, source: Any) -> None:
        if source.matrix is not None:
            _matrix_customers(emb, source.matrix)
        elif source.options.order_log:
            _log_steps(emb, corpus, source, weights.half_life_days, weights.popularity_power, name_col)

    return [step]


def _matrix_customers(emb: Embeddings, baskets: Any) -> None:
    """A customer vector per row of a matrix given ``user_keys`` (the mean of the row's item vectors)."""
    if baskets.user_keys is None:
        return
    users, ids = baskets.lines(emb.vocab.index)
    emb.attach_customers(
        customer_table(emb.vectors, emb.counts, emb.fingerprint, baskets.user_keys, users, ids)
    )


def _log_steps(
    emb: Embeddings,
    corpus: Any,
    source: Any,
    half_life_days: float | None,
    popularity_power: float,
    name_col: str | None = None,
) -> None:
    """:func:`after_training` for a log (see there)."""
    from ..nextbasket.fit import fit_next_basket
    from ..readers.attrs import item_table
    from ..space.names import choose_name_column

    read, spec = source.options, source.data
    if read.item_attrs is not None:  # how the table became tokens: a new product is tokenised the same way
        emb.meta["attributes"] = corpus.manifest["input"]["attributes"]
        table = item_table(read.item_attrs, read.attrs_item_col, emb.keys)  # names for answers and the map
        columns = [c for c in table["columns"] if c != table["item_col"]]
        chosen = choose_name_column(columns, name_col, str(read.item_attrs))
        emb.item_table = table if chosen is None else {**table, "name_col": chosen}
    if read.user_col is not None:
        t1 = time.perf_counter()
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
            seed=int(emb.config.seed),
            threads=emb.config.threads,
        )
        table.next_basket = fitted
        if "order" in corpus.side:  # the orders' ids, hashed: an update refuses or skips a repeat of one
            table.orders = distinct_orders(corpus.side["order"])
        emb.attach_customers(table)
        emb.meta["next_basket_seconds"] = time.perf_counter() - t2
    manifest = corpus.manifest
    lines = int(manifest.get("input", {}).get("log_rows", manifest.get("input_tokens", 0)))  # rows read
    # the columns as the reader took them (a typed log's item_col reads "(a, b)" with type_cols)
    cols = {k: getattr(spec, k) for k in ("basket_col", "item_col", "user_col", "time_col", "quantity_col")}
    described = spec.typing().describe() if read.typed else {}
    emb.meta["retail"] = {**cols, **described, "sessions": read.sessions, "lines": lines}
    # the options as the reader took them, whole: an update reads its new log by them (ReadOptions.from_dict)
    took = dataclasses.replace(ReadOptions.of_spec(spec), as_order_log=read.as_order_log)
    if spec.type_cols:  # the spec's item_col reads "(a, b)": the item is read from type_cols
        took = dataclasses.replace(took, item_col=read.item_col)
    emb.meta["read"] = took.to_dict()
    if read.basket_scope != "order":  # an update reads its new log the same way
        emb.meta["retail"]["basket_scope"] = read.basket_scope
    times = corpus.side.get("time")
    if times is not None and len(times):  # an update refuses or skips orders older than this
        emb.meta["retail"]["newest"] = max(
            int(np.max(times[s : s + CUSTOMER_BLOCK])) for s in range(0, len(times), CUSTOMER_BLOCK)
        )


def train_from_log(
    paths: str | os.PathLike | Sequence[str | os.PathLike],
    config: Any = None,
    *,
    basket_col: str = "order_id",
    item_col: str = "product_id",
    user_col: str | None = "customer_id",
    typed_negatives: bool = False,
    **options: Any,
) -> Embeddings:
    """Train product vectors from an order log and attach customer vectors built from the same log.

    Every log streams through :func:`likewise.training.train.train` like any other input: compiled once into
    the corpus cache by the one log reader (the customer and time of each line beside its product, customer
    sessions cut, a typed log's keys typed and item attributes added as tokens as it is read), trained
    with checkpoints if asked, and the customer vectors built in one bounded pass over the compiled
    corpus (:func:`after_training`). A table in memory is written to a temporary Parquet file and read
    the same way. This is :func:`likewise.train` with an order log's default columns.

    Parameters
    ----------
    paths : path, paths, table or InputSpec
        The log; with ``sql``, the database's URI (``postgresql://...``, ``sqlite:///orders.db``, a
        ``.duckdb`` file, ``duckdb:``; :mod:`likewise.readers.sources`).
    config : TrainConfig, optional
        Training parameters; keyword options that are its fields replace single fields.
    basket_col, item_col, user_col
        The log's order, product and customer columns (``user_col=None``: no customer vectors).
    typed_negatives : bool
        Draw each pair's negatives from the type of the item it predicts (needs types).
    **options
        Reading options (:class:`likewise.readers.ReadOptions`: ``time_col``, ``quantity_col``,
        ``sessions`` (train on customer sessions, ``"30m"``; use ``mode="sequence"`` so the order
        inside a session is learned), ``type_col`` / ``type_map`` / ``type_cols`` (a typed event log;
        ``type_map`` may be ``"view=product,purchase=product"``), ``item_attrs`` / ``attrs_item_col``
        (item attributes trained as side information, :mod:`likewise.retail.side`), ``format``,
        ``delimiter``, ``sql``); customer weights ``half_life_days`` and ``popularity_power``
        (:func:`build_customer_vectors`); how the run goes (``progress``, ``cache_dir``,
        ``checkpoint_dir``, ``checkpoint_every``, ``resume``, ``callback``), as in
        :func:`likewise.training.train.train`; and :class:`TrainConfig` fields.

    Returns
    -------
    Embeddings
        With ``emb.customers`` set when ``user_col`` is given; ``meta["retail"]`` records the options.
    """
    if typed_negatives:
        options["typed_negatives"] = True
    cols = {"basket_col": basket_col, "item_col": item_col, "user_col": user_col, "as_order_log": True}
    if options.get("read") is not None:  # given whole: the log's default columns where it sets none
        return train(paths, config, **{**options, "read": options["read"].over(ReadOptions(**cols))})
    return train(paths, config, **cols, **options)


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
    named = {k: log.columns.get(k) for k in ("basket_col", "item_col", "user_col", "time_col")}
    emb.meta["retail"] |= named
    emb.meta["read"] |= named
    return emb
