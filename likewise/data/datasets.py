"""Small generated data sets with known structure: the seed demo and planted groups.

Each generator is seeded and returns plain Python lists, so tests can assert against the structure
that was planted (the model never sees the labels).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._arrays import unique
from .._fileio import atomic_folder, write_text
from ..errors import InputError

__all__ = [
    "DEMO_CATALOGUE",
    "RETAIL_COMPLEMENTS",
    "RETAIL_DEPARTMENTS",
    "RetailData",
    "demo_baskets",
    "demo_labels",
    "planted_baskets",
    "retail_orders",
    "ring_baskets",
    "write_retail",
]

DEMO_CATALOGUE: dict[str, list[str]] = {
    "outdoor": ["tent", "sleeping bag", "headlamp", "trail shoes", "rain jacket"],
    "kitchen": ["coffee mug", "kettle", "tea towels", "cutting board", "candle"],
    "office": ["notebook", "desk lamp", "pen set", "planner", "laptop sleeve"],
}


def demo_labels() -> dict[str, str]:
    """Product -> department of the demo catalogue."""
    return {p: dept for dept, products in DEMO_CATALOGUE.items() for p in products}


def demo_baskets(n: int = 400, seed: int = 0, extra_rate: float = 0.2) -> list[list[str]]:
    """The seed demo's baskets: 3 products of one department, one in five with a random extra item.

    Parameters
    ----------
    n : int
        Number of baskets.
    seed : int
        Seed of the generator.
    extra_rate : float
        Share of baskets that get one extra product drawn from the whole catalogue.
    """
    if n < 1:
        raise InputError(f"n == {n}, must be >= 1")
    rng = np.random.default_rng(seed)
    depts = list(DEMO_CATALOGUE)
    everything = [p for d in depts for p in DEMO_CATALOGUE[d]]
    baskets = []
    for _ in range(n):
        products = DEMO_CATALOGUE[depts[rng.integers(len(depts))]]
        basket = [products[i] for i in rng.choice(len(products), size=3, replace=False)]
        if rng.random() < extra_rate:
            extra = everything[rng.integers(len(everything))]
            if extra not in basket:
                basket.append(extra)
        baskets.append(basket)
    return baskets


def ring_baskets(
    n_items: int = 2000,
    n_baskets: int = 4000,
    width: int = 10,
    basket_size: tuple[int, int] = (3, 8),
    seed: int = 0,
) -> list[list[str]]:
    """Baskets of neighbours on a ring: smooth structure seen only sparsely, so counts must generalise.

    Items ``i0 .. i{n_items-1}`` sit on a circle. Each basket picks a centre uniformly and then
    ``basket_size`` positions within ``width`` of it (duplicates merged). With few baskets per item,
    most pairs of neighbours are never bought together, so raw co-occurrence counts know little about
    them while the geometry (what is alike) is learnable: the data set on which a model must beat
    co-counts by generalising, where :func:`planted_baskets` is won by counting.

    Returns
    -------
    list of list of str
        Baskets with at least two distinct items.
    """
    for name, v, lo in (("n_items", n_items, 2), ("n_baskets", n_baskets, 1), ("width", width, 1)):
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise InputError(f"{name} == {v!r}, must be an integer >= {lo}")
    lo_size, hi_size = basket_size
    if not 2 <= lo_size <= hi_size:
        raise InputError(f"basket_size == {basket_size!r}, must be (lo, hi) with 2 <= lo <= hi")
    rng = np.random.default_rng(seed)
    centres = rng.integers(0, n_items, size=n_baskets)
    sizes = rng.integers(lo_size, hi_size + 1, size=n_baskets)
    offs = rng.integers(-width, width + 1, size=int(sizes.sum()))
    pos = (np.repeat(centres, sizes) + offs) % n_items
    cuts = np.cumsum(sizes)[:-1]
    out = [[f"i{p}" for p in unique(part)] for part in np.split(pos, cuts)]
    return [b for b in out if len(b) >= 2]


def planted_baskets(
    n_groups: int = 50,
    group_size: int = 20,
    n_baskets: int = 20_000,
    basket_size: tuple[int, int] = (3, 8),
    noise: float = 0.1,
    zipf: float = 0.0,
    seed: int = 0,
) -> tuple[list[list[str]], dict[str, str]]:
    """Baskets drawn from planted groups, with noise: a data set whose right answer is known.

    Each basket picks one group, then ``basket_size`` items from it (uniformly, or Zipf-weighted
    inside the group when ``zipf > 0``); each item is replaced by a random item of the whole catalogue
    with probability ``noise``.

    Parameters
    ----------
    n_groups, group_size : int
        The catalogue is ``n_groups * group_size`` items named ``g{group}_i{item}``.
    n_baskets : int
        Number of baskets.
    basket_size : (int, int)
        Inclusive range of basket sizes.
    noise : float
        Probability that an item is replaced by a random one.
    zipf : float
        Popularity skew inside and across groups (0 = uniform).
    seed : int
        Seed of the generator.

    Returns
    -------
    baskets : list of list of str
    labels : dict
        Item key -> group label (``g{group}``).
    """
    lo, hi = basket_size
    if not (1 <= lo <= hi <= group_size):
        raise InputError(f"basket_size == {basket_size!r}, must satisfy 1 <= lo <= hi <= group_size")
    if not 0 <= noise <= 1:
        raise InputError(f"noise == {noise!r}, must be in [0, 1]")
    rng = np.random.default_rng(seed)
    n_items = n_groups * group_size
    names = [f"g{g}_i{i}" for g in range(n_groups) for i in range(group_size)]
    labels = {n: n.split("_")[0] for n in names}
    w_in = 1.0 / np.arange(1, group_size + 1) ** zipf
    w_group = 1.0 / np.arange(1, n_groups + 1) ** zipf
    groups = rng.choice(n_groups, size=n_baskets, p=w_group / w_group.sum())
    sizes = rng.integers(lo, hi + 1, size=n_baskets)
    # Weighted sampling without replacement for all baskets at once (Efraimidis-Spirakis keys):
    # the `size` smallest -log(u)/w of each row are that basket's members.
    keys = -np.log(rng.random((n_baskets, group_size))) / w_in
    members = np.argsort(keys, axis=1)[:, :hi] + (groups * group_size)[:, None]
    swap = rng.random(members.shape) < noise
    members[swap] = rng.integers(0, n_items, size=int(swap.sum()))
    baskets = []
    for row, s in zip(members.tolist(), sizes.tolist(), strict=True):
        baskets.append(list(dict.fromkeys(names[j] for j in row[:s])))
    return baskets, labels


# ------------------------------------------------------------------------------------------- retail

#: Departments -> aisles -> product nouns of the generated retail catalogue (names stay readable).
RETAIL_DEPARTMENTS: dict[str, dict[str, list[str]]] = {
    "outdoor": {
        "camping": ["tent", "sleeping bag", "camp stove", "lantern", "sleeping mat"],
        "hiking": ["trail shoes", "daypack", "trekking poles", "water bottle", "headlamp"],
        "cycling": ["bike helmet", "bike light", "bike lock", "cycling gloves", "pump"],
    },
    "kitchen": {
        "cookware": ["frying pan", "saucepan", "stock pot", "wok", "casserole"],
        "tableware": ["dinner plate", "bowl", "coffee mug", "wine glass", "cutlery set"],
        "baking": ["mixing bowl", "baking tray", "whisk", "cake tin", "rolling pin"],
    },
    "office": {
        "paper": ["notebook", "planner", "sticky notes", "printer paper", "envelopes"],
        "writing": ["pen set", "pencils", "highlighters", "fountain pen", "ink"],
        "desk": ["desk lamp", "laptop stand", "monitor arm", "desk mat", "cable tray"],
    },
    "garden": {
        "plants": ["seed packet", "potting soil", "plant pot", "fertiliser", "bulbs"],
        "tools": ["trowel", "pruners", "rake", "garden gloves", "hose"],
        "furniture": ["parasol", "garden chair", "cushion", "bench", "lantern string"],
    },
    "baby": {
        "feeding": ["baby bottle", "bib", "high chair", "sippy cup", "baby spoon"],
        "nappies": ["nappies", "wipes", "changing mat", "nappy cream", "nappy bags"],
        "nursery": ["cot sheet", "night light", "baby monitor", "mobile", "swaddle"],
    },
    "pets": {
        "dog": ["dog food", "dog lead", "dog bed", "chew toy", "dog bowl"],
        "cat": ["cat food", "cat litter", "scratching post", "cat toy", "litter tray"],
        "fish": ["fish food", "aquarium filter", "water conditioner", "gravel", "fish net"],
    },
    "beauty": {
        "skin": ["moisturiser", "cleanser", "sunscreen", "face mask", "serum"],
        "hair": ["shampoo", "conditioner", "hair dryer", "hair brush", "hair oil"],
        "bath": ["bath salts", "shower gel", "bath towel", "loofah", "body lotion"],
    },
    "electronics": {
        "audio": ["headphones", "speaker", "earbuds", "turntable", "soundbar"],
        "computing": ["usb hub", "mouse", "keyboard", "webcam", "ssd"],
        "power": ["charger", "power bank", "usb cable", "batteries", "extension lead"],
    },
}
#: What is bought with what (product type -> its complement type, same department): when a product of a
#: key type is bought, a product of the value type joins the order with probability ``complement_rate``.
RETAIL_COMPLEMENTS: dict[str, str] = {
    "tent": "sleeping bag", "sleeping bag": "sleeping mat", "camp stove": "lantern",
    "trail shoes": "trekking poles", "daypack": "water bottle", "bike helmet": "bike light",
    "bike lock": "pump",
    "saucepan": "stock pot", "dinner plate": "cutlery set", "coffee mug": "bowl",
    "wine glass": "dinner plate",
    "mixing bowl": "whisk", "cake tin": "baking tray", "rolling pin": "mixing bowl",
    "notebook": "pen set", "planner": "highlighters", "printer paper": "envelopes", "fountain pen": "ink",
    "monitor arm": "cable tray", "desk lamp": "desk mat", "laptop stand": "desk mat",
    "seed packet": "potting soil", "plant pot": "potting soil", "bulbs": "trowel", "pruners": "garden gloves",
    "parasol": "garden chair", "garden chair": "cushion", "fertiliser": "garden gloves",
    "baby bottle": "bib", "high chair": "baby spoon", "nappies": "wipes", "changing mat": "nappy cream",
    "cot sheet": "swaddle", "baby monitor": "night light", "sippy cup": "bib",
    "dog food": "dog bowl", "dog lead": "chew toy", "dog bed": "chew toy", "cat food": "cat toy",
    "cat litter": "litter tray", "fish food": "water conditioner", "aquarium filter": "gravel",
    "cleanser": "moisturiser", "serum": "moisturiser", "shampoo": "conditioner", "hair dryer": "hair brush",
    "shower gel": "loofah", "bath salts": "bath towel", "sunscreen": "face mask",
    "turntable": "speaker", "earbuds": "charger", "keyboard": "mouse", "webcam": "usb hub",
    "ssd": "usb cable",
    "power bank": "usb cable", "soundbar": "extension lead",
}  # fmt: skip

_BRANDS = (
    "Alder", "Birch", "Cobalt", "Delta", "Ember", "Fjord", "Granite", "Harbour", "Iris", "Juniper",
    "Kestrel", "Linden", "Maple", "Nimbus", "Orchid", "Pebble", "Quill", "Rowan", "Sable", "Tundra",
)  # fmt: skip


@dataclass(frozen=True)
class RetailData:
    """A generated order log and the ground truth it was drawn from.

    Order lines (one row per order and product; all arrays have the same length):

    Attributes
    ----------
    order_id : ndarray of int64
    customer_id : ndarray of int64
        Index into ``customers``.
    product_id : ndarray of int64
        Index into ``products``.
    timestamp : ndarray of int64
        Seconds since the Unix epoch (order time; lines of one order share it).
    quantity : ndarray of int64
        Units bought, >= 1.
    session : ndarray of int64
        Ground-truth shopping session of the line's order (orders minutes apart).
    products : list of str
        Product keys, readable and unique (``"tent-00012"``).
    product_name, department, aisle : list of str
        Catalogue labels per product.
    popularity : ndarray of float64
        The Zipf weight each product was drawn with.
    complement : list of str or None
        Per product, the kind of product bought with it on purpose (tent -> "sleeping bag"), or None.
    customers : list of str
        Customer keys (``"C000123"``).
    taste : ndarray of int64
        Per customer, the index (into ``departments``) of the department they mostly buy from.
    departments : list of str
    """

    order_id: np.ndarray
    customer_id: np.ndarray
    product_id: np.ndarray
    timestamp: np.ndarray
    quantity: np.ndarray
    session: np.ndarray
    products: list[str]
    product_name: list[str]
    department: list[str]
    aisle: list[str]
    popularity: np.ndarray
    complement: list[str | None]
    customers: list[str]
    taste: np.ndarray
    departments: list[str]

    @property
    def n_lines(self) -> int:
        """Number of order lines."""
        return len(self.order_id)

    def product_labels(self, level: str = "department") -> dict[str, str]:
        """Product key -> its ``"department"`` or ``"aisle"``."""
        if level not in ("department", "aisle"):
            raise InputError(f"level == {level!r}, must be 'department' or 'aisle'")
        labels = self.department if level == "department" else self.aisle
        return dict(zip(self.products, labels, strict=True))

    def customer_tastes(self) -> dict[str, str]:
        """Customer key -> the department of their hidden taste."""
        return {c: self.departments[t] for c, t in zip(self.customers, self.taste.tolist(), strict=True)}

    def subset(self, mask: np.ndarray) -> RetailData:
        """The same catalogue and customers with only the order lines where ``mask`` is True."""
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != self.order_id.shape:
            raise InputError(f"mask has shape {mask.shape}, expected {self.order_id.shape} (one per line)")
        cols = ("order_id", "customer_id", "product_id", "timestamp", "quantity", "session")
        return dataclasses.replace(self, **{c: getattr(self, c)[mask] for c in cols})

    def orders(self) -> list[list[str]]:
        """The order lines grouped into baskets of product keys, in order id order."""
        cut = np.flatnonzero(np.diff(self.order_id)) + 1
        keys = np.asarray(self.products, dtype=object)
        return [list(keys[part]) for part in np.split(self.product_id, cut)]


def _range_sampler(group: np.ndarray, weights: np.ndarray, n_groups: int, rng: np.random.Generator):
    """A function drawing, for an array of group numbers, one member of each by ``weights``.

    ``group`` is sorted (each group a contiguous range of ids, none empty); the within-group cdf is laid
    out on ``[g, g + 1)`` so one ``searchsorted`` samples any mix of groups.
    """
    start = np.searchsorted(group, np.arange(n_groups + 1))
    cdf = np.empty(len(group))
    for g in range(n_groups):
        w = weights[start[g] : start[g + 1]]
        cdf[start[g] : start[g + 1]] = g + np.cumsum(w) / w.sum()
    cdf[start[1:] - 1] = np.arange(1, n_groups + 1)  # exact upper edges: no float overshoot

    def draw(g: np.ndarray) -> np.ndarray:
        u = g + rng.random(g.shape) * (1 - 1e-12)
        return np.minimum(np.searchsorted(cdf, u, side="right"), start[g + 1] - 1)

    return draw


def _check_retail_args(
    n_products: Any,
    n_customers: Any,
    n_aisles: int,
    complement_rate: float,
    repeat_rate: float,
    orders_per_customer: float,
    basket_size: float,
) -> None:
    """:func:`retail_orders`'s checks of its sizes and rates."""
    if isinstance(n_products, bool) or not isinstance(n_products, int) or n_products < 5 * n_aisles:
        raise InputError(f"n_products == {n_products!r}, must be an int >= {5 * n_aisles} (one per type)")
    if isinstance(n_customers, bool) or not isinstance(n_customers, int) or n_customers < 1:
        raise InputError(f"n_customers == {n_customers!r}, must be an int >= 1")
    for name, v in (("complement_rate", complement_rate), ("repeat_rate", repeat_rate)):
        if not 0 <= v <= 1:
            raise InputError(f"{name} == {v!r}, must be in [0, 1]")
    if orders_per_customer < 1 or basket_size < 1:
        raise InputError(
            f"orders_per_customer == {orders_per_customer!r} and basket_size == {basket_size!r} must be >= 1"
        )


