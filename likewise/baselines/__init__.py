"""The yardsticks a space must beat: counting baselines (``counts``: popular, co-count, PPMI, PPMI-SVD)
and the strongest simple peers as a competent user would configure them (``peers``: EASE and
confidence-weighted ALS), behind one recommender interface (``_ranking``). Modules are imported by their
full name; this file imports nothing."""


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
