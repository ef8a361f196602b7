"""Customer vectors in a product space (:class:`CustomerTable`), saved with the space they live in.

The table is built by :func:`likewise.retail.build_customer_vectors` and attached to an
:class:`~likewise.space.embeddings.Embeddings` (``emb.customers``); it holds only arrays and a vocabulary, so
the space can load it without the retail layer.
"""

from __future__ import annotations

from collections.abc import Iterator
from numbers import Real
from typing import TYPE_CHECKING, Any

import numpy as np

from .._arrays import unique
from .._pages import release_pages
from ..data.vocab import Vocab
from ..errors import InputError, ItemIndexError, UnknownItemError
from ..nextbasket.history import HISTORY_FIELDS
from ..nextbasket.model import NextBasketModel
from .results import items_frame, items_table
from .search import normalise_rows

if TYPE_CHECKING:  # pyarrow and pandas are imported inside the methods that need them
    import pandas as pd
    import pyarrow as pa

__all__ = [
    "CUSTOMER_BLOCK",
    "CUSTOMER_SUMS_BYTES",
    "CustomerTable",
    "check_customer_weights",
    "customer_table",
]


class CustomerTable:
    """Customer vectors in a product space, with each customer's bought products.

    Parameters
    ----------
    vectors : ndarray of float32, shape [n, D]
        One row per customer (a weighted mean of unit product vectors).
    vocab : Vocab
        Customer keys (``what="customer"``); counts are the number of lines of each customer.
    bought_indptr : ndarray of int64, shape [n + 1]
    bought_ids : ndarray of int32
        Customer ``i`` bought the product ids ``bought_ids[bought_indptr[i]:bought_indptr[i + 1]]``
        (sorted, unique).
    fingerprint : str
        The product space's fingerprint (customer vectors live in that space).
    config : dict, optional
        How the vectors were built (weights), saved with them. A ``"next_basket"`` entry (the manifest's
        form of the next-basket model) is read by :meth:`NextBasketModel.from_dict` into
        :attr:`next_basket`.
    history : dict of ndarray, optional
        Purchase counts per bought product (:mod:`likewise.nextbasket.history`): ``baskets``, ``last``,
        ``first`` (int32) and ``decay`` (float32), aligned with ``bought_ids``, and ``n_baskets``
        (int32, one per customer).
        What :func:`likewise.retail.next_basket` ranks repeats by; absent in tables built from lines
        without baskets.
    orders : ndarray of uint64, optional
        The orders the table was built from: the sorted, distinct 64-bit hashes of their ids
        (:func:`likewise.readers.hash_keys` of the id's text), 8 bytes an order; an update refuses (or
        skips) a new order already among them.
    next_basket : NextBasketModel, optional
        How :func:`likewise.retail.next_basket` ranks (:mod:`likewise.nextbasket.model`), fitted when the
        space was trained; saved in the manifest as ``config["next_basket"]`` (:attr:`saved_config`).
    """

    def __init__(
        self,
        vectors: np.ndarray,
        vocab: Vocab,
        bought_indptr: np.ndarray,
        bought_ids: np.ndarray,
        *,
        fingerprint: str,
        config: dict[str, Any] | None = None,
        history: dict[str, np.ndarray] | None = None,
        orders: np.ndarray | None = None,
        next_basket: NextBasketModel | None = None,
    ) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(vocab):
            raise InputError(f"customer vectors have shape {vectors.shape}, expected ({len(vocab)}, dim)")
        indptr = np.ascontiguousarray(bought_indptr, dtype=np.int64)
        ids = np.ascontiguousarray(bought_ids, dtype=np.int32)
        if indptr.shape != (len(vocab) + 1,) or indptr[0] != 0 or indptr[-1] != len(ids):
            raise InputError(
                f"bought_indptr must have {len(vocab) + 1} entries from 0 to {len(ids)}, got shape "
                f"{indptr.shape}"
            )
        if np.any(np.diff(indptr) < 0):
            raise InputError("bought_indptr must be non-decreasing")
        view = vectors.view()
        view.flags.writeable = False
        self._vectors = view
        self.vocab = vocab
        self.bought_indptr = indptr
        self.bought_ids = ids
        self.fingerprint = fingerprint
        self.config: dict[str, Any] = dict(config or {})
        saved = self.config.pop("next_basket", None)  # the manifest's form: read (and checked) here
        if saved is not None and next_basket is not None:
            raise InputError(
                "the next-basket model is given twice: as config['next_basket'] and next_basket="
            )
        self.next_basket: NextBasketModel | None = (
            NextBasketModel.from_dict(saved) if saved is not None else next_basket
        )
        self.history = _checked_history(history, len(ids), len(vocab), indptr)
        self.orders = None if orders is None else unique(np.asarray(orders, dtype=np.uint64))
        self._normed: np.ndarray | None = None
        self._profiles: np.ndarray | None = None

    @property
    def saved_config(self) -> dict[str, Any]:
        """:attr:`config` as the manifest keeps it: with the next-basket model's record
        (:meth:`NextBasketModel.to_dict`) as ``"next_basket"`` when the table has one."""
        if self.next_basket is None:
            return dict(self.config)
        return {**self.config, "next_basket": self.next_basket.to_dict()}

    @property
    def keys(self) -> list[str]:
        """Customer keys in row order."""
        return self.vocab.keys

    @property
    def vectors(self) -> np.ndarray:
        """float32 [n, D], read-only."""
        return self._vectors

    @property
    def dim(self) -> int:
        """Number of dimensions (the product space's)."""
        return int(self._vectors.shape[1])

    @property
    def normed(self) -> np.ndarray:
        """Unit-length rows (cached)."""
        if self._normed is None:
            self._normed = normalise_rows(self._vectors)
            self._normed.flags.writeable = False
        return self._normed

    @property
    def profiles(self) -> np.ndarray:
        """Unit-length rows of each customer's vector less the mean customer vector (cached).

        What customers share (the staples every household buys) dominates their raw vectors, so raw
        cosines make most customers look alike; the difference from the average customer is what sets
        one apart. Customer-to-customer answers (:func:`likewise.retail.similar_customers`,
        :func:`likewise.retail.lookalike`, implicit's ``similar_users``) compare these rows; product
        answers (``for_customer``, next basket) use :attr:`vectors`. On The Complete Journey's
        demographic segments this lifts a seed audience's AUC from 0.54 to 0.67
        (``python bench/supermarket.py --sections customers``).
        """
        if self._profiles is None:
            centre = self._vectors.mean(axis=0, dtype=np.float64)
            rows = _rows_less(self._vectors, centre)
            self._profiles = normalise_rows(rows)
            self._profiles.flags.writeable = False
        return self._profiles

    def __len__(self) -> int:
        return len(self.vocab)

    def __contains__(self, key: object) -> bool:
        """True for a customer key (an int: the key written the same way) or a ``Row`` of the table."""
        try:
            self.vocab.resolve(key)
        except (UnknownItemError, ItemIndexError, InputError):
            return False
        return True

    def __repr__(self) -> str:
        return f"CustomerTable({len(self)} customers × {self.dim} dims, fingerprint={self.fingerprint!r})"

    def row(self, customer: object) -> int:
        """Row of a customer as given (:meth:`likewise.Vocab.resolve`): a key, an int (the key written the
        same way: household ``43`` is the key ``"43"``) or ``likewise.Row(n)``; unknown keys raise
        ``UnknownItemError``, anything else ``InputError`` naming it."""
        return self.vocab.resolve(customer)

    def bought(self, customer: str | int) -> np.ndarray:
        """Product ids the customer bought (sorted, unique)."""
        r = self.row(customer)
        return self.bought_ids[self.bought_indptr[r] : self.bought_indptr[r + 1]]

    def to_arrow(self, *, norm: bool = False) -> pa.Table:
        """The customers as a pyarrow Table, one row per customer in row order.

        Parameters
        ----------
        norm : bool
            Export the unit-length vectors instead of the raw ones.

        Returns
        -------
        pyarrow.Table
            Columns ``key`` (the customer id), ``id`` (the row), ``count`` (lines in the log) and
            ``vector`` (``fixed_size_list<float32>[D]``, in the product space); the schema metadata
            holds ``likewise.fingerprint`` (the product space's) and ``likewise.what`` = ``customer``.
        """
        return items_table(
            self.keys,
            self.vocab.counts,
            self.normed if norm else self._vectors,
            {"likewise.fingerprint": self.fingerprint, "likewise.what": "customer"},
        )

    def to_pandas(self, *, norm: bool = False) -> pd.DataFrame:
        """The columns of :meth:`to_arrow` as a pandas DataFrame (``df.attrs["fingerprint"]`` set).

        Raises
        ------
        MissingDependencyError
            pandas is not installed.
        """
        vectors = self.normed if norm else self._vectors
        return items_frame(
            self.keys, self.vocab.counts, vectors, self.fingerprint, "CustomerTable.to_pandas()"
        )


