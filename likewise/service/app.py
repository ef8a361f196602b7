"""The HTTP API (FastAPI) and the explorer page over one or more served models.

Every route lives under ``/models/{name}/...`` except ``/``, ``/static``, ``/health`` and ``/models``.
Answers are JSON; errors are ``{"error": message, ...}`` (:class:`~likewise.service.bodies.ErrorBody`)
with a 4xx status that says what was wrong:

====== =============================================================================================
status meaning
====== =============================================================================================
400    the ``Host`` header is not one the server answers to (DNS-rebinding guard; ``--allow-host``)
401    a token is configured and the request lacks ``Authorization: Bearer <token>``
403    a POST from a foreign ``Origin`` (a page on another site)
404    unknown model, route or item (the body carries ``suggestions``), or an id past the table end
405    a method the path does not have (``Allow`` lists those it has; ``OPTIONS`` answers 204 with it)
413    the request body is larger than ``max_body`` bytes
422    a bad value, named as sent: ``k`` outside ``1..max_k``, a batch over ``max_batch``, a key over
       ``max_key`` characters, ``true`` where an id belongs, a zero or wrong-length vector, ...
503    a reload found the model's folder damaged or half-written; the loaded version keeps serving
====== =============================================================================================

Every query, and the JSON of its answer, is computed in the thread pool, never on the event loop: a slow
or large request (a huge batch, a map, an unknown key's "did you mean") does not hold up the others.
"""

import asyncio
import json
import logging
import math
import os
from collections.abc import Callable
from contextlib import asynccontextmanager
from importlib import resources
from typing import Annotated, Any

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Route

from ..data.vocab import parse_item
from ..errors import (
    CorruptModelError,
    InputError,
    ItemIndexError,
    NotFittedError,
    UnknownItemError,
    shown,
)
from .bodies import Limits, as_sent, error_responses, make_bodies, validation_message
from .explorer_routes import add_explorer_routes
from .guard import LOOPBACK_NAMES, Guard
from .models import ModelSpec, Registry, Served
from .projection import available as projections_available
from .typed_routes import add_typed_routes

__all__ = ["Limits", "create_app", "watch_models"]

_F32_MAX = 3.4028234663852886e38

log = logging.getLogger("likewise.service")


# ---- helpers ------------------------------------------------------------------------------------------


def _dumps(payload: Any) -> bytes:
    # backslashreplace: a lone surrogate that reached an answer becomes its JSON escape, not a 500
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "backslashreplace")


def _json(payload: Any, status: int = 200) -> Response:
    return Response(_dumps(payload), status_code=status, media_type="application/json")


def _json_error(message: str, status: int, headers: dict[str, str]) -> Response:
    return Response(
        _dumps({"error": message}), status_code=status, media_type="application/json", headers=headers
    )


def _neighbours(res: Any) -> list[dict]:
    return res.records()  # the one answer record, as the CLI's --json and Python give it


def _info(s: Served) -> dict:
    emb = s.emb
    idx = emb.index
    return {
        "name": s.spec.name,
        "items": len(emb),
        "dim": emb.dim,
        "fingerprint": emb.fingerprint,
        "version": s.version,
        "loaded_at": s.loaded_at,
        "config": emb.config,
        "index": None if idx is None else {"library": idx.library, "params": idx.params.__dict__, **idx.info},
        "labels": s.attrs is not None,
        "attributes": None if s.attrs is None else s.attrs.summary(),
        "projections": projections_available(),
        "completion": emb.completion,
        "basket_rule": emb.basket_rule,
        "customers": getattr(emb, "customers", None) is not None,
        "customer_examples": [] if getattr(emb, "customers", None) is None else emb.customers.keys[:3],
        "types": None
        if emb.types is None
        else {"counts": emb.types.counts(), "hidden": sorted(emb.types.hidden)},
        "placed": len((emb.meta or {}).get("placed") or {}),
        "most_frequent": emb.keys[:10],
    }


