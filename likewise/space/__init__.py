"""A trained space and what it answers: ``embeddings`` (the :class:`Embeddings` class, its mixins in
``analogies``, ``affinity``, ``gensim_names``, ``itemtable``, ``persist``), what a query hands back
(``results``: neighbours, tagged vectors, fingerprints), the arrays behind the answers (``search``,
``itemitem``, ``completion``), customers and item types (``customers``, ``itemtypes``) and the files of a
saved space (``store``). Modules are imported by their full name; this file imports nothing."""


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
