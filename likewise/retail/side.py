"""Side information: item attributes as extra tokens of the baskets, so attributes get vectors too.

Meta-Prod2Vec (Vasile et al. 2016) trains an item's category, brand, ... as context of the item and of
the items bought with it; Airbnb's listing embeddings do the same with listing attributes. Here that is
done on the data, not in the kernel: an attribute table keyed by item (``category``, ``brand``,
``price``, ``title``, ...) turns each item into a few *tokens* (``attr:category=outdoor``,
``attr:brand=acme``, ``attr:price=band3of5``, ``attr:title=dome``), and every basket (or session) that
holds the item holds its tokens too, so the unchanged SGNS kernel trains

* item -> its own attributes and those of the items bought with it,
* attribute -> the items bought with items that have it, and attribute -> attribute.

The tokens are typed ``attr`` and hidden (:mod:`likewise.space.itemtypes`): they live in the space but a
query returns them only when asked for ``types=["attr"]``. A product with no orders yet is then placed
from its attributes alone (:mod:`likewise.apps.coldstart`).

How a column becomes tokens (decided on the table, recorded in the space as ``meta["attributes"]`` so a
new item is tokenised the same way):

``bands``
    A numeric column: cut at its quintiles (over the table's items) into ``band1of5`` .. ``band5of5``.
``words``
    A text column where some value holds a space (a title): one token per word, case-folded, words
    being runs of letters and digits.
``list``
    A list column (Parquet ``list<string>``, tags): one token per element, case-folded; given as text
    (``place --attrs tags=a,b``) the elements are split at commas.
``value``
    Any other column (text, dates, UTF-8 bytes): one token for the whole value, case-folded
    (``category=outdoor``). A column of structs or maps, or bytes that are not UTF-8, is an error naming
    the column and its type; a column with no value at all gives no token.

Nulls give no token. In basket mode a basket's tokens are de-duplicated (four outdoor products add one
``category=outdoor``); in sequence mode each item's tokens follow it.
"""

from __future__ import annotations

from ..readers.attrs import ItemAttributes, expand_with_tokens, read_item_attributes, side_key, tokenise

__all__ = [
    "ItemAttributes",
    "expand_with_tokens",
    "read_item_attributes",
    "side_key",
    "tokenise",
]
