"""Checkpoints that resume (issue 15): a deterministic run killed with SIGKILL after a checkpoint and
resumed gives the vectors of a run that was never stopped, bit for bit, for both backends; a checkpoint
of another run is refused, and a damaged one is detected.

Runs to be killed train in a child process; a watcher thread in it sends SIGKILL to its own process as
soon as a checkpoint at or past a given position is on disk (so the kill lands mid-epoch, between two
checkpoints, at a moment nobody chose), or the command-line test kills the ``likewise train`` process
from outside.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import planted_baskets

import likewise
import likewise.training.train_numba
from likewise.errors import CorruptModelError, InputError

TESTS = Path(__file__).resolve().parent
CLI = [sys.executable, "-c", "import sys; from likewise.cli import main; sys.exit(main())"]

CHILD = """
import json, os, signal, sys, threading, time
import numpy as np
sys.path.insert(0, {tests!r})
from conftest import planted_baskets
import likewise, likewise.training.train_numba
likewise.training.train_numba.BLOCK_TOKENS = 500  # several blocks per pass, so numba checkpoints mid-pass too
args = json.loads(sys.argv[1])
kill, out = args.pop("kill"), args.pop("out")
data = [sorted(b) for b in planted_baskets(n=1200)[0]]

def watch():
    path = os.path.join(args["checkpoint_dir"], "checkpoint", "manifest.json")
    while True:
        try:
            with open(path) as f:
                state = json.load(f)["state"]
            if (state["epoch"], state["step"]) >= tuple(kill):
                os.kill(os.getpid(), signal.SIGKILL)
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.001)

threading.Thread(target=watch, daemon=True).start()
emb = likewise.train(data, **args)
np.save(out, emb.vectors)
"""


def _config(backend: str, epochs: int | str = 3) -> dict:
    base = {"mode": "basket", "dim": 12, "epochs": epochs, "min_count": 1, "seed": 5, "deterministic": True}
    extra = {"backend": "torch", "device": "cpu", "batch_tokens": 200} if backend.startswith("torch") else {}
    if backend == "torch-bf16":  # tables stored as uint16 bits in the checkpoint
        extra["table_dtype"] = "bfloat16"
    return base | {"backend": "cpu"} | extra


@pytest.mark.parametrize(
    ("backend", "epochs"), [("cpu", 3), ("torch", 3), ("torch-bf16", 3), ("cpu", "auto")]
)
def test_killed_mid_epoch_and_resumed_is_bit_identical(tmp_path, monkeypatch, backend, epochs):
    """With ``epochs="auto"`` the trials run first and are not checkpointed: the kill lands in the real
    run, and the resumed run skips the trials (its checkpoint holds the pass count and rule they chose)."""
    if backend.startswith("torch"):
        pytest.importorskip("torch")
    monkeypatch.setattr(likewise.training.train_numba, "BLOCK_TOKENS", 500)
    data = [sorted(b) for b in planted_baskets(n=1200)[0]]
    config = _config(backend, epochs)
    whole = likewise.train(data, **config)

    ckpt = tmp_path / "ckpt"
    args = dict(
        config, checkpoint_dir=str(ckpt), checkpoint_every=1e-9, kill=[1, 3], out=str(tmp_path / "x.npy")
    )
    child = subprocess.run(
        [sys.executable, "-c", CHILD.format(tests=str(TESTS)), json.dumps(args)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr[-2000:]
    state = json.loads((ckpt / "checkpoint" / "manifest.json").read_text())["state"]
    assert (state["epoch"], state["step"]) >= (1, 3) and state["epoch"] < state["epochs"]  # killed mid-run

    resumed = likewise.train(data, **config, checkpoint_dir=ckpt, resume=True)
    np.testing.assert_array_equal(resumed.vectors, whole.vectors)
    np.testing.assert_array_equal(resumed.context, whole.context)
    strip = [{k: v for k, v in h.items() if k != "seconds"} for h in resumed.meta["history"]]
    assert strip == [{k: v for k, v in h.items() if k != "seconds"} for h in whole.meta["history"]]
    assert resumed.meta["epochs_reason"] == whole.meta["epochs_reason"]


def _wait_for_checkpoint(ckpt: Path, proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not (ckpt / "checkpoint" / "manifest.json").exists():
        assert proc.poll() is None, "the run ended before its first checkpoint"
        assert time.monotonic() < deadline, "no checkpoint appeared"
        time.sleep(0.002)


def test_command_line_kill_9_and_resume_exports_the_same_bytes(tmp_path):
    """``likewise train --deterministic --checkpoint-dir``, killed with SIGKILL from outside after its
    first checkpoint (``epochs auto``: the trials are not checkpointed, so it lands in the real run),
    then ``--resume``: ``likewise export --format word2vec-binary`` gives the same file, byte for byte.
    (The numba kernel here, which is fast; the torch backend is killed and resumed above.)"""
    sys.path.insert(0, str(TESTS))
    from test_defaults import seed_shop, write_orders

    orders = write_orders(seed_shop(2), tmp_path / "orders.csv")
    common = [str(orders), "--basket-col", "order_id", "--item-col", "product", "--deterministic"]
    common += ["--backend", "cpu", "--quiet"]
    common += ["--cache-dir", str(tmp_path / "cache")]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    subprocess.run([*CLI, "train", *common, "-o", str(tmp_path / "whole")], check=True, env=env, timeout=300)

    ckpt = tmp_path / "ckpt"
    run = [*CLI, "train", *common, "-o", str(tmp_path / "resumed"), "--checkpoint-dir", str(ckpt)]
    proc = subprocess.Popen(run, env=env, stderr=subprocess.PIPE)
    try:
        _wait_for_checkpoint(ckpt, proc)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert not (tmp_path / "resumed").exists()
    subprocess.run([*run, "--resume"], check=True, env=env, timeout=300)

    for name in ("whole", "resumed"):
        cmd = [*CLI, "export", str(tmp_path / name), "--format", "word2vec-binary", "--replace-space", "_"]
        cmd += ["-o", str(tmp_path / f"{name}.bin")]
        subprocess.run(cmd, check=True, timeout=120)
    assert (tmp_path / "whole.bin").read_bytes() == (tmp_path / "resumed.bin").read_bytes()
    saved = likewise.load(str(tmp_path / "resumed"))
    assert saved.report.epochs.value == likewise.load(str(tmp_path / "whole")).report.epochs.value
    whole = likewise.load(str(tmp_path / "whole"))
    assert "chosen on MRR@10" in saved.meta["epochs_reason"]  # the trials' outcome came back
    assert saved.meta["basket_scoring"] == whole.meta["basket_scoring"]


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A small numba run with a checkpoint directory, and its data."""
    data = [sorted(b) for b in planted_baskets(n=300)[0]]
    ckpt = tmp_path_factory.mktemp("ckpt")
    config = _config("cpu") | {"epochs": 2}
    emb = likewise.train(data, **config, checkpoint_dir=ckpt)
    return data, config, ckpt, emb


