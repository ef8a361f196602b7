"""Bad rows of a log: stop with the file, column and row (the default), or skip them and count them by
cause; missing values only where the user says (``na_values``); a table in memory named as itself."""

from __future__ import annotations

import json

import pytest

import likewise
from likewise.cli import main
from likewise.errors import InputError

RUN = {"dim": 4, "epochs": 1, "min_count": 1, "progress": "none", "seed": 0}
LOG = {"basket_col": "order_id", "item_col": "product_id"}


def _orders(path, bad: dict[int, str]):
    """A log of 100 orders of three products; data row ``r`` (from 1) replaced by ``bad[r]``."""
    rows = ["order_id,customer_id,product_id"]
    for o in range(100):
        rows += [f"{o},c{o % 10},p{(o + j) % 12}" for j in range(3)]
    for r, line in bad.items():
        rows[r] = line
    path.write_text("\n".join(rows) + "\n")
    return path


def test_skip_leaves_bad_rows_out_and_counts_them_by_cause(tmp_path, capsys):
    """A null product id stops training by default; with skip the row is left out, and the training
    summary (text and JSON) and emb.report count the rows by cause."""
    log = _orders(tmp_path / "orders.csv", {5: "1,c1,", 9: "3,c3,", 12: ",c3,p3"})
    argv = ["train", str(log), "-o", str(tmp_path / "m"), "--basket-col", "order_id", "--item-col"]
    argv += [
        "product_id",
        "--dim",
        "4",
        "--epochs",
        "1",
        "--progress",
        "none",
        "--cache-dir",
        str(tmp_path / "c"),
    ]
    assert main(argv) == 1
    assert "null 'order_id' value in " in capsys.readouterr().err  # the first bad column of the batch
    assert main([*argv, "--on-bad-rows", "skip"]) == 0
    out = capsys.readouterr().out
    assert "skipped 3 bad rows (--on-bad-rows skip): null 'order_id' 1, null 'product_id' 2" in out
    assert main([*argv, "--on-bad-rows", "skip", "--json", "--overwrite"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["skipped_rows"] == {"null 'order_id'": 1, "null 'product_id'": 2}
    assert summary["tokens"] == 300 - 3
    emb = likewise.load(tmp_path / "m")
    assert emb.report.skipped_rows == {"null 'order_id'": 1, "null 'product_id'": 2}


def test_na_is_a_product_unless_the_user_says_it_is_missing(tmp_path):
    log = _orders(tmp_path / "orders.csv", {4: "1,c1,NA", 7: "2,c2,NULL"})
    assert "NA" in likewise.train(log, **LOG, **RUN)  # by default a text is a key, whatever it reads
    with pytest.raises(InputError, match=r"null 'product_id' value in .*orders.csv at data row 4 "):
        likewise.train(log, **LOG, **RUN, na_values="NA,NULL")
    emb = likewise.train(log, **LOG, **RUN, na_values=["NA", "NULL"], on_bad_rows="skip")
    assert "NA" not in emb and "NULL" not in emb
    assert emb.report.skipped_rows == {"null 'product_id'": 2}


def test_na_values_and_skip_in_parquet_and_a_bad_choice(tmp_path):
    """Texts of ``na_values`` are missing in every format (here Parquet); a bad ``on_bad_rows`` is named."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    items = [f"p{i % 7}" for i in range(60)]
    items[10], items[20] = "N/A", ""
    pq.write_table(
        pa.table({"order_id": [i // 3 for i in range(60)], "product_id": items}), tmp_path / "o.parquet"
    )
    emb = likewise.train(tmp_path / "o.parquet", **LOG, **RUN, na_values="N/A", on_bad_rows="skip")
    assert emb.report.skipped_rows == {"null 'product_id'": 1, "empty 'product_id'": 1}
    with pytest.raises(InputError, match=r"on_bad_rows == 'ignore', must be one of 'raise', 'skip'"):
        likewise.train(tmp_path / "o.parquet", **LOG, **RUN, on_bad_rows="ignore")


def test_a_dataframes_bad_row_is_named_in_the_frame_not_a_temporary_file():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(
        {"order_id": [i // 3 for i in range(60)], "product_id": [f"p{i % 7}" for i in range(60)]}
    )
    df.loc[42, "product_id"] = None
    with pytest.raises(InputError) as e:
        likewise.train(df, **LOG, **RUN)
    msg = str(e.value)
    assert "null 'product_id' value in the pandas DataFrame at row 42 (position from 0)" in msg
    assert ".parquet" not in msg and "likewise-input" not in msg
    with pytest.raises(InputError, match=r"DataFrame at row 42 \(position from 0, index label 'k42'\)"):
        likewise.train(df.set_axis([f"k{i}" for i in range(60)]), **LOG, **RUN)
    emb = likewise.train(df, **LOG, **RUN, on_bad_rows="skip")
    assert emb.report.skipped_rows == {"null 'product_id'": 1}
