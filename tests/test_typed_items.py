"""Typed items: one space of products, campaigns and articles, trained from a generated event log with
planted answers, queried from Python, the command line and HTTP (which must agree)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from likewise import Embeddings, Vocab, retail
from likewise.apps import campaigns, content
from likewise.cli import main
from likewise.data.eventdata import SHOP_TYPE_MAP, content_sessions, shop_events, write_shop_events
from likewise.errors import InputError, NotFittedError, UnknownItemError
from likewise.space.itemtypes import ItemTypes, split_key, typed_key

FIXTURE = Path(__file__).parent / "fixtures" / "space_v1_typed"
TYPE_MAP = ",".join(f"{k}={v}" for k, v in SHOP_TYPE_MAP.items())


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LIKEWISE_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    """The event log of 800 customers and 300 products, trained once by ``likewise train``."""
    d = tmp_path_factory.mktemp("typed")
    ev = shop_events(800, 300, seed=0)
    write_shop_events(ev, d / "ev")
    argv = ["train", str(d / "ev" / "events.csv"), "--basket-col", "session_id", "--item-col", "item_id"]
    argv += ["--user-col", "customer_id", "--time-col", "timestamp", "--type-col", "event"]
    argv += ["--type-map", TYPE_MAP, "--dim", "24", "--epochs", "8", "--min-count", "1"]
    argv += ["--deterministic", "--seed", "1", "--quiet", "-o", str(d / "m")]
    assert main(argv) == 0
    return ev, d, Embeddings.load(d / "m")


def _name(key: str) -> str:
    return split_key(key)[1]


# ------------------------------------------------------------------------------------ types themselves


def test_item_types_basics():
    t = ItemTypes.from_types(["product", "campaign", "product", "attr"], hidden=["attr"])
    assert t.names == ("product", "campaign", "attr") and t.counts() == {
        "product": 2,
        "campaign": 1,
        "attr": 1,
    }
    assert t.ids("product").tolist() == [0, 2] and t.ids(None).tolist() == [0, 1, 2]
    assert t.extend(["article"]).per_item() == ["product", "campaign", "product", "attr", "article"]
    with pytest.raises(InputError, match=r"unknown type 'campain' \(did you mean 'campaign'\?\)"):
        t.ids("campain")
    with pytest.raises(InputError, match="must be at most 64 characters without ':'"):
        typed_key("pro:duct", "tent")
    with pytest.raises(InputError, match="is not typed"):
        split_key("tent")


def test_bare_names_resolve_unless_two_types_share_them():
    keys = ["product:tent", "article:tent", "campaign:spring", "product:mat"]
    emb = Embeddings(np.eye(4, dtype=np.float32) + 0.1, Vocab(keys, [4, 3, 2, 1]))
    emb.attach_types(ItemTypes.from_types([k.split(":")[0] for k in keys]))
    assert emb.id_of("spring") == 2 and "mat" in emb and emb.type_of("mat") == "product"
    with pytest.raises(UnknownItemError, match=r"'tent': it names 2 items of different types") as e:
        emb.similar("tent")
    assert e.value.suggestions == ["product:tent", "article:tent"]
    assert emb.similar("product:tent", k=3, types="campaign").keys == ["campaign:spring"]
    plain = Embeddings(np.eye(3, dtype=np.float32), Vocab(["a", "b", "c"]))
    with pytest.raises(InputError, match="this space has no item types"):
        plain.similar("a", types=["product"])


def test_typed_fixture_of_the_saved_format_loads():
    emb = Embeddings.load(FIXTURE)
    assert emb.types.counts() == {"product": 8, "article": 3, "campaign": 3, "attr": 1}
    assert emb.types.hidden == {"attr"} and emb.keys[0] == "product:tent"
    # the attribute token is hidden: never returned unless asked for by type
    assert "attr:category=maps" not in emb.similar("tent", k=14).keys
    assert emb.similar("tent", k=1, types="attr").keys == ["attr:category=maps"]
    assert set(emb.similar("tent", k=3, types=["campaign"]).keys) == {
        "campaign:headlamp",
        "campaign:batteries",
        "campaign:lantern",
    }
    assert set(emb.similar("tent", k=3).keys) == {"product:tarp", "product:pegs", "product:groundsheet"}
    assert emb.to_arrow().column("type").to_pylist()[:2] == ["product", "product"]


def test_types_are_saved_with_the_space(shop, tmp_path):
    _, d, emb = shop
    manifest = json.loads((d / "m" / "manifest.json").read_text())
    assert sorted(manifest["types"]["names"]) == ["article", "campaign", "product"]
    assert manifest["types"]["hidden"] == [] and manifest["types"]["file"] == "item_types.npy"
    assert manifest["format_version"] == 1 and "item_types.npy" in manifest["files"]
    assert emb.types.counts()["campaign"] == 16 and emb.types.counts()["product"] == 300
    assert all(k.startswith(f"{emb.types.type_of(i)}:") for i, k in enumerate(emb.keys))
    emb.save(tmp_path / "again")
    assert Embeddings.load(tmp_path / "again").types == emb.types


def test_every_query_filters_by_type(shop):
    _, _, emb = shop
    for kind in ("product", "campaign", "article"):
        got = [
            emb.similar("spring-outdoor", k=5, types=kind),
            emb.similar(["tent-guide", "summer-pets"], k=3, types=[kind])[1],
            emb.similar_to_vector(emb["spring-outdoor"], k=5, types=kind),
            emb.recommend(["spring-outdoor"], k=5, types=kind),
            retail.also_bought(emb, "tent-guide", k=5, types=kind),
            retail.complete_basket(emb, ["spring-outdoor", "tent-guide"], k=5, types=kind),
            retail.for_customer(emb, "C000001", k=5, types=kind),
        ]
        for res in got:
            assert len(res.keys) >= 3
            assert all(emb.type_of(k) == kind for k in res.keys), (kind, res.keys)
    both = emb.similar("spring-outdoor", k=20, types=["campaign", "article"]).keys
    assert {emb.type_of(k) for k in both} == {"campaign", "article"}
    with pytest.raises(InputError, match="unknown type 'campaigns'"):
        emb.similar("spring-outdoor", types="campaigns")


# ------------------------------------------------------------------------------------ planted answers


def _tastes(ev):
    r = ev.retail
    return {c: r.departments[t] for c, t in zip(r.customers, r.taste.tolist(), strict=True)}


def test_campaigns_fit_the_customers_and_audiences_of_their_department(shop):
    ev, _, emb = shop
    taste = _tastes(ev)
    dept = dict(zip(ev.campaigns, ev.campaign_department, strict=True))
    top = [campaigns.campaigns_for_customer(emb, c, k=1).keys[0] for c in ev.retail.customers[:200]]
    hits = np.mean([dept[_name(t)] == taste[c] for t, c in zip(top, ev.retail.customers, strict=False)])
    assert hits >= 0.6  # chance: 1 in 8 departments
    for d in ev.retail.departments:  # an audience of 30 customers of one taste: both its campaigns first
        audience = [c for c, t in taste.items() if t == d][:30]
        best = campaigns.campaigns_for_audience(emb, audience, k=2).keys
        assert {dept[_name(k)] for k in best} == {d}, (d, best)


def test_campaign_products_and_lookalike_audience(shop):
    ev, _, emb = shop
    taste = _tastes(ev)
    pdept = dict(zip(ev.retail.products, ev.retail.department, strict=True))
    precision, audience = [], []
    for camp, d in zip(ev.campaigns, ev.campaign_department, strict=True):
        res = campaigns.campaign_products(emb, camp, k=10)
        assert all(emb.type_of(k) == "product" for k in res.keys)
        precision.append(np.mean([pdept[_name(k)] == d for k in res.keys]))
        res = campaigns.campaign_audience(emb, camp, k=100)
        responders = set(campaigns.campaign_responders(emb, camp))
        assert responders and not responders & set(res.keys)
        audience.append(np.mean([taste[k] == d for k in res.keys]))
    assert np.mean(precision) >= 0.9 and min(precision) >= 0.7
    assert np.mean(audience) >= 0.4  # chance 0.125
    with pytest.raises(InputError, match="is a product, not a campaign"):
        campaigns.campaign_products(emb, "tent-00000")


def test_read_next_in_the_shop(shop):
    ev, _, emb = shop
    taste = _tastes(ev)
    adept = dict(zip(ev.articles, ev.article_department, strict=True))
    purity = []
    for a in [a for a in ev.articles if a in emb]:
        res = content.read_next(emb, a, k=5)
        assert a not in [_name(k) for k in res.keys] and all(emb.type_of(k) == "article" for k in res.keys)
        purity.append(np.mean([adept[_name(k)] == adept[a] for k in res.keys]))
    assert np.mean(purity) >= 0.7  # chance 1/8
    mine = [content.read_next_for(emb, c, k=5) for c in ev.retail.customers[:150]]
    hits = np.mean(
        [
            adept[_name(k)] == taste[c]
            for c, res in zip(ev.retail.customers, mine, strict=False)
            for k in res.keys
        ]
    )
    assert hits >= 0.75


def test_read_next_in_reading_sessions(tmp_path):
    assert main(["datasets", "content", "-o", str(tmp_path / "c"), "--readers", "600"]) == 0
    data = content_sessions(600)  # the same seed: the planted answers of the files just written
    emb = retail.train_from_log(
        tmp_path / "c" / "reads.csv",
        basket_col="session_id",
        item_col="article_id",
        user_col="reader_id",
        time_col="timestamp",
        mode="sequence",
        window=2,
        dim=24,
        epochs=10,
        min_count=1,
        deterministic=True,
        seed=1,
        progress=False,
    )
    topic = dict(zip(data.articles, data.topic, strict=True))
    series, purity = [], []
    for a in data.articles:
        res = content.read_next(emb, a, k=5)
        purity.append(np.mean([topic[k] == topic[a] for k in res.keys]))
        nxt = f"{a[:-2]}{int(a[-2:]) + 1:02d}"
        if nxt in topic:
            series.append(nxt in res.keys[:3])  # the next article of the series
    assert np.mean(purity) >= 0.95 and np.mean(series) >= 0.85
    fav = {r: data.topics[f] for r, f in zip(data.readers, data.favourite.tolist(), strict=True)}
    reads = [content.read_next_for(emb, r, k=5) for r in data.readers[:100]]
    assert (
        np.mean([topic[k] == fav[r] for r, res in zip(data.readers, reads, strict=False) for k in res.keys])
        >= 0.5
    )
    recent = content.read_next(emb, ["camping-01", "camping-05"], k=5)
    assert {topic[k] for k in recent.keys} == {"camping"} and not {"camping-01", "camping-05"} & set(
        recent.keys
    )


# ------------------------------------------------------------------------------ the three front ends


def _cli(capsys, argv):
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_python_and_http_agree(shop, capsys):
    pytest.importorskip("fastapi")
    from test_service import Client

    from likewise.service import create_app
    from likewise.service.models import ModelSpec, Registry

    _, d, emb = shop
    m = str(d / "m")
    http = Client(create_app(Registry([ModelSpec("m", d / "m")], map_sample=50)))

    def keys(r):
        assert r.status_code == 200, r.text
        return [n["item"] for n in r.json()["answers"][0]["results"]]

    py = emb.similar("spring-outdoor", k=4, types="product").keys
    assert [
        n["item"]
        for n in _cli(capsys, ["similar", m, "spring-outdoor", "-k", "4", "--type", "product"])["answers"][0][
            "results"
        ]
    ] == py
    assert (
        keys(http.get("/models/m/similar", params={"item": "spring-outdoor", "k": 4, "types": "product"}))
        == py
    )

    py = campaigns.campaigns_for_customer(emb, "C000003", k=3).keys
    assert [
        r["item"] for r in _cli(capsys, ["campaigns", m, "C000003", "-k", "3"])["answers"][0]["results"]
    ] == py
    assert keys(http.post("/models/m/campaigns", json={"customer": "C000003", "k": 3})) == py
    assert retail.for_customer(emb, "C000003", 3, exclude_bought=False, types="campaign").keys == py
    opened = campaigns.campaigns_for_customer(emb, "C000003", k=16, exclude_opened=True).keys
    assert opened == retail.for_customer(emb, "C000003", 16, types="campaign").keys

    aud = ["C000003", "C000004", "C000010"]
    py = campaigns.campaigns_for_audience(emb, aud, k=3).keys
    assert [r["item"] for r in _cli(capsys, ["campaigns", m, *aud, "-k", "3"])["answers"][0]["results"]] == py
    assert keys(http.post("/models/m/campaigns", json={"customers": aud, "k": 3})) == py

    py = campaigns.campaign_products(emb, "summer-garden", k=5).keys
    assert [
        r["item"]
        for r in _cli(capsys, ["campaign-products", m, "summer-garden", "-k", "5"])["answers"][0]["results"]
    ] == py
    assert keys(http.get("/models/m/campaign_products", params={"campaign": "summer-garden", "k": 5})) == py

    py = campaigns.campaign_audience(emb, "summer-garden", k=5).keys
    out = _cli(capsys, ["campaign-audience", m, "summer-garden", "-k", "5"])
    assert [r["item"] for r in out["answers"][0]["results"]] == py and out["responders"] > 0
    r = http.post("/models/m/campaign_audience", json={"campaign": "summer-garden", "k": 5})
    assert keys(r) == py and r.json()["responders"] == out["responders"]

    py = content.read_next(emb, ["tent-guide", "trowel-guide"], k=4).keys
    assert [
        r["item"]
        for r in _cli(capsys, ["read-next", m, "tent-guide", "trowel-guide", "-k", "4"])["answers"][0][
            "results"
        ]
    ] == py
    assert (
        keys(http.post("/models/m/read_next", json={"articles": ["tent-guide", "trowel-guide"], "k": 4}))
        == py
    )
    py = content.read_next_for(emb, "C000007", k=4).keys
    assert [
        r["item"]
        for r in _cli(capsys, ["read-next", m, "--reader", "C000007", "-k", "4"])["answers"][0]["results"]
    ] == py
    assert keys(http.post("/models/m/read_next", json={"reader": "C000007", "k": 4})) == py

    py = retail.for_customer(emb, "C000007", 4, types="article").keys
    assert [
        r["item"]
        for r in _cli(capsys, ["for-customer", m, "C000007", "-k", "4", "--type", "article"])["answers"][0][
            "results"
        ]
    ] == py
    assert (
        keys(http.post("/models/m/for_customer", json={"customer": "C000007", "k": 4, "types": ["article"]}))
        == py
    )

    info = http.get("/models/m").json()
    assert info["types"]["counts"] == emb.types.counts() and info["placed"] == 0
    assert _cli(capsys, ["info", m])["types"] == emb.types.counts()
    mp = http.get("/models/m/map").json()
    assert mp["types"] == [emb.type_of(k) for k in mp["items"]] and mp["placed"] == []

    # errors name the bad value, on every front end
    r = http.get("/models/m/similar", params={"item": "spring-outdoor", "types": "campain"})
    assert r.status_code == 422 and "unknown type 'campain' (did you mean 'campaign'?)" in r.json()["error"]
    assert main(["campaign-products", m, "tent-00000"]) == 1
    assert "'product:tent-00000' is a product, not a campaign" in capsys.readouterr().err
    r = http.post("/models/m/read_next", json={"k": 3})
    assert r.status_code == 422 and "give articles" in r.json()["error"]


# --------------------------------------------------------------------------------- reading typed logs


def _log(tmp_path, text, name="events.csv"):
    (tmp_path / name).write_text(text)
    return tmp_path / name


def test_one_column_per_kind_reads_like_a_type_column(tmp_path):
    a = _log(tmp_path, "s,c,item,kind\n1,c1,tent,product\n1,c1,spring,campaign\n2,c2,tent,product\n", "a.csv")
    b = _log(tmp_path, "s,c,product_id,campaign_id\n1,c1,tent,\n1,c1,,spring\n2,c2,tent,\n", "b.csv")
    la = retail.read_order_log(a, basket_col="s", item_col="item", user_col="c", type_col="kind")
    lb = retail.read_order_log(
        b, basket_col="s", user_col="c", type_cols={"product": "product_id", "campaign": "campaign_id"}
    )
    assert sorted(la.item_keys) == sorted(lb.item_keys) == ["campaign:spring", "product:tent"]
    assert la.columns["type_col"] == "kind" and lb.columns["type_cols"] == {
        "product": "product_id",
        "campaign": "campaign_id",
    }


@pytest.mark.parametrize(
    ("text", "kwargs", "match"),
    [
        (
            "s,item,ev\n1,tent,view\n1,mat,add_to_cart\n",
            {"type_map": {"view": "product"}},
            r"'ev' value 'add_to_cart' is not in the type map \('view'\) in .*events\.csv at data row 2",
        ),
        ("s,item,ev\n1,tent,view\n1,mat,\n", {}, r"null 'ev' \(every row needs a type\) in .* at data row 2"),
        ("s,item,ev\n1,tent,attr\n", {}, r"type 'attr' is reserved for item attributes"),
        ("s,item,ev\n1,tent,pro:duct\n", {}, r"'ev' value 'pro:duct'"),
    ],
)
def test_bad_typed_logs_name_the_row(tmp_path, text, kwargs, match):
    path = _log(tmp_path, text)
    with pytest.raises(InputError, match=match):
        retail.read_order_log(path, basket_col="s", item_col="item", user_col=None, type_col="ev", **kwargs)


def test_bad_one_column_per_kind_logs(tmp_path):
    path = _log(tmp_path, "s,p,c\n1,tent,\n1,mat,spring\n")
    with pytest.raises(
        InputError, match=r"2 of the columns 'p', 'c' filled \(each row fills exactly one\) .* row 2"
    ):
        retail.read_order_log(
            path, basket_col="s", user_col=None, type_cols={"product": "p", "campaign": "c"}
        )
    with pytest.raises(InputError, match="not both"):
        retail.read_order_log(path, basket_col="s", user_col=None, type_col="p", type_cols={"product": "p"})


def test_typed_negatives_train_and_are_recorded(tmp_path):
    ev = shop_events(150, 120, seed=2)
    write_shop_events(ev, tmp_path / "ev")
    kw = dict(basket_col="session_id", item_col="item_id", user_col="customer_id", type_col="event")
    kw |= dict(type_map=SHOP_TYPE_MAP, dim=8, epochs=2, min_count=1, deterministic=True, progress=False)
    emb = retail.train_from_log(tmp_path / "ev" / "events.csv", typed_negatives=True, **kw)
    assert emb.config.typed_negatives is True and np.isfinite(emb.vectors).all()
    with pytest.raises(InputError, match="typed_negatives needs item types"):
        retail.train_from_log(
            tmp_path / "ev" / "events.csv",
            basket_col="session_id",
            item_col="item_id",
            typed_negatives=True,
            epochs=1,
            min_count=1,
            progress=False,
        )


def test_update_keeps_a_space_typed(shop, tmp_path):
    from likewise.retail.update import update

    ev, d, emb = shop
    new = tmp_path / "new.csv"
    new.write_text(
        "session_id,customer_id,item_id,event,timestamp\n"
        "9001,C000001,tent-00000,purchase,2027-06-01 10:00:00\n"
        "9001,C000001,autumn-outdoor,campaign_open,2027-06-01 10:00:00\n"
        "9001,C000001,tent-00000,view,2027-06-01 10:01:00\n"
    )
    up = update(d / "m", new, tmp_path / "m2", epochs=1)
    assert up.type_of("autumn-outdoor") == "campaign" and len(up) == len(emb) + 1
    assert Embeddings.load(tmp_path / "m2").types == up.types


def test_untyped_spaces_have_no_campaigns(shop):
    _, _, emb = shop
    plain = Embeddings(np.asarray(emb.vectors), Vocab(emb.keys, emb.counts))
    with pytest.raises(NotFittedError, match="no customer vectors"):
        campaigns.campaigns_for_customer(plain, "C000001")
    with pytest.raises(InputError, match="no item types"):
        retail.also_bought(plain, "product:tent-00000", types="campaign")
    assert Counter(plain.similar("product:tent-00000", k=50).keys) and plain.types is None


def test_the_facade_trains_a_typed_table():
    import pyarrow as pa

    import likewise

    table = pa.table(
        {
            "s": [1, 1, 2, 2, 3, 3] * 20,
            "item": ["tent", "spring", "tent", "mat", "mat", "spring"] * 20,
            "kind": ["product", "campaign", "product", "product", "product", "campaign"] * 20,
        }
    )
    emb = likewise.train(
        table, basket_col="s", item_col="item", type_col="kind", dim=4, epochs=2, min_count=1
    )
    assert emb.types.counts() == {"campaign": 1, "product": 2}
    assert emb.similar("tent", k=5, types="campaign").keys == ["campaign:spring"]


def test_campaign_queries_on_an_untyped_space_say_why() -> None:
    """An order log's space has products only: asking for a campaign says it needs a typed space,
    not 'unknown product'."""
    from likewise import Embeddings, Vocab
    from likewise.errors import InputError

    plain = Embeddings(np.eye(3, dtype=np.float32), Vocab(["a", "b", "c"]))
    with pytest.raises(InputError, match="no item types, so no campaign 'x'.*--type-col"):
        campaigns.campaign_products(plain, "x")  # (audiences ask for customer vectors first)
