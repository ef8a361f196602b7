"""The benchmark peers are declared once (likewise.baselines.counts.PEERS) and every user reads them from
there: fit_baselines, ``likewise eval --baselines`` (help, check, default), holdout_report and both
benchmarks. A toy peer added once shows up in all of them."""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from likewise.baselines import counts
from likewise.baselines.counts import BASELINES, KNOWN_BASELINES, PEERS, fit_baselines
from likewise.baselines.peers import HAS_IMPLICIT
from likewise.baselines.registry import Peer, PeerData, Peers
from likewise.cli import build_parser
from likewise.errors import InputError, MissingDependencyError

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _bench(name: str):
    """A bench script imported as a module (bench/ on the path for its helper modules)."""
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod  # its dataclasses look their module up
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(BENCH))
    return mod


class ToyRecommender:
    """Ranks by id, lowest first (context excluded)."""

    name = "toy"

    def __init__(self, n_items: int) -> None:
        self.n_items = n_items

    def recommend_ids(self, contexts, k):
        out = []
        for c in contexts:
            free = [i for i in range(self.n_items) if i not in set(c.tolist())]
            out.append(free[:k])
        return np.asarray(out, dtype=np.int64)

    def item_rows(self, rows):
        return np.eye(self.n_items, dtype=np.float32)[rows]


TOY = Peer("toy", lambda d: ToyRecommender(d.n_items), "items by id, lowest first")
GHOST = Peer("ghost", lambda d: ToyRecommender(d.n_items), "needs a library", needs="no_such_module_q57")


def _quick(peers: Peers) -> Peers:
    """``peers`` with the learned ones fitted as the toy (their held-out searches take seconds each)."""
    return Peers(tuple(dataclasses.replace(p, fit=TOY.fit) if p.learned else p for p in peers))


@pytest.fixture
def with_toy(monkeypatch):
    monkeypatch.setattr(counts, "PEERS", _quick(counts.PEERS).plus(TOY))


def _baskets(n: int = 200, v: int = 12, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.choice(v, size=int(rng.integers(2, 5)), replace=False).astype(np.int64) for _ in range(n)]


def test_built_in_peers_in_order_and_the_names_derived_from_them() -> None:
    assert PEERS.names == ("popular", "cocount", "ppmi", "ppmi-svd", "ease", "als")
    assert KNOWN_BASELINES == PEERS.names
    assert BASELINES == ("popular", "cocount", "ppmi", "ppmi-svd", "ease") + (
        ("als",) if HAS_IMPLICIT else ()
    )
    assert [p.name for p in PEERS if p.learned] == ["ease", "als"]
    assert PEERS.get("als").needs == "implicit" and all(p.needs is None for p in PEERS if p.name != "als")


def test_a_peer_is_declared_once() -> None:
    with pytest.raises(InputError, match="'cocount' is declared twice"):
        PEERS.plus(dataclasses.replace(TOY, name="cocount"))
    with pytest.raises(InputError, match="unknown baseline 'pop'; known: popular, cocount"):
        PEERS.get("pop")


def test_toy_peer_reaches_fit_baselines(with_toy) -> None:
    baskets = _baskets()
    recs = fit_baselines(baskets, 12, dim=4)  # the default set, read when called
    assert list(recs) == [*BASELINES, "toy"]
    assert type(recs["ppmi"]) is counts.PPMIRecommender and isinstance(recs["toy"], ToyRecommender)
    assert recs["toy"].recommend_ids([np.array([0, 2])], 3).tolist() == [[1, 3, 4]]
    assert list(fit_baselines(baskets, 12, which=("toy", "popular"))) == ["toy", "popular"]


