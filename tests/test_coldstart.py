"""Cold start: item attributes trained as side information, and products with no orders placed from
their attributes alone -- held out of training, they must land in their own aisle."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pytest

from likewise import Embeddings, retail
from likewise.apps.coldstart import add_placed, place, place_table
from likewise.cli import main
from likewise.data.datasets import retail_orders
from likewise.data.eventdata import product_attributes
from likewise.errors import InputError, NotFittedError
from likewise.retail.side import expand_with_tokens, read_item_attributes, tokenise
from likewise.retail.update import update

HELD = 24  # products held out of training entirely


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LIKEWISE_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    """1,200 customers, 240 products; 24 products (and every line of theirs) held out; trained by
    ``likewise train --item-attrs``."""
    d = tmp_path_factory.mktemp("cold")
    data = retail_orders(1200, 240, seed=3)
    attrs = product_attributes(data, seed=3)
    held = np.random.default_rng(0).choice(len(data.products), HELD, replace=False)
    keep = ~np.isin(data.product_id, held)
    orders = pa.table(
        {
            "order_id": data.order_id[keep],
            "customer_id": [data.customers[i] for i in data.customer_id[keep].tolist()],
            "product_id": [data.products[i] for i in data.product_id[keep].tolist()],
        }
    )
    pcsv.write_csv(orders, d / "orders.csv")
    pcsv.write_csv(pa.table(attrs), d / "items.csv")
    new = {c: [attrs[c][i] for i in held.tolist()] for c in attrs}
    pcsv.write_csv(pa.table(new), d / "new_items.csv")
    argv = ["train", str(d / "orders.csv"), "--basket-col", "order_id", "--item-col", "product_id"]
    argv += ["--user-col", "customer_id", "--item-attrs", str(d / "items.csv"), "--dim", "24"]
    argv += [
        "--epochs",
        "8",
        "--min-count",
        "1",
        "--deterministic",
        "--seed",
        "1",
        "--quiet",
        "-o",
        str(d / "m"),
    ]
    assert main(argv) == 0
    return data, attrs, held, d, Embeddings.load(d / "m")


def _attrs_of(attrs, i):
    return {c: attrs[c][i] for c in attrs if c != "product_id"}


def test_attributes_become_hidden_tokens_in_the_space(shop):
    data, attrs, held, _, emb = shop
    spec = emb.meta["attributes"]
    assert spec["columns"] == {"category": "value", "brand": "value", "price": "bands", "title": "words"}
    assert len(spec["bands"]["price"]) == 4  # quintile edges
    assert emb.types.hidden == {"attr"} and emb.types.counts()["product"] == 240 - HELD
    assert "attr:category=outdoor" in emb and "attr:title=tent" in emb
    assert not any(k.startswith("attr:") for k in emb.similar(emb.keys[-1], k=30).keys)
    # a product-type word lies among the products of that type
    tents = emb.similar("attr:title=tent", k=2, types="product").keys
    assert tents[0].startswith("tent-"), tents
    # the held-out products never reached the space
    assert not any(data.products[i] in emb for i in held.tolist())
    # the summary's lines are the log's rows, not its rows and their attribute tokens together
    assert emb.meta["retail"]["lines"] == int(np.isin(data.product_id, held, invert=True).sum())


def test_tokenising_follows_the_training_rules(shop):
    _, _, _, _, emb = shop
    spec = emb.meta["attributes"]
    got = tokenise(
        spec, {"category": "Outdoor", "title": "Lightweight  Dome-Tent", "price": 1e9, "brand": None}
    )
    assert got == [
        "attr:category=outdoor",
        "attr:title=lightweight",
        "attr:title=dome",
        "attr:title=tent",
        "attr:price=band5of5",
    ]
    with pytest.raises(
        InputError, match=r"attribute 'colour' was not trained with this space; its attributes"
    ):
        tokenise(spec, {"colour": "red"})
    with pytest.raises(InputError, match=r"attribute 'price' == 'cheap' must be a number"):
        tokenise(spec, {"price": "cheap"})


def test_held_out_products_are_placed_in_their_aisle(shop):
    data, attrs, held, _, emb = shop
    aisle = dict(zip(data.products, data.aisle, strict=True))
    dept = dict(zip(data.products, data.department, strict=True))
    hits, cat_hits, top3 = [], [], []
    for i in held.tolist():
        placed = place(emb, _attrs_of(attrs, i), k=10)
        assert placed.item_type == "product" and len(placed.similar.keys) == 10
        top3 += [dept[k] == data.department[i] for k in placed.similar.keys[:3]]
        majority = Counter(aisle[k] for k in placed.similar.keys).most_common(1)[0][0]
        hits.append(majority == data.aisle[i])
        best_sellers = [k for k in emb.keys if k in dept and dept[k] == data.department[i]][:10]
        cat_hits.append(Counter(aisle[k] for k in best_sellers).most_common(1)[0][0] == data.aisle[i])
    assert np.mean(hits) >= 0.7 and np.mean(hits) > np.mean(cat_hits) + 0.3  # 0.75 here; categories ~1/3
    # the 3 nearest products share the department: 70 of 72 here (seeds 2 and 3 of this fixture: 72)
    assert np.mean(top3) >= 0.95


def test_place_add_and_recommend_the_new_product(shop, tmp_path, capsys):
    data, attrs, held, d, emb = shop
    i = int(held[0])
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in (d / "m").iterdir() if p.is_file()}
    argv = ["place", str(d / "m"), "--attrs"] + [f"{c}={v}" for c, v in _attrs_of(attrs, i).items()]
    argv += ["-k", "5", "--key", "launch-day", "-o", str(tmp_path / "m2"), "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    python = place(emb, _attrs_of(attrs, i), k=5, key="launch-day")
    assert [n["item"] for n in out["placed"][0]["similar"]] == python.similar.keys
    assert out["parent"] == str(d / "m") and out["placed"][0]["key"] == "launch-day"
    new = Embeddings.load(tmp_path / "m2")
    assert (
        len(new) == len(emb) + 1 and new.keys[-1] == "launch-day" and new.type_of("launch-day") == "product"
    )
    assert new.meta["parent"]["fingerprint"] == emb.fingerprint
    assert new.meta["placed"]["launch-day"]["tokens"] == python.tokens
    assert new.counts[-1] == python.prior_count > 0
    np.testing.assert_allclose(np.asarray(new["launch-day"]), np.asarray(python.vector), rtol=1e-6)
    # a placed product's neighbours are the plain cosines of its vector
    assert new.similar("launch-day", k=5, evidence=False).keys == python.similar.keys
    assert new.customers is not None and new.customers.fingerprint == new.fingerprint
    after = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in (d / "m").iterdir() if p.is_file()}
    assert after == before  # the parent is never written to
    # it can be recommended: with its nearest product, it ranks among the products bought with it
    # (by the vectors' affinity; the item-item model ranks it where its neighbours would be)
    rec = new.recommend([python.similar.keys[0]], k=30, scoring="affinity")
    assert "launch-day" in rec.keys
    # the item-item model covers it too, as a blend of its neighbours (tests/test_itemitem.py)
    assert new.completion == "itemitem" and new.itemitem.rows_of(np.array([len(new) - 1]))[0] >= 0
    assert len(new.recommend(["launch-day"], k=5).keys) == 5
    with pytest.raises(InputError, match="already in the space"):
        place(new, _attrs_of(attrs, i), key="launch-day")


def test_batch_placement_from_a_table(shop, tmp_path, capsys):
    data, attrs, held, d, emb = shop
    placed = place_table(emb, d / "new_items.csv", k=10)
    assert [p.key for p in placed] == [data.products[i] for i in held.tolist()]
    argv = [
        "place",
        str(d / "m"),
        "--attrs-file",
        str(d / "new_items.csv"),
        "-o",
        str(tmp_path / "m3"),
        "--json",
    ]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["placed"]) == HELD and out["model"] == str(tmp_path / "m3")
    new = Embeddings.load(tmp_path / "m3")
    assert set(new.meta["placed"]) == {p.key for p in placed} and len(new) == len(emb) + HELD
    # the next version carries on: placing more products keeps the earlier ones listed
    again = add_placed(new, [place(new, {"category": "kitchen", "title": "wok"}, key="w2")])
    assert len(again.meta["placed"]) == HELD + 1


def test_new_products_in_parquet_are_placed_whatever_the_file_is_named(shop, tmp_path):
    """``place --attrs-file`` reads the table once, by the one reader: Parquet is told by its content."""
    import pyarrow.parquet as pq

    data, attrs, held, d, emb = shop
    new = {c: [attrs[c][i] for i in held.tolist()] for c in attrs}
    pq.write_table(pa.table(new), tmp_path / "new_items.csv")  # Parquet, named .csv
    placed = place_table(emb, tmp_path / "new_items.csv", k=10)
    assert [p.key for p in placed] == [data.products[i] for i in held.tolist()]
    assert [p.similar.keys for p in placed] == [p.similar.keys for p in place_table(emb, d / "new_items.csv")]


def test_a_tag_column_of_empty_lists_gives_no_token(tmp_path):
    """Found by the fuzzer: a list column whose lists are all empty raised IndexError."""
    import pyarrow.parquet as pq

    pq.write_table(
        pa.table({"item": ["a", "b"], "tags": pa.array([[], None], pa.list_(pa.string()))}), tmp_path / "t.pq"
    )
    assert read_item_attributes(tmp_path / "t.pq").tokens == [[], []]


def test_place_over_http(shop):
    pytest.importorskip("fastapi")
    from test_service import Client

    from likewise.service import create_app
    from likewise.service.models import ModelSpec, Registry

    data, attrs, held, d, emb = shop
    http = Client(create_app(Registry([ModelSpec("m", d / "m")], map_sample=50)))
    a = _attrs_of(attrs, int(held[1]))
    r = http.post("/models/m/place", json={"attrs": a, "k": 5})
    assert r.status_code == 200, r.text
    python = place(emb, a, k=5)
    assert [n["item"] for n in r.json()["similar"]] == python.similar.keys
    assert [n["item"] for n in r.json()["bought_with"]] == python.bought_with.keys
    r = http.post("/models/m/place", json={"attrs": {"colour": "red"}})
    assert r.status_code == 422 and "attribute 'colour' was not trained" in r.json()["error"]


def test_errors_say_what_is_wrong(shop, tmp_path):
    _, attrs, _, d, emb = shop
    plain = retail.train_from_log(
        d / "orders.csv", user_col=None, dim=8, epochs=1, min_count=1, progress=False
    )
    with pytest.raises(NotFittedError, match="trained without item attributes"):
        place(plain, {"category": "outdoor"})
    with pytest.raises(InputError, match="none of the attribute tokens"):
        place(emb, {"brand": "nobody-sells-this"})
    (tmp_path / "dup.csv").write_text("product_id,category\ntent,outdoor\ntent,outdoor\n")
    with pytest.raises(InputError, match=r"item 'tent' appears twice in column 'product_id' of .*dup\.csv"):
        read_item_attributes(tmp_path / "dup.csv")
    (tmp_path / "nokey.csv").write_text("product_id,category\ntent,outdoor\n,kitchen\n")
    with pytest.raises(
        InputError, match=r"null 'product_id' value in .*nokey\.csv at data row 2 .* item key"
    ):
        read_item_attributes(tmp_path / "nokey.csv")
    with pytest.raises(InputError, match=r"item column 'sku' not found in item attributes"):
        read_item_attributes(tmp_path / "nokey.csv", "sku")
    (tmp_path / "other.csv").write_text("sku,category\nnothing-here,outdoor\n")
    with pytest.raises(InputError, match="no item of the log has a row in the item attributes"):
        retail.train_from_log(
            d / "orders.csv",
            user_col=None,
            item_attrs=tmp_path / "other.csv",
            epochs=1,
            min_count=1,
            progress=False,
        )


def test_expanding_baskets_with_tokens():
    # items 0, 1 with tokens {2, 3} and {3}; two baskets [0, 1] and [1]
    ids, offsets = np.array([0, 1, 1]), np.array([0, 2, 3])
    indptr, toks = np.array([0, 2, 3, 3, 3]), np.array([2, 3, 3])
    got, off = expand_with_tokens(ids, offsets, indptr, toks, basket=True)
    assert got.tolist() == [0, 1, 2, 3, 1, 3] and off.tolist() == [0, 4, 6]  # a basket's tokens once
    got, off = expand_with_tokens(ids, offsets, indptr, toks, basket=False)
    assert got.tolist() == [0, 2, 3, 1, 3, 1, 3] and off.tolist() == [0, 5, 7]  # each item's follow it


def test_read_attributes_from_parquet_and_memory(tmp_path):
    table = pa.table(
        {"sku": ["a", "b", "c"], "price": [1.0, 2.0, None], "title": ["red tent", "blue mat", "x"]}
    )
    import pyarrow.parquet as pq

    pq.write_table(table, tmp_path / "a.parquet")
    for source in (tmp_path / "a.parquet", table):
        got = read_item_attributes(source)
        assert got.keys == ["a", "b", "c"] and got.spec["columns"] == {"price": "bands", "title": "words"}
        assert got.tokens[2] == ["attr:title=x"]  # a null price gives no token
        assert got.of("product:b") == got.tokens[1]  # a typed key finds its bare row
    assert Path(tmp_path / "a.parquet").exists()


# ---- issue 34: no attribute token made by place; a placed version records the place ------------------

ATTR_RULE = "type 'attr' is reserved for item attributes (side information)"
ATTR_RE = re.escape(ATTR_RULE)


def test_place_refuses_the_attribute_type_as_a_log_does(shop, tmp_path, capsys):
    """``place --type attr --key fake -o NEW`` made an item ``attr:fake``, an attribute token in all but
    origin; it is refused with the rule, and the message, of an event log's type column."""
    _, attrs, held, d, emb = shop
    a = _attrs_of(attrs, int(held[2]))
    with pytest.raises(InputError, match=ATTR_RE):
        place(emb, a, key="fake", item_type="attr")
    with pytest.raises(InputError, match=ATTR_RE):
        place_table(emb, d / "new_items.csv", item_type="attr")
    with pytest.raises(InputError, match=r"key 'attr:fake' would read as an attribute token: " + ATTR_RE):
        place(emb, a, key="attr:fake")
    argv = ["place", str(d / "m"), "--attrs"] + [f"{c}={v}" for c, v in a.items()]
    capsys.readouterr()
    assert main([*argv, "--type", "attr", "--key", "fake", "-o", str(tmp_path / "p")]) == 1
    assert ATTR_RULE in capsys.readouterr().err
    assert not (tmp_path / "p").exists()
    # the log's own refusal says the same
    (tmp_path / "log.csv").write_text("order_id,product_id,event\n1,tent,attr\n1,mat,product\n")
    with pytest.raises(InputError, match=ATTR_RE):
        retail.read_order_log(tmp_path / "log.csv", user_col=None, type_col="event")


