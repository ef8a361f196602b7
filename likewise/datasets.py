"""Small generated data sets with known structure: the seed demo and planted groups.

Each generator is seeded and returns plain Python lists, so tests can assert against the structure
that was planted (the model never sees the labels).
"""

from __future__ import annotations

import numpy as np

from .errors import InputError

__all__ = ["DEMO_CATALOGUE", "demo_baskets", "demo_labels", "planted_baskets"]

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
