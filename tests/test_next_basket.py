"""Next basket: the purchase history a customer table keeps, the fitted ranking, the CLI and HTTP."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import likewise
from likewise import retail
from likewise.cli import main
from likewise.errors import NotFittedError, UnknownItemError
from likewise.nextbasket.history import purchase_history


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LIKEWISE_CACHE", str(tmp_path / "cache"))


def test_history_counts_baskets_not_lines_and_orders_them_by_time():
    # customer 0: baskets {0, 1} (t=1), {0} (t=2), {2} (t=3) listed out of time order; customer 1: {1, 1}
    users = np.array([0, 0, 0, 1, 1, 0, 0])
    ids = np.array([2, 0, 1, 1, 1, 0, 1])
    offsets = np.array([0, 1, 3, 5, 7])  # baskets: [2] t=3, [0] t=2, [1, 1] of customer 1, [0, 1] t=1
    times = np.array([3, 2, 2, 5, 5, 1, 1])
    ids[2] = -1  # a line whose product is not in the space is skipped
    h = purchase_history(users, ids, offsets, 2, 3, times=times)
    assert h.pair.tolist() == [0, 1, 2, 4]  # (0,0) (0,1) (0,2) (1,1)
    assert h.baskets.tolist() == [2, 1, 1, 1]  # product 1 twice in one basket counts once
    assert h.last.tolist() == [1, 2, 0, 0]  # baskets since the last one holding it, by time
    assert h.first.tolist() == [2, 2, 0, 0]  # and since the first
    assert h.n_baskets.tolist() == [3, 1]
    assert h.decay[0] > h.decay[1] and h.decay[2] == 1.0


def _loyal_log(n_customers=120, n_products=60, n_orders=8, seed=3):
    """Each customer has three staples bought in nearly every order, plus random others."""
    rng = np.random.default_rng(seed)
    rows = []
    staples = {}
    t = 1_700_000_000
    for c in range(n_customers):
        staples[c] = rng.choice(n_products, 3, replace=False)
        for o in range(n_orders):
            basket = set(int(x) for x in staples[c] if rng.random() < 0.9)
            basket |= set(int(x) for x in rng.choice(n_products, 3, replace=False))
            for p in sorted(basket):
                rows.append((f"o{c}-{o}", f"c{c:04d}", f"p{p:03d}", t + 86400 * (o * 7 + c % 7)))
    cols = list(zip(*rows, strict=True))
    table = pa.table({"order": cols[0], "customer": cols[1], "product": cols[2], "ts": list(cols[3])})
    return table, staples


@pytest.fixture(scope="module")
def loyal(tmp_path_factory):
    table, staples = _loyal_log()
    path = tmp_path_factory.mktemp("nb") / "orders.parquet"
    pq.write_table(table, path)
    emb = likewise.train(
        str(path),
        basket_col="order",
        item_col="product",
        user_col="customer",
        time_col="ts",
        dim=16,
        epochs=3,
        min_count=1,
        completion="affinity",
        seed=1,
        progress=False,
    )
    return emb, staples, path


def test_next_basket_ranks_each_customers_staples_first(loyal):
    emb, staples, _ = loyal
    hits = 0
    for c in range(0, 120, 6):
        got = retail.next_basket(emb, f"c{c:04d}", k=3)
        hits += len(set(got.keys) & {f"p{p:03d}" for p in staples[c]})
    assert hits >= 0.9 * 3 * 20  # the staples, nearly always; for_customer excludes them all
    model = emb.customers.next_basket
    assert model.validation["customers"] > 20 and len(model.weights) == len(model.features) + 1


def test_explore_answers_only_products_never_bought(loyal):
    emb, _, _ = loyal
    table = emb.customers
    got = retail.next_basket(emb, "c0003", k=10, explore=True)
    assert len(got) == 10
    assert not set(got.ids.tolist()) & set(table.bought("c0003").tolist())


def test_history_and_weights_survive_save_and_load(loyal, tmp_path):
    emb, _, _ = loyal
    emb.save(tmp_path / "m")
    back = likewise.load(tmp_path / "m")
    for name, arr in emb.customers.history.items():
        assert np.array_equal(back.customers.history[name], arr)
    a, b = retail.next_basket(emb, "c0007", k=5), retail.next_basket(back, "c0007", k=5)
    assert a.keys == b.keys and np.allclose(a.scores, b.scores)


def test_the_fit_sums_line_vectors_in_blocks_as_in_one(monkeypatch):
    # the customers' vectors of the fitting cases are summed a block of lines at a time (bounded memory):
    # the weights are those of one block
    from likewise.nextbasket import features, fit
    from likewise.space.customers import customer_table

    table, _ = _loyal_log(n_customers=40, n_orders=4)
    emb = likewise.train(
        table, basket_col="order", item_col="product", dim=8, epochs=2, min_count=1, seed=1, progress=False
    )
    codes = {k: i for i, k in enumerate(sorted(set(table["customer"].to_pylist())))}
    baskets = table["order"].to_pylist()
    order = np.argsort(np.asarray(baskets), kind="stable")
    users = np.asarray([codes[c] for c in table["customer"].to_pylist()], np.int64)[order]
    ids = np.asarray([emb.vocab.id(p) for p in table["product"].to_pylist()], np.int32)[order]
    times = np.asarray(table["ts"].to_pylist(), np.int64)[order]
    sorted_b = np.asarray(baskets)[order]
    offsets = np.r_[0, np.flatnonzero(sorted_b[1:] != sorted_b[:-1]) + 1, len(ids)].astype(np.int64)
    keys = sorted(codes)
    ct = customer_table(
        emb.vectors, emb.counts, emb.fingerprint, keys, users, ids, times=times, offsets=offsets
    )
    whole = fit.fit_next_basket(emb, ct, users, ids, offsets, times)
    assert whole.weights is not None, whole  # fitted, not the own-list fallback
    monkeypatch.setattr(fit, "_LINE_BLOCK", 7)
    monkeypatch.setattr(features, "SCORE_BLOCK", 7)
    assert fit.fit_next_basket(emb, ct, users, ids, offsets, times) == whole


def test_a_table_without_history_says_how_to_get_one(loyal):
    emb, _, _ = loyal
    old = emb.customers
    from likewise.space.customers import CustomerTable

    emb.attach_customers(
        CustomerTable(
            np.asarray(old.vectors), old.vocab, old.bought_indptr, old.bought_ids, fingerprint=old.fingerprint
        )
    )
    try:
        with pytest.raises(NotFittedError, match="retrain from the order log"):
            retail.next_basket(emb, "c0001")
    finally:
        emb.attach_customers(old)
    with pytest.raises(UnknownItemError):
        retail.next_basket(emb, "nobody")


def test_cli_and_http_answer_as_the_library(loyal, tmp_path, capsys):
    emb, _, _ = loyal
    emb.save(tmp_path / "m")
    want = retail.next_basket(emb, "c0011", k=4)
    main(["next-basket", str(tmp_path / "m"), "c0011", "-k", "4", "--json"])
    out = json.loads(capsys.readouterr().out)
    text = json.dumps(out)
    assert all(key in text for key in want.keys)
    pytest.importorskip("fastapi")
    import httpx

    from likewise.service import create_app
    from likewise.service.models import ModelSpec

    app = create_app([ModelSpec("m", tmp_path / "m")])
    import asyncio

    async def ask():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            return await client.post("/models/m/next_basket", json={"customer": "c0011", "k": 4})

    r = asyncio.run(ask())
    assert r.status_code == 200, r.text
    assert [n["item"] if "item" in n else n["key"] for n in r.json()["answers"][0]["results"]] == want.keys


def test_a_log_too_small_to_fit_answers_with_each_customers_own_most_bought(tmp_path):
    rows = [
        ("o1", "a", "milk"),
        ("o1", "a", "eggs"),
        ("o2", "a", "milk"),
        ("o3", "b", "tea"),
        ("o4", "b", "tea"),
    ]
    rows += [("o4", "b", "milk"), ("o5", "c", "eggs")]
    cols = list(zip(*rows, strict=True))
    pq.write_table(
        pa.table({"order": cols[0], "customer": cols[1], "product": cols[2]}), tmp_path / "o.parquet"
    )
    emb = likewise.train(
        str(tmp_path / "o.parquet"),
        basket_col="order",
        item_col="product",
        user_col="customer",
        dim=4,
        epochs=1,
        min_count=1,
        progress=False,
    )
    model = emb.customers.next_basket
    assert model.rule == "own" and "too few" in model.reason
    assert retail.next_basket(emb, "a", k=2).keys == ["milk", "eggs"]  # two baskets of milk, one of eggs
    assert retail.next_basket(emb, "b", k=1).keys == ["tea"]
    assert "tea" not in retail.next_basket(emb, "b", k=3, explore=True).keys


def test_update_adds_the_new_baskets_to_the_history(tmp_path):
    """A space updated with a customer's later orders counts them as a space trained on everything does."""
    from likewise.retail.update import update

    table, _ = _loyal_log(n_customers=30, n_orders=6, seed=9)
    ts = np.asarray(table["ts"])
    cut = np.sort(np.unique(ts))[len(np.unique(ts)) * 2 // 3]
    early, late = table.filter(pa.array(ts < cut)), table.filter(pa.array(ts >= cut))
    pq.write_table(early, tmp_path / "early.parquet")
    pq.write_table(late, tmp_path / "late.parquet")
    pq.write_table(table, tmp_path / "all.parquet")
    args = dict(basket_col="order", item_col="product", user_col="customer", time_col="ts", min_count=1)
    args |= dict(dim=8, epochs=1, completion="affinity", seed=1, progress=False)
    parent = likewise.train(str(tmp_path / "early.parquet"), **args)
    whole = likewise.train(str(tmp_path / "all.parquet"), **args)
    updated = update(parent, str(tmp_path / "late.parquet"))
    assert updated.customers.history is not None
    assert updated.customers.next_basket == parent.customers.next_basket
    a, b = updated.customers, whole.customers
    for key in ("c0000", "c0007", "c0029"):
        ra, rb = a.row(key), b.row(key)
        assert a.history["n_baskets"][ra] == b.history["n_baskets"][rb]
        got = [updated.keys[i] for i in a.bought(key).tolist()]
        assert set(got) == {whole.keys[i] for i in b.bought(key).tolist()}
        for product in got:
            ia = a.bought_indptr[ra] + int(np.flatnonzero(a.bought(key) == updated.vocab.index[product])[0])
            ib = b.bought_indptr[rb] + int(np.flatnonzero(b.bought(key) == whole.vocab.index[product])[0])
            for field in ("baskets", "last", "first"):
                assert a.history[field][ia] == b.history[field][ib], (key, product, field)
            assert abs(float(a.history["decay"][ia]) - float(b.history["decay"][ib])) < 1e-4
    assert len(retail.next_basket(updated, "c0003", k=3)) == 3
