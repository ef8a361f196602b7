"""A hostile or careless user's inputs, round 5: order logs, updates, next basket's saved record and the
bounds of a request. Each test failed before its fix; a class of inputs is fuzzed on a small fixed budget.
"""

from __future__ import annotations

import random
import re
import shutil
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from _saved import edit_next_basket

from likewise.cli import main

httpx = pytest.importorskip("httpx")


def run(argv: list, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ a column in two roles


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (["--user-col", "product_id"], "'product_id' is given as both item_col and user_col"),
        (["--user-col", "order_id"], "'order_id' is given as both basket_col and user_col"),
        (["--time-col", "ts", "--quantity-col", "ts"], "'ts' is given as both time_col and quantity_col"),
        (["--user-col", "customer_id", "--time-col", "customer_id"], "both user_col and time_col"),
    ],
)
def test_one_column_in_two_roles_is_refused_naming_both(tmp_path, capsys, options, says):
    log = tmp_path / "log.csv"
    log.write_text(
        "order_id,customer_id,product_id,ts\n"
        + "".join(f"{o},c{o % 3},p{o % 4},{1_700_000_000 + o}\n" for o in range(20))
    )
    base = ["train", log, "--basket-col", "order_id", "--item-col", "product_id"]
    code, _, err = run([*base, *options, "--epochs", "1", "--dim", "4", "-o", tmp_path / "m"], capsys)
    assert code == 1
    assert err.count("\n") == 1, err
    assert says in err
    assert not (tmp_path / "m").exists()


# ------------------------------------------------------------------ the explorer's typo search


def _norvig(word: str, letters: str) -> set[str]:
    """Every string one edit from ``word`` over ``letters`` (the reference the bounded search must agree
    with on small alphabets)."""
    cuts = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    return (
        {a + b[1:] for a, b in cuts if b}
        | {a + b[1] + b[0] + b[2:] for a, b in cuts if len(b) > 1}
        | {a + c + b[1:] for a, b in cuts if b for c in letters}
        | {a + c + b for a, b in cuts for c in letters}
    ) - {word}


def test_typo_search_finds_every_word_one_edit_away_as_generating_every_edit_did():
    """Fuzz: random words over a small alphabet; the deletion index finds what every one-edit variant
    finds (the first words of close_words are the one-edit ones, sorted)."""
    from likewise.service.textsearch import TextIndex

    rng = random.Random(5)
    for _ in range(60):
        words = {"".join(rng.choice("abcd") for _ in range(rng.randint(1, 6))) for _ in range(40)}
        keys = [f"w{i} " + w for i, w in enumerate(sorted(words))]
        index = TextIndex(keys, np.arange(len(keys)))
        indexed = {w for w in words if w[0].isalpha()} | {"w"}
        for _ in range(10):
            q = "".join(rng.choice("abcde") for _ in range(rng.randint(1, 7)))
            if q in indexed:
                continue
            want = sorted(_norvig(q, "abcd") & indexed)[:6]
            assert index.close_words(q)[: len(want)] == want, (q, want)


@pytest.mark.parametrize("query", ["漢" * 400, "字詞" * 200, "a" * 1024, "ab " * 341])
def test_typo_search_work_is_bounded_whatever_the_query(monkeypatch, query):
    """A 400-character CJK query made every one-edit variant over 3,000 letters (2.26 GB); now the strings
    looked up are at most TYPO_WORDS x (TYPO_WORD_LENGTH + 1), counted."""
    from likewise.service import textsearch

    rng = random.Random(0)
    alphabet = [chr(0x4E00 + i) for i in range(3000)]
    names = ["".join(rng.choice(alphabet) for _ in range(rng.randint(2, 6))) for _ in range(3000)]
    index = textsearch.TextIndex([f"k{i}" for i in range(3000)], np.arange(3000), names=names)
    made = []
    real = textsearch.deletions
    monkeypatch.setattr(textsearch, "deletions", lambda w: made.append(len(w) + 1) or real(w))
    tracemalloc.start()
    try:
        index.find(query, 10)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sum(made) <= textsearch.TYPO_WORDS * (textsearch.TYPO_WORD_LENGTH + 1)
    assert peak < 8 * 2**20, f"{peak / 2**20:.1f} MiB held while searching"


