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

The application is assembled here from small parts, FastAPI's "bigger applications" layout: a router per
group of routes (:mod:`~likewise.service.meta_routes`, :mod:`~likewise.service.query_routes`,
:mod:`~likewise.service.retail_routes`, :mod:`~likewise.service.typed_routes`,
:mod:`~likewise.service.explorer_routes`), whose handlers get the served model through a dependency
(:mod:`~likewise.service.deps`); request models declared once (:mod:`~likewise.service.bodies`); the
error answers (:mod:`~likewise.service.handlers`); the front door (:mod:`~likewise.service.guard`).
Every query, and the JSON of its answer, is computed in the thread pool, never on the event loop
(:mod:`~likewise.service.respond`).
"""

import asyncio
import dataclasses
import logging
import os
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.middleware.gzip import GZipMiddleware
from starlette.routing import Route

from . import explorer_routes, meta_routes, query_routes, retail_routes, typed_routes
from .bodies import Limits, UseLimits, document_limits, error_responses
from .config import CONFIG_VARIABLE, ServeConfig
from .guard import Guard, HeadAsGet
from .handlers import EXCEPTION_HANDLERS
from .models import ModelSpec, Registry

__all__ = [
    "Limits",
    "ServeConfig",
    "ServiceApp",
    "app_from_config",
    "app_from_env",
    "create_app",
    "watch_models",
]

log = logging.getLogger("likewise.service")


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
                await asyncio.wrap_future(registry.reload_soon(name))
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


class ServiceApp(FastAPI):
    """The FastAPI application of :func:`create_app`: its OpenAPI document states its own limits."""

    def openapi(self) -> dict[str, Any]:
        """The OpenAPI document, every :class:`~likewise.service.bodies.Bound` written in as this app's."""
        if self.openapi_schema is None:
            self.openapi_schema = document_limits(super().openapi(), self.state.limits)
        return self.openapi_schema


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

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        task = asyncio.create_task(watch_models(registry, watch_seconds)) if watch_seconds > 0 else None
        yield
        if task is not None:
            task.cancel()

    app = ServiceApp(
        title="likewise",
        summary="Nearest items, recommendations and analogies over trained item embeddings.",
        version=_version(),
        lifespan=lifespan,
        responses=error_responses(token is not None),
        exception_handlers=EXCEPTION_HANDLERS,
        # FastAPI's /docs and /redoc load Swagger UI / ReDoc from a CDN (blank offline, and a page of a
        # loopback server fetching scripts from elsewhere); /openapi.json stays, for any viewer or client
        docs_url=None,
        redoc_url=None,
    )
    app.state.registry = registry
    app.state.limits = lim
    app.add_middleware(UseLimits, limits=lim)  # the request models check this app's limits
    # answers over 1 KB compressed for clients that accept gzip (a 20 k-point map: 2.5 MB of JSON). Level 5:
    # a 4.4 MB map of 100 k points compresses in 0.08 s to 0.99 MB; level 9 (starlette's default) took
    # 0.54 s for 0.95 MB, on every request
    app.add_middleware(GZipMiddleware, minimum_size=1024, compresslevel=5)
    app.add_middleware(Guard, token=token, max_body=lim.max_body, allowed_hosts=allowed_hosts)
    app.add_middleware(HeadAsGet)  # outermost: every answer to HEAD, refusals too, has no body
    app.mount("/static", StaticFiles(directory=str(meta_routes.STATIC)), name="static")
    groups = (meta_routes, query_routes, retail_routes, explorer_routes, typed_routes)
    for group in groups:
        app.include_router(group.router)
    # every route with its methods, for the 405's Allow (the app's router may keep included routers whole)
    app.state.method_routes = [
        r for r in [*app.router.routes, *(r for g in groups for r in g.router.routes)] if isinstance(r, Route)
    ]
    return app


def app_from_config(config: ServeConfig) -> FastAPI:
    """The application ``config`` describes (what ``likewise serve`` runs)."""
    return create_app(
        Registry(list(config.models), map_sample=config.map_sample),
        token=config.token,
        limits=config.limits,
        watch_seconds=config.watch_seconds,
        allowed_hosts=None if config.allowed_hosts is None else list(config.allowed_hosts),
    )


def app_from_env() -> FastAPI:
    """App factory for ``uvicorn --factory`` (several worker processes): the :class:`ServeConfig` that
    ``likewise serve`` left in ``LIKEWISE_SERVE_CONFIG`` (see :mod:`likewise.service.config`).

    With no token in it, the user's ``LIKEWISE_TOKEN`` is the token.
    """
    config = ServeConfig.from_json(os.environ[CONFIG_VARIABLE])
    if config.token is None and os.environ.get("LIKEWISE_TOKEN"):
        config = dataclasses.replace(config, token=os.environ["LIKEWISE_TOKEN"])
    return app_from_config(config)


def _version() -> str:
    from .._version import __version__

    return __version__
