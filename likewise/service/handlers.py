"""The service's error answers: each exception it maps, as ``{"error": message, ...}`` and a status.

====== ============================================================================================
status exception
====== ============================================================================================
404    :class:`~likewise.errors.UnknownItemError` (an unknown model, customer or item, worded from its
       fields: ``what``, ``key``, ``suggestions``) and :class:`~likewise.errors.ItemIndexError`
405    a method the path does not have: ``Allow`` lists every method of every route on the path
409    :class:`~likewise.errors.ModelMismatchError`: the served model's fitted part (next-basket weights)
       was fitted on other features than this version computes; the request is fine, the model must be
       retrained (the message names the command)
422    :class:`~likewise.errors.InputError`, :class:`~likewise.errors.NotFittedError` and pydantic's
       validation errors, in the API's words (:func:`~likewise.service.bodies.validation_message`)
500    any other exception: ``{"error": "internal error (ItsClass) ..."}``, its traceback in the server's
       log (its message is not sent: it may hold a path or a value the client must not see)
503    :class:`~likewise.errors.CorruptModelError`: a reload found the folder damaged
====== ============================================================================================
"""

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Route

from ..errors import (
    CorruptModelError,
    InputError,
    ItemIndexError,
    ModelMismatchError,
    NotFittedError,
    UnknownItemError,
    shown,
)
from .bodies import as_sent, error_loc, ranges_of, validation_message
from .deps import limits_of, registry_of
from .guard import HEAD_AS_GET
from .respond import json_response

__all__ = ["EXCEPTION_HANDLERS", "allowed_methods"]


async def unknown(request: Request, e: UnknownItemError) -> Response:
    """404 naming the unknown key, with close keys (asked of the served model when the error has none)."""
    what = e.what
    sugg = list(e.suggestions)
    if what not in ("model", "customer") and isinstance(e.key, str):
        name = request.path_params.get("name")
        served = registry_of(request).find(name) if name else None
        if served is not None:
            sugg = [s for s in sugg if not served.hidden(s)]  # attr: tokens are never suggested
            if not sugg:  # bounded work, but off the loop all the same
                sugg = await run_in_threadpool(served.suggestions, e.key)
    msg = f"unknown {what} {shown(e.key)}" + (
        " — did you mean " + " or ".join(repr(s) for s in sugg) + "?" if sugg else ""
    )
    max_key = limits_of(request).max_key
    key = e.key if not isinstance(e.key, str) or len(e.key) <= max_key else shown(e.key)
    return json_response({"error": msg, what: key, "suggestions": sugg}, 404)


async def broken_model(request: Request, e: CorruptModelError) -> Response:
    """503: only a reload reads model files while serving; the version already loaded keeps answering."""
    return json_response({"error": f"{e}; the loaded version keeps serving"}, 503)


async def mismatched_model(request: Request, e: ModelMismatchError) -> Response:
    """409: the request is well formed, but the served model's state conflicts with this version (its
    weights are for other features); retraining resolves it, repeating the request does not."""
    return json_response({"error": str(e)}, 409)


async def not_fitted(request: Request, e: NotFittedError) -> Response:
    """422 with the error's message."""
    return json_response({"error": str(e)}, 422)


async def bad_id(request: Request, e: ItemIndexError) -> Response:
    """404: an id past the end of the table."""
    return json_response({"error": str(e)}, 404)


async def bad_input(request: Request, e: InputError) -> Response:
    """422 with the error's message (it names the value)."""
    return json_response({"error": str(e)}, 422)


async def bad_request(request: Request, e: RequestValidationError) -> Response:
    """422: up to five of pydantic's errors in the API's words, and up to twenty as ``detail``."""
    errors = e.errors()
    ranges = ranges_of(limits_of(request))
    text = "; ".join(validation_message(err, ranges) for err in errors[:5]) or "invalid request"
    detail = [
        {
            "loc": error_loc(err),
            "type": err.get("type"),
            "input": as_sent(err.get("input")),
        }
        for err in errors[:20]
    ]
    return json_response({"error": text, "detail": detail}, 422)


async def internal(request: Request, e: Exception) -> Response:
    """500 in the API's JSON (Starlette's own was plain text); Starlette logs the traceback after it."""
    message = (
        f"internal error ({type(e).__name__}) on {request.url.path[:200]!r}; the server's log has the details"
    )
    return json_response({"error": message}, 500)


def allowed_methods(routes: list[Route], path: str) -> set[str]:
    """The methods of every route that matches ``path`` (one path may have GET and POST); HEAD wherever
    GET is (:class:`~likewise.service.guard.HeadAsGet` answers it)."""
    out: set[str] = set()
    for r in routes:
        if r.methods and r.path_regex.match(path):
            out |= r.methods
    return out | {"HEAD"} if "GET" in out else out


async def http_error(request: Request, e: StarletteHTTPException) -> Response:
    """Starlette's 404 and 405 as the API's JSON; ``OPTIONS`` answers 204 with the whole ``Allow``."""
    if e.status_code == 405:  # Starlette's Allow names only the first matching route's methods
        allow = ", ".join(
            sorted(allowed_methods(request.app.state.method_routes, request.url.path) | {"OPTIONS"})
        )
        if request.method == "OPTIONS":
            return Response(status_code=204, headers={"allow": allow})
        path = request.url.path[:200]
        method = "HEAD" if request.scope.get(HEAD_AS_GET) else request.method
        message = f"method {method} is not allowed on {path!r}; allowed: {allow}"
        return json_response({"error": message}, 405, {"allow": allow})
    return json_response({"error": f"{e.detail}: {request.url.path[:200]!r}"}, e.status_code, e.headers)


#: ``FastAPI(exception_handlers=...)``: the exception classes the service maps, and their handlers.
EXCEPTION_HANDLERS: dict[Any, Callable[[Request, Any], Coroutine[Any, Any, Response]]] = {
    UnknownItemError: unknown,
    CorruptModelError: broken_model,
    ModelMismatchError: mismatched_model,
    NotFittedError: not_fitted,
    ItemIndexError: bad_id,
    InputError: bad_input,
    RequestValidationError: bad_request,
    StarletteHTTPException: http_error,
    Exception: internal,
}
