"""Every answer shows the product's display name beside its key, and a unique name finds its product.

A shop of 60 products whose table (``product_id, name, department``) is trained with the log
(``item_attrs``); two products share the name "Whole milk 1L". The names must reach Python
(``Neighbours.names``, ``records()``), the command line's tables and ``--json``, and the HTTP answers,
including for a space trained without the table and served with ``serve --item-attrs``.
"""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

import likewise
from likewise import retail
from likewise.cli import main
from likewise.errors import InputError, UnknownItemError

pd = pytest.importorskip("pandas")
CONFIG = {"dim": 8, "epochs": 2, "seed": 1, "threads": 1, "progress": False}
TWIN = "Whole milk 1L"


def _orders():
    rng = np.random.default_rng(0)
    rows = []
    for o in range(400):
        c = int(rng.integers(0, 40)) * 7 + 1000
        for p in rng.choice(60, 3, replace=False):
            rows.append((o, c, int(p) * 13 + 100100, o))
    return pd.DataFrame(rows, columns=["order_id", "customer_id", "product_id", "t"])


def _products():
    ids = [p * 13 + 100100 for p in range(60)]
    names = [f"Product {p:02d} {'apples' if p % 2 else 'pears'}" for p in range(60)]
    names[0] = names[1] = TWIN
    return pd.DataFrame({"product_id": ids, "name": names, "department": ["FOOD"] * 30 + ["HOME"] * 30})


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("named")
    _orders().to_csv(d / "orders.csv", index=False)
    _products().to_csv(d / "products.csv", index=False)
    return d


@pytest.fixture(scope="module")
def shop(files):
    return likewise.train(
        _orders(),
        basket_col="order_id",
        item_col="product_id",
        user_col="customer_id",
        time_col="t",
        item_attrs=files / "products.csv",
        **CONFIG,
    )


def _name(key: str) -> str | None:
    if key.startswith("attr:"):  # the attribute tokens trained beside the products have no name
        return None
    p = (int(key) - 100100) // 13
    return TWIN if p < 2 else f"Product {p:02d} {'apples' if p % 2 else 'pears'}"


def _products_of(emb) -> list[str]:
    return [k for k in emb.keys if not k.startswith("attr:") and _name(k) != TWIN]


def test_python_answers_carry_names(shop):
    assert shop.item_names.column == "name" and shop.names == [_name(k) for k in shop.keys]
    key = _products_of(shop)[3]
    res = shop.similar(key, k=5)
    assert res.names == [_name(k) for k in res.keys]
    assert [r["name"] for r in res.records()] == res.names
    batch = shop.similar([key, _products_of(shop)[4]], k=3)
    assert batch.names == [[_name(k) for k in row] for row in batch.keys] and batch[1].names == batch.names[1]
    customer = shop.customers.keys[0]
    for got in (
        retail.next_basket(shop, customer, k=4),
        retail.for_customer(shop, customer, k=4),
        retail.also_bought(shop, key, k=4),
        retail.complete_basket(shop, [key], k=4),
        shop.recommend([key], k=4),
    ):
        assert got.names == [_name(k) for k in got.keys] and all(got.names)
    chances = retail.next_basket(shop, customer, k=10).scores  # an estimated chance, not log-odds
    assert ((chances >= 0) & (chances <= 1)).all() and (np.diff(chances) <= 0).all()
    assert retail.similar_customers(shop, customer, k=2).names is None  # customers have no names
    assert [r["name"] for r in retail.similar_customers(shop, customer, k=2).records()] == [None, None]


def test_a_unique_name_finds_its_product_and_a_shared_one_lists_them(shop):
    key = _products_of(shop)[7]
    assert shop.similar(_name(key), k=4).keys == shop.similar(key, k=4).keys
    assert shop.name_of(_name(key)) == _name(key) and _name(key) in shop
    with pytest.raises(UnknownItemError, match="2 products are named so") as e:
        shop.similar(TWIN)
    assert set(e.value.suggestions) == {"100100", "100113"}


