"""The HTTP API: in-process through httpx's ASGI transport, and against a real uvicorn on loopback."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

from _live import live_server  # noqa: E402

from likewise import Embeddings, Row, Vocab  # noqa: E402
from likewise.cli import main  # noqa: E402
from likewise.data.datasets import planted_baskets  # noqa: E402
from likewise.errors import InputError  # noqa: E402
from likewise.service import create_app  # noqa: E402
from likewise.service.app import Limits  # noqa: E402
from likewise.service.models import ModelSpec, Registry, parse_model_arg  # noqa: E402


def planted(seed: int, n_groups: int = 8, group_size: int = 10) -> tuple[Embeddings, dict[str, str]]:
    """A space with a known answer: item ``g{g}_i{i}`` lies near the centre of group ``g``.

    Built directly (not trained) so these tests exercise the service, not the trainer. Ids follow
    descending counts, shuffled across groups, as a trained vocabulary's would.
    """
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((n_groups, 16))
    keys = [f"g{g}_i{i}" for g in range(n_groups) for i in range(group_size)]
    order = rng.permutation(len(keys))
    keys = [keys[j] for j in order]
    vecs = np.stack([centres[int(k[1 : k.index("_")])] for k in keys]) + 0.3 * rng.standard_normal(
        (len(keys), 16)
    )
    counts = np.sort(rng.integers(10, 1000, len(keys)))[::-1]
    emb = Embeddings(vecs, Vocab(keys, counts=counts))
    return emb, {k: k.split("_")[0] for k in keys}


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("service")
    emb, labels = planted(0)
    emb.save(d / "shop")
    (d / "labels.tsv").write_text("".join(f"{k}\t{v}\n" for k, v in labels.items()))
    emb2, _ = planted(1)
    emb2.save(d / "shop2")
    return {"shop": d / "shop", "shop2": d / "shop2", "labels": d / "labels.tsv"}


class Client:
    """A synchronous face over httpx.AsyncClient + ASGITransport (in-process, no sockets)."""

    def __init__(self, app, headers=None):
        self.app, self.headers = app, headers or {}

    def request(self, method: str, url: str, **kw):
        async def go():
            transport = httpx.ASGITransport(app=self.app)
            async with httpx.AsyncClient(
                transport=transport, base_url="http://test", headers=self.headers
            ) as c:
                return await c.request(method, url, **kw)

        return asyncio.run(go())

    def get(self, url, **kw):
        return self.request("GET", url, **kw)

    def post(self, url, **kw):
        return self.request("POST", url, **kw)


@pytest.fixture(scope="module")
def client(models) -> Client:
    specs = [ModelSpec("shop", models["shop"], models["labels"]), ModelSpec("other", models["shop2"])]
    return Client(
        create_app(Registry(specs, map_sample=50), limits=Limits(max_k=50, max_batch=20, max_body=4096))
    )


def test_health_models_and_info(client, models):
    assert client.get("/health").json() == {"status": "ok", "models": {"shop": 1, "other": 1}}
    listing = client.get("/models").json()
    assert listing["default"] == "shop" and [m["name"] for m in listing["models"]] == ["shop", "other"]
    info = client.get("/models/shop").json()
    emb = Embeddings.load(models["shop"])
    assert info["items"] == len(emb) == 80 and info["dim"] == 16 and info["fingerprint"] == emb.fingerprint
    assert info["index"] is None and info["labels"] is True
    doc = client.get("/openapi.json").json()
    assert "/models/{name}/similar" in doc["paths"] and "/models/{name}/recommend" in doc["paths"]
    # every query route documents the one envelope, as --json gives it
    queries = [
        p for p, ops in doc["paths"].items() for op in ops.values() if "Answers" in str(op["responses"])
    ]
    assert (
        len(queries) == 15
        and "/models/{name}/also_bought" in queries
        and "/models/{name}/place" not in queries
    )
    record = doc["components"]["schemas"]["AnswerRecord"]["properties"]
    assert set(record) == {"item", "id", "score", "name", "count"}


def test_queries_answer_what_the_library_answers(client, models):
    emb = Embeddings.load(models["shop"])
    r = client.get("/models/shop/similar", params={"item": "g0_i0", "k": 5})
    assert r.status_code == 200
    expected = emb.similar("g0_i0", k=5)
    assert [n["item"] for n in r.json()["answers"][0]["results"]] == expected.keys
    np.testing.assert_allclose(
        [n["score"] for n in r.json()["answers"][0]["results"]], expected.scores, atol=1e-6
    )
    # the planted structure: an item's neighbours are from its group
    assert all(n["item"].startswith("g0_") for n in r.json()["answers"][0]["results"])

    r = client.get("/models/shop/similar", params={"item": "#3", "k": 2})  # a row
    assert [n["id"] for n in r.json()["answers"][0]["results"]] == emb.similar(Row(3), k=2).ids.tolist()

    r = client.post(
        "/models/shop/similar", json={"items": ["g1_i1", "#5", 5, "nope"], "k": 3, "skip_unknown": True}
    )
    res = r.json()["answers"]
    assert [x["query"] for x in res] == ["g1_i1", "#5"]  # 5 is the key "5", which the shop lacks
    assert [n["item"] for n in res[0]["results"]] == emb.similar("g1_i1", k=3).keys

    vec = emb.vector("g2_i3").tolist()
    r = client.post("/models/shop/similar_vector", json={"vector": vec, "k": 4, "exclude": ["g2_i3"]})
    assert [n["item"] for n in r.json()["answers"][0]["results"]] == emb.similar("g2_i3", k=4).keys
    r = client.post("/models/shop/similar_vector", json={"vector": [vec, vec], "k": 2})
    assert len(r.json()["answers"]) == 2 and r.json()["answers"][0]["results"][0]["item"] == "g2_i3"

    r = client.post("/models/shop/recommend", json={"items": ["g3_i0", "g3_i1"], "k": 5})
    assert [n["item"] for n in r.json()["answers"][0]["results"]] == emb.recommend(
        ["g3_i0", "g3_i1"], k=5
    ).keys
    r = client.post("/models/shop/recommend", json={"items": ["g3_i0", "g3_i1"], "k": 5, "scoring": "cosine"})
    assert [n["item"] for n in r.json()["answers"][0]["results"]] == emb.recommend(
        ["g3_i0", "g3_i1"], k=5
    ).keys

    r = client.post("/models/shop/analogy", json={"a": "g1_i0", "b": "g1_i1", "c": "g2_i0", "k": 3})
    assert [n["item"] for n in r.json()["answers"][0]["results"]] == emb.analogy(
        "g1_i0", "g1_i1", "g2_i0", k=3
    ).keys

    # another model by name answers from its own space
    other = client.get("/models/other/similar", params={"item": "g0_i0", "k": 5}).json()
    assert [n["item"] for n in other["answers"][0]["results"]] == Embeddings.load(models["shop2"]).similar(
        "g0_i0", k=5
    ).keys


def test_prefix_search_and_map(client, models):
    emb = Embeddings.load(models["shop"])
    r = client.get("/models/shop/search", params={"prefix": "G4_I", "limit": 3}).json()
    g4 = [k for k in emb.keys if k.startswith("g4_i")][:3]  # most frequent first = lowest ids
    assert [x["item"] for x in r["items"]] == g4
    assert [x["count"] for x in r["items"]] == [int(emb.counts[emb.vocab.id(k)]) for k in g4]
    assert client.get("/models/shop/search", params={"prefix": "zz"}).json()["items"] == []

    mp = client.get("/models/shop/map").json()
    assert len(mp["items"]) == len(mp["x"]) == len(mp["y"]) == 50 and mp["sampled"] and mp["total"] == 80
    assert mp["items"] == emb.keys[:50]
    assert mp["labels"][0] == mp["items"][0].split("_")[0]  # planted labels are the group names
    small = client.get("/models/shop/map", params={"sample": 10}).json()
    assert len(small["items"]) == 10

    # the map is the PCA of likewise.plot; /coords places any item on the same axes
    from likewise.plot import pca_coords

    ref = pca_coords(emb.normed[:50], 2, normalize=False)
    np.testing.assert_allclose(np.c_[mp["x"], mp["y"]], ref, atol=1e-4)
    some = [emb.keys[3], emb.keys[70], emb.keys[79]]  # one on the map, two outside the sample
    c = client.post("/models/shop/coords", json={"items": some}).json()
    assert c["items"] == some and c["labels"] == [k.split("_")[0] for k in some]
    assert abs(c["x"][0] - mp["x"][3]) < 1e-4 and abs(c["y"][0] - mp["y"][3]) < 1e-4
    centred = emb.normed[[70, 79]].astype(np.float64) - emb.normed[:50].astype(np.float64).mean(axis=0)
    axes = np.linalg.lstsq(emb.normed[:50] - emb.normed[:50].mean(axis=0), ref, rcond=None)[0]
    np.testing.assert_allclose(np.c_[c["x"][1:], c["y"][1:]], centred @ axes, atol=1e-3)


@pytest.mark.parametrize(
    ("method", "url", "kw", "status", "needle"),
    [
        ("GET", "/models/shop/similar", {"params": {"item": "g0_ix"}}, 404, "did you mean"),
        ("GET", "/models/shop/similar", {"params": {"item": "#999"}}, 404, "out of range"),
        ("GET", "/models/nope/similar", {"params": {"item": "g0_i0"}}, 404, "unknown model 'nope'"),
        (
            "GET",
            "/models/shop/similar",
            {"params": {"item": "g0_i0", "k": 0}},
            422,
            "k == 0, must be between 1",
        ),
        ("GET", "/models/shop/similar", {"params": {"item": "g0_i0", "k": 51}}, 422, "k == 51"),
        ("GET", "/models/shop/similar", {"params": {"item": "g0_i0", "k": "x"}}, 422, "query.k"),
        ("GET", "/models/shop/similar", {}, 422, "query.item: Field required"),
        ("POST", "/models/shop/similar", {"json": {"items": ["g0_i0"] * 21}}, 422, "21 items in one request"),
        ("POST", "/models/shop/similar", {"json": {"items": []}}, 422, "items is empty"),
        (
            "POST",
            "/models/shop/similar_vector",
            {"json": {"vector": [1.0, 2.0]}},
            422,
            "length 2, expected 16",
        ),
        ("POST", "/models/shop/similar_vector", {"json": {"vector": [[1.0], [1.0, 2.0]]}}, 422, "one length"),
        ("POST", "/models/shop/similar_vector", {"json": {"vector": [1e39] * 16}}, 422, "NaN or infinite"),
        ("POST", "/models/shop/recommend", {"json": {"items": ["zzz"]}}, 404, "unknown item 'zzz'"),
        ("POST", "/models/shop/recommend", {"json": {"items": ["g0_i0"], "scoring": "x"}}, 422, "scoring =="),
        (
            "POST",
            "/models/shop/recommend",
            {"json": {"items": ["g0_i0"], "scoring": "affinity"}},
            422,
            "context",
        ),
        (
            "POST",
            "/models/shop/recommend",
            {"json": {"items": ["g0_i0"], "scoring": "itemitem"}},
            422,
            "needs the item-item model",
        ),
        ("POST", "/models/shop/analogy", {"json": {"a": 1, "b": 2, "c": 3, "method": "x"}}, 422, "method =="),
        ("POST", "/models/shop/similar", {"content": b"{" + b" " * 5000 + b"}"}, 413, "over the limit"),
        ("POST", "/models/shop/similar", {"content": b"{not json"}, 422, "JSON"),
        ("GET", "/models/shop/search", {"params": {"limit": 1000}}, 422, "limit == 1000"),
        ("GET", "/models/shop/map", {"params": {"sample": 1}}, 422, "sample == 1"),
        ("POST", "/models/shop/for_customer", {"json": {"customer": "c1"}}, 422, "has no customers"),
    ],
)
def test_errors_say_what_was_wrong(client, method, url, kw, status, needle):
    if "content" in kw:
        kw = {**kw, "headers": {"content-type": "application/json"}}
    r = client.request(method, url, **kw)
    assert r.status_code == status, r.text
    assert needle in r.json()["error"]


def test_unknown_item_answer_carries_suggestions(client):
    body = client.get("/models/shop/similar", params={"item": "g0_ix"}).json()
    assert (
        body["item"] == "g0_ix"
        and body["suggestions"]
        and all(s.startswith("g0_i") for s in body["suggestions"])
    )


def test_chunked_body_over_the_limit_is_refused(client):
    async def chunks():  # no Content-Length: the body is counted as it streams in
        for _ in range(10):
            yield b" " * 1000

    r = client.post("/models/shop/similar", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413


def test_token_guards_the_api_but_not_the_page(models):
    c = Client(create_app([ModelSpec("shop", models["shop"])], token="s3cret"))
    assert c.get("/models/shop/similar", params={"item": "g0_i0"}).status_code == 401
    bad = c.get("/models", headers={"Authorization": "Bearer wrong"})
    assert bad.status_code == 401 and "token" in bad.json()["error"]
    ok = c.get("/models/shop/similar", params={"item": "g0_i0"}, headers={"Authorization": "Bearer s3cret"})
    assert ok.status_code == 200
    assert c.get("/").status_code == 200 and c.get("/static/app.js").status_code == 200
    assert c.get("/health").status_code == 200


def test_page_and_assets_are_served_from_the_package(client):
    page = client.get("/")
    assert page.status_code == 200 and "likewise explorer" in page.text
    for asset in ("app.js", "panels.js", "map.js", "style.css"):
        r = client.get(f"/static/{asset}")
        assert r.status_code == 200 and len(r.text) > 100
    assert "http://" not in page.text and "https://" not in page.text  # no CDN


def test_model_names_are_validated():
    for bad in ("../etc", "a/b", "", ".hidden", "x" * 65, "a b"):
        with pytest.raises(InputError, match="not allowed"):
            ModelSpec(bad, Path("."))
    assert parse_model_arg("shop=/tmp/m").name == "shop"
    assert parse_model_arg("/data/models/big-2024/").name == "big-2024"
    # '.' is the current folder, named by its own name (it said "model name ''" before)
    assert parse_model_arg(".").name == Path.cwd().name
    with pytest.raises(InputError, match="names no folder"):
        parse_model_arg("/")
    with pytest.raises(InputError, match="given twice"):
        Registry([ModelSpec("a", Path("x")), ModelSpec("a", Path("y"))])


def test_serve_refuses_a_public_bind_without_a_token(models, capsys, monkeypatch):
    monkeypatch.delenv("LIKEWISE_TOKEN", raising=False)
    assert main(["serve", str(models["shop"]), "--host", "0.0.0.0"]) == 1
    assert "--token" in capsys.readouterr().err


def test_reload_swaps_in_a_new_version(tmp_path, models):
    path = tmp_path / "m"
    Embeddings.load(models["shop"]).save(path)
    c = Client(create_app([ModelSpec("m", path)]))
    before = c.get("/models/m").json()
    new = Embeddings.load(models["shop2"])
    new.save(path, overwrite=True)
    after = c.post("/models/m/reload").json()
    assert after["version"] == before["version"] + 1 and after["fingerprint"] == new.fingerprint
    r = c.get("/models/m/similar", params={"item": "g0_i0", "k": 3}).json()
    assert [n["item"] for n in r["answers"][0]["results"]] == new.similar("g0_i0", k=3).keys

    # a damaged folder: the reload fails with 503 and the loaded version keeps answering
    (path / "garbage").write_bytes(b"garbage")
    os.replace(path / "garbage", path / "vectors.npy")  # a new file: the served version's map stays valid
    st = os.stat(path / "manifest.json")  # the folder's identity changes (else a reload is a no-op)
    os.utime(path / "manifest.json", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    bad = c.post("/models/m/reload")
    assert bad.status_code == 503 and "keeps serving" in bad.json()["error"]
    assert c.get("/models/m").json()["version"] == after["version"]
    assert c.get("/models/m/similar", params={"item": "g0_i0", "k": 3}).status_code == 200


# ---- a real server ---------------------------------------------------------------------------------------


@pytest.fixture()
def server(tmp_path, models):
    path = tmp_path / "live"
    Embeddings.load(models["shop"]).save(path)
    with live_server([f"live={path}", "--watch", "0.2"]) as (base, _):
        yield base, path


def test_real_server_answers_and_swaps_models_with_no_failed_request(server, models):
    base, path = server
    new = Embeddings.load(models["shop2"])
    stop = threading.Event()
    failures: list[str] = []
    counts = {"ok": 0}
    lock = threading.Lock()

    def hammer() -> None:
        with httpx.Client(base_url=base, timeout=10) as c:
            while not stop.is_set():
                r = c.get("/models/live/similar", params={"item": "g0_i0", "k": 5})
                with lock:
                    if r.status_code == 200 and len(r.json()["answers"][0]["results"]) == 5:
                        counts["ok"] += 1
                    else:
                        failures.append(f"{r.status_code} {r.text[:200]}")

    with ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(hammer) for _ in range(4)]
        time.sleep(0.3)
        with httpx.Client(base_url=base, timeout=30) as admin:
            for _ in range(3):  # explicit reloads while requests are in flight: nothing new, no new version
                assert admin.post("/models/live/reload").status_code == 200
            v = admin.get("/health").json()["models"]["live"]
            assert v == 1
            new.save(path, overwrite=True)  # a new version on disk: the file watch swaps it in
            deadline = time.monotonic() + 20
            while admin.get("/models/live").json()["fingerprint"] != new.fingerprint:
                assert time.monotonic() < deadline, "the watched model was not swapped in"
                time.sleep(0.1)
        time.sleep(0.3)
        stop.set()
        for f in futures:
            f.result()
    assert failures == []
    assert counts["ok"] > 20
    r = httpx.get(base + "/models/live/similar", params={"item": "g0_i0", "k": 3}).json()
    assert [n["item"] for n in r["answers"][0]["results"]] == new.similar("g0_i0", k=3).keys
    page = httpx.get(base + "/")
    assert page.status_code == 200 and "likewise explorer" in page.text
    assert json.loads(httpx.get(base + "/openapi.json").text)["info"]["title"] == "likewise"


def test_customer_endpoints_answer_what_retail_answers(tmp_path):
    retail = pytest.importorskip("likewise.retail")
    baskets, _ = planted_baskets(n_groups=6, group_size=8, n_baskets=1500, noise=0.05, seed=0)
    rng = np.random.default_rng(0)
    lines = ["order_id,product_id,customer_id"]
    for o, b in enumerate(baskets):
        group = b[0].split("_")[0]
        customer = f"c{group}_{rng.integers(0, 10)}"  # customers loyal to one group
        lines += [f"o{o},{item},{customer}" for item in b]
    (tmp_path / "orders.csv").write_text("\n".join(lines) + "\n")
    emb = retail.train_from_log(
        tmp_path / "orders.csv", dim=16, epochs=3, min_count=1, deterministic=True, seed=1, progress=False
    )
    emb.save(tmp_path / "m")
    emb = Embeddings.load(tmp_path / "m")
    c = Client(create_app([ModelSpec("retail", tmp_path / "m")]))
    assert c.get("/models/retail").json()["customers"] is True

    def items(r):
        assert r.status_code == 200, r.text
        return [n["item"] for n in r.json()["answers"][0]["results"]]

    assert items(c.post("/models/retail/for_customer", json={"customer": "cg1_3", "k": 5})) == (
        retail.for_customer(emb, "cg1_3", 5).keys
    )
    assert items(c.post("/models/retail/similar_customers", json={"customer": "cg1_3", "k": 3})) == (
        retail.similar_customers(emb, "cg1_3", 3).keys
    )
    assert items(c.get("/models/retail/also_bought", params={"item": "g1_i1", "k": 3})) == (
        retail.also_bought(emb, "g1_i1", 3).keys
    )
    assert items(c.post("/models/retail/complete_basket", json={"items": ["g1_i1", "g1_i2"], "k": 3})) == (
        retail.complete_basket(emb, ["g1_i1", "g1_i2"], 3).keys
    )
    assert items(c.post("/models/retail/lookalike", json={"seeds": ["cg1_3", "cg1_4"], "k": 3})) == (
        retail.lookalike(emb, ["cg1_3", "cg1_4"], 3).keys
    )
    # skip_unknown is honoured by complete_basket (it was ignored: an unknown item was a 404), and a body
    # without k gets the library's default (lookalike's is 100; HTTP said 10)
    body = {"items": ["g1_i1", "nope"], "k": 3, "skip_unknown": True}
    assert items(c.post("/models/retail/complete_basket", json=body)) == (
        retail.complete_basket(emb, ["g1_i1", "nope"], 3, on_unknown="skip").keys
    )
    assert items(c.post("/models/retail/lookalike", json={"seeds": ["cg1_3"]})) == (
        retail.lookalike(emb, ["cg1_3"]).keys
    )
    r = c.post("/models/retail/for_customer", json={"customer": "nobody"})
    assert r.status_code == 404 and "unknown customer 'nobody'" in r.json()["error"]


def test_app_factory_for_worker_processes_reads_the_environment(models, monkeypatch):
    from likewise.service.app import app_from_env

    config = {
        "models": [{"name": "shop", "path": str(models["shop"]), "labels": str(models["labels"])}],
        "map_sample": 20,
        "limits": {"max_k": 7, "max_batch": 3, "max_body": 1000},
        "watch_seconds": 0,
    }
    monkeypatch.setenv("LIKEWISE_SERVE_CONFIG", json.dumps(config))
    monkeypatch.setenv("LIKEWISE_TOKEN", "tok")
    # without allowed_hosts the factory answers loopback names only (the test client sends Host: test)
    refused = Client(app_from_env(), headers={"Authorization": "Bearer tok"}).get("/models")
    assert refused.status_code == 400 and "--allow-host" in refused.json()["error"]
    monkeypatch.setenv("LIKEWISE_SERVE_CONFIG", json.dumps({**config, "allowed_hosts": ["test"]}))
    c = Client(app_from_env(), headers={"Authorization": "Bearer tok"})
    assert len(c.get("/models/shop/map").json()["items"]) == 20
    assert c.get("/models/shop/similar", params={"item": "g0_i0", "k": 8}).status_code == 422
    assert c.get("/models/shop/similar", params={"item": "g0_i0", "k": 7}).status_code == 200
    assert Client(app_from_env()).get("/models").status_code == 401


def test_two_apps_in_one_process_each_check_their_own_limits(models):
    """The request models are declared once; each app's limits are checked (and documented) as its own."""
    specs = [ModelSpec("shop", models["shop"])]
    small = Client(create_app(Registry(specs), limits=Limits(max_k=3, max_key=10)))
    large = Client(create_app(Registry(specs), limits=Limits(max_k=30)))
    body = {"items": ["g0_i0"], "k": 5}
    assert small.post("/models/shop/similar", json=body).json()["error"] == "k == 5, must be between 1 and 3"
    assert large.post("/models/shop/similar", json=body).status_code == 200
    assert (
        "over the limit of 10" in small.get("/models/shop/similar", params={"item": "g" * 11}).json()["error"]
    )
    k_small = small.get("/openapi.json").json()["components"]["schemas"]["SimilarBody"]["properties"]["k"]
    k_large = large.get("/openapi.json").json()["components"]["schemas"]["SimilarBody"]["properties"]["k"]
    assert (k_small["maximum"], k_large["maximum"]) == (3, 30)


def test_serve_config_is_one_object_and_round_trips(models):
    from likewise.service.app import app_from_config
    from likewise.service.config import ServeConfig

    config = ServeConfig(
        models=(ModelSpec("shop", models["shop"], models["labels"]),),
        token="tok",
        limits=Limits(max_k=7),
        map_sample=20,
        allowed_hosts=("test",),
    )
    assert ServeConfig.from_json(config.to_json()) == config
    c = Client(app_from_config(config), headers={"Authorization": "Bearer tok"})
    assert len(c.get("/models/shop/map").json()["items"]) == 20
    assert c.get("/models/shop/similar", params={"item": "g0_i0", "k": 8}).status_code == 422
    assert Client(app_from_config(config)).get("/models").status_code == 401


def test_unknown_item_error_keeps_what_it_names():
    from likewise.errors import UnknownItemError

    e = UnknownItemError("nobody", ["nobody1"], what="customer")
    assert (e.what, e.key, e.suggestions) == ("customer", "nobody", ["nobody1"])
    assert str(e) == "unknown customer 'nobody' — did you mean 'nobody1'?"
