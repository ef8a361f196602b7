"""What a package imports on first use (PEP 562): its submodules, and the names it re-exports lazily.

Each package's ``__init__`` sets ``__getattr__ = lazy_names(__name__, ...)``: after a plain
``import likewise``, ``likewise.retail.train_from_log`` imports ``likewise.retail`` when it is named,
and the package itself imports nothing more at import time.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping

__all__ = ["lazy_names"]


def lazy_names(
    package: str, names: Mapping[str, str] | None = None, *, keep: MutableMapping[str, object] | None = None
) -> Callable[[str], object]:
    """A package's module-level ``__getattr__``.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    names : mapping of str to str, optional
        Names the package re-exports, each with the submodule (relative to ``package``) it comes from.
    keep : mutable mapping, optional
        The package's ``globals()``: a re-exported name is kept there once imported.

    Returns
    -------
    callable
        ``__getattr__(name)``: a re-exported name, else the submodule ``package.name``; else
        ``AttributeError`` (a submodule that fails to import for another reason raises that error).
    """

    def __getattr__(name: str) -> object:
        if names is not None and name in names:
            value = getattr(importlib.import_module(f"{package}.{names[name]}"), name)
            if keep is not None:
                keep[name] = value
            return value
        if not name.startswith("__"):
            try:
                return importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as e:
                if e.name != f"{package}.{name}":
                    raise
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
