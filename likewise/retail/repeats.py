"""Which orders of a new log a model already holds: what an update refuses, or leaves out and counts.

A model trained from an order log with customers keeps the ids of its orders (64-bit hashes of the ids'
text, :func:`likewise.readers.hash_keys`, with its customer table: ``customer_orders.npy``) and the time of
its newest order (``meta["retail"]["newest"]``). An order of a new log whose id it holds, or one older
than its newest, is a repeat: :func:`likewise.retail.update.update` refuses the log naming how many of
each and an example, or with ``on_repeat="skip"`` leaves them out and counts them. Added twice, an order
counted twice in every history it touched (a customer's baskets went from 8 to 16).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .._arrays import unique
from ..errors import InputError
from ..space.embeddings import Embeddings

__all__ = ["ON_REPEAT", "NewOrders", "new_orders", "record_orders"]

#: What an update does with an order it already holds or one older than its newest: refuse the log, or
#: leave such orders out.
ON_REPEAT = ("refuse", "skip")


@dataclasses.dataclass(frozen=True)
class NewOrders:
    """The new log's orders an update adds: lines (ids into ``keys``), orders, side arrays, customers."""

    ids: np.ndarray
    offsets: np.ndarray
    side: dict[str, np.ndarray]
    user_keys: list[str] | None
    keys: list[str]
    counts: np.ndarray
    skipped: int  # orders left out (on_repeat="skip")
    checked: str  # what repeats were looked for


def new_orders(corpus: Any, parent: Embeddings, info: dict, on_repeat: str) -> NewOrders:
    """The new corpus's orders that the parent does not hold: an order whose id the parent's customer
    table keeps, or one older than the parent's newest order, is refused or (``on_repeat="skip"``) left
    out, counted either way."""
    offsets = np.asarray(corpus.offsets, dtype=np.int64)
    starts = offsets[:-1]
    n = len(starts)
    known = None if parent.customers is None else parent.customers.orders
    order = corpus.side.get("order")
    times = corpus.side.get("time")
    newest = info.get("newest")
    repeated = np.zeros(n, dtype=bool)
    older = np.zeros(n, dtype=bool)
    checked = []
    if known is not None and order is not None and n:
        first = np.asarray(order)[starts]  # an order's sequences (a long one is cut) share its id
        at = np.minimum(np.searchsorted(known, first), max(len(known) - 1, 0))
        repeated = (known[at] == first) if len(known) else repeated
        checked.append("order ids")
    if isinstance(newest, int) and times is not None and n:
        older = np.minimum.reduceat(np.asarray(times), starts) < newest
        checked.append("times")
    bad = repeated | older
    if bad.any() and on_repeat == "refuse":
        raise _repeat_error(corpus, bad, repeated, older, newest, order)
    skipped = _count_orders(bad, None if order is None else np.asarray(order)[starts])
    ids, side = np.asarray(corpus.ids), {k: np.asarray(v) for k, v in corpus.side.items()}
    keys, counts = corpus.vocab.keys, np.asarray(corpus.vocab.counts, dtype=np.int64)
    if bad.any():
        line_keep = np.repeat(~bad, np.diff(offsets))
        ids, side = ids[line_keep], {k: v[line_keep] for k, v in side.items()}
        lengths = np.diff(offsets)[~bad]
        offsets = np.r_[0, np.cumsum(lengths)].astype(np.int64)
        counts = np.bincount(ids, minlength=len(keys)).astype(np.int64)  # a product of skipped orders only: 0
    return NewOrders(
        ids, offsets, side, corpus.user_keys, keys, counts, skipped, " and ".join(checked) or "none"
    )


def record_orders(emb: Embeddings, parent: Embeddings, new: NewOrders) -> None:
    """The updated space holds the parent's orders and the new ones: their ids with its customer table,
    the newest time in ``meta["retail"]``."""
    order, times = new.side.get("order"), new.side.get("time")
    old = None if parent.customers is None else parent.customers.orders
    if emb.customers is not None and old is not None and order is not None:
        emb.customers.orders = unique(np.concatenate([old, unique(order)]))
    retail = emb.meta.get("retail")
    if isinstance(retail, dict) and times is not None and len(times):
        retail = emb.meta["retail"] = dict(retail)  # the parent's record stays as it was
        newest = int(np.max(times))
        retail["newest"] = max(newest, retail["newest"]) if isinstance(retail.get("newest"), int) else newest


def _count_orders(mask: np.ndarray, hashes: np.ndarray | None) -> int:
    """Orders among the sequences ``mask`` marks (a long order cut in pieces counts once)."""
    if hashes is None:
        return int(mask.sum())
    return len(unique(hashes[mask]))


def _repeat_error(
    corpus: Any, bad: np.ndarray, repeated: np.ndarray, older: np.ndarray, newest: Any, order: Any
) -> InputError:
    """The refusal of a new log that repeats orders: how many of each kind, an example, the option."""
    import datetime

    starts = np.asarray(corpus.offsets)[:-1]
    hashes = None if order is None else np.asarray(order)[starts]
    total = _count_orders(np.ones(len(bad), bool), hashes)
    parts = []
    if repeated.any():
        parts.append(f"{_count_orders(repeated, hashes):,} are already in the model")
    if older.any():
        when = datetime.datetime.fromtimestamp(newest, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S")
        parts.append(f"{_count_orders(older, hashes):,} are older than its newest order ({when} UTC)")
    first = int(starts[int(np.flatnonzero(bad)[0])])
    example = ""
    users, times = corpus.side.get("user"), corpus.side.get("time")
    if users is not None and corpus.user_keys is not None and int(users[first]) >= 0:
        example = f"customer {corpus.user_keys[int(users[first])]!r}'s order"
        if times is not None:
            stamp = datetime.datetime.fromtimestamp(int(times[first]), datetime.UTC)
            example += f" of {stamp.strftime('%Y-%m-%d %H:%M:%S')}"
        example = f"; e.g. {example}"
    return InputError(
        f"of the new log's {total:,} orders, {' and '.join(parts)}{example}: an update adds each order "
        "once (counted twice, a customer's history doubles). Give on_repeat='skip' (--on-repeat skip) to "
        "leave them out, or a log of the new orders only"
    )
