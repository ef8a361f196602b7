"""Label and seed files are read by the one reader every keyed table has (issue 34, item 1).

``read_labels`` (``eval``/``plot``/``export --labels``) and ``read_seeds`` (``lookalike --seeds-file``,
``campaigns --customers-file``) go through :func:`likewise.readers.read_table_file` and
:func:`likewise.readers.key_column`, so they share the attribute tables' and the logs' rules: Parquet told
by content, header told by content, one error naming the file, the column and its type for a column that
is not text, and a log's key checks (null, empty, UTF-8, line breaks, length).
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from likewise.cli.retail import read_seeds
from likewise.errors import InputError
from likewise.evaluate import read_labels
from likewise.readers import MAX_ITEM_CHARS


def _parquet(path: Path, columns: dict) -> Path:
    pq.write_table(pa.table(columns), path)
    return path


# ---- the formats users rely on still read --------------------------------------------------------------


def test_label_lines_tables_and_compressed_files_still_read(tmp_path):
    (tmp_path / "l.tsv").write_text("# comment\ntent\toutdoor\n\nkettle\tkitchen\n#x\ty\n", encoding="utf-8")
    assert read_labels(tmp_path / "l.tsv") == {"tent": "outdoor", "kettle": "kitchen"}
    # taken as written: a quote is part of a word, as before
    (tmp_path / "q.txt").write_text('"tent\toutdoor\nmug\tkitchen"\n', encoding="utf-8")
    assert read_labels(tmp_path / "q.txt") == {'"tent': "outdoor", "mug": 'kitchen"'}
    (tmp_path / "l.tsv.gz").write_bytes(gzip.compress(b"tent\toutdoor\n"))
    assert read_labels(tmp_path / "l.tsv.gz") == {"tent": "outdoor"}
    (tmp_path / "l.jsonl").write_text('{"sku": "tent", "dept": "outdoor"}\n{"sku": "7", "dept": "x"}\n')
    assert read_labels(tmp_path / "l.jsonl") == {"tent": "outdoor", "7": "x"}


def test_a_label_header_is_told_by_its_content(tmp_path):
    # two tab-separated fields naming columns: a header (it used to become the label 'item' -> 'label')
    (tmp_path / "h.tsv").write_text("item\tlabel\ntent\toutdoor\n", encoding="utf-8")
    assert read_labels(tmp_path / "h.tsv") == {"tent": "outdoor"}
    # comma-separated: a CSV, with a header, whatever the name
    (tmp_path / "c.txt").write_text("sku,dept\ntent,outdoor\n", encoding="utf-8")
    assert read_labels(tmp_path / "c.txt") == {"tent": "outdoor"}
    # a column asked for names the header
    (tmp_path / "n.tsv").write_text("code\ttopic\ntent\toutdoor\n", encoding="utf-8")
    assert read_labels(tmp_path / "n.tsv", label_col="topic") == {"tent": "outdoor"}
    assert read_labels(tmp_path / "n.tsv") == {"code": "topic", "tent": "outdoor"}  # two plain fields: data


def test_seed_lines_and_tables_still_read(tmp_path):
    (tmp_path / "s.txt").write_text("C1\nC2\n\nC3\r\n", encoding="utf-8")
    assert read_seeds(str(tmp_path / "s.txt"), None) == ["C1", "C2", "C3"]
    (tmp_path / "h.txt").write_text("customer_id\nC1\nC2\n", encoding="utf-8")
    assert read_seeds(str(tmp_path / "h.txt"), None) == ["C1", "C2"]
    (tmp_path / "s.csv").write_text("name,cust\nann,C1\nbob,C2\n", encoding="utf-8")
    assert read_seeds(str(tmp_path / "s.csv"), "cust") == ["C1", "C2"]
    with pytest.raises(InputError, match="name the seed column with --seed-col"):
        read_seeds(str(tmp_path / "s.csv"), None)
    with pytest.raises(InputError, match="no header line naming a column 'cust'"):
        read_seeds(str(tmp_path / "s.txt"), "cust")


def test_campaigns_customers_file_errors_name_its_own_option(tmp_path, capsys):
    """``campaigns --customers-file`` shares the seed reader; its errors named ``--seeds-file`` and told
    the user to pass ``--seed-col``, which campaigns does not have."""
    (tmp_path / "s.csv").write_text("name,cust\nann,C1\nbob,C2\n", encoding="utf-8")
    with pytest.raises(InputError) as e:
        read_seeds(str(tmp_path / "s.csv"), None, option="--customers-file", col_option=None)
    msg = str(e.value)
    assert msg.startswith("--customers-file ") and "--seed" not in msg and "'customer_id'" in msg
    from likewise.cli import main

    rc = main(["campaigns", str(tmp_path / "no_model"), "--customers-file", str(tmp_path / "s.csv")])
    err = capsys.readouterr().err  # refused over the file, read before the model is loaded
    assert rc == 1 and "--customers-file" in err and "--seed" not in err


# ---- Parquet is told by its content ----------------------------------------------------------------------


def test_parquet_labels_and_seeds_are_read_whatever_the_file_is_named(tmp_path):
    labels = _parquet(tmp_path / "labels.tsv", {"sku": ["tent", "mug"], "dept": ["outdoor", "kitchen"]})
    assert read_labels(labels) == {"tent": "outdoor", "mug": "kitchen"}
    seeds = _parquet(tmp_path / "seeds.txt", {"customer_id": ["C1", "C2"], "x": [1, 2]})
    assert read_seeds(str(seeds), None) == ["C1", "C2"]
    odd = _parquet(tmp_path / "seeds.dat", {"cust": pa.array([3, 4], pa.int64())})
    assert read_seeds(str(odd), None) == ["3", "4"]


# ---- a column of a type that is not text: one line naming the file, the column and the type ------------


@pytest.mark.parametrize("kind", ["struct", "map", "binary"])
def test_a_column_that_is_not_text_is_one_error_naming_file_column_and_type(tmp_path, kind):
    column = {
        "struct": pa.array([{"x": 1}, {"x": 2}]),
        "map": pa.array([[("k", 1)], [("k", 2)]], pa.map_(pa.string(), pa.int64())),
        "binary": pa.array([b"\xff\xfe", b"ok"], pa.binary()),
    }[kind]
    labels = _parquet(tmp_path / "labels.tsv", {"item": column, "label": ["a", "b"]})
    shown = kind + r"\b[^;]*"  # map<string, int64 ('item')>: Parquet names the column inside
    with pytest.raises(InputError, match=rf"^key column 'item' of '.*labels.tsv' holds {shown}; expected"):
        read_labels(labels)
    labels = _parquet(tmp_path / "l2.parquet", {"item": ["a", "b"], "label": column})
    with pytest.raises(InputError, match=rf"^label column 'label' of '.*l2.parquet' holds {shown}; expected"):
        read_labels(labels)
    seeds = _parquet(tmp_path / "seeds.csv", {"customer_id": column})
    with pytest.raises(InputError, match=rf"^key column 'customer_id' of '.*seeds.csv' holds {shown}; exp"):
        read_seeds(str(seeds), None)


# ---- encodings, empty files, nulls, line breaks, lengths --------------------------------------------------


def test_bytes_that_are_not_utf8_are_an_input_error(tmp_path):
    (tmp_path / "l.tsv").write_bytes(b"tent\toutdoor\nk\xffettle\tkitchen\n")
    with pytest.raises(InputError, match=r"'column 1' of '.*l.tsv' holds binary; .*UTF-8"):
        read_labels(tmp_path / "l.tsv")
    (tmp_path / "s.txt").write_bytes(b"C1\nC\xc3\n")
    with pytest.raises(InputError, match=r"'column 1' of '.*s.txt' holds binary; .*UTF-8"):
        read_seeds(str(tmp_path / "s.txt"), None)
    (tmp_path / "h.csv").write_bytes(b"item,\x80\ntent,outdoor\n")
    with pytest.raises(InputError, match=r"column names of '.*h.csv' are not all UTF-8"):
        read_labels(tmp_path / "h.csv")
    items = pa.array([b"tent", b"\x80\xff"], pa.binary()).view(pa.string())  # Parquet does not check
    _parquet(tmp_path / "p.parquet", {"customer_id": items})
    with pytest.raises(InputError, match=r"'customer_id' values in .*p.parquet at data rows 1 to 2 are not"):
        read_seeds(str(tmp_path / "p.parquet"), None)


def test_an_empty_file_is_an_input_error(tmp_path):
    (tmp_path / "empty.tsv").write_bytes(b"")
    with pytest.raises(InputError, match=r"^labels file '.*empty.tsv' is empty \(0 bytes\)$"):
        read_labels(tmp_path / "empty.tsv")
    with pytest.raises(InputError, match=r"^seeds file '.*empty.tsv' is empty \(0 bytes\)$"):
        read_seeds(str(tmp_path / "empty.tsv"), None)
    (tmp_path / "blank.txt").write_text("\n\n# nothing yet\n")
    with pytest.raises(InputError, match=r"^seeds file '.*blank.txt' holds no data: only blank lines"):
        read_seeds(str(tmp_path / "blank.txt"), None)
    with pytest.raises(InputError, match=r"^labels file '.*missing.tsv' does not exist"):
        read_labels(tmp_path / "missing.tsv")


def test_null_and_empty_keys_are_refused_naming_the_row(tmp_path):
    (tmp_path / "l.csv").write_text("item,label\ntent,outdoor\n,kitchen\n")
    with pytest.raises(InputError, match=r"^null 'item' value in .*l.csv at data row 2 .*needs an item key$"):
        read_labels(tmp_path / "l.csv")
    _parquet(tmp_path / "e.parquet", {"item": ["tent", ""], "label": ["outdoor", "kitchen"]})
    with pytest.raises(InputError, match=r"^empty 'item' value in .*e.parquet at data row 2"):
        read_labels(tmp_path / "e.parquet")
    _parquet(tmp_path / "s.pq", {"customer_id": ["C1", None, "C3"]})
    with pytest.raises(InputError, match=r"^null 'customer_id' value in .*s.pq at data row 2 .*customer id$"):
        read_seeds(str(tmp_path / "s.pq"), None)
    # a row with a key but no label is an unlabelled item, skipped as before
    (tmp_path / "u.csv").write_text("item,label\ntent,outdoor\nmug,\n")
    assert read_labels(tmp_path / "u.csv") == {"tent": "outdoor"}


def test_a_key_with_a_line_break_is_refused(tmp_path):
    (tmp_path / "l.csv").write_text('item,label\n"te\nnt",outdoor\n')
    with pytest.raises(
        InputError, match=r"^'item' value 'te\\nnt' contains a line break, in .*l.csv at data"
    ):
        read_labels(tmp_path / "l.csv")
    _parquet(tmp_path / "s.parquet", {"customer_id": ["C1", "C\r2"]})
    with pytest.raises(InputError, match=r"'customer_id' value 'C\\r2' contains a line break, .* data row 2"):
        read_seeds(str(tmp_path / "s.parquet"), None)


def test_a_key_longer_than_the_cap_is_refused_in_labels_seeds_and_logs(tmp_path):
    from likewise.data.corpus import build_corpus
    from likewise.readers import InputSpec

    long = "x" * (MAX_ITEM_CHARS + 1)
    (tmp_path / "l.tsv").write_text(f"tent\toutdoor\n{long}\tkitchen\n")
    with pytest.raises(InputError, match=rf"value 'x+'… \({MAX_ITEM_CHARS + 1} characters\) is longer than"):
        read_labels(tmp_path / "l.tsv")
    (tmp_path / "s.txt").write_text(f"C1\n{long}\n")
    with pytest.raises(
        InputError, match=r"^'column 1' value .* is longer than 65536 characters, in .*s.txt at"
    ):
        read_seeds(str(tmp_path / "s.txt"), None)
    (tmp_path / "log.csv").write_text(f"b,i\no1,tent\no1,{long}\n")
    spec = InputSpec(str(tmp_path / "log.csv"), basket_col="b", item_col="i")
    with pytest.raises(
        InputError, match=r"'i' value .* is longer than 65536 characters, in .*log.csv at data row 2"
    ):
        build_corpus(spec, cache_dir=tmp_path / "cache")


# ---- lines and headers -----------------------------------------------------------------------------------


def test_a_plain_line_with_another_number_of_fields_names_its_row(tmp_path):
    (tmp_path / "l.tsv").write_text("tent\toutdoor\nkettle\n")
    with pytest.raises(
        InputError, match=r"^labels file '.*l.tsv' row 2 .*expected 2 field\(s\) separated by a tab"
    ):
        read_labels(tmp_path / "l.tsv")
    (tmp_path / "one.txt").write_text("tent\nkettle\n")
    with pytest.raises(InputError, match="neither 'item<TAB>label' lines nor a table with a header"):
        read_labels(tmp_path / "one.txt")


def test_a_column_named_twice_is_an_input_error(tmp_path):
    (tmp_path / "l.csv").write_text("item,item\ntent,outdoor\n")
    with pytest.raises(InputError, match=r"column 'item' appears twice in the header of '.*l.csv'"):
        read_labels(tmp_path / "l.csv")


def test_a_file_that_is_neither_parquet_nor_text_is_refused(tmp_path):
    (tmp_path / "s.txt").write_bytes(b"C1\x00\x01\x02")
    with pytest.raises(InputError, match="is not text, nor Parquet"):
        read_seeds(str(tmp_path / "s.txt"), None)
    (tmp_path / "cut.parquet").write_bytes(b"PAR1" + b"\x00" * 20)  # starts as Parquet, does not end so
    with pytest.raises(InputError, match="is not text, nor Parquet"):
        read_labels(tmp_path / "cut.parquet")


# ---- analogy and word-pair files --------------------------------------------------------------------------


def test_analogy_and_pair_files_that_are_not_utf8_are_an_input_error(tmp_path):
    import numpy as np

    from likewise import Embeddings, Vocab
    from likewise.evaluate import evaluate_analogies, evaluate_pairs

    emb = Embeddings(np.eye(4, dtype=np.float32), Vocab(["a", "b", "c", "d"], [4, 3, 2, 1]))
    (tmp_path / "q.txt").write_bytes(b": s\na b c d\na b \xff d\n")
    with pytest.raises(InputError, match=r"^analogy questions file '.*q.txt' line 3 is not UTF-8 text$"):
        evaluate_analogies(emb, tmp_path / "q.txt")
    (tmp_path / "p.tsv").write_bytes(b"a\tb\t1\n\x80\tc\t2\n")
    with pytest.raises(InputError, match=r"^word pairs file '.*p.tsv' line 2 is not UTF-8 text$"):
        evaluate_pairs(emb, tmp_path / "p.tsv")
    with pytest.raises(InputError, match=r"^cannot open analogy questions file '.*nothere.txt'"):
        evaluate_analogies(emb, tmp_path / "nothere.txt")
    # \r ends a line of a pairs file, as text mode read it
    (tmp_path / "r.tsv").write_bytes(b"a\tb\t1\rc\td\t2\r\na\tc\t3\n")
    assert evaluate_pairs(emb, tmp_path / "r.tsv")["pairs"] == 3
