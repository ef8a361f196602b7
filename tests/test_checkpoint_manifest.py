"""Checkpoints that are refused (issue 34): a manifest with any field removed, mistyped or out of range; a
step past the pass; tables of NaN; a second run on a directory another run holds; a checkpoint directory
and an output that hold one another.

Before, a removed field gave ``KeyError: 'state'`` or a ``TypeError``, and a ``world_size`` of 0 resumed
into a table of uninitialised memory (exit 0); two runs on one ``--checkpoint-dir`` both ran to the end,
overwriting each other's checkpoints; ``-o X --checkpoint-dir X`` trained to the end before finding that
it could not save.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import planted_baskets
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import likewise
import likewise.training.checkpoint
import likewise.training.train_numba
from likewise.cli import main
from likewise.errors import CorruptModelError, InputError
from likewise.kernels.sampling import sequence_blocks
from likewise.training.checkpoint import LOCK, Checkpoints

TESTS = Path(__file__).resolve().parent
CONFIG = {"mode": "basket", "dim": 8, "epochs": 2, "min_count": 1, "seed": 5, "deterministic": True}
CONFIG |= {"backend": "cpu"}
BLOCK_TOKENS = 500  # several blocks per pass, so a checkpoint can be taken mid-pass


class _Stop(Exception):
    """Ends a run right after a mid-pass checkpoint, as a kill would."""


def _data() -> list[list[str]]:
    return [sorted(b) for b in planted_baskets(n=600)[0]]


@pytest.fixture(scope="module")
def ckpts(tmp_path_factory) -> dict[str, Path]:
    """Two checkpoint directories of one small run: ``finished`` (after both passes) and ``mid``
    (after the second block of the first pass, the run then stopped)."""
    root = tmp_path_factory.mktemp("ckpts")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(likewise.training.train_numba, "BLOCK_TOKENS", BLOCK_TOKENS)
        likewise.train(_data(), **CONFIG, checkpoint_dir=root / "finished")
        save = Checkpoints.save

        def save_twice(self, *a, **kw):
            save(self, *a, **kw)
            if self.written == 2:
                raise _Stop

        mp.setattr(Checkpoints, "save", save_twice)
        with pytest.raises(_Stop):
            likewise.train(_data(), **CONFIG, checkpoint_dir=root / "mid", checkpoint_every=1e-9)
    state = json.loads((root / "mid" / "checkpoint" / "manifest.json").read_text())["state"]
    assert (state["epoch"], state["step"]) == (0, 2) and state["partial"]
    return {"finished": root / "finished", "mid": root / "mid"}


# ---- every field, removed or given a value of a type it never has -------------------------------------

REMOVE = object()
VALUES = [REMOVE, "x", 1.5, None, [], {}, True, -1]


def _kind(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int | float):
        return "number" if isinstance(v, float) else "int"
    return type(v).__name__


def _wrong_values(original: Any) -> list[Any]:
    """The replacements of a field that are never valid: another JSON kind (an int for a float field is
    a number, so not tried; a float for an int field is)."""
    kind = _kind(original)
    out = []
    for v in VALUES:
        if v is REMOVE:
            out.append(v)
        elif _kind(v) == kind or (kind == "number" and _kind(v) == "int"):
            continue
        else:
            out.append(v)
    return out


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every field of the manifest, at every depth (list items by index)."""
    out = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        out.append((*prefix, key))
        out.extend(_paths(value, (*prefix, key)))
    return out


def _name(path: tuple) -> str:
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else key)
    return out


def _replaced(manifest: dict, path: tuple, value: Any) -> dict:
    copy = json.loads(json.dumps(manifest))
    node = copy
    for key in path[:-1]:
        node = node[key]
    if value is REMOVE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return copy


def _optional(path: tuple, value: Any) -> bool:
    """Mutations that are allowed: the notes are optional, each of them."""
    return value is REMOVE and len(path) == 3 and path[:2] == ("state", "notes")


def _names_for(path: tuple) -> set[str]:
    """What the error may name: the field; for a list item, the list (its length and items are checked
    as one); for a file entry, ``files`` (the names listed are checked as a set)."""
    names = {_name(path)}
    if isinstance(path[-1], int):
        names.add(_name(path[:-1]))
    if path[0] == "files" and len(path) == 2:
        names.add("files")
    return names


def _load(folder: Path, identity: dict) -> None:
    Checkpoints(folder, None, True, identity).load()


def _original(folder: Path) -> dict:
    return json.loads((folder / "checkpoint" / "manifest.json").read_text())