# ------------------------------------------------------------------ next basket in a typed space


TYPE_MAP = "view=product,purchase=product,campaign_open=campaign,article_read=article"


@pytest.fixture(scope="module")
def typed_model(tmp_path_factory) -> Path:
    """A space trained from the generated event log (products, campaigns, articles) with customers."""
    root = tmp_path_factory.mktemp("typed")
    assert (
        main(["datasets", "events", "-o", str(root / "ev"), "--customers", "300", "--products", "150"]) == 0
    )
    argv = ["train", root / "ev" / "events.csv", "--basket-col", "session_id", "--item-col", "item_id"]
    argv += ["--type-col", "event", "--type-map", TYPE_MAP, "--user-col", "customer_id"]
    argv += ["--time-col", "timestamp", "--dim", "8", "--epochs", "1", "--seed", "1", "-o", root / "m"]
    assert main([str(a) for a in argv]) == 0
    return root / "m"


def test_next_basket_in_a_typed_space_offers_products_unless_asked_for_other_types(typed_model, capsys):
    import likewise
    from likewise import retail

    emb = likewise.load(typed_model)
    assert emb.customers.next_basket.weights is not None  # the fitted model, not the own-list rule
    offered = [retail.next_basket(emb, c, k=10).keys for c in emb.customers.keys]
    assert all(k.startswith("product:") for keys in offered for k in keys)
    asked = retail.next_basket(emb, emb.customers.keys[0], k=3, types="campaign")
    assert len(asked.keys) == 3 and all(k.startswith("campaign:") for k in asked.keys)
    code, out, err = run(
        ["next-basket", typed_model, emb.customers.keys[0], "--type", "article", "--json"], capsys
    )
    assert code == 0, err
    assert '"article:' in out and '"product:' not in out
    code, _, err = run(["next-basket", typed_model, emb.customers.keys[0], "--type", "coupon"], capsys)
    assert code == 1 and "unknown type 'coupon'" in err


def test_next_basket_over_http_takes_types(typed_model):
    from test_reliability_service import call, make_app

    app = make_app(typed_model)
    import likewise

    customer = likewise.load(typed_model).customers.keys[0]
    r = call(app, "POST", "/models/shop/next_basket", json={"customer": customer, "k": 5})
    assert r.status_code == 200, r.text
    assert all(a["item"].startswith("product:") for a in r.json()["answers"][0]["results"])
    r = call(
        app, "POST", "/models/shop/next_basket", json={"customer": customer, "k": 5, "types": ["campaign"]}
    )
    assert r.status_code == 200, r.text
    assert all(a["item"].startswith("campaign:") for a in r.json()["answers"][0]["results"])


def test_next_basket_explore_must_be_a_bool(typed_model):
    """``explore="no"`` is a non-empty string, so it explored."""
    import likewise
    from likewise import retail
    from likewise.errors import InputError

    emb = likewise.load(typed_model)
    with pytest.raises(InputError, match=r"explore == 'no', must be True or False"):
        retail.next_basket(emb, emb.customers.keys[0], explore="no")


# ------------------------------------------------------------------ next basket's saved record


def _set(key, value):
    return lambda rec: rec.__setitem__(key, value)


EDITS = {
    "scale zeros": (lambda rec: rec.__setitem__("scale", [0.0] * len(rec["scale"])), "'scale'"),
    "weights 5 short": (lambda rec: rec.__setitem__("weights", rec["weights"][:-5]), "'weights'"),
    "weights removed": (lambda rec: rec.pop("weights"), "'weights'"),
    "mean as strings": (lambda rec: rec.__setitem__("mean", [str(v) for v in rec["mean"]]), "'mean'"),
    "neighbours many": (_set("neighbours", "many"), "'neighbours'"),
    "neighbours -5": (_set("neighbours", -5), "'neighbours'"),
    "neighbours 10**12": (_set("neighbours", 10**12), "'neighbours'"),
    "rule magic": (_set("rule", "magic"), "'rule'"),
    "features renamed": (lambda rec: rec["features"].__setitem__(0, "spend"), "other features"),
}


