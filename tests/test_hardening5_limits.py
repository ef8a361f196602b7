"""A hostile or careless user's inputs, round 5: order logs, updates, next basket's saved record and the
bounds of a request. Each test failed before its fix; a class of inputs is fuzzed on a small fixed budget.
"""

from __future__ import annotations

import random
import tracemalloc

import numpy as np
import pytest

from likewise.cli import main


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
