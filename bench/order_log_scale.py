"""An order log with and without its customer column, at growing sizes: the one log path's cost.

Usage::

    .venv/bin/python bench/order_log_scale.py --scales 1,4 --work /tmp/logscale
    .venv/bin/python bench/order_log_scale.py --scales 16 --work /tmp/logscale --variants items,customers

Each scale ``s`` is ``likewise datasets retail --customers s*200000 --products 5000
--orders-per-customer 8 --format parquet --seed 1`` (7.5 M lines at 1x; generated once into ``--work``
and reused). Each variant is ``likewise train LOG --basket-col order_id --item-col product_id --epochs 5
--quiet`` in a fresh process with an empty corpus cache, timed from outside (wall seconds; peak RSS of
that process from ``/usr/bin/time``, else ``ru_maxrss`` of the child):

* ``items``: products only (the reference);
* ``customers``: ``--user-col customer_id --time-col timestamp --checkpoint-dir`` (customer vectors and
  a checkpoint every epoch);
* ``sessions``: the same with ``--sessions 30m`` (customer sessions, sequence mode).

Prints one row per (scale, variant): lines, wall, peak, and the ratios to ``items`` at that scale
(issue 30's bounds: wall <= 1.5x and peak <= 1.3x with customers).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
VARIANTS = {
    "items": [],
    "customers": ["--user-col", "customer_id", "--time-col", "timestamp", "--checkpoint-dir", "{ck}"],
    "sessions": [
        *("--user-col", "customer_id", "--time-col", "timestamp", "--sessions", "30m"),
        *("--checkpoint-dir", "{ck}"),
    ],
}


def _log(work: Path, scale: int) -> Path:
    folder = work / f"x{scale}"
    if not (folder / "orders.parquet").exists():
        cmd = [str(BIN / "likewise"), "datasets", "retail", "--customers", str(200_000 * scale)]
        cmd += ["--products", "5000", "--orders-per-customer", "8", "--format", "parquet"]
        cmd += ["--seed", "1", "-o", str(folder)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return folder / "orders.parquet"


def _run(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB) of one fresh process."""
    timer = shutil.which("time") or "/usr/bin/time"
    if os.path.exists(timer):
        with tempfile.NamedTemporaryFile("r", suffix=".time") as out:
            t0 = time.perf_counter()
            subprocess.run([timer, "-o", out.name, "-f", "%M", *cmd], check=True, env=env)
            wall = time.perf_counter() - t0
            kb = int(re.findall(r"\d+", Path(out.name).read_text())[-1])
        return wall, kb / 1024
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, env=env)
    return time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--scales", default="1", help="comma-separated multiples of 200,000 customers")
    p.add_argument("--variants", default="items,customers", help=f"of {', '.join(VARIANTS)}")
    p.add_argument("--work", default=None, help="where logs, caches and models go (default: a temp folder)")
    args = p.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="likewise-logscale-"))
    work.mkdir(parents=True, exist_ok=True)
    head = f"{'scale':>5} {'variant':<10} {'lines':>12} {'wall s':>8} {'peak MiB':>9}"
    print(f"{head} {'wall x':>7} {'peak x':>7}")
    for scale in (int(s) for s in args.scales.split(",")):
        log = _log(work, scale)
        import pyarrow.parquet as pq

        lines = pq.ParquetFile(log).metadata.num_rows
        base = None
        for variant in args.variants.split(","):
            run = work / f"run-x{scale}-{variant}"
            shutil.rmtree(run, ignore_errors=True)
            run.mkdir()
            extra = [a.replace("{ck}", str(run / "ck")) for a in VARIANTS[variant]]
            cmd = [str(BIN / "likewise"), "train", str(log), "--basket-col", "order_id"]
            cmd += ["--item-col", "product_id", *extra, "--epochs", "5", "--quiet", "-o", str(run / "m")]
            env = dict(os.environ, LIKEWISE_CACHE=str(run / "cache"))
            wall, peak = _run(cmd, env)
            if variant == "items":
                base = (wall, peak)
            ratio = f"{wall / base[0]:>6.2f}x {peak / base[1]:>6.2f}x" if base else f"{'':>7} {'':>7}"
            print(f"{scale:>4}x {variant:<10} {lines:>12,} {wall:>8.1f} {peak:>9,.0f} {ratio}", flush=True)
            shutil.rmtree(run / "cache", ignore_errors=True)  # the compiled corpus: disk, not the figure


if __name__ == "__main__":
    main()
