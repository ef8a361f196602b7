"""The items of a space as a table: their types, the type filter of queries, and export to Arrow / pandas.

:class:`ItemTable` is a mixin of :class:`~likewise.space.embeddings.Embeddings` (its methods are
``Embeddings`` methods). It relies on the host's ``vocab``, ``keys``, ``counts``, ``vectors``,
``normed``, ``fingerprint`` and ``ids_of``.

Every query of a space (``similar``, ``similar_to_vector``, ``recommend``, the retail, campaign and
content queries) passes its ``types`` and ``restrict`` through :meth:`ItemTable.typed_restrict`, so one
rule decides which rows may be returned: the rows of the types asked for (default: every type that is
not hidden), within ``restrict``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .._check import is_item
from ..errors import InputError
from .host import Types
from .itemtypes import ItemTypes
from .results import items_frame, items_table

if TYPE_CHECKING:  # pyarrow and pandas are imported inside the methods that need them
    import pandas as pd
    import pyarrow as pa

__all__ = ["ItemTable", "Types"]


class ItemTable:
    """``types``, ``attach_types``, ``type_of``, ``typed_restrict``, ``to_arrow``, ``to_pandas`` (mixed into
    Embeddings)."""

    _types: ItemTypes | None = None  # the type of each row in a typed space

    @property
    def types(self) -> ItemTypes | None:
        """The type of each row (:class:`~likewise.space.itemtypes.ItemTypes`), or None for an untyped
        space."""
        return self._types

    def attach_types(self, types: ItemTypes | None) -> None:
        """Record the type of each row (None makes the space untyped); saved with the space.

        Bare names then resolve to typed keys (``"tent"`` -> ``"product:tent"``) when one type has them.

        Raises
        ------
        InputError
            ``types`` has a different number of rows than the space.
        """
        vocab = self.vocab  # type: ignore[attr-defined]
        if types is None:
            vocab = vocab.with_aliases({}, {})
        else:
            if not isinstance(types, ItemTypes):
                raise InputError(
                    f"types must be a likewise.space.itemtypes.ItemTypes, got {type(types).__name__}"
                )
            if len(types) != len(vocab):
                raise InputError(f"types has {len(types)} rows, the space has {len(vocab)}")
            vocab = vocab.with_aliases(*types.aliases(vocab.keys))
        # a new Vocab, not the caller's changed: whoever built the space keeps theirs as it was
        self.replace_vocab(vocab)  # type: ignore[attr-defined]
        self._types = types

    def type_of(self, item: Any) -> str | None:
        """The type name of one item (a key or an id); None in an untyped space."""
        i = self.id_of(item)  # type: ignore[attr-defined]
        return None if self.types is None else self.types.type_of(i)

    def typed_restrict(self, restrict: Any, types: Types) -> Any:
        """``restrict`` narrowed to the rows of ``types`` (None: every type that is not hidden).

        Returns ``restrict`` unchanged for an untyped space asked for no type, else the sorted int64 ids
        allowed, which every query accepts as a ``restrict``.

        Raises
        ------
        InputError
            ``types`` given to an untyped space, an unknown type, or nothing left to return.
        """
        table = self.types
        if table is None:
            if types is not None:
                raise InputError(
                    f"types == {types!r}, but this space has no item types: train it from an event log "
                    "with a type column (--type-col) to filter by type"
                )
            return restrict
        if types is None and not table.hidden:
            return restrict
        mask = table.mask(types)
        if restrict is not None:
            if is_item(restrict) and not isinstance(restrict, str):
                n = int(restrict)  # type: ignore[arg-type]
                if not 1 <= n <= len(mask):
                    raise InputError(
                        f"restrict == {n}, must be between 1 and the vocabulary size {len(mask)}"
                    )
                top = self.vocab.most_frequent(n)  # type: ignore[attr-defined]
                if top is None:
                    mask[n:] = False
                else:  # by count: rows appended by update or place may rank high
                    keep = np.zeros(len(mask), dtype=bool)
                    keep[top] = True
                    mask &= keep
            elif isinstance(restrict, str) or not isinstance(
                restrict, Sequence | set | frozenset | np.ndarray
            ):
                raise InputError(
                    f"restrict must be None, an int (the N most frequent items) or a collection of keys, "
                    f"got {type(restrict).__name__} {restrict!r}"
                )
            else:
                keep = np.zeros(len(mask), dtype=bool)
                keep[self.ids_of(list(restrict))[0]] = True  # type: ignore[attr-defined]
                mask &= keep
        if not mask.any():
            what = "types " + ", ".join(table.check(types)) if types is not None else "visible types"
            raise InputError(f"no item of the {what} is left to return (restrict={restrict!r})")
        return np.flatnonzero(mask).astype(np.int64)

    # ---- export ----------------------------------------------------------------------------------------

    def to_arrow(self, *, norm: bool = False) -> pa.Table:
        """The space as a pyarrow Table, one row per item in id order.

        Parameters
        ----------
        norm : bool
            Export the unit-length vectors instead of the raw ones.

        Returns
        -------
        pyarrow.Table
            Columns ``key`` (string), ``id`` (int64), ``count`` (int64) and ``vector``
            (``fixed_size_list<float32>[D]``), and ``type`` (string) in a typed space; the schema
            metadata holds ``likewise.fingerprint`` and ``likewise.what``. The vector column shares
            memory with the space where pyarrow allows.
        """
        import pyarrow as pa

        table = items_table(
            self.keys,  # type: ignore[attr-defined]
            self.counts,  # type: ignore[attr-defined]
            self.normed if norm else self.vectors,  # type: ignore[attr-defined]
            {
                "likewise.fingerprint": self.fingerprint,  # type: ignore[attr-defined]
                "likewise.what": self.vocab.what,  # type: ignore[attr-defined]
            },
        )
        if self.types is not None:
            table = table.append_column("type", pa.array(self.types.per_item(), type=pa.string()))
        return table

    def to_pandas(self, *, norm: bool = False) -> pd.DataFrame:
        """The space as a pandas DataFrame: the columns of :meth:`to_arrow`, one row per item.

        Parameters
        ----------
        norm : bool
            Export the unit-length vectors instead of the raw ones.

        Returns
        -------
        pandas.DataFrame
            Columns ``key``, ``id`` (int64), ``count`` (int64) and ``vector``, whose cells are float32
            arrays of length D (rows of one writable copy of the table), and ``type`` in a typed space;
            ``df.attrs["fingerprint"]`` is the space's fingerprint.

        Raises
        ------
        MissingDependencyError
            pandas is not installed (an ``ImportError``; it is not a dependency of likewise).
        """
        vectors = self.normed if norm else self.vectors  # type: ignore[attr-defined]
        df = items_frame(
            self.keys,  # type: ignore[attr-defined]
            self.counts,  # type: ignore[attr-defined]
            vectors,
            self.fingerprint,  # type: ignore[attr-defined]
            "Embeddings.to_pandas()",
        )
        if self.types is not None:
            df["type"] = self.types.per_item()
        return df
