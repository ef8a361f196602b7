"""What a customer will buy next: repeats by their own history, new products through the space.

In grocery most of a household's next basket is products it bought before, so the strong simple answers
rank by the household's own purchase frequency and recency (P-TopFreq; TIFU-KNN, Hu et al. SIGIR 2020;
UP-CF@r, Faggioli et al. UMAP 2020: Li et al., "A Next Basket Recommendation Reality Check", TOIS 2023,
found them ahead of the published neural models). :func:`next_basket` (public as
:func:`likewise.retail.next_basket`) ranks a customer's candidates by a logistic model over the named
features of :mod:`likewise.nextbasket.features`, whose weights are fitted when the space is trained
(:mod:`likewise.nextbasket.fit`) and kept in the customer table (``table.next_basket``, a
:class:`~likewise.nextbasket.model.NextBasketModel`); when the model did no better on held-out baskets
(too few customers to fit), the customer's own most-bought list answers. ``explore=True`` answers
"something new": the same ranking over products the customer never bought.

In a typed space (products, campaigns, articles trained together) a next basket offers products: the type
:data:`~likewise.nextbasket.features.PURCHASED` unless ``types=`` names others. The saved record is
checked when the space is loaded (:meth:`NextBasketModel.from_dict`) and its features against
:data:`~likewise.nextbasket.features.FEATURES` when a query reads it, so an edited ``manifest.json`` or
weights fitted by a version that computed other features are refused in one line naming the retrain.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._check import check_bool, check_int, check_k
from ..errors import NotFittedError
from ..space.customers import CustomerTable
from . import features as feats
from .features import COLUMNS, Profile, allowed_rows, log_popularity, ranked, scores
from .model import RETRAIN, NextBasketModel, retrain_command

if TYPE_CHECKING:  # the space is only passed through
    from ..space.embeddings import Embeddings
    from ..space.itemtable import Types
    from ..space.results import Neighbours

__all__ = ["MAX_HISTORY", "fitted_model", "next_basket"]

#: Products of a customer's history a query reads (the most recently bought): bounds one request's work
#: however much a customer bought (one who bought every product cost 150-240 MB a request).
MAX_HISTORY = 1000


def _history(table: CustomerTable) -> dict[str, np.ndarray]:
    """The table's purchase history; :class:`NotFittedError` says how to get one when it has none."""
    if table.history is None:
        raise NotFittedError(
            "this customer table has no purchase history (built before next-basket answers existed, or "
            f"from lines without baskets): retrain from the order log ({RETRAIN})"
        )
    return table.history


def fitted_model(table: CustomerTable, retail: object = None) -> NextBasketModel:
    """The table's next-basket model, checked against the features this version computes.

    Parameters
    ----------
    table : CustomerTable
        A customer table with a purchase history.
    retail : dict, optional
        The space's ``meta["retail"]`` (how its log was read): the retrain command named in an error.

    Raises
    ------
    NotFittedError
        The table has no purchase history or no next-basket model.
    ModelMismatchError
        The weights were fitted on other features (one line: what differs, and the retrain command).
    """
    _history(table)
    model = table.next_basket
    if model is None:
        raise NotFittedError(
            "this space's customer table has no next-basket weights: retrain from the order log "
            f"with a customer column ({RETRAIN})"
        )
    return model.check(feats.FEATURES, retrain_command(retail))


def _table_profile(table: CustomerTable, r: int, cap: int) -> Profile:
    """Customer ``r``'s history, its ``cap`` most recently bought products when it has more (ties: the
    most often bought)."""
    h = _history(table)
    s, e = int(table.bought_indptr[r]), int(table.bought_indptr[r + 1])
    keep: slice | np.ndarray = slice(s, e)
    dropped = np.zeros(0, np.int64)
    if e - s > cap:
        recent = np.zeros(e - s, dtype=bool)
        recent[np.lexsort((-h["decay"][s:e], h["last"][s:e]))[:cap]] = True
        keep = s + np.flatnonzero(recent)  # still sorted by product id
        dropped = np.asarray(table.bought_ids[s:e][~recent], dtype=np.int64)
    return Profile(
        np.asarray(table.bought_ids[keep], dtype=np.int64),
        h["baskets"][keep],
        h["last"][keep],
        h["first"][keep],
        h["decay"][keep],
        int(h["n_baskets"][r]),
        dropped,
    )