@pytest.mark.parametrize("kind", ["finished", "mid"])
def test_every_field_removed_or_mistyped_is_a_corrupt_model_error_naming_it(ckpts, kind, tmp_path):
    """Not random: every field at every depth, removed and given each value of another type in turn."""
    folder = Path(shutil.copytree(ckpts[kind], tmp_path / kind))
    mpath = folder / "checkpoint" / "manifest.json"
    original = _original(ckpts[kind])
    _load(folder, original["identity"])  # the pristine checkpoint passes
    tried = 0
    for path in _paths(original):
        for value in _wrong_values(_get(original, path)):
            if _optional(path, value):
                continue
            mpath.write_text(json.dumps(_replaced(original, path, value)))
            with pytest.raises(CorruptModelError) as e:
                _load(folder, original["identity"])
            message = str(e.value)
            assert any(repr(n) in message for n in _names_for(path)), (_name(path), value, message)
            tried += 1
    assert tried > 300


def _get(manifest: dict, path: tuple) -> Any:
    node: Any = manifest
    for key in path:
        node = node[key]
    return node


@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_random_mutations_are_refused_naming_one_of_the_fields(ckpts, data):
    """One to three fields changed at once, to any JSON value of another type (or removed)."""
    kind = data.draw(st.sampled_from(["finished", "mid"]))
    original = _original(ckpts[kind])
    paths = _paths(original)
    chosen = data.draw(st.lists(st.sampled_from(paths), min_size=1, max_size=3, unique=True))
    # no path inside another one chosen (it may be gone once its parent is changed)
    chosen = [p for p in chosen if not any(q != p and p[: len(q)] == q for q in chosen)]
    manifest, names = original, set()
    for path in chosen:
        values = [v for v in _wrong_values(_get(original, path)) if not _optional(path, v)]
        if not values:
            continue
        manifest = _replaced(manifest, path, data.draw(st.sampled_from(values)))
        names |= _names_for(path)
    if manifest == original:
        return
    folder = ckpts[kind].parent / f"{kind}-mutated"
    if not folder.exists():
        shutil.copytree(ckpts[kind], folder)
    (folder / "checkpoint" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(CorruptModelError) as e:
        _load(folder, original["identity"])
    assert any(repr(n) in str(e.value) for n in names), (names, str(e.value))


@pytest.mark.parametrize("world", [0, -1, 2, 1.0, "1", None, True, 10**12])
def test_a_world_size_edited_is_refused_not_resumed_from_uninitialised_memory(ckpts, tmp_path, world):
    """Before: ``world_size`` 0 read no shard and resumed into ``np.empty`` memory (values to 8.7e31)."""
    folder = Path(shutil.copytree(ckpts["finished"], tmp_path / "ck"))
    mpath = folder / "checkpoint" / "manifest.json"
    mpath.write_text(json.dumps(_original(ckpts["finished"]) | {"world_size": world}))
    with pytest.raises(CorruptModelError, match="'world_size'|'files'"):
        likewise.train(_data(), **CONFIG, checkpoint_dir=folder, resume=True)


def test_the_command_line_refuses_world_size_zero_with_one_line(ckpts, tmp_path, capsys):
    folder = Path(shutil.copytree(ckpts["finished"], tmp_path / "ck"))
    mpath = folder / "checkpoint" / "manifest.json"
    mpath.write_text(json.dumps(_original(ckpts["finished"]) | {"world_size": 0}))
    text = tmp_path / "baskets.txt"
    text.write_text("\n".join(" ".join(b) for b in _data()) + "\n")
    argv = ["train", str(text), "--mode", "basket", "--dim", "8", "--epochs", "2", "--min-count", "1"]
    argv += ["--seed", "5", "--deterministic", "--backend", "cpu", "--quiet"]
    argv += ["-o", str(tmp_path / "m"), "--checkpoint-dir", str(folder), "--resume"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "field 'world_size' is 0, expected an integer >= 1" in err and "Traceback" not in err
    assert not (tmp_path / "m").exists()


def _edit(folder: Path, change) -> None:
    mpath = folder / "checkpoint" / "manifest.json"
    manifest = json.loads(mpath.read_text())
    change(manifest)
    mpath.write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    ("what", "change", "message"),
    [
        (
            "epoch past the epochs",
            lambda m: m["state"].update(epoch=3),
            "'state.epoch' is 3, expected 0 to 2",
        ),
        ("negative step", lambda m: m["state"].update(step=-1), "'state.step' is -1"),
        ("epochs of another run", lambda m: m["state"].update(epochs=5), "'state.epochs' is 5"),
        ("a shape", lambda m: m["tables"]["W"].update(shape=[3, 8]), "'tables.W.shape' is [3, 8]"),
        ("a dtype", lambda m: m["tables"]["C"].update(dtype="bfloat16"), "'tables.C.dtype'"),
        ("a count", lambda m: m["state"]["partial"].update(pairs=-5), "'state.partial.pairs' is -5"),
        ("a NaN counter", lambda m: m["state"]["partial"].update(loss=float("nan")), "'state.partial.loss'"),
        ("history length", lambda m: m["state"]["history"].append({}), "'state.history'"),
        ("the random state", lambda m: m["state"]["rng"].update(step=1), "'state.rng.step' is 1"),
        ("a file", lambda m: m["files"].update({"X.npy": m["files"]["W.0-of-1.npy"]}), "'files'"),
    ],
)
def test_values_out_of_range_are_refused_naming_the_field(ckpts, tmp_path, what, change, message):
    folder = Path(shutil.copytree(ckpts["mid"], tmp_path / "ck"))
    _edit(folder, change)
    with pytest.raises(CorruptModelError) as e:
        _load(folder, _original(ckpts["mid"])["identity"])
    assert message in str(e.value), what


@pytest.mark.parametrize("step", [99, "n_steps"])
def test_a_step_past_the_pass_is_refused(ckpts, tmp_path, monkeypatch, step):
    """The manifest alone cannot bound the step (the backend's block layout does): checked at restore."""
    monkeypatch.setattr(likewise.training.train_numba, "BLOCK_TOKENS", BLOCK_TOKENS)
    folder = Path(shutil.copytree(ckpts["mid"], tmp_path / "ck"))
    n_steps = len(sequence_blocks(_offsets(), BLOCK_TOKENS))
    at = n_steps if step == "n_steps" else step

    def change(m):
        m["state"]["step"] = m["state"]["rng"]["step"] = at

    _edit(folder, change)
    with pytest.raises(CorruptModelError, match=rf"'state.step' is {at}, expected a step of the pass"):
        likewise.train(_data(), **CONFIG, checkpoint_dir=folder, resume=True)


def _offsets() -> np.ndarray:
    import tempfile

    from likewise.data.corpus import corpus_from_sequences

    with tempfile.TemporaryDirectory() as d:
        c = corpus_from_sequences(_data(), Path(d) / "c", min_count=1)
        return np.asarray(c.offsets).copy()


def test_a_valid_mid_pass_checkpoint_still_resumes_bit_identical(ckpts, tmp_path, monkeypatch):
    monkeypatch.setattr(likewise.training.train_numba, "BLOCK_TOKENS", BLOCK_TOKENS)
    whole = likewise.train(_data(), **CONFIG)
    folder = Path(shutil.copytree(ckpts["mid"], tmp_path / "ck"))
    resumed = likewise.train(_data(), **CONFIG, checkpoint_dir=folder, resume=True)
    np.testing.assert_array_equal(resumed.vectors, whole.vectors)


def test_tables_holding_nan_with_matching_checksums_are_refused(ckpts, tmp_path, monkeypatch):
    from likewise._fileio import file_entry

    monkeypatch.setattr(likewise.training.train_numba, "BLOCK_TOKENS", BLOCK_TOKENS)
    folder = Path(shutil.copytree(ckpts["finished"], tmp_path / "ck"))
    w = folder / "checkpoint" / "C.0-of-1.npy"
    arr = np.load(w)
    arr[3, 1] = np.nan
    np.save(w, arr)
    _edit(folder, lambda m: m["files"].update({w.name: file_entry(w)}))
    with pytest.raises(
        CorruptModelError, match=r"table C of the checkpoint .* holds NaN or infinity \(row 3\)"
    ):
        likewise.train(_data(), **CONFIG, checkpoint_dir=folder, resume=True)


# ---- one run at a time on a checkpoint directory ------------------------------------------------------

HOLDER = """
import os, sys, time
sys.path.insert(0, {tests!r})
from conftest import planted_baskets
import likewise
folder, release = sys.argv[1], sys.argv[2]

def hold(stats):  # after the first pass (and its checkpoint): wait until the test says so
    deadline = time.monotonic() + 300
    while not os.path.exists(release):
        if time.monotonic() > deadline:
            raise SystemExit("never released")
        time.sleep(0.01)

data = [sorted(b) for b in planted_baskets(n=600)[0]]
likewise.train(data, **{config!r}, checkpoint_dir=folder, callback=hold)
"""


def _start_holder(folder: Path, release: Path) -> subprocess.Popen:
    code = HOLDER.format(tests=str(TESTS), config=CONFIG)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return subprocess.Popen([sys.executable, "-c", code, str(folder), str(release)], env=env)


def _wait_until_held(folder: Path, proc: subprocess.Popen, timeout: float = 300) -> None:
    """Wait until ``proc`` holds the lock: it writes its pid into the lock file once it has it (probing
    with flock would itself take the lock for an instant, and could refuse the holder)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if (folder / LOCK).read_text().split()[:1] == [str(proc.pid)]:
                return
        except (OSError, IndexError):
            pass
        assert proc.poll() is None, f"the holder ended (status {proc.returncode}) before taking the lock"
        assert time.monotonic() < deadline, "the holder never took the lock"
        time.sleep(0.01)


def test_a_second_run_on_a_held_directory_is_refused_at_once(tmp_path, capsys):
    folder, release = tmp_path / "ck", tmp_path / "release"
    proc = _start_holder(folder, release)
    try:
        _wait_until_held(folder, proc)
        with pytest.raises(InputError, match=r"'.*ck' is in use: another training holds its lock") as e:
            likewise.train(_data(), **CONFIG, checkpoint_dir=folder, resume=True)
        assert f"process {proc.pid}" in str(e.value)
        text = tmp_path / "baskets.txt"
        text.write_text("\n".join(" ".join(b) for b in _data()) + "\n")
        argv = ["train", str(text), "--mode", "basket", "--epochs", "2", "--min-count", "1", "--quiet"]
        assert main([*argv, "-o", str(tmp_path / "m"), "--checkpoint-dir", str(folder)]) == 1
        err = capsys.readouterr().err
        assert "is in use: another training holds its lock" in err and str(folder) in err
        assert not (tmp_path / "m").exists()
        release.touch()
        assert proc.wait(timeout=300) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    state = json.loads((folder / "checkpoint" / "manifest.json").read_text())["state"]
    assert state["epoch"] == state["epochs"] == 2  # the holder's own run, finished, not overwritten
    # the lock went with the holder: the directory can be resumed now
    likewise.train(_data(), **CONFIG, checkpoint_dir=folder, resume=True)


def test_a_killed_holder_leaves_no_stale_lock(tmp_path):
    folder, release = tmp_path / "ck", tmp_path / "release"
    proc = _start_holder(folder, release)
    try:
        _wait_until_held(folder, proc)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (folder / LOCK).exists()  # the file stays; the lock died with its process
    emb = likewise.train(_data(), **CONFIG, checkpoint_dir=folder, resume=True)
    assert len(emb.meta["history"]) == 2


# ---- the output and the checkpoint directory are apart, checked before training ------------------------


@pytest.mark.parametrize(
    ("out", "ck", "how"),
    [("x", "x", "is"), ("x", "x/ck", "is inside"), ("x/m", "x", "holds"), ("x", "./x/../x", "is")],
)
def test_output_and_checkpoint_dir_inside_one_another_are_refused_before_training(
    tmp_path, monkeypatch, capsys, out, ck, how
):
    def never(*a, **kw):
        raise AssertionError("training started")

    monkeypatch.setattr(importlib.import_module("likewise.training.train"), "train", never)
    monkeypatch.chdir(tmp_path)
    text = tmp_path / "baskets.txt"
    text.write_text("a b c\nb c d\n")
    assert main(["train", str(text), "-o", out, "--checkpoint-dir", ck, "--quiet"]) == 1
    err = capsys.readouterr().err
    assert f"--checkpoint-dir {ck!r} {how} the output -o {out!r}" in err
    assert not (tmp_path / "x").exists()


def test_a_checkpoint_directory_inside_a_saved_model_is_refused(tmp_path):
    likewise.train(_data(), **CONFIG).save(tmp_path / "m")
    with pytest.raises(
        InputError, match=r"refusing to write a checkpoint to .* inside .*'likewise.embeddings'"
    ):
        likewise.train(_data(), **CONFIG, checkpoint_dir=tmp_path / "m")
    with pytest.raises(InputError, match="inside"):
        likewise.train(_data(), **CONFIG, checkpoint_dir=tmp_path / "m" / "ck")
    assert not (tmp_path / "m" / "checkpoint").exists() and not (tmp_path / "m" / "ck").exists()