def test_place_over_http_refuses_the_attribute_type(shop):
    pytest.importorskip("fastapi")
    from test_service import Client

    from likewise.service import create_app
    from likewise.service.models import ModelSpec, Registry

    _, attrs, held, d, _ = shop
    http = Client(create_app(Registry([ModelSpec("m", d / "m")], map_sample=50)))
    a = _attrs_of(attrs, int(held[2]))
    r = http.post("/models/m/place", json={"attrs": a, "type": "attr"})
    assert r.status_code == 422 and ATTR_RULE in r.json()["error"], r.text
    assert http.post("/models/m/place", json={"attrs": a, "type": "product"}).status_code == 200


def test_a_placed_version_records_the_place_not_the_parents_update(shop, tmp_path):
    """``place`` copied the parent's ``meta["update"]`` into the placed version, which then read as an
    update; each version now records its own step, and the products placed so far are carried on."""
    from likewise.retail.update import update

    _, attrs, held, d, emb = shop
    lines = (d / "orders.csv").read_text().splitlines()
    # trained lines again, as new orders (an order the model holds is refused): order 12 becomes n12
    (tmp_path / "new.csv").write_text("\n".join([lines[0]] + ["n" + line for line in lines[1:400]]) + "\n")
    updated = update(d / "m", tmp_path / "new.csv", tmp_path / "u", epochs=1)
    assert updated.meta["update"]["lines"] == 399
    a = _attrs_of(attrs, int(held[3]))
    argv = ["place", str(tmp_path / "u"), "--attrs"] + [f"{c}={v}" for c, v in a.items()]
    assert main([*argv, "--key", "launch", "-o", str(tmp_path / "p"), "--json"]) == 0
    placed = Embeddings.load(tmp_path / "p")
    assert "update" not in placed.meta
    assert placed.meta["place"] == {"products": ["launch"], "new_products": 1}
    assert placed.meta["parent"]["fingerprint"] == updated.fingerprint
    assert placed.meta["parent"]["path"] == str((tmp_path / "u").resolve())
    # and an update of the placed version records the update, not the place; the placed product stays
    again = update(tmp_path / "p", tmp_path / "new.csv", epochs=1)
    assert "place" not in again.meta and again.meta["update"]["lines"] == 399
    assert again.meta["parent"]["fingerprint"] == placed.fingerprint and "launch" in again.meta["placed"]


