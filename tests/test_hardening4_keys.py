"""A key is the text the user wrote, in every keyed table as in the log (issue 43, item 2).

The keyed-table reader used to let pyarrow guess column types, so ``0012`` became ``12``, ``1e3``
``1000.0``, ``1.50`` ``1.5`` and ``TRUE`` ``true`` in ``--item-attrs``, seeds, labels, ``--customers-file``
and ``serve --item-attrs``, while the log reader keeps its keys as text: a table then named another item
than the log (or none). A byte-order mark before a one-column header hid the header.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from likewise.cli.retail import read_seeds
from likewise.evaluate import read_labels
from likewise.readers import InputSpec
from likewise.readers.attrs import read_item_attributes
from likewise.readers.log import scan_log
from likewise.service.attrs import read_item_attrs

LOOKALIKES = ["00001", "0012", "12", "1e3", "1E3", "1.50", "-0", "+1", "1_0", "TRUE", "true", "False", "NaN"]
LOOKALIKES += ["null", "N/A", "inf", "2024-01-01", "1 000", "a b", "tent pole", "ünïcødé", "東京", "x\u00a0y"]

_TEXT = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cc", "Cs", "Zl", "Zp"), blacklist_characters=',"\t#\ufeff\x85'
    ),
    min_size=1,
    max_size=10,
).filter(lambda s: s.strip() == s)
KEYS = st.lists(st.one_of(st.sampled_from(LOOKALIKES), _TEXT), min_size=1, max_size=6, unique=True)


def _write(path: Path, lines: list[str]) -> str:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(keys=KEYS)
def test_keys_of_every_keyed_table_and_of_the_log_round_trip_as_written(keys):
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        log = _write(tmp / "log.csv", ["basket,item"] + [f"b{i},{k}" for i, k in enumerate(keys)])
        assert sorted(scan_log(InputSpec(paths=(log,), basket_col="basket", item_col="item")).keys) == sorted(
            keys
        )
        attrs = _write(tmp / "attrs.csv", ["item,colour"] + [f"{k},c{i % 2}" for i, k in enumerate(keys)])
        assert read_item_attributes(attrs).keys == keys
        seeds = _write(tmp / "seeds.csv", ["customer_id"] + keys)
        assert read_seeds(seeds, None) == keys
        assert read_seeds(seeds, None, "--customers-file", None) == keys
        labels = _write(tmp / "labels.csv", ["item,label"] + [f"{k},{k}" for k in keys])
        assert read_labels(labels) == {k: k for k in keys}  # labels are as written too
        shown = read_item_attrs(attrs, keys)
        assert shown.item_column == "item" and shown.matched == len(keys)


def test_a_zero_padded_attribute_row_names_the_zero_padded_item_not_another(tmp_path):
    attrs = _write(tmp_path / "a.csv", ["item,tier,price", "0012,premium,1.50", "7,basic,2"])
    read = read_item_attributes(attrs)
    assert read.keys == ["0012", "7"]
    assert read.spec["columns"]["price"] == "bands"  # other columns keep their types
    shown = read_item_attrs(attrs, ["12", "0012"])  # the log's items 12 and 0012
    assert shown.values["tier"] == [None, "premium"]  # 12 is not "premium"
    assert shown.values["price"] == [None, "1.50"]  # shown as written
    lines = _write(tmp_path / "l.tsv", ["0012\tPremium", "00001\tBasic"])
    assert read_item_attrs(lines, ["12", "0012", "00001"]).values["label"] == [None, "Premium", "Basic"]


def test_seed_lines_keep_their_zeros_and_a_bom_before_the_header_is_no_part_of_it(tmp_path):
    assert read_seeds(_write(tmp_path / "s.txt", ["00001", "1e3", "TRUE"]), None) == ["00001", "1e3", "TRUE"]
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbfcustomer_id\n00001\n0002\n")
    assert read_seeds(str(tmp_path / "bom.csv"), None) == ["00001", "0002"]
    assert read_labels(_write(tmp_path / "l.tsv", ["007\t1.50"])) == {"007": "1.50"}
