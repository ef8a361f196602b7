"""Item attributes tokenised again by the rules a space recorded, for items it may not have seen.

Training fixes how each attribute column becomes tokens (bands, words, values, lists:
:mod:`likewise.readers.attrs`) and saves the rules as ``meta["attributes"]`` and the rows it read as the
space's item table (``item_table.json``). :func:`tokens_by_rules` gives the tokens of any list of item
keys by those rules, from, in this order: a new attribute table (new products, or new attributes of old
ones), the space's own item table, and the tokens a placed product was placed with.
``likewise.retail.update`` uses it to add attribute tokens to new orders as training did.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .attrs import ItemAttributes, item_table, read_item_attributes, read_table_file, tokenise

__all__ = ["KeyTokens", "tokens_by_rules"]


@dataclass
class KeyTokens:
    """The attribute tokens of a list of keys (see :func:`tokens_by_rules`).

    Attributes
    ----------
    tokens : list of list of str
        Per key, its tokens (empty for a key no source describes).
    found : int
        How many keys a source described.
    base : dict or None
        The space's item table (``{"item_col", "columns"}``).
    source, source_item_col
        The new attribute table and its item column (None without one).
    """

    tokens: list[list[str]]
    found: int
    base: dict[str, Any] | None = None
    source: Any = field(default=None, repr=False)
    source_item_col: str | None = None

    def table(self, keys: Sequence[str]) -> dict[str, Any] | None:
        """The space's item table with the new table's rows for ``keys`` added (replacing a key's old
        row), as the item table of a space with those keys."""
        if self.source is None:
            return self.base
        new = item_table(self.source, self.source_item_col, keys)
        base = self.base or {"item_col": new["item_col"], "columns": {new["item_col"]: []}}
        item_col = base["item_col"]
        new_cols = dict(new["columns"])
        new_cols[item_col] = new_cols.pop(new["item_col"])  # named as the space's table names it
        replaced = set(new_cols[item_col])
        old_cols = base["columns"]
        keep = [r for r, k in enumerate(old_cols[item_col]) if k not in replaced]
        blank = [None] * len(new_cols[item_col])

        def column(c: str) -> list[Any]:
            old = [old_cols[c][r] for r in keep] if c in old_cols else [None] * len(keep)
            return old + list(new_cols.get(c, blank))

        names = dict.fromkeys([*old_cols, *new_cols])
        return {"item_col": item_col, "columns": {c: column(c) for c in names}}


def _from_table(table: Mapping[str, Any], spec: Mapping[str, Any]) -> ItemAttributes:
    """The tokens of a saved item table's rows, by ``spec`` (the table keeps every column it was read with;
    only the columns ``spec`` tokenises count)."""
    cols = table["columns"]
    keys = [str(k) for k in cols[table["item_col"]]]
    kinds = spec.get("columns") or {}
    tokens = [tokenise(spec, {c: cols[c][r] for c in kinds if c in cols}) for r in range(len(keys))]
    return ItemAttributes(keys, tokens, dict(spec))


def _new_table(
    source: Any, spec: Mapping[str, Any], item_col: str | None, log_item_col: str | None
) -> tuple[ItemAttributes, str]:
    """The tokens of a new attribute table by ``spec``, and its item column.

    The table is checked as training reads one (missing item column, null, empty or repeated keys); a
    column ``spec`` does not tokenise is an error naming the columns the space was trained with.
    """
    tries = (item_col,) if item_col is not None else (spec.get("item_col"), log_item_col)
    table, _, _ = read_table_file(source, key=tries)
    names = table.column_names
    if item_col is None:  # the space's own item column, else the log's, else the first
        item_col = next((c for c in (spec.get("item_col"), log_item_col) if c in names), names[0])
    read_item_attributes(source, item_col)  # the training reader's checks, with its messages
    keys = [str(k) for k in table.column(item_col).to_pylist()]
    values = {c: table.column(c).to_pylist() for c in names if c != item_col}
    tokens = [tokenise(spec, {c: v[r] for c, v in values.items()}) for r in range(len(keys))]
    return ItemAttributes(keys, tokens, dict(spec)), item_col


def tokens_by_rules(
    keys: Sequence[str],
    spec: Mapping[str, Any],
    *,
    table: Mapping[str, Any] | None = None,
    placed: Mapping[str, Any] | None = None,
    source: str | os.PathLike | Any = None,
    item_col: str | None = None,
    log_item_col: str | None = None,
) -> KeyTokens:
    """The attribute tokens of ``keys`` by the rules ``spec`` (a space's ``meta["attributes"]``).

    Parameters
    ----------
    keys : sequence of str
        The items (a typed key ``product:tent`` also finds a row keyed ``tent``).
    spec : mapping
        How values become tokens (:attr:`likewise.readers.attrs.ItemAttributes.spec`).
    table : mapping, optional
        The space's item table (``{"item_col", "columns"}``).
    placed : mapping, optional
        ``meta["placed"]``: key -> ``{"tokens", ...}`` of the products placed from their attributes.
    source : path or table, optional
        A new attribute table (CSV/Parquet keyed by item, or a table in memory); it wins over the others.
    item_col : str, optional
        Its item column (default: the one the space's table used, else ``log_item_col``, else the first).
    log_item_col : str, optional
        The log's item column.

    Returns
    -------
    KeyTokens

    Raises
    ------
    InputError
        The new table is unreadable, lacks its item column, repeats or leaves out a key, or has a column
        ``spec`` does not tokenise (a number in a banded column must be a number).
    """
    sources: list[Any] = []
    if source is not None:
        fresh, item_col = _new_table(source, spec, item_col, log_item_col)
        sources.append(fresh.of)
    if table is not None:
        sources.append(_from_table(table, spec).of)
    if placed:
        sources.append(lambda k: (placed.get(k) or {}).get("tokens"))
    tokens, found = [], 0
    for key in keys:
        got = next((t for t in (of(key) for of in sources) if t is not None), None)
        found += got is not None
        tokens.append(list(got or []))
    base = dict(table) if table is not None else None
    return KeyTokens(tokens, found, base, source, item_col if source is not None else None)
