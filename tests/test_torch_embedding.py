"""likewise.torch.EmbeddingTable: checked ids, export to a likewise space, the missing-torch message."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from likewise.data.vocab import Vocab  # noqa: E402
from likewise.errors import InputError, ItemIndexError, MissingDependencyError  # noqa: E402
from likewise.space.embeddings import Embeddings  # noqa: E402
from likewise.torch import EmbeddingTable, check_ids, resolve_device  # noqa: E402

torch.set_num_threads(1)


@pytest.mark.parametrize("bad", [5, 12, -1])
def test_id_past_the_end_names_the_id_and_the_table_size(bad):
    t = EmbeddingTable(5, 3)
    with pytest.raises(ItemIndexError) as ei:
        t(torch.tensor([0, bad, 2]))
    assert isinstance(ei.value, IndexError)
    assert ei.value.index == bad and ei.value.size == 5
    assert f"item id {bad} is out of range for a table of 5 rows" in str(ei.value)


def test_largest_bad_id_is_reported_and_lists_work():
    with pytest.raises(ItemIndexError, match="id 9 is out of range for a table of 4 rows"):
        check_ids([[1, 9], [7, 0]], 4)
    assert check_ids(np.array([0, 3], dtype=np.int16), 4).dtype == torch.int64
    assert check_ids(torch.zeros(0, dtype=torch.int64), 4).numel() == 0


@pytest.mark.parametrize("ids", [torch.tensor([0.0, 1.0]), torch.tensor([True, False])])
def test_non_integer_ids_are_refused(ids):
    with pytest.raises(InputError, match="integer tensor"):
        EmbeddingTable(3, 2)(ids)


def test_bad_sizes_are_refused():
    with pytest.raises(InputError, match="dim == 0, must be an int >= 1"):
        EmbeddingTable(3, 0)


def test_export_to_a_space_that_answers_queries(tmp_path):
    torch.manual_seed(0)
    t = EmbeddingTable(4, 3)
    with torch.no_grad():
        t.weight.copy_(torch.tensor([[1.0, 0, 0], [0.9, 0.1, 0], [0, 1, 0], [0, 0, 1]]))
    emb = t.to_embeddings(Vocab(["a", "b", "c", "d"]), meta={"why": "test"})
    emb.save(tmp_path / "space")
    back = Embeddings.load(tmp_path / "space")
    np.testing.assert_array_equal(back.vectors, t.weight.detach().numpy())
    assert back.similar("a", k=1).keys == ["b"]
    assert back.fingerprint == emb.fingerprint
    # and back into a table
    t2 = EmbeddingTable.from_embeddings(back, freeze=True)
    assert torch.equal(t2.weight, t.weight) and not t2.weight.requires_grad
    with pytest.raises(InputError, match="vocab has 2 keys but the table has 4 rows"):
        t.to_embeddings(Vocab(["a", "b"]))


def test_device_resolution():
    assert resolve_device("cpu").type == "cpu"
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(InputError, match="must be 'cpu', 'cuda'"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match="sees no CUDA GPU"):
            resolve_device("cuda")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU here")
def test_cuda_bad_id_raises_before_any_kernel_launch():
    t = EmbeddingTable(5, 3).cuda()
    with pytest.raises(ItemIndexError, match="id 5 is out of range"):
        t(torch.tensor([5], device="cuda"))
    assert t(torch.tensor([4], device="cuda")).shape == (1, 3)  # the CUDA context is still usable


def test_missing_torch_gives_the_install_line():
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "try:\n    import likewise.torch\n"
        "except ImportError as e:\n    print(type(e).__name__, e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.startswith(MissingDependencyError.__name__)
    assert "pip install '.[torch]' in the likewise clone" in out


@pytest.mark.parametrize("argv", [["sample", "nowhere"], ["train-next", "nowhere.txt", "-o", "m"]])
def test_cli_without_torch_prints_the_install_line(argv):
    code = (
        f"import sys; sys.modules['torch'] = None\nfrom likewise.cli import main\nsys.exit(main({argv!r}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stderr.startswith("likewise: error: torch is needed")
    assert "pip install '.[torch]' in the likewise clone" in proc.stderr and "Traceback" not in proc.stderr
