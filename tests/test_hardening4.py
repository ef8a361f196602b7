"""A hostile user's inputs (issue 43): each finding, fixed at its root, holds here.

Rules: a model that is saved can be loaded; a key is the text the user wrote; a message names the path,
the value and the fix; nothing is half-written.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import numpy as np
import pytest

import likewise
from likewise import _fileio
from likewise.cli import main
from likewise.data.corpus import Corpus
from likewise.errors import InputError


def strict_json(path: Path) -> dict:
    """A JSON file read as any strict reader would: NaN and Infinity are not JSON."""

    def refuse(token: str) -> None:
        raise AssertionError(f"{path} holds {token}, which is not JSON")

    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    if argv and argv[0] == "train" and "--progress" not in argv:
        argv = [*argv, "--progress", "none"]  # the error alone on stderr (progress: tests/test_progress.py)
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ item 1: no NaN reaches a manifest


def test_orders_that_repeat_one_product_train_a_model_that_loads(tmp_path, capsys):
    """Every multi-line order repeats one product: no held-out case can be ranked, the MRR of none was
    NaN and the manifest held it (``info`` then failed). The affinity stays, and says why."""
    rng = random.Random(6)
    lines = ["order_id,customer_id,product_id"]
    for o in range(600):
        p = rng.randrange(60)
        lines += [f"{o},c{rng.randrange(20)},p{p}"] * rng.choice([1, 2, 3])
    log = tmp_path / "repeat.csv"
    log.write_text("\n".join(lines) + "\n")
    model = tmp_path / "m"
    argv = ["train", log, "--basket-col", "order_id", "--item-col", "product_id", "--epochs", "1"]
    code, _, err = run([*argv, "--dim", "8", "-o", model], capsys)
    assert code == 0, err
    assert "Mean of empty slice" not in err
    manifest = strict_json(model / "manifest.json")
    assert manifest["meta"]["completion"] == "affinity"
    assert "two different items" in manifest["meta"]["completion_reason"]
    assert run(["info", model], capsys)[0] == 0
    likewise.load(model)


def test_the_manifest_writer_refuses_a_non_finite_number_before_replacing_anything(tmp_path):
    emb = likewise.train([["a", "b", "c"], ["b", "c"], ["a", "c"]] * 20, mode="basket", dim=4, epochs=1)
    target = tmp_path / "m"
    emb.save(target)
    before = (target / "manifest.json").read_bytes()
    emb.meta["itemitem"] = {"validation_mrr": {"1": float("nan")}}
    with pytest.raises(InputError, match=r"nan at /meta/itemitem/validation_mrr/1") as e:
        emb.save(target, overwrite=True)
    assert str(target) in str(e.value)
    assert (target / "manifest.json").read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["m"]  # no temporary left beside it
    likewise.load(target)


# ------------------------------------------------------------------ item 3: times


def timed_log(tmp_path: Path, times: list[str], name: str = "log.csv") -> Path:
    """A small order log of 60 orders with a customer and a time column; ``times`` fill the first rows."""
    rng = random.Random(3)
    rows = ["order_id,customer_id,product_id,t"]
    for o in range(60):
        for _ in range(3):
            rows.append(f"{o},c{o % 7},p{rng.randrange(12)},{1767225600 + 3600 * o}")
    for i, t in enumerate(times):
        rows[1 + i] = rows[1 + i].rsplit(",", 1)[0] + f",{t}"
    path = tmp_path / name
    path.write_text("\n".join(rows) + "\n")
    return path


def train_timed(log: Path, capsys, *extra: str) -> tuple[int, str]:
    argv = ["train", log, "--basket-col", "order_id", "--item-col", "product_id", "--user-col", "customer_id"]
    code, _, err = run([*argv, "--time-col", "t", "--epochs", "1", "--dim", "8", *extra], capsys)
    return code, err


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("nan", "holds nan: a time must be a finite number"),
        ("inf", "holds inf: a time must be a finite number"),
        ("1e30", "holds 1e+30, out of range: seconds since 1970 must be between"),
        (
            "1767225600000",
            "holds 1767225600000, past the year 2500 as seconds since 1970: it looks like "
            "milliseconds; give seconds (divide by 1,000)",
        ),
        ("1767225600000000000", "it looks like nanoseconds; give seconds (divide by 1,000,000,000)"),
    ],
)
def test_times_not_finite_out_of_range_or_in_milliseconds_are_refused_naming_the_row(
    tmp_path, capsys, value, says
):
    """They were cast to INT64_MIN (a customer of all-zero vectors under --half-life-days) or read as
    seconds in the year 57970, exit 0."""
    log = timed_log(tmp_path, ["1767225600", value])
    code, err = train_timed(log, capsys, "-o", tmp_path / "m")
    assert code == 1
    assert err.count("\n") == 1, err
    assert f"time column 't' in {log} at data row 2 (rows count from 1" in err
    assert says in err
    assert not (tmp_path / "m").exists()


def test_iso_times_with_a_utc_offset_are_read_as_utc(tmp_path, capsys):
    import pyarrow as pa

    from likewise.readers._checks import column_seconds

    texts = pa.array(
        ["2026-01-01T11:00:00+05:00", "2026-01-01T06:00:00Z", "2026-01-01 06:00:00", "2026-01-01T06:00:00.5"]
    )
    assert column_seconds(Path("f"), "t", texts).tolist() == [1767247200] * 4
    millis = pa.array([1500, -1500], pa.timestamp("ms"))  # not whole seconds: Arrow's cast refused them
    assert column_seconds(Path("f"), "t", millis).tolist() == [1, -2]
    log = timed_log(tmp_path, ["2026-01-01T11:00:00+05:00"] * 180)
    code, err = train_timed(log, capsys, "-o", tmp_path / "m")
    assert code == 0, err


# ------------------------------------------------------------------ item 5: training that runs away


def test_two_items_always_bought_together_train_to_finite_vectors():
    """Each item is the other's only negative: the clip's constant gradient at a saturated score grew
    the rows geometrically (30 k orders: 1e7; 300 k: infinity, blamed on the input). A pair learnt past
    ``SETTLED`` is no longer updated."""
    emb = likewise.train([["a", "b"]] * 30_000, mode="basket", dim=16, epochs=5, progress=False)
    W, C = np.asarray(emb.vectors, np.float64), np.asarray(emb.context, np.float64)
    assert np.isfinite(W).all() and np.isfinite(C).all()
    scores = W @ C.T
    assert scores.max() < 64 and scores.min() > -64, scores  # the kernels' SETTLED is 32


def test_a_run_that_diverges_says_so_and_does_not_blame_the_input():
    with pytest.raises(InputError, match=r"training diverged: row \d+ of the .* vectors is not finite") as e:
        likewise.train(
            [["a", "b", "c"], ["c", "d"]] * 50, mode="basket", dim=8, epochs=2, lr=1e30, progress=False
        )
    assert "lower learning rate (e.g. --lr 2.5e+29)" in str(e.value)
    assert "vectors must be finite" not in str(e.value)


# ------------------------------------------------------------------ item 6: keys are the text written


def basket_table(ids, items=None):
    import pyarrow as pa

    n = len(ids)
    return pa.table(
        {"order_id": ids, "product_id": items if items is not None else [f"p{i % 3}" for i in range(n)]}
    )


@pytest.mark.parametrize(
    ("column", "values", "says"),
    [
        ("order_id", [1.0, 2.0, float("nan"), 3.0], r"null \(NaN\) 'order_id' value in .* at data row 3"),
        ("product_id", [1.0, 2.0, 3.0, float("nan")], r"null \(NaN\) 'product_id' value in .* at data row 4"),
        (
            "product_id",
            [1.0, 123456789012345678.0, 3.0, 4.0],
            r"'product_id' value 1\.2345678901234568e\+17 ",
        ),
        (
            "order_id",
            [1.0, 2.5, 3.0, 4.0],
            r"'order_id' value 2\.5 in .* at data row 2 .* store ids as text or integers",
        ),
    ],
)
def test_a_float_key_column_is_refused_where_the_text_is_not_the_id(tmp_path, capsys, column, values, says):
    """NaN ids became the key 'nan' (all NaN baskets one basket); 123456789012345678.0 became
    '1.2345678901234568e+17'. Whole floats up to 2**53 are their integer text."""
    import pyarrow.parquet as pq

    table = basket_table(values) if column == "order_id" else basket_table([1, 1, 2, 2], values)
    pq.write_table(table, tmp_path / "log.parquet")
    argv = ["train", tmp_path / "log.parquet", "--basket-col", "order_id", "--item-col", "product_id"]
    code, _, err = run([*argv, "--epochs", "1", "--dim", "4", "-o", tmp_path / "m"], capsys)
    assert code == 1
    assert err.count("\n") == 1, err
    import re

    assert re.search(says, err), err


def test_whole_float_ids_are_their_integer_text(tmp_path):
    import pyarrow.parquet as pq

    pq.write_table(
        basket_table([1.0, 1.0, 2.0, 2.0] * 5, [12.0, 7.0, 12.0, 9.0] * 5), tmp_path / "log.parquet"
    )
    spec = likewise.InputSpec(str(tmp_path / "log.parquet"), basket_col="order_id", item_col="product_id")
    emb = likewise.train(spec, mode="basket", dim=4, epochs=1, progress=False, cache_dir=tmp_path / "c")
    assert sorted(emb.keys) == ["12", "7", "9"]


def test_a_word2vec_file_with_a_key_twice_is_refused_naming_both_lines(tmp_path, capsys):
    vec = tmp_path / "v.vec"
    vec.write_text("3 2\na 1 0\nb 0 1\na 0.5 0.5\n")
    code, _, err = run(["import", vec, "-o", tmp_path / "m"], capsys)
    assert code == 1
    assert "key 'a' at line 4 repeats the key at line 2; a key has one vector" in err
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize(
    ("value", "says"), [("inf", "holds inf"), ("-1", "holds -1"), ("", "holds an empty value (null)")]
)
def test_a_quantity_that_is_not_a_finite_number_at_least_0_is_refused_naming_the_row(
    tmp_path, capsys, value, says
):
    rows = ["order_id,customer_id,product_id,qty"] + [f"{o},c{o % 3},p{o % 5},1" for o in range(40)]
    rows[2] = f"1,c1,p1,{value}"
    (tmp_path / "log.csv").write_text("\n".join(rows) + "\n")
    argv = ["train", tmp_path / "log.csv", "--basket-col", "order_id", "--item-col", "product_id"]
    code, _, err = run(
        [*argv, "--quantity-col", "qty", "--epochs", "1", "--dim", "4", "-o", tmp_path / "m"], capsys
    )
    assert code == 1
    assert f"quantity column 'qty' in {tmp_path / 'log.csv'} at data row 2 (rows count from 1" in err
    assert f"{says}; a quantity must be a finite number >= 0" in err


# ------------------------------------------------------------------ item 10: a column read twice


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (
            ["--basket-col", "product_id", "--item-col", "product_id"],
            "'product_id' is given as both basket_col and item_col",
        ),
        (
            ["--basket-col", "order_id", "--item-col", "product_id", "--type-col", "product_id"],
            "'product_id' is given as both item_col and type_col",
        ),
        (
            ["--basket-col", "order_id", "--type-cols", "product=product_id,campaign=product_id"],
            "'product_id' is given as both type_cols['product'] and type_cols['campaign']",
        ),
    ],
)
def test_a_column_given_two_roles_is_one_line_naming_both(tmp_path, capsys, options, says):
    log = tmp_path / "log.csv"
    log.write_text("order_id,product_id\n" + "".join(f"{o},p{o % 4}\n" for o in range(20)))
    code, _, err = run(["train", log, *options, "--epochs", "1", "--dim", "4", "-o", tmp_path / "m"], capsys)
    assert code == 1
    assert err.count("\n") == 1, err
    assert says in err


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_header_naming_a_column_twice_is_refused(tmp_path, capsys, fmt):
    """Parquet raised KeyError ('Field "product_id" exists 2 times in schema'); CSV used the first."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [(o, f"p{o % 4}", f"q{o % 3}") for o in range(20)]
    if fmt == "csv":
        log = tmp_path / "log.csv"
        log.write_text("order_id,product_id,product_id\n" + "".join(f"{o},{a},{b}\n" for o, a, b in rows))
    else:
        log = tmp_path / "log.parquet"
        cols = [pa.array([r[i] for r in rows]) for i in range(3)]
        pq.write_table(pa.Table.from_arrays(cols, names=["order_id", "product_id", "product_id"]), log)
    argv = ["train", log, "--basket-col", "order_id", "--item-col", "product_id", "--epochs", "1"]
    code, _, err = run([*argv, "-o", tmp_path / "m"], capsys)
    assert code == 1
    assert err.count("\n") == 1, err
    assert f"column 'product_id' appears 2 times in the header of {log}; rename all but one" in err


