"""The service under hostile or careless clients (issue 14, items 1-6e): each test failed before the fix.

In-process through httpx's ASGI transport, and against a real server on loopback for what only a real
server shows (the Host header check of ``likewise serve``, the token file).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from likewise.errors import UnknownItemError  # noqa: E402

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

from _live import live_server  # noqa: E402

from likewise import Embeddings, Vocab  # noqa: E402
from likewise.cli import main  # noqa: E402
from likewise.service import create_app  # noqa: E402
from likewise.service import respond as respond_module  # noqa: E402
from likewise.service.app import Limits, watch_models  # noqa: E402
from likewise.service.models import MAP_CACHE, PREFIX_TRIES, ModelSpec, Registry  # noqa: E402


def planted(seed: int = 0, n_groups: int = 5, size: int = 6) -> Embeddings:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((n_groups, 8))
    keys = [f"g{g}_i{i}" for g in range(n_groups) for i in range(size)]
    vecs = np.repeat(centres, size, axis=0) + 0.2 * rng.standard_normal((len(keys), 8))
    return Embeddings(vecs, Vocab(keys, counts=np.arange(len(keys), 0, -1) * 10))


@pytest.fixture(scope="module")
def shop(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("rel") / "shop"
    planted().save(path)
    return path


def _touch(path: Path, step: int) -> None:
    """Give ``path`` a new mtime, ``step`` seconds past its own: a new identity, set, not waited for."""
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + step * 1_000_000_000))


def make_app(path: Path, **kw):
    limits = kw.pop("limits", Limits(max_k=50, max_batch=20, max_body=1 << 20, max_key=100, max_results=200))
    return create_app(Registry([ModelSpec("shop", path)], map_sample=10), limits=limits, **kw)


def call(app, method: str, url: str, **kw) -> httpx.Response:
    async def go():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
            return await c.request(method, url, **kw)

    return asyncio.run(go())


# ---- 1. a huge unknown key ---------------------------------------------------------------------------


def test_a_huge_key_is_refused_at_once_and_never_echoed_whole(shop):
    app = make_app(shop)
    key = "x" * 250_000
    for method, url, kw in [
        ("POST", "/models/shop/similar", {"json": {"items": [key]}}),
        ("GET", "/models/shop/similar", {"params": {"item": key[:20_000]}}),  # httpx caps a URL's length
        ("POST", "/models/shop/recommend", {"json": {"items": ["g0_i0", key]}}),
    ]:
        r = call(app, method, url, **kw)
        assert r.status_code == 422, r.text
        assert "over the limit of 100" in r.json()["error"] and len(r.content) < 2000


def test_suggestions_for_a_long_unknown_key_do_bounded_work(shop, monkeypatch):
    app = make_app(shop)
    served = app.state.registry.get("shop")
    calls = []
    real = served.search_prefix
    monkeypatch.setattr(served, "search_prefix", lambda p, n: calls.append(p) or real(p, n))
    r = call(app, "GET", "/models/shop/similar", params={"item": "g0_i" + "q" * 95})  # under max_key
    assert r.status_code == 404 and r.json()["suggestions"]  # g0_i... found by prefix
    assert 0 < len(calls) <= PREFIX_TRIES  # was one prefix search per character of the key


def test_a_slow_query_does_not_hold_up_other_requests(shop, monkeypatch):
    """A query blocks (on an event, not a clock) until another request has been answered."""
    app = make_app(shop)
    served = app.state.registry.get("shop")
    started, release = threading.Event(), threading.Event()
    real = served.emb.similar

    def blocking(*a, **kw):
        started.set()
        release.wait(10)  # only the failure path waits this long
        return real(*a, **kw)

    monkeypatch.setattr(served.emb, "similar", blocking)
    order: list[str] = []

    async def go():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:

            async def slow():
                r = await c.get("/models/shop/similar", params={"item": "g0_i0"})
                order.append("slow")
                return r

            task = asyncio.create_task(slow())
            while not started.is_set():
                await asyncio.sleep(0.01)
            other = await c.get("/models/shop/search", params={"prefix": "g1"})
            order.append("other" if not release.is_set() else "other-after")
            release.set()
            return other, await task

    other, slow_answer = asyncio.run(go())
    assert order == ["other", "slow"]
    assert other.status_code == 200 and slow_answer.status_code == 200


# ---- 2. the map cache --------------------------------------------------------------------------------


def test_map_cache_stays_bounded_under_distinct_sizes(shop):
    app = make_app(shop)
    served = app.state.registry.get("shop")
    for n in range(2, 2 + 3 * MAP_CACHE):
        assert call(app, "GET", "/models/shop/map", params={"sample": n}).status_code == 200
        assert (
            call(app, "POST", "/models/shop/coords", json={"items": ["g0_i0"], "sample": n}).status_code
            == 200
        )
    assert len(served._maps) <= MAP_CACHE


# ---- 3. the watcher survives an unexpected error ------------------------------------------------------


def test_watcher_logs_keeps_serving_and_keeps_watching(tmp_path, caplog):
    path = tmp_path / "m"
    planted(0).save(path)
    registry = Registry([ModelSpec("m", path)], map_sample=10)
    real_load = registry._load
    failures = iter([KeyError("index"), TypeError("bad manifest")])

    def flaky(spec, version):
        err = next(failures, None)
        if err is not None:
            raise err
        return real_load(spec, version)

    registry._load = flaky  # type: ignore[method-assign]
    new = planted(1)
    new.save(path, overwrite=True)

    async def go():
        task = asyncio.create_task(watch_models(registry, 0.01))
        deadline = time.monotonic() + 20
        while registry.get("m").version == 1 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        task.cancel()

    with caplog.at_level(logging.WARNING, logger="likewise.service"):
        asyncio.run(go())
    assert registry.get("m").version == 2 and registry.get("m").emb.fingerprint == new.fingerprint
    assert "KeyError" in caplog.text and "keeps serving" in caplog.text


# ---- 4, 6c. Host and Origin --------------------------------------------------------------------------


def test_foreign_host_headers_are_refused_and_no_cors_is_sent(shop):
    app = make_app(shop, allowed_hosts=["localhost", "127.0.0.1", "::1"])
    ok = call(app, "GET", "/models", headers={"Host": "127.0.0.1:8000"})
    assert ok.status_code == 200
    for host in ("attacker.example", "attacker.example:8000", "localhost.attacker.example"):
        r = call(app, "GET", "/models", headers={"Host": host})
        assert r.status_code == 400 and host in r.json()["error"] and "--allow-host" in r.json()["error"]
    pre = call(
        app,
        "OPTIONS",
        "/models/shop/similar",
        headers={"Origin": "http://attacker.example", "Access-Control-Request-Method": "POST"},
    )
    assert pre.status_code == 204 and not any(h.startswith("access-control-") for h in pre.headers)
    got = call(app, "GET", "/models", headers={"Origin": "http://attacker.example"})
    assert not any(h.startswith("access-control-") for h in got.headers)


def test_cross_origin_state_changes_are_refused(shop, tmp_path):
    path = tmp_path / "m"
    planted(0).save(path)
    app = make_app(path)
    registry = app.state.registry
    r = call(app, "POST", "/models/shop/reload", headers={"Origin": "http://attacker.example"})
    assert r.status_code == 403 and "attacker.example" in r.json()["error"]
    assert registry.get("shop").version == 1
    q = call(app, "POST", "/models/shop/similar", json={"items": ["g0_i0"]}, headers={"Origin": "null"})
    assert q.status_code == 403
    _touch(path / "manifest.json", 1)  # something new on disk: a reload makes a version (else it is a no-op)
    same = call(app, "POST", "/models/shop/reload", headers={"Origin": "http://localhost"})
    assert same.status_code == 200 and registry.get("shop").version == 2


# ---- 6b. sizes ---------------------------------------------------------------------------------------


def test_every_size_in_a_request_is_bounded(shop):
    app = make_app(shop)
    v = [0.1] * 8
    too_many = call(app, "POST", "/models/shop/similar_vector", json={"vector": v, "exclude": ["g0_i0"] * 21})
    assert (
        too_many.status_code == 422
        and "21 exclude in one request, the limit is 20" in too_many.json()["error"]
    )
    big = call(app, "POST", "/models/shop/similar", json={"items": ["g0_i0"] * 5, "k": 50})
    assert big.status_code == 422 and "250 neighbours" in big.json()["error"]
    batch = call(app, "POST", "/models/shop/similar_vector", json={"vector": [v] * 5, "k": 41})
    assert batch.status_code == 422 and "the limit is 200" in batch.json()["error"]
    assert (
        call(app, "POST", "/models/shop/similar", json={"items": ["g0_i0"] * 4, "k": 50}).status_code == 200
    )


def test_answers_are_built_off_the_event_loop(shop, monkeypatch):
    app = make_app(shop)
    loop_threads: list[int] = []
    where: list[int] = []
    real = respond_module.dumps
    monkeypatch.setattr(
        respond_module, "dumps", lambda payload: where.append(threading.get_ident()) or real(payload)
    )

    async def go():
        loop_threads.append(threading.get_ident())
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
            for method, url, kw in [
                ("POST", "/models/shop/similar", {"json": {"items": ["g0_i0", "g1_i1"], "k": 5}}),
                ("GET", "/models/shop/similar", {"params": {"item": "g0_i0"}}),
                ("GET", "/models/shop/map", {"params": {"sample": 7}}),
                ("POST", "/models/shop/similar_vector", {"json": {"vector": [[0.1] * 8] * 3}}),
            ]:
                assert (await c.request(method, url, **kw)).status_code == 200

    asyncio.run(go())
    assert len(where) == 4 and loop_threads[0] not in where


# ---- 6d. strict values -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url, body, status, needle",
    [
        ("/models/shop/similar", {"items": [True]}, 422, "items.0 == true"),
        ("/models/shop/similar", {"items": ["g0_i0"], "k": True}, 422, "(got true)"),
        ("/models/shop/similar", {"items": ["g0_i0"], "skip_unknown": 1}, 422, "(got 1)"),
        ("/models/shop/analogy", {"a": False, "b": 1, "c": 2}, 422, "a == false"),
        ("/models/shop/similar", {"items": ["#\u0663"]}, 422, "'#\u0663': a row number after"),
        ("/models/shop/similar", {"items": ["#\u00b2"]}, 422, "'#\u00b2': a row number after"),
        ("/models/shop/similar", {"items": [2**63]}, 404, "unknown item '9223372036854775808'"),
        (
            "/models/shop/similar",
            {"items": [f"#{2**63}"]},
            404,
            "item row 9223372036854775808 is out of range",
        ),
        ("/models/shop/similar", {"items": [2**70]}, 404, str(2**70)),
        ("/models/shop/similar", {"items": [1.0]}, 422, "items.0 == 1.0"),
        ("/models/shop/similar_vector", {"vector": [0.0] * 8}, 422, "all zeros"),
        ("/models/shop/similar_vector", {"vector": [[0.1] * 8, [0] * 8]}, 422, "(row 1) is all zeros"),
        ("/models/shop/similar", {"items": ["a\ud800b"]}, 422, "lone surrogate U+D800"),
    ],
)
def test_strict_values_get_a_clear_4xx_showing_the_value(shop, url, body, status, needle):
    import json

    r = call(
        make_app(shop), "POST", url, content=json.dumps(body), headers={"content-type": "application/json"}
    )
    assert r.status_code == status, r.text
    assert needle in r.json()["error"]


def test_ids_after_hash_in_ascii_digits_still_work(shop):
    r = call(make_app(shop), "GET", "/models/shop/similar", params={"item": "#3", "k": 2})
    assert r.status_code == 200 and r.json()["answers"][0]["results"]


# ---- 6e. the schema and the methods ------------------------------------------------------------------


def test_schema_documents_every_status_and_limit(shop):
    app = make_app(shop)
    doc = call(app, "GET", "/openapi.json").json()
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            codes = set(op["responses"])
            assert {"400", "403", "404", "405", "413", "422", "503"} <= codes, (method, path, codes)
            for code in codes - {"200"}:
                ref = op["responses"][code]["content"]["application/json"]["schema"]["$ref"]
                assert ref.endswith("/ErrorBody"), (method, path, code)
    schemas = doc["components"]["schemas"]
    k = schemas["SimilarBody"]["properties"]["k"]
    assert (k["minimum"], k["maximum"]) == (1, 50)
    items = schemas["SimilarBody"]["properties"]["items"]
    assert (items["minItems"], items["maxItems"]) == (1, 20)
    assert items["items"]["anyOf"][0]["maxLength"] == 100
    params = {p["name"]: p["schema"] for p in doc["paths"]["/models/{name}/similar"]["get"]["parameters"]}
    assert (params["k"]["minimum"], params["k"]["maximum"]) == (1, 50)
    sample = {p["name"]: p["schema"] for p in doc["paths"]["/models/{name}/map"]["get"]["parameters"]}[
        "sample"
    ]
    assert (sample["anyOf"][0]["minimum"], sample["anyOf"][0]["maximum"]) == (2, 20000)
    tokened = call(make_app(shop, token="t"), "GET", "/openapi.json").json()
    assert "401" in tokened["paths"]["/models"]["get"]["responses"]


def test_options_and_wrong_methods_answer_with_the_whole_allow(shop):
    app = make_app(shop)
    opt = call(app, "OPTIONS", "/models/shop/similar")
    assert opt.status_code == 204 and set(opt.headers["allow"].split(", ")) == {
        "GET",
        "HEAD",
        "OPTIONS",
        "POST",
    }
    bad = call(app, "DELETE", "/models/shop/similar")
    assert bad.status_code == 405 and set(bad.headers["allow"].split(", ")) >= {"GET", "POST"}
    assert "DELETE" in bad.json()["error"]
    assert call(app, "GET", "/models/shop/reload").status_code == 405
    missing = call(app, "GET", "/no/such/route")
    assert missing.status_code == 404 and "error" in missing.json()


# ---- 4, 5. a real server: Host check, token file ----------------------------------------------------


def test_real_server_checks_host_and_reads_the_token_from_a_file(shop, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("s3cret-token\n")
    args = [str(shop), "--token-file", str(token_file), "--allow-host", "models.internal", "--watch", "0"]
    with live_server(args) as (base, proc):
        auth = {"Authorization": "Bearer s3cret-token"}
        assert httpx.get(base + "/models", timeout=10).status_code == 401
        assert httpx.get(base + "/models", headers=auth, timeout=10).status_code == 200
        rebound = httpx.get(base + "/models", headers={**auth, "Host": "attacker.example"}, timeout=10)
        assert rebound.status_code == 400
        named = httpx.get(base + "/models", headers={**auth, "Host": "models.internal:80"}, timeout=10)
        assert named.status_code == 200
    assert b"s3cret-token" not in " ".join(proc.args).encode()  # the token never was on the command line


def test_token_file_problems_and_help(shop, tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.write_text("\n")
    assert main(["serve", str(shop), "--token-file", str(empty)]) == 1
    assert "empty" in capsys.readouterr().err
    assert main(["serve", str(shop), "--token-file", str(tmp_path / "absent")]) == 1
    assert "cannot be read" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--token-file" in text and "LIKEWISE_TOKEN" in text and "ps" in text and "--allow-host" in text


# ---- issue 43: work bounded by the server, not by what clients ask ------------------------------------


def test_one_projection_job_per_model_whatever_the_versions(tmp_path, monkeypatch):
    """Reload, then ask for the t-SNE map, 20 times: 20 t-SNE jobs ran at once (one per version). Now a
    model has one job at a time on the server's projection runner; a newer version's cancels the older."""
    from likewise.service import projection

    path = tmp_path / "m"
    planted(0).save(path)
    app = make_app(path)
    lock, release = threading.Lock(), threading.Event()
    state = {"running": 0, "peak": 0}

    def fake_tsne(x, *, seed=0, progress=None):  # counts jobs running at once; runs until released
        with lock:
            state["running"] += 1
            state["peak"] = max(state["peak"], state["running"])
        try:
            while not release.wait(0.005):
                if progress(0, 1):  # cancelled
                    break
            return np.zeros((len(x), 2))
        finally:
            with lock:
                state["running"] -= 1

    monkeypatch.setattr(projection, "available", lambda: ["pca", "tsne"])
    monkeypatch.setattr(projection, "tsne", fake_tsne)
    jobs = []
    try:
        for i in range(20):
            _touch(path / "manifest.json", i + 1)
            assert call(app, "POST", "/models/shop/reload").json()["version"] == i + 2
            r = call(app, "GET", "/models/shop/map", params={"projection": "tsne"})
            assert r.status_code == 200 and r.json()["status"] == "computing", r.text
            jobs.append(app.state.registry.get("shop").projection_job(10, "tsne"))
        assert all(j.cancelled and "superseded by version" in j.cancelled for j in jobs[:-1])
    finally:
        release.set()
    assert jobs[-1].wait(timeout=60) and jobs[-1].result is not None
    for j in jobs:
        j.wait(timeout=60)
    assert state["peak"] == 1 and state["running"] == 0
    assert all(j.result is None and j.status()["status"] == "cancelled" for j in jobs[:-1])
    old = app.state.registry.get("shop")
    assert call(app, "GET", "/models/shop/map", params={"projection": "tsne"}).json()["status"] == "ready"
    assert old is app.state.registry.get("shop")


def test_reloads_are_no_ops_when_nothing_changed_and_coalesce_on_one_loading_thread(tmp_path, monkeypatch):
    """60 reloads at once took 37 s, a worker each, and loaded even when nothing had changed, while a query
    on another model waited 15.7 s. Now: no change, no load; one loading thread whoever asks; reloads of a
    model asked while one is queued share it; queries keep being answered while loads wait."""
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for i, p in enumerate((a, b, c)):
        planted(i).save(p)
    registry = Registry([ModelSpec("a", a), ModelSpec("b", b), ModelSpec("c", c)], map_sample=10)
    app = create_app(registry)
    assert call(app, "POST", "/models/a/reload").json()["version"] == 1  # nothing new: no new version

    lock, entered, release = threading.Lock(), threading.Event(), threading.Event()
    state = {"in": 0, "peak": 0, "loads": 0}
    real = registry._load

    def blocking_load(spec, version):
        with lock:
            state["in"] += 1
            state["loads"] += 1
            state["peak"] = max(state["peak"], state["in"])
        entered.set()
        try:
            release.wait(60)  # only the failure path waits this long
            return real(spec, version)
        finally:
            with lock:
                state["in"] -= 1

    monkeypatch.setattr(registry, "_load", blocking_load)
    _touch(a / "manifest.json", 1)
    _touch(b / "manifest.json", 1)

    async def go():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            tasks = [asyncio.create_task(client.post(f"/models/{'ab'[i % 2]}/reload")) for i in range(60)]
            while not entered.is_set():
                await asyncio.sleep(0.01)
            try:  # the loads are held: queries on every model are still answered
                for name in "abc":
                    q = await asyncio.wait_for(
                        client.get(f"/models/{name}/similar", params={"item": "g0_i0"}), 30
                    )
                    assert q.status_code == 200
            finally:
                release.set()
            return await asyncio.gather(*tasks)

    answers = asyncio.run(go())
    assert all(r.status_code == 200 for r in answers)
    assert {r.json()["version"] for r in answers} == {2}
    assert state["peak"] == 1 and state["loads"] == 2  # one load per changed model, one at a time
    assert call(app, "POST", "/models/b/reload").json()["version"] == 2


def test_get_values_are_checked_as_post_values_and_long_ones_are_cut(shop):
    """GET took k=1.0, +1 and 1_0 where POST is strict, and echoed a 60,000-character types or
    projection whole in a 60 KB 422; types had no length cap on GET (POST: 64 names of 64 characters)."""
    app = make_app(shop)
    for k in ["1.0", "+1", "1_0", " 1", "1e1", "\u0661", "0x1", "-1"]:
        r = call(app, "GET", "/models/shop/similar", params={"item": "g0_i0", "k": k})
        assert r.status_code == 422, (k, r.text)
        assert f"k == {k}" in r.json()["error"] and "digits 0-9" in r.json()["error"], r.text
        assert call(app, "POST", "/models/shop/similar", json={"items": ["g0_i0"], "k": k}).status_code == 422
    for url, params in [
        ("/models/shop/search", {"prefix": "g", "limit": "+2"}),
        ("/models/shop/map", {"sample": "1.0"}),
        ("/models/shop/similar", {"item": "g0_i0", "restrict": "1_0"}),
    ]:
        r = call(app, "GET", url, params=params)
        assert r.status_code == 422 and "digits 0-9" in r.json()["error"], r.text
    assert call(app, "GET", "/models/shop/similar", params={"item": "g0_i0", "k": "3"}).status_code == 200
    zero = call(app, "GET", "/models/shop/similar", params={"item": "g0_i0", "k": "0"})
    assert zero.status_code == 422 and "k == 0, must be between 1 and 50" in zero.json()["error"]
    big = "x" * 60_000
    for url, params in [
        ("/models/shop/similar", {"item": "g0_i0", "types": big}),
        ("/models/shop/map", {"projection": big}),
        ("/models/shop/similar", {"item": "g0_i0", "k": "9" * 60_000}),
    ]:
        r = call(app, "GET", url, params=params)
        assert r.status_code == 422 and len(r.content) < 1000, (url, len(r.content))
        assert "60000 characters" in r.text
    many = call(
        app, "GET", "/models/shop/similar", params={"item": "g0_i0", "types": [f"t{i}" for i in range(65)]}
    )
    assert many.status_code == 422 and "65 types in one request, the limit is 64" in many.json()["error"]
    body = {"items": ["g0_i0"], "types": [f"t{i}" for i in range(65)]}
    assert "the limit is 64" in call(app, "POST", "/models/shop/similar", json=body).json()["error"]


def test_head_is_answered_on_get_routes_as_get_without_a_body(shop):
    app = make_app(shop)
    for url in ["/models/shop/similar?item=g0_i0&k=3", "/health", "/models/shop", "/", "/openapi.json"]:
        got, head = call(app, "GET", url), call(app, "HEAD", url)
        assert head.status_code == got.status_code == 200, (url, head.status_code)
        assert head.content == b"" and head.headers["content-length"] == got.headers["content-length"]
        # the length of the body as sent: gzip-compressed when over 1 KB and the client accepts it
        assert head.headers.get("content-encoding") == got.headers.get("content-encoding")
        if got.headers.get("content-encoding") is None:
            assert int(got.headers["content-length"]) == len(got.content)
    missing = call(app, "HEAD", "/models/shop/similar?item=nope")
    assert missing.status_code == 404 and missing.content == b""
    post_only = call(app, "HEAD", "/models/shop/reload")
    assert post_only.status_code == 405 and "HEAD" not in post_only.headers["allow"].split(", ")


def test_hidden_attribute_tokens_are_never_listed_searched_or_suggested(tmp_path):
    """attr: tokens (a hidden type) appeared in /search, in "did you mean" and in most_frequent."""
    from likewise.space.itemtypes import ItemTypes

    keys = [
        "attr:colour=red",
        "product:tent",
        "product:mat",
        "attr:colour=blue",
        "product:stove",
        "campaign:spring",
    ]
    rng = np.random.default_rng(0)
    emb = Embeddings(
        rng.standard_normal((len(keys), 8)), Vocab(keys, counts=np.arange(len(keys), 0, -1) * 10)
    )
    emb.attach_types(ItemTypes.from_types([k.split(":")[0] for k in keys], hidden=["attr"]))
    emb.save(tmp_path / "m")
    app = make_app(tmp_path / "m")
    facts = call(app, "GET", "/models/shop").json()
    assert facts["most_frequent"] == ["product:tent", "product:mat", "product:stove", "campaign:spring"]
    for prefix in ["attr", "a", ""]:
        found = call(app, "GET", "/models/shop/search", params={"prefix": prefix, "limit": 10}).json()[
            "items"
        ]
        assert not [f["item"] for f in found if f["item"].startswith("attr:")], prefix
    miss = call(app, "GET", "/models/shop/similar", params={"item": "attr:colour=re"})
    assert miss.status_code == 404 and not [s for s in miss.json()["suggestions"] if s.startswith("attr:")]
    # the library (and so the command line) suggests no hidden token either
    with pytest.raises(UnknownItemError) as caught:
        emb.similar("attr:colour=re")
    assert not [s for s in caught.value.suggestions if s.startswith("attr:")]
    assert "did you mean 'attr:" not in str(caught.value)
    with pytest.raises(UnknownItemError) as caught:
        emb.similar("product:tnet")
    assert caught.value.suggestions[0] == "product:tent"  # visible keys are still suggested


def test_no_page_loads_assets_from_another_host_and_the_openapi_document_stays(shop):
    """FastAPI's ``/docs`` loaded Swagger UI from a CDN: blank offline, and scripts from elsewhere."""
    import re

    for token in [None, "t"]:
        app = make_app(shop, token=token)
        for url in ["/docs", "/redoc", "/docs/oauth2-redirect"]:
            assert call(app, "GET", url).status_code in ((401, 404) if token else (404,)), url
        page = call(app, "GET", "/")
        assert page.status_code == 200
        hosts = set(re.findall(r"https?://([^/\"'\s]+)", page.text)) - {"localhost", "127.0.0.1"}
        assert not hosts, hosts
        doc = call(app, "GET", "/openapi.json")
        assert doc.status_code == 200 and doc.json()["info"]["title"] == "likewise"
