"""Every order log streams through the one training path (issue 30).

A log is compiled into the corpus cache with each line's customer and time beside its product
(``user.npy``, ``time.npy``), customer sessions cut by the reader, a typed log's keys typed as they are
read and item attributes compiled in as tokens; training is :func:`likewise.training.train.train` on that
corpus, so checkpoints, ``resume`` and the cache work for every option; customer vectors are one bounded pass
over the corpus. ``test_every_log_option_takes_the_one_path`` runs each option through it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from likewise import retail
from likewise.cli import main
from likewise.data.corpus import Corpus, build_corpus, cache_key
from likewise.data.datasets import retail_orders, write_retail
from likewise.errors import CorruptModelError, InputError
from likewise.kernels import add_weighted_rows, add_weighted_rows_reference
from likewise.readers import InputSpec, resolve_files

TESTS = Path(__file__).parent


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    out = tmp_path_factory.mktemp("stream") / "shop"
    write_retail(retail_orders(600, 200, seed=3), out)
    return out


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LIKEWISE_CACHE", str(tmp_path / "cache"))


def _spec(shop: Path, **cols) -> InputSpec:
    base = {
        "basket_col": "order_id",
        "item_col": "product_id",
        "user_col": "customer_id",
        "time_col": "timestamp",
    }
    return InputSpec(paths=(str(shop / "orders.parquet"),), **(base | cols))


def test_streamed_customers_equal_the_in_memory_build(shop):
    emb = retail.train_from_log(
        shop / "orders.parquet", time_col="timestamp", half_life_days=30, popularity_power=0.5,
        dim=16, epochs=2, min_count=2, deterministic=True,
    )  # fmt: skip
    assert emb.meta["mode_reason"].startswith(
        "a log grouped by 'order_id' with no ordering column ('timestamp'"
    )
    assert "--sessions chains" in emb.meta["mode_reason"]  # the time column orders nothing, and it says so
    assert emb.meta["retail"]["user_col"] == "customer_id" and emb.meta["retail"]["lines"] > 0
    log = retail.read_order_log(shop / "orders.parquet", time_col="timestamp")
    ref = retail.build_customer_vectors(emb, log, half_life_days=30, popularity_power=0.5)
    got = emb.customers
    assert got.keys == ref.keys
    assert np.array_equal(got.vocab.counts, ref.vocab.counts)
    assert np.array_equal(got.bought_indptr, ref.bought_indptr)
    assert np.array_equal(got.bought_ids, ref.bought_ids)
    np.testing.assert_allclose(got.vectors, ref.vectors, rtol=1e-6, atol=1e-7)
    # the streamed build also fits the next-basket weights (on the baskets, which the in-memory build from
    # lines alone does not have); the rest of the config is the same
    assert got.config == ref.config
    assert got.next_basket.weights is not None


def test_side_arrays_follow_the_kept_lines(shop, tmp_path):
    corpus = build_corpus(_spec(shop), min_count=5, what="product", cache_dir=tmp_path / "c")
    assert sorted(corpus.side) == ["order", "time", "user"]  # the order ids' hashes: update checks repeats
    assert corpus.side["user"].shape == corpus.side["time"].shape == corpus.side["order"].shape
    assert corpus.side["user"].shape == corpus.ids.shape
    starts = np.asarray(corpus.offsets)[:-1]
    order = np.asarray(corpus.side["order"])
    assert np.array_equal(np.repeat(order[starts], np.diff(corpus.offsets)), order)  # one id per order
    log = retail.read_order_log(shop / "orders.parquet", time_col="timestamp")
    keep = set(corpus.vocab.keys)
    expected = Counter(
        (log.user_keys[u], log.item_keys[i], int(t))
        for u, i, t in zip(log.user.tolist(), log.item.tolist(), log.time.tolist(), strict=True)
        if log.item_keys[i] in keep
    )
    got = Counter(
        (corpus.user_keys[u], corpus.vocab.keys[i], int(t))
        for u, i, t in zip(
            corpus.side["user"].tolist(), corpus.ids.tolist(), corpus.side["time"].tolist(), strict=True
        )
    )
    assert got == expected
    assert corpus.user_keys == log.user_keys  # customers in order of first appearance
    again = Corpus.open(corpus.path)
    assert np.array_equal(again.side["user"], corpus.side["user"])


def test_a_changed_side_array_is_caught(shop, tmp_path):
    corpus = build_corpus(_spec(shop), min_count=1, what="product", cache_dir=tmp_path / "c")
    user = corpus.path / "user.npy"
    raw = bytearray(user.read_bytes())
    raw[-1] ^= 1
    user.write_bytes(bytes(raw))
    with pytest.raises(CorruptModelError, match="user.npy"):
        Corpus.open(corpus.path)


def test_side_columns_are_part_of_the_cache_key(shop):
    files = resolve_files(_spec(shop))
    plain = _spec(shop, user_col=None, time_col=None)
    keys = {
        cache_key(s, files, min_count=1, max_items=None)
        for s in (plain, _spec(shop), _spec(shop, time_col=None))
    }
    assert len(keys) == 3


def test_text_input_refuses_side_columns(tmp_path):
    with pytest.raises(InputError, match="user_col"):
        InputSpec(paths=(str(tmp_path / "t.txt"),), format="text", user_col="c")


def test_the_command_line_checkpoints_a_log_with_customers(shop, tmp_path, capsys):
    args = ["train", str(shop / "orders.csv"), "--basket-col", "order_id", "--item-col", "product_id"]
    args += ["--user-col", "customer_id", "--dim", "8", "--epochs", "2", "--deterministic", "--quiet"]
    ckpt = tmp_path / "ckpt"
    assert main([*args, "--checkpoint-dir", str(ckpt), "-o", str(tmp_path / "m")]) == 0
    assert (ckpt / "checkpoint" / "manifest.json").exists()
    import likewise

    assert len(likewise.load(tmp_path / "m").customers) > 0
    sessions = [*args, "--time-col", "timestamp", "--sessions", "30m", "--quantity-col", "quantity"]
    assert main([*sessions, "--checkpoint-dir", str(tmp_path / "c2"), "-o", str(tmp_path / "m2")]) == 0
    assert (tmp_path / "c2" / "checkpoint" / "manifest.json").exists()
    m2 = likewise.load(tmp_path / "m2")
    assert m2.report.mode.value == "sequence" and m2.meta["retail"]["sessions"] == "30m"
    typed = [*args, "--item-attrs", str(shop / "products.csv"), "--checkpoint-dir", str(tmp_path / "c3")]
    typed += ["-o", str(tmp_path / "m3")]
    # item attributes are compiled by the same log reader, so that log checkpoints too (the command line
    # refused it while the Python API did not: one path now)
    assert main(typed) == 0
    assert (tmp_path / "c3" / "checkpoint" / "manifest.json").exists()
    assert likewise.load(tmp_path / "m3").meta["attributes"]


CHILD = """
import json, os, signal, sys, threading, time
import numpy as np
from likewise import retail
args = json.loads(sys.argv[1])
kill, out = args.pop("kill"), args.pop("out")

