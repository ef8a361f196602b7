"""Retail: order log -> product and customer vectors, the queries, bad logs, persistence, evidence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import likewise
from likewise import retail
from likewise.data.datasets import retail_orders, write_retail
from likewise.errors import InputError, NotFittedError, SpaceMismatchError, UnknownItemError
from likewise.evaluate import EmbeddingRecommender


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    data = retail_orders(2000, 600, seed=5)
    out = tmp_path_factory.mktemp("retail") / "shop"
    write_retail(data, out)
    return data, out


@pytest.fixture(scope="module")
def emb(shop):
    _, out = shop
    return retail.train_from_log(
        out / "orders.parquet",
        time_col="timestamp",
        dim=32,
        epochs=10,
        min_count=1,
        sample=0,
        deterministic=True,
        seed=1,
    )


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LIKEWISE_CACHE", str(tmp_path / "cache"))


# ---------------------------------------------------------------------------------------- reading


def test_parquet_and_csv_read_the_same(shop):
    data, out = shop
    a = retail.read_order_log(out / "orders.parquet", time_col="timestamp", quantity_col="quantity")
    b = retail.read_order_log(out / "orders.csv", time_col="timestamp", quantity_col="quantity")
    assert len(a) == len(b) == data.n_lines
    assert np.array_equal(a.time, b.time) and np.array_equal(a.time, data.timestamp)
    assert [a.item_keys[i] for i in a.item[:20]] == [b.item_keys[i] for i in b.item[:20]]
    assert np.array_equal(a.quantity, data.quantity)
    assert a.columns == {
        "basket_col": "order_id",
        "item_col": "product_id",
        "user_col": "customer_id",
        "time_col": "timestamp",
    }


def _csv(tmp_path, text, name="log.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


HEAD = "order_id,customer_id,product_id,ts,qty\n"


@pytest.mark.parametrize(
    ("body", "kwargs", "match"),
    [
        ("1,c1,tent,2026-01-01 10:00:00,1\n", {"item_col": "sku"}, r"column 'sku' not found in .*log\.csv"),
        ("", {}, r"is empty"),
        (
            '1,c1,"tent\nbig",2026-01-01 10:00:00,1\n',
            {},
            r"'product_id' value 'tent\\nbig' contains a line break.* data row 1",
        ),
        (
            "1,c1,tent,2026-01-01 10:00:00,1\n1,c1,mat,2026-01-01 10:00:00,-2\n",
            {"quantity_col": "qty"},
            r"quantity column 'qty' in .* at data row 2 .* holds -2; a quantity must be a finite number >= 0",
        ),
        (
            "1,c1,tent,2026-01-01 10:00:00,1\n2,c1,mat,yesterday,1\n",
            {"time_col": "ts"},
            r"time column 'ts' .* data row 2 .* holds 'yesterday'",
        ),
        (
            "1,c1,tent,2026-01-01 10:00:00,1\n2,,mat,2026-01-01 10:00:00,1\n",
            {},
            r"null 'customer_id' .* data row 2",
        ),
    ],
)
def test_bad_logs_name_the_row_or_column(tmp_path, body, kwargs, match):
    path = _csv(tmp_path, "" if body == "" else HEAD + body)
    with pytest.raises(InputError, match=match):
        retail.read_order_log(path, **kwargs)


def test_bad_log_leaves_nothing_half_written(tmp_path, capsys):
    from likewise.cli import main

    path = _csv(tmp_path, HEAD + "1,c1,tent,2026-01-01 10:00:00,1\n2,c1,mat,not a time,1\n")
    out = tmp_path / "model"
    rc = main(
        [
            "train",
            str(path),
            "--basket-col",
            "order_id",
            "--item-col",
            "product_id",
            "--user-col",
            "customer_id",
            "--time-col",
            "ts",
            "--min-count",
            "1",
            "-o",
            str(out),
        ]
    )
    assert rc == 1
    assert "likewise: error: time column 'ts'" in capsys.readouterr().err
    # no model and no corpus: nothing but the log (the corpus cache's folder may be there, empty)
    assert sorted(p.name for p in tmp_path.rglob("*") if not p.is_dir()) == ["log.csv"]


def test_parquet_log_with_newline_in_customer(tmp_path):
    t = pa.table({"order_id": [1, 1], "customer_id": ["a", "b\r"], "product_id": ["x", "y"]})
    pq.write_table(t, tmp_path / "log.parquet")
    with pytest.raises(
        InputError, match=r"'customer_id' value 'b\\r' contains a line break, in .* data row 2"
    ):
        retail.read_order_log(tmp_path / "log.parquet")


def test_streaming_reader_rejects_line_breaks_in_items(tmp_path):
    # the plain log path (likewise train LOG --basket-col --item-col, no customer column) checks it too
    from likewise.readers import InputSpec, scan_log

    pq.write_table(pa.table({"o": [1, 1, 2], "i": ["a", "b\nc", "d"]}), tmp_path / "x.parquet")
    with pytest.raises(InputError, match=r"'i' value 'b\\nc' contains a line break, in .* data row 2"):
        scan_log(InputSpec(paths=(str(tmp_path / "x.parquet"),), basket_col="o", item_col="i"))


def test_folder_skips_empty_parts(tmp_path):
    folder = tmp_path / "log"
    folder.mkdir()
    (folder / "part-0.csv").write_text(
        HEAD + "1,c1,tent,2026-01-01 10:00:00,1\n1,c1,mat,2026-01-01 10:00:00,1\n"
    )
    (folder / "part-1.csv").write_text("")
    (folder / "part-2.csv").write_text(HEAD)
    log = retail.read_order_log(folder, time_col="ts")
    assert len(log) == 2 and log.item_keys == ["tent", "mat"]
    (folder / "part-0.csv").write_text("")
    with pytest.raises(InputError, match="is empty: none of its 3 file.s. has data rows"):
        retail.read_order_log(folder)
    with pytest.raises(InputError, match=r"part-2\.csv is empty: it has no data rows"):
        retail.read_order_log(folder / "part-2.csv")


def test_sequences_orders_and_sessions(tmp_path):
    # customer a: orders 1 and 2 ten minutes apart (one session), order 3 two days later
    text = HEAD + "\n".join(
        [
            "1,a,tent,2026-01-01 10:00:00,1",
            "1,a,mat,2026-01-01 10:00:00,1",
            "2,a,stove,2026-01-01 10:10:00,1",
            "3,a,mug,2026-01-03 10:00:00,1",
            "4,b,pen,2026-01-01 09:00:00,1",
        ]
    )
    log = retail.read_order_log(_csv(tmp_path, text + "\n"), time_col="ts")
    orders = sorted(map(tuple, retail.log_sequences(log)))
    assert orders == [("mug",), ("pen",), ("stove",), ("tent", "mat")]
    sessions = sorted(map(tuple, retail.log_sequences(log, sessions="30m")))
    assert sessions == [("mug",), ("pen",), ("tent", "mat", "stove")]
    assert sorted(map(tuple, retail.log_sequences(log, sessions="3d"))) == [
        ("pen",),
        ("tent", "mat", "stove", "mug"),
    ]
    no_time = retail.read_order_log(_csv(tmp_path, text + "\n", "b.csv"))
    with pytest.raises(InputError, match="sessions need a customer column and a time column"):
        retail.log_sequences(no_time, sessions="30m")


def test_parse_duration():
    assert retail.parse_duration("30m") == 1800
    assert retail.parse_duration("2h") == 7200
    assert retail.parse_duration("1.5d") == 129600
    assert retail.parse_duration(45) == 45
    with pytest.raises(InputError, match="'30 minutes' is not understood"):
        retail.parse_duration("30 minutes")
    with pytest.raises(InputError, match="'0m' is 0 seconds; it must be at least 1 second"):
        retail.parse_duration("0m")


# ---------------------------------------------------------------------------------------- queries


def test_customer_table(emb, shop):
    data, _ = shop
    table = emb.customers
    assert len(table) == 2000 and table.fingerprint == emb.fingerprint and table.dim == emb.dim
    # a customer's bought products are exactly the products of their lines
    c = 17
    key = data.customers[c]
    want = sorted({data.products[p] for p in data.product_id[data.customer_id == c]})
    assert sorted(emb.keys[i] for i in table.bought(key)) == want
    assert table.vocab.counts[table.row(key)] == np.sum(data.customer_id == c)
    with pytest.raises(UnknownItemError):
        table.row("C999999")


def test_customer_table_to_arrow_and_pandas(emb):
    table = emb.customers
    t = table.to_arrow()
    assert t.column_names == ["key", "id", "count", "vector"] and t.num_rows == len(table)
    assert t.column("key").to_pylist() == table.keys
    flat = t.column("vector").combine_chunks().flatten().to_numpy()
    np.testing.assert_array_equal(flat.reshape(len(table), table.dim), table.vectors)
    assert t.schema.metadata[b"likewise.fingerprint"] == emb.fingerprint.encode()  # the product space's
    assert t.schema.metadata[b"likewise.what"] == b"customer"
    pytest.importorskip("pandas")
    df = table.to_pandas(norm=True)
    assert df["key"].tolist() == table.keys and df.attrs["fingerprint"] == emb.fingerprint
    np.testing.assert_allclose(np.stack(df["vector"].to_numpy()), table.normed)


def _complement_hits(emb, data, query):
    noun = {p: n.split(" ", 1)[1] for p, n in zip(data.products, data.product_name, strict=True)}
    comp = dict(zip(data.products, data.complement, strict=True))
    queries = [k for k in emb.keys if comp[k] is not None][:40]
    return [any(noun[r] == comp[q] for r in query(q).keys) for q in queries], queries


def test_also_bought_finds_the_complement_type(emb, shop):
    data, _ = shop
    dept = data.product_labels()
    # the 40 most frequent products whose type has a complement: its type is among the 10 results
    found, queries = _complement_hits(emb, data, lambda q: retail.also_bought(emb, q, k=10))
    assert np.mean(found) > 0.8
    res = retail.also_bought(emb, queries[0], k=10)
    assert queries[0] not in res.keys and np.all(np.diff(res.scores) <= 0)
    assert np.mean([dept[r] == dept[queries[0]] for r in res.keys]) >= 0.8


def test_context_scoring_beats_cosine_for_complements(emb, shop):
    # why the output table is kept: cosine of input vectors finds substitutes, not what goes with an item
    data, _ = shop
    with_ctx, _ = _complement_hits(emb, data, lambda q: retail.also_bought(emb, q, k=10))
    cosine, _ = _complement_hits(emb, data, lambda q: emb.similar(q, k=10, evidence=False))
    # measured: 40 of 40 with the context table, 19 of 40 by cosine
    assert np.mean(with_ctx) > 1.5 * np.mean(cosine)


def test_complete_basket(emb):
    basket = [emb.keys[0], emb.keys[5]]
    res = retail.complete_basket(emb, basket, k=5)
    assert len(res) == 5 and not set(basket) & set(res.keys)
    with pytest.raises(UnknownItemError):
        retail.complete_basket(emb, [emb.keys[0], "no-such-product"])
    skipped = retail.complete_basket(emb, [emb.keys[0], "no-such-product"], on_unknown="skip")
    assert skipped.keys == retail.also_bought(emb, emb.keys[0], k=10).keys
    assert np.allclose(skipped.scores, retail.also_bought(emb, emb.keys[0], k=10).scores, atol=1e-5)
    with pytest.raises(InputError, match="no product known"):
        retail.complete_basket(emb, ["nope"], on_unknown="skip")
    with pytest.raises(InputError, match="wrap one product in a list"):
        retail.complete_basket(emb, emb.keys[0])


def test_mixture_score_is_log_mean_exp_of_affinities(emb):
    # the basket score, recomputed by hand for a few candidates
    ids = np.array([3, 8, 20])
    got_ids, got_scores = emb.affinity_top_k([ids], 5)
    W, C = np.asarray(emb.vectors, np.float64), np.asarray(emb.context, np.float64)
    alpha = emb.config.ns_exponent
    for j, s in zip(got_ids[0], got_scores[0], strict=True):
        want = np.log(np.mean(np.exp(W[ids] @ C[j]))) + alpha * np.log(emb.counts[j])
        assert s == pytest.approx(want, abs=1e-4)
    rec = EmbeddingRecommender(emb, scoring="affinity").recommend_ids(
        [ids, np.array([0]), np.array([], dtype=np.int64)], 5
    )
    assert np.array_equal(rec[0], got_ids[0]) and not np.isin(rec[1], [0]).any()
    assert np.array_equal(rec[2], np.argsort(-emb.counts, kind="stable")[:5])  # empty: most popular


def test_for_customer(emb, shop):
    data, _ = shop
    dept = data.product_labels()
    tastes = data.customer_tastes()
    key = emb.customers.keys[3]
    bought = {emb.keys[i] for i in emb.customers.bought(key)}
    res = retail.for_customer(emb, key, k=10)
    assert not bought & set(res.keys)
    incl = retail.for_customer(emb, key, k=10, exclude_bought=False)
    assert bought & set(incl.keys)  # repeat purchases come back when allowed
    # recommendations follow the hidden taste: over 100 customers most products are of their department
    keys = emb.customers.keys[:100]
    share = np.mean(
        [np.mean([dept[p] == tastes[c] for p in retail.for_customer(emb, c, 10).keys]) for c in keys]
    )
    assert share > 0.6


def test_similar_customers_share_taste(emb, shop):
    data, _ = shop
    tastes = data.customer_tastes()
    keys = emb.customers.keys[:50]
    share = np.mean(
        [np.mean([tastes[o] == tastes[c] for o in retail.similar_customers(emb, c, 10).keys]) for c in keys]
    )
    assert share > 0.8  # chance is about 1/8
    res = retail.similar_customers(emb, keys[0], k=5)
    assert keys[0] not in res.keys and len(res) == 5


@pytest.mark.parametrize("method", ["centroid", "knn"])
def test_lookalike_precision_well_above_chance(emb, shop, method):
    data, _ = shop
    got = retail.lookalike_precision(emb, data.customer_tastes(), n_seeds=50, k=100, method=method)
    assert got["labels"] == 8
    assert got["precision"] > 0.9 > 5 * got["chance"]


def test_lookalike_excludes_seeds_and_scores_descend(emb, tmp_path):
    seeds = emb.customers.keys[:10]
    for method in ("centroid", "knn"):
        res = retail.lookalike(emb, seeds, k=30, method=method)
        assert not set(seeds) & set(res.keys)
        assert np.all(np.diff(res.scores) <= 0)
    res = retail.lookalike(emb, seeds, k=30)
    cut = float(res.scores[9])
    n = retail.write_audience(res, tmp_path / "aud.csv", min_score=cut)
    lines = (tmp_path / "aud.csv").read_text().splitlines()
    assert lines[0] == "rank,customer_id,score" and len(lines) == n + 1 and n >= 10
    assert lines[1].split(",")[1] == res.keys[0]
    with pytest.raises(InputError, match="method == 'vote'"):
        retail.lookalike(emb, seeds, method="vote")
    with pytest.raises(UnknownItemError):
        retail.lookalike(emb, ["C999999"])
    with pytest.raises(InputError, match="non-empty list"):
        retail.lookalike(emb, [])


def test_queries_need_a_customer_table(emb):
    plain = likewise.Embeddings(np.asarray(emb.vectors), emb.vocab)
    with pytest.raises(NotFittedError, match="no customer vectors"):
        retail.for_customer(plain, "C000001")
    assert retail.also_bought(plain, emb.keys[0], k=3).keys == plain.similar(emb.keys[0], k=3).keys
    plain_other = likewise.Embeddings(np.asarray(emb.vectors) * 2, emb.vocab)
    with pytest.raises(SpaceMismatchError):
        plain_other.attach_customers(emb.customers)


# ------------------------------------------------------------------------------------- persistence


def test_save_load_keeps_customers_and_context(emb, tmp_path):
    from likewise.space.store import read_manifest

    emb.save(tmp_path / "m")
    manifest = read_manifest(tmp_path / "m")
    for name in (
        "context.npy",
        "customer_vectors.npy",
        "customer_keys.json",
        "customer_bought_indptr.npy",
        "customer_bought_ids.npy",
        "customer_counts.npy",
    ):
        assert len(manifest["files"][name]["sha256"]) == 64
    back = likewise.load(tmp_path / "m")
    assert back.fingerprint == emb.fingerprint
    assert np.array_equal(back.context, emb.context)
    assert np.array_equal(back.customers.vectors, emb.customers.vectors)
    assert back.customers.keys == emb.customers.keys
    assert np.array_equal(back.customers.bought_ids, emb.customers.bought_ids)
    key = emb.customers.keys[7]
    assert retail.for_customer(back, key, 5).keys == retail.for_customer(emb, key, 5).keys
    # a corrupted customer file is caught by its checksum
    p = tmp_path / "m" / "customer_vectors.npy"
    raw = bytearray(p.read_bytes())
    raw[-1] ^= 0xFF
    p.write_bytes(bytes(raw))
    with pytest.raises(likewise.CorruptModelError, match="customer_vectors.npy"):
        likewise.load(tmp_path / "m")


def test_v1_fixture_has_no_customer_table():
    emb = likewise.load(Path(__file__).parent / "fixtures" / "space_v1")
    assert emb.customers is None and emb.context is None


def test_sessions_train_in_sequence_mode(shop):
    data, out = shop
    emb = retail.train_from_log(
        out / "orders.parquet",
        time_col="timestamp",
        sessions="30m",
        mode="sequence",
        dim=16,
        epochs=2,
        min_count=1,
        deterministic=True,
    )
    assert emb.meta["retail"]["sessions"] == "30m"
    # the generator's sessions are orders 30 s to 25 min apart, sessions more than a day apart
    assert emb.meta["corpus"]["n_sequences"] == len(np.unique(data.session))


# ---------------------------------------------------------------------------------------- evidence


def test_evidence_hit_rates(shop):
    _, out = shop
    log = retail.read_order_log(out / "orders.parquet", time_col="timestamp")
    train_log, test_log = retail.split_last_order(log)
    assert len(train_log) + len(test_log) == len(log)
    emb = retail.fit_order_log(
        train_log, dim=32, epochs=10, min_count=1, sample=0, deterministic=True, seed=1
    )
    hr = retail.holdout_hit_rates(emb, train_log, test_log, k=10)
    complete, cust = hr["complete"], hr["for_customer"]
    assert complete["n"] > 1500 and cust["n"] > 1500
    # measured (seed 5, this config): complete likewise 0.597, cocount 0.586, popular 0.168;
    # for_customer likewise 0.331, cocount 0.332, popular 0.066. A tie with co-count, not a win: the
    # margins below hold the tie (and the big lead over popularity); they do not claim more.
    assert complete["likewise"] > 3 * complete["popular"]
    assert complete["likewise"] > 0.97 * complete["cocount"]
    assert cust["likewise"] > 4 * cust["popular"]
    assert cust["likewise"] > 0.95 * cust["cocount"]


def test_customer_vector_weights_by_hand():
    vocab = likewise.Vocab(["a", "b", "c"], [100, 10, 1])
    W = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=np.float32)
    emb = likewise.Embeddings(W, vocab)
    customers = ["x", "x", "y", "y"]
    items = ["a", "b", "c", "zzz"]  # an unknown product is skipped
    day = 86400
    times = np.array([0, 10 * day, 0, 0])
    plain = retail.build_customer_vectors(emb, customers, items)
    assert plain.keys == ["x", "y"]
    assert np.allclose(plain.vectors, [[0.5, 0.5], [1.0, 1.0]])
    assert [list(plain.bought(c)) for c in ("x", "y")] == [[0, 1], [2]]
    # half-life 10 days: the line 10 days before the latest weighs half
    decay = retail.build_customer_vectors(emb, customers, items, times=times, half_life_days=10)
    assert np.allclose(decay.vectors[0], (0.5 * W[0] + 1.0 * W[1]) / 1.5)
    # popularity_power 1: each line weighs 1 / count
    pop = retail.build_customer_vectors(emb, customers, items, popularity_power=1.0)
    assert np.allclose(pop.vectors[0], (W[0] / 100 + W[1] / 10) / (1 / 100 + 1 / 10))
    with pytest.raises(InputError, match="half_life_days needs a time per line"):
        retail.build_customer_vectors(emb, customers, items, half_life_days=10)
    with pytest.raises(InputError, match="no customer bought a product of the space"):
        retail.build_customer_vectors(emb, ["x"], ["zzz"])
