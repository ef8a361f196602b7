"""The HTTP API (FastAPI) and the explorer page over one or more served models.

Every route lives under ``/models/{name}/...`` except ``/``, ``/static``, ``/health`` and ``/models``.
Answers are JSON; errors are ``{"error": message, ...}`` with a 4xx status that says what was wrong:

====== =============================================================================================
status meaning
====== =============================================================================================
401    a token is configured and the request lacks ``Authorization: Bearer <token>``
404    unknown model or unknown item (the body carries ``suggestions``) or an id past the table end
413    the request body is larger than ``max_body`` bytes
422    a bad value: ``k`` outside ``1..max_k``, a batch over ``max_batch``, a vector of the wrong length
503    a reload found the model's folder damaged or half-written; the loaded version keeps serving
====== =============================================================================================

Single queries run inline on the event loop (a few hundred microseconds with an index); batches and
reloads run in the thread pool so they never stall other requests.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import math
import os
from importlib import resources
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from ..errors import (
    CorruptModelError,
    InputError,
    ItemIndexError,
    LikewiseError,
    NotFittedError,
    UnknownItemError,
)
from .models import ModelSpec, Registry, Served

__all__ = ["Limits", "create_app"]

_F32_MAX = 3.4028234663852886e38


class Limits(BaseModel):
    """Request limits."""

    max_k: int = 1000
    max_batch: int = 1000
    max_body: int = 1 << 20
    max_prefix_results: int = 100
    max_map: int = 20000


# ---- request bodies ---------------------------------------------------------------------------------


class SimilarBody(BaseModel):
    items: list[str | int] = Field(description="keys, or int ids")
    k: int = 10
    skip_unknown: bool = False


class VectorBody(BaseModel):
    vector: list[float] | list[list[float]] = Field(description="one vector [D] or a batch [n, D]")
    k: int = 10
    exclude: list[str | int] = []


class BasketBody(BaseModel):
    items: list[str | int] = Field(description="the basket")
    k: int = 10
    skip_unknown: bool = False
    scoring: str | None = Field(None, description="'auto', 'affinity' or 'cosine' (see Embeddings.recommend)")


class AnalogyBody(BaseModel):
    a: str | int
    b: str | int
    c: str | int
    k: int = 10
    method: str = "add"


class CoordsBody(BaseModel):
    items: list[str | int]
    sample: int | None = Field(None, description="the map whose axes to use (default: the server's)")


class CustomerBody(BaseModel):
    customer: str
    k: int = 10
    exclude_bought: bool = True


class LookalikeBody(BaseModel):
    seeds: list[str]
    k: int = 10
    method: str | None = None


# ---- helpers ------------------------------------------------------------------------------------------


def _dumps(payload: Any) -> bytes:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _json(payload: Any, status: int = 200) -> Response:
    return Response(_dumps(payload), status_code=status, media_type="application/json")


def _neighbours(res: Any) -> list[dict]:
    return [
        {"item": k, "id": i, "score": round(float(s), 6)}
        for k, i, s in zip(res.keys, res.ids.tolist(), res.scores.tolist(), strict=True)
    ]


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
        "labels": bool(s.labels),
        "customers": getattr(emb, "customers", None) is not None,
        "most_frequent": emb.keys[:10],
    }


_OPEN_PATHS = frozenset({"/", "/health", "/openapi.json", "/docs", "/docs/oauth2-redirect", "/favicon.ico"})


class Guard:
    """Pure ASGI middleware: the API token and the request-body limit.

    Written against ASGI directly rather than with ``@app.middleware("http")``: Starlette's
    BaseHTTPMiddleware wraps every request in an extra task and stream, which costs more than a neighbour
    query with an index.
    """

    def __init__(self, app: Any, *, token: str | None, max_body: int) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode() if token else None
        self.max_body = max_body

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        path = scope["path"]
        if self.expected is not None and path not in _OPEN_PATHS and not path.startswith("/static/"):
            if not hmac.compare_digest(headers.get(b"authorization", b""), self.expected):
                return await JSONResponse(
                    {"error": "missing or wrong token: send 'Authorization: Bearer <token>'"},
                    status_code=401,
                    headers={"WWW-Authenticate": "Bearer"},
                )(scope, receive, send)
        length = headers.get(b"content-length")
        if length is not None:
            if not length.isdigit() or int(length) > self.max_body:
                return await JSONResponse(
                    {
                        "error": f"request body of {length.decode(errors='replace')} bytes is over the limit "
                        f"of {self.max_body} bytes"
                    },
                    status_code=413,
                )(scope, receive, send)
            return await self.app(scope, receive, send)
        if scope["method"] not in ("POST", "PUT", "PATCH"):
            return await self.app(scope, receive, send)
        # No Content-Length (a chunked body): read it here, up to the limit, then replay it to the app.
        chunks: list[bytes] = []
        seen = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None  # the client went away
            chunks.append(message.get("body", b""))
            seen += len(chunks[-1])
            if seen > self.max_body:
                return await JSONResponse(
                    {"error": f"request body is over the limit of {self.max_body} bytes"}, status_code=413
                )(scope, receive, send)
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": b"".join(chunks), "more_body": False}

        return await self.app(scope, replay, send)


def create_app(
    models: list[ModelSpec] | Registry,
    *,
    token: str | None = None,
    limits: Limits | None = None,
    watch_seconds: float = 0.0,
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
        k, batch, body-size and map limits.
    watch_seconds : float
        If > 0, check every that many seconds whether a served model's folder holds a new version (its
        manifest, or its index's, changed) and swap it in. Works across server worker processes, unlike
        ``POST /models/{name}/reload``, which reloads in the process that answers it.
    """
    registry = models if isinstance(models, Registry) else Registry(list(models))
    lim = limits or Limits()
    static_dir = resources.files("likewise.service") / "static"

    async def watch() -> None:
        while True:
            await asyncio.sleep(watch_seconds)
            for name in registry.changed():
                try:
                    await run_in_threadpool(registry.reload, name)
                except (LikewiseError, OSError):
                    pass  # a version being written right now: the old one serves, retry on the next tick

    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        task = asyncio.create_task(watch()) if watch_seconds > 0 else None
        yield
        if task is not None:
            task.cancel()

    app = FastAPI(
        title="likewise",
        summary="Nearest items, recommendations and analogies over trained item embeddings.",
        version=_version(),
        lifespan=lifespan,
    )
    app.state.registry = registry
    app.state.limits = lim

    # ---- middleware: token and body size --------------------------------------------------------------

    app.add_middleware(Guard, token=token, max_body=lim.max_body)

    # ---- errors ------------------------------------------------------------------------------------------

    @app.exception_handler(UnknownItemError)
    async def unknown(request: Request, e: UnknownItemError):
        text = str(e)
        # "unknown <what> 'key' ...": what is "model", "customer", or the space's own word for an item
        what = text.split(" ", 2)[1] if text.startswith("unknown ") else "item"
        sugg = list(e.suggestions)
        if what not in ("model", "customer") and not sugg and isinstance(e.key, str):
            served = _served_of(request)
            if served is not None:
                sugg = served.suggestions(e.key)
        msg = f"unknown {what} {e.key!r}" + (
            " — did you mean " + " or ".join(repr(s) for s in sugg) + "?" if sugg else ""
        )
        return _json({"error": msg, what: e.key, "suggestions": sugg}, 404)

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
        parts = []
        for err in e.errors():
            where = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
            parts.append(
                f"{where}: {err.get('msg')}" + (f" (got {err['input']!r})" if "input" in err else "")
            )
        return _json({"error": "; ".join(parts) or "invalid request", "detail": _plain(e.errors())}, 422)

    def _served_of(request: Request) -> Served | None:
        name = request.path_params.get("name")
        try:
            return registry.get(name) if name else None
        except UnknownItemError:
            return None

    def check_k(k: int) -> int:
        if not 1 <= k <= lim.max_k:
            raise InputError(f"k == {k!r}, must be between 1 and {lim.max_k}")
        return k

    def check_batch(n: int, what: str = "items") -> None:
        if n == 0:
            raise InputError(f"{what} is empty: give at least one")
        if n > lim.max_batch:
            raise InputError(f"{n} {what} in one request, the limit is {lim.max_batch}")

    def item_of(raw: str | int) -> str | int:
        # ints in JSON bodies are ids; in query strings "#12" is id 12 (as on the command line)
        if isinstance(raw, str) and raw.startswith("#") and raw[1:].isdigit():
            return int(raw[1:])
        return raw

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
    async def similar_one(name: str, item: str, k: int = 10):
        s = registry.get(name)
        res = s.emb.similar(item_of(item), k=check_k(k))
        return _json({"query": item, "neighbours": _neighbours(res)})

    @app.post("/models/{name}/similar", summary="Nearest items to each item of a batch")
    async def similar_batch(name: str, body: SimilarBody):
        s = registry.get(name)
        check_batch(len(body.items))
        k = check_k(body.k)
        items = [item_of(i) for i in body.items]
        res = await run_in_threadpool(
            s.emb.similar, items, k, on_unknown="skip" if body.skip_unknown else "raise"
        )
        rows = res.queries.tolist() if res.queries is not None else []
        return _json(
            {
                "results": [
                    {"query": body.items[q], "neighbours": _neighbours(res[r])} for r, q in enumerate(rows)
                ]
            }
        )

    @app.post("/models/{name}/similar_vector", summary="Nearest items to a vector (or a batch)")
    async def similar_vector(name: str, body: VectorBody):
        s = registry.get(name)
        k = check_k(body.k)
        vec = body.vector
        batch = bool(vec) and isinstance(vec[0], list)
        rows = vec if batch else [vec]
        if batch:
            check_batch(len(vec), "vectors")
            lengths = sorted({len(r) for r in rows})  # type: ignore[arg-type]
            if len(lengths) > 1:
                raise InputError(f"the vectors of a batch must have one length, got lengths {lengths[:5]}")
        if not all(math.isfinite(x) and abs(x) <= _F32_MAX for row in rows for x in row):  # type: ignore[union-attr]
            raise InputError("vector contains NaN or infinite values, or values beyond float32's range")
        import numpy as np

        res = await run_in_threadpool(
            s.emb.similar_to_vector,
            np.asarray(vec, dtype=np.float32),
            k,
            exclude=[item_of(i) for i in body.exclude],
        )
        if batch:
            return _json({"results": [{"neighbours": _neighbours(r)} for r in res]})
        return _json({"neighbours": _neighbours(res)})

    @app.post("/models/{name}/recommend", summary="Items to add to a basket")
    async def recommend(name: str, body: BasketBody):
        s = registry.get(name)
        check_batch(len(body.items), "basket items")
        extra = {"scoring": body.scoring} if body.scoring is not None else {}
        res = s.emb.recommend(
            [item_of(i) for i in body.items],
            k=check_k(body.k),
            on_unknown="skip" if body.skip_unknown else "raise",
            **extra,
        )
        return _json({"basket": body.items, "neighbours": _neighbours(res)})

    @app.post("/models/{name}/analogy", summary="a is to b as c is to ?")
    async def analogy(name: str, body: AnalogyBody):
        s = registry.get(name)
        if body.method not in ("add", "mul"):
            raise InputError(f"method == {body.method!r}, must be 'add' or 'mul'")
        res = s.emb.analogy(
            item_of(body.a), item_of(body.b), item_of(body.c), k=check_k(body.k), method=body.method
        )
        return _json(
            {"a": body.a, "b": body.b, "c": body.c, "method": body.method, "neighbours": _neighbours(res)}
        )

    @app.get("/models/{name}/search", summary="Items whose key starts with a prefix, most frequent first")
    async def search(name: str, prefix: str = "", limit: int = 10):
        s = registry.get(name)
        if not 1 <= limit <= lim.max_prefix_results:
            raise InputError(f"limit == {limit!r}, must be between 1 and {lim.max_prefix_results}")
        ids = s.search_prefix(prefix, limit)
        keys = s.emb.keys
        counts = s.emb.counts
        return _json(
            {"prefix": prefix, "items": [{"item": keys[i], "id": i, "count": int(counts[i])} for i in ids]}
        )

    @app.get("/models/{name}/map", summary="2-D PCA coordinates of the most frequent items")
    async def item_map(name: str, sample: int | None = None):
        s = registry.get(name)
        n = registry.map_sample if sample is None else sample
        if not 2 <= n <= lim.max_map:
            raise InputError(f"sample == {n!r}, must be between 2 and {lim.max_map}")
        return _json(await run_in_threadpool(s.map, n))

    @app.post("/models/{name}/coords", summary="Map coordinates of any items, on the axes of the map")
    async def coords(name: str, body: CoordsBody):
        s = registry.get(name)
        check_batch(len(body.items))
        n = registry.map_sample if body.sample is None else body.sample
        if not 2 <= n <= lim.max_map:
            raise InputError(f"sample == {n!r}, must be between 2 and {lim.max_map}")
        ids, _ = s.emb.ids_of([item_of(i) for i in body.items])
        xy = await run_in_threadpool(s.project, ids, n)
        keys = s.emb.keys
        return _json(
            {
                "items": [keys[i] for i in ids.tolist()],
                "x": [round(float(v), 5) for v in xy[:, 0]],
                "y": [round(float(v), 5) for v in xy[:, 1]],
                "labels": [s.labels.get(keys[i]) for i in ids.tolist()] if s.labels else None,
            }
        )

    # ---- customers (when the space has a customer table) ------------------------------------------------

    def retail_of(name: str):
        s = registry.get(name)
        if getattr(s.emb, "customers", None) is None:
            raise InputError(f"model {name!r} has no customers: train it from an order log with customers")
        from .. import retail

        return s, retail

    @app.get("/models/{name}/also_bought", summary="Items bought with an item")
    async def also_bought(name: str, item: str, k: int = 10):
        s = registry.get(name)
        from .. import retail

        res = retail.also_bought(s.emb, item_of(item), check_k(k))
        return _json({"query": item, "neighbours": _neighbours(res)})

    @app.post("/models/{name}/complete_basket", summary="Items bought with a basket (retail affinity)")
    async def complete_basket(name: str, body: BasketBody):
        s = registry.get(name)
        check_batch(len(body.items), "basket items")
        from .. import retail

        res = retail.complete_basket(s.emb, [item_of(i) for i in body.items], check_k(body.k))
        return _json({"basket": body.items, "neighbours": _neighbours(res)})

    @app.post("/models/{name}/for_customer", summary="Items for a customer")
    async def for_customer(name: str, body: CustomerBody):
        s, retail = retail_of(name)
        res = retail.for_customer(s.emb, body.customer, check_k(body.k), exclude_bought=body.exclude_bought)
        return _json({"customer": body.customer, "neighbours": _neighbours(res)})

    @app.post("/models/{name}/similar_customers", summary="Customers like a customer")
    async def similar_customers(name: str, body: CustomerBody):
        s, retail = retail_of(name)
        res = retail.similar_customers(s.emb, body.customer, check_k(body.k))
        return _json({"customer": body.customer, "neighbours": _neighbours(res)})

    @app.post("/models/{name}/lookalike", summary="Customers like a seed set of customers")
    async def lookalike(name: str, body: LookalikeBody):
        s, retail = retail_of(name)
        check_batch(len(body.seeds), "seeds")
        kw = {"method": body.method} if body.method else {}
        res = retail.lookalike(s.emb, body.seeds, check_k(body.k), **kw)
        return _json({"seeds": body.seeds, "neighbours": _neighbours(res)})

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
    return create_app(
        Registry(specs, map_sample=cfg.get("map_sample", 3000)),
        token=os.environ.get("LIKEWISE_TOKEN") or None,
        limits=Limits(**cfg.get("limits", {})),
        watch_seconds=cfg.get("watch_seconds", 0.0),
    )
