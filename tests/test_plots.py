"""Pictures are drawn (PNG and SVG), at the documented size."""

from __future__ import annotations

import re
import struct

import numpy as np
import pytest

from likewise import Embeddings, Vocab
from likewise.errors import InputError
from likewise.plot import plot_loss, plot_space, plot_sweep

pytest.importorskip("matplotlib")


def png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def svg_size(path) -> tuple[float, float]:
    head = path.read_text()[:2000]
    w = re.search(r'width="([\d.]+)pt"', head)
    h = re.search(r'height="([\d.]+)pt"', head)
    assert w and h, head[:300]
    return float(w.group(1)), float(h.group(1))


@pytest.fixture(scope="module")
def big_space():
    rng = np.random.default_rng(0)
    n = 3000
    centres = rng.standard_normal((5, 16)) * 3
    group = np.arange(n) % 5
    vecs = centres[group] + rng.standard_normal((n, 16))
    keys = [f"item{i}" for i in range(n)]
    emb = Embeddings(vecs, Vocab(keys, np.arange(n, 0, -1)))
    return emb, {k: f"g{g}" for k, g in zip(keys, group.tolist(), strict=True)}


def test_space_map_png_and_svg(big_space, tmp_path):
    emb, labels = big_space
    png = plot_space(emb, tmp_path / "map.png", labels=labels, max_points=500, annotate=5)
    assert png_size(png) == (770, 660)
    svg = plot_space(emb, tmp_path / "map.svg", labels=labels, annotate=["item2999"], max_points=500)
    assert svg_size(svg) == (504.0, 432.0)
    text = svg.read_text()
    assert "item2999" in text  # an annotated rare item is kept in the sample
    assert "PCA of 16-d vectors: 500 of 3,000 items" in text
    assert text.count('id="PathCollection_') == 10  # per label: its scatter and its legend marker


def test_unlabelled_map_and_bad_suffix(big_space, tmp_path):
    emb, _ = big_space
    assert png_size(plot_space(emb, tmp_path / "m.png", max_points=100)) == (770, 660)
    with pytest.raises(InputError, match="must end in .png or .svg"):
        plot_space(emb, tmp_path / "m.jpg")


def test_loss_curve(tmp_path):
    history = [{"epoch": i + 1, "loss": 1.0 / (i + 1)} for i in range(6)]
    assert png_size(plot_loss(history, tmp_path / "loss.png")) == (880, 440)
    assert svg_size(plot_loss(history, tmp_path / "loss.svg")) == (576.0, 288.0)
    with pytest.raises(InputError, match="history is empty"):
        plot_loss([], tmp_path / "x.png")


def test_sweep_picture(tmp_path):
    rows = [{"dim": d, "heldout_loss": 0.3 / d + 0.01 * d, "hr": 0.5 - 0.1 / d} for d in (1, 2, 4, 8)]
    out = plot_sweep(rows, tmp_path / "sweep.png", baselines={"popular": 0.2, "cocount": 0.45})
    assert png_size(out) == (880, 440)
    svg = plot_sweep(rows, tmp_path / "sweep.svg", baselines={"popular": 0.2})
    assert svg_size(svg) == (576.0, 288.0)
    assert "cocount" not in svg.read_text() and not list(tmp_path.glob(".*tmp*"))


def test_demo_map_still_works(tmp_path):
    from likewise.plot import pca_coords, plot_map

    coords = pca_coords(np.random.default_rng(0).standard_normal((10, 4)))
    out = plot_map(coords, [f"k{i}" for i in range(10)], tmp_path / "demo.png", labels={"k0": "a"})
    assert png_size(out) == (770, 660)


def test_map_labels_do_not_overlap():
    pytest.importorskip("adjustText")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from likewise.plot import _spread_labels

    rng = np.random.default_rng(0)
    xy = rng.normal(scale=0.01, size=(12, 2))  # twelve points nearly on top of each other
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.scatter(xy[:, 0], xy[:, 1])
    texts = [ax.text(x, y, f"product-{i}", fontsize=8) for i, (x, y) in enumerate(xy.tolist())]
    renderer = fig.canvas.get_renderer()

    def overlaps() -> int:
        boxes = [t.get_window_extent(renderer) for t in texts]
        return sum(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])

    before = overlaps()
    _spread_labels(ax, texts)
    fig.canvas.draw()
    assert before > 10 and overlaps() == 0
    plt.close(fig)
