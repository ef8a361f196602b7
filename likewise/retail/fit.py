"""Training from an order log: product vectors, then customer vectors in the same space."""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..auto import resolve_sample
from ..completion import attach_completion
from ..config import TrainConfig, min_count_for
from ..customers import CustomerTable
from ..embeddings import Embeddings
from ..errors import InputError
from ..train import run_notes, train_tables
from ..vocab import Vocab
from .log import OrderLog, log_codes, read_order_log
from .side import read_item_attributes
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
    type_col: str | None = None,
    type_map: Any = None,
    type_cols: Any = None,
    item_attrs: Any = None,
    attrs_item_col: str | None = None,
    typed_negatives: bool = False,
    **overrides: Any,
) -> Embeddings:
    """Train product vectors from an order log and attach customer vectors built from the same log.

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
        type_col=type_col,
        type_map=parse_type_map(type_map),
        type_cols=type_cols,
    )
    attributes = None
    if item_attrs is not None:
        attributes = read_item_attributes(item_attrs, attrs_item_col or _attrs_key(item_attrs, item_col))
    emb = fit_order_log(
        log,
        config,
        sessions=sessions,
        half_life_days=half_life_days,
        popularity_power=popularity_power,
        progress=progress,
        attributes=attributes,
        typed_negatives=typed_negatives,
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
    attributes: Any = None,
    typed_negatives: bool = False,
    **overrides: Any,
) -> Embeddings:
    """Train product vectors (and the context table) on an :class:`OrderLog`; attach customer vectors.

    Parameters are those of :func:`train_from_log`. With the default ``mode="auto"`` orders train as
    baskets and ``sessions`` as sequences; ``meta["mode_reason"]`` says which was used. A typed log, or
    ``attributes`` (:class:`~likewise.retail.side.ItemAttributes`), gives a typed space
    (:mod:`likewise.retail.side`); ``typed_negatives`` then draws each pair's negatives from the type
    of the item it predicts.
    """
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
    config = dataclasses.replace(config, min_count=min_count_for(config))
    typed = bool(log.columns.get("type_col") or log.columns.get("type_cols"))
    types = None
    t0 = time.perf_counter()
    if typed or attributes is not None:
        from .side import typed_corpus

        vocab, ids, offsets, types = typed_corpus(
            log,
            min_count=config.min_count,
            max_items=config.max_items,
            basket=config.mode == "basket",
            sessions=sessions,
            seed=config.seed,
            attributes=attributes,
        )
    else:
        counts = np.bincount(log.item, minlength=len(log.item_keys))
        vocab = Vocab.from_counts(
            dict(zip(log.item_keys, counts.tolist(), strict=True)),
            min_count=config.min_count,
            max_items=config.max_items,
            what="product",
        )
    if len(vocab) == 0:
        raise InputError(f"no product occurs at least min_count={config.min_count} times")
    if typed_negatives and types is None:
        raise InputError(
            "typed_negatives needs item types: a typed event log (type_col= / type_cols=) or item attributes"
        )
    if types is None:
        lut = np.array([vocab.index.get(k, -1) for k in log.item_keys], dtype=np.int64)
        ids, offsets = log_codes(log, lut, sessions=sessions, seed=config.seed)
    sample, sample_reason = resolve_sample(vocab.counts, config.sample, config.mode)
    config = dataclasses.replace(config, sample=sample)
    notes: dict[str, Any] = {}
    show = sys.stderr.isatty() if progress is None else progress
    neg_types = types.codes if typed_negatives and types is not None else None
    W, C, history = train_tables(
        ids, offsets, vocab.counts, config, notes=notes, progress=show, neg_types=neg_types
    )
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
    if types is not None:
        meta["typed_negatives"] = bool(typed_negatives)
    if attributes is not None:
        meta["attributes"] = attributes.spec
    emb = Embeddings(W, vocab, config=config.to_dict(), meta=meta)
    emb.attach_context(C)
    if types is not None:
        emb.attach_types(types)
    attach_completion(emb, ids, offsets, config, show)
    if log.user is not None:
        emb.attach_customers(
            build_customer_vectors(emb, log, half_life_days=half_life_days, popularity_power=popularity_power)
        )
    return emb
