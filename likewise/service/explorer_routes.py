"""The explorer's routes: item search by key or name, the 2-D map in two projections, map places of any items.

=========================================  =================================================================
route                                      answer
=========================================  =================================================================
``GET  /models/{name}/search``             keys that start with ``prefix``, then items whose name holds it
                                           (:meth:`~likewise.service.models.Served.search`)
``GET  /models/{name}/map``                the map of the ``sample`` most frequent items with their
                                           attributes (``"status": "ready"``); ``projection=tsne``: the
                                           job's progress (``"status": "computing"``) until the map is
                                           ready (:mod:`likewise.service.projection`)
``POST /models/{name}/coords``             places of any items on that map, with their attributes
=========================================  =================================================================

No ``from __future__ import annotations`` here: FastAPI reads the route annotations, which name local
types.
"""

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import FastAPI, Query
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from ..errors import InputError
from .bodies import Bodies, ErrorBody, Limits
from .models import Registry
from .projection import PROJECTIONS, check_projection

__all__ = ["add_explorer_routes"]


def add_explorer_routes(
    app: FastAPI,
    registry: Registry,
    bodies: Bodies,
    lim: Limits,
    *,
    answer: Callable[[Callable[[], Any]], Any],
    item_of: Callable[[Any], Any],
    respond: Callable[[Any, int], Response],
) -> None:
    """Add the explorer's routes to ``app`` (``answer`` runs a payload function off the event loop;
    ``item_of`` parses a key or ``#id``; ``respond(payload, status)`` is the app's JSON answer)."""

    @app.get(
        "/models/{name}/search",
        summary="Items whose key starts with a prefix, then items whose name holds it; most frequent first",
    )
    async def search(
        name: str,
        prefix: Annotated[str, Query(max_length=lim.max_key)] = "",
        limit: Annotated[int, Query(ge=1, le=lim.max_prefix_results)] = 10,
    ):
        s = registry.get(name)

        def run() -> dict:
            found = s.search(prefix, limit)
            keys, counts = s.emb.keys, s.emb.counts
            names = s.attrs is not None and s.attrs.name_column is not None
            return {
                "prefix": prefix,
                "items": [
                    {
                        "item": keys[i],
                        "id": i,
                        "count": int(counts[i]),
                        **({"name": s.attrs.name_of(i), "match": how} if names else {}),  # type: ignore[union-attr]
                    }
                    for i, how in found
                ],
            }

        return await answer(run)

    Projection = Annotated[
        str,
        Query(
            description="pca (computed at load), or tsne (computed once in the background: until it is "
            'ready the answer is its progress, {"status": "computing", "done", "total", ...}; the explore '
            "extra)",
            json_schema_extra={"enum": list(PROJECTIONS)},
        ),
    ]

    def sample_for(projection: str, sample: int | None) -> int:
        # one t-SNE job per model version: at the server's --map-sample, never at a size a client picks
        check_projection(projection)
        n = registry.map_sample if sample is None else sample
        if projection != "pca" and n != registry.map_sample:
            raise InputError(
                f"sample == {n}: the {projection} map is computed for the server's --map-sample "
                f"({registry.map_sample} items) only; leave sample out"
            )
        return n

    @app.get(
        "/models/{name}/map",
        summary="2-D coordinates of the most frequent items (PCA; or t-SNE, its progress until it is ready)",
        responses={500: {"model": ErrorBody, "description": "computing the t-SNE map failed (says why)"}},
    )
    async def item_map(
        name: str,
        sample: Annotated[int | None, Query(ge=2, le=lim.max_map, description="items on the map")] = None,
        projection: Projection = "pca",
    ):
        s = registry.get(name)
        n = sample_for(projection, sample)

        def run() -> Response:
            payload, ready = s.projected_map(n, projection)
            if not ready and payload["status"] == "failed":
                return respond({"error": f"the {projection} map failed: {payload['error']}", **payload}, 500)
            return respond(payload, 200)

        return await run_in_threadpool(run)

    @app.post("/models/{name}/coords", summary="Map coordinates of any items, on the axes of the map")
    async def coords(name: str, body: bodies.coords):  # type: ignore[valid-type]
        s = registry.get(name)
        n = sample_for(body.projection, body.sample)

        def run() -> dict:
            ids, _ = s.emb.ids_of([item_of(i) for i in body.items])
            xy = s.project(ids, n, body.projection)
            keys = s.emb.keys
            return {
                "items": [keys[i] for i in ids.tolist()],
                "x": [round(float(v), 5) for v in xy[:, 0]],
                "y": [round(float(v), 5) for v in xy[:, 1]],
                **s.describe(ids.tolist()),
            }

        return await answer(run)
