"""The one resolver of training inputs (likewise/readers/resolve.py, issue 47): what each kind of input
becomes, the checks made once for every front end, and inputs that reach training only through it
(a DuckDB relation, a table as the new log of an update)."""

from __future__ import annotations

from contextlib import ExitStack

import numpy as np
import pyarrow as pa
import pytest

import likewise
from likewise.errors import InputError
from likewise.readers import InputSpec, ReadOptions, SparseBaskets, resolve_input

DET = {"dim": 8, "epochs": 2, "deterministic": True, "seed": 1, "progress": False, "backend": "cpu"}
LOG = {"basket_col": "order", "item_col": "product"}


def _orders(n: int = 300, seed: int = 0) -> pa.Table:
    """Orders of two kinds (tents with lamps, kettles with mugs), each customer buying one kind."""
    rng = np.random.default_rng(seed)
    kinds = [["tent", "lamp", "stove"], ["kettle", "mug", "tea"]]
    rows: dict[str, list] = {"order": [], "product": [], "customer": [], "ts": []}
    for o in range(n):
        kind = kinds[o % 2]
        for p in rng.choice(kind, size=2, replace=False):
            rows["order"].append(f"o{o}")
            rows["product"].append(str(p))
            rows["customer"].append(f"c{o % 20}")
            rows["ts"].append(1_700_000_000 + 3600 * o)
    return pa.table(rows)


def _resolve(data, **options):
    with ExitStack() as stack:
        return resolve_input(data, ReadOptions(**options), stack)


