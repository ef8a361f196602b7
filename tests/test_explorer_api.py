"""The explorer's server side, without a browser: item tables, name search, the t-SNE map and its progress."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

from test_service import Client, planted  # noqa: E402

from likewise.cli import main  # noqa: E402
from likewise.errors import InputError  # noqa: E402
from likewise.service import create_app  # noqa: E402
from likewise.service.attrs import read_item_attrs  # noqa: E402
from likewise.service.models import ModelSpec, Registry  # noqa: E402

BRANDS, KINDS = ["Alder", "Birch", "Cedar", "Delta"], ["tent", "kettle", "lamp", "mug"]
PRODUCTS = '"product_id","name","department","aisle","popularity"\n' + "".join(
    f'"g{g}_i{i}","{BRANDS[i % 4]} {KINDS[g % 4]} {i}","dept{g}","aisle{g}-{i % 2}",{(g * 10 + i) / 100}\n'
    for g in range(8)
    for i in range(10)
)


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    d = tmp_path_factory.mktemp("explorer-api")
    emb, _ = planted(0)
    emb.save(d / "shop")
    (d / "products.csv").write_text(PRODUCTS)
    return d, emb


def test_products_csv_as_it_is_names_and_columns(shop):
    d, emb = shop
    a = read_item_attrs(d / "products.csv", emb.keys)
    assert a.item_column == "product_id" and a.name_column == "name" and a.colour_column == "department"
    assert a.columns == ["name", "department", "aisle", "popularity"] and a.matched == 80 == a.rows
    i = emb.keys.index("g3_i5")
    assert a.name_of(i) == "Birch mug 5" and a.values["department"][i] == "dept3"
    # a numeric column with many values is coloured by quintile band, shown as written
    assert a.values["popularity"][i] == "0.35" and "–" in a.groups["popularity"][i]
    assert a.colourable == ["department", "aisle", "popularity"]


def test_item_column_found_by_name_or_by_values(shop, tmp_path):
    d, emb = shop
    # no column named like an item column: the one whose values are the model's keys
    (tmp_path / "odd.tsv").write_text("title\tcode\tshelf\nBig tent\tg0_i1\tA\nSmall tent\tg0_i2\tB\n")
    a = read_item_attrs(tmp_path / "odd.tsv", emb.keys)
    assert (a.item_column, a.name_column, a.matched) == ("code", "title", 2)
    # the quoted two-column CSV that loaded as an all-grey map: no header, item then label
    (tmp_path / "quoted.csv").write_text('"g0_i1","outdoor"\n"g0_i2","kitchen"\n')
    a = read_item_attrs(tmp_path / "quoted.csv", emb.keys)
    assert (a.item_column, a.matched, a.colour_column) == ("item", 2, "label")
    assert a.groups["label"][emb.keys.index("g0_i2")] == "kitchen"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("product_id,name\nzz1,Tent\nzz2,Mug\n", "name none of the 80 items of shop"),
        ("product_id,name\n", "no data rows"),
        ("product_id\ng0_i1\n", "one column"),
        (b"PAR1\x00\x01\x02", "not text"),
        ("product_id,name\ng0_i1,a\ng0_i1,b\n", "'g0_i1' appears twice"),
        ("", "is empty"),
    ],
)
def test_an_item_table_that_cannot_be_used_is_an_error(shop, tmp_path, content, expected):
    d, emb = shop
    f = tmp_path / "bad.csv"
    f.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(InputError, match=expected) as e:
        read_item_attrs(f, emb.keys, model="shop")
    assert str(f) in str(e.value)


def test_serve_refuses_a_file_that_names_no_item(shop, tmp_path, capsys):
    d, _ = shop
    (tmp_path / "other.csv").write_text("sku,name\nx1,Tent\n")
    rc = main(["serve", f"shop={d / 'shop'}", "--item-attrs", str(tmp_path / "other.csv"), "--port", "1"])
    err = capsys.readouterr().err
    assert rc == 1 and "name none of the 80 items of shop" in err and "'g" in err


def test_name_search_map_attributes_and_coords(shop):
    d, emb = shop
    app = create_app(Registry([ModelSpec("shop", d / "shop", d / "products.csv")], map_sample=50))
    http = Client(app)
    info = http.get("/models/shop").json()
    assert info["attributes"]["name_column"] == "name" and info["attributes"]["matched"] == 80
    assert "pca" in info["projections"]
    # typing a name finds the item (keys first, then names that start with it, then word matches)
    found = http.get("/models/shop/search", params={"prefix": "Birch mug 5"}).json()["items"]
    assert found[0] == {
        "item": "g3_i5",
        "id": emb.keys.index("g3_i5"),
        "count": int(emb.counts[emb.keys.index("g3_i5")]),
        "name": "Birch mug 5",
        "match": "name",
    }
    words = http.get("/models/shop/search", params={"prefix": "mug", "limit": 100}).json()["items"]
    assert {x["item"] for x in words} == {f"g{g}_i{i}" for g in (3, 7) for i in range(10)}
    mp = http.get("/models/shop/map").json()
    assert mp["projection"] == "pca" and mp["colour_column"] == "department"
    assert mp["labels"] == mp["attributes"]["department"] and set(mp["groups"]) == {"popularity"}
    assert mp["attributes"]["name"][0] == read_item_attrs(d / "products.csv", emb.keys).name_of(0)
    off = emb.keys[70]  # outside the sample of 50
    c = http.post("/models/shop/coords", json={"items": [off]}).json()
    assert c["attributes"]["department"] == [f"dept{off[1]}"] and c["labels"] == [f"dept{off[1]}"]


def test_tsne_map_answers_its_progress_then_the_map(shop):
    pytest.importorskip("openTSNE")
    d, emb = shop
    registry = Registry([ModelSpec("shop", d / "shop", d / "products.csv")], map_sample=60)
    http = Client(create_app(registry))
    assert http.get("/models/shop").json()["projections"] == ["pca", "tsne"]
    first = http.get("/models/shop/map", params={"projection": "tsne"})
    assert first.status_code == 200
    body = first.json()
    if body["status"] == "computing":  # its progress (how far it got is up to the scheduler)
        assert body["items"] == 60 and body["total"] == 750 and 0 <= body["done"] <= 750
    else:
        assert body["status"] == "ready" and body["projection"] == "tsne"
    served = registry.get("shop")
    job = served.projection_job(60, "tsne")
    assert job.wait(timeout=300) and job.error is None
    assert served.projection_job(60, "tsne") is job  # computed once per model version and map size
    mp = http.get("/models/shop/map", params={"projection": "tsne"})
    assert mp.status_code == 200
    mp = mp.json()
    pca = http.get("/models/shop/map").json()
    assert mp["status"] == pca["status"] == "ready"
    assert mp["projection"] == "tsne" and mp["items"] == pca["items"] and mp["x"] != pca["x"]
    assert mp["attributes"] == pca["attributes"]
    # an item on the map keeps its place; one outside it sits among its neighbours' places
    inside, outside = mp["items"][3], emb.keys[75]
    c = http.post("/models/shop/coords", json={"items": [inside, outside], "projection": "tsne"}).json()
    assert (c["x"][0], c["y"][0]) == (mp["x"][3], mp["y"][3])
    near = [mp["items"].index(k) for k in emb.similar(outside, k=10).keys if k in mp["items"]]
    xs = [mp["x"][i] for i in near]
    assert min(xs) - 1e-6 <= c["x"][1] <= max(xs) + 1e-6
    bad = http.get("/models/shop/map", params={"projection": "umap"})
    assert bad.status_code == 422
    assert "projection 'umap' needs umap-learn" in bad.json()["error"]  # as POST .../coords says
    # one t-SNE job per model version: at the server's map size only
    other = http.get("/models/shop/map", params={"projection": "tsne", "sample": 30})
    assert other.status_code == 422 and "--map-sample (60 items) only" in other.json()["error"]
    assert json.loads(json.dumps(mp))  # plain JSON


def test_a_model_trained_with_item_attributes_names_its_items_without_a_file(shop, tmp_path):
    """``train --item-attrs`` saves the rows of its items (item_table.json); serve uses them when no
    table is given, and an update or a placed version carries them."""
    from likewise import Embeddings
    from likewise.readers.attrs import item_table

    d, emb = shop
    table = item_table(d / "products.csv", None, emb.keys[:60])  # rows of items of the space only
    assert table["item_col"] == "product_id" and len(table["columns"]["name"]) == 60
    emb.item_table = table
    emb.save(tmp_path / "named")
    assert Embeddings.load(tmp_path / "named").item_table == table
    http = Client(create_app(Registry([ModelSpec("named", tmp_path / "named", None)], map_sample=50)))
    info = http.get("/models/named").json()
    assert info["attributes"]["name_column"] == "name" and info["attributes"]["matched"] == 60
    found = http.get("/models/named/search", params={"prefix": "Birch mug 5"}).json()["items"]
    assert found[0]["item"] == "g3_i5" and found[0]["name"] == "Birch mug 5"
    (tmp_path / "named" / "item_table.json").write_text('{"item_col": "x", "columns": {}}')
    with pytest.raises(Exception, match="item_table.json"):
        Embeddings.load(tmp_path / "named", verify=False)


def test_search_finds_attribute_values_key_substrings_and_typos(shop):
    d, emb = shop
    http = Client(create_app(Registry([ModelSpec("shop", d / "shop", d / "products.csv")], map_sample=50)))

    def found(q: str, limit: int = 100) -> list[tuple[str, str]]:
        items = http.get("/models/shop/search", params={"prefix": q, "limit": limit}).json()["items"]
        return [(x["item"], x["match"]) for x in items]

    # an attribute value (the aisle), most frequent first
    value = found("aisle3-1")
    assert {k for k, _ in value} == {f"g3_i{i}" for i in range(1, 10, 2)} and {h for _, h in value} == {
        "value"
    }
    assert [k for k, _ in value] == sorted((k for k, _ in value), key=emb.keys.index)
    # a key's middle
    assert {k for k, h in found("_i7")} == {f"g{g}_i7" for g in range(8)}
    # two mistyped words: each close to a word of the names ("Brich" ~ "Birch", "mgu" ~ "mug")
    close = found("Brich mgu")
    assert close and {h for _, h in close} == {"close"}
    assert {k for k, _ in close} == {f"g{g}_i{i}" for g in (3, 7) for i in range(10) if i % 4 == 1}
    assert found("qqqxqqq") == []
    # an unknown key's suggestions are the close names' keys
    r = http.get("/models/shop/similar", params={"item": "Brich mgu"})
    assert r.status_code == 404 and set(r.json()["suggestions"]) <= {k for k, _ in close}
    # answers of a kilobyte or more are compressed for clients that accept it
    mp = http.get("/models/shop/map", headers={"Accept-Encoding": "gzip"})
    assert mp.headers["content-encoding"] == "gzip" and mp.json()["projection"] == "pca"


def test_a_customer_answers_their_purchases_and_place(tmp_path):
    import pyarrow as pa

    import likewise
    from likewise.data.datasets import retail_orders

    data = retail_orders(120, 120, seed=2)
    emb = likewise.train(
        pa.table({"order": data.order_id, "product": data.product_id, "customer": data.customer_id}),
        basket_col="order",
        item_col="product",
        user_col="customer",
        dim=8,
        epochs=1,
        seed=0,
        progress=False,
    )
    emb.save(tmp_path / "shop")
    http = Client(create_app(Registry([ModelSpec("shop", tmp_path / "shop")], map_sample=50)))
    who = emb.customers.keys[5]
    c = http.get("/models/shop/customer", params={"customer": who, "k": 5}).json()
    bought = {emb.keys[i] for i in emb.customers.bought(who).tolist()}
    assert c["customer"] == who and c["products"] == len(bought) and len(c["bought"]) == min(5, len(bought))
    assert {b["item"] for b in c["bought"]} <= bought
    assert [b["baskets"] for b in c["bought"]] == sorted((b["baskets"] for b in c["bought"]), reverse=True)
    assert isinstance(c["x"], float) and isinstance(c["y"], float)
    r = http.get("/models/shop/customer", params={"customer": "nobody"})
    assert r.status_code == 404 and "unknown customer 'nobody'" in r.json()["error"]
    keys = http.get("/models/shop/customers", params={"prefix": who[:2], "limit": 3}).json()["customers"]
    assert len(keys) == 3 and all(k.startswith(who[:2]) for k in keys)


def test_umap_is_a_third_projection_when_umap_learn_is_there(shop, monkeypatch):
    """UMAP runs as the t-SNE job does; umap-learn is stood in for by a module whose UMAP returns the first
    two coordinates (the real one is the ``umap`` extra, not installed in CI)."""
    import importlib.machinery
    import sys
    import types

    import numpy as np

    from likewise.service import projection

    d, emb = shop
    http = Client(create_app(Registry([ModelSpec("shop", d / "shop", d / "products.csv")], map_sample=40)))
    if "umap" not in projection.available():  # as served without the extra: said, with the install line
        r = http.get("/models/shop/map", params={"projection": "umap"})
        assert r.status_code == 422 and "pip install '.[umap]' in the likewise clone" in r.json()["error"]
    fake = types.ModuleType("umap")
    fake.__spec__ = importlib.machinery.ModuleSpec("umap", None)
    seen: dict = {}

    class UMAP:
        def __init__(self, **kw):
            seen.update(kw)

        def fit_transform(self, x):
            return np.asarray(x)[:, :2] * 3.0 + 1.0

    fake.UMAP = UMAP
    monkeypatch.setitem(sys.modules, "umap", fake)
    registry = Registry([ModelSpec("shop", d / "shop", d / "products.csv")], map_sample=40)
    http = Client(create_app(registry))
    assert http.get("/models/shop").json()["projections"][-1] == "umap"
    http.get("/models/shop/map", params={"projection": "umap"})
    job = registry.get("shop").projection_job(40, "umap")
    assert job.wait(60) and job.error is None
    assert registry.get("shop").projection_job(40, "tsne") is not job  # its own job, beside t-SNE's
    mp = http.get("/models/shop/map", params={"projection": "umap"}).json()
    assert mp["status"] == "ready" and mp["projection"] == "umap" and len(mp["x"]) == 40
    x = np.asarray(emb.normed[:40, :2], dtype=np.float64)
    xy = x - x.mean(axis=0)
    xy /= xy.std()
    assert np.allclose(mp["x"], xy[:, 0], atol=1e-4) and np.allclose(mp["y"], xy[:, 1], atol=1e-4)
    assert seen["metric"] == "cosine" and seen["n_components"] == 2 and seen["random_state"] == 0
    off = http.post("/models/shop/coords", json={"items": [emb.keys[70]], "projection": "umap"}).json()
    assert len(off["x"]) == 1  # an item outside the map, near its neighbours there


def _catalogue(n: int = 300) -> tuple[list[str], str]:
    """``n`` product keys and a products.csv shaped like the Complete Journey's: a name, 30 departments,
    a brand of two values, a shelf of 60 values and a manufacturer id of 120 (whole numbers)."""
    keys = [f"p{i}" for i in range(n)]
    rows = ['"product_id","name","department","brand","shelf","manufacturer_id"']
    for i, k in enumerate(keys):
        brand = "National" if i % 3 else "Private"
        rows.append(f'"{k}","thing {i}","DEPT {i % 30:02d}","{brand}","shelf {i % 60}",{1000 + i % 120}')
    return keys, "\n".join(rows) + "\n"


def test_thirty_departments_colour_the_map_by_department_and_an_id_is_a_category(tmp_path):
    """30 departments (the Complete Journey has 30, its 50-household sample 25) are the default colour,
    each a value of its own; the manufacturer's id is never cut into numeric bands: its 120 values are
    the 39 most common and "other"; a shelf of 60 values the same."""
    keys, text = _catalogue()
    (tmp_path / "products.csv").write_text(text)
    a = read_item_attrs(tmp_path / "products.csv", keys)
    assert a.colour_column == "department"
    assert len(set(a.groups["department"])) == 30 and a.groups["department"] == a.values["department"]
    assert a.numeric == [] and "manufacturer_id" in a.colourable
    ids = a.groups["manufacturer_id"]
    assert not any("–" in g for g in ids)  # no band such as "1.02e+03 – 1.05e+03"
    assert len(set(ids)) == 40 and ids.count("other (81 values)") == 300 - 39 * 3
    assert ids[0] == "1000" and a.values["manufacturer_id"][0] == "1000"
    assert len(set(a.groups["shelf"])) == 40 and "other (21 values)" in a.groups["shelf"]
    assert all(g is None for g in a.groups["name"]) and "name" not in a.colourable  # all different


def test_what_is_an_id():
    import numpy as np

    from likewise._groups import id_like, top_groups

    for name in ("id", "manufacturer_id", "Store ID", "store-id", "storeId", "SKU_ID"):
        assert id_like(name), name
    for name in ("paid", "grid", "valid", "price", "idea"):
        assert not id_like(name), name
    assert id_like("code", np.arange(100.0) * 7)  # whole numbers, all different: codes
    assert not id_like("price", np.arange(100.0) / 3)  # fractions: an amount
    assert not id_like("size", np.arange(100.0) % 5)  # whole numbers that repeat: an amount
    assert top_groups(["a", "b", None]) == ["a", "b", None]
    assert top_groups(["a", "a", "b", "c", "d"], limit=3) == [
        "a",
        "a",
        "b",
        "other (2 values)",
        "other (2 values)",
    ]


def test_the_png_map_has_a_colour_and_a_legend_entry_for_each_of_thirty_labels(tmp_path, monkeypatch):
    """The PNG map follows the explorer's rule: 30 departments, 30 colours and 30 legend entries (tab20
    repeated its colours past 20 and dropped the legend); 50 labels, the 39 most common and "other"."""
    pytest.importorskip("matplotlib")
    import numpy as np

    from likewise import plot

    figs = []
    monkeypatch.setattr(plot, "_save", lambda fig, path: figs.append(fig) or path)
    names = [f"p{i}" for i in range(300)]
    coords = np.random.default_rng(0).standard_normal((300, 2))
    for n_labels, shown in ((30, 30), (50, 40)):
        labels = {k: f"dept {i % n_labels:02d}" for i, k in enumerate(names)}
        plot.plot_map(coords, names, tmp_path / "map.png", labels=labels, annotate=0)
        ax = figs[-1].axes[0]
        entries = [t.get_text() for t in ax.get_legend().get_texts()]
        assert len(entries) == shown
        colours = {tuple(c.get_facecolor()[0]) for c in ax.collections}
        assert len(colours) == shown
    assert entries[-1] == "other (11 values)"


def test_the_page_and_the_png_map_share_one_palette():
    """map.js's PALETTE and OTHER are likewise/_groups.py's, colour for colour."""
    import re
    from pathlib import Path

    from likewise._groups import MAX_GROUPS, OTHER_COLOUR, PALETTE

    js = (Path(__file__).parent.parent / "likewise" / "service" / "static" / "map.js").read_text()
    block = re.search(r"const PALETTE = \[(.*?)\];", js, re.S).group(1)
    assert tuple(re.findall(r'"(#[0-9a-f]{6})"', block)) == PALETTE and len(PALETTE) == MAX_GROUPS
    assert f'const OTHER = "{OTHER_COLOUR}";' in js