def watch():
    path = os.path.join(args["checkpoint_dir"], "checkpoint", "manifest.json")
    while True:
        try:
            with open(path) as f:
                state = json.load(f)["state"]
            if (state["epoch"], state["step"]) >= tuple(kill):
                os.kill(os.getpid(), signal.SIGKILL)
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.001)

import likewise.training.train_numba
likewise.training.train_numba.BLOCK_TOKENS = 500  # several blocks per pass: a checkpoint mid-pass
threading.Thread(target=watch, daemon=True).start()
log = args.pop("log")
emb = retail.train_from_log(log, **args)
np.save(out + ".items.npy", emb.vectors)
np.save(out + ".customers.npy", emb.customers.vectors)
"""


def _child(tmp: Path, log: Path, name: str, **args) -> tuple[subprocess.CompletedProcess, Path]:
    out = tmp / name
    config = {"dim": 8, "epochs": 3, "min_count": 1, "seed": 5, "deterministic": True, "progress": False}
    payload = (
        {"log": str(log), "time_col": "timestamp", "half_life_days": 60, "out": str(out)} | config | args
    )
    env = dict(os.environ, LIKEWISE_CACHE=str(tmp / "corpora"))
    child = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(payload)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    return child, out


def test_killed_and_resumed_equals_uninterrupted_with_customers(shop, tmp_path):
    log = shop / "orders.parquet"
    whole, whole_out = _child(tmp_path, log, "whole", checkpoint_dir=str(tmp_path / "ck0"), kill=[10**6, 0])
    assert whole.returncode == 0, whole.stderr[-3000:]
    ckpt = tmp_path / "ck1"
    killed, _ = _child(tmp_path, log, "killed", checkpoint_dir=str(ckpt), kill=[0, 1])
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    state = json.loads((ckpt / "checkpoint" / "manifest.json").read_text())["state"]
    assert state["epoch"] < state["epochs"]
    resumed, out = _child(tmp_path, log, "resumed", checkpoint_dir=str(ckpt), resume=True, kill=[10**6, 0])
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    for part in ("items", "customers"):
        a, b = np.load(f"{whole_out}.{part}.npy"), np.load(f"{out}.{part}.npy")
        assert a.tobytes() == b.tobytes(), part


def _typed_log(shop: Path) -> Path:
    """The shop's orders as an event log: views and purchases of products, and a campaign per order."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = pq.read_table(shop / "orders.parquet")
    n = t.num_rows
    event = np.where(np.arange(n) % 3 == 0, "view", "purchase")
    t = t.append_column("event", pa.array(event))
    orders = np.unique(t.column("order_id").to_numpy())[::4]
    first = t.group_by("order_id").aggregate([("customer_id", "min"), ("timestamp", "min")])
    first = first.filter(pa.compute.is_in(first.column("order_id"), pa.array(orders)))
    spring = pa.table(
        {
            "order_id": first.column("order_id"),
            "customer_id": first.column("customer_id_min"),
            "product_id": pa.array(
                ["spring" if o % 2 else "autumn" for o in first.column("order_id").to_pylist()]
            ),
            "timestamp": first.column("timestamp_min"),
            "quantity": pa.array(np.ones(first.num_rows, dtype=np.int64)),
            "event": pa.array(["campaign_open"] * first.num_rows),
        }
    )
    path = shop.parent / "events.parquet"
    pq.write_table(
        pa.concat_tables([t.select(spring.column_names), spring.cast(t.select(spring.column_names).schema)]),
        path,
    )
    return path


