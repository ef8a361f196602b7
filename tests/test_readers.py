"""Readers: text (plain, gz, bz2, zst, folders, delimiters) and transaction logs (CSV, Parquet, JSONL)."""

from __future__ import annotations

import bz2
import gzip
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

from likewise import readers
from likewise.data.corpus import build_corpus
from likewise.errors import InputError
from likewise.readers import InputSpec, detect_format, hash_keys, iter_text_sequences, resolve_files
from likewise.readers import log as log_reader


def make_baskets(seed: int = 0, n: int = 300, n_items: int = 40) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    return [[f"i{int(k)}" for k in rng.integers(0, n_items, size=int(rng.integers(1, 8)))] for _ in range(n)]


def text_of(baskets: list[list[str]], sep: str = " ") -> str:
    return "".join(sep.join(b) + "\n" for b in baskets)


def all_sequences(corpus) -> list[list[str]]:
    return [corpus.keys(i) for i in range(corpus.n_sequences)]


# ---------------------------------------------------------------------------------------------- text


@pytest.mark.parametrize("suffix", ["", ".gz", ".bz2", ".zst"])
def test_text_plain_and_compressed(tmp_path: Path, suffix: str) -> None:
    baskets = make_baskets()
    data = text_of(baskets).encode("utf-8")
    path = tmp_path / f"baskets.txt{suffix}"
    if suffix == ".gz":
        path.write_bytes(gzip.compress(data))
    elif suffix == ".bz2":
        path.write_bytes(bz2.compress(data))
    elif suffix == ".zst":
        path.write_bytes(zstandard.ZstdCompressor().compress(data))
    else:
        path.write_bytes(data)
    spec = InputSpec((str(path),))
    assert list(iter_text_sequences(spec)) == baskets
    corpus = build_corpus(spec, cache_dir=tmp_path / "cache")
    assert all_sequences(corpus) == baskets


def test_text_blank_lines_skipped_and_whitespace(tmp_path: Path) -> None:
    path = tmp_path / "s.txt"
    path.write_text("a  b\tc\n\n   \nd\r\n  e f  \n", encoding="utf-8")
    assert list(iter_text_sequences(InputSpec(str(path)))) == [["a", "b", "c"], ["d"], ["e", "f"]]


def test_text_folder_sorted_hidden_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "shards"
    folder.mkdir()
    (folder / "b.txt").write_text("x y\n", encoding="utf-8")
    (folder / "a.txt").write_text("p q\nr\n", encoding="utf-8")
    (folder / ".hidden.txt").write_text("SECRET\n", encoding="utf-8")
    (folder / "_SUCCESS").write_text("", encoding="utf-8")
    (folder / "c.txt.gz").write_bytes(gzip.compress(b"z\n"))
    spec = InputSpec((str(folder),))
    assert [p.name for p in resolve_files(spec)] == ["a.txt", "b.txt", "c.txt.gz"]
    assert list(iter_text_sequences(spec)) == [["p", "q"], ["r"], ["x", "y"], ["z"]]


def test_text_custom_delimiter(tmp_path: Path) -> None:
    path = tmp_path / "s.txt"
    path.write_text("New York|Paris||Rome\n| |\nOslo | Bergen\n", encoding="utf-8")
    spec = InputSpec(str(path), delimiter="|")
    assert list(iter_text_sequences(spec)) == [["New York", "Paris", "Rome"], ["Oslo", "Bergen"]]


def test_detect_format() -> None:
    assert detect_format("a/orders.csv") == "csv"
    assert detect_format("orders.TSV.gz") == "csv"
    assert detect_format("x.parquet") == "parquet"
    assert detect_format("x.pq") == "parquet"
    assert detect_format("x.ndjson.zst") == "jsonl"
    assert detect_format("x.jsonl") == "jsonl"
    assert detect_format("corpus.txt.bz2") == "text"
    assert detect_format("README") == "text"
    assert detect_format("x.csv", "text") == "text"


def test_text_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="'nope.txt' does not exist"):
        list(iter_text_sequences(InputSpec("nope.txt")))
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(InputError, match="empty.txt is empty"):
        list(iter_text_sequences(InputSpec(str(empty))))
    binary = tmp_path / "bin.txt"
    binary.write_bytes(b"\xff\xfe\x00\x81garbage")
    with pytest.raises(InputError, match="not UTF-8"):
        list(iter_text_sequences(InputSpec(str(binary))))
    bad_gz = tmp_path / "bad.txt.gz"
    bad_gz.write_bytes(b"not gzip at all")
    with pytest.raises(InputError, match="cannot read .*bad.txt.gz"):
        list(iter_text_sequences(InputSpec(str(bad_gz))))
    bad_zst = tmp_path / "bad.txt.zst"
    bad_zst.write_bytes(b"not zstd at all")
    with pytest.raises(InputError, match="bad.txt.zst"):
        list(iter_text_sequences(InputSpec(str(bad_zst))))
    empty_dir = tmp_path / "nothing"
    empty_dir.mkdir()
    with pytest.raises(InputError, match="holds no input files"):
        list(iter_text_sequences(InputSpec(str(empty_dir))))


