"""Table arithmetic: `likewise size` and the sizes `likewise info` shows."""

from __future__ import annotations

import json

import numpy as np
import pytest

from likewise.cli import main
from likewise.cli.nn import table_size
from likewise.data.vocab import Vocab
from likewise.errors import InputError
from likewise.space.embeddings import Embeddings


def test_llama_sized_table():
    s = table_size(128_000, 4096)
    assert s["weights"] == 524_288_000  # ~ 525 M weights
    assert s["bytes"] == 2_097_152_000 and s["mib"] == 2000.0
    assert table_size(128_000, 4096, "bf16")["bytes"] == 1_048_576_000
    assert table_size(128_000, 4096, "float16")["bytes"] == 1_048_576_000


@pytest.mark.parametrize(
    ("kw", "msg"), [({"vocab": -1}, "vocab == -1"), ({"dtype": "fp8"}, "dtype == 'fp8'")]
)
def test_bad_arguments(kw, msg):
    args = {"vocab": 10, "dim": 2, **kw}
    with pytest.raises(InputError, match=msg):
        table_size(args["vocab"], args["dim"], args.get("dtype", "float32"))


def test_cli_size(capsys):
    assert main(["size", "--vocab", "128000", "--dim", "4096", "--dtype", "bf16", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["weights"] == 524_288_000 and out["bytes"] == 1_048_576_000
    assert main(["size", "--vocab", "128000", "--dim", "4096"]) == 0
    text = capsys.readouterr().out
    assert "524,288,000" in text and "2,097,152,000" in text
    assert main(["size", "--vocab", "-5", "--dim", "3"]) == 1
    assert "vocab == -5" in capsys.readouterr().err


def test_info_shows_float32_and_bf16_bytes(tmp_path, capsys):
    Embeddings(np.ones((6, 5), np.float32), Vocab(list("abcdef"))).save(tmp_path / "s")
    assert main(["info", str(tmp_path / "s"), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["weights"] == 30 and info["bytes_float32"] == 120 and info["bytes_bf16"] == 60