EVENTS = {"type_col": "event", "type_map": "view=product,purchase=product,campaign_open=campaign"}
OPTIONS = {
    "customers": {},
    "sessions": {"sessions": "30m"},
    "quantity": {"quantity_col": "quantity"},
    "attributes": {"item_attrs": "products.csv"},
    "sessions+attributes": {"sessions": "30m", "item_attrs": "products.csv"},
    "typed": EVENTS,
    "typed+attributes+negatives": EVENTS | {"item_attrs": "products.csv", "typed_negatives": True},
}


@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_every_log_option_takes_the_one_path(shop, tmp_path, option):
    """Each log option compiles one cached corpus, trains with a checkpoint, and a second run reuses the
    corpus and gives the same bytes; customers and the options are recorded."""
    kw = dict(OPTIONS[option])
    log = _typed_log(shop) if "type_col" in kw else shop / "orders.parquet"
    if "item_attrs" in kw:
        kw["item_attrs"] = shop / kw["item_attrs"]
    kw |= {"time_col": "timestamp", "dim": 8, "epochs": 2, "deterministic": True, "progress": False}
    runs = []
    for i in range(2):
        emb = retail.train_from_log(log, checkpoint_dir=tmp_path / f"ck{i}", **kw)
        assert (tmp_path / f"ck{i}" / "checkpoint" / "manifest.json").exists()
        runs.append(emb)
    assert len(list((tmp_path / "cache").iterdir())) == 1  # one corpus, compiled once
    a, b = runs
    assert (
        a.vectors.tobytes() == b.vectors.tobytes()
        and a.customers.vectors.tobytes() == b.customers.vectors.tobytes()
    )
    assert a.meta["retail"]["user_col"] == "customer_id"
    assert a.report.mode.value == ("sequence" if "sessions" in kw else "basket")
    if "item_attrs" in kw:
        assert a.types is not None and "attr" in a.types.names and a.meta["attributes"]["columns"]
        tokens = [k for k in a.keys if k.startswith("attr:")]
        assert tokens and not set(tokens) & set(a.customers.keys)
    if "type_col" in kw:
        assert {"product", "campaign"} <= set(a.types.names) and a.meta["retail"]["type_col"] == "event"
        assert a.config.typed_negatives is bool(kw.get("typed_negatives", False))
    if "quantity_col" in kw:
        assert a.meta["retail"]["quantity_col"] == "quantity"


