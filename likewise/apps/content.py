"""Content recommendations: what to read next after an article, after a reading list, or for a reader.

Sessions of article views train article vectors as sessions of products train product vectors
(``likewise train reads.csv --basket-col session_id --item-col article_id --sessions ...``, or the
articles of a typed event log). "Read next" is then basket completion restricted to articles:

* :func:`read_next` -- after one article, or after a reader's recent articles (most recent last): the
  articles with the highest affinity to them (skip-gram's ``vector · context`` plus popularity, the
  basket rule of :meth:`~likewise.Embeddings.recommend`), those already read left out;
* :func:`read_next_for` -- for a reader of the customer table: the articles with the highest affinity
  to the reader's vector (the mean of everything they read, with recency decay when trained with
  ``--half-life-days``), those read left out.

In a typed space the answers are articles (type ``article``, or the type of the articles asked about);
in a space of articles alone, any item.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import InputError
from ..retail.queries import complete_basket, for_customer
from ..space.embeddings import Embeddings
from ..space.results import Neighbours

__all__ = ["ARTICLE", "read_next", "read_next_for"]

#: The type name articles have by default.
ARTICLE = "article"


def _article_type(emb: Embeddings, first: str | int | None, article_type: str | None) -> str | None:
    if emb.types is None:
        if article_type is not None:
            raise InputError(f"article_type == {article_type!r}, but this space has no item types")
        return None
    if article_type is not None:
        return emb.types.check(article_type)[0]
    if first is not None:
        return emb.type_of(first)
    if ARTICLE not in emb.types.names:
        raise InputError(f"this space has no type {ARTICLE!r}; name the articles' type (article_type=)")
    return ARTICLE


def read_next(
    emb: Embeddings,
    articles: str | int | Sequence[str | int],
    k: int = 10,
    *,
    article_type: str | None = None,
    on_unknown: str = "raise",
) -> Neighbours:
    """Articles to read next after one article, or after a list of recent ones.

    Parameters
    ----------
    articles : str, int, or sequence of them
        One article, or the reader's recent articles (each proposes what goes with it; see
        :meth:`~likewise.Embeddings.recommend` for how the basket rule combines them).
    k : int
        Articles wanted.
    article_type : str, optional
        The type to answer with in a typed space; default: the type of the (first) article given.
    on_unknown : {"raise", "skip"}
        ``"skip"`` ignores articles not in the space.

    Returns
    -------
    Neighbours
        1-D, best first; the articles given are never returned.
    """
    given = [articles] if isinstance(articles, str | int) else list(articles)
    if not given:
        raise InputError("articles is empty: give the article just read, or the recent ones")
    first = next((a for a in given if a in emb), None)
    types = _article_type(emb, first, article_type)
    return complete_basket(emb, given, k, on_unknown=on_unknown, types=types)  # type: ignore[arg-type]


def read_next_for(
    emb: Embeddings,
    reader: str | int,
    k: int = 10,
    *,
    article_type: str | None = None,
    include_read: bool = False,
) -> Neighbours:
    """Articles for a reader of the customer table, those already read left out.

    Parameters
    ----------
    reader : str or int
        A customer (reader) key or row.
    article_type : str, optional
        The articles' type in a typed space (default ``"article"``).
    include_read : bool
        Also return articles the reader has read.
    """
    types = _article_type(emb, None, article_type)
    return for_customer(emb, reader, k, exclude_bought=not include_read, types=types)
