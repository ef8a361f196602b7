"""Generated typed event logs with planted answers: a shop's events, and reading sessions of articles.

:func:`shop_events` extends the generated shop of :func:`likewise.data.datasets.retail_orders` into an
event log of one shop: product views and purchases, campaign opens and article reads, in the shop's
sessions. Every campaign promotes one department, every article is about one product type (so it
belongs to an aisle and a department), and a session opens the campaigns and reads the articles of
the department it shops in. Customers keep the retail generator's hidden taste, so a campaign's
responders are mostly customers of its department: the planted answers to "which campaign fits this
customer", "which products go with this campaign" and "who looks like its responders".

:func:`content_sessions` is a reading site alone: articles in planted topics, each topic a series
(article ``j`` is often read right before ``j + 1``), readers who keep to one or two topics.

:func:`product_attributes` gives the catalogue's attributes (category, brand, price, title) for the
cold-start tests and benchmark: a product's title names its type, and its category its department.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._arrays import unique
from .._fileio import atomic_folder, write_text
from ..errors import InputError
from .datasets import RETAIL_DEPARTMENTS, RetailData, retail_orders

__all__ = [
    "CONTENT_TOPICS",
    "ContentData",
    "SHOP_TYPE_MAP",
    "ShopEvents",
    "content_sessions",
    "product_attributes",
    "shop_events",
    "write_content",
    "write_shop_events",
]

#: The ``--type-map`` of the shop's ``event`` column: event kind -> item type.
SHOP_TYPE_MAP = {
    "view": "product",
    "purchase": "product",
    "campaign_open": "campaign",
    "article_read": "article",
}
_SEASONS = ("spring", "summer", "autumn", "winter")

#: Topics of :func:`content_sessions`, each with the words its titles draw from.
CONTENT_TOPICS: dict[str, list[str]] = {
    "camping": ["tent", "trail", "stove", "hike", "camp", "pack", "night", "fire"],
    "cooking": ["recipe", "pan", "bread", "sauce", "oven", "spice", "soup", "knife"],
    "gardening": ["soil", "seed", "bloom", "prune", "compost", "bulb", "lawn", "herb"],
    "parenting": ["baby", "sleep", "nappy", "toddler", "feeding", "nursery", "play", "routine"],
    "pets": ["dog", "cat", "walk", "litter", "training", "vet", "treat", "fish"],
    "skincare": ["serum", "cleanser", "spf", "routine", "acne", "moisture", "mask", "glow"],
    "audio": ["speaker", "vinyl", "headphone", "amp", "bass", "podcast", "mix", "stereo"],
    "productivity": ["planner", "desk", "focus", "notes", "habit", "inbox", "pen", "goal"],
}


def _slug(text: str) -> str:
    return text.replace(" ", "-")


def product_attributes(data: RetailData, seed: int = 0) -> dict[str, list[Any]]:
    """The catalogue's attributes, one row per product: the table ``--item-attrs`` reads.

    Columns: ``product_id``; ``category`` (the department); ``brand``; ``price`` (a type's base price
    times a per-product factor, so price bands say little alone); ``title`` (brand, an adjective and the
    product type, e.g. ``"Alder lightweight tent"``). The aisle is not a column: it is what the
    cold-start benchmark asks a placed product to find.
    """
    rng = np.random.default_rng(seed + 17)
    nouns = [n for d in RETAIL_DEPARTMENTS.values() for a in d.values() for n in a]
    base = dict(zip(nouns, np.exp(rng.normal(3.5, 0.8, len(nouns))).tolist(), strict=True))
    adjectives = ("classic", "lightweight", "compact", "deluxe", "essential", "pro", "everyday", "premium")
    brands, titles, prices = [], [], []
    for name in data.product_name:
        brand, _, noun = name.partition(" ")
        brands.append(brand)
        titles.append(f"{brand} {adjectives[int(rng.integers(len(adjectives)))]} {noun}")
        prices.append(round(float(base[noun] * np.exp(rng.normal(0, 0.3))), 2))
    return {
        "product_id": list(data.products),
        "category": list(data.department),
        "brand": brands,
        "price": prices,
        "title": titles,
    }


@dataclass(frozen=True)
class ShopEvents:
    """A generated event log of one shop and the answers planted in it.

    Attributes
    ----------
    session_id, customer, timestamp : ndarray of int64
        Per event: its session, its customer (index into ``retail.customers``), its time.
    item : list of str
        Per event: the item's key (a product, campaign or article; untyped, as a log would hold it).
    event : list of str
        Per event: ``view``, ``purchase``, ``campaign_open`` or ``article_read``.
    retail : RetailData
        The shop the purchases come from (products, departments, aisles, customers and their taste).
    campaigns, campaign_department : list of str
        Campaign keys and the department each promotes.
    articles, article_aisle, article_department : list of str
        Article keys and what each is about.
    """

    session_id: np.ndarray
    customer: np.ndarray
    timestamp: np.ndarray
    item: list[str]
    event: list[str]
    retail: RetailData
    campaigns: list[str]
    campaign_department: list[str]
    articles: list[str]
    article_aisle: list[str]
    article_department: list[str]

    def __len__(self) -> int:
        return len(self.item)


def shop_events(
    n_customers: int = 2_000,
    n_products: int = 600,
    *,
    campaigns_per_department: int = 2,
    campaign_rate: float = 0.35,
    article_rate: float = 0.4,
    view_rate: float = 0.5,
    noise: float = 0.1,
    seed: int = 0,
) -> ShopEvents:
    """Generate a shop's typed event log (see the module docstring).

    Parameters
    ----------
    n_customers, n_products : int
        As in :func:`likewise.data.datasets.retail_orders`.
    campaigns_per_department : int
        Campaigns promoting each of the 8 departments (named ``spring-outdoor``, ``summer-outdoor``, ...).
    campaign_rate, article_rate : float
        Share of sessions that open a campaign / read articles.
    view_rate : float
        Per purchase, the chance of viewing another product of its aisle in the session.
    noise : float
        Share of campaign opens and article reads drawn from the whole catalogue instead.
    seed : int
        Seed of the generator.

    Returns
    -------
    ShopEvents
        Events sorted by (session, time, kind).
    """
    for name, v in (("campaign_rate", campaign_rate), ("article_rate", article_rate),
                    ("view_rate", view_rate), ("noise", noise)):  # fmt: skip
        if not 0 <= v <= 1:
            raise InputError(f"{name} == {v!r}, must be in [0, 1]")
    if not 1 <= campaigns_per_department <= len(_SEASONS):
        raise InputError(f"campaigns_per_department == {campaigns_per_department!r}, must be in 1..4")
    data = retail_orders(n_customers, n_products, seed=seed)
    rng = np.random.default_rng(seed + 1)
    depts = list(RETAIL_DEPARTMENTS)
    dept_index = {d: i for i, d in enumerate(depts)}
    aisle_names = [a for d in depts for a in RETAIL_DEPARTMENTS[d]]
    campaigns = [f"{s}-{d}" for d in depts for s in _SEASONS[:campaigns_per_department]]
    campaign_dept = [d for d in depts for _ in range(campaigns_per_department)]
    nouns = [(d, a, n) for d in depts for a in RETAIL_DEPARTMENTS[d] for n in RETAIL_DEPARTMENTS[d][a]]
    articles = [f"{_slug(n)}-guide" for _, _, n in nouns]
    article_aisle = [a for _, a, _ in nouns]
    article_dept = [d for d, _, _ in nouns]
    noun_of_product = [name.partition(" ")[2] for name in data.product_name]
    article_of_noun = {n: i for i, (_, _, n) in enumerate(nouns)}
    prod_aisle = np.array([aisle_names.index(a) for a in data.aisle])
    prod_dept = np.array([dept_index[d] for d in data.department])
    by_aisle = [np.flatnonzero(prod_aisle == a) for a in range(len(aisle_names))]

    # one row per purchase line, in session order
    order = np.lexsort((data.product_id, data.timestamp, data.session))
    sess, cust = data.session[order], data.customer_id[order]
    prod, when = data.product_id[order], data.timestamp[order]
    rows: dict[str, list] = {"session": [sess], "customer": [cust], "time": [when], "kind": [], "item": []}
    rows["kind"].append(np.full(len(prod), 1))
    rows["item"].append(prod)
    # views: another product of the purchase's aisle, just before it
    v = rng.random(len(prod)) < view_rate
    viewed = np.array([rng.choice(by_aisle[a]) for a in prod_aisle[prod[v]]], dtype=np.int64)
    rows["session"].append(sess[v])
    rows["customer"].append(cust[v])
    rows["time"].append(when[v] - 60)  # noqa: E702
    rows["kind"].append(np.full(int(v.sum()), 0))
    rows["item"].append(viewed)  # noqa: E702
    # per session: its first purchase names its department, aisle and product type
    first = np.flatnonzero(np.r_[True, sess[1:] != sess[:-1]])
    s_dept, s_prod = prod_dept[prod[first]], prod[first]
    n_s = len(first)
    opens = rng.random(n_s) < campaign_rate
    pick = rng.integers(0, campaigns_per_department, n_s)
    camp = s_dept * campaigns_per_department + pick
    wild = rng.random(n_s) < noise
    camp[wild] = rng.integers(0, len(campaigns), int(wild.sum()))
    rows["session"].append(sess[first][opens])
    rows["customer"].append(cust[first][opens])  # noqa: E702
    rows["time"].append(when[first][opens] - 300)
    rows["kind"].append(np.full(int(opens.sum()), 2))  # noqa: E702
    rows["item"].append(camp[opens])
    reads = rng.random(n_s) < article_rate
    art = np.array([article_of_noun[noun_of_product[p]] for p in s_prod.tolist()], dtype=np.int64)
    same_aisle = rng.random(n_s) < 0.4  # another article of the aisle instead of the product's own
    aisle_art = prod_aisle[s_prod] * 5 + rng.integers(0, 5, n_s)
    art = np.where(same_aisle, aisle_art, art)
    wild = rng.random(n_s) < noise
    art[wild] = rng.integers(0, len(articles), int(wild.sum()))
    rows["session"].append(sess[first][reads])
    rows["customer"].append(cust[first][reads])  # noqa: E702
    rows["time"].append(when[first][reads] - 200)
    rows["kind"].append(np.full(int(reads.sum()), 3))  # noqa: E702
    rows["item"].append(art[reads])

    session = np.concatenate(rows["session"]).astype(np.int64)
    kind = np.concatenate(rows["kind"])
    item = np.concatenate(rows["item"])
    time = np.concatenate(rows["time"]).astype(np.int64)
    customer = np.concatenate(rows["customer"]).astype(np.int64)
    o = np.lexsort((item, kind, time, session))
    names = {0: data.products, 1: data.products, 2: campaigns, 3: articles}
    kinds = ("view", "purchase", "campaign_open", "article_read")
    return ShopEvents(
        session_id=session[o] + 1,
        customer=customer[o],
        timestamp=time[o],
        item=[names[k][i] for k, i in zip(kind[o].tolist(), item[o].tolist(), strict=True)],
        event=[kinds[k] for k in kind[o].tolist()],
        retail=data,
        campaigns=campaigns,
        campaign_department=campaign_dept,
        articles=articles,
        article_aisle=article_aisle,
        article_department=article_dept,
    )


def _csv(table: dict[str, list], path: Path) -> None:
    import pyarrow as pa
    import pyarrow.csv as pcsv

    pcsv.write_csv(pa.table(table), path)


def write_shop_events(data: ShopEvents, out_dir: str | os.PathLike) -> dict[str, Any]:
    """Write a :class:`ShopEvents` to a new folder, atomically.

    Files: ``events.csv`` (``session_id, customer_id, item_id, event, timestamp``, ISO 8601 times),
    ``items.csv`` (the product attributes of :func:`product_attributes`), ``campaigns.csv``
    (``campaign_id, department``), ``articles.csv`` (``article_id, aisle, department``),
    ``products.csv`` (``product_id, department, aisle``), ``customers.csv`` (``customer_id, taste``) and
    ``truth.json``.

    Returns
    -------
    dict
        A summary: path, events per kind, customers, products, campaigns, articles, files.
    """
    import pyarrow as pa
    import pyarrow.csv as pcsv

    target = Path(out_dir)
    if target.exists():
        raise InputError(f"{str(target)!r} already exists; choose a new folder for the data set")
    r = data.retail
    with atomic_folder(target) as tmp:
        events = pa.table(
            {
                "session_id": pa.array(data.session_id),
                "customer_id": pa.array(
                    np.asarray(r.customers, dtype=object)[data.customer], type=pa.string()
                ),
                "item_id": pa.array(data.item, type=pa.string()),
                "event": pa.array(data.event, type=pa.string()),
                "timestamp": pa.array(data.timestamp.astype("datetime64[s]")),
            }
        )
        pcsv.write_csv(events, tmp / "events.csv")
        _csv(product_attributes(r), tmp / "items.csv")
        _csv({"campaign_id": data.campaigns, "department": data.campaign_department}, tmp / "campaigns.csv")
        _csv(
            {"article_id": data.articles, "aisle": data.article_aisle, "department": data.article_department},
            tmp / "articles.csv",
        )
        _csv({"product_id": r.products, "department": r.department, "aisle": r.aisle}, tmp / "products.csv")
        tastes = [r.departments[t] for t in r.taste.tolist()]
        _csv({"customer_id": r.customers, "taste": tastes}, tmp / "customers.csv")
        counts = {
            str(k): int(n)
            for k, n in zip(*np.unique(np.asarray(data.event), return_counts=True), strict=True)
        }
        summary = {
            "events": len(data),
            "by_event": counts,
            "sessions": int(len(unique(data.session_id))),
            "customers": len(r.customers),
            "products": len(r.products),
            "campaigns": len(data.campaigns),
            "articles": len(data.articles),
            "type_map": ",".join(f"{k}={v}" for k, v in SHOP_TYPE_MAP.items()),
            "files": [
                "events.csv",
                "items.csv",
                "campaigns.csv",
                "articles.csv",
                "products.csv",
                "customers.csv",
                "truth.json",
            ],  # fmt: skip
        }
        write_text(tmp / "truth.json", json.dumps(summary, indent=2) + "\n")
    return {"path": str(target), **summary}


# --------------------------------------------------------------------------------------- content


@dataclass(frozen=True)
class ContentData:
    """Reading sessions over articles in planted topics.

    Attributes
    ----------
    session_id, reader, timestamp : ndarray of int64
        Per read.
    article : ndarray of int64
        Per read, an index into ``articles``.
    articles, topic, titles : list of str
        Article keys (``camping-03``), their topic and a title drawn from the topic's words.
    readers : list of str
        Reader keys (``R00012``).
    favourite : ndarray of int64
        Per reader, the index (into ``topics``) of their main topic.
    topics : list of str
    """

    session_id: np.ndarray
    reader: np.ndarray
    timestamp: np.ndarray
    article: np.ndarray
    articles: list[str]
    topic: list[str]
    titles: list[str]
    readers: list[str]
    favourite: np.ndarray
    topics: list[str]


def content_sessions(
    n_readers: int = 1_000,
    *,
    n_topics: int = 8,
    articles_per_topic: int = 15,
    sessions_per_reader: float = 4.0,
    series_rate: float = 0.5,
    noise: float = 0.1,
    seed: int = 0,
) -> ContentData:
    """Generate reading sessions (see the module docstring).

    Each reader has a main topic (80 % of sessions) and a second one. A session of 3-8 reads stays in
    its topic; each next read is the next article of the topic's series with probability
    ``series_rate`` (so ``camping-03`` is read right after ``camping-02``), another of the topic
    otherwise, and any article with probability ``noise``.

    Returns
    -------
    ContentData
        Reads sorted by (session, time).
    """
    if not 1 <= n_topics <= len(CONTENT_TOPICS):
        raise InputError(f"n_topics == {n_topics!r}, must be in 1..{len(CONTENT_TOPICS)}")
    if articles_per_topic < 2 or n_readers < 1:
        raise InputError(
            f"articles_per_topic == {articles_per_topic!r} must be >= 2 and n_readers == {n_readers!r} >= 1"
        )
    rng = np.random.default_rng(seed)
    topics = list(CONTENT_TOPICS)[:n_topics]
    n_art = n_topics * articles_per_topic
    articles = [f"{t}-{j:02d}" for t in topics for j in range(articles_per_topic)]
    topic_of = np.repeat(np.arange(n_topics), articles_per_topic)
    titles = [
        " ".join(rng.choice(CONTENT_TOPICS[topics[t]], 3, replace=False).tolist()) for t in topic_of.tolist()
    ]
    fav = rng.integers(0, n_topics, n_readers)
    second = (fav + rng.integers(1, max(n_topics, 2), n_readers)) % n_topics
    n_sess = 1 + rng.poisson(sessions_per_reader - 1, n_readers)
    reader = np.repeat(np.arange(n_readers), n_sess)
    s_topic = np.where(rng.random(len(reader)) < 0.8, fav[reader], second[reader])
    sizes = rng.integers(3, 9, len(reader))
    sess_rows, art_rows = [], []
    for s, (t, size) in enumerate(zip(s_topic.tolist(), sizes.tolist(), strict=True)):
        j = int(rng.integers(articles_per_topic))
        seq = [t * articles_per_topic + j]
        for _ in range(size - 1):
            u = rng.random()
            if u < noise:
                nxt = int(rng.integers(n_art))
            elif u < noise + series_rate and j + 1 < articles_per_topic:
                j += 1
                nxt = t * articles_per_topic + j
            else:
                j = int(rng.integers(articles_per_topic))
                nxt = t * articles_per_topic + j
            seq.append(nxt)
        sess_rows += [s] * len(seq)
        art_rows += seq
    session = np.asarray(sess_rows, dtype=np.int64)
    start = np.datetime64("2026-01-01", "s").astype(np.int64) + rng.integers(0, 90 * 86400, len(reader))
    within = np.arange(len(session)) - np.searchsorted(session, session)
    return ContentData(
        session_id=session + 1,
        reader=reader[session],
        timestamp=start[session] + 120 * within,
        article=np.asarray(art_rows, dtype=np.int64),
        articles=articles,
        topic=[topics[t] for t in topic_of.tolist()],
        titles=titles,
        readers=[f"R{r:05d}" for r in range(n_readers)],
        favourite=fav.astype(np.int64),
        topics=topics,
    )


def write_content(data: ContentData, out_dir: str | os.PathLike) -> dict[str, Any]:
    """Write a :class:`ContentData` to a new folder, atomically.

    Files: ``reads.csv`` (``session_id, reader_id, article_id, timestamp``), ``articles.csv``
    (``article_id, title`` -- the attribute table -- and ``topic``, the planted answer),
    ``readers.csv`` (``reader_id, favourite``) and ``truth.json``.
    """
    import pyarrow as pa
    import pyarrow.csv as pcsv

    target = Path(out_dir)
    if target.exists():
        raise InputError(f"{str(target)!r} already exists; choose a new folder for the data set")
    with atomic_folder(target) as tmp:
        reads = pa.table(
            {
                "session_id": pa.array(data.session_id),
                "reader_id": pa.array(np.asarray(data.readers, dtype=object)[data.reader], type=pa.string()),
                "article_id": pa.array(
                    np.asarray(data.articles, dtype=object)[data.article], type=pa.string()
                ),
                "timestamp": pa.array(data.timestamp.astype("datetime64[s]")),
            }
        )
        pcsv.write_csv(reads, tmp / "reads.csv")
        _csv({"article_id": data.articles, "title": data.titles, "topic": data.topic}, tmp / "articles.csv")
        fav = [data.topics[t] for t in data.favourite.tolist()]
        _csv({"reader_id": data.readers, "favourite": fav}, tmp / "readers.csv")
        summary = {
            "reads": len(data.article),
            "sessions": int(len(unique(data.session_id))),
            "readers": len(data.readers),
            "articles": len(data.articles),
            "topics": data.topics,
            "files": ["reads.csv", "articles.csv", "readers.csv", "truth.json"],
        }
        write_text(tmp / "truth.json", json.dumps(summary, indent=2) + "\n")
    return {"path": str(target), **summary}