def test_names_survive_saving_and_a_space_without_them_answers_null(shop, tmp_path):
    shop.save(tmp_path / "m")
    back = likewise.load(tmp_path / "m")
    assert back.names == shop.names
    plain = likewise.train(_orders(), basket_col="order_id", item_col="product_id", **CONFIG)
    assert plain.item_names is None and plain.names == [None] * len(plain)
    assert {r["name"] for r in plain.similar(plain.keys[0], k=3).records()} == {None}
    plain.attach_names(dict(zip(_products().product_id.astype(str), _products().name, strict=True)))
    assert plain.similar(plain.keys[0], k=3).names == [
        _name(k) for k in plain.similar(plain.keys[0], k=3).keys
    ]
    with pytest.raises(InputError, match="names has 2 entries"):
        plain.attach_names(["a", "b"])


def test_the_command_line_shows_names(files, tmp_path, capsys):
    model = tmp_path / "cli_model"
    base = ["train", str(files / "orders.csv"), "--basket-col", "order_id", "--item-col", "product_id"]
    base += ["--user-col", "customer_id", "--time-col", "t", "--item-attrs", str(files / "products.csv")]
    base += ["--dim", "8", "--epochs", "2", "--seed", "1", "--quiet", "-o"]
    assert main([*base, str(model)]) == 0
    capsys.readouterr()
    assert main(["similar", str(model), "100139", "-k", "3"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].split() == ["#", "item", "name", "score", "baskets"] and "Product" in out
    assert main(["similar", str(model), "Product 03 apples", "-k", "3", "--json"]) == 0
    (answer,) = json.loads(capsys.readouterr().out)["answers"]
    assert answer["query"] == "Product 03 apples"
    assert all(r["name"] == _name(r["item"]) for r in answer["results"])
    assert main(["next-basket", str(model), "1000", "-k", "3"]) == 0
    out = capsys.readouterr().out
    assert "name" in out.splitlines()[1] and "chance" in out.splitlines()[1]
    assert main(["similar", str(model), TWIN]) == 1
    assert "2 products are named so" in capsys.readouterr().err
    # --name-col picks another column (here a poor name, but the user's choice)
    assert main([*base, str(tmp_path / "by_dept"), "--name-col", "department"]) == 0
    capsys.readouterr()
    assert main(["similar", str(tmp_path / "by_dept"), "100139", "-k", "2", "--json"]) == 0
    results = json.loads(capsys.readouterr().out)["answers"][0]["results"]
    assert {r["name"] for r in results} <= {"FOOD", "HOME"}
    assert main([*base, str(tmp_path / "bad"), "--name-col", "colour"]) == 1
    assert "name column 'colour' is not a column" in capsys.readouterr().err


def test_http_answers_carry_names_also_for_a_space_served_with_its_table(files, tmp_path):
    httpx = pytest.importorskip("httpx")
    pytest.importorskip("fastapi")
    from likewise.service import create_app
    from likewise.service.models import ModelSpec, Registry

    plain = likewise.train(_orders(), basket_col="order_id", item_col="product_id", **CONFIG)
    plain.save(tmp_path / "plain")
    app = create_app(Registry([ModelSpec("m", tmp_path / "plain", files / "products.csv")]))

    async def go():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as c:
            one = await c.get("/models/m/similar", params={"item": "100139", "k": 3})
            named = await c.get("/models/m/similar", params={"item": "Product 03 apples", "k": 3})
            return one.json(), named.json()

    one, named = asyncio.run(go())
    by_dept = create_app(
        Registry([ModelSpec("m", tmp_path / "plain", files / "products.csv", name_col="department")])
    )

    async def dept():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=by_dept), base_url="http://test") as c:
            return (await c.get("/models/m/similar", params={"item": "100139", "k": 3})).json()

    assert {r["name"] for r in asyncio.run(dept())["answers"][0]["results"]} <= {"FOOD", "HOME"}
    results = one["answers"][0]["results"]
    assert [r["name"] for r in results] == [_name(r["item"]) for r in results] and all(
        r["name"] for r in results
    )
    assert named["answers"][0]["results"] == results
