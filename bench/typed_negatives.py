"""Typed negatives against untyped ones, on the generated shop's event log (products, campaigns, articles).

``python bench/typed_negatives.py --customers 2000 --products 600 --seeds 0 1 2``

One typed space per seed and setting, trained from ``likewise.data.eventdata.shop_events`` (basket = session,
dim 32, 10 epochs, deterministic):

* ``untyped``: the default kernel (negatives from every item by count^0.75, shared by groups of 16);
* ``untyped, per pair``: the classic per-pair kernel (``neg_group=1``), untyped -- the kernel the
  typed option runs, so the two differ only in where the negatives come from;
* ``typed``: negatives from the predicted item's own type (``typed_negatives=True``).

Scored on the planted answers (each a share; chance in brackets):

* ``campaign→customer``: the top campaign for a customer promotes the customer's hidden department
  (1/8), over 500 customers;
* ``audience precision``: a campaign's lookalike audience of 100 has the campaign's department as
  taste (1/8);
* ``campaign nn``: a campaign's nearest other campaign promotes the same department (1/15);
* ``article kNN aisle``: the majority aisle of an article's 10 nearest articles is its own (1/24);
* ``product kNN aisle``: the same for products (1/24);
* ``read next``: the 5 articles read after one are about its department (1/8).

Mean ± standard deviation over the seeds.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

from likewise import retail
from likewise.apps import campaigns, content
from likewise.data.eventdata import SHOP_TYPE_MAP, shop_events, write_shop_events
from likewise.space.itemtypes import split_key

SETTINGS = {
    "untyped": {},
    "untyped, per pair": {"neg_group": 1},
    "typed": {"typed_negatives": True},
}


def _name(key: str) -> str:
    return split_key(key)[1]


def score(emb, ev) -> dict[str, float]:
    r = ev.retail
    taste = {c: r.departments[t] for c, t in zip(r.customers, r.taste.tolist(), strict=True)}
    cdept = dict(zip(ev.campaigns, ev.campaign_department, strict=True))
    adept = dict(zip(ev.articles, ev.article_department, strict=True))
    aaisle = dict(zip(ev.articles, ev.article_aisle, strict=True))
    paisle = dict(zip(r.products, r.aisle, strict=True))
    out: dict[str, float] = {}
    top = [(c, campaigns.campaigns_for_customer(emb, c, k=1).keys[0]) for c in r.customers[:500]]
    out["campaign→customer"] = float(np.mean([cdept[_name(t)] == taste[c] for c, t in top]))
    out["audience precision"] = float(
        np.mean(
            [
                np.mean([taste[k] == cdept[cp] for k in campaigns.campaign_audience(emb, cp, k=100).keys])
                for cp in ev.campaigns
            ]
        )
    )
    out["campaign nn"] = float(
        np.mean(
            [cdept[_name(emb.similar(cp, k=1, types="campaign").keys[0])] == cdept[cp] for cp in ev.campaigns]
        )
    )
    arts = [a for a in ev.articles if a in emb]
    out["article kNN aisle"] = float(
        np.mean(
            [
                Counter(aaisle[_name(k)] for k in emb.similar(a, k=10, types="article").keys).most_common(1)[
                    0
                ][0]
                == aaisle[a]
                for a in arts
            ]
        )
    )
    prods = [p for p in r.products if p in emb]
    out["product kNN aisle"] = float(
        np.mean(
            [
                Counter(paisle[_name(k)] for k in emb.similar(p, k=10, types="product").keys).most_common(1)[
                    0
                ][0]
                == paisle[p]
                for p in prods
            ]
        )
    )
    out["read next"] = float(
        np.mean(
            [
                np.mean([adept[_name(k)] == adept[a] for k in content.read_next(emb, a, k=5).keys])
                for a in arts
            ]
        )
    )
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--customers", type=int, default=2_000)
    p.add_argument("--products", type=int, default=600)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--dim", type=int, default=32)
    p.add_argument("--epochs", type=int, default=10)
    args = p.parse_args()
    results: dict[str, list[dict[str, float]]] = {s: [] for s in SETTINGS}
    for seed in args.seeds:
        ev = shop_events(args.customers, args.products, seed=seed)
        with tempfile.TemporaryDirectory() as tmp:
            write_shop_events(ev, Path(tmp) / "ev")
            for name, extra in SETTINGS.items():
                t0 = time.perf_counter()
                emb = retail.train_from_log(
                    Path(tmp) / "ev" / "events.csv",
                    basket_col="session_id",
                    item_col="item_id",
                    user_col="customer_id",
                    type_col="event",
                    type_map=SHOP_TYPE_MAP,
                    dim=args.dim,
                    epochs=args.epochs,
                    min_count=1,
                    deterministic=True,
                    seed=1 + seed,
                    progress=False,
                    **extra,
                )
                secs = time.perf_counter() - t0
                results[name].append(score(emb, ev))
                print(f"seed {seed} {name}: {len(ev):,} events, trained in {secs:.1f} s", flush=True)
    metrics = list(results["typed"][0])
    print(f"\n{'metric':<20}" + "".join(f"{s:>22}" for s in SETTINGS))
    for m in metrics:
        cells = []
        for s in SETTINGS:
            v = np.array([r[m] for r in results[s]])
            cells.append(f"{v.mean():.3f} ± {v.std(ddof=1) if len(v) > 1 else 0:.3f}")
        print(f"{m:<20}" + "".join(f"{c:>22}" for c in cells))


if __name__ == "__main__":
    main()
