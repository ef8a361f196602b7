"""Typed event logs: a type for every row, so products, campaigns and articles train in one space.

Two layouts of the same information are read (by the log reader, :mod:`likewise.readers.typed`):

* a **type column** (``type_col="event"``) beside the item column: each row's item gets the type the
  column names, optionally renamed by ``type_map`` (``{"view": "product", "purchase": "product",
  "campaign_open": "campaign", "article_read": "article"}``; with a map, a value it does not name is an
  error, so a new event kind is never trained by accident);
* **one column per kind** (``type_cols={"product": "product_id", "campaign": "campaign_id"}``): each
  row fills exactly one of them, and that column's type is the row's.

Either way the row's item key becomes ``type:item`` (``campaign:spring-sale``), and the type is kept apart
from the key when the space is built (:class:`likewise.space.itemtypes.ItemTypes`).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import InputError
from ..readers.typed import ItemTyping  # applied by the log reader to every batch
from ..space.itemtypes import check_type_name

__all__ = ["ItemTyping", "parse_type_map"]


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
