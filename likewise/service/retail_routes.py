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
=========================================  =================================================================

The customer routes answer 422 on a space without customers (:data:`~likewise.service.deps.RetailModel`).
"""

from fastapi import APIRouter
from fastapi.responses import Response

from .. import retail
from .._check import default_of
from .bodies import ANSWERS, BasketBody, CustomerBody, LookalikeBody, NextBasketBody
from .deps import KeyParam, KParam, RetailModel, ServedModel, TypesParam
from .respond import answer, envelope, item_of

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
            s.emb, body.customer, body.k, exclude_bought=body.exclude_bought, types=body.types
        )
        return envelope([(body.customer, res)])

    return await answer(run)


@router.post("/models/{name}/next_basket", summary="What a customer will buy next", responses=ANSWERS)
async def next_basket(body: NextBasketBody, s: RetailModel) -> Response:
    def run() -> dict:
        res = retail.next_basket(s.emb, body.customer, body.k, explore=body.explore)
        return envelope([(body.customer, res)])

    return await answer(run)


@router.post("/models/{name}/similar_customers", summary="Customers like a customer", responses=ANSWERS)
async def similar_customers(body: CustomerBody, s: RetailModel) -> Response:
    def run() -> dict:
        return envelope([(body.customer, retail.similar_customers(s.emb, body.customer, body.k))])

    return await answer(run)


@router.post("/models/{name}/lookalike", summary="Customers like a seed set of customers", responses=ANSWERS)
async def lookalike(body: LookalikeBody, s: RetailModel) -> Response:
    def run() -> dict:
        res = retail.lookalike(s.emb, body.seeds, body.k, method=body.method)
        return envelope([(body.seeds, res)], method=body.method)

    return await answer(run)
