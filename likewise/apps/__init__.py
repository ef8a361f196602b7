"""Applications on a trained space beyond retail's (:mod:`likewise.retail`): campaigns in a typed space
(``campaigns``), what to read next (``content``), new products placed from their attributes
(``coldstart``) and the seed demo (``demo``). Modules are imported by their full name; this file imports
nothing."""


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