def test_spec_validation() -> None:
    with pytest.raises(InputError, match="format == 'xls'"):
        InputSpec("a.xls", format="xls")
    with pytest.raises(InputError, match="delimiter == ''"):
        InputSpec("a.txt", delimiter="")
    with pytest.raises(InputError, match="paths is empty"):
        InputSpec(())
    assert InputSpec("a.txt").paths == ("a.txt",)


# ----------------------------------------------------------------------------------------------- logs


def make_log(seed: int = 1, n_baskets: int = 200, string_baskets: bool = True):
    """An unsorted log with interleaved baskets; returns (rows, expected baskets in ts order)."""
    rng = np.random.default_rng(seed)
    rows = []
    expected = {}
    for b in range(n_baskets):
        basket = f"order-{b}" if string_baskets else 1000 + b
        n = int(rng.integers(1, 7))
        items = [int(k) for k in rng.integers(0, 30, size=n)]
        ts = rng.permutation(100)[:n]  # distinct times, not in item order
        expected[basket] = [str(items[j]) for j in np.argsort(ts)]
        rows += [(basket, 7, items[j], int(ts[j])) for j in range(n)]
    perm = rng.permutation(len(rows))
    return [rows[i] for i in perm], expected


def log_table(rows) -> pa.Table:
    cols = list(zip(*rows, strict=True))
    return pa.table(
        {
            "order_id": list(cols[0]),
            "customer_id": list(cols[1]),
            "product_id": list(cols[2]),
            "ts": list(cols[3]),
        }
    )


