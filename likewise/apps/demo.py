"""The seed demo: fifteen products, three departments, 400 baskets, 8-dimensional vectors."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..data.datasets import demo_baskets, demo_labels
from ..errors import MissingDependencyError
from ..space.results import Neighbours

__all__ = ["DEMO_QUERIES", "DemoResult", "run_demo"]

DEMO_QUERIES = ("tent", "kettle", "planner")


@dataclass
class DemoResult:
    """What :func:`run_demo` produced."""

    model_path: Path
    neighbours: dict[str, Neighbours]
    map_path: Path | None
    note: str = ""
    history: list[dict] = field(default_factory=list)


def run_demo(out_dir: str | Path = "demo_out", seed: int = 0, progress: bool | None = False) -> DemoResult:
    """Generate the demo baskets, train, save, query the three products, and draw the PCA map.

    Parameters
    ----------
    out_dir : path
        Receives ``model/`` (the saved space) and ``map.png``.
    seed : int
        Seed of the baskets and of training (training is deterministic, one thread).
    progress : bool, optional
        Show the training progress bar.
    """
    from ..plot import pca_coords, plot_map
    from ..space.store import check_target
    from ..training.train import train

    out = Path(out_dir)
    check_target(out / "model", overwrite=True)  # before training: never inside another saved folder
    out.mkdir(parents=True, exist_ok=True)
    baskets = demo_baskets(400, seed=seed)
    # Fifteen items, so no subsampling (every item is "frequent") and every item kept. On 15 items
    # SGNS soon overfits the pairs that never occur, and more negatives overfit faster
    # (bench/demo_sweep.py, wrong top-3 neighbours over 15 products x 12 seeds: negative=5 gives
    # 0/1/12/57 at 8/15/20/30 epochs, negative=2 gives 0/0/0/21); negative=2 at 15 epochs has margin.
    emb = train(
        baskets,
        mode="basket",
        dim=8,
        negative=2,
        sample=0.0,
        min_count=1,
        epochs=15,
        lr=0.025,
        seed=seed,
        deterministic=True,
        progress=progress,
    )
    model_path = out / "model"
    emb.save(model_path, overwrite=True)
    # plain cosine: the demo shows the vectors themselves (fifteen products, all with plenty of evidence)
    neighbours = {q: emb.similar(q, k=3, evidence=False) for q in DEMO_QUERIES}
    map_path: Path | None = out / "map.png"
    note = ""
    try:
        plot_map(
            pca_coords(emb.vectors),
            emb.keys,
            map_path,
            labels=demo_labels(),
            title="likewise demo: 15 products, PCA of 8-d vectors (colour = department)",
        )
    except MissingDependencyError as e:
        map_path, note = None, f"map not drawn: {e}"
    return DemoResult(model_path, neighbours, map_path, note, list(emb.report.history))