async def watch_models(registry: Registry, seconds: float) -> None:
    """Every ``seconds``, reload each served model whose folder holds a new version; never stop.

    Whatever a reload raises (a version being written right now, a damaged file, a bug), the loaded
    version keeps serving, the failure is logged once per folder state, and watching goes on.
    """
    reported: dict[str, tuple] = {}
    while True:
        await asyncio.sleep(seconds)
        try:
            names = registry.changed()
        except Exception:  # noqa: BLE001 -- the watcher must outlive any one bad tick
            log.exception("likewise: checking the model folders failed; still watching")
            continue
        for name in names:
            try:
                await run_in_threadpool(registry.reload, name)
                reported.pop(name, None)
            except Exception as e:  # noqa: BLE001 -- keep serving the old version, keep watching
                stamp = registry.stamp_of(name)
                if reported.get(name) != stamp:
                    reported[name] = stamp
                    log.warning(
                        "likewise: reloading model %r failed (%s: %s); version %d keeps serving, "
                        "still watching",
                        name,
                        type(e).__name__,
                        e,
                        registry.get(name).version,
                    )


def _methods_of(routes: Callable[[], list]) -> Callable[[str], set[str]]:
    """``path -> methods`` over the app's routes (all that match, as one path may have GET and POST)."""

    def methods(path: str) -> set[str]:
        out: set[str] = set()
        for r in routes():
            if isinstance(r, Route) and r.methods and r.path_regex.match(path):
                out |= r.methods
        return out

    return methods