def write_csv(path: Path, rows, sep: str = ",") -> None:
    lines = [sep.join(["order_id", "customer_id", "product_id", "ts"])]
    lines += [sep.join(str(v) for v in r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def log_spec(path: Path, order: bool = True, **kw) -> InputSpec:
    return InputSpec(
        (str(path),), basket_col="order_id", item_col="product_id", order_col="ts" if order else None, **kw
    )


def sorted_sequences(corpus) -> list[list[str]]:
    return sorted(all_sequences(corpus))


def test_csv_unsorted_log_grouped_by_order_col(tmp_path: Path) -> None:
    rows, expected = make_log()
    path = tmp_path / "orders.csv"
    write_csv(path, rows)
    corpus = build_corpus(log_spec(path), cache_dir=tmp_path / "cache")
    assert corpus.n_sequences == len(expected)
    assert corpus.n_tokens == len(rows)
    assert sorted_sequences(corpus) == sorted(expected.values())


def test_csv_without_order_col_keeps_file_order(tmp_path: Path) -> None:
    rows, _ = make_log(seed=3)
    expected: dict[str, list[str]] = {}
    for b, _c, item, _t in rows:
        expected.setdefault(b, []).append(str(item))
    path = tmp_path / "orders.csv"
    write_csv(path, rows)
    corpus = build_corpus(log_spec(path, order=False), cache_dir=tmp_path / "cache")
    assert sorted_sequences(corpus) == sorted(expected.values())


def test_order_ties_keep_file_order(tmp_path: Path) -> None:
    path = tmp_path / "o.csv"
    path.write_text(
        "order_id,customer_id,product_id,ts\nB,1,z,5\nA,1,p,2\nB,1,y,5\nA,1,q,1\nB,1,x,1\nB,1,w,5\n",
        encoding="utf-8",
    )
    corpus = build_corpus(log_spec(path), cache_dir=tmp_path / "cache")
    assert sorted_sequences(corpus) == [["q", "p"], ["x", "z", "y", "w"]]


def test_tsv_and_compressed_csv(tmp_path: Path) -> None:
    rows, expected = make_log(seed=4, n_baskets=50)
    tsv = tmp_path / "orders.tsv"
    write_csv(tsv, rows, sep="\t")
    gz = tmp_path / "orders.csv.gz"
    plain = tmp_path / "plain.csv"
    write_csv(plain, rows)
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    for path in (tsv, gz):
        corpus = build_corpus(log_spec(path), cache_dir=tmp_path / "cache")
        assert sorted_sequences(corpus) == sorted(expected.values()), path


@pytest.mark.parametrize("string_baskets", [True, False])
def test_parquet_log(tmp_path: Path, string_baskets: bool) -> None:
    rows, expected = make_log(seed=5, string_baskets=string_baskets)
    path = tmp_path / "orders.parquet"
    pq.write_table(log_table(rows), path, row_group_size=97)
    corpus = build_corpus(log_spec(path), cache_dir=tmp_path / "cache")
    assert sorted_sequences(corpus) == sorted(expected.values())


def test_jsonl_log_with_string_items(tmp_path: Path) -> None:
    rows, expected = make_log(seed=6)
    path = tmp_path / "orders.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for b, c, item, t in rows:
            record = {"order_id": b, "customer_id": c, "product_id": f"sku{item}", "ts": t}
            fh.write(json.dumps(record) + "\n")
    corpus = build_corpus(log_spec(path), cache_dir=tmp_path / "cache")
    want = sorted([f"sku{k}" for k in v] for v in expected.values())
    assert sorted_sequences(corpus) == want


def test_int_and_float_item_keys_have_no_dot_zero(tmp_path: Path) -> None:
    path = tmp_path / "f.parquet"
    table = pa.table({"order_id": [1, 1, 2], "product_id": [12.0, 7.0, 12.0], "ts": [1, 2, 3]})
    pq.write_table(table, path)
    corpus = build_corpus(log_spec(path), cache_dir=tmp_path / "cache")
    assert corpus.vocab.keys == ["12", "7"]
    assert sorted_sequences(corpus) == [["12"], ["12", "7"]]


def test_csv_items_keep_their_text(tmp_path: Path) -> None:
    path = tmp_path / "z.csv"
    path.write_text("order_id,product_id\n1,007\n1,7\n2,abc\n", encoding="utf-8")
    corpus = build_corpus(log_spec(path, order=False), cache_dir=tmp_path / "cache")
    assert sorted(corpus.vocab.keys) == ["007", "7", "abc"]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_many_partitions_same_corpus_as_one(tmp_path: Path, monkeypatch, fmt: str) -> None:
    rows, expected = make_log(seed=7, n_baskets=400, string_baskets=(fmt == "csv"))
    if fmt == "csv":
        path = tmp_path / "orders.csv"
        write_csv(path, rows)
    else:
        path = tmp_path / "orders.parquet"
        pq.write_table(log_table(rows), path, row_group_size=101)
    one = build_corpus(log_spec(path), cache_dir=tmp_path / "one")
    scan = readers.scan_log(log_spec(path))
    assert readers.n_partitions(scan.est_bytes, readers.GROUP_MEMORY_BUDGET) == 1
    # the budget is read where the grouping is (readers.log); readers.GROUP_MEMORY_BUDGET is a copy
    monkeypatch.setattr(log_reader, "GROUP_MEMORY_BUDGET", 200)
    assert readers.n_partitions(scan.est_bytes, 200) > 50
    used: list[int] = []

    def counted(est_bytes: int, budget: int) -> int:
        used.append(readers.n_partitions(est_bytes, budget))
        return used[-1]

    monkeypatch.setattr(log_reader, "n_partitions", counted)
    many = build_corpus(log_spec(path), cache_dir=tmp_path / "many")
    assert used and used[0] > 50  # the lowered budget did take effect: pass 2 spilled to disk
    np.testing.assert_array_equal(one.ids, many.ids)
    np.testing.assert_array_equal(one.offsets, many.offsets)
    assert one.vocab == many.vocab
    assert sorted_sequences(many) == sorted(expected.values())
    assert not list((tmp_path / "many").rglob("*.arrows"))  # spill files cleaned up


def test_hash_keys_is_stable_across_slicing() -> None:
    keys = pa.array([f"basket-{i}" for i in range(50)] + ["", "é"])
    whole = hash_keys(keys)
    parts = np.concatenate([hash_keys(keys.slice(0, 17)), hash_keys(keys.slice(17))])
    np.testing.assert_array_equal(whole, parts)
    assert len(set(whole.tolist())) == len(keys)
    ints = pa.array([5, 6, 5], type=pa.int64())
    h = hash_keys(ints)
    assert h[0] == h[2] != h[1]


# --------------------------------------------------------------------------------------------- errors


def test_log_missing_column_names_it_and_lists_available(tmp_path: Path) -> None:
    rows, _ = make_log(n_baskets=5)
    csv = tmp_path / "orders.csv"
    write_csv(csv, rows)
    spec = InputSpec(str(csv), basket_col="order_id", item_col="sku")
    with pytest.raises(InputError, match=r"column 'sku' not found .*available columns: 'order_id'"):
        build_corpus(spec, cache_dir=tmp_path / "cache")
    pqt = tmp_path / "orders.parquet"
    pq.write_table(log_table(rows), pqt)
    with pytest.raises(InputError, match=r"column 'when' not found .*'ts'"):
        build_corpus(
            InputSpec(str(pqt), basket_col="order_id", item_col="product_id", order_col="when"),
            cache_dir=tmp_path / "cache",
        )
    js = tmp_path / "o.jsonl"
    js.write_text('{"order_id": 1, "product_id": 2}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"column 'basket' not found .*'product_id'"):
        build_corpus(InputSpec(str(js), basket_col="basket", item_col="product_id"), cache_dir=tmp_path)


def test_log_empty_files(tmp_path: Path) -> None:
    zero = tmp_path / "zero.csv"
    zero.write_bytes(b"")
    with pytest.raises(InputError, match="zero.csv is empty"):
        build_corpus(log_spec(zero), cache_dir=tmp_path / "cache")
    header_only = tmp_path / "header.csv"
    header_only.write_text("order_id,customer_id,product_id,ts\n", encoding="utf-8")
    with pytest.raises(InputError, match="header.csv is empty"):
        build_corpus(log_spec(header_only), cache_dir=tmp_path / "cache")
    empty_pq = tmp_path / "empty.parquet"
    pq.write_table(log_table([("a", 1, 2, 3)]).slice(0, 0), empty_pq)
    with pytest.raises(InputError, match="empty.parquet is empty"):
        build_corpus(log_spec(empty_pq), cache_dir=tmp_path / "cache")


def test_log_null_item_or_basket_names_row(tmp_path: Path) -> None:
    path = tmp_path / "nulls.csv"
    path.write_text("order_id,customer_id,product_id,ts\n1,1,a,1\n1,1,,2\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"null 'product_id' value in .*nulls.csv at data row 2"):
        build_corpus(log_spec(path), cache_dir=tmp_path / "cache")
    path2 = tmp_path / "nullb.parquet"
    pq.write_table(pa.table({"order_id": [1, 2, None], "product_id": [1, 2, 3], "ts": [1, 2, 3]}), path2)
    with pytest.raises(InputError, match=r"null 'order_id' value in .*nullb.parquet at data row 3"):
        build_corpus(log_spec(path2), cache_dir=tmp_path / "cache")


def test_log_unreadable_format_and_spec_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"this is not parquet")
    with pytest.raises(InputError, match="cannot read .*bad.parquet as Parquet"):
        build_corpus(log_spec(bad), cache_dir=tmp_path / "cache")
    bad_json = tmp_path / "bad.jsonl"
    bad_json.write_text("{not json\n", encoding="utf-8")
    with pytest.raises(InputError, match="bad.jsonl"):
        build_corpus(log_spec(bad_json), cache_dir=tmp_path / "cache")
    csv = tmp_path / "o.csv"
    csv.write_text("order_id,product_id\n1,2\n", encoding="utf-8")
    with pytest.raises(InputError, match="needs basket_col and item_col"):
        build_corpus(InputSpec(str(csv)), cache_dir=tmp_path / "cache")
    txt = tmp_path / "o.txt"
    txt.write_text("a b\n", encoding="utf-8")
    with pytest.raises(InputError, match="mixes formats"):
        build_corpus(InputSpec((str(csv), str(txt)), basket_col="a", item_col="b"), cache_dir=tmp_path)
    with pytest.raises(InputError, match="does not exist"):
        build_corpus(log_spec(tmp_path / "missing.csv"), cache_dir=tmp_path / "cache")


# ------------------------------------------------------------------------------------ regressions


def test_parquet_uint64_baskets_beyond_int64(tmp_path: Path) -> None:
    path = tmp_path / "u.parquet"
    big = 2**63
    table = pa.table(
        {
            "order_id": pa.array([big, 5, big, 2**64 - 1, 5], type=pa.uint64()),
            "product_id": ["a", "b", "c", "d", "e"],
        }
    )
    pq.write_table(table, path)
    spec = log_spec(path, order=False)
    corpus = build_corpus(spec, cache_dir=tmp_path / "cache")  # was a raw ArrowInvalid
    assert sorted_sequences(corpus) == [["a", "c"], ["b", "e"], ["d"]]
    assert readers.scan_log(spec).basket_is_int is False  # hashed as text: no int64 overflow


def test_arrow_error_in_pass2_names_the_file(tmp_path: Path) -> None:
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pq.write_table(pa.table({"order_id": [1], "product_id": ["x"], "ts": pa.array([1], pa.int64())}), a)
    pq.write_table(pa.table({"order_id": [2], "product_id": ["y"], "ts": pa.array([2**63], pa.uint64())}), b)
    spec = InputSpec((str(a), str(b)), basket_col="order_id", item_col="product_id", order_col="ts")
    with pytest.raises(InputError, match=r"cannot group the rows of .*b.parquet"):
        build_corpus(spec, cache_dir=tmp_path / "cache")


def test_folder_with_empty_shards(tmp_path: Path) -> None:
    rows, expected = make_log(seed=8, n_baskets=30)
    csv_dir = tmp_path / "csv"
    csv_dir.mkdir()
    write_csv(csv_dir / "part-00000.csv", rows)
    write_csv(csv_dir / "part-00001.csv", [])  # header only
    (csv_dir / "part-00002.csv").write_bytes(b"")
    (csv_dir / "part-00003.csv.gz").write_bytes(gzip.compress(b""))
    (csv_dir / "_SUCCESS").write_bytes(b"")
    corpus = build_corpus(log_spec(csv_dir), cache_dir=tmp_path / "cache")
    assert sorted_sequences(corpus) == sorted(expected.values())

    pq_dir = tmp_path / "pq"
    pq_dir.mkdir()
    pq.write_table(log_table(rows), pq_dir / "part-00000.parquet")
    pq.write_table(log_table(rows).slice(0, 0), pq_dir / "part-00001.parquet")
    corpus = build_corpus(log_spec(pq_dir), cache_dir=tmp_path / "cache")
    assert sorted_sequences(corpus) == sorted(expected.values())

    js_dir = tmp_path / "js"
    js_dir.mkdir()
    (js_dir / "a.jsonl").write_text('{"order_id": 1, "product_id": "p", "ts": 1}\n', encoding="utf-8")
    (js_dir / "b.jsonl").write_bytes(b"")
    (js_dir / "c.jsonl.gz").write_bytes(gzip.compress(b""))
    assert sorted_sequences(build_corpus(log_spec(js_dir), cache_dir=tmp_path / "cache")) == [["p"]]

    txt_dir = tmp_path / "txt"
    txt_dir.mkdir()
    (txt_dir / "a.txt").write_text("x y\n", encoding="utf-8")
    (txt_dir / "b.txt").write_text("", encoding="utf-8")
    (txt_dir / "c.txt").write_text("\n  \n", encoding="utf-8")
    assert list(iter_text_sequences(InputSpec(str(txt_dir)))) == [["x", "y"]]

    # a file named explicitly must still hold data, even beside a folder
    with pytest.raises(InputError, match="part-00001.csv is empty"):
        build_corpus(log_spec(csv_dir / "part-00001.csv"), cache_dir=tmp_path / "cache")
    with pytest.raises(InputError, match="b.txt is empty"):
        list(iter_text_sequences(InputSpec((str(txt_dir), str(txt_dir / "b.txt")))))


def test_folder_of_only_empty_shards_is_an_error(tmp_path: Path) -> None:
    csv_dir = tmp_path / "csv"
    csv_dir.mkdir()
    write_csv(csv_dir / "part-00000.csv", [])
    (csv_dir / "part-00001.csv").write_bytes(b"")
    with pytest.raises(InputError, match=r"is empty: none of its 2 file\(s\) has data rows"):
        build_corpus(log_spec(csv_dir), cache_dir=tmp_path / "cache")
    txt_dir = tmp_path / "txt"
    txt_dir.mkdir()
    (txt_dir / "a.txt").write_text("\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"is empty: none of its 1 file\(s\) has a non-blank line"):
        list(iter_text_sequences(InputSpec(str(txt_dir))))


def test_empty_string_basket_or_item_is_an_error(tmp_path: Path) -> None:
    item = tmp_path / "item.csv"
    item.write_text('order_id,product_id\n1,a\n1,""\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"empty 'product_id' value in .*item.csv at data row 2"):
        build_corpus(log_spec(item, order=False), cache_dir=tmp_path / "cache")
    basket = tmp_path / "basket.csv"
    basket.write_text('order_id,product_id\n1,a\n2,b\n"",c\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"empty 'order_id' value in .*basket.csv at data row 3"):
        build_corpus(log_spec(basket, order=False), cache_dir=tmp_path / "cache")
    js = tmp_path / "e.jsonl"
    js.write_text('{"order_id": "o", "product_id": "x"}\n{"order_id": "o", "product_id": ""}\n')
    with pytest.raises(InputError, match=r"empty 'product_id' value in .*e.jsonl at data row 2"):
        build_corpus(log_spec(js, order=False), cache_dir=tmp_path / "cache")
