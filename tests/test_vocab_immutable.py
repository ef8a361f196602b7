"""A Vocab is immutable (issue 31 item 4): no field can be set, its counts and index are read-only, and
what used to change one in place (attach_types' aliases, a restored record of dropped keys) makes a new
one, so a caller who built a space keeps their vocabulary as it was."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from likewise import Embeddings, Vocab
from likewise.data.vocab import Dropped, ranked_vocab
from likewise.space.itemtypes import ItemTypes


def test_no_field_can_be_set_or_changed():
    counts = np.array([5, 3, 1])
    v = Vocab(["a", "b", "c"], counts)
    for name in ("keys", "counts", "index", "what", "dropped", "aliases"):
        with pytest.raises(AttributeError, match="a Vocab is immutable"):
            setattr(v, name, None)
    with pytest.raises(ValueError, match="read-only"):
        v.counts[0] = 99
    with pytest.raises(TypeError):
        v.index["d"] = 3  # type: ignore[index]
    with pytest.raises(TypeError):
        v.keys.append("d")
    counts[0] = 0  # the caller's array is theirs: the vocabulary copied it
    assert v.counts.tolist() == [5, 3, 1] and v.by_count().tolist() == [0, 1, 2]


def test_attach_types_gives_the_space_a_new_vocab_and_leaves_the_callers():
    keys = ["product:tent", "article:tent", "campaign:spring", "product:mat"]
    mine = Vocab(keys, [4, 3, 2, 1])
    emb = Embeddings(np.eye(4, dtype=np.float32) + 0.1, mine)
    emb.attach_types(ItemTypes.from_types([k.split(":")[0] for k in keys]))
    assert emb.id_of("spring") == 2 and emb.vocab is not mine
    assert "spring" not in mine and dict(mine.aliases) == {} and mine.lookup("mat") is None
    assert emb.vocab.keys == mine.keys and emb.vocab.counts is mine.counts  # shared, both read-only
    emb.attach_types(None)
    assert "spring" not in emb


def test_with_dropped_and_pickle_keep_every_field():
    dropped = Dropped(
        min_count=2,
        max_items=None,
        below_min_count=1,
        past_max_items=0,
        tokens=1,
        keys=["z"],
        counts=[1],
        reasons=["min_count"],
    )
    v = Vocab(["a", "b"], [3, 2]).with_dropped(dropped).with_aliases({"x": 1}, {"y": [0, 1]})
    back = pickle.loads(pickle.dumps(v))
    assert (
        back == v
        and back.dropped == dropped
        and back.lookup("x") == 1
        and dict(back.ambiguous) == {"y": [0, 1]}
    )
    assert Vocab(["a", "b"], [3, 2]).dropped is None


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
