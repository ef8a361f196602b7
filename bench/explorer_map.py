"""The explorer's map in a real browser: redraw, pan and hover times for a map of many points (issue 45).

Builds a space of ``--items`` clustered random unit vectors (16 dims, ``--groups`` clusters, a label file
with each item's cluster, so the map is coloured by 24 values), serves it with ``likewise serve
--map-sample ITEMS`` (the whole space on the map), opens the page in headless Chromium (Debian's
``chromium``, driven by Playwright, as tests/test_browser.py does) and measures inside the page, with
``performance.now()``:

* **redraw**: ``draw()`` of the whole map, ``--draws`` times;
* **pan**: ``--frames`` animation frames, each moving the view and redrawing in ``requestAnimationFrame``
  (frames per second over the run; Chromium paces frames at 60 Hz at most);
* **hover**: a ``pointermove`` dispatched on the canvas at ``--hovers`` random points (the page finds the
  nearest point through its grid and places the tooltip), with the points the grid looked at;
* for comparison, the scan every hover used to make: every point to screen coordinates.

Prints milliseconds (mean, p95, max) per measure. The page measured is the one of the folder the
command runs in (the server is ``python -m likewise``, which imports from there first), so an older
checkout's page is measured by running this script from that checkout (``git archive REV | tar -x``)::

    .venv/bin/python bench/explorer_map.py                 # 100 000 points
    .venv/bin/python bench/explorer_map.py --items 20000
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]

_MEASURE = r"""
async ({draws, frames, hovers}) => {
  const stats = (xs) => {
    const s = [...xs].sort((a, b) => a - b), mean = s.reduce((a, b) => a + b, 0) / s.length;
    return { mean, p95: s[Math.floor(0.95 * (s.length - 1))], max: s[s.length - 1] };
  };
  const out = { points: state.map.items.length, canvas: [canvas.width, canvas.height] };
  const redraw = [];
  for (let i = 0; i < draws; i++) { const t = performance.now(); draw(); redraw.push(performance.now() - t); }
  out.redraw_ms = stats(redraw);
  const frame = [];
  const t0 = performance.now();
  await new Promise((done) => {
    let n = 0;
    const step = () => {
      const t = performance.now();
      state.view.cx += 2 / state.view.scale; state.view.cy += 1 / state.view.scale; draw();
      frame.push(performance.now() - t);
      if (++n < frames) requestAnimationFrame(step); else done();
    };
    requestAnimationFrame(step);
  });
  out.pan_fps = frames / ((performance.now() - t0) / 1000);
  out.pan_frame_ms = stats(frame);
  resetView();
  const rect = canvas.getBoundingClientRect(), hover = [], scanned = [];
  let seed = 1; const rnd = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
  for (let i = 0; i < hovers; i++) {
    const x = rect.left + rnd() * rect.width, y = rect.top + rnd() * rect.height;
    // both events, as a mouse sends them: pages before pointer events listened to mousemove
    const where = { clientX: x, clientY: y, bubbles: true };
    const ev = new PointerEvent("pointermove", { ...where, pointerType: "mouse" });
    const mouse = new MouseEvent("mousemove", where);
    const t = performance.now();
    canvas.dispatchEvent(ev); canvas.dispatchEvent(mouse);
    hover.push(performance.now() - t);
    if (state.lastScan !== undefined) scanned.push(state.lastScan);
  }
  out.hover_ms = stats(hover);
  out.hover_points_looked_at = scanned.length ? stats(scanned) : null; // pages before the grid: every point
  const scan = [];
  for (let i = 0; i < 50; i++) {
    const t = performance.now(); let best = -1, bestD = 64;
    for (let j = 0; j < state.map.x.length; j++) {
      const [sx, sy] = toScreen(state.map.x[j], state.map.y[j]);
      const d = (sx - 300) ** 2 + (sy - 300) ** 2; if (d < bestD) { bestD = d; best = j; }
    }
    scan.push(performance.now() - t);
  }
  out.full_scan_ms = stats(scan);
  return out;
}
"""


def build(folder: Path, items: int, groups: int, seed: int = 0) -> Path:
    from likewise import Embeddings, Vocab

    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((groups, 16))
    group = rng.integers(0, groups, items)
    vecs = centres[group] + 0.6 * rng.standard_normal((items, 16))
    keys = [f"g{g}_i{i}" for i, g in enumerate(group.tolist())]
    counts = np.sort(rng.integers(1, 10_000, items))[::-1]
    Embeddings(vecs.astype(np.float32), Vocab(keys, counts=counts)).save(folder / "big")
    (folder / "labels.tsv").write_text("".join(f"{k}\tgroup {k[1 : k.index('_')]}\n" for k in keys))
    return folder / "big"


def serve(model: Path, labels: Path, items: int) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "likewise", "serve", f"big={model}", "--labels", str(labels)]
    cmd += ["--map-sample", str(items), "--port", str(port)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, env={**os.environ})
    import httpx

    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            httpx.get(base + "/health", timeout=1)
            return proc, base
        except httpx.TransportError:
            if proc.poll() is not None:
                break
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("the server did not start")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--items", type=int, default=100_000)
    p.add_argument("--groups", type=int, default=24)
    p.add_argument("--draws", type=int, default=30)
    p.add_argument("--frames", type=int, default=120)
    p.add_argument("--hovers", type=int, default=300)
    p.add_argument("--width", type=int, default=1400)
    p.add_argument("--height", type=int, default=900)
    args = p.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        model = build(Path(tmp), args.items, args.groups)
        proc, base = serve(model, Path(tmp) / "labels.tsv", args.items)
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                page = browser.new_page(viewport={"width": args.width, "height": args.height})
                t0 = time.perf_counter()
                page.goto(base + "/")
                page.wait_for_selector("body[data-ready='1']", timeout=300_000)
                ready = time.perf_counter() - t0
                out = page.evaluate(
                    _MEASURE, {"draws": args.draws, "frames": args.frames, "hovers": args.hovers}
                )
                browser.close()
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    print(
        f"map of {out['points']:,} points, canvas {out['canvas'][0]} x {out['canvas'][1]} px, "
        f"page ready in {ready:.1f} s (map fetched, parsed, indexed, drawn)"
    )
    for name in ("redraw_ms", "pan_frame_ms", "hover_ms", "full_scan_ms"):
        s = out[name]
        print(f"  {name:<14} mean {s['mean']:7.2f}   p95 {s['p95']:7.2f}   max {s['max']:7.2f}")
    print(f"  pan            {out['pan_fps']:.1f} frames/s over {args.frames} animation frames")
    s = out["hover_points_looked_at"]
    if s is not None:
        print(f"  hover looked at {s['mean']:.1f} points on average (max {s['max']}) of {out['points']:,}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
