"""The HTTP service and the explorer page (the ``service`` extra: FastAPI and uvicorn).

``create_app`` builds the ASGI application; ``likewise serve`` runs it with uvicorn. Nothing here is
imported by ``import likewise``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app"]


def create_app(*args: Any, **kwargs: Any) -> Any:
    """Build the FastAPI application (see :func:`likewise.service.app.create_app`)."""
    try:
        import fastapi  # noqa: F401
    except ImportError:
        from ..errors import MissingDependencyError

        raise MissingDependencyError("fastapi", "service", "the HTTP service") from None
    from .app import create_app as _create

    return _create(*args, **kwargs)


def __getattr__(name: str) -> object:
    """A submodule on first use (PEP 562), as after ``import likewise``."""
    import importlib

    if not name.startswith("__"):
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