# ------------------------------------------------------------------ item 11: one order's size is bounded


def test_an_order_longer_than_a_text_line_is_cut_and_the_summary_says_so(tmp_path, capsys, monkeypatch):
    """A log whose guest orders share one id made one order of 20 M lines (111 s, 1.43 GB); a text line
    is cut at MAX_SEQUENCE_LENGTH items, and now a log order is cut at it too, consecutively."""
    cap = 5
    monkeypatch.setattr("likewise.readers.text.MAX_SEQUENCE_LENGTH", cap)
    lines = ["order_id,product_id"]
    lines += [f"guest,p{i}" for i in range(2 * cap + 1)]  # one order of cap * 2 + 1 lines
    lines += [f"o{o},p{(o + k) % 7}" for o in range(40) for k in range(3)]  # orders of 3
    log = tmp_path / "guests.csv"
    log.write_text("\n".join(lines) + "\n")
    model = tmp_path / "m"
    argv = ["train", log, "--basket-col", "order_id", "--item-col", "product_id", "--epochs", "1"]
    code, out, err = run([*argv, "--dim", "4", "--cache-dir", tmp_path / "cache", "-o", model], capsys)
    assert code == 0, err
    assert f"1 order longer than {cap} lines cut into consecutive orders of at most {cap}" in out
    corpus = strict_json(model / "manifest.json")["meta"]["corpus"]
    assert corpus["n_sequences"] == 40 + 3 and corpus["cut_sequences"] == 1
    (folder,) = (p.parent for p in (tmp_path / "cache").rglob("manifest.json"))
    corpus = Corpus.open(folder)
    pieces = [corpus.keys(i) for i in range(len(corpus)) if len(corpus.sequence(i)) != 3]
    assert [len(p) for p in pieces] == [cap, cap, 1]  # consecutive, in the order of the file
    assert [k for p in pieces for k in p] == [f"p{i}" for i in range(2 * cap + 1)]

    monkeypatch.undo()  # at the real cap nothing is cut: no line, and 0 in the JSON summary
    again = [*argv, "--dim", "4", "--cache-dir", tmp_path / "cache", "-o", tmp_path / "m2", "--json"]
    code, out, err = run(again, capsys)
    assert code == 0, err
    assert json.loads(out)["orders_cut"] == 0