def create_app(
    models: list[ModelSpec] | Registry,
    *,
    token: str | None = None,
    limits: Limits | None = None,
    watch_seconds: float = 0.0,
    allowed_hosts: list[str] | None = None,
) -> FastAPI:
    """The ASGI application.

    Parameters
    ----------
    models : list of ModelSpec, or Registry
        What to serve; the first model is the explorer's default.
    token : str, optional
        When set, every API request must carry ``Authorization: Bearer <token>`` (the page, its assets,
        ``/health`` and the OpenAPI document stay open so the page can load and ask for the token).
    limits : Limits, optional
        k, batch, body-size, key-length and map limits.
    watch_seconds : float
        If > 0, check every that many seconds whether a served model's folder holds a new version (its
        manifest, or its index's, changed) and swap it in. Works across server worker processes, unlike
        ``POST /models/{name}/reload``, which reloads in the process that answers it.
    allowed_hosts : list of str, optional
        Host names the server answers to (any other ``Host`` header gets 400, so a page elsewhere cannot
        reach a loopback server by DNS rebinding); None accepts any. ``likewise serve`` passes the
        loopback names plus ``--allow-host``.
    """
    registry = models if isinstance(models, Registry) else Registry(list(models))
    lim = limits or Limits()
    bodies = make_bodies(lim)
    static_dir = resources.files("likewise.service") / "static"
    ranges = {"k": (1, lim.max_k), "sample": (2, lim.max_map), "limit": (1, lim.max_prefix_results)}

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        task = asyncio.create_task(watch_models(registry, watch_seconds)) if watch_seconds > 0 else None
        yield
        if task is not None:
            task.cancel()

    app = FastAPI(
        title="likewise",
        summary="Nearest items, recommendations and analogies over trained item embeddings.",
        version=_version(),
        lifespan=lifespan,
        responses=error_responses(token is not None),
    )
    app.state.registry = registry
    app.state.limits = lim
    app.add_middleware(
        Guard,
        token=token,
        max_body=lim.max_body,
        allowed_hosts=allowed_hosts,
    )

    # ---- errors ------------------------------------------------------------------------------------------

    @app.exception_handler(UnknownItemError)
    async def unknown(request: Request, e: UnknownItemError):
        text = str(e)
        # "unknown <what> 'key' ...": what is "model", "customer", or the space's own word for an item
        what = text.split(" ", 2)[1] if text.startswith("unknown ") else "item"
        sugg = list(e.suggestions)
        if what not in ("model", "customer") and not sugg and isinstance(e.key, str):
            served = _served_of(request)
            if served is not None:  # bounded work, but off the loop all the same
                sugg = await run_in_threadpool(served.suggestions, e.key)
        msg = f"unknown {what} {shown(e.key)}" + (
            " — did you mean " + " or ".join(repr(s) for s in sugg) + "?" if sugg else ""
        )
        key = e.key if not isinstance(e.key, str) or len(e.key) <= lim.max_key else shown(e.key)
        return _json({"error": msg, what: key, "suggestions": sugg}, 404)

    @app.exception_handler(CorruptModelError)
    async def broken_model(request: Request, e: CorruptModelError):
        # only a reload reads model files while serving; the version already loaded keeps answering
        return _json({"error": f"{e}; the loaded version keeps serving"}, 503)

    @app.exception_handler(NotFittedError)
    async def not_fitted(request: Request, e: NotFittedError):
        return _json({"error": str(e)}, 422)

    @app.exception_handler(ItemIndexError)
    async def bad_id(request: Request, e: ItemIndexError):
        return _json({"error": str(e)}, 404)

    @app.exception_handler(InputError)
    async def bad_input(request: Request, e: InputError):
        return _json({"error": str(e)}, 422)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, e: RequestValidationError):
        errors = e.errors()
        text = "; ".join(validation_message(err, ranges) for err in errors[:5]) or "invalid request"
        detail = [
            {
                "loc": [str(p) for p in err.get("loc", ())],
                "type": err.get("type"),
                "input": as_sent(err.get("input")),
            }
            for err in errors[:20]
        ]
        return _json({"error": text, "detail": detail}, 422)

    methods_of = _methods_of(lambda: app.router.routes)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, e: StarletteHTTPException):
        if e.status_code == 405:  # Starlette's Allow names only the first matching route's methods
            allow = ", ".join(sorted(methods_of(request.url.path) | {"OPTIONS"}))
            if request.method == "OPTIONS":
                return Response(status_code=204, headers={"allow": allow})
            return _json_error(
                f"method {request.method} is not allowed on {request.url.path[:200]!r}; allowed: {allow}",
                405,
                {"allow": allow},
            )
        return Response(
            _dumps({"error": f"{e.detail}: {request.url.path[:200]!r}"}),
            status_code=e.status_code,
            media_type="application/json",
            headers=e.headers,
        )

    def _served_of(request: Request) -> Served | None:
        name = request.path_params.get("name")
        try:
            return registry.get(name) if name else None
        except UnknownItemError:
            return None

    def item_of(raw: str | int) -> str | int:
        # ints in JSON bodies are ids; in keys "#12" is id 12, by the parser the command line uses
        return parse_item(raw) if isinstance(raw, str) else raw

    def check_results(n: int, k: int) -> None:
        if n * k > lim.max_results:
            raise InputError(
                f"{n} queries × k == {k} asks for {n * k} neighbours in one answer, the limit is "
                f"{lim.max_results}: lower k or split the batch"
            )

    async def answer(fn: Callable[[], Any]) -> Response:
        """Run ``fn`` and serialise its payload in the thread pool, off the event loop."""
        return await run_in_threadpool(lambda: _json(fn()))

    K = Annotated[int, Query(ge=1, le=lim.max_k, description="neighbours per query")]
    KeyParam = Annotated[str, Query(min_length=1, max_length=lim.max_key, description="a key, or #id")]
    TypesParam = Annotated[
        list[str] | None, Query(max_length=64, description="typed space: only these types")
    ]

    # ---- page and meta -----------------------------------------------------------------------------------

    @app.get("/", include_in_schema=False)
    async def page():
        return FileResponse(str(static_dir / "index.html"), media_type="text/html")

    app.mount("/static", StaticFiles(directory=str(static_dir)), name="static")

    @app.get("/health", summary="Liveness and the served model versions")
    async def health():
        return _json({"status": "ok", "models": {n: registry.get(n).version for n in registry.names}})

    @app.get("/models", summary="The served models")
    async def list_models():
        return _json(
            {"models": [_info(registry.get(n)) for n in registry.names], "default": registry.names[0]}
        )

    @app.get("/models/{name}", summary="One model: size, dim, fingerprint, index, config")
    async def model_info(name: str):
        return _json(_info(registry.get(name)))

    @app.post("/models/{name}/reload", summary="Load the model's folder again and swap it in atomically")
    async def reload(name: str):
        served = await run_in_threadpool(registry.reload, name)
        return _json(_info(served))

    # ---- queries -----------------------------------------------------------------------------------------

    @app.get("/models/{name}/similar", summary="Nearest items to one item")
    async def similar_one(name: str, item: KeyParam, k: K = 10, types: TypesParam = None):
        s = registry.get(name)

        def run() -> dict:
            return {"query": item, "neighbours": _neighbours(s.emb.similar(item_of(item), k=k, types=types))}

        return await answer(run)

    @app.post("/models/{name}/similar", summary="Nearest items to each item of a batch")
    async def similar_batch(name: str, body: bodies.similar):  # type: ignore[valid-type]
        s = registry.get(name)
        check_results(len(body.items), body.k)

        def run() -> dict:
            items = [item_of(i) for i in body.items]
            res = s.emb.similar(
                items, body.k, on_unknown="skip" if body.skip_unknown else "raise", types=body.types
            )
            rows = res.queries.tolist() if res.queries is not None else []
            return {
                "results": [
                    {"query": body.items[q], "neighbours": _neighbours(res[r])} for r, q in enumerate(rows)
                ]
            }

        return await answer(run)

    @app.post("/models/{name}/similar_vector", summary="Nearest items to a vector (or a batch)")
    async def similar_vector(name: str, body: bodies.vector):  # type: ignore[valid-type]
        s = registry.get(name)
        vec = body.vector
        batch = bool(vec) and isinstance(vec[0], list)
        rows = vec if batch else [vec]
        if batch:
            if not vec:
                raise InputError("vector is an empty batch: give at least one vector")
            lengths = sorted({len(r) for r in rows})  # type: ignore[arg-type]
            if len(lengths) > 1:
                raise InputError(f"the vectors of a batch must have one length, got lengths {lengths[:5]}")
        check_results(len(rows), body.k)
        if len(rows[0]) != s.emb.dim:  # type: ignore[arg-type]
            raise InputError(
                f"query vector has length {len(rows[0])}, expected {s.emb.dim} (the space's dim)"  # type: ignore[arg-type]
            )

        def run() -> dict:
            if not all(math.isfinite(x) and abs(x) <= _F32_MAX for row in rows for x in row):  # type: ignore[union-attr]
                raise InputError("vector contains NaN or infinite values, or values beyond float32's range")
            import numpy as np

            res = s.emb.similar_to_vector(
                np.asarray(vec, dtype=np.float32),
                body.k,
                exclude=[item_of(i) for i in body.exclude],
                types=body.types,
            )
            if batch:
                return {"results": [{"neighbours": _neighbours(r)} for r in res]}
            return {"neighbours": _neighbours(res)}

        return await answer(run)

    @app.post("/models/{name}/recommend", summary="Items to add to a basket")
    async def recommend(name: str, body: bodies.basket):  # type: ignore[valid-type]
        s = registry.get(name)
        extra = {"scoring": body.scoring} if body.scoring is not None else {}

        def run() -> dict:
            res = s.emb.recommend(
                [item_of(i) for i in body.items],
                k=body.k,
                on_unknown="skip" if body.skip_unknown else "raise",
                types=body.types,
                **extra,
            )
            return {"basket": body.items, "neighbours": _neighbours(res)}

        return await answer(run)

    @app.post("/models/{name}/analogy", summary="a is to b as c is to ?")
    async def analogy(name: str, body: bodies.analogy):  # type: ignore[valid-type]
        s = registry.get(name)

        def run() -> dict:
            a, b, c = item_of(body.a), item_of(body.b), item_of(body.c)
            res = s.emb.analogy(a, b, c, k=body.k, method=body.method)
            return {
                "a": body.a,
                "b": body.b,
                "c": body.c,
                "method": body.method,
                "neighbours": _neighbours(res),
            }

        return await answer(run)

    # ---- customers (when the space has a customer table) ------------------------------------------------

    def retail_of(name: str):
        s = registry.get(name)
        if getattr(s.emb, "customers", None) is None:
            raise InputError(f"model {name!r} has no customers: train it from an order log with customers")
        from .. import retail

        return s, retail

    @app.get("/models/{name}/also_bought", summary="Items bought with an item")
    async def also_bought(name: str, item: KeyParam, k: K = 10, types: TypesParam = None):
        s = registry.get(name)
        from .. import retail

        return await answer(
            lambda: {
                "query": item,
                "neighbours": _neighbours(retail.also_bought(s.emb, item_of(item), k, types=types)),
            }
        )

    @app.post("/models/{name}/complete_basket", summary="Items bought with a basket (the completion)")
    async def complete_basket(name: str, body: bodies.basket):  # type: ignore[valid-type]
        s = registry.get(name)
        from .. import retail

        def run() -> dict:
            res = retail.complete_basket(s.emb, [item_of(i) for i in body.items], body.k, types=body.types)
            return {"basket": body.items, "neighbours": _neighbours(res)}

        return await answer(run)

    @app.post("/models/{name}/for_customer", summary="Items for a customer")
    async def for_customer(name: str, body: bodies.customer):  # type: ignore[valid-type]
        s, retail = retail_of(name)

        def run() -> dict:
            res = retail.for_customer(
                s.emb, body.customer, body.k, exclude_bought=body.exclude_bought, types=body.types
            )
            return {"customer": body.customer, "neighbours": _neighbours(res)}

        return await answer(run)

    @app.post("/models/{name}/similar_customers", summary="Customers like a customer")
    async def similar_customers(name: str, body: bodies.customer):  # type: ignore[valid-type]
        s, retail = retail_of(name)
        return await answer(
            lambda: {
                "customer": body.customer,
                "neighbours": _neighbours(retail.similar_customers(s.emb, body.customer, body.k)),
            }
        )

    @app.post("/models/{name}/lookalike", summary="Customers like a seed set of customers")
    async def lookalike(name: str, body: bodies.lookalike):  # type: ignore[valid-type]
        s, retail = retail_of(name)
        kw = {"method": body.method} if body.method else {}

        def run() -> dict:
            res = retail.lookalike(s.emb, body.seeds, body.k, **kw)
            return {"seeds": body.seeds, "neighbours": _neighbours(res)}

        return await answer(run)

    add_explorer_routes(app, registry, bodies, lim, answer=answer, item_of=item_of, respond=_json)
    add_typed_routes(app, registry, bodies, answer=answer, item_of=item_of, neighbours=_neighbours)
    return app


def _plain(obj: Any) -> Any:
    """Validation error details as plain JSON (pydantic may put exceptions in ``ctx``)."""
    return json.loads(json.dumps(obj, default=str))


def _version() -> str:
    from .._version import __version__

    return __version__


def app_from_env() -> FastAPI:
    """App factory for ``uvicorn --factory`` (several worker processes): reads ``LIKEWISE_SERVE_CONFIG``."""
    from pathlib import Path

    cfg = json.loads(os.environ["LIKEWISE_SERVE_CONFIG"])
    specs = [
        ModelSpec(m["name"], Path(m["path"]), Path(m["labels"]) if m.get("labels") else None)
        for m in cfg["models"]
    ]
    hosts = cfg.get("allowed_hosts", sorted(LOOPBACK_NAMES))
    return create_app(
        Registry(specs, map_sample=cfg.get("map_sample", 3000)),
        token=os.environ.get("LIKEWISE_TOKEN") or None,
        limits=Limits(**cfg.get("limits", {})),
        watch_seconds=cfg.get("watch_seconds", 0.0),
        allowed_hosts=None if hosts is None or "*" in hosts else hosts,
    )
