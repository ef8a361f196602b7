"""What goes in: item keys and ids (``vocab``), the compiled, memory-mapped corpus every input becomes
(``corpus``, ``corpus_build``; the readers it compiles from are :mod:`likewise.readers`), vectors in and out
in other tools' formats (``formats``), and generated data sets with planted answers (``datasets``,
``eventdata``, ``names``). Modules are imported by their full name; this file imports nothing."""


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
