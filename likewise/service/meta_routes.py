"""The page and the routes about the served models: liveness, the list, one model's facts, reload.

=========================================  =================================================================
route                                      answer
=========================================  =================================================================
``GET  /``                                 the explorer page (its assets are under ``/static``)
``GET  /health``                           ``{"status": "ok", "models": {name: version}}``
``GET  /models``                           every served model's facts (:func:`model_facts`), and the default
``GET  /models/{name}``                    one model's facts: size, dim, fingerprint, index, config, ...
``POST /models/{name}/reload``             load the model's folder again and swap it in atomically (a no-op
                                           when the folder holds the served version)
=========================================  =================================================================
"""

import asyncio
from importlib import resources
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, Response

from .deps import ServedModel, registry_of
from .models import Served
from .projection import available as projections_available
from .respond import json_response

__all__ = ["STATIC", "model_facts", "router"]

#: The explorer page and its assets.
STATIC = resources.files("likewise.service") / "static"

router = APIRouter()


def model_facts(s: Served) -> dict[str, Any]:
    """What ``GET /models/{name}`` answers about the served model ``s``."""
    emb = s.emb
    idx = emb.index
    customers = getattr(emb, "customers", None)
    return {
        "name": s.spec.name,
        "items": len(emb),
        "dim": emb.dim,
        "fingerprint": emb.fingerprint,
        "version": s.version,
        "loaded_at": s.loaded_at,
        "config": emb.config.to_dict() if emb.config is not None else {},
        "index": None if idx is None else {"library": idx.library, "params": idx.params.__dict__, **idx.info},
        "labels": s.attrs is not None,
        "attributes": None if s.attrs is None else s.attrs.summary(),
        "projections": projections_available(),
        "completion": emb.completion,
        "basket_rule": emb.basket_rule,
        "customers": customers is not None,
        "customer_examples": [] if customers is None else customers.keys[:3],
        "types": None
        if emb.types is None
        else {"counts": emb.types.counts(), "hidden": sorted(emb.types.hidden)},
        "placed": len((emb.meta or {}).get("placed") or {}),
        "most_frequent": [emb.keys[i] for i in s.listed_ids()[:10].tolist()],  # no hidden attr: tokens
    }


@router.get("/", include_in_schema=False)
async def page() -> FileResponse:
    return FileResponse(str(STATIC / "index.html"), media_type="text/html")


@router.get("/health", summary="Liveness and the served model versions")
async def health(request: Request) -> Response:
    registry = registry_of(request)
    return json_response({"status": "ok", "models": {n: registry.get(n).version for n in registry.names}})


@router.get("/models", summary="The served models")
async def list_models(request: Request) -> Response:
    registry = registry_of(request)
    return json_response(
        {"models": [model_facts(registry.get(n)) for n in registry.names], "default": registry.names[0]}
    )


@router.get("/models/{name}", summary="One model: size, dim, fingerprint, index, config")
async def model_info(s: ServedModel) -> Response:
    return json_response(model_facts(s))


@router.post(
    "/models/{name}/reload",
    summary="Load the model's folder again and swap it in atomically, if it holds a new version",
)
async def reload(request: Request, name: str) -> Response:
    # awaited, not run in a worker: loads run on the registry's one loading thread, waiting holds none
    served = await asyncio.wrap_future(registry_of(request).reload_soon(name))
    return json_response(model_facts(served))
