"""Display names of a space's items: the column of an item table that names them, and the lookup by name.

A space trained with item attributes (``likewise train --item-attrs products.csv``) keeps the rows of its
items (``emb.item_table``, saved as ``item_table.json``); ``likewise serve --item-attrs`` and
:meth:`likewise.Embeddings.attach_names` give names to any space. The name column is chosen here, once,
for every front end (answers, the explorer):

* the column given (``--name-col``, ``name_col=``), else
* the first column named (case-insensitively) one of :data:`NAME_COLUMN_NAMES`: ``name``,
  ``product_name``, ``display_name``, ``title``, ``description``.

A table without such a column gives no names (answers carry ``"name": null``). A name that one item
carries finds that item in a query (``emb.similar("Tent, 2 person")``); a name several items carry is
refused with the items listed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..errors import InputError, UnknownItemError

if TYPE_CHECKING:
    from ..data.vocab import Vocab

__all__ = ["NAME_COLUMN_NAMES", "DisplayNames", "ItemNames", "choose_name_column", "names_from_table"]

#: Column names taken for the display name, in this order (compared case-insensitively).
NAME_COLUMN_NAMES = ("name", "product_name", "display_name", "title", "description")
#: Items an ambiguous name's error lists.
MAX_LISTED = 10


def choose_name_column(columns: Sequence[str], name_col: str | None = None, where: str = "") -> str | None:
    """The column of ``columns`` that holds display names (see the module docstring).

    Parameters
    ----------
    columns : sequence of str
        The table's columns (its item column excluded).
    name_col : str, optional
        The column asked for; it must exist.
    where : str
        The table, for the error.

    Returns
    -------
    str or None
        None when no column is so named.

    Raises
    ------
    InputError
        ``name_col`` is not one of ``columns``.
    """
    if name_col is not None:
        if name_col not in columns:
            within = f" of {where!r}" if where else ""
            raise InputError(
                f"name column {name_col!r} is not a column{within}; it has {', '.join(map(repr, columns))}"
            )
        return name_col
    lower = {c.casefold(): c for c in columns}
    return next((lower[n] for n in NAME_COLUMN_NAMES if n in lower), None)


@dataclass(frozen=True)
class ItemNames:
    """The display name of each row of a space, and the rows each name finds.

    Attributes
    ----------
    column : str
        The table column the names came from.
    names : tuple of (str or None)
        One per row (None: the table has no name for it).
    unique : mapping of str to int
        A name one row carries -> that row.
    ambiguous : mapping of str to tuple of int
        A name several rows carry -> those rows.
    """

    column: str
    names: tuple[str | None, ...]
    unique: Mapping[str, int]
    ambiguous: Mapping[str, tuple[int, ...]]

    @classmethod
    def of(cls, names: Sequence[Any], column: str) -> ItemNames:
        """Names given per row (None or empty: no name), indexed.

        Parameters
        ----------
        names : sequence of str or None
        column : str

        Returns
        -------
        ItemNames
        """
        clean = tuple(None if v is None or str(v).strip() == "" else str(v) for v in names)
        rows: dict[str, list[int]] = {}
        for i, n in enumerate(clean):
            if n is not None:
                rows.setdefault(n, []).append(i)
        unique = {n: r[0] for n, r in rows.items() if len(r) == 1}
        ambiguous = {n: tuple(r) for n, r in rows.items() if len(r) > 1}
        return cls(column, clean, MappingProxyType(unique), MappingProxyType(ambiguous))

    def __len__(self) -> int:
        return len(self.names)

    def find(self, name: str, keys: Sequence[str], what: str = "item") -> int | None:
        """The row named ``name``; None when no row is; raises when several are.

        Parameters
        ----------
        name : str
        keys : sequence of str
            The space's keys, to list an ambiguous name's items.
        what : str
            What the rows are, for the error.

        Raises
        ------
        UnknownItemError
            ``name`` is the name of several rows (the message lists their keys).
        """
        i = self.unique.get(name)
        if i is not None:
            return i
        rows = self.ambiguous.get(name)
        if rows is None:
            return None
        listed = [keys[r] for r in rows[:MAX_LISTED]]
        more = f" and {len(rows) - MAX_LISTED} more" if len(rows) > MAX_LISTED else ""
        note = (
            f"{len(rows)} {what}s are named so ({', '.join(map(repr, listed))}{more}); ask for one by its key"
        )
        raise UnknownItemError(name, listed, what=what, note=note)


def names_from_table(
    table: Mapping[str, Any], keys: Sequence[str], name_col: str | None = None
) -> ItemNames | None:
    """The display names of a space's rows from its item table (``emb.item_table``).

    Parameters
    ----------
    table : mapping
        ``{"item_col": name, "columns": {column: [value per table row]}}`` (as
        :func:`likewise.readers.attrs.item_table` keeps it), optionally ``"name_col"``.
    keys : sequence of str
        The space's keys by row; a typed key ``product:tent`` takes the table row keyed ``tent``.
    name_col : str, optional
        The column to take (default: the table's ``name_col``, else :func:`choose_name_column`'s).

    Returns
    -------
    ItemNames or None
        None when the table has no name column.
    """
    columns = dict(table.get("columns") or {})
    item_col = table.get("item_col")
    if item_col not in columns:
        return None
    others = [c for c in columns if c != item_col]
    saved = table.get("name_col")  # chosen at training; a table replaced since may lack it
    if name_col is None and saved in others:
        name_col = saved
    col = choose_name_column(others, name_col, "the item table")
    if col is None:
        return None
    by_key = {str(k): v for k, v in zip(columns[item_col], columns[col], strict=True)}
    names = []
    for k in keys:
        v = by_key.get(k)
        if v is None and ":" in k:  # a typed space keys items "product:tent"
            v = by_key.get(k.split(":", 1)[1])
        names.append(v)
    return ItemNames.of(names, col)


class DisplayNames:
    """``item_table``, ``item_names``, ``names``, ``name_of``, ``attach_names``, ``id_of_name`` (mixed into
    ``Embeddings``, whose ``vocab`` and ``id_of`` they use)."""

    vocab: Vocab  # the host's (a property of Embeddings)
    # the item attributes trained with (``{"item_col", "columns"}``; train --item-attrs), for display
    _item_table: dict[str, Any] | None = None
    _names: ItemNames | None = None  # attach_names, or read from the item table on first use
    _names_from_table: bool = True  # read them from the item table on first use, unless attached

    @property
    def item_table(self) -> dict[str, Any] | None:
        """The item attributes trained with (``{"item_col", "columns"}``, plus ``"name_col"`` when a name
        column was chosen; ``train --item-attrs``), or None. Setting it gives the items its names."""
        return self._item_table

    @item_table.setter
    def item_table(self, table: dict[str, Any] | None) -> None:
        self._item_table = table
        self._names, self._names_from_table = None, True

    @property
    def item_names(self) -> ItemNames | None:
        """The display names of the items (:class:`~likewise.space.names.ItemNames`), or None.

        From :meth:`attach_names`, else from the :attr:`item_table` (its ``name``, ``product_name``,
        ``display_name``, ``title`` or ``description`` column: :mod:`likewise.space.names`).
        """
        if self._names is None and self._names_from_table and self._item_table is not None:
            self._names = names_from_table(self._item_table, self.vocab.keys)
            self._names_from_table = self._names is not None
        return self._names

    @property
    def names(self) -> list[str | None]:
        """The display name of each item, in id order (None where none is known; all None without names)."""
        named = self.item_names
        return [None] * len(self.vocab) if named is None else list(named.names)

    def name_of(self, item: object) -> str | None:
        """The display name of one item (None when none is known)."""
        named = self.item_names
        return None if named is None else named.names[self.id_of(item)]  # type: ignore[attr-defined]

    def attach_names(self, names: Sequence[Any] | Mapping[str, Any] | None, column: str = "name") -> None:
        """Give the items display names (None takes them away); answers then carry them.

        Parameters
        ----------
        names : sequence (one per id), mapping of key to name, or None
            Names; None or ``""`` for an item without one.
        column : str
            Where they came from (a table column), shown in :attr:`item_names`.
        """
        if names is None:
            self._names, self._names_from_table = None, False
            return
        if isinstance(names, Mapping):
            names = [names.get(k) for k in self.vocab.keys]
        names = list(names)
        if len(names) != len(self.vocab):
            raise InputError(f"names has {len(names)} entries, the space has {len(self.vocab)} items")
        self._names, self._names_from_table = ItemNames.of(names, column), False

    def id_of_name(self, name: str) -> int | None:
        """The row a display name finds (None: no item has it); a name several items have raises."""
        named = self.item_names
        return None if named is None else named.find(name, self.vocab.keys, self.vocab.what)