def test_each_kind_of_input_becomes_one_shape(tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("a b c\nb c d\n")
    assert _resolve(str(text)).data == InputSpec(paths=(str(text),))
    spec = InputSpec(paths=(str(text),))
    assert _resolve(spec).data == spec  # a spec is read as it says
    assert _resolve(spec, tokenize="simple").data.tokenize == "simple"
    log = _resolve(["a.csv", "b.csv"], **LOG).data  # with columns a list of str names files
    assert log.paths == ("a.csv", "b.csv") and log.basket_col == "order"
    assert _resolve("postgresql://db", sql="select 1", **LOG).data.uri == "postgresql://db"
    assert isinstance(_resolve(np.eye(3)).data, SparseBaskets)
    seqs = [["a", "b"], ["b", "c"]]
    assert _resolve(seqs).data is seqs
    table = _resolve(_orders(4), **LOG)
    assert table.data.format == "parquet" and table.cache_dir is not None  # compiled once, in scratch


def test_the_checks_are_made_once_for_every_input():
    with pytest.raises(InputError, match="an order log needs basket_col= and item_col="):
        _resolve("orders.csv", user_col="customer")
    with pytest.raises(InputError, match="training on a table needs basket_col="):
        _resolve(_orders(4))
    with pytest.raises(InputError, match="name the order time with time_col=, not order_col="):
        _resolve("orders.csv", order_col="ts", user_col="customer", **LOG)
    with pytest.raises(InputError, match="basket_col= names what a table or a log file holds"):
        _resolve([["a", "b"]], basket_col="order")
    with pytest.raises(InputError, match="user_col= does not apply to a sparse matrix"):
        _resolve(np.eye(3), user_col="u")
    with pytest.raises(InputError, match="tokenize='simple' reads text files"):
        _resolve([["a"]], tokenize="simple")
    with pytest.raises(InputError, match="a query runs on one database: give its URI alone, got 2 paths"):
        _resolve(["a.db", "b.db"], sql="select 1", **LOG)
    with pytest.raises(InputError, match="duration 'soon' is not understood"):
        ReadOptions(sessions="soon")
    with pytest.raises(InputError, match="cannot train on int"):
        _resolve(5)


def test_a_spec_given_with_options_is_read_with_them(tmp_path):
    spec = InputSpec(paths=("orders.csv",), format="csv")
    merged = _resolve(spec, user_col="customer", **LOG).data
    assert merged.format == "csv" and merged.user_col == "customer" and merged.basket_col == "order"


def test_a_duckdb_relation_trains_as_its_table_does():
    duckdb = pytest.importorskip("duckdb")
    table = _orders()
    con = duckdb.connect()
    con.register("orders", table)
    relation = con.sql("select * from orders")
    a = likewise.train(relation, **LOG, user_col="customer", **DET)
    b = likewise.train(table, **LOG, user_col="customer", **DET)
    assert a.keys == b.keys and np.array_equal(a.vectors, b.vectors)
    assert len(a.customers) == 20 and a.meta["retail"]["lines"] == table.num_rows
    with pytest.raises(InputError, match="'item'"):  # the table's checks name the missing column
        likewise.train(con.sql("select * from orders"), basket_col="order", item_col="item", **DET)


def test_one_path_for_the_python_api_the_log_function_and_the_command_line(tmp_path):
    import pyarrow.parquet as pq

    from likewise.cli import main

    path = tmp_path / "orders.parquet"
    pq.write_table(_orders(), path)
    cols = {**LOG, "user_col": "customer", "time_col": "ts"}
    a = likewise.train(str(path), **cols, **DET)
    b = likewise.retail.train_from_log(str(path), **cols, **DET)
    argv = ["train", str(path), "--basket-col", "order", "--item-col", "product", "--user-col", "customer"]
    argv += ["--time-col", "ts", "--dim", "8", "--epochs", "2", "--deterministic", "--seed", "1", "--quiet"]
    assert main([*argv, "--backend", "cpu", "-o", str(tmp_path / "m")]) == 0
    c = likewise.load(tmp_path / "m")
    for other in (b, c):
        assert np.array_equal(a.vectors, other.vectors)
        assert np.array_equal(a.customers.vectors, other.customers.vectors)
    assert a.meta["retail"] == c.meta["retail"]


def test_an_update_reads_a_table_through_the_resolver():
    from likewise.retail.update import update

    table = _orders(400)
    first = table.slice(0, 300)
    emb = likewise.train(first, **LOG, user_col="customer", time_col="ts", **DET)
    new = update(emb, table.slice(300))
    assert (
        new.meta["update"]["lines"] == table.num_rows - 300
        and new.meta["parent"]["fingerprint"] == emb.fingerprint
    )


def test_the_report_types_what_training_chose(tmp_path):
    from likewise.training.report import Choice, TrainReport

    emb = likewise.train(_orders(), **LOG, user_col="customer", time_col="ts", **DET)
    report = emb.report
    assert isinstance(report, TrainReport)
    assert report.mode == Choice("basket", emb.meta["mode_reason"])
    assert "grouped by 'order'" in report.mode.reason
    assert report.epochs == Choice(2, "set by the caller")
    assert report.completion.value == emb.completion and report.completion.reason
    assert len(report.history) == 2 and report.timings.train > 0 and report.timings.customers > 0
    assert report.timings.total >= report.timings.read + report.timings.train
    assert "validation_rr" not in emb.meta  # the held-out ranks went to the completion model, not the record
    emb.save(tmp_path / "m")
    assert likewise.load(tmp_path / "m").report == report  # the saved form reads back whole


def test_a_space_saved_before_the_report_has_one():
    from pathlib import Path

    old = likewise.load(Path(__file__).parent / "fixtures" / "space_v1")
    report = old.report
    assert report.basket_rule.value in ("mixture", "product") and report.timings.total >= 0.0
    assert report.mode.value == old.config.mode  # saved before meta["resolved"]: the config's values


def test_every_input_takes_the_run_options():
    """A log with customers trains through the same run as any input: its callback is called (it was
    refused while order logs took a path of their own)."""
    seen = []
    emb = likewise.train(_orders(), **LOG, user_col="customer", callback=seen.append, **DET)
    assert [s.epoch for s in seen] == [1, 2] and emb.customers is not None
    with pytest.raises(InputError, match="half_life_days= and popularity_power= weigh customer vectors"):
        likewise.train(_orders(), **LOG, half_life_days=30, **DET)


def test_progress_unset_follows_the_terminal(monkeypatch):
    """``progress`` not given: a bar only when stderr is a terminal (as before the one path)."""
    import sys

    from likewise._progress import Progress
    from likewise.training.train import Run

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    seen = {}
    real = Run.of.__func__

    def spy(cls, config, *a, **kw):
        run = real(cls, config, *a, **kw)
        seen["progress"] = run.progress
        return run

    monkeypatch.setattr(Run, "of", classmethod(spy))
    likewise.train([["a", "b"], ["b", "c"]] * 5, dim=4, epochs=1, min_count=1, backend="cpu")
    assert seen["progress"] == Progress("bar")


def test_train_from_log_is_an_order_log_without_customers(tmp_path):
    """train_from_log reads an order log whatever columns it is given: products, and the record that
    update needs (meta["retail"]), as before the one path."""
    import pyarrow.parquet as pq

    from likewise.retail.update import update

    path = tmp_path / "orders.parquet"
    pq.write_table(_orders(), path)
    emb = likewise.retail.train_from_log(str(path), **LOG, user_col=None, **DET)
    assert emb.vocab.what == "product" and emb.meta["retail"]["user_col"] is None
    assert update(emb, str(path)).meta["update"]["lines"] == _orders().num_rows
    plain = likewise.train(str(path), **LOG, **DET)  # a log of baskets and items alone: items
    assert plain.vocab.what == "item" and "retail" not in plain.meta
    assert np.array_equal(plain.vectors, emb.vectors)


def test_options_given_whole_train_as_their_keywords(tmp_path):
    """likewise.train(data, TrainConfig(...), read=ReadOptions(...), run=RunOptions(...),
    customers=CustomerOptions(...)) is the keyword call, byte for byte (deterministic)."""
    from likewise import CustomerOptions, ReadOptions, RunOptions, TrainConfig

    seen: list = []
    cfg = TrainConfig(dim=8, epochs=2, deterministic=True, seed=1, backend="cpu")
    whole = likewise.train(
        _orders(),
        cfg,
        read=ReadOptions(**LOG, user_col="customer", time_col="ts"),
        run=RunOptions(progress=False, callback=seen.append, cache_dir=tmp_path / "cache"),
        customers=CustomerOptions(half_life_days=30.0),
    )
    keywords = likewise.train(
        _orders(), **LOG, user_col="customer", time_col="ts", half_life_days=30.0, **DET,
        cache_dir=tmp_path / "cache",
    )  # fmt: skip
    assert [s.epoch for s in seen] == [1, 2]
    assert whole.vectors.tobytes() == keywords.vectors.tobytes()
    assert whole.context.tobytes() == keywords.context.tobytes()
    assert whole.customers.vectors.tobytes() == keywords.customers.vectors.tobytes()
    assert whole.config == keywords.config
    # keywords beside the objects fill the fields the objects leave unset
    mixed = likewise.train(
        _orders(), cfg, read=ReadOptions(**LOG), run=RunOptions(progress=False), user_col="customer",
        time_col="ts", half_life_days=30.0,
    )  # fmt: skip
    assert mixed.vectors.tobytes() == keywords.vectors.tobytes()


def test_an_option_given_twice_or_unknown_is_refused():
    from likewise import ReadOptions, RunOptions

    with pytest.raises(InputError, match=r"basket_col='x' is given twice: as a keyword and as "
                       r"read=ReadOptions\(basket_col='order'\)"):  # fmt: skip
        likewise.train(_orders(), read=ReadOptions(**LOG), basket_col="x", **DET)
    with pytest.raises(
        InputError, match=r"progress='log' is given twice: .*run=RunOptions\(progress='none'\)"
    ):
        likewise.train(_orders(), run=RunOptions(progress="none"), **LOG, progress="log", dim=8)
    with pytest.raises(
        InputError, match=r"unknown training parameter 'user_column' \(did you mean user_col=\?\)"
    ):
        likewise.train(_orders(), **LOG, user_column="customer", **DET)
    with pytest.raises(
        InputError, match=r"unknown training parameter 'checkpoint_dri' \(did you mean checkpoint_dir"
    ):
        likewise.train(_orders(), **LOG, checkpoint_dri="x", **DET)
    with pytest.raises(InputError, match=r"read= takes a ReadOptions, not dict"):
        likewise.train(_orders(), read=dict(LOG), **DET)