def test_attribute_tables_of_every_arrow_type_read_or_say_why(tmp_path):
    """Parquet tags (list<string>) give a token per tag, UTF-8 bytes are text, an empty column gives no
    token; structs and bytes that are not text are one clear error naming the column and its type."""
    import pyarrow.parquet as pq

    t = pa.table(
        {
            "item": ["a", "b", "c"],
            "tags": [["Red", "big"], None, ["small"]],
            "raw": pa.array([b"x", b"y", None]),
            "empty": pa.array([None, None, None], pa.string()),
            "nan": [float("nan")] * 3,
        }
    )
    pq.write_table(t, tmp_path / "attrs.parquet")
    got = read_item_attributes(tmp_path / "attrs.parquet")
    assert got.spec["columns"] == {"tags": "list", "raw": "value"}
    assert got.tokens == [
        ["attr:tags=red", "attr:tags=big", "attr:raw=x"],
        ["attr:raw=y"],
        ["attr:tags=small"],
    ]
    assert tokenise(got.spec, {"tags": "Blue, green"}) == ["attr:tags=blue", "attr:tags=green"]
    bad = {
        "struct<x: int64>": pa.array([{"x": 1}]),
        "binary": pa.array([b"\xff"]),
        "list<element: struct<x: int64>>": pa.array([[{"x": 1}]]),
    }
    for kind, column in bad.items():
        pq.write_table(pa.table({"item": ["a"], "col": column}), tmp_path / "bad.parquet")
        with pytest.raises(
            InputError, match=re.escape("attribute column 'col' of") + f".* holds {re.escape(kind)};"
        ):
            read_item_attributes(tmp_path / "bad.parquet")
    pq.write_table(pa.table({"item": ["a"], "n": pa.array([None], pa.string())}), tmp_path / "none.parquet")
    with pytest.raises(InputError, match=r"no attribute column holds a value \('n'\)"):
        read_item_attributes(tmp_path / "none.parquet")