@pytest.mark.parametrize("case", sorted(EDITS))
def test_an_edited_next_basket_record_is_refused_in_one_line(typed_model, tmp_path, capsys, case):
    """manifest.json has no checksum: NaN scores, tracebacks or silent answers came from such edits."""
    import likewise

    change, names = EDITS[case]
    model = edit_next_basket(typed_model, tmp_path / "m", change)
    customer = likewise.load(typed_model).customers.keys[0]
    code, out, err = run(["next-basket", model, customer], capsys)
    assert code == 1, out
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert names in err


def test_an_inconsistent_purchase_history_is_refused_at_load(typed_model, tmp_path, capsys):
    """n_baskets all 0 with its checksum updated scored about -3.5e10, without an error."""
    from _saved import refresh_entry

    import likewise
    from likewise.errors import CorruptModelError

    model = tmp_path / "m"
    shutil.copytree(typed_model, model)
    name = "customer_history_n_baskets.npy"
    np.save(model / name, np.zeros_like(np.load(model / name)))
    refresh_entry(model, name)
    with pytest.raises(CorruptModelError, match="purchase history is inconsistent"):
        likewise.load(model)
    code, _, err = run(["next-basket", model, "C000000"], capsys)
    assert code == 1 and err.count("\n") == 1, err


def test_an_edited_next_basket_record_is_a_json_error_over_http(typed_model, tmp_path):
    """Served, it answered 200 with ``"score": NaN``; now a reload refuses it (503, JSON) and the loaded
    version keeps answering."""
    from test_reliability_service import call, make_app

    model = tmp_path / "m"
    shutil.copytree(typed_model, model)
    app = make_app(model)
    body = {"customer": "C000000", "k": 5}
    assert call(app, "POST", "/models/shop/next_basket", json=body).status_code == 200
    shutil.rmtree(model)
    edit_next_basket(typed_model, model, EDITS["scale zeros"][0])
    r = call(app, "POST", "/models/shop/reload")
    assert r.status_code == 503 and "'scale'" in r.json()["error"], r.text
    r = call(app, "POST", "/models/shop/next_basket", json=body)
    assert r.status_code == 200 and all(np.isfinite(a["score"]) for a in r.json()["answers"][0]["results"])


# ------------------------------------------------------------------ one long held-out basket


def test_a_long_held_out_basket_is_scored_within_the_documented_block(monkeypatch):
    """A 9,999-item query built W[rows] @ Ct whole (9,999 x 100,040 float32, 4 GB) against the documented
    64 MiB. Fuzz: random spaces and baskets, one far longer than a block; the ranks are the same as with a
    budget that holds everything, and no block of scores passes the budget (counted)."""
    from likewise.kernels import ranks
    from likewise.training import auto

    rng = np.random.default_rng(11)
    real = ranks.count_above
    largest = []

    def counting(scores, *args, **kw):
        largest.append(scores.nbytes)
        return real(scores, *args, **kw)

    for trial in range(8):
        n_items, dim = int(rng.integers(30, 90)), int(rng.integers(2, 9))
        W = rng.normal(size=(n_items, dim)).astype(np.float32)
        C = rng.normal(size=(n_items, dim)).astype(np.float32)
        bias = rng.normal(size=n_items)
        queries, hidden = [], []
        for c in range(12):
            size = n_items - 1 if c == trial % 12 else int(rng.integers(1, 5))  # one basket of every item
            items = rng.permutation(n_items)
            queries.append(items[:size].astype(np.int64))
            hidden.append(int(items[size]) if size < n_items else int(items[0]))
        monkeypatch.setattr(auto, "_RANK_BLOCK_BYTES", 1 << 30)
        whole = auto.validation_completion(W, C, bias, queries, np.array(hidden), k=10, threads=1)
        budget = 4 * n_items * 6  # six rows of scores
        monkeypatch.setattr(auto, "_RANK_BLOCK_BYTES", budget)
        monkeypatch.setattr(ranks, "count_above", counting)
        largest.clear()
        blocked = auto.validation_completion(W, C, bias, queries, np.array(hidden), k=10, threads=1)
        monkeypatch.setattr(ranks, "count_above", real)
        assert max(largest) <= budget, (max(largest), budget)
        for rule in whole:
            np.testing.assert_array_equal(blocked[rule], whole[rule])