def retail_orders(
    n_customers: int = 2_000,
    n_products: int = 600,
    *,
    orders_per_customer: float = 8.0,
    basket_size: float = 4.0,
    complement_rate: float = 0.6,
    repeat_rate: float = 0.2,
    zipf: float = 1.0,
    seed: int = 0,
    start: str = "2026-01-01",
    days: int = 90,
) -> RetailData:
    """Generate a retail order log with known structure (vectorised: 1 M lines in a few seconds).

    The catalogue has 8 departments of 3 aisles of 5 product types (:data:`RETAIL_DEPARTMENTS`), with
    several products (brands) per type and Zipf popularity. About half the types have a complement type
    in the same department (:data:`RETAIL_COMPLEMENTS`, tent -> sleeping bag): whenever such a product is
    bought, a product of the complement type (drawn by popularity) joins the order with probability
    ``complement_rate``. Each customer has a hidden
    taste: 70 % of their orders come from one department, the rest spread by a Dirichlet draw. An order
    draws one aisle of its department and most lines from that aisle; a line is a repeat of one of the
    customer's three staple products with probability ``repeat_rate``. Orders come in sessions (orders
    30 s to 25 min apart, sessions more than a day apart); later orders of a session stay in the
    session's department.

    Parameters
    ----------
    n_customers, n_products : int
        Sizes; ``n_products >= 120`` (one per product type).
    orders_per_customer : float
        Mean number of orders per customer (at least one each).
    basket_size : float
        Mean number of drawn lines per order before complements (at least one each).
    complement_rate, repeat_rate : float
        Probabilities in ``[0, 1]``.
    zipf : float
        Popularity skew (0 = uniform).
    seed : int
        Seed of the generator.
    start : str
        ISO date of the first possible order.
    days : int
        Length of the period over which customers start shopping.

    Returns
    -------
    RetailData
        Order lines sorted by (order id, product) and the ground truth.
    """
    depts = list(RETAIL_DEPARTMENTS)
    aisles = [(d, a) for d in depts for a in RETAIL_DEPARTMENTS[d]]
    n_aisles = len(aisles)
    _check_retail_args(
        n_products, n_customers, n_aisles, complement_rate, repeat_rate, orders_per_customer, basket_size
    )
    rng = np.random.default_rng(seed)

    # --- catalogue: products of each type (aisle x noun) form a contiguous id range, types in aisle order
    n_types = 5 * n_aisles
    prod_type = np.sort(np.concatenate([np.arange(n_types), rng.integers(0, n_types, n_products - n_types)]))
    prod_aisle = prod_type // 5
    prod_dept = prod_aisle // 3
    popularity = 1.0 / rng.permutation(np.arange(1, n_products + 1)) ** zipf
    type_nouns = [noun for d, a in aisles for noun in RETAIL_DEPARTMENTS[d][a]]
    names, keys = [], []
    for p, t in enumerate(prod_type.tolist()):
        names.append(f"{_BRANDS[(p * 7) % len(_BRANDS)]} {type_nouns[t]}")
        keys.append(f"{type_nouns[t].replace(' ', '-')}-{p:05d}")
    draw_in_aisle = _range_sampler(prod_aisle, popularity, n_aisles, rng)
    draw_of_type = _range_sampler(prod_type, popularity, n_types, rng)

    # complements live between product types (tent -> sleeping bag, RETAIL_COMPLEMENTS); the complement
    # product is drawn from its type by popularity
    type_of = {noun: t for t, noun in enumerate(type_nouns)}
    comp_type = np.array([type_of.get(RETAIL_COMPLEMENTS.get(noun, ""), -1) for noun in type_nouns])

    # --- customers: a main department with 70 % of the mass, the rest Dirichlet
    taste = rng.integers(0, len(depts), n_customers)
    weights = 0.3 * rng.dirichlet(np.full(len(depts), 0.5), n_customers)
    weights[np.arange(n_customers), taste] += 0.7
    taste_cdf = np.cumsum(weights, axis=1)
    staples = draw_in_aisle(taste[:, None] * 3 + rng.integers(0, 3, (n_customers, 3)))

    # --- orders and sessions
    n_orders_c = 1 + rng.poisson(orders_per_customer - 1, n_customers)
    order_cust = np.repeat(np.arange(n_customers), n_orders_c)
    n_orders = len(order_cust)
    first = np.zeros(n_orders, dtype=bool)
    first[np.concatenate([[0], np.cumsum(n_orders_c)[:-1]])] = True
    new_session = first | (rng.random(n_orders) < 0.5)
    session = np.cumsum(new_session) - 1
    gap = np.where(
        new_session,
        86400 + rng.exponential(4 * 86400, n_orders),
        30 + np.minimum(rng.exponential(300, n_orders), 1470),
    )
    t0 = np.datetime64(start, "s").astype(np.int64) + rng.integers(0, days * 86400, n_customers)
    csum = np.cumsum(gap)
    base = csum[np.flatnonzero(first)]
    order_time = (t0[order_cust] + csum - np.repeat(base, n_orders_c)).astype(np.int64)
    u = rng.random(n_orders)
    order_dept = (taste_cdf[order_cust] < u[:, None] * taste_cdf[order_cust, -1:]).sum(axis=1)
    order_dept = np.minimum(order_dept, len(depts) - 1)
    session_first = np.flatnonzero(new_session)[session]
    stay = ~new_session & (rng.random(n_orders) < 0.7)
    order_dept = np.where(stay, order_dept[session_first], order_dept)
    order_aisle = order_dept * 3 + rng.integers(0, 3, n_orders)

    # --- lines: most from the order's aisle, some from its department, some staples
    size = 1 + rng.poisson(basket_size - 1, n_orders)
    line_order = np.repeat(np.arange(n_orders), size)
    r = rng.random(len(line_order))
    line_aisle = np.where(
        r < 0.7, order_aisle[line_order], order_dept[line_order] * 3 + rng.integers(0, 3, len(r))
    )
    prod = draw_in_aisle(line_aisle)
    cust = order_cust[line_order]
    repeat = rng.random(len(prod)) < repeat_rate
    prod[repeat] = staples[cust[repeat], rng.integers(0, 3, int(repeat.sum()))]
    comp = comp_type[prod_type[prod]]
    add = (comp >= 0) & (rng.random(len(prod)) < complement_rate)
    line_order = np.concatenate([line_order, line_order[add]])
    prod = np.concatenate([prod, draw_of_type(comp[add])])
    # one line per (order, product), sorted
    code = unique(line_order.astype(np.int64) * n_products + prod)
    line_order, prod = np.divmod(code, n_products)
    quantity = 1 + rng.geometric(0.7, len(prod)) - 1
    return RetailData(
        order_id=line_order + 1,
        customer_id=order_cust[line_order],
        product_id=prod,
        timestamp=order_time[line_order],
        quantity=quantity.astype(np.int64),
        session=session[line_order],
        products=keys,
        product_name=names,
        department=[depts[d] for d in prod_dept.tolist()],
        aisle=[aisles[a][1] for a in prod_aisle.tolist()],
        popularity=popularity,
        complement=[type_nouns[c] if c >= 0 else None for c in comp_type[prod_type].tolist()],
        customers=[f"C{c:06d}" for c in range(n_customers)],
        taste=taste.astype(np.int64),
        departments=depts,
    )