def test_info_counts_items_not_attribute_tokens(shop, capsys):
    _, _, _, d, emb = shop
    assert main(["info", str(d / "m"), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    tokens = sum(k.startswith("attr:") for k in emb.keys)
    assert tokens > 0 and info["rows"] == len(emb) and info["items"] == len(emb) - tokens
    assert not any(k.startswith("attr:") for k in info["most_frequent"])


def test_training_with_attributes_keeps_their_rows_and_place_carries_them(shop, tmp_path):
    data, attrs, held, d, emb = shop
    table = emb.item_table
    assert table is not None and set(table["columns"]) == set(attrs)
    products = set(table["columns"][table["item_col"]])
    assert products == {k for k in emb.keys if not k.startswith("attr:")}  # held-out products have no row
    new = add_placed(emb, [place(emb, _attrs_of(attrs, int(held[0])), key="launch-day")])
    assert new.item_table == table


def _most_frequent(emb, n: int, visible: bool = True) -> set[str]:
    """The keys of the ``n`` most frequent rows by the space's counts (ties: the lower id), the oracle of
    ``restrict=n``; with ``visible`` the hidden attribute tokens among them are left out, as queries do."""
    order = sorted(range(len(emb)), key=lambda i: (-int(emb.counts[i]), i))[:n]
    return {emb.keys[i] for i in order if not (visible and emb.keys[i].startswith("attr:"))}


def test_restrict_n_counts_a_placed_product_by_its_count_not_its_row(shop):
    """``restrict=N`` is gensim's restrict_vocab: the N most frequent items. A placed product is appended
    as the last row with its prior count (the median of its neighbours'), so it belongs to the N most
    frequent for an N past its rank, and not for an N before it; "the first N rows" said never."""
    _, attrs, held, _, emb = shop
    placed = place(emb, _attrs_of(attrs, int(held[0])), k=10, key="launch-day")
    new = add_placed(emb, [placed])
    rank = sorted(range(len(new)), key=lambda i: (-int(new.counts[i]), i)).index(len(new) - 1)
    assert 10 < rank < len(new) - 50  # a mid-popular product: neither end
    query = next(k for k in new.keys if not k.startswith("attr:"))  # a product, the most frequent
    for n in (rank + 1, rank + 40, rank):  # the placed product just in, well in, just out
        got = set(new.similar(query, k=len(new), restrict=n).keys) | {query}
        assert got == _most_frequent(new, n), n
        assert ("launch-day" in got) == (n > rank)
        assert set(new.recommend([query], k=len(new), restrict=n).keys) <= _most_frequent(new, n)


# ---- update adds attribute tokens to the new orders, as training does (issue 32 item 5) ---------------


def _later_log(data, held, path, per: int = 2):
    """Every line of the first ``per`` orders of each held-out product: their first orders, with what was
    bought beside them, as new orders (their ids moved past the log's: an order the model holds, the rest
    of whose lines it trained on, is refused by an update)."""
    first = []
    for i in held.tolist():
        first += list(dict.fromkeys(data.order_id[data.product_id == i].tolist()))[:per]
    mask = np.isin(data.order_id, first)
    table = {
        "order_id": data.order_id[mask] + 10**7,
        "customer_id": [data.customers[i] for i in data.customer_id[mask].tolist()],
        "product_id": [data.products[i] for i in data.product_id[mask].tolist()],
    }
    pcsv.write_csv(pa.table(table), path)
    return mask


def _token_gain(data, attrs, spec, mask, described):
    """The oracle: per token, the baskets of the log that hold an item with it (once per basket, as
    training adds a basket's tokens), over the items ``described`` has attributes for."""
    gain: Counter[str] = Counter()
    for order in np.unique(data.order_id[mask]).tolist():
        items = set(data.product_id[data.order_id == order].tolist()) & described
        gain.update({t for i in items for t in tokenise(spec, _attrs_of(attrs, i))})
    return gain


def _gained(parent, new):
    return {
        k: int(new.counts[i]) - (int(parent.counts[parent.vocab.index[k]]) if k in parent.vocab.index else 0)
        for i, k in enumerate(new.keys)
        if k.startswith("attr:")
    }


def test_update_gives_old_products_their_saved_attribute_tokens(shop, tmp_path):
    """Before, ``update`` added no attribute token to the new orders: the model's token rows stopped
    learning and its products trained without their attributes. Now every product the saved item table
    describes brings its tokens into the new baskets, by the parent's rules; new products without
    attributes bring none."""
    data, attrs, held, d, emb = shop
    mask = _later_log(data, held, tmp_path / "later.csv")
    new = update(emb, tmp_path / "later.csv", cache_dir=tmp_path / "c")
    described = set(range(len(data.products))) - set(held.tolist())
    expected = _token_gain(data, attrs, emb.meta["attributes"], mask, described)
    assert {k: v for k, v in _gained(emb, new).items() if v} == dict(expected) and len(expected) > 20
    in_log = set(data.product_id[mask].tolist())
    assert new.meta["update"]["items_with_attributes"] == len(in_log & described)
    assert new.meta["update"]["new_products"] == len(set(held.tolist()) & in_log)
    assert new.meta["update"]["new_attribute_tokens"] == 0
    assert new.item_table == emb.item_table


def test_update_with_item_attrs_gives_new_products_their_tokens(shop, tmp_path, capsys):
    """``update --item-attrs new_items.csv``: the new products join their baskets with their attribute
    tokens, tokenised as the model's were (a value it never saw gets a row, typed attr and hidden), their
    rows join the item table, and skip-gram learns them as seen with their tokens."""
    data, attrs, held, d, emb = shop
    mask = _later_log(data, held, tmp_path / "later.csv")
    argv = ["update", str(d / "m"), str(tmp_path / "later.csv"), "--item-attrs", str(d / "new_items.csv")]
    argv += ["-o", str(tmp_path / "m1"), "--json"]
    capsys.readouterr()
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    new = Embeddings.load(tmp_path / "m1")
    expected = _token_gain(data, attrs, emb.meta["attributes"], mask, set(range(len(data.products))))
    assert {k: v for k, v in _gained(emb, new).items() if v} == dict(expected)
    fresh = [k for k in new.keys[len(emb) :] if k.startswith("attr:")]
    assert summary["new_attribute_tokens"] == len(fresh) == new.meta["update"]["new_attribute_tokens"]
    assert all(new.type_of(k) == "attr" for k in fresh)
    assert new.meta["update"]["items_with_attributes"] == len(set(data.product_id[mask].tolist()))
    held_keys = {data.products[i] for i in held.tolist()}
    assert held_keys <= set(new.item_table["columns"]["product_id"])
    assert not any(k.startswith("attr:") for k in new.similar(data.products[int(held[0])], k=50).keys)

    spec = emb.meta["attributes"]

    def affinity_to_own_tokens(space) -> float:
        """Mean W[product] . C[token] over each new product's own known tokens (skip-gram's score that
        the token is seen with the product)."""
        scores = []
        for i in held.tolist():
            w = space.vectors[space.vocab.index[data.products[i]]]
            own = [
                space.vocab.index[t] for t in tokenise(spec, _attrs_of(attrs, i)) if t in space.vocab.index
            ]
            scores += [float(w @ space.context[j]) for j in own]
        return float(np.mean(scores))

    bare = update(emb, tmp_path / "later.csv", cache_dir=tmp_path / "c")
    # -0.25 with their tokens in the baskets, -1.43 without (the tokens are then never beside them)
    assert affinity_to_own_tokens(new) > affinity_to_own_tokens(bare) + 0.5


def test_update_item_attrs_errors_say_what_is_wrong(shop, tmp_path):
    data, attrs, held, d, emb = shop
    _later_log(data, held, tmp_path / "later.csv")
    extra = tmp_path / "extra.csv"
    extra.write_text("product_id,category,colour\nnew-1,outdoor,red\n")
    with pytest.raises(InputError, match="attribute 'colour' was not trained with this space"):
        update(emb, tmp_path / "later.csv", item_attrs=extra, cache_dir=tmp_path / "c")
    plain = Embeddings.load(d / "m")
    plain.meta.pop("attributes")
    with pytest.raises(InputError, match="needs a model trained with item attributes"):
        update(plain, tmp_path / "later.csv", item_attrs=d / "new_items.csv", cache_dir=tmp_path / "c")


def test_update_of_a_placed_product_brings_the_tokens_it_was_placed_with(shop, tmp_path):
    """A product placed from its attributes (no row in the item table) takes into its first orders the
    tokens it was placed with (``meta["placed"]``)."""
    data, attrs, held, d, emb = shop
    i = int(held[0])
    placed = place(emb, _attrs_of(attrs, i), key=data.products[i])
    with_it = add_placed(emb, [placed])
    mask = _later_log(data, held[:1], tmp_path / "later.csv")
    new = update(with_it, tmp_path / "later.csv", cache_dir=tmp_path / "c")
    baskets = np.unique(data.order_id[mask & (data.product_id == i)])
    gain = _gained(with_it, new)
    assert len(placed.tokens) >= 2
    for t in placed.tokens:  # at least in every basket of the placed product
        assert gain[t] >= len(baskets)
    described = (set(range(len(data.products))) - set(held.tolist())) | {i}
    expected = _token_gain(data, attrs, emb.meta["attributes"], mask, described)
    known = {k: v for k, v in expected.items() if k in with_it.vocab.index}
    assert {k: v for k, v in gain.items() if v} == known
