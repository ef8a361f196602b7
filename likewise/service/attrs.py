"""What the explorer knows of a model's items besides their vectors: names and attribute columns.

``likewise serve MODEL --item-attrs FILE`` (``--labels FILE`` is the same option) reads a CSV / TSV /
Parquet table with a header, one row per item -- ``products.csv`` of ``likewise datasets retail`` as it
is -- or headerless ``item<TAB>label`` lines. The table is matched against the model's keys
once, at load, so a file that cannot be read, has no data rows, or names none of the model's items is an
error naming the file and what it holds; the map is never silently grey.

How the columns are found (each decided here, once):

* the **item column**: the column named like the model's items (``item``, ``item_id``, ``key``, ``id``,
  ``product_id``, ``<item_name>_id`` of the manifest, the item column recorded by ``train --item-attrs``),
  case-insensitive; if none is so named, the column whose values match the most model keys;
* the **name column**: the one given (``serve --name-col``), else ``name``, ``product_name``,
  ``display_name``, ``title`` or ``description`` (:func:`likewise.space.names.choose_name_column`, the
  choice every answer's names follow); shown in place of the key and searched
  (:mod:`~likewise.service.textsearch`);
* the **colour column** (the default the page offers; any column can be picked): the first text column
  (an id counts as text) with 2 to :data:`MAX_GROUPS` distinct values that is not an id, else the first
  column with colour groups, else the first column that is not the name.

How a column is coloured (:mod:`likewise._groups`, the rule the PNG map follows too): a category by
value, up to :data:`MAX_GROUPS` values; with more, its most common values and ``other (N values)``; a
column of nearly unique values (names, titles) not at all. A numeric column is drawn on a gradient by the
page, and its groups (for filters) are quintile bands (``3.1 – 4.7``) when it has more than
:data:`MAX_GROUPS` values, as ``train --item-attrs`` tokenises it. An id (``manufacturer_id``, a column
of whole numbers nearly all different) is a category, never a number.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._arrays import unique
from .._groups import MAX_GROUPS, id_like, top_groups
from ..errors import InputError
from ..space.names import NAME_COLUMN_NAMES, choose_name_column

__all__ = ["ITEM_COLUMN_NAMES", "MAX_GROUPS", "NAME_COLUMN_NAMES", "ItemAttrs", "read_item_attrs"]

#: Column names taken for the item column, in this order (compared case-insensitively).
ITEM_COLUMN_NAMES = ("item", "item_id", "key", "id", "product_id", "product", "sku", "word", "token")
_BANDS = 5


@dataclass(frozen=True)
class ItemAttrs:
    """Attribute columns of a model's items, aligned with the model's ids.

    Attributes
    ----------
    source : str
        The file they came from.
    item_column : str
        The file's column of item keys.
    columns : list of str
        The attribute columns, in file order (the item column excluded).
    values : dict of str to list
        Per column, one display string (or None) per model id.
    groups : dict of str to list
        Per column, the value the map colours by, one per model id: the value itself, or a quintile band
        of a numeric column with many values, or None.
    colourable : list of str
        The columns the map can colour by (those with at least one group).
    name_column : str or None
        The column shown in place of keys and searched.
    colour_column : str or None
        The column the page colours by first.
    numeric : list of str
        The columns of numbers that are quantities (drawn on a gradient); ids are not among them.
    matched : int
        Model items that have a row.
    rows : int
        Data rows in the file.
    """

    source: str
    item_column: str
    columns: list[str]
    values: dict[str, list[str | None]]
    groups: dict[str, list[str | None]]
    colourable: list[str]
    name_column: str | None
    colour_column: str | None
    numeric: list[str]
    matched: int
    rows: int

    def name_of(self, item_id: int) -> str | None:
        """The display name of model id ``item_id`` (None without a name column or a row)."""
        return None if self.name_column is None else self.values[self.name_column][item_id]

    def of(self, ids: list[int]) -> dict[str, list[str | None]]:
        """Every column's values for model ids ``ids``."""
        return {c: [v[i] for i in ids] for c, v in self.values.items()}

    def groups_of(self, ids: list[int]) -> dict[str, list[str | None]]:
        """Every column's colour groups for model ids ``ids``."""
        return {c: [v[i] for i in ids] for c, v in self.groups.items()}

    def summary(self) -> dict[str, Any]:
        """What ``GET /models/{name}`` says of the table."""
        return {
            "source": self.source,
            "item_column": self.item_column,
            "columns": self.columns,
            "colourable": self.colourable,
            "name_column": self.name_column,
            "colour_column": self.colour_column,
            "numeric": self.numeric,
            "matched": self.matched,
            "rows": self.rows,
        }


def _read_table(path: Path) -> tuple[Any, Any, bool]:
    """The table as read (numeric columns are numbers, for bands), the same table with every column as
    written (keys and shown values: ``0012`` stays ``0012``, as the log reader keeps it), and whether it
    is text. Both come from the reader every item table has."""
    from ..readers import read_table_file

    table, _, fmt = read_table_file(path)
    if fmt != "csv":
        return table, None, False
    written, _, _ = read_table_file(path, text=True)
    return table, written, True


