"""PyTorch side of likewise (``pip install '.[torch]'``): the embedding table as a network layer.

* :class:`EmbeddingTable` -- ``nn.Embedding`` that checks ids before the lookup (a clear
  :class:`~likewise.errors.ItemIndexError` instead of "index out of range in self" or a CUDA
  device-side assert), optional sparse gradients, and export of its table to a saved likewise space.
* :mod:`likewise.torch.nexttoken` -- the makemore MLP: the previous k items -> their vectors concatenated
  -> tanh hidden layer -> logits (tied or untied), trained with Adam on a seeded train/val split.

``import likewise`` never imports this package; importing it without torch installed raises
:class:`~likewise.errors.MissingDependencyError` with the install line.
"""

from __future__ import annotations

from .._lazy import lazy_names

try:
    import torch as _torch  # noqa: F401  (the guarded import: one clear message when torch is missing)
except ImportError:
    from ..errors import MissingDependencyError

    raise MissingDependencyError("torch", "torch", "the PyTorch embedding layer") from None

from .embedding import EmbeddingTable, check_ids, resolve_device
from .nexttoken import (
    NextTokenConfig,
    NextTokenModel,
    TrainedNextToken,
    build_examples,
    next_token_vocab,
    predict_next,
    sample,
    sweep_dims,
    train_next,
)
from .nexttoken_files import check_model_target, load_model, save_model

__all__ = [
    "EmbeddingTable",
    "NextTokenConfig",
    "NextTokenModel",
    "TrainedNextToken",
    "build_examples",
    "check_ids",
    "check_model_target",
    "load_model",
    "next_token_vocab",
    "predict_next",
    "resolve_device",
    "sample",
    "save_model",
    "sweep_dims",
    "train_next",
]


__getattr__ = lazy_names(__name__)  # a submodule on first use, as after `import likewise`
