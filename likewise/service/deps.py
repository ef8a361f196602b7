"""What the routes share through FastAPI's dependencies: the served model, the app's limits, parameters.

The app keeps its :class:`~likewise.service.models.Registry` and :class:`~likewise.service.bodies.Limits`
in ``app.state``; a route asks for the model it serves with ``s: ServedModel`` (an unknown name is a
404 with suggestions, by :class:`~likewise.errors.UnknownItemError`), for a model with customers with
``RetailModel`` (422 otherwise). The query parameters' bounds that are the server's configuration are
:class:`~likewise.service.bodies.Bound` marks, as in the request bodies.
"""

from typing import Annotated

from fastapi import Depends, Query, Request

from ..errors import InputError
from .bodies import Bound, Limits, QueryInt, TypeName
from .models import Registry, Served

__all__ = [
    "AppLimits",
    "KParam",
    "RestrictParam",
    "KeyParam",
    "RetailModel",
    "ServedModel",
    "TypesParam",
    "app_limits",
    "check_results",
    "limits_of",
    "registry_of",
    "retail_model",
    "served_model",
]


def registry_of(request: Request) -> Registry:
    """The served models of the app answering ``request``."""
    registry: Registry = request.app.state.registry
    return registry


def limits_of(request: Request) -> Limits:
    """The limits of the app answering ``request``."""
    limits: Limits = request.app.state.limits
    return limits


async def served_model(request: Request, name: str) -> Served:
    """The current version of model ``name`` (the path's ``{name}``)."""
    return registry_of(request).get(name)


ServedModel = Annotated[Served, Depends(served_model)]


async def retail_model(s: ServedModel) -> Served:
    """Model ``name``, which must have a customer table."""
    if getattr(s.emb, "customers", None) is None:
        raise InputError(f"model {s.spec.name!r} has no customers: train it from an order log with customers")
    return s


RetailModel = Annotated[Served, Depends(retail_model)]

KParam = Annotated[int, Query(ge=1, description="neighbours per query"), QueryInt, Bound("max_k")]
KeyParam = Annotated[str, Query(min_length=1, description="a key, or #id"), Bound("max_key")]
RestrictParam = Annotated[
    int | None, Query(ge=1, description="search only the N most frequent items"), QueryInt
]
#: As a body's ``types``: at most 64 names of at most 64 characters each.
TypesParam = Annotated[
    list[TypeName] | None, Query(max_length=64, description="typed space: only these types")
]


async def app_limits(request: Request) -> Limits:
    """:func:`limits_of` as a dependency (async: a plain function would be run in the thread pool)."""
    return limits_of(request)


AppLimits = Annotated[Limits, Depends(app_limits)]


def check_results(limits: Limits, n: int, k: int) -> None:
    """Refuse ``n`` queries of ``k`` neighbours when the answer would pass ``limits.max_results``."""
    most = limits.max_results
    if n * k > most:
        raise InputError(
            f"{n} queries × k == {k} asks for {n * k} neighbours in one answer, the limit is {most}: lower k "
            "or split the batch"
        )