def _rows_less(x: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """``x - centre`` as float32, computed in float64 a block of rows at a time."""
    out = np.empty(x.shape, dtype=np.float32)
    step = max(1, (1 << 20) // max(1, x.shape[1]))
    for start in range(0, x.shape[0], step):
        out[start : start + step] = np.asarray(x[start : start + step], dtype=np.float64) - centre
    return out


def _checked_history(
    history: dict[str, np.ndarray] | None, n_pairs: int, n: int, indptr: np.ndarray
) -> dict[str, np.ndarray] | None:
    """The purchase history's arrays, typed and checked against the table's sizes and against each other
    (None: no history): a customer with purchases has baskets, a product's baskets are at most the
    customer's, its last purchase is no older than its first, nor its first older than the customer's
    first basket, and its recency-weighted count is above 0 and at most its baskets."""
    if history is None:
        return None
    out = {}
    for name, dtype in HISTORY_FIELDS.items():
        if name not in history:
            raise InputError(f"the purchase history lacks {name!r} (expected {sorted(HISTORY_FIELDS)})")
        arr = np.ascontiguousarray(history[name], dtype=dtype)
        want = n if name == "n_baskets" else n_pairs
        if arr.shape != (want,):
            raise InputError(f"the purchase history's {name!r} has shape {arr.shape}, expected ({want},)")
        if name != "decay" and len(arr) and arr.min() < 0:
            raise InputError(f"the purchase history's {name!r} holds {int(arr.min())}, must be >= 0")
        if name == "decay" and not np.all(np.isfinite(arr)):
            raise InputError("the purchase history's 'decay' holds a non-finite value")
        out[name] = arr
    if n_pairs == 0:
        return out
    n_b = np.repeat(out["n_baskets"].astype(np.int64), np.diff(indptr))
    baskets, last, first, decay = (out[f].astype(np.float64) for f in ("baskets", "last", "first", "decay"))
    for what, wrong in (
        ("'baskets' below 1 for a bought product", baskets < 1),
        ("'baskets' above the customer's 'n_baskets'", baskets > n_b),
        ("'first' at or past the customer's 'n_baskets'", first >= n_b),
        ("'last' above 'first'", last > first),
        ("'baskets' more than the baskets from 'first' to 'last'", baskets > first - last + 1),
        ("'decay' not above 0 or above 'baskets'", (decay <= 0) | (decay > baskets * (1 + 1e-5))),
    ):
        if wrong.any():
            at = int(np.flatnonzero(wrong)[0])
            raise InputError(
                f"the purchase history is inconsistent: {what} ({int(wrong.sum())} of {n_pairs} pairs; the "
                f"first: customer row {int(np.searchsorted(indptr, at, side='right')) - 1})"
            )
    return out


#: Lines of a log handled at a time by :func:`customer_table` (bounds its working set).
CUSTOMER_BLOCK = 1 << 20
#: Bytes of float64 sums :func:`customer_table` holds at once: more customers take more passes.
CUSTOMER_SUMS_BYTES = 256 * 2**20


def check_customer_weights(half_life_days: Any, popularity_power: Any) -> None:
    """The one check of a customer vector's weights (:func:`customer_table`'s ``half_life_days`` and
    ``popularity_power``; ``likewise.retail.fit.CustomerOptions`` checks them when it is built).

    Raises
    ------
    InputError
        ``half_life_days`` not a number > 0 (None: no decay) or ``popularity_power`` not a number >= 0.
    """
    h, p = half_life_days, popularity_power
    if h is not None and not (isinstance(h, Real) and not isinstance(h, bool) and h > 0):
        raise InputError(f"half_life_days == {h!r}, must be > 0")
    if not (isinstance(p, Real) and not isinstance(p, bool) and p >= 0):
        raise InputError(f"popularity_power == {p!r}, must be >= 0")


def customer_table(
    vectors: np.ndarray,
    counts: np.ndarray,
    fingerprint: str,
    user_keys: list[str],
    users: np.ndarray,
    ids: np.ndarray,
    *,
    times: np.ndarray | None = None,
    half_life_days: float | None = None,
    popularity_power: float = 0.0,
    now: int | None = None,
    offsets: np.ndarray | None = None,
) -> CustomerTable:
    """Customer vectors: the weighted mean of the product vectors of each customer's lines, in one pass.

    The raw product vectors are averaged (not their unit versions), so ``customer @ context[j]`` is the
    customer's mean affinity for product ``j``; cosine comparisons between customers normalise anyway.
    The lines are read :data:`CUSTOMER_BLOCK` at a time, so memory-mapped arrays of a compiled corpus
    (``corpus.side``) are never loaded whole: the working set is the customer table itself, the float64
    sums of :data:`CUSTOMER_SUMS_BYTES` worth of customers at a time (one more pass over the lines per such
    range) and a block.

    Parameters
    ----------
    vectors : ndarray, shape [V, D]
        The product vectors.
    counts : ndarray of int64, shape [V]
        The products' counts (for ``popularity_power``).
    fingerprint : str
        The product space's fingerprint.
    user_keys : list of str
        Customer keys; ``users`` holds codes into it. Rows keep this order.
    users : ndarray of int
        The customer code of each line; -1 for a line without one (an attribute token), skipped.
    ids : ndarray of int
        The product id of each line (aligned with ``users``); -1 for a product not in the space (trimmed
        by ``min_count``), which is skipped. A customer left with no line gets no vector.
    times : ndarray of int64, optional
        Seconds since 1970 per line; needed for ``half_life_days``.
    half_life_days : float, optional
        Recency decay: a line ``half_life_days`` older than ``now`` weighs half as much.
    popularity_power : float
        Down-weight very popular products: each line weighs ``count ** -popularity_power`` (0 = off,
        1 = inverse frequency).
    now : int, optional
        Reference time for the decay (default: the latest time in ``times``).
    offsets : ndarray of int, optional
        The baskets (orders or sessions) the lines form (``offsets[b]:offsets[b + 1]``): with them the
        table keeps each customer's purchase history (:mod:`likewise.nextbasket.history`), which
        :func:`likewise.retail.next_basket` needs.

    Returns
    -------
    CustomerTable
        ``vocab.counts`` holds each customer's lines with a product of the space.

    Raises
    ------
    InputError
        Bad weights, times missing for ``half_life_days``, or no customer with a product of the space.
    """
    from ..kernels import add_weighted_rows

    n_lines = len(ids)
    if len(users) != n_lines:
        raise InputError(f"users and ids differ in length: {len(users)} and {n_lines} (one per line)")
    if half_life_days is not None:
        if times is None or len(times) != n_lines:
            raise InputError("half_life_days needs a time per line (a time column, --time-col)")
        if now is None:
            now = max(int(np.max(times[s : s + CUSTOMER_BLOCK])) for s in range(0, n_lines, CUSTOMER_BLOCK))
    check_customer_weights(half_life_days, popularity_power)
    n_users, n_items, dim = len(user_keys), len(vectors), vectors.shape[1]
    pop = (
        np.maximum(np.asarray(counts), 1).astype(np.float64) ** -popularity_power
        if popularity_power
        else None
    )

    def blocks() -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """(users, items, weights) of the lines with a product of the space, a block at a time."""
        for s in range(0, n_lines, CUSTOMER_BLOCK):
            item = np.asarray(ids[s : s + CUSTOMER_BLOCK], dtype=np.int64)
            user = np.asarray(users[s : s + CUSTOMER_BLOCK], dtype=np.int64)
            weights = np.ones(len(item), dtype=np.float64)
            if half_life_days is not None:
                age = now - np.asarray(times[s : s + CUSTOMER_BLOCK], dtype=np.float64)
                weights *= 0.5 ** (age / (half_life_days * 86400.0))
            known = (item >= 0) & (user >= 0)  # a line of an attribute token has no customer (-1)
            if not known.all():
                item, user, weights = item[known], user[known], weights[known]
            if pop is not None:
                weights *= pop[item]
            yield user, item, weights
            # a memory-mapped corpus's pages of this block: read again from the page cache if needed
            for arr in (ids, users, times):
                if arr is not None:
                    release_pages(arr, s, s + CUSTOMER_BLOCK)

    lines = np.zeros(n_users, dtype=np.int64)
    pairs: list[np.ndarray] = []
    for user, item, _ in blocks():
        lines += np.bincount(user, minlength=n_users)
        pairs.append(unique(user * n_items + item))
    has = lines > 0
    if not has.any():
        raise InputError("no customer bought a product of the space: no customer vectors to build")
    rows = np.cumsum(has) - 1  # code -> row among the customers that keep a vector
    out = np.empty((int(has.sum()), dim), dtype=np.float32)
    # The float64 sums of a range of customers at a time, one pass over the lines per range: the working
    # set stays CUSTOMER_SUMS_BYTES however many customers there are (each sum still adds its lines in
    # line order, so the vectors do not depend on the ranges).
    span = max(1, CUSTOMER_SUMS_BYTES // (8 * max(dim, 1)))
    for lo in range(0, n_users, span):
        hi = min(n_users, lo + span)
        sums = np.zeros((hi - lo, dim), dtype=np.float64)
        wsum = np.zeros(hi - lo, dtype=np.float64)
        for user, item, weights in blocks():
            if lo > 0 or hi < n_users:
                inside = (user >= lo) & (user < hi)
                user, item, weights = user[inside], item[inside], weights[inside]
            add_weighted_rows(sums, wsum, user - lo, item, weights, vectors)
        keep = has[lo:hi]
        out[rows[lo:hi][keep]] = sums[keep] / np.maximum(wsum[keep], 1e-300)[:, None]
    del sums, wsum
    pair = unique(np.concatenate(pairs)) if pairs else np.zeros(0, np.int64)
    del pairs  # the pair keys' temporaries go before the history's (a customer's pairs: 8 bytes each)
    indptr = np.zeros(int(has.sum()) + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[pair // n_items], minlength=len(indptr) - 1), out=indptr[1:])
    pid = (pair % n_items).astype(np.int32)
    keys = [k for k, h in zip(user_keys, has.tolist(), strict=True) if h]
    history = None
    if offsets is not None:
        from ..nextbasket.history import purchase_history

        hist = purchase_history(users, ids, offsets, n_users, n_items, times=times, pair=pair)
        if not np.array_equal(hist.pair, pair):  # the same lines, the same pairs: a check, never expected
            raise InputError("the purchase history's pairs differ from the bought products'")
        history = {
            "baskets": hist.baskets,
            "last": hist.last,
            "first": hist.first,
            "decay": hist.decay,
            "n_baskets": hist.n_baskets[has],
        }
    config = {
        "half_life_days": half_life_days,
        "popularity_power": popularity_power,
        "now": None if half_life_days is None else int(now),
        "customers_without_vector": int((~has).sum()),
    }
    return CustomerTable(
        out,
        Vocab(keys, lines[has], what="customer"),
        indptr,
        pid,
        fingerprint=fingerprint,
        config=config,
        history=history,
    )