# ------------------------------------------------------------------ unclear messages: one line, the cause


def test_a_session_gap_under_a_second_names_the_value_given(tmp_path, capsys):
    """``--sessions 0.5s`` said ``session_gap == 0``: the value given was rounded before it was checked."""
    code, err = train_timed(timed_log(tmp_path, []), capsys, "--sessions", "0.5s", "-o", tmp_path / "m")
    assert code == 1 and err.count("\n") == 1
    assert "duration '0.5s' is 0.5 seconds; it must be at least 1 second" in err
    assert "session_gap == 0" not in err


def test_an_empty_output_path_is_called_empty(tmp_path, capsys, monkeypatch):
    """``train -o ""`` said ``'.' already exists``: ``Path("")`` is the current folder."""
    monkeypatch.chdir(tmp_path)
    text = tmp_path / "baskets.txt"
    text.write_text("a b c\nb c\na c\n" * 10)
    code, _, err = run(["train", text, "--epochs", "1", "--dim", "4", "-o", ""], capsys)
    assert code == 1 and err.count("\n") == 1
    assert "the output path is empty ('')" in err and "already exists" not in err
    for fmt in ["word2vec", "projector"]:
        code, _, err = run(["export", tmp_path / "m", "--format", fmt, "-o", ""], capsys)
        assert code == 1 and "the output path is empty" in err
    with pytest.raises(InputError, match="the output path is empty"), _fileio.atomic_file(""):
        pass


