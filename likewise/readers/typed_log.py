"""Typed event logs, read: each row's item key becomes ``type:item`` as its batch is read.

Two layouts of the same information (see :mod:`likewise.retail.events` for the user's view):

* a **type column** beside the item column, optionally renamed by a type map (a value the map does not
  name is an error, so a new event kind is never trained by accident);
* **one column per kind**: each row fills exactly one of them, and that column's type is the row's.

:class:`ItemTyping` is applied to every batch by :func:`~likewise.readers.iter_log_batches` when the
:class:`~likewise.readers.InputSpec` names ``type_col`` or ``type_cols``, so a typed log streams through
the same passes, checks and corpus as any other.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..space.itemtypes import SIDE_TYPE, TYPE_SEP, check_type_name

__all__ = ["ItemTyping", "parse_type_map"]


class ItemTyping:
    """How a log's rows get their types; applied to each table read (see the module docstring).

    Parameters
    ----------
    item_col : str or None
        The item column (not used with ``type_cols``).
    type_col : str, optional
        The column naming each row's type (or event kind, renamed by ``type_map``).
    type_map : mapping of str to str, optional
        Value of ``type_col`` -> type name.
    type_cols : mapping of str to str, optional
        Type name -> the column holding items of that type.
    """

    def __init__(
        self,
        item_col: str | None,
        type_col: str | None = None,
        type_map: Mapping[str, str] | None = None,
        type_cols: Mapping[str, str] | None = None,
    ) -> None:
        if type_col is not None and type_cols is not None:
            raise InputError("give a type column (type_col) or one column per kind (type_cols), not both")
        if type_col is None and type_cols is None:
            raise InputError("a typed log needs type_col= or type_cols=")
        if type_map is not None and type_col is None:
            raise InputError("type_map renames the values of type_col; give type_col too")
        self.type_col = type_col
        self.type_map = dict(type_map) if type_map is not None else None
        self.type_cols = {check_type_name(t): c for t, c in (type_cols or {}).items()}
        if type_cols is not None and not self.type_cols:
            raise InputError("type_cols is empty: name at least one TYPE=COLUMN")
        self.item_col = item_col if type_cols is None else "(" + ", ".join(self.type_cols.values()) + ")"

    @property
    def read_cols(self) -> list[str]:
        """The columns of the log this typing reads, all as text."""
        if self.type_cols:
            return list(self.type_cols.values())
        return [self.item_col, self.type_col]  # type: ignore[list-item]

    def describe(self) -> dict[str, Any]:
        """What is recorded in the space's ``meta["retail"]`` (so an update reads new logs the same way)."""
        return {"type_col": self.type_col, "type_map": self.type_map, "type_cols": self.type_cols or None}

    def apply(self, path: Path, table: Any, first_row: int = 0) -> Any:
        """``table`` with column :attr:`item_col` holding the typed keys ``type:item`` of its rows.

        Raises
        ------
        InputError
            A row without a type or an item (naming the file and the data row), a value the type map does
            not name, a type name that is not allowed, or a row filling several of ``type_cols``.
        """
        import pyarrow as pa
        import pyarrow.compute as pc

        if self.type_cols:
            items, types = self._coalesce(path, table, first_row)
        else:
            items = pc.cast(table.column(self.item_col).combine_chunks(), pa.string())
            types = pc.cast(table.column(self.type_col).combine_chunks(), pa.string())
            if types.null_count:
                _bad_row(path, first_row, types.is_null(), f"null {self.type_col!r} (every row needs a type)")
            types = self._mapped(path, types, first_row)
            if items.null_count:  # left for the log's own check, which names the column
                return table.set_column(table.column_names.index(self.item_col), self.item_col, items)
        for t in pc.unique(types).to_pylist():
            try:
                check_type_name(t)
                if t == SIDE_TYPE:
                    raise InputError(f"type {SIDE_TYPE!r} is reserved for item attributes (side information)")
            except InputError as e:
                _bad_row(path, first_row, pc.equal(types, t), f"{self.type_col!r} value {t!r}: {e}")
        keys = pc.binary_join_element_wise(types, items, TYPE_SEP)
        if self.item_col in table.column_names:
            return table.set_column(table.column_names.index(self.item_col), self.item_col, keys)
        return table.append_column(self.item_col, keys)

    def _mapped(self, path: Path, types: Any, first_row: int) -> Any:
        import pyarrow as pa
        import pyarrow.compute as pc

        if self.type_map is None:
            return types
        values = pa.array(list(self.type_map), type=pa.string())
        where = pc.index_in(types, value_set=values)
        if where.null_count:
            missing = where.is_null()
            at = int(np.flatnonzero(missing.to_numpy(zero_copy_only=False))[0])
            known = ", ".join(map(repr, self.type_map))
            _bad_row(
                path,
                first_row,
                missing,
                f"{self.type_col!r} value {types[at].as_py()!r} is not in the type map ({known})",
            )
        return pc.take(pa.array(list(self.type_map.values()), type=pa.string()), where)

    def _coalesce(self, path: Path, table: Any, first_row: int) -> tuple[Any, Any]:
        import pyarrow as pa
        import pyarrow.compute as pc

        cols = [pc.cast(table.column(c).combine_chunks(), pa.string()) for c in self.type_cols.values()]
        filled = np.zeros(table.num_rows, dtype=np.int64)
        for c in cols:
            filled += c.is_valid().to_numpy(zero_copy_only=False)
        if np.any(filled != 1):
            bad = filled != 1
            at = int(np.flatnonzero(bad)[0])
            what = "none" if filled[at] == 0 else f"{int(filled[at])}"
            names = ", ".join(map(repr, self.type_cols.values()))
            _bad_row(
                path,
                first_row,
                pa.array(bad),
                f"{what} of the columns {names} filled (each row fills exactly one)",
            )
        items = pc.coalesce(*cols)
        kinds = np.zeros(table.num_rows, dtype=np.int64)
        for i, c in enumerate(cols):
            kinds[c.is_valid().to_numpy(zero_copy_only=False)] = i
        types = pc.take(pa.array(list(self.type_cols), type=pa.string()), pa.array(kinds))
        return items, types


def _bad_row(path: Path, first_row: int, mask: Any, what: str) -> None:
    at = first_row + int(np.flatnonzero(np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool))[0])
    raise InputError(f"{what} in {path} at data row {at + 1} (rows count from 1, header not counted)")


def parse_type_map(text: str | Mapping[str, str] | None) -> dict[str, str] | None:
    """``"view=product,purchase=product"`` (or a mapping) as a dict ``{value: type}``; None stays None.

    Raises
    ------
    InputError
        A pair without ``=``, an empty side, or a type name that is not allowed.
    """
    if text is None:
        return None
    if isinstance(text, Mapping):
        pairs = list(text.items())
    else:
        pairs = []
        for part in str(text).split(","):
            if not part.strip():
                continue
            key, sep, value = part.partition("=")
            if not sep or not key.strip() or not value.strip():
                raise InputError(f"type map entry {part!r} must read VALUE=TYPE, e.g. 'view=product'")
            pairs.append((key.strip(), value.strip()))
    if not pairs:
        raise InputError(f"type map {text!r} is empty; write VALUE=TYPE pairs, e.g. 'view=product'")
    return {str(k): check_type_name(v) for k, v in pairs}