def _chances(model: NextBasketModel, s: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The scores shown for ranked candidates (``s``, best first): each one's estimated chance of being in
    the next basket, in ``[0, 1]``, never rising down the list.

    The fitted model's log-odds become a probability (the logistic function: the order is unchanged);
    under the customer's own most-bought list, a bought product's chance is the share of the customer's
    baskets that hold it, a new one's the share of the neighbours' baskets, capped by the chances above it
    (the list ranks every bought product first).
    """
    if model.rule == "own":
        col = COLUMNS.of
        neighbours = 0.5 * (col(x, "neighbours") + col(x, "history_neighbours"))
        p = np.where(col(x, "bought") > 0, col(x, "share"), neighbours)
    else:
        p = 1.0 / (1.0 + np.exp(-np.clip(s, -50.0, 50.0)))
    return np.minimum.accumulate(np.clip(p, 0.0, 1.0)).astype(np.float32) if len(p) else p.astype(np.float32)


def next_basket(
    emb: Embeddings,
    customer: str | int,
    k: int = 10,
    *,
    explore: bool = False,
    types: Types = None,
    max_history: int = MAX_HISTORY,
) -> Neighbours:
    """The products ``customer`` is most likely to buy next, repeats included.

    Parameters
    ----------
    emb : Embeddings
        A space trained from an order log with a customer column (its customer table keeps each
        customer's purchase history and the fitted weights: see the module docstring).
    customer : str, int or Row
        A customer key (an int is the key written the same way; ``likewise.Row(n)`` is row ``n``).
    k : int
        How many products.
    explore : bool
        "Something new": rank only products the customer never bought.
    types : str or list of str, optional
        In a typed space, offer items of these types; default:
        :data:`~likewise.nextbasket.features.PURCHASED` (a campaign or an article is not bought).
    max_history : int
        Read at most this many of the customer's products, the most recently bought (bounds the work
        of one answer; the server's ``--max-history``).

    Returns
    -------
    Neighbours
        Products, best first; ``scores`` are each one's estimated chance of being in the next basket, in
        ``[0, 1]`` and never rising down the list: the fitted logistic model's probability, or under
        the customer's own most-bought list (too few customers to fit a model) the share of the
        customer's baskets that hold it (of the neighbours' baskets, for a product never bought).

    Raises
    ------
    NotFittedError
        The space has no customer table, or its table no purchase history (say how to get one).
    UnknownItemError
        An unknown customer.
    InputError
        A bad ``k``, ``explore`` or ``types``; a typed space without
        :data:`~likewise.nextbasket.features.PURCHASED` items and no ``types``.
    ModelMismatchError
        The saved weights are for other features (one line naming the retrain command).
    """
    from ..retail.queries import fitted_customers  # retail's package imports this module

    table = fitted_customers(emb)
    model = fitted_model(table, (emb.meta or {}).get("retail"))
    r = table.row(customer)
    k = check_k(k)
    explore = check_bool("explore", explore)
    check_int("max_history", max_history, 1)
    allowed = allowed_rows(emb, types)
    profile = _table_profile(table, r, int(max_history))
    vector = np.asarray(table.vectors[r], dtype=np.float32)
    cand, x = ranked(emb, table, profile, vector, r, model.neighbours, explore, allowed, log_popularity(emb))
    if len(cand) == 0:
        return emb.neighbours_of(np.zeros(0, np.int64), np.zeros(0, np.float32))
    s = scores(model, x)
    order = np.lexsort((cand, -s))[:k]
    ids = cand[order]
    return emb.neighbours_of(ids, _chances(model, s[order], x[order]))
