"""An item or a customer is the text the user wrote, everywhere; a row number only when asked for as one.

A DataFrame's int64 ids are stored as their text, so ``next_basket(emb, 1043)`` must answer for the
customer keyed ``"1043"``, and ``next_basket(emb, 3)`` must not answer for whoever sits in row 3: it fails
naming the key and saying how a row is asked for (``likewise.Row(3)``, ``#3`` on the command line). A key
written ``#12`` stays reachable, and a space trained from a matrix answers in its columns whichever way it
is asked.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import likewise
from likewise import Row, retail
from likewise.cli import main
from likewise.errors import InputError, ItemIndexError, UnknownItemError

pd = pytest.importorskip("pandas")
CONFIG = {"dim": 8, "epochs": 2, "seed": 1, "threads": 1, "progress": False}


@pytest.fixture(scope="module")
def shop():
    """400 orders of 40 customers (ids 1000, 1007, ...) over 60 products (ids 100100, 100113, ...), int64."""
    rng = np.random.default_rng(0)
    rows = []
    for o in range(400):
        c = int(rng.integers(0, 40)) * 7 + 1000
        for p in rng.choice(60, 3, replace=False):
            rows.append((o, c, int(p) * 13 + 100100, o))
    df = pd.DataFrame(rows, columns=["order_id", "customer_id", "product_id", "t"])
    return likewise.train(
        df, basket_col="order_id", item_col="product_id", user_col="customer_id", time_col="t", **CONFIG
    )


def test_an_int_item_is_the_key_written_so(shop):
    key = shop.keys[5]
    assert int(key) in shop and np.int64(key) in shop and 5 not in shop and Row(5) in shop
    assert shop.similar(int(key), k=3).keys == shop.similar(key, k=3).keys == shop.similar(Row(5), k=3).keys
    np.testing.assert_array_equal(shop[int(key)], shop[key])
    with pytest.raises(UnknownItemError, match=r"the int 5 is read as the key '5'.*Row\(5\)"):
        shop.similar(5)
    with pytest.raises(ItemIndexError):
        shop.similar(Row(len(shop)))


def test_an_int_customer_is_the_key_written_so(shop):
    table = shop.customers
    key, row = table.keys[3], 3
    assert int(key) != row
    for ask in (retail.next_basket, retail.for_customer, retail.similar_customers):
        assert ask(shop, int(key), k=3).keys == ask(shop, key, k=3).keys == ask(shop, Row(row), k=3).keys
        with pytest.raises(UnknownItemError, match=r"unknown customer '3'.*Row\(3\)"):
            ask(shop, row, k=3)
    seeds = [int(k) for k in table.keys[:3]]
    assert retail.lookalike(shop, seeds, k=5).keys == retail.lookalike(shop, table.keys[:3], k=5).keys
    with pytest.raises(UnknownItemError):
        retail.lookalike(shop, [1, 2, 3], k=5)
    assert int(key) in table and row not in table


def test_a_bad_customer_says_customer(shop):
    for bad in (3.5, None, True):
        with pytest.raises(InputError) as e:
            retail.for_customer(shop, bad)
        assert "customer" in str(e.value) and "item ids must be integers" not in str(e.value)


def test_a_key_written_with_a_hash_stays_reachable(tmp_path, capsys):
    baskets = [["#12", "tent", "tarp"], ["12", "kettle", "mug"], ["#tag", "tent", "tarp"]] * 30
    emb = likewise.train(baskets, mode="basket", min_count=1, **CONFIG)
    hashed = emb.vocab.index["#12"]
    assert likewise.parse_item("#12") == Row(12)
    assert emb.id_of(likewise.parse_item("#12")) == hashed  # the key "#12" wins over row 12
    assert emb.id_of(likewise.parse_item(f"#{hashed}")) == hashed  # no key "#N": row N
    assert emb.id_of(12) == emb.vocab.index["12"]  # an int is the key "12"
    emb.save(tmp_path / "m")
    assert main(["similar", str(tmp_path / "m"), "#12", "-k", "2", "--json"]) == 0
    (answer,) = json.loads(capsys.readouterr().out)["answers"]
    assert answer["query"] == "#12" and "#12" not in [r["item"] for r in answer["results"]]
    assert [r["item"] for r in answer["results"]] == emb.similar("#12", k=2).keys


def test_a_matrix_space_answers_in_columns_whichever_way_asked():
    sp = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(3)
    groups = [list(range(g * 6, g * 6 + 6)) for g in range(4)]  # columns 0-23 in 4 groups
    rows = [sorted(rng.choice(groups[u % 4], 3, replace=False).tolist()) for u in range(200)]
    indptr = np.r_[0, np.cumsum([len(r) for r in rows])]
    ui = sp.csr_matrix((np.ones(int(indptr[-1]), np.float32), np.concatenate(rows), indptr), shape=(200, 24))
    emb = likewise.train(ui, **CONFIG)
    assert emb.keys != [str(j) for j in range(24)]  # rows are in count order, not column order
    implicit_ids, _ = emb.recommend(0, ui[[0]], N=5)
    basket = emb.recommend(ui[[0]], k=5)
    np.testing.assert_array_equal(basket.ids[0], implicit_ids)  # today's bug: these were the space's rows
    by_key = emb.recommend([str(j) for j in rows[0]], k=5)
    np.testing.assert_array_equal(by_key.ids, implicit_ids)
    assert [int(k) for k in by_key.keys] == by_key.ids.tolist()  # ids are the columns the keys name
    sim = emb.similar(rows[0][0], k=4, evidence=False)  # an int: the column number, as written
    assert [int(k) for k in sim.keys] == sim.ids.tolist()
    # implicit's similar_items is plain cosine, as implicit's is
    np.testing.assert_array_equal(sim.ids, emb.similar_items(rows[0][0], N=5)[0][1:])
