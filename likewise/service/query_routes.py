"""The queries of every space: nearest items to items or vectors, basket recommendations, analogies.

=========================================  =================================================================
route                                      answer (the method of :class:`~likewise.Embeddings` it calls)
=========================================  =================================================================
``GET  /models/{name}/similar``            nearest items to one ``item`` (``similar``)
``POST /models/{name}/similar``            nearest items to each item of a batch (``similar``)
``POST /models/{name}/similar_vector``     nearest items to a vector or a batch (``similar_to_vector``)
``POST /models/{name}/recommend``          items to add to a basket (``recommend``)
``POST /models/{name}/analogy``            a is to b as c is to ? (``analogy``)
=========================================  =================================================================
"""

import math
from typing import cast

from fastapi import APIRouter
from fastapi.responses import Response

from .._check import default_of
from ..errors import InputError
from ..space.embeddings import Embeddings
from .bodies import ANSWERS, AnalogyBody, RecommendBody, SimilarBody, VectorBody
from .deps import AppLimits, KeyParam, KParam, RestrictParam, ServedModel, TypesParam, check_results
from .respond import answer, envelope, item_of

__all__ = ["router"]

#: The largest finite float32: a query vector beyond it would be infinite in the space's dtype.
F32_MAX = 3.4028234663852886e38

router = APIRouter()

#: The library's own default (GET parameters cannot call it in the signature).
SIMILAR_K: int = default_of(Embeddings.similar, "k")


@router.get("/models/{name}/similar", summary="Nearest items to one item", responses=ANSWERS)
async def similar_one(
    s: ServedModel,
    item: KeyParam,
    k: KParam = SIMILAR_K,
    restrict: RestrictParam = None,
    types: TypesParam = None,
) -> Response:
    def run() -> dict:
        res = s.emb.similar(item_of(item), k=k, restrict=restrict, types=types)
        return envelope([(item, res)])

    return await answer(run)


@router.post("/models/{name}/similar", summary="Nearest items to each item of a batch", responses=ANSWERS)
async def similar_batch(s: ServedModel, body: SimilarBody, lim: AppLimits) -> Response:
    check_results(lim, len(body.items), body.k)

    def run() -> dict:
        items = [item_of(i) for i in body.items]
        res = s.emb.similar(
            items, body.k, restrict=body.restrict, on_unknown=body.on_unknown, types=body.types
        )
        rows = res.queries.tolist() if res.queries is not None else []
        return envelope((body.items[q], res[r]) for r, q in enumerate(rows))

    return await answer(run, queries=len(body.items))


def vector_rows(vector: list[float | int] | list[list[float | int]]) -> tuple[list[list[float | int]], bool]:
    """The query vectors as rows, and whether they came as a batch; a ragged batch is refused."""
    batch = bool(vector) and isinstance(vector[0], list)
    # pydantic chose one member of the union: a batch holds only lists, a vector only numbers
    rows = cast(list[list[float | int]], vector) if batch else [cast(list[float | int], vector)]
    if batch:
        lengths = sorted({len(r) for r in rows})
        if len(lengths) > 1:
            raise InputError(f"the vectors of a batch must have one length, got lengths {lengths[:5]}")
    return rows, batch


@router.post(
    "/models/{name}/similar_vector", summary="Nearest items to a vector (or a batch)", responses=ANSWERS
)
async def similar_vector(s: ServedModel, body: VectorBody, lim: AppLimits) -> Response:
    rows, batch = vector_rows(body.vector)
    check_results(lim, len(rows), body.k)
    if len(rows[0]) != s.emb.dim:
        raise InputError(f"query vector has length {len(rows[0])}, expected {s.emb.dim} (the space's dim)")

    def run() -> dict:
        if not all(math.isfinite(x) and abs(x) <= F32_MAX for row in rows for x in row):
            raise InputError("vector contains NaN or infinite values, or values beyond float32's range")
        import numpy as np

        res = s.emb.similar_to_vector(
            np.asarray(body.vector, dtype=np.float32),
            body.k,
            exclude=[item_of(i) for i in body.exclude],
            types=body.types,
        )
        return envelope(enumerate(res.rows() if batch else [res]))  # a vector's query: its row number

    return await answer(run, queries=len(rows))


@router.post("/models/{name}/recommend", summary="Items to add to a basket", responses=ANSWERS)
async def recommend(s: ServedModel, body: RecommendBody) -> Response:
    extra = {"scoring": body.scoring} if body.scoring is not None else {}

    def run() -> dict:
        res = s.emb.recommend(
            [item_of(i) for i in body.items],
            k=body.k,
            restrict=body.restrict,
            on_unknown=body.on_unknown,
            types=body.types,
            **extra,
        )
        return envelope([(body.items, res)], **extra)

    return await answer(run)


@router.post("/models/{name}/analogy", summary="a is to b as c is to ?", responses=ANSWERS)
async def analogy(s: ServedModel, body: AnalogyBody) -> Response:
    def run() -> dict:
        a, b, c = item_of(body.a), item_of(body.b), item_of(body.c)
        res = s.emb.analogy(a, b, c, k=body.k, method=body.method, restrict=body.restrict)
        return envelope([([body.a, body.b, body.c], res)], method=body.method)

    return await answer(run)