def _headerless(path: Path, width: int) -> tuple[Any, Any]:
    """Re-read a text table whose first line is data (``item<TAB>label``, CSV quoting allowed): columns
    item, label, ...; as read (numbers for bands) and with every column as written."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    with open(path, encoding="utf-8", errors="replace") as f:
        first = f.readline()
    sep = "\t" if "\t" in first else ","
    names = (["item", "label"] + [f"column {i + 1}" for i in range(2, width)])[:width]

    def read(types: dict[str, Any]) -> Any:
        return pcsv.read_csv(
            str(path),
            read_options=pcsv.ReadOptions(column_names=names),
            parse_options=pcsv.ParseOptions(delimiter=sep),
            convert_options=pcsv.ConvertOptions(
                strings_can_be_null=True, null_values=[""], column_types=types
            ),
        )

    return read({}), read({n: pa.string() for n in names})


def _as_text(col: Any, written: Any = None) -> tuple[list[str | None], np.ndarray | None]:
    """Display strings of an Arrow column (``written``: the same column read as text, shown as written),
    and its float values when it is numeric."""
    import pyarrow as pa
    import pyarrow.compute as pc

    col = col.combine_chunks() if hasattr(col, "combine_chunks") else col
    if written is not None:
        x = None
        if pa.types.is_integer(col.type) or pa.types.is_floating(col.type):
            x = np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.float64)
        return pc.cast(written.combine_chunks(), pa.string()).to_pylist(), x
    if pa.types.is_integer(col.type) or pa.types.is_floating(col.type):
        x = np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.float64)
        if pa.types.is_integer(col.type):
            text = [None if v is None else str(v) for v in col.to_pylist()]
        else:
            text = [None if not np.isfinite(v) else f"{v:.4g}" for v in x.tolist()]
        return text, x
    if pa.types.is_boolean(col.type):
        return [None if v is None else ("yes" if v else "no") for v in col.to_pylist()], None
    return pc.cast(col, pa.string()).to_pylist(), None


def _bands(x: np.ndarray) -> list[str | None]:
    finite = x[np.isfinite(x)]
    edges = unique(np.quantile(finite, np.linspace(0, 1, _BANDS + 1)))
    out: list[str | None] = []
    for v in x.tolist():
        if not np.isfinite(v):
            out.append(None)
            continue
        b = min(int(np.searchsorted(edges, v, side="right")) - 1, len(edges) - 2)
        out.append(f"{edges[b]:.3g} – {edges[b + 1]:.3g}")
    return out


def _find_item_column(names: list[str], keycols: dict[str, list[str | None]], keys: Any, hints: list[str]):
    """The item column by name (``hints`` first), else the one whose values match the most keys."""
    lower = {n.casefold(): n for n in names}
    for h in [*hints, *ITEM_COLUMN_NAMES]:
        n = lower.get(h.casefold())
        if n is not None and sum(1 for v in keycols[n][:1000] if v in keys) > 0:
            return n
    hits = {n: sum(1 for v in keycols[n] if v is not None and v in keys) for n in names}
    best = max(names, key=lambda n: hits[n])
    return best if hits[best] > 0 else None


def _rows_of(item_keys: list[str | None], index: dict[str, int], n: int, where: str) -> list[int]:
    """The table row of each of the model's ``n`` items (-1 when the table has none); a key twice is an
    error."""
    rows = [-1] * n
    seen: dict[str, int] = {}
    for r, k in enumerate(item_keys):
        if k is None:
            continue
        if k in seen:
            raise InputError(
                f"item {k!r} appears twice in {where} (data rows {seen[k] + 1} and {r + 1}); "
                "give one row per item"
            )
        seen[k] = r
        i = index.get(k)
        if i is not None and rows[i] < 0:
            rows[i] = r
    return rows


def _values_and_groups(
    columns: list[str],
    text_cols: dict[str, list[str | None]],
    numeric: dict[str, np.ndarray],
    rows: list[int],
) -> tuple[dict[str, list[str | None]], dict[str, list[str | None]]]:
    """Each column's value per item, and its colour group: numeric columns (quantities, not ids) with many
    values in bands; a category by value, its most common values and "other" when it has more than
    :data:`MAX_GROUPS`; a column of nearly unique values none."""
    values: dict[str, list[str | None]] = {}
    groups: dict[str, list[str | None]] = {}
    for c in columns:
        col = text_cols[c]
        values[c] = [col[r] if r >= 0 else None for r in rows]
        given = [v for v in values[c] if v is not None]
        distinct = len(set(given))
        if distinct <= MAX_GROUPS:
            groups[c] = values[c]
        elif c in numeric:
            banded = _bands(numeric[c])
            groups[c] = [banded[r] if r >= 0 else None for r in rows]
        elif distinct <= len(given) // 2:  # values repeat: a category with many values
            groups[c] = top_groups(values[c])
        else:  # nearly every item its own value (names, titles): nothing to colour by
            groups[c] = [None] * len(rows)
    return values, groups


def read_item_attrs(
    path: str | os.PathLike | dict,
    keys: list[str],
    *,
    hints: list[str] | None = None,
    model: str = "the model",
    name_col: str | None = None,
) -> ItemAttrs:
    """Read an item table and align it with a model's keys (see the module docstring).

    Parameters
    ----------
    path : path or dict
        CSV / TSV with a header, headerless ``item<TAB>label`` lines, or Parquet; or the item table saved
        with the model (``emb.item_table``: ``{"item_col", "columns"}``).
    keys : list of str
        The model's keys, by id.
    hints : list of str, optional
        Column names to try first for the item column (the item column ``train --item-attrs`` recorded,
        ``<item_name>_id``).
    model : str
        The model's name, for messages.
    name_col : str, optional
        The column of display names (default: :func:`~likewise.space.names.choose_name_column`'s).

    Returns
    -------
    ItemAttrs

    Raises
    ------
    InputError
        The file is missing, empty, not a table, has no data rows or no column besides the items, repeats
        an item, or names none of the model's items (the message shows its values beside the model's keys).
    """
    if isinstance(path, dict):  # the item table saved with the model (train --item-attrs)
        import pyarrow as pa

        p, where, text = Path("item_table.json"), f"{model}'s item table", False
        table = pa.table(path["columns"])
        written = None
    else:
        p = Path(os.fspath(path))
        where = str(p)
        table, written, text = _read_table(p)
    index = {k: i for i, k in enumerate(keys)}
    # a typed space keys items "product:tent": a row keyed "tent" is that item
    for i, k in enumerate(keys):
        if ":" in k:
            index.setdefault(k.split(":", 1)[1], i)
    names = list(table.column_names)
    if text and names and names[0] in index:  # the first line is data: item<TAB>label lines
        table, written = _headerless(p, len(names))
        names = list(table.column_names)
    if table.num_rows == 0:
        raise InputError(f"item attributes {where!r} have a header ({', '.join(names)}) but no data rows")
    if len(names) < 2:
        raise InputError(
            f"item attributes {where!r} have one column ({names[0]!r}): give the item column and at least "
            "one attribute (a name, a department, ...)"
        )
    text_cols: dict[str, list[str | None]] = {}
    numeric: dict[str, np.ndarray] = {}
    for n in names:
        text_cols[n], x = _as_text(table.column(n), None if written is None else written.column(n))
        if x is not None:
            numeric[n] = x
    item_col = _find_item_column(names, text_cols, index, list(hints or ()))
    ids = {n for n in names if id_like(n, numeric.get(n))}
    numeric = {n: x for n, x in numeric.items() if n not in ids}  # an id is a name, not a quantity
    if item_col is None:
        sample = ", ".join(repr(v) for v in text_cols[names[0]][:3])
        raise InputError(
            f"item attributes {where!r} name none of the {len(keys)} items of {model}: no column holds "
            f"its keys (its first column {names[0]!r} holds {sample}; {model}'s keys look like "
            f"{', '.join(repr(k) for k in keys[:3])})"
        )
    rows = _rows_of(text_cols[item_col], index, len(keys), f"column {item_col!r} of {where!r}")
    matched = sum(1 for r in rows if r >= 0)
    columns = [n for n in names if n != item_col]
    values, groups = _values_and_groups(columns, text_cols, numeric, rows)
    saved = path.get("name_col") if isinstance(path, dict) else None  # chosen by train --name-col
    name_col = choose_name_column(columns, name_col or (saved if saved in columns else None), where)
    if name_col is not None:  # a name labels a point; it is no colour (its values are nearly all different)
        groups[name_col] = [None] * len(rows)
    colour = _default_colour(columns, values, groups, name_col, numeric, ids)
    return ItemAttrs(
        source=where,
        item_column=item_col,
        columns=columns,
        values=values,
        groups=groups,
        colourable=[c for c in columns if any(g is not None for g in groups[c])],
        name_column=name_col,
        colour_column=colour,
        numeric=[c for c in columns if c in numeric],
        matched=matched,
        rows=table.num_rows,
    )


def _default_colour(
    columns: list[str],
    values: dict[str, list[str | None]],
    groups: dict[str, list[str | None]],
    name_col: str | None,
    numeric: dict[str, np.ndarray],
    ids: set[str],
) -> str:
    """The column the page colours by first: the first category (not the name, not a number, not an id)
    with 2 to :data:`MAX_GROUPS` values, else the first column with colour groups, else the first column
    that is not the name."""
    others = [c for c in columns if c != name_col] or columns

    def distinct(c: str) -> int:
        return len({v for v in values[c] if v is not None})

    for c in others:
        if c not in numeric and c not in ids and 2 <= distinct(c) <= MAX_GROUPS:
            return c
    return next((c for c in others if any(g is not None for g in groups[c])), others[0])
