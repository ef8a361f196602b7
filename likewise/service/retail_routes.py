"""The retail routes: items bought together, and (in a space with a customer table) customers.

=========================================  =================================================================
route                                      answer (the function of :mod:`likewise.retail` it calls)
=========================================  =================================================================
``GET  /models/{name}/also_bought``        items bought with ``item`` (``also_bought``)
``POST /models/{name}/complete_basket``    items bought with a basket (``complete_basket``)
``POST /models/{name}/for_customer``       items for a customer (``for_customer``)
``POST /models/{name}/next_basket``        what a customer buys next, repeats included (``next_basket``)
``POST /models/{name}/similar_customers``  customers like a customer (``similar_customers``)
``POST /models/{name}/lookalike``          customers like a seed set of customers (``lookalike``)
``GET  /models/{name}/customer``           a customer's purchases, most often bought first, and place on
                                           the map (the explorer's customer view)
``GET  /models/{name}/customers``          customer keys that start with ``prefix`` (the explorer's
                                           autocomplete)
=========================================  =================================================================

The customer routes answer 422 on a space without customers (:data:`~likewise.service.deps.RetailModel`).
"""

import numpy as np
from fastapi import APIRouter, Request
from fastapi.responses import Response

from .. import retail
from .._check import default_of
from .bodies import ANSWERS, BasketBody, CustomerBody, LookalikeBody, NextBasketBody
from .deps import AppLimits, KeyParam, KParam, RetailModel, ServedModel, TypesParam
from .explorer_routes import Limit, Prefix, Projection, Sample, sample_for
from .respond import answer, coordinates, envelope, item_of

__all__ = ["router"]

router = APIRouter()

#: The library's own default (GET parameters cannot call it in the signature).
ALSO_BOUGHT_K: int = default_of(retail.also_bought, "k")


@router.get("/models/{name}/also_bought", summary="Items bought with an item", responses=ANSWERS)
async def also_bought(
    s: ServedModel, item: KeyParam, k: KParam = ALSO_BOUGHT_K, types: TypesParam = None
) -> Response:
    def run() -> dict:
        return envelope([(item, retail.also_bought(s.emb, item_of(item), k, types=types))])

    return await answer(run)


@router.post(
    "/models/{name}/complete_basket", summary="Items bought with a basket (the completion)", responses=ANSWERS
)
async def complete_basket(s: ServedModel, body: BasketBody) -> Response:
    def run() -> dict:
        items = [item_of(i) for i in body.items]
        res = retail.complete_basket(s.emb, items, body.k, on_unknown=body.on_unknown, types=body.types)
        return envelope([(body.items, res)])

    return await answer(run)


@router.post("/models/{name}/for_customer", summary="Items for a customer", responses=ANSWERS)
async def for_customer(body: CustomerBody, s: RetailModel) -> Response:
    def run() -> dict:
        res = retail.for_customer(
            s.emb, item_of(body.customer), body.k, exclude_bought=body.exclude_bought, types=body.types
        )
        return envelope([(body.customer, res)])

    return await answer(run)


@router.post("/models/{name}/next_basket", summary="What a customer will buy next", responses=ANSWERS)
async def next_basket(body: NextBasketBody, s: RetailModel, limits: AppLimits) -> Response:
    def run() -> dict:
        res = retail.next_basket(
            s.emb,
            item_of(body.customer),
            body.k,
            explore=body.explore,
            types=body.types,
            max_history=limits.max_history,
        )
        return envelope([(body.customer, res)])

    return await answer(run)


@router.post("/models/{name}/similar_customers", summary="Customers like a customer", responses=ANSWERS)
async def similar_customers(body: CustomerBody, s: RetailModel) -> Response:
    def run() -> dict:
        return envelope([(body.customer, retail.similar_customers(s.emb, item_of(body.customer), body.k))])

    return await answer(run)


@router.post("/models/{name}/lookalike", summary="Customers like a seed set of customers", responses=ANSWERS)
async def lookalike(body: LookalikeBody, s: RetailModel) -> Response:
    def run() -> dict:
        res = retail.lookalike(s.emb, body.seeds, body.k, method=body.method)
        return envelope([(body.seeds, res)], method=body.method)

    return await answer(run)


@router.get("/models/{name}/customer", summary="A customer's purchases and place on the map")
async def customer(
    request: Request,
    s: RetailModel,
    customer: KeyParam,
    k: KParam = 20,
    projection: Projection = "pca",
    sample: Sample = None,
) -> Response:
    n = sample_for(request, projection, sample)

    def run() -> dict:
        table = s.emb.customers
        r = table.row(item_of(customer))
        lo, hi = int(table.bought_indptr[r]), int(table.bought_indptr[r + 1])
        ids = np.asarray(table.bought_ids[lo:hi], dtype=np.int64)
        history = table.history
        baskets = (
            np.ones(len(ids), dtype=np.int64) if history is None else np.asarray(history["baskets"][lo:hi])
        )
        order = np.lexsort((ids, -baskets))[:k]  # most often bought first, then the more frequent item
        v = np.asarray(table.vectors[r], dtype=np.float64)
        xy = s.place((v / (np.linalg.norm(v) or 1.0))[None, :], n, projection)[0]
        keys = s.emb.keys
        top, counts = ids[order].tolist(), baskets[order].tolist()
        return {
            "customer": table.keys[r],
            "baskets": None if history is None else int(history["n_baskets"][r]),
            "products": len(ids),
            "bought": [{"item": keys[i], "baskets": int(b)} for i, b in zip(top, counts, strict=True)],
            "x": coordinates(xy[0])[0],
            "y": coordinates(xy[1])[0],
            **s.describe(top),
        }

    return await answer(run)


@router.get("/models/{name}/customers", summary="Customer keys that start with a prefix")
async def customers(s: RetailModel, prefix: Prefix = "", limit: Limit = 10) -> Response:
    def run() -> dict:
        p = prefix.casefold()
        found = []
        for key in s.emb.customers.keys:
            if key.casefold().startswith(p):
                found.append(key)
                if len(found) >= limit:
                    break
        return {"prefix": prefix, "customers": found}

    return await answer(run)
