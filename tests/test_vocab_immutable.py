"""A Vocab does not change once built (STYLE rule 14): what differs is a new Vocab sharing its arrays."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from likewise import Embeddings, Vocab
from likewise.data.vocab import Dropped, ranked_vocab
from likewise.space.itemtypes import ItemTypes


def test_nothing_public_can_be_set_or_edited() -> None:
    counts = np.array([3, 2, 1])
    vocab = Vocab(["a", "b", "c"], counts)
    for name, value in (("counts", np.zeros(3)), ("what", "word"), ("dropped", None), ("aliases", {})):
        with pytest.raises(AttributeError, match=f"a Vocab is immutable: cannot set '{name}'"):
            setattr(vocab, name, value)
    with pytest.raises(AttributeError, match="immutable"):
        del vocab.keys
    with pytest.raises(ValueError, match="read-only"):
        vocab.counts[0] = 9
    with pytest.raises(TypeError):
        vocab.index["d"] = 3  # type: ignore[index]
    with pytest.raises(TypeError, match="read-only"):
        vocab.keys.append("d")
    counts[0] = 7  # the caller's own array stays theirs to write
    assert vocab.by_count().tolist() == [0, 1, 2] and vocab.most_frequent(2) is None


def test_aliases_and_dropped_give_a_new_vocab() -> None:
    vocab = Vocab(["product:tent", "campaign:spring"], [2, 1])
    aliased = vocab.with_aliases({"tent": 0, "product:tent": 1}, {"x": [0, 1]})
    assert aliased is not vocab and aliased == vocab  # same keys and counts
    assert aliased.id("tent") == 0 and "tent" in aliased and dict(aliased.aliases) == {"tent": 0}
    assert "tent" not in vocab and dict(vocab.aliases) == {} and dict(vocab.ambiguous) == {}
    assert aliased.keys is vocab.keys and aliased.counts is vocab.counts  # shared, not copied
    dropped = ranked_vocab(["a", "b"], [5, 1], min_count=2)[0].dropped
    assert isinstance(dropped, Dropped)
    assert vocab.with_dropped(dropped).dropped is dropped and vocab.dropped is None


def test_attach_types_leaves_the_callers_vocab_alone() -> None:
    keys = ["product:tent", "article:tent", "campaign:spring"]
    vocab = Vocab(keys, [3, 2, 1])
    emb = Embeddings(np.eye(3, dtype=np.float32) + 0.1, vocab)
    emb.attach_types(ItemTypes.from_types([k.split(":")[0] for k in keys]))
    assert emb.id_of("spring") == 2 and emb.vocab is not vocab
    assert "spring" not in vocab and dict(vocab.aliases) == {}  # the caller's Vocab, as it was
    emb.attach_types(None)
    assert "spring" not in emb.vocab


def test_pickle_keeps_aliases_and_dropped() -> None:
    vocab, _ = ranked_vocab(["product:tent", "campaign:spring", "x:rare"], [3, 2, 1], min_count=2)
    vocab = vocab.with_aliases({"tent": 0}, {"both": [0, 1]})
    back = pickle.loads(pickle.dumps(vocab))
    assert back == vocab and back.id("tent") == 0 and dict(back.ambiguous) == {"both": [0, 1]}
    assert back.dropped == vocab.dropped and back.what == vocab.what
    with pytest.raises(AttributeError):
        back.what = "word"