def test_toy_peer_reaches_the_cli(with_toy, capsys) -> None:
    parser = build_parser()
    args = parser.parse_args(["eval", "MODEL", "--holdout", "S", "--baselines", "toy,popular"])
    assert args.baselines == "toy,popular"
    with pytest.raises(SystemExit):
        parser.parse_args(["eval", "MODEL", "--holdout", "S", "--baselines", "toy,nope"])
    assert (
        "unknown baseline 'nope'; known: popular, cocount, ppmi, ppmi-svd, ease, als, toy"
        in capsys.readouterr().err
    )
    with pytest.raises(SystemExit):
        parser.parse_args(["eval", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "toy: items by id, lowest first" in help_text
    assert "default: popular,cocount,ppmi,ppmi-svd,ease,als,toy" in help_text


def test_toy_peer_reaches_the_defaults_bench(with_toy) -> None:
    bench = _bench("defaults_vs_baselines")
    assert bench.row_names() == ("likewise", *PEERS.names, "toy")
    base, secs = bench.fit_peers(_baskets(), 12, 4, seed=1)
    assert list(base) == [*(n for n in BASELINES if n not in ("ease", "als")), "toy", "ease"] + (
        ["als"] if HAS_IMPLICIT else []
    )
    assert set(secs) == {"baselines", "ease"} | ({"als"} if HAS_IMPLICIT else set())


def test_supermarket_peers_come_from_the_registry_and_one_declaration() -> None:
    pytest.importorskip("pyarrow")
    bench = _bench("supermarket")
    assert [p.name for p in bench.HOUSEHOLD_PEERS] == ["G-TopFreq", "P-TopFreq", "UP-CF@r", "TIFU-KNN"]
    peers = bench.completion_peers()
    assert peers.names == ("co-count", "ALS 64 factors (alpha, reg tuned)")
    assert peers.get("co-count").fit is PEERS.get("cocount").fit
    assert peers.get("ALS 64 factors (alpha, reg tuned)").needs == "implicit"
    data = PeerData(_baskets(), 12, dim=64)
    want = fit_baselines(_baskets(), 12, which=("cocount",))["cocount"]
    got = peers.get("co-count").fit(data)
    q = [np.array([0, 1]), np.array([5])]
    assert np.array_equal(got.recommend_ids(q, 5), want.recommend_ids(q, 5))


def test_a_missing_library_says_how_to_install_it(monkeypatch) -> None:
    monkeypatch.setattr(counts, "PEERS", _quick(counts.PEERS).plus(GHOST))
    assert not GHOST.available and "ghost" not in counts.PEERS.defaults
    assert "ghost" not in fit_baselines(_baskets(), 12, dim=4)
    with pytest.raises(MissingDependencyError) as e:
        fit_baselines(_baskets(), 12, which=("popular", "ghost"))
    assert (
        str(e.value) == "no_such_module_q57 is needed for the ghost baseline: pip install no_such_module_q57"
    )


def test_shared_counts_are_counted_once(monkeypatch) -> None:
    calls = []
    real = counts.cooccurrence

    def counting(*a, **kw):
        calls.append(1)
        return real(*a, **kw)

    monkeypatch.setattr(counts, "cooccurrence", counting)
    fit_baselines(_baskets(), 12, dim=4, which=("popular", "cocount", "ppmi", "ppmi-svd"))
    assert len(calls) == 1
    fit_baselines(_baskets(), 12, which=("ease",))
    assert len(calls) == 1  # EASE needs no co-occurrence counts


def test_peer_data_memo_is_per_fit() -> None:
    d = PeerData([np.array([0, 1])], 2, dim=2)
    made = []
    assert d.shared("x", lambda: made.append(1) or 7) == 7
    assert d.shared("x", lambda: made.append(1) or 8) == 7
    assert made == [1] and PeerData([np.array([0, 1])], 2, dim=2).shared("x", lambda: 9) == 9
    assert isinstance(Peers((TOY,)), Peers) and len(Peers((TOY,))) == 1 and "toy" in Peers((TOY,))


def test_the_docs_table_lists_every_peer() -> None:
    table = (Path(__file__).resolve().parents[1] / "docs" / "evaluate.md").read_text("utf-8")
    assert [p.name for p in PEERS if f"| `{p.name}`" not in table] == []