def test_a_finished_checkpoint_resumes_to_the_same_space(finished):
    data, config, ckpt, emb = finished
    again = likewise.train(data, **config, checkpoint_dir=ckpt, resume=True)
    np.testing.assert_array_equal(again.vectors, emb.vectors)
    manifest = json.loads((ckpt / "checkpoint" / "manifest.json").read_text())
    assert manifest["format"] == "likewise-checkpoint" and manifest["world_size"] == 1
    assert set(manifest["files"]) == {"W.0-of-1.npy", "C.0-of-1.npy"}
    assert manifest["state"]["rng"]["seed"] == config["seed"]


def test_another_run_is_refused_with_the_difference_named(finished):
    data, config, ckpt, _ = finished
    with pytest.raises(InputError, match="already holds a checkpoint .*pass --resume"):
        likewise.train(data, **config, checkpoint_dir=ckpt)
    with pytest.raises(InputError, match="of another run: dim 12 there, 16 here"):
        likewise.train(data, **(config | {"dim": 16}), checkpoint_dir=ckpt, resume=True)
    with pytest.raises(InputError, match="seed 5 there, 6 here"):
        likewise.train(data, **(config | {"seed": 6}), checkpoint_dir=ckpt, resume=True)
    with pytest.raises(InputError, match="another corpus or vocabulary .*n_sequences 300 there, 299 here"):
        likewise.train(data[:-1], **config, checkpoint_dir=ckpt, resume=True)
    with pytest.raises(InputError, match="backend 'cpu' there, 'torch' here"):
        pytest.importorskip("torch")
        likewise.train(
            data, **(config | {"backend": "torch", "device": "cpu"}), checkpoint_dir=ckpt, resume=True
        )
    with pytest.raises(InputError, match="resume=True needs checkpoint_dir="):
        likewise.train(data, **config, resume=True)


def test_resume_without_a_checkpoint_starts_afresh(tmp_path, finished):
    data, config, _, emb = finished
    fresh = likewise.train(data, **config, checkpoint_dir=tmp_path / "new", resume=True)
    np.testing.assert_array_equal(fresh.vectors, emb.vectors)


def test_a_damaged_checkpoint_is_detected(tmp_path, finished):
    import shutil

    data, config, ckpt, _ = finished
    copy = tmp_path / "copy"
    shutil.copytree(ckpt, copy)
    w = copy / "checkpoint" / "W.0-of-1.npy"
    raw = bytearray(w.read_bytes())
    raw[-1] ^= 1
    w.write_bytes(bytes(raw))
    with pytest.raises(CorruptModelError, match="fails its checksum"):
        likewise.train(data, **config, checkpoint_dir=copy, resume=True)