def write_retail(
    data: RetailData, out_dir: str | os.PathLike, *, formats: Sequence[str] = ("parquet", "csv")
) -> dict[str, Any]:
    """Write a :class:`RetailData` to a folder: the order log, the catalogue and the ground truth.

    Files: ``orders.parquet`` / ``orders.csv`` (``order_id, customer_id, product_id, timestamp, quantity``;
    the CSV's timestamp is ISO 8601), ``products.csv`` (``product_id, name, department, aisle, popularity,
    complement``), ``customers.csv`` (``customer_id, taste``) and ``truth.json`` (sizes and file list). The
    folder is written beside the target and renamed into place, so it is never half-written.

    Returns
    -------
    dict
        A summary: path, lines, orders, customers, products, files.
    """
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    bad = [f for f in formats if f not in ("parquet", "csv")]
    if bad or not formats:
        raise InputError(f"formats == {tuple(formats)!r}, must name 'parquet' and/or 'csv'")
    target = Path(out_dir)
    if target.exists():
        raise InputError(f"{str(target)!r} already exists; choose a new folder for the data set")
    with atomic_folder(target) as tmp:
        products = np.asarray(data.products, dtype=object)
        customers = np.asarray(data.customers, dtype=object)
        orders = pa.table(
            {
                "order_id": pa.array(data.order_id),
                "customer_id": pa.array(customers[data.customer_id], type=pa.string()),
                "product_id": pa.array(products[data.product_id], type=pa.string()),
                "timestamp": pa.array(data.timestamp.astype("datetime64[s]")),
                "quantity": pa.array(data.quantity),
            }
        )
        files = []
        if "parquet" in formats:
            pq.write_table(orders, tmp / "orders.parquet")
            files.append("orders.parquet")
        if "csv" in formats:
            pcsv.write_csv(orders, tmp / "orders.csv")
            files.append("orders.csv")
        catalogue = pa.table(
            {
                "product_id": data.products,
                "name": data.product_name,
                "department": data.department,
                "aisle": data.aisle,
                "popularity": data.popularity,
                "complement": data.complement,
            }
        )
        pcsv.write_csv(catalogue, tmp / "products.csv")
        people = pa.table(
            {"customer_id": data.customers, "taste": [data.departments[t] for t in data.taste.tolist()]}
        )
        pcsv.write_csv(people, tmp / "customers.csv")
        summary = {
            "lines": data.n_lines,
            "orders": int(len(unique(data.order_id))),
            "customers": len(data.customers),
            "products": len(data.products),
            "departments": data.departments,
            "files": files + ["products.csv", "customers.csv", "truth.json"],
        }
        write_text(tmp / "truth.json", json.dumps(summary, indent=2) + "\n")
    return {"path": str(target), **summary}
