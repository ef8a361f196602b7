"""How a space is learned: the settings (``config``, and ``auto`` for the defaults that follow the data),
the trainer and its one backend choice (``train``; the passes of each backend in ``train_numba`` and
``train_torch``, the kernels themselves in :mod:`likewise.kernels`), checkpoints (``checkpoint``), many
processes (``distributed``), the incremental update of a saved retail space (``update``) and the
hyper-parameter search (``tune``). Modules are imported by their full name; this file imports nothing."""


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
