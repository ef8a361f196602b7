"""``likewise demo``: train the 15-product seed demo and draw its map (:mod:`likewise.apps.demo`)."""

from __future__ import annotations

import argparse

from ._common import Commands, answers_payload, emit, neighbour_table, seed_option


def cmd_demo(args: argparse.Namespace) -> None:
    """Run the demo into ``args.output`` and print its neighbours and where the map went."""
    from likewise.apps.demo import run_demo

    res = run_demo(args.output, seed=args.seed, progress=False if args.quiet else None)
    payload = {
        "model": str(res.model_path),
        "map": str(res.map_path) if res.map_path else None,
        **answers_payload(res.neighbours.items()),
    }
    parts = [f"trained 8-d vectors for 15 products from 400 baskets -> {res.model_path}"]
    for q, n in res.neighbours.items():
        parts.append(f"\nnearest to {q}:\n" + neighbour_table(n, score="cosine"))
    parts.append(f"\nmap: {res.map_path}" if res.map_path else f"\n{res.note}")
    emit(args, payload, "\n".join(parts))


def register(commands: Commands) -> None:
    """Add ``likewise demo``."""
    d = commands.add("demo", cmd_demo, help="train the 15-product seed demo and draw its map")
    d.add_argument("-o", "--output", default="demo_out", help="output folder (default: demo_out)")
    from likewise.apps import demo

    seed_option(d, demo.run_demo)
    d.add_argument("--quiet", action="store_true", help="no progress bar")