# ------------------------------------------------------------------ next basket's per-table arrays


def test_concurrent_first_queries_build_the_neighbourhood_once(typed_model, monkeypatch):
    """30 clients on a cold server each built their own copy (5.6 GB). The one build waits here until
    every caller has asked, so two builds would be counted whatever the thread timing."""
    import threading

    import likewise
    from likewise.nextbasket import neighbours as nh

    table = likewise.load(typed_model).customers
    n_items = len(likewise.load(typed_model))
    callers, entered, builds = 12, [], []
    everyone_in = threading.Event()
    real_class, real_fn = nh.Neighbourhood, nh.neighbourhood

    class Counting(real_class):
        def __init__(self, *args):
            builds.append(1)
            everyone_in.wait(timeout=20)
            super().__init__(*args)

    def asking(*args):
        entered.append(1)
        if len(entered) == callers:
            everyone_in.set()
        return real_fn(*args)

    monkeypatch.setattr(nh, "Neighbourhood", Counting)
    got = []
    threads = [threading.Thread(target=lambda: got.append(asking(table, n_items))) for _ in range(callers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == callers and all(g is got[0] for g in got)
    assert len(builds) == 1


def test_a_server_builds_the_neighbourhood_when_it_loads_not_per_request(typed_model, monkeypatch):
    import asyncio

    from test_reliability_service import make_app

    from likewise.nextbasket import neighbours as nh

    builds = []
    real_class = nh.Neighbourhood

    class Counting(real_class):
        def __init__(self, *args):
            builds.append(1)
            super().__init__(*args)

    monkeypatch.setattr(nh, "Neighbourhood", Counting)
    app = make_app(typed_model)
    assert len(builds) == 1  # at load

    async def many():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
            body = {"customer": "C000001", "k": 5}
            return await asyncio.gather(*(c.post("/models/shop/next_basket", json=body) for _ in range(8)))

    assert all(r.status_code == 200 for r in asyncio.run(many()))
    assert len(builds) == 1


@pytest.fixture(scope="module")
def whale_model(tmp_path_factory):
    """120 customers of a few products each, and one who bought every product."""
    import likewise

    rng = np.random.default_rng(4)
    rows = []
    for c in range(120):
        for o in range(4):
            for p in rng.choice(300, 4, replace=False):
                rows.append(f"o{c}-{o},c{c},p{p},{1_700_000_000 + o * 86400 + c}")
    for o in range(30):
        for p in range(o * 10, o * 10 + 10):
            rows.append(f"w-{o},whale,p{p},{1_700_000_000 + o * 3600}")
    path = tmp_path_factory.mktemp("whale") / "orders.csv"
    path.write_text("order_id,customer_id,product_id,ts\n" + "\n".join(rows) + "\n")
    return likewise.train(
        str(path),
        basket_col="order_id",
        item_col="product_id",
        user_col="customer_id",
        time_col="ts",
        dim=8,
        epochs=1,
        min_count=1,
        seed=1,
        progress=False,
    )


def test_a_customer_who_bought_every_product_is_read_within_the_history_cap(whale_model, monkeypatch):
    """One who bought every product cost 150-240 MB a request; now the products read are the
    ``max_history`` most recent (counted), and none bought is offered as new."""
    from likewise import retail
    from likewise.nextbasket import features

    emb = whale_model
    bought = set(emb.customers.bought("whale").tolist())
    assert len(bought) == 300
    read, rows = [], []
    real = features.history_neighbour_share
    pairs_of = np.bincount(np.asarray(emb.customers.bought_ids), minlength=len(emb))  # customers per product

    def counting(table, items, *args, **kw):
        read.append(len(items))
        rows.append(int(pairs_of[items].sum()))  # the (customer, product) pairs this search reads
        return real(table, items, *args, **kw)

    monkeypatch.setattr(features, "history_neighbour_share", counting)
    res = retail.next_basket(emb, "whale", k=10, max_history=50)
    assert read == [50]
    assert rows[0] <= 50 * int(pairs_of.max()) and rows[0] < pairs_of.sum() / 3, (rows, pairs_of.sum())
    # the 50 most recent products are those of the last five baskets: p250..p299
    assert all(int(k[1:]) >= 250 for k in res.keys), res.keys
    new = retail.next_basket(emb, "whale", k=10, explore=True, max_history=50)
    assert not bought & set(new.ids.tolist())
    with pytest.raises(Exception, match="max_history == 0"):
        retail.next_basket(emb, "whale", max_history=0)


# ------------------------------------------------------------------ smaller ones


def test_an_unhandled_error_is_a_json_500(tmp_path):
    """Starlette's own 500 was plain text ``Internal Server Error``."""
    import asyncio

    from test_reliability_service import make_app, planted

    def boom() -> None:
        raise RuntimeError("secret path /home/x")

    folder = tmp_path / "shop"
    planted().save(folder)
    app = make_app(folder)
    app.add_api_route("/boom", boom)

    async def go():
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
            return await c.get("/boom")

    r = asyncio.run(go())
    assert r.status_code == 500
    assert r.headers["content-type"] == "application/json"
    assert "internal error (RuntimeError)" in r.json()["error"]
    assert "secret" not in r.text


def test_seconds_written_as_text_in_a_time_column_of_iso_times_are_read(tmp_path, capsys):
    """``1704164645`` beside ISO 8601 text was refused as "not a time ... or seconds since 1970"."""
    import pyarrow as pa

    from likewise.readers.log import column_seconds

    got = column_seconds(
        Path("f.csv"), "ts", pa.array(["2024-01-02 03:04:05", "1704164645", " 1704164645.5 "])
    )
    assert got.tolist() == [1704164645, 1704164645, 1704164645]
    with pytest.raises(Exception, match="data row 2 .* looks like milliseconds"):
        column_seconds(Path("f.csv"), "ts", pa.array(["2024-01-02 03:04:05", "1704164645000"]))
    log = tmp_path / "log.csv"
    rows = [f"{o},c{o % 3},p{o % 4},{'2024-01-02 03:04:05' if o % 2 else 1704164645 + o}" for o in range(20)]
    log.write_text("order_id,customer_id,product_id,ts\n" + "\n".join(rows) + "\n")
    argv = ["train", log, "--basket-col", "order_id", "--item-col", "product_id", "--user-col", "customer_id"]
    code, _, err = run(
        [*argv, "--time-col", "ts", "--epochs", "1", "--dim", "4", "-o", tmp_path / "m"], capsys
    )
    assert code == 0, err


def test_map_coordinates_are_never_negative_zero():
    from likewise.service.respond import coordinates, dumps

    assert dumps({"x": coordinates([-1e-9, -0.0, 0.123456, -2.5])}) == b'{"x":[0.0,0.0,0.12346,-2.5]}'


# ------------------------------------------------------------------ an order id shared by customers


def _receipts_log(path: Path, rng: random.Random, customers: int = 30, days: int = 6) -> dict:
    """Receipt numbers that restart every day: order ``r`` of day ``d`` is the r-th sale of that day,
    so one order id holds lines of several customers across days. Returns the true baskets."""
    truth: dict[tuple[str, str], set[str]] = {}
    rows = []
    for d in range(days):
        shoppers = rng.sample(range(customers), rng.randint(min(3, customers), customers))
        for r, c in enumerate(shoppers):
            for _ in range(rng.randint(1, 4)):
                p = f"p{rng.randrange(25)}"
                rows.append(f"{r},c{c},{p},{1_700_000_000 + d * 86400 + r * 60}")
                truth.setdefault((f"c{c}", str(r)), set()).add(p)
    path.write_text("receipt,customer_id,product_id,ts\n" + "\n".join(rows) + "\n")
    return truth


def test_order_ids_shared_by_customers_are_refused_with_count_and_examples_or_scoped(tmp_path, capsys):
    """163 of 360 orders held lines of two customers: 48 of 61 customers ended with impossible histories,
    silently."""
    import likewise

    truth = _receipts_log(tmp_path / "log.csv", random.Random(2))
    shared = len({o for (_, o) in truth})
    argv = ["train", tmp_path / "log.csv", "--basket-col", "receipt", "--item-col", "product_id"]
    argv += ["--user-col", "customer_id", "--time-col", "ts", "--epochs", "1", "--dim", "4"]
    argv += ["--progress", "none"]  # the error alone on stderr (progress lines are test_progress.py's)
    code, _, err = run([*argv, "-o", tmp_path / "m"], capsys)
    assert code == 1 and err.count("\n") == 1, err
    assert f"of {shared:,} orders hold lines of more than one customer (order '" in err
    assert "--basket-scope customer" in err
    assert not (tmp_path / "m").exists()
    code, _, err = run([*argv, "--basket-scope", "customer", "-o", tmp_path / "m"], capsys)
    assert code == 0, err
    emb = likewise.load(tmp_path / "m")
    table = emb.customers
    for key in table.keys:  # every customer's baskets are their own (customer, receipt) pairs
        want = sum(1 for (c, _) in truth if c == key)
        assert int(table.history["n_baskets"][table.row(key)]) == want, key
    assert emb.meta["retail"]["basket_scope"] == "customer"


def test_spanning_orders_are_counted_exactly_and_scoped_baskets_are_one_customers(tmp_path):
    """Fuzz: random receipt logs read both ways through the one reader."""
    from likewise.data.corpus import build_corpus
    from likewise.errors import InputError
    from likewise.readers import InputSpec

    for seed in range(6):
        rng = random.Random(seed)
        path = tmp_path / f"log{seed}.csv"
        truth = _receipts_log(path, rng, customers=rng.randint(2, 12), days=rng.randint(1, 5))
        owners: dict[str, set[str]] = {}
        for c, o in truth:
            owners.setdefault(o, set()).add(c)
        spanning = sum(len(cs) > 1 for cs in owners.values())
        cols = {
            "basket_col": "receipt",
            "item_col": "product_id",
            "user_col": "customer_id",
            "time_col": "ts",
        }
        if spanning:
            with pytest.raises(InputError, match=f"^{spanning:,} of {len(owners):,} orders hold"):
                build_corpus(InputSpec(str(path), **cols), cache_dir=tmp_path / "c")
        corpus = build_corpus(InputSpec(str(path), **cols, basket_scope="customer"), cache_dir=tmp_path / "c")
        assert corpus.n_sequences == len(truth)
        users = np.asarray(corpus.side["user"])
        for a, b in zip(corpus.offsets[:-1], corpus.offsets[1:], strict=True):
            assert len(set(users[a:b].tolist())) == 1
    with pytest.raises(InputError, match="needs a customer column"):
        InputSpec(str(path), basket_col="receipt", item_col="product_id", basket_scope="customer")


# ------------------------------------------------------------------ an update that repeats orders


ORDER_LOG = ["--basket-col", "order_id", "--item-col", "product_id", "--user-col", "customer_id"]
ORDER_LOG += ["--time-col", "ts", "--epochs", "1", "--dim", "4", "--min-count", "1"]


def _orders(path: Path, first_order: int, n_orders: int, day0: int) -> None:
    rng = random.Random(first_order)
    rows = []
    for o in range(first_order, first_order + n_orders):
        c = o % 25
        for p in rng.sample(range(40), 3):
            rows.append(f"{o},c{c},p{p},{1_700_000_000 + (day0 + o) * 3600}")
    path.write_text("order_id,customer_id,product_id,ts\n" + "\n".join(rows) + "\n")


def test_an_update_with_orders_already_in_the_model_is_refused_or_skipped_and_counted(tmp_path, capsys):
    """``likewise update m old.parquet`` doubled C000000's baskets (8 -> 16), without a word."""
    import likewise

    _orders(tmp_path / "old.csv", 0, 200, 0)
    argv = ["train", tmp_path / "old.csv", *ORDER_LOG]
    assert run([*argv, "-o", tmp_path / "m"], capsys)[0] == 0
    m = likewise.load(tmp_path / "m")
    before = {k: int(m.customers.history["n_baskets"][m.customers.row(k)]) for k in m.customers.keys}
    assert before["c0"] == 8 and len(m.customers.orders) == 200

    code, _, err = run(["update", tmp_path / "m", tmp_path / "old.csv", "-o", tmp_path / "u"], capsys)
    assert code == 1 and err.count("\n") == 1, err
    assert "of the new log's 200 orders, 200 are already in the model" in err
    assert "--on-repeat skip" in err and not (tmp_path / "u").exists()

    # half old (ids 100..199), half new (ids 200..299, later): the old ones skipped, counted
    _orders(tmp_path / "mixed.csv", 100, 200, 0)
    code, out, err = run(
        [
            "update",
            tmp_path / "m",
            tmp_path / "mixed.csv",
            "-o",
            tmp_path / "u",
            "--on-repeat",
            "skip",
            "--json",
        ],
        capsys,
    )
    assert code == 0, err
    assert '"skipped_orders": 100' in out
    u = likewise.load(tmp_path / "u")
    after = {k: int(u.customers.history["n_baskets"][u.customers.row(k)]) for k in u.customers.keys}
    assert after == {k: v + 4 for k, v in before.items()}  # each customer: its 4 new orders once
    assert len(u.customers.orders) == 300

    # the update's own orders are now the model's: a second pass is refused too
    code, _, err = run(["update", tmp_path / "u", tmp_path / "mixed.csv", "-o", tmp_path / "u2"], capsys)
    assert code == 1 and "200 are already in the model" in err


def test_an_update_with_orders_older_than_the_models_newest_is_refused(tmp_path, capsys):
    _orders(tmp_path / "old.csv", 0, 100, 1000)
    argv = ["train", tmp_path / "old.csv", *ORDER_LOG]
    assert run([*argv, "-o", tmp_path / "m"], capsys)[0] == 0
    _orders(tmp_path / "back.csv", 500, 50, 0)  # new ids, but dated before the model's newest order
    code, _, err = run(["update", tmp_path / "m", tmp_path / "back.csv", "-o", tmp_path / "u"], capsys)
    assert code == 1 and err.count("\n") == 1, err
    assert "of the new log's 50 orders, 50 are older than its newest order (" in err
    assert re.search(r"; e\.g\. customer 'c\d+''s order of 2023-\d\d-\d\d \d\d:\d\d:\d\d: ", err), err


def test_fuzzed_next_basket_records_load_and_answer_finitely_or_are_refused_in_one_line(typed_model):
    """Fuzz: random edits of the saved record (values of other types, out of range, lists cut or
    lengthened, keys removed). Each is refused by the load's check, or by the query as a LikewiseError
    in one line, or answers finite scores: never a traceback, a NaN or a silent absurd answer."""
    import copy
    import math

    import likewise
    from likewise import retail
    from likewise.errors import InputError, LikewiseError
    from likewise.nextbasket.model import NextBasketModel

    emb = likewise.load(typed_model)
    table = emb.customers
    fitted = table.next_basket
    good = fitted.to_dict()
    rng = random.Random(9)
    oddities = [None, "many", -5, 0, 10**12, 1.5, True, [], {}, float("nan"), float("inf"), "own", "magic"]
    outcomes = {"refused": 0, "answered": 0}
    for _ in range(120):
        rec = copy.deepcopy(good)
        for _ in range(rng.randint(1, 3)):
            key = rng.choice(sorted(rec))
            kind = rng.randrange(4)
            if kind == 0:
                rec.pop(key)
            elif kind == 1 or not isinstance(rec[key], list):
                rec[key] = rng.choice(oddities)
            elif kind == 2 and rec[key]:
                rec[key] = rec[key][: rng.randrange(len(rec[key]))]
            else:
                lst = list(rec[key])
                if lst:
                    lst[rng.randrange(len(lst))] = rng.choice(oddities)
                rec[key] = lst
        try:
            model = NextBasketModel.from_dict(rec)
        except InputError as e:
            assert "\n" not in str(e)
            outcomes["refused"] += 1
            continue
        table.next_basket = model
        try:
            res = retail.next_basket(emb, table.keys[0], k=5)
        except LikewiseError as e:
            assert "\n" not in str(e)
            outcomes["refused"] += 1
        else:
            assert all(math.isfinite(float(v)) for v in res.scores), rec
            outcomes["answered"] += 1
        finally:
            table.next_basket = fitted
    assert outcomes["refused"] > 50 and outcomes["answered"] > 0, outcomes
