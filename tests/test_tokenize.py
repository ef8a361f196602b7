"""Text split into words the way gensim users expect, on request (``tokenize="simple"``; issue 32)."""

from __future__ import annotations

import pytest

import likewise
from likewise.cli import main
from likewise.data.corpus import cache_key
from likewise.errors import InputError
from likewise.readers import InputSpec, iter_text_sequences, resolve_files
from likewise.readers import text as text_reader

LINES = [
    "The users. Users, the USERS!",
    "Don't stop -- (believing) in: café / Ünïcödé; naïve?",
    "e-mail\tand\ttabs   and\u00a0spaces ... end",
]


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "text.txt"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    return path


def test_default_keeps_words_as_written(corpus):
    first = next(iter_text_sequences(InputSpec(paths=(str(corpus),))))
    assert first == ["The", "users.", "Users,", "the", "USERS!"]


def test_simple_lowercases_and_splits_at_punctuation_as_gensim_does(corpus):
    gensim_utils = pytest.importorskip("gensim.utils")
    got = list(iter_text_sequences(InputSpec(paths=(str(corpus),), tokenize="simple")))
    # gensim's simple_preprocess without its length limits (these lines hold no digits or underscores)
    want = [gensim_utils.simple_preprocess(line, min_len=1, max_len=10**9) for line in LINES]
    assert got == want
    assert got[0] == ["the", "users", "users", "the", "users"]


def test_chunk_boundaries_do_not_change_the_words(corpus, monkeypatch):
    whole = list(iter_text_sequences(InputSpec(paths=(str(corpus),), tokenize="simple")))
    monkeypatch.setattr(text_reader, "_TEXT_CHUNK_CHARS", 3)  # words and lines cut across chunks
    assert list(iter_text_sequences(InputSpec(paths=(str(corpus),), tokenize="simple"))) == whole


def test_digits_are_kept_underscores_split(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("route_66 in 2026\n", encoding="utf-8")
    assert next(iter_text_sequences(InputSpec(paths=(str(path),), tokenize="simple"))) == [
        "route",
        "66",
        "in",
        "2026",
    ]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"tokenize": "nltk"}, "tokenize == 'nltk', must be one of 'none', 'simple'"),
        ({"tokenize": "simple", "delimiter": ","}, "takes no delimiter"),
        ({"tokenize": "simple", "basket_col": "b", "item_col": "i"}, "no log columns"),
    ],
)
def test_bad_tokenize_settings_are_refused(kwargs, match):
    with pytest.raises(InputError, match=match):
        InputSpec(paths=("x.txt",), **kwargs)


def test_tokenize_is_part_of_the_cache_key(corpus):
    files = resolve_files(InputSpec(paths=(str(corpus),)))
    keys = {
        cache_key(InputSpec(paths=(str(corpus),), tokenize=t), files, min_count=1, max_items=None)
        for t in ("none", "simple")
    }
    assert len(keys) == 2


def test_train_and_the_command_line_take_it(corpus, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LIKEWISE_CACHE", str(tmp_path / "cache"))
    emb = likewise.train(corpus, tokenize="simple", min_count=1, epochs=1, dim=4, progress=False)
    assert "users" in emb and "users." not in emb and "The" not in emb
    with pytest.raises(InputError, match="reads text files"):
        likewise.train([["a", "b"]], tokenize="simple")
    args = ["train", str(corpus), "--min-count", "1", "--epochs", "1", "--dim", "4", "--quiet"]
    assert main([*args, "--tokenize", "simple", "-o", str(tmp_path / "m")]) == 0
    assert "users" in likewise.load(tmp_path / "m") and "users." not in likewise.load(tmp_path / "m")
    assert main([*args, "-o", str(tmp_path / "m2")]) == 0
    assert "users." in likewise.load(tmp_path / "m2")
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    assert "--tokenize" in capsys.readouterr().out
