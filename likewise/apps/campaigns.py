"""Campaigns in a typed space: which campaign fits a customer or an audience, what goes with a campaign,
and who looks like the customers who responded to it.

A campaign is an item of type ``campaign`` trained with the products and articles of the sessions it
was opened in (``likewise train events.csv --type-col event ...``), and a customer's vector is the mean
of what they viewed, bought, opened and read, so one space answers:

* :func:`campaigns_for_customer` -- the campaigns with the highest affinity to a customer's vector
  (the ``for_customer`` score, restricted to campaigns; ``exclude_opened`` leaves out those opened);
* :func:`campaigns_for_audience` -- the same for the mean vector of a list of customers;
* :func:`campaign_products` -- the products bought with a campaign (``also_bought``, restricted to
  products);
* :func:`campaign_audience` -- a lookalike audience: the customers closest to the campaign's
  *responders* (the customers whose history holds it), responders excluded.

Each is also a command (``likewise campaigns``, ``campaign-products``, ``campaign-audience``) and a
route of the HTTP service (``/models/{name}/campaigns/...``), which call these functions.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._arrays import unique
from .._check import check_k
from ..errors import InputError
from ..retail.queries import (
    AudienceMethod,
    affinity_top_k,
    also_bought,
    fitted_customers,
    for_customer,
    lookalike,
)
from ..space.embeddings import Embeddings
from ..space.results import Neighbours

__all__ = [
    "CAMPAIGN",
    "campaign_audience",
    "campaign_products",
    "campaign_responders",
    "campaigns_for_audience",
    "campaigns_for_customer",
]

#: The type name campaigns have by default.
CAMPAIGN = "campaign"


def _check_kind(emb: Embeddings, item: str | int, kind: str) -> int:
    """Id of ``item``, which must be of type ``kind`` in a typed space (an untyped space has no ``kind``)."""
    if emb.types is None:  # an order log's space: its keys are products, so 'unknown product' misleads
        raise InputError(
            f"this space has no item types, so no {kind} {item!r}: campaigns need a space trained from an "
            "event log with a type column (likewise train ... --type-col, see docs/retail.md)"
        )
    i = emb.id_of(item)
    if emb.types is not None and emb.types.type_of(i) != kind:
        raise InputError(f"{emb.keys[i]!r} is a {emb.types.type_of(i)}, not a {kind}")
    return i


def campaigns_for_customer(
    emb: Embeddings,
    customer: str | int,
    k: int = 10,
    *,
    campaign_type: str = CAMPAIGN,
    exclude_opened: bool = False,
) -> Neighbours:
    """The campaigns that fit a customer best: affinity of the customer's vector to each campaign.

    Parameters
    ----------
    customer : str or int
        A customer key (or row) of the space's customer table.
    campaign_type : str
        The type campaigns have in this space.
    exclude_opened : bool
        Leave out the campaigns the customer already opened (a campaign runs for weeks and is sent
        again, so by default every campaign is ranked; ``for_customer(..., types="campaign")`` leaves
        them out as it leaves out products already bought).

    Returns
    -------
    Neighbours
        Campaign keys, best first (1-D).
    """
    return for_customer(emb, customer, k, exclude_bought=exclude_opened, types=campaign_type)


def campaigns_for_audience(
    emb: Embeddings, customers: Sequence[str | int], k: int = 10, *, campaign_type: str = CAMPAIGN
) -> Neighbours:
    """The campaigns that fit an audience (a list of customers) best.

    The audience's vector is the mean of its customers' vectors; campaigns are ranked by its affinity
    (``vector · context[j] + a·log(count[j])``, as :func:`likewise.retail.for_customer` ranks
    products), or by cosine in a space without a context table.

    Raises
    ------
    InputError
        An empty audience, or a space without campaigns.
    UnknownItemError
        A customer that is not in the customer table.
    """
    table = fitted_customers(emb)
    if isinstance(customers, str) or len(customers) == 0:
        raise InputError(f"customers must be a non-empty list of customer keys, got {customers!r}")
    rows = unique(np.array([table.row(c) for c in customers], dtype=np.int64))
    centre = table.vectors[rows].mean(axis=0, dtype=np.float64).astype(np.float32)[None, :]
    allowed = emb.typed_restrict(None, campaign_type)
    if emb.context is None:
        return emb.similar_to_vector(centre[0], k=k, restrict=allowed)
    none = np.zeros(0, np.int64)
    ids, scores = affinity_top_k(emb, centre, check_k(k), none, none, allowed=allowed)
    return emb.neighbours_of(ids[0], scores[0])


def campaign_products(
    emb: Embeddings,
    campaign: str | int,
    k: int = 10,
    *,
    product_type: str = "product",
    campaign_type: str = CAMPAIGN,
) -> Neighbours:
    """The products bought with a campaign: :func:`likewise.retail.also_bought` restricted to products.

    Raises
    ------
    InputError
        ``campaign`` is not of type ``campaign`` (in a typed space).
    """
    _check_kind(emb, campaign, campaign_type)
    return also_bought(emb, campaign, k, types=product_type)


def campaign_responders(emb: Embeddings, campaign: str | int, *, campaign_type: str = CAMPAIGN) -> list[str]:
    """The customers whose history holds the campaign (they opened it), in customer-table order."""
    table = fitted_customers(emb)
    i = _check_kind(emb, campaign, campaign_type)
    has = np.flatnonzero(np.isin(table.bought_ids, np.array([i], dtype=np.int32)))
    rows = unique(np.searchsorted(table.bought_indptr, has, side="right") - 1)
    keys = table.keys
    return [keys[r] for r in rows.tolist()]


def campaign_audience(
    emb: Embeddings,
    campaign: str | int,
    k: int = 100,
    *,
    method: AudienceMethod = "centroid",
    campaign_type: str = CAMPAIGN,
) -> Neighbours:
    """A campaign's lookalike audience: the customers closest to its responders, responders excluded.

    Parameters
    ----------
    campaign : str or int
        A campaign of the space.
    k : int
        Audience size wanted.
    method : {"centroid", "knn"}
        As in :func:`likewise.retail.lookalike`.

    Raises
    ------
    InputError
        No customer responded to the campaign (nothing to look alike), or ``campaign`` is not a campaign.
    """
    seeds = campaign_responders(emb, campaign, campaign_type=campaign_type)
    if not seeds:
        raise InputError(
            f"no customer of the space opened {emb.keys[emb.id_of(campaign)]!r}: it has no responders to "
            "look alike (use campaigns_for_audience, or lookalike with seeds of your own)"
        )
    return lookalike(emb, seeds, k, method)
