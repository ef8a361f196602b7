"""Typed event logs: a type for every row, so products, campaigns and articles train in one space.

Two layouts of the same information are read (by the log reader, :mod:`likewise.readers.typed_log`):

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

from ..readers.typed_log import ItemTyping, parse_type_map  # applied by the log reader to every batch

__all__ = ["ItemTyping", "parse_type_map"]