def test_killed_and_resumed_with_sessions_and_attributes(shop, tmp_path):
    """kill -9 mid-pass and resume equals an uninterrupted run, for sessions with attribute tokens."""
    log = shop / "orders.parquet"
    extra = {"sessions": "30m", "item_attrs": str(shop / "products.csv")}
    whole, whole_out = _child(
        tmp_path, log, "whole", checkpoint_dir=str(tmp_path / "ck0"), kill=[10**6, 0], **extra
    )
    assert whole.returncode == 0, whole.stderr[-3000:]
    ckpt = tmp_path / "ck1"
    killed, _ = _child(tmp_path, log, "killed", checkpoint_dir=str(ckpt), kill=[0, 1], **extra)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    resumed, out = _child(
        tmp_path, log, "resumed", checkpoint_dir=str(ckpt), resume=True, kill=[10**6, 0], **extra
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    for part in ("items", "customers"):
        a, b = np.load(f"{whole_out}.{part}.npy"), np.load(f"{out}.{part}.npy")
        assert a.tobytes() == b.tobytes(), part


def test_weighted_row_sums_match_the_reference():
    rng = np.random.default_rng(0)
    table = rng.standard_normal((50, 7)).astype(np.float32)
    groups = rng.integers(0, 9, 1000)
    ids = rng.integers(0, 50, 1000)
    weights = rng.random(1000)
    out = [(np.zeros((9, 7)), np.zeros(9)) for _ in range(2)]
    add_weighted_rows(*out[0], groups, ids, weights, table)
    add_weighted_rows_reference(*out[1], groups, ids, weights, table)
    assert out[0][0].tobytes() == out[1][0].tobytes() and out[0][1].tobytes() == out[1][1].tobytes()
    with pytest.raises(InputError, match="ids run from"):
        add_weighted_rows(*out[0], groups, ids + 50, weights, table)


def test_customer_sums_in_ranges_give_the_same_table(monkeypatch):
    """A working set of a few customers' sums at a time (many passes) builds the same bytes as one pass."""
    import likewise.space.customers as customers

    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((40, 6)).astype(np.float32)
    counts = rng.integers(1, 50, 40)
    users = rng.integers(0, 25, 3000)
    ids = rng.integers(-1, 40, 3000)  # -1: a product not in the space
    times = rng.integers(1_700_000_000, 1_700_900_000, 3000)
    keys = [f"c{i}" for i in range(26)]  # c25 has no line: no vector
    kw = {"times": times, "half_life_days": 3.0, "popularity_power": 0.5}
    one = customers.customer_table(vectors, counts, "fp", keys, users, ids, **kw)
    monkeypatch.setattr(customers, "CUSTOMER_SUMS_BYTES", 3 * 8 * 6)  # three customers per pass
    monkeypatch.setattr(customers, "CUSTOMER_BLOCK", 256)
    many = customers.customer_table(vectors, counts, "fp", keys, users, ids, **kw)
    assert many.keys == one.keys and "c25" not in many.keys
    assert many.vectors.tobytes() == one.vectors.tobytes()
    assert np.array_equal(many.bought_ids, one.bought_ids) and many.config == one.config


def test_an_item_named_like_an_attribute_token_is_refused(tmp_path):
    """With item attributes, ``attr:`` keys are tokens: a log item named so would merge with one."""
    (tmp_path / "log.csv").write_text("order_id,product_id\n1,tent\n1,attr:category=outdoor\n2,tent\n")
    (tmp_path / "items.csv").write_text("product_id,category\ntent,outdoor\n")
    with pytest.raises(InputError, match=r"item 'attr:category=outdoor' of the log starts with 'attr:'"):
        retail.train_from_log(
            tmp_path / "log.csv", user_col=None, item_attrs=tmp_path / "items.csv", epochs=1, progress=False
        )
    with pytest.raises(InputError, match=r"item attributes file '.*nothere.csv' does not exist"):
        retail.train_from_log(
            tmp_path / "log.csv", user_col=None, item_attrs=tmp_path / "nothere.csv", epochs=1, progress=False
        )


def test_attribute_tokens_are_capped_per_item_and_in_length(tmp_path):
    """Issue 34's case: 200 items with 5,000-word titles (a ~6 MB table) and a 100 k-character value add
    at most MAX_ITEM_TOKENS tokens per item, each key cut at MAX_VALUE_CHARS, and say how many were cut."""
    from likewise.readers.attrs import MAX_ITEM_TOKENS, MAX_VALUE_CHARS

    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(20_000)]
    rows = ["product_id,title,note"]
    for i in range(200):
        rows.append(
            f"p{i}," + " ".join(rng.choice(words, 5_000)) + "," + ("x" * 100_000 if i == 0 else "short")
        )
    (tmp_path / "items.csv").write_text("\n".join(rows) + "\n")
    lines = ["order_id,product_id"] + [
        f"{o},p{p}" for o in range(2_000) for p in rng.choice(200, 3, replace=False)
    ]
    (tmp_path / "log.csv").write_text("\n".join(lines) + "\n")
    emb = retail.train_from_log(
        tmp_path / "log.csv",
        user_col=None,
        item_attrs=tmp_path / "items.csv",
        dim=8,
        epochs=1,
        progress=False,
    )
    spec = emb.meta["attributes"]
    assert spec["max_tokens"] == MAX_ITEM_TOKENS and spec["items_at_max_tokens"] == 200
    tokens = [k for k in emb.keys if k.startswith("attr:")]
    assert max(map(len, tokens)) <= len("attr:note=") + MAX_VALUE_CHARS
    corpus = Corpus.open(next((tmp_path / "cache").iterdir()))
    assert corpus.n_tokens <= 2_000 * 3 * (1 + MAX_ITEM_TOKENS)  # each item and at most its capped tokens
