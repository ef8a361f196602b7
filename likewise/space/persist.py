"""Saving and loading a space: :class:`SpaceFiles`, a mixin of :class:`~likewise.space.embeddings.Embeddings`.

The files are written and checked by :mod:`likewise.space.store` (plain ``.npy`` + JSON, no pickle); this
mixin turns a :class:`~likewise.space.store.SavedSpace` back into a space, with its context table, its
customer table, its item types and the approximate index saved beside it. ``load`` builds
``cls(...)``, so it needs no import of the class it is mixed into.
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import CorruptModelError, InputError

__all__ = ["SpaceFiles"]


class SpaceFiles:
    """``save`` and ``load`` (mixed into ``Embeddings``)."""

    def save(self, path: str | os.PathLike, *, overwrite: bool = False) -> None:
        """Save to a folder of plain files (see :func:`likewise.space.store.save`), atomically."""
        from . import store

        store.save(self, path, overwrite=overwrite)

    @classmethod
    def load(
        cls, path: str | os.PathLike, *, mmap: bool = False, verify: bool = True, index: bool = True
    ) -> Any:
        """Load a folder written by :meth:`save` (checked by :func:`likewise.space.store.read_space`).

        Parameters
        ----------
        path : str or path-like
            The folder.
        mmap : bool
            Memory-map the vectors read-only instead of reading them into memory (queries build the
            normalised copy in memory on first use).
        verify : bool
            Check each file's size and sha256 against the manifest (shapes are always checked).
        index : bool
            Attach an approximate index saved beside the model (``path/index``, written by ``likewise
            index``); one built on another space is ignored with a warning, and queries then use exact
            search.

        Raises
        ------
        CorruptModelError
            A missing, truncated or corrupt file, or contents that disagree with the manifest.
        """
        from . import store
        from .customers import CustomerTable

        saved = store.read_space(path, mmap=mmap, verify=verify)
        try:
            emb = cls(
                saved.vectors,
                saved.vocab,
                config=saved.config,
                fingerprint=saved.fingerprint,
                meta=saved.meta,
                check_finite=False,  # store.read_space has scanned every table once
            )
        except InputError as e:
            raise CorruptModelError(f"{str(saved.folder)!r}: {e}") from None
        if saved.context is not None:
            emb.attach_context(saved.context)
        if saved.customers is not None:
            try:
                emb.attach_customers(CustomerTable(**saved.customers))
            except InputError as e:
                raise CorruptModelError(f"the customer table in {str(saved.folder)!r}: {e}") from None
        if saved.types is not None:
            try:
                emb.attach_types(saved.types)
            except InputError as e:
                raise CorruptModelError(f"the item types in {str(saved.folder)!r}: {e}") from None
        if saved.itemitem is not None:
            emb.attach_itemitem(saved.itemitem)
        emb.item_table = saved.item_table
        if index:
            from ..index import attach_saved_index

            attach_saved_index(emb, path, verify=verify)
        return emb
