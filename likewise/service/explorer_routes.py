"""The explorer's routes: item search by key or name, the 2-D map in two projections, map places of any items.

=========================================  =================================================================
route                                      answer
=========================================  =================================================================
``GET  /models/{name}/search``             keys that start with ``prefix``, then names, attribute values,
                                           key substrings, typos (:mod:`~likewise.service.textsearch`)
``GET  /models/{name}/map``                the map of the ``sample`` most frequent items with their
                                           attributes (``"status": "ready"``); ``projection=tsne``: the
                                           job's progress (``"status": "computing"``) until the map is
                                           ready (:mod:`likewise.service.projection`)
``POST /models/{name}/coords``             places of any items on that map, with their attributes
=========================================  =================================================================
"""

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from pydantic import Field
from starlette.concurrency import run_in_threadpool

from ..errors import InputError
from .bodies import Bound, CoordsBody, ErrorBody, QueryInt
from .deps import ServedModel, registry_of
from .projection import PROJECTIONS, check_projection
from .respond import answer, coordinates, item_of, json_response

__all__ = ["Limit", "Prefix", "Projection", "Sample", "router", "sample_for"]

router = APIRouter()

Prefix = Annotated[str, Query(), Bound("max_key")]
Limit = Annotated[int, Query(ge=1), QueryInt, Bound("max_prefix_results")]
Sample = Annotated[
    Annotated[int, Field(ge=2), QueryInt, Bound("max_map")] | None, Query(description="items on the map")
]
Projection = Annotated[
    Literal[PROJECTIONS],  # as CoordsBody's: one check for GET and POST
    Query(
        description="pca (computed at load), or tsne / umap (computed once in the background: until it "
        'is ready the answer is its progress, {"status": "computing", "done", "total", ...}; the explore '
        "/ umap extra)",
    ),
]


@router.get(
    "/models/{name}/search",
    summary="Items whose key starts with a prefix, then items whose name holds it; most frequent first",
)
async def search(s: ServedModel, prefix: Prefix = "", limit: Limit = 10) -> Response:
    def run() -> dict:
        found = s.search(prefix, limit)
        keys, counts = s.emb.keys, s.emb.counts
        attrs = s.attrs if s.attrs is not None and s.attrs.name_column is not None else None
        return {
            "prefix": prefix,
            "items": [
                {
                    "item": keys[i],
                    "id": i,
                    "count": int(counts[i]),
                    "match": how,
                    **({"name": attrs.name_of(i)} if attrs is not None else {}),
                }
                for i, how in found
            ],
        }

    return await answer(run)


def sample_for(request: Request, projection: str, sample: int | None) -> int:
    """The map size a request asks for: a t-SNE map at the server's ``--map-sample`` only, never at a size
    a client picks (and one job per model at a time: :class:`~likewise.service.projection.Runner`)."""
    check_projection(projection)
    map_sample = registry_of(request).map_sample
    n = map_sample if sample is None else sample
    if projection != "pca" and n != map_sample:
        raise InputError(
            f"sample == {n}: the {projection} map is computed for the server's --map-sample "
            f"({map_sample} items) only; leave sample out"
        )
    return n


@router.get(
    "/models/{name}/map",
    summary="2-D coordinates of the most frequent items (PCA; or t-SNE, its progress until it is ready)",
    responses={
        409: {
            "model": ErrorBody,
            "description": "the t-SNE job was cancelled: a newer version took its place",
        },
        500: {"model": ErrorBody, "description": "computing the t-SNE map failed (says why)"},
    },
)
async def item_map(
    request: Request, s: ServedModel, sample: Sample = None, projection: Projection = "pca"
) -> Response:
    n = sample_for(request, projection, sample)

    def run() -> Response:
        payload, ready = s.projected_map(n, projection)
        if not ready and payload["status"] == "failed":
            return json_response(
                {"error": f"the {projection} map failed: {payload['error']}", **payload}, 500
            )
        if not ready and payload["status"] == "cancelled":  # a newer version of the model took its place
            return json_response(
                {"error": f"the {projection} map was cancelled: {payload['error']}", **payload}, 409
            )
        return json_response(payload, 200)

    return await run_in_threadpool(run)


@router.post("/models/{name}/coords", summary="Map coordinates of any items, on the axes of the map")
async def coords(request: Request, s: ServedModel, body: CoordsBody) -> Response:
    n = sample_for(request, body.projection, body.sample)

    def run() -> dict:
        ids, _ = s.emb.ids_of([item_of(i) for i in body.items])
        xy = s.project(ids, n, body.projection)
        keys = s.emb.keys
        return {
            "items": [keys[i] for i in ids.tolist()],
            "x": coordinates(xy[:, 0]),
            "y": coordinates(xy[:, 1]),
            **s.describe(ids.tolist()),
        }

    return await answer(run, queries=len(body.items))
