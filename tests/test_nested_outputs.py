"""No model is written inside another saved model, by any command, and ``--overwrite`` never deletes a model
nested inside the folder it replaces (issue 34).

Before, ``update M ... -o M/inner`` and ``place M ... -o M/inner`` were accepted, and a later
``train -o M --overwrite`` deleted the nested model silently. Every writer of a model goes through
:func:`likewise._targets.check_target`, which now refuses both, before any work.
"""

from __future__ import annotations

import importlib
import json
import shutil
from pathlib import Path

import pytest

import likewise
from likewise._targets import check_target
from likewise.cli import main
from likewise.errors import InputError


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    """A retail log, a model ``m`` trained on it with item attributes (so ``update`` and ``place`` work),
    a text of baskets, and the model's vectors as word2vec text (for ``import``)."""
    d = tmp_path_factory.mktemp("nested")
    argv = ["datasets", "retail", "-o", str(d / "shop"), "--customers", "150", "--products", "120"]
    assert main([*argv, "--seed", "3", "--format", "csv", "--json"]) == 0
    argv = ["train", str(d / "shop" / "orders.csv"), "--basket-col", "order_id", "--item-col", "product_id"]
    argv += ["--user-col", "customer_id", "--item-attrs", str(d / "shop" / "products.csv"), "--dim", "8"]
    argv += ["--epochs", "2", "--min-count", "1", "--deterministic", "--quiet", "-o", str(d / "m")]
    argv += ["--cache-dir", str(d / "cache")]
    assert main(argv) == 0
    (d / "baskets.txt").write_text("a b c\nb c d\na c d\n" * 20)
    (d / "names.txt").write_text("anna\nbob\nclara\ndora\n" * 5)
    argv = ["export", str(d / "m"), "--format", "word2vec", "-o", str(d / "m.vec"), "--replace-space", "_"]
    assert main(argv) == 0
    return d


def _no_training(monkeypatch) -> None:
    """Make any training fail: a refusal must come before the work."""

    def never(*a, **kw):
        raise AssertionError("the work started before the output was checked")

    # update binds train_tables when it is imported: import it before train's is patched, or its own name
    # would keep the patch after this test (run alone, the next update would "start the work")
    train = importlib.import_module("likewise.training.train")
    update = importlib.import_module("likewise.retail.update")
    monkeypatch.setattr(train, "train", never)
    monkeypatch.setattr(train, "fit", never)  # likewise.train and likewise train reach fit directly
    monkeypatch.setattr(train, "train_tables", never)
    monkeypatch.setattr(update, "train_tables", never)


def _commands(d: Path, out: Path) -> dict[str, list[str]]:
    m = str(d / "m")
    return {
        "train": ["train", str(d / "baskets.txt"), "--min-count", "1", "--quiet", "-o", str(out)],
        "train-log": [
            "train", str(d / "shop" / "orders.csv"), "--basket-col", "order_id", "--item-col", "product_id",
            "--user-col", "customer_id", "--quiet", "-o", str(out),
        ],
        "import": ["import", str(d / "m.vec"), "-o", str(out)],
        "tune": ["tune", str(d / "baskets.txt"), "--budget", "1s", "--quiet", "-o", str(out)],
        "update": ["update", m, str(d / "shop" / "orders.csv"), "--epochs", "1", "-o", str(out)],
        "place": ["place", m, "--attrs", "department=outdoor", "--key", "new-tent", "-o", str(out)],
        "place-table": ["place", m, "--attrs-file", str(d / "shop" / "products.csv"), "-o", str(out)],
        "train-next": ["train-next", str(d / "names.txt"), "--steps", "5", "-o", str(out)],
        "demo": ["demo", "-o", str(out)],
        "projector": ["export", m, "--format", "projector", "-o", str(out)],
    }  # fmt: skip


