"""Progress where it is read: a bar on a terminal, a line per phase and per pass in a log, or nothing.

pytest's stderr is not a terminal, as under cron, CI or ``2> train.log``.
"""

from __future__ import annotations

import logging
import re

import pytest

import likewise
from likewise.cli import main
from likewise.errors import InputError

BASKETS = [["a", "b", "c"], ["b", "c", "d"], ["a", "d"]] * 40
PASS_LINE = re.compile(
    r"^likewise: epoch (\d)/2: [\d,]+ items, [\d,]+ pairs in [\d.]+ s \([\d,]+ items/s, [\d,]+ pairs/s\)"
)


@pytest.fixture(scope="module")
def baskets_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("progress") / "baskets.txt"
    path.write_text("\n".join(",".join(b) for b in BASKETS) + "\n")
    return path


def _train_cli(path, out, *extra):
    argv = ["train", str(path), "-o", str(out), "--delimiter", ",", "--mode", "basket", "--dim", "4"]
    argv += ["--epochs", "2", "--min-count", "1", "--cache-dir", str(out.parent / "cache"), *extra]
    assert main(argv) == 0


@pytest.mark.parametrize("mode", ["log", "auto"])
def test_train_in_a_log_prints_a_line_per_phase_and_per_pass(baskets_file, tmp_path, capsys, mode):
    """``--progress log`` (and ``auto`` when stderr is not a terminal): the input read, each pass with
    its elapsed time and rates, the training and the steps after it, each a line of its own."""
    _train_cli(baskets_file, tmp_path / "m", "--progress", mode)
    err = capsys.readouterr().err.splitlines()
    passes = [m.group(1) for line in err if (m := PASS_LINE.match(line))]
    assert passes == ["1", "2"], err
    assert any(
        re.match(r"likewise: input: 320 tokens in 120 sequences, 4 items, read in .* tokens/s\)", x)
        for x in err
    )
    assert any(re.match(r"likewise: training: 2 passes over 320 tokens in .* tokens/s\)", x) for x in err)
    assert any(x.startswith("likewise: after training (") for x in err)
    assert not any("\r" in x or "%|" in x for x in err)  # no bar drawn into a log


@pytest.mark.parametrize("flag", [["--progress", "none"], ["--quiet"]])
def test_progress_none_prints_nothing(baskets_file, tmp_path, capsys, flag):
    _train_cli(baskets_file, tmp_path / "m", *flag)
    assert capsys.readouterr().err == ""


def test_python_logging_sees_the_lines(caplog, capsys):
    """The Python API says the same through the ``likewise`` logger once logging is set up to hear it,
    and writes nothing to stderr itself (its default, ``auto``, off a terminal)."""
    caplog.set_level(logging.INFO, logger="likewise")
    likewise.train(BASKETS, mode="basket", dim=4, epochs=2, min_count=1)
    lines = [r.getMessage() for r in caplog.records if r.name == "likewise"]
    assert [x.split(":")[0] for x in lines if x.startswith("epoch")] == ["epoch 1/2", "epoch 2/2"]
    assert any(x.startswith("input: 320 tokens") for x in lines)
    assert any(x.startswith("training: 2 passes") for x in lines)
    assert capsys.readouterr().err == ""


def test_python_progress_log_reaches_stderr_without_logging_set_up(capsys):
    """``progress="log"`` asks for the lines: with no logging set up they go to stderr."""
    likewise.train(BASKETS, mode="basket", dim=4, epochs=2, min_count=1, progress="log")
    err = capsys.readouterr().err.splitlines()
    assert [m.group(1) for line in err if (m := PASS_LINE.match(line))] == ["1", "2"], err


def test_progress_none_and_a_bad_value(capsys):
    likewise.train(BASKETS, mode="basket", dim=4, epochs=1, min_count=1, progress="none")
    assert capsys.readouterr().err == ""
    with pytest.raises(InputError, match=r"progress == 'loud', must be one of auto, bar, log, none"):
        likewise.train(BASKETS, mode="basket", dim=4, epochs=1, min_count=1, progress="loud")