def test_a_fifo_at_the_checkpoint_lock_is_named_not_errno_22(tmp_path, capsys):
    """A FIFO at ``DIR/checkpoint.lock`` said ``[Errno 22] Invalid argument`` (flock on a FIFO)."""
    folder = tmp_path / "ck"
    folder.mkdir()
    os.mkfifo(folder / "checkpoint.lock")
    with pytest.raises(InputError) as e:
        likewise.train([["a", "b", "c"], ["b", "c"]] * 20, dim=4, epochs=1, checkpoint_dir=folder)
    msg = str(e.value)
    assert f"the lock {str(folder / 'checkpoint.lock')!r} of the checkpoint directory is a FIFO" in msg
    assert "not a regular file" in msg and "Errno" not in msg


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_a_field_longer_than_the_readers_block_says_so_not_increase_block_size(
    tmp_path, capsys, monkeypatch, fmt
):
    """A 2 GB CSV field said "try to increase block size?", an option likewise does not have."""
    monkeypatch.setattr("likewise.readers._batches._BATCH_BYTES", 1000)
    rows = [("o1", "a"), ("o1", "b"), ("o2", "x" * 5000), ("o2", "a")] + [
        (f"o{i}", "b") for i in range(3, 40)
    ]
    log = tmp_path / f"log.{fmt}"
    if fmt == "csv":
        log.write_text("order_id,product_id\n" + "".join(f"{o},{p}\n" for o, p in rows))
    else:
        log.write_text("".join(json.dumps({"order_id": o, "product_id": p}) + "\n" for o, p in rows))
    argv = ["train", log, "--basket-col", "order_id", "--item-col", "product_id", "-o", tmp_path / "m"]
    code, _, err = run(argv, capsys)
    assert code == 1 and err.count("\n") == 1
    assert f"cannot read {log}" in err
    assert "a field or line is larger than the reader's block of 1,000 bytes" in err and "Parquet" in err
    assert "increase block size" not in err
