"""How a space is learned: the settings (``config``, and ``auto`` for the defaults that follow the data),
the trainer and its one backend choice (``train``; the passes of each backend in ``train_numba`` and
``train_torch``, the kernels themselves in :mod:`likewise.kernels`), checkpoints (``checkpoint``), many
processes (``distributed``), the incremental update of a saved retail space (``update``) and the
hyper-parameter search (``tune``). Modules are imported by their full name."""

from .._lazy import lazy_names

__getattr__ = lazy_names(__name__)  # a submodule on first use, as after `import likewise`