COMMANDS = list(_commands(Path("."), Path(".")))


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("inner", ["inner", "a/b/inner", "index/inner"])
def test_no_command_writes_a_model_inside_another(work, monkeypatch, capsys, command, inner):
    if command == "train-next":
        pytest.importorskip("torch")
    _no_training(monkeypatch)
    before = sorted(p.relative_to(work / "m") for p in (work / "m").rglob("*"))
    capsys.readouterr()
    assert main(_commands(work, work / "m" / inner)[command]) == 1
    err = capsys.readouterr().err
    assert f"it is inside {str(work / 'm')!r}, a saved likewise folder" in err, err
    assert sorted(p.relative_to(work / "m") for p in (work / "m").rglob("*")) == before


def test_the_python_api_refuses_too(work):
    emb = likewise.load(work / "m")
    with pytest.raises(InputError, match="inside .* a saved likewise folder"):
        emb.save(work / "m" / "inner")
    from likewise.retail.update import update

    with pytest.raises(InputError, match="inside .* a saved likewise folder"):
        update(work / "m", work / "shop" / "orders.csv", work / "m" / "inner", epochs=1)
    assert not (work / "m" / "inner").exists()


@pytest.fixture
def holder(work, tmp_path) -> Path:
    """A saved model ``outer`` holding another saved model ``outer/kept`` (made before the rule, or by
    hand: moved in)."""
    emb = likewise.load(work / "m")
    emb.save(tmp_path / "outer")
    emb.save(tmp_path / "kept")
    shutil.move(tmp_path / "kept", tmp_path / "outer" / "sub" / "kept")
    return tmp_path / "outer"


@pytest.mark.parametrize("command", ["train", "import", "update", "place", "tune"])
def test_overwrite_never_deletes_a_nested_model(work, holder, monkeypatch, capsys, command):
    _no_training(monkeypatch)
    capsys.readouterr()
    assert main([*_commands(work, holder)[command], "--overwrite"]) == 1
    err = capsys.readouterr().err
    assert f"refusing to overwrite {str(holder)!r}: it holds another saved likewise folder" in err, err
    assert str(holder / "sub" / "kept") in err
    likewise.load(holder / "sub" / "kept")  # still there, whole


def test_overwrite_replaces_a_model_with_its_own_parts(work, tmp_path):
    """A space's ``index/`` and a next-token model's ``space/`` are parts of them, replaced with them."""
    emb = likewise.load(work / "m")
    emb.save(tmp_path / "m")
    (tmp_path / "m" / "index").mkdir()
    (tmp_path / "m" / "index" / "manifest.json").write_text(json.dumps({"format": "likewise.index"}))
    emb.save(tmp_path / "m", overwrite=True)
    assert not (tmp_path / "m" / "index").exists()
    # a next-token model's space (and that space's index) are its own
    nt = tmp_path / "nt"
    (nt / "space" / "index").mkdir(parents=True)
    (nt / "manifest.json").write_text(json.dumps({"format": "likewise.nexttoken"}))
    (nt / "space" / "manifest.json").write_text(json.dumps({"format": "likewise.embeddings"}))
    (nt / "space" / "index" / "manifest.json").write_text(json.dumps({"format": "likewise.index"}))
    check_target(nt, overwrite=True, fmt="likewise.nexttoken", what="saved next-token model")
    # but a space named like a part of another kind of folder is not a part
    (nt / "extra").mkdir()
    (nt / "extra" / "manifest.json").write_text(json.dumps({"format": "likewise.embeddings"}))
    with pytest.raises(InputError, match="holds another saved likewise folder"):
        check_target(nt, overwrite=True, fmt="likewise.nexttoken", what="saved next-token model")
    emb.save(tmp_path / "m2")
    (tmp_path / "m2" / "space").mkdir()
    (tmp_path / "m2" / "space" / "manifest.json").write_text(json.dumps({"format": "likewise.embeddings"}))
    with pytest.raises(InputError, match=r"holds another saved likewise folder, .*space'"):
        emb.save(tmp_path / "m2", overwrite=True)
