"""The HTTP service and the explorer page (the ``service`` extra: FastAPI and uvicorn).

``create_app`` builds the ASGI application; ``likewise serve`` runs it with uvicorn. Nothing here is
imported by ``import likewise``.
"""

from __future__ import annotations

from typing import Any

from .._lazy import lazy_names

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


__getattr__ = lazy_names(__name__)  # a submodule on first use, as after `import likewise`
