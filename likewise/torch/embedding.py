"""The embedding table as the first layer of a network: ``nn.Embedding`` with checked ids.

A lookup ``table(ids)`` is row selection, ``one_hot(ids) @ weight``; its backward adds the upstream
gradient into the rows that were used (``one_hot.T @ upstream``) and leaves every other row at zero.
``docs/mechanics.md`` and ``tests/test_torch_mechanics.py`` show both.

Why check ids ourselves: PyTorch reports an id past the end as ``IndexError: index out of range in self``
on the CPU and as an asynchronous device-side assert on CUDA, which poisons the CUDA context and points
at the wrong line. :func:`check_ids` runs one min/max reduction on the ids' own device and reads back two
numbers before the lookup kernel is launched, so the error is raised on the host, synchronously, and
names the bad id and the table size.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from ..errors import InputError, ItemIndexError

__all__ = ["EmbeddingTable", "check_ids", "resolve_device"]

# nn.Embedding accepts int32 and int64 indices; smaller integer types are widened, anything else refused.
_INDEX_DTYPES = (torch.int64, torch.int32)
_WIDEN_DTYPES = (torch.int16, torch.int8, torch.uint8)


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """The torch device for ``"cpu"``, ``"cuda"`` (or ``"cuda:N"``) or ``"auto"`` (CUDA when present).

    Raises
    ------
    InputError
        An unknown device name, or CUDA asked for where torch sees no GPU.
    """
    if isinstance(device, torch.device):
        name = str(device)
    elif isinstance(device, str):
        name = device.strip().lower()
    else:
        raise InputError(f"device == {device!r}, must be 'cpu', 'cuda', 'cuda:N' or 'auto'")
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    if name == "cuda" or (name.startswith("cuda:") and name[5:].isdigit()):
        if not torch.cuda.is_available():
            raise InputError(
                f"device == {device!r} but torch sees no CUDA GPU (torch {torch.__version__}, "
                f"built for CUDA {torch.version.cuda}); use device 'cpu' or 'auto'"
            )
        return torch.device(name)
    raise InputError(f"device == {device!r}, must be 'cpu', 'cuda', 'cuda:N' or 'auto'")


def check_ids(ids: Any, size: int, what: str = "item id") -> torch.Tensor:
    """Return ``ids`` as an integer tensor, raising if any id is outside ``[0, size)``.

    Parameters
    ----------
    ids : tensor or array-like of int
        Ids of any shape. A tensor stays on its device; anything else becomes a CPU tensor.
    size : int
        Rows in the table.
    what : str
        What an id names, for the message.

    Returns
    -------
    Tensor
        ``ids`` (int32 or int64; int8/int16/uint8 widened to int64).

    Raises
    ------
    InputError
        The ids are not integers (floats, bools).
    ItemIndexError
        An id is negative or ``>= size``; the message names the id and the table size.
    """
    t = ids if isinstance(ids, torch.Tensor) else torch.as_tensor(np.asarray(ids))
    if t.dtype in _WIDEN_DTYPES:
        t = t.to(torch.int64)
    elif t.dtype not in _INDEX_DTYPES:
        raise InputError(f"{what}s must be an integer tensor (int64 or int32), got dtype {t.dtype}")
    if t.numel() == 0:
        return t
    # One reduction on the ids' device and one two-number read-back: the only host sync, and it happens
    # before the embedding kernel is launched.
    lo, hi = torch.stack(torch.aminmax(t)).tolist()
    if lo < 0:
        raise ItemIndexError(lo, size, what=what)
    if hi >= size:
        raise ItemIndexError(hi, size, what=what)
    return t


class EmbeddingTable(nn.Module):
    """A table of ``num_items`` learnable ``dim``-vectors; ``table(ids)`` looks rows up.

    Parameters
    ----------
    num_items : int
        Rows in the table (the vocabulary size).
    dim : int
        Columns (the vector length).
    sparse : bool
        Produce a sparse gradient for the table (only the rows used are stored); use it with
        ``torch.optim.SparseAdam`` or ``SGD``. Plain ``Adam`` needs dense gradients.
    check : bool
        Check ids before each lookup (:func:`check_ids`). Turning it off saves one tiny reduction and a
        two-number host read-back per call, and brings back PyTorch's own errors.
    what : str
        What a row names, for error messages.

    Attributes
    ----------
    embedding : nn.Embedding
        The wrapped layer; ``weight`` is its ``[num_items, dim]`` parameter.
    """

    def __init__(
        self, num_items: int, dim: int, *, sparse: bool = False, check: bool = True, what: str = "item"
    ) -> None:
        super().__init__()
        for name, v in (("num_items", num_items), ("dim", dim)):
            if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 1:
                raise InputError(f"{name} == {v!r}, must be an int >= 1")
        self.embedding = nn.Embedding(int(num_items), int(dim), sparse=sparse)
        self.check = check
        self.what = what

    @property
    def weight(self) -> nn.Parameter:
        """The ``[num_items, dim]`` table."""
        return self.embedding.weight

    @property
    def num_items(self) -> int:
        return self.embedding.num_embeddings

    @property
    def dim(self) -> int:
        return self.embedding.embedding_dim

    @property
    def sparse(self) -> bool:
        return self.embedding.sparse

    def extra_repr(self) -> str:
        return f"{self.num_items}, {self.dim}, sparse={self.sparse}, check={self.check}"

    def forward(self, ids: Any) -> torch.Tensor:
        """Rows of the table for ``ids``: shape ``ids.shape + (dim,)``."""
        if self.check:
            ids = check_ids(ids, self.num_items, what=f"{self.what} id")
        elif not isinstance(ids, torch.Tensor):
            ids = torch.as_tensor(np.asarray(ids))
        return self.embedding(ids.to(self.weight.device))

    @classmethod
    def from_embeddings(cls, emb: Any, *, sparse: bool = False, freeze: bool = False) -> EmbeddingTable:
        """A table initialised from a likewise :class:`~likewise.space.embeddings.Embeddings` space.

        Parameters
        ----------
        emb : Embeddings
            The space; row ``i`` of the table is the vector of id ``i``.
        sparse : bool
            As in the constructor.
        freeze : bool
            Make the table non-trainable.
        """
        vectors = np.asarray(emb.vectors, dtype=np.float32)
        table = cls(vectors.shape[0], vectors.shape[1], sparse=sparse, what=emb.vocab.what)
        with torch.no_grad():
            table.weight.copy_(torch.from_numpy(vectors.copy()))
        table.weight.requires_grad_(not freeze)
        return table

    def to_embeddings(self, vocab: Any, *, config: dict | None = None, meta: dict | None = None) -> Any:
        """The table as a likewise :class:`~likewise.space.embeddings.Embeddings` space (a float32 copy on
        CPU).

        Save it with ``.save(path)`` and every query, evaluation and plot of likewise works on it.

        Parameters
        ----------
        vocab : Vocab
            The keys of the rows, ``len(vocab) == num_items``.
        config, meta : dict, optional
            Stored with the space.
        """
        from ..space.embeddings import Embeddings

        if len(vocab) != self.num_items:
            raise InputError(f"vocab has {len(vocab)} keys but the table has {self.num_items} rows")
        vectors = self.weight.detach().to("cpu", torch.float32).numpy().copy()
        return Embeddings(vectors, vocab, config=config, meta=meta)
