// The explorer's map: a canvas in PCA or t-SNE, coloured by any column (categories by a palette, numbers by
// a gradient), labelled by any column; a legend whose values hide and show their points; box selection,
// isolate and zoom to it; pan and zoom by mouse, touch (one finger pans, two pinch) and keyboard. Big maps
// are drawn as pixels (one ImageData write per point) and hovering asks a grid of cells, never every point.
// Shares the globals of app.js.
"use strict";

// one colour per group, up to 40 (likewise/_groups.py PALETTE; tests/test_explorer_api.py holds them equal);
// grey is an item without a value, and "other (N values)", the rest of a column with more than 40
const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#31a354",
  "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2",
  "#756bb1", "#dbdb8d", "#9edae5", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#5254a3",
  "#8ca252", "#bd9e39", "#ad494a", "#a55194", "#6b6ecf", "#b5cf6b", "#e7ba52", "#d6616b", "#ce6dbd",
  "#9c9ede", "#cedb9c", "#e7cb94", "#e7969c", "#de9ed6"];
const OTHER = "#b0b0b0";
// viridis at nine stops: dark purple (low) to yellow (high), readable by colour-blind readers and in grey
const RAMP = ["#440154", "#472d7b", "#3b528b", "#2c728e", "#21918c", "#28ae80", "#5ec962", "#addc30", "#fde725"];
// marks in colours the viridis gradient does not use (its purples, blues and greens would hide them)
const MARK = { selected: "#c0392b", neighbour: "#e67e22", basket: "#1e7d32", match: "#d81b60", customer: "#111" };
const BIG = 5000; // more points than this: drawn as pixels, 2 or 3 px squares
const canvas = $("map");
const ctx = canvas.getContext("2d");
let boxMode = false;

const defaultColour = (mp) => (mp ? mp.colour_column || (mp.types ? "type" : "") : "");

// ---- loading a map ---------------------------------------------------------------------------------------

async function loadMap(projection) {
  const g = state.gen;
  $("projection").value = projection;
  let mp;
  try {
    mp = await api(m(`/map?projection=${projection}${sampleQuery()}`));
    while (mp.status === "computing") { // a second projection computing on the server: show its progress
      if (!current(g) || $("projection").value !== projection) return;
      const bar = $("map-progress");
      bar.hidden = false; bar.max = mp.total; bar.value = mp.done;
      $("map-info").textContent = `computing ${PROJECTION_NAMES[projection]} of ${mp.items.toLocaleString()} items`
        + (mp.total > 1 ? `: ${mp.done} of ${mp.total} iterations` : "") + ` (${mp.seconds} s)`;
      await new Promise((r) => setTimeout(r, 250));
      mp = await api(m(`/map?projection=${projection}${sampleQuery()}`));
    }
  } catch (e) { // the select shows the map that is drawn, and the error says why the other one is not
    if (current(g)) {
      $("projection").value = state.map ? state.projection : "pca";
      $("map-progress").hidden = true;
      sayError($("map-error"), e);
    }
    throw e;
  }
  if (!current(g) || $("projection").value !== projection) return;
  say($("map-error"), "");
  $("map-progress").hidden = true;
  state.projection = projection;
  state.map = mp;
  state.extra = new Map(); // off-map places belong to one projection
  mp.index = new Map(mp.items.map((k, i) => [k, i]));
  mp.placedSet = new Set(mp.placed || []);
  mp.fx = Float64Array.from(mp.x); mp.fy = Float64Array.from(mp.y);
  mp.ext = extent(mp.fx, mp.fy);
  mp.grid = buildGrid(mp.fx, mp.fy, mp.ext);
  remember(mp.items, mp);
  sampleOptions(mp);
  const cols = mp.colourable || [];
  const options = cols.map((c) => new Option(c, c));
  if (mp.types) options.push(new Option("type", "type"));
  $("colour").replaceChildren(...(options.length ? options : [new Option("nothing", "")]));
  $("colour").disabled = !options.length;
  if (state.colour === null || ![...$("colour").options].some((o) => o.value === state.colour)) state.colour = defaultColour(mp);
  $("colour").value = state.colour;
  const name = mp.name_column;
  const labels = [new Option(name ? "name" : "key", ""), ...(name ? [new Option("key", "key")] : []),
    ...Object.keys(mp.attributes || {}).filter((c) => c !== name).map((c) => new Option(c, c)), new Option("nothing", "none")];
  $("label").replaceChildren(...labels);
  if (![...labels].some((o) => o.value === state.label)) state.label = "";
  $("label").value = state.label;
  recolour();
  $("map-info").textContent = `${PROJECTION_NAMES[projection]}: ${mp.items.length.toLocaleString()} of `
    + `${mp.total.toLocaleString()} items` + (mp.sampled ? " (most frequent)" : "")
    + (projection !== "pca" ? ` · computed in ${mp.seconds} s; items outside it sit near their neighbours` : "");
  await ensureKnown([state.selected, ...state.neighbours, ...state.basket, ...state.recommendations].filter(Boolean));
  resetView();
  if (state.customer) openCustomer(state.customer.key, { push: false }); // its place on this projection
}

function extent(xs, ys) {
  let minx = Infinity, maxx = -Infinity, miny = Infinity, maxy = -Infinity;
  for (let i = 0; i < xs.length; i++) {
    if (xs[i] < minx) minx = xs[i]; if (xs[i] > maxx) maxx = xs[i];
    if (ys[i] < miny) miny = ys[i]; if (ys[i] > maxy) maxy = ys[i];
  }
  return xs.length ? { minx, maxx, miny, maxy } : { minx: -1, maxx: 1, miny: -1, maxy: 1 };
}

// A grid of about 4 points per cell (CSR: the points of cell c are items[start[c] .. start[c + 1]]):
// hovering looks at the cells within 8 px of the pointer only.
function buildGrid(xs, ys, e) {
  const n = xs.length, cells = Math.max(1, Math.ceil(Math.sqrt(n / 4)));
  const cw = (e.maxx - e.minx) / cells || 1, ch = (e.maxy - e.miny) / cells || 1;
  const cellOf = new Int32Array(n), start = new Int32Array(cells * cells + 1), items = new Int32Array(n);
  const clampi = (v) => Math.min(cells - 1, Math.max(0, v));
  for (let i = 0; i < n; i++) {
    const c = clampi(Math.floor((ys[i] - e.miny) / ch)) * cells + clampi(Math.floor((xs[i] - e.minx) / cw));
    cellOf[i] = c; start[c + 1]++;
  }
  for (let c = 0; c < cells * cells; c++) start[c + 1] += start[c];
  const fill = start.slice(0, -1);
  for (let i = 0; i < n; i++) items[fill[cellOf[i]]++] = i;
  return { cells, cw, ch, start, items, minx: e.minx, miny: e.miny };
}

// ---- colours, the legend as filters, the box selection ---------------------------------------------------

function groupsOf(col) {
  const mp = state.map;
  if (!col) return null;
  if (col === "type") return mp.types;
  return (mp.groups && mp.groups[col]) || (mp.attributes && mp.attributes[col]) || null;
}

// A column whose every value is a number (three distinct at least) is drawn on a gradient, not in bands.
// Only the columns the server calls quantities: an id (manufacturer_id) is a category, never a gradient.
function numericValues(col) {
  const mp = state.map, raw = col && col !== "type" && mp.attributes && mp.attributes[col];
  if (!raw || !(mp.numeric || []).includes(col)) return null;
  const out = new Float64Array(raw.length), seen = new Set();
  for (let i = 0; i < raw.length; i++) {
    const v = raw[i];
    if (v == null || v === "") { out[i] = NaN; continue; }
    const x = Number(v);
    if (!Number.isFinite(x)) return null;
    out[i] = x; seen.add(x);
  }
  return seen.size >= 3 ? out : null;
}

const rgbOf = (hex) => { const v = parseInt(hex.slice(1), 16); return ((v >> 16) & 255) | (v & 0xff00) | ((v & 255) << 16); };
function rampAt(t) { // t in [0, 1] -> "#rrggbb" between the RAMP stops
  const f = Math.min(1, Math.max(0, t)) * (RAMP.length - 1), i = Math.min(RAMP.length - 2, Math.floor(f)), u = f - i;
  const a = parseInt(RAMP[i].slice(1), 16), b = parseInt(RAMP[i + 1].slice(1), 16);
  const mix = (s) => Math.round(((a >> s) & 255) * (1 - u) + ((b >> s) & 255) * u);
  return "#" + ((mix(16) << 16) | (mix(8) << 8) | mix(0)).toString(16).padStart(6, "0");
}

function recolour() {
  const mp = state.map;
  if (!mp) return;
  const n = mp.items.length, col = state.colour;
  mp.css = new Array(n); mp.rgb = new Uint32Array(n); mp.group = null;
  const legend = [];
  const num = numericValues(col);
  if (num) { // by rank: a few huge values do not squash everything else into one colour
    const order = [...num.keys()].filter((i) => !Number.isNaN(num[i])).sort((a, b) => num[a] - num[b]);
    for (let i = 0; i < n; i++) mp.css[i] = "#999";
    order.forEach((i, r) => { mp.css[i] = rampAt(order.length > 1 ? r / (order.length - 1) : 0.5); });
    const lo = order.length ? num[order[0]] : 0, hi = order.length ? num[order[order.length - 1]] : 0;
    const li = document.createElement("li");
    const s = document.createElement("span"); s.className = "swatch gradient";
    s.style.background = `linear-gradient(to right, ${RAMP.join(", ")})`;
    li.append(`${col}: ${lo.toLocaleString()}`, s, `${hi.toLocaleString()} (by rank)`);
    legend.push(li);
  } else {
    const groups = groupsOf(col);
    const isOther = (v) => /^other \([\d,]+ values\)$/.test(String(v));
    const all = groups ? [...new Set(groups.filter((l) => l != null))] : [];
    const values = all.filter((v) => !isOther(v)).sort(
      (a, b) => String(a).localeCompare(String(b), undefined, { numeric: true }));
    const other = all.filter(isOther); // the server's "other (N values)": last, in grey
    const colourOf = new Map(values.map((v, i) => [v, PALETTE[i % PALETTE.length]]));
    for (const v of other) colourOf.set(v, OTHER);
    for (let i = 0; i < n; i++) mp.css[i] = groups ? (groups[i] == null ? "#999" : colourOf.get(groups[i])) : "#1f77b4";
    mp.group = groups;
    legend.push(...values.slice(0, PALETTE.length).map((v) => legendFilter(colourOf.get(v), v)));
    if (values.length > PALETTE.length) legend.push(legendItem("#999", `… ${values.length - PALETTE.length} more`));
    legend.push(...other.map((v) => legendFilter(OTHER, v)));
  }
  for (let i = 0; i < n; i++) mp.rgb[i] = rgbOf(mp.css[i]);
  if (mp.placedSet.size) legend.push(legendItem(null, "placed, not trained", "placed"));
  legend.push(legendItem(MARK.selected, "selected", "ring"), legendItem(MARK.neighbour, "neighbours", "ring"),
    legendItem(MARK.basket, "basket", "square"), legendItem(MARK.match, "search matches", "ring"));
  if (state.info && state.info.customers) legend.push(legendItem(MARK.customer, "customer, and what they bought", "star"));
  $("legend").replaceChildren(...legend);
  refilter();
}
function legendItem(colour, text, shape) {
  const li = document.createElement("li");
  const s = document.createElement("span");
  s.className = "swatch" + (shape ? " " + shape : "");
  if (colour) { if (shape) s.style.borderColor = colour; else s.style.background = colour; }
  li.append(s, String(text));
  return li;
}
// a legend value is a toggle: pressed = its points are shown
function legendFilter(colour, value) {
  const li = document.createElement("li");
  const b = document.createElement("button");
  b.type = "button"; b.className = "filter"; b.dataset.value = value;
  b.setAttribute("aria-pressed", String(!state.hide.has(String(value))));
  b.title = "hide or show these points";
  const s = document.createElement("span"); s.className = "swatch"; s.style.background = colour;
  b.append(s, String(value));
  b.onclick = () => {
    const v = String(value);
    if (state.hide.has(v)) state.hide.delete(v); else state.hide.add(v);
    b.setAttribute("aria-pressed", String(!state.hide.has(v)));
    refilter(); record(); draw();
  };
  li.append(b);
  return li;
}

// Which points are drawn: not of a hidden legend value, and inside the box when the box is isolated.
function refilter() {
  const mp = state.map;
  if (!mp) return;
  const n = mp.items.length, g = mp.group, box = state.box;
  mp.shown = new Uint8Array(n); mp.inBox = new Uint8Array(n);
  let inBox = 0;
  for (let i = 0; i < n; i++) {
    const visible = !(g && g[i] != null && state.hide.has(String(g[i])));
    const inside = box ? mp.fx[i] >= box[0] && mp.fx[i] <= box[2] && mp.fy[i] >= box[1] && mp.fy[i] <= box[3] : false;
    mp.inBox[i] = inside && visible ? 1 : 0;
    inBox += mp.inBox[i];
    mp.shown[i] = visible && (!state.isolate || !box || inside) ? 1 : 0;
  }
  $("selection-tools").hidden = !box;
  $("selection-count").textContent = box ? `${inBox.toLocaleString()} selected` : "";
  $("isolate").setAttribute("aria-pressed", String(state.isolate && !!box));
  state.selectionCount = inBox;
}
const selectedKeys = () => state.map.items.filter((_, i) => state.map.inBox[i]);

// ---- the view --------------------------------------------------------------------------------------------

function position(key) {
  const mp = state.map, i = mp.index.get(key);
  if (i !== undefined) return [mp.x[i], mp.y[i]];
  return state.extra.get(key);
}

function fitView(e, pad = 0.85) {
  const w = canvas.clientWidth, h = canvas.clientHeight;
  const scale = pad * Math.min(w / (e.maxx - e.minx || 1), h / (e.maxy - e.miny || 1));
  return { scale, cx: (e.minx + e.maxx) / 2, cy: (e.miny + e.maxy) / 2 };
}
function resetView() {
  if (!state.map) return;
  state.view = fitView(state.map.ext);
  draw();
}
// the view in the URL: its centre and its zoom over the whole map's fit (so a link opens it at any width)
function viewParam(s) {
  if (!s.view || !s.map) return null;
  const fit = fitView(s.map.ext), zoom = s.view.scale / fit.scale;
  const moved = Math.abs(s.view.cx - fit.cx) + Math.abs(s.view.cy - fit.cy) > 1e-9 * (1 + Math.abs(fit.cx));
  if (!moved && Math.abs(zoom - 1) < 1e-6) return null;
  return [s.view.cx.toPrecision(6), s.view.cy.toPrecision(6), zoom.toPrecision(5)].map(Number).join(",");
}
function setView([cx, cy, zoom]) {
  state.view = { cx, cy, scale: fitView(state.map.ext).scale * zoom };
  draw();
}
function fitTo(xy) { // the smallest change of view that shows every point of xy (B2)
  const w = canvas.clientWidth, h = canvas.clientHeight, pad = 24;
  const e = extent(Float64Array.from(xy, (p) => p[0]), Float64Array.from(xy, (p) => p[1]));
  const fits = Math.min((w - 2 * pad) / (e.maxx - e.minx || 1e-9), (h - 2 * pad) / (e.maxy - e.miny || 1e-9));
  state.view = { scale: Math.min(state.view.scale, fits), cx: (e.minx + e.maxx) / 2, cy: (e.miny + e.maxy) / 2 };
}
function showOnMap(keys, points = []) {
  if (!state.view || !state.map) return;
  const xy = keys.map(position).filter(Boolean).concat(points);
  if (!xy.length) return;
  const w = canvas.clientWidth, h = canvas.clientHeight, pad = 12;
  const inside = xy.every(([x, y]) => {
    const [sx, sy] = toScreen(x, y);
    return sx >= pad && sy >= pad && sx <= w - pad && sy <= h - pad;
  });
  if (inside) return;
  fitTo(xy);
  recordView();
}
$("reset").onclick = () => { resetView(); recordView(); };

const toScreen = (x, y) => {
  const v = state.view;
  return [canvas.clientWidth / 2 + (x - v.cx) * v.scale, canvas.clientHeight / 2 - (y - v.cy) * v.scale];
};

// ---- labels ----------------------------------------------------------------------------------------------

// The label of a point: its name (or key), its key, any column's value, or none.
function labelOf(key) {
  if (state.label === "") return display(key);
  if (state.label === "key") return key;
  const d = state.details.get(key);
  return d && d[state.label] != null ? String(d[state.label]) : null;
}

// Labels that never overlap: candidates in priority order (the selected item, its neighbours, the basket,
// the recommendations, then the map's shown items on screen, most frequent first), each tried right, left,
// above and below its point, kept only where its box is free. A small map (the demo's 15) is labelled whole.
const FONT = "12px system-ui, sans-serif";
function placeLabels(w, h) {
  const mp = state.map, boxes = [];
  if (state.label === "none") return boxes;
  const wanted = [state.selected, ...state.neighbours, ...state.basket, ...state.recommendations];
  const limit = mp.items.length <= 60 ? mp.items.length : 120;
  for (let i = 0, on = 0; i < mp.items.length && on < limit + 30; i++) {
    if (!mp.shown[i]) continue;
    const [sx, sy] = toScreen(mp.fx[i], mp.fy[i]);
    if (sx < 0 || sy < 0 || sx > w || sy > h) continue;
    wanted.push(mp.items[i]); on++;
  }
  ctx.font = FONT;
  const seen = new Set();
  for (const key of wanted) {
    if (!key || seen.has(key)) continue;
    seen.add(key);
    const xy = position(key), text = labelOf(key);
    if (!xy || !text) continue;
    const [sx, sy] = toScreen(xy[0], xy[1]);
    if (sx < 0 || sy < 0 || sx > w || sy > h) continue;
    const tw = ctx.measureText(text).width + 4, th = 14;
    const spots = [[sx + 7, sy - th / 2], [sx - 7 - tw, sy - th / 2], [sx - tw / 2, sy - 8 - th], [sx - tw / 2, sy + 8]];
    for (const [x, y] of spots) {
      if (x < 0 || y < 0 || x + tw > w || y + th > h) continue;
      if (boxes.some((b) => x < b.x + b.w && b.x < x + tw && y < b.y + b.h && b.y < y + th)) continue;
      boxes.push({ key, text, x, y, w: tw, h: th });
      break;
    }
  }
  return boxes;
}

// ---- drawing ---------------------------------------------------------------------------------------------

let pix = null, pixWords = null;
function drawPixels(W, H, dpr, busy) { // every point one small square written straight into an ImageData
  const mp = state.map, v = state.view, s = v.scale * dpr;
  if (!pix || pix.width !== W || pix.height !== H) { pix = ctx.createImageData(W, H); pixWords = new Uint32Array(pix.data.buffer); }
  pixWords.fill(0);
  const ox = W / 2 - v.cx * s, oy = H / 2 + v.cy * s, size = Math.max(2, Math.round(2.5 * dpr)), half = size >> 1;
  const alpha = (busy ? 115 : 217) << 24, fx = mp.fx, fy = mp.fy, rgb = mp.rgb, shown = mp.shown;
  for (let i = 0, n = fx.length; i < n; i++) {
    if (!shown[i]) continue;
    const px = Math.round(ox + fx[i] * s) - half, py = Math.round(oy - fy[i] * s) - half;
    if (px < 0 || py < 0 || px + size > W || py + size > H) continue;
    const c = rgb[i] | alpha;
    for (let dy = 0; dy < size; dy++) {
      const base = (py + dy) * W + px;
      for (let dx = 0; dx < size; dx++) pixWords[base + dx] = c;
    }
  }
  ctx.putImageData(pix, 0, 0);
}

function draw() {
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth, h = canvas.clientHeight, W = Math.round(w * dpr), H = Math.round(h * dpr);
  if (canvas.width !== W || canvas.height !== H) { canvas.width = W; canvas.height = H; }
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.clearRect(0, 0, W, H);
  ctx.setTransform(W / (w || 1), 0, 0, H / (h || 1), 0, 0);
  const mp = state.map;
  if (!mp || !state.view || !mp.shown) return;
  const n = mp.items.length, big = n > BIG, r = big ? 1.5 : 3;
  const busy = state.selected || state.basket.length || state.customer;
  if (big && W > 0 && H > 0) drawPixels(W, H, dpr, busy);
  for (let i = 0; i < n; i++) {
    const placed = mp.placedSet.size && mp.placedSet.has(mp.items[i]);
    if ((big && !placed) || !mp.shown[i]) continue;
    const [sx, sy] = toScreen(mp.fx[i], mp.fy[i]);
    if (sx < -5 || sy < -5 || sx > w + 5 || sy > h + 5) continue;
    ctx.fillStyle = mp.css[i];
    ctx.globalAlpha = busy ? 0.45 : 0.85;
    if (placed) { // placed from attributes, not trained: an outlined diamond
      const q = r + 3;
      ctx.globalAlpha = 1; ctx.strokeStyle = "#222"; ctx.lineWidth = 1.5;
      ctx.beginPath(); ctx.moveTo(sx, sy - q); ctx.lineTo(sx + q, sy); ctx.lineTo(sx, sy + q); ctx.lineTo(sx - q, sy);
      ctx.closePath(); ctx.fill(); ctx.stroke();
      continue;
    }
    ctx.beginPath(); ctx.arc(sx, sy, r, 0, 2 * Math.PI); ctx.fill();
  }
  ctx.globalAlpha = 1;
  state.marks = []; // what is marked where (the browser tests read it)
  const mark = (key, colour, shape, xy = position(key)) => {
    if (xy === undefined) return;
    const [sx, sy] = toScreen(xy[0], xy[1]);
    state.marks.push({ key, shape, x: sx, y: sy });
    if (key && !mp.index.has(key)) { ctx.fillStyle = "#222"; ctx.beginPath(); ctx.arc(sx, sy, r, 0, 2 * Math.PI); ctx.fill(); }
    ctx.strokeStyle = colour; ctx.fillStyle = colour; ctx.lineWidth = shape === "selected" ? 3 : 2;
    ctx.beginPath();
    if (shape === "square") { ctx.rect(sx - r - 4, sy - r - 4, 2 * r + 8, 2 * r + 8); ctx.stroke(); }
    else if (shape === "customer") { star(sx, sy, 9); ctx.fill(); ctx.strokeStyle = "#fff"; ctx.lineWidth = 1.5; ctx.stroke(); }
    else if (shape === "bought") { ctx.lineWidth = 1.5; ctx.arc(sx, sy, r + 2, 0, 2 * Math.PI); ctx.stroke(); }
    else {
      if (shape === "match") ctx.setLineDash([3, 2]);
      ctx.arc(sx, sy, r + (shape === "selected" ? 5 : 4), 0, 2 * Math.PI); ctx.stroke(); ctx.setLineDash([]);
    }
  };
  if (state.customer) state.customer.bought.forEach((k) => mark(k, MARK.customer, "bought"));
  state.highlight.forEach((k) => mark(k, MARK.match, "match"));
  state.neighbours.forEach((k) => mark(k, MARK.neighbour, "neighbour"));
  state.basket.forEach((k) => mark(k, MARK.basket, "square"));
  if (state.selected) mark(state.selected, MARK.selected, "selected");
  if (state.customer) mark(state.customer.key, MARK.customer, "customer", [state.customer.x, state.customer.y]);
  state.labelBoxes = placeLabels(w, h);
  ctx.font = FONT; ctx.textBaseline = "top";
  for (const b of state.labelBoxes) {
    ctx.fillStyle = "rgba(255,255,255,.8)"; ctx.fillRect(b.x, b.y, b.w, b.h);
    ctx.fillStyle = b.key === state.selected ? MARK.selected : "#222";
    ctx.fillText(b.text, b.x + 2, b.y + 1);
  }
  const boxes = [];
  if (state.box) { const [a, b] = [toScreen(state.box[0], state.box[3]), toScreen(state.box[2], state.box[1])]; boxes.push([a[0], a[1], b[0], b[1]]); }
  if (state.boxDraft) boxes.push(state.boxDraft);
  for (const [x0, y0, x1, y1] of boxes) {
    ctx.strokeStyle = "#24323f"; ctx.lineWidth = 1.5; ctx.setLineDash([5, 3]);
    ctx.strokeRect(Math.min(x0, x1), Math.min(y0, y1), Math.abs(x1 - x0), Math.abs(y1 - y0)); ctx.setLineDash([]);
  }
}
function star(x, y, r) {
  for (let k = 0; k < 10; k++) {
    const a = -Math.PI / 2 + (k * Math.PI) / 5, q = k % 2 ? r * 0.45 : r;
    if (k) ctx.lineTo(x + q * Math.cos(a), y + q * Math.sin(a)); else ctx.moveTo(x + q * Math.cos(a), y + q * Math.sin(a));
  }
  ctx.closePath();
}

// ---- pointing: hover, click / tap, pan, pinch, box selection ---------------------------------------------

// The shown point nearest to (px, py) in canvas pixels, within 8 px; -1 if none. Asks the grid's cells
// around the pointer only (state.lastScan: how many points it looked at).
function nearestAt(px, py) {
  const mp = state.map, v = state.view;
  if (!mp || !v || !mp.grid) return -1;
  const G = mp.grid, wx = v.cx + (px - canvas.clientWidth / 2) / v.scale, wy = v.cy - (py - canvas.clientHeight / 2) / v.scale;
  const rd = 8 / v.scale, last = G.cells - 1;
  const i0 = Math.max(0, Math.floor((wx - rd - G.minx) / G.cw)), i1 = Math.min(last, Math.floor((wx + rd - G.minx) / G.cw));
  const j0 = Math.max(0, Math.floor((wy - rd - G.miny) / G.ch)), j1 = Math.min(last, Math.floor((wy + rd - G.miny) / G.ch));
  let best = -1, bestD = rd * rd, scanned = 0;
  for (let j = j0; j <= j1; j++) {
    for (let c = j * G.cells + i0, end = j * G.cells + i1; c <= end; c++) {
      for (let t = G.start[c]; t < G.start[c + 1]; t++) {
        const i = G.items[t];
        scanned++;
        if (!mp.shown[i]) continue;
        const d = (mp.fx[i] - wx) ** 2 + (mp.fy[i] - wy) ** 2;
        if (d < bestD) { bestD = d; best = i; }
      }
    }
  }
  state.lastScan = scanned;
  return best;
}
function nearest(ev) {
  const rect = canvas.getBoundingClientRect();
  return nearestAt(ev.clientX - rect.left, ev.clientY - rect.top);
}

function hover(ev) {
  const tip = $("tip"), i = nearest(ev);
  if (i < 0) { tip.hidden = true; return; }
  const mp = state.map, key = mp.items[i], g = groupsOf(state.colour);
  tip.textContent = display(key) + (nameOf(key) ? ` (${key})` : "")
    + (g && g[i] != null && state.colour !== "type" ? ` · ${g[i]}` : "")
    + (mp.types ? ` · ${mp.types[i]}` : "") + (mp.placedSet.has(key) ? " · placed" : "");
  tip.hidden = false; // shown first, then measured: a hidden element has no width
  const rect = canvas.getBoundingClientRect(), px = ev.clientX - rect.left, py = ev.clientY - rect.top;
  const tw = tip.offsetWidth, th = tip.offsetHeight;
  let left = px + 12, top = py + 12;
  if (left + tw > rect.width) left = px - 12 - tw;
  if (top + th > rect.height) top = py - 12 - th;
  tip.style.left = Math.max(0, Math.min(left, rect.width - tw)) + "px";
  tip.style.top = Math.max(0, Math.min(top, rect.height - th)) + "px";
}

const pointers = new Map();
let drag = null, pinch = null;
const gap = (a, b) => Math.hypot(a.x - b.x, a.y - b.y);
canvas.addEventListener("pointerdown", (ev) => {
  if (!state.view || ev.button > 0) return;
  canvas.setPointerCapture(ev.pointerId);
  if (ev.isPrimary) { pointers.clear(); pinch = null; } // a new gesture: no pointer of an old one is still down
  pointers.set(ev.pointerId, { x: ev.clientX, y: ev.clientY });
  if (ev.pointerType !== "mouse") $("tip").hidden = true;
  if (pointers.size === 2) { const [a, b] = [...pointers.values()]; pinch = { d: gap(a, b) }; drag = null; return; }
  drag = { x: ev.clientX, y: ev.clientY, x0: ev.clientX, y0: ev.clientY, moved: false,
    box: ev.shiftKey || boxMode, touch: ev.pointerType !== "mouse" };
});
canvas.addEventListener("pointermove", (ev) => {
  if (pointers.has(ev.pointerId)) pointers.set(ev.pointerId, { x: ev.clientX, y: ev.clientY });
  const rect = canvas.getBoundingClientRect();
  if (pinch && pointers.size === 2) { // two fingers: zoom about their middle
    const [a, b] = [...pointers.values()], d = gap(a, b);
    zoomAt((a.x + b.x) / 2 - rect.left, (a.y + b.y) / 2 - rect.top, d / (pinch.d || d));
    pinch.d = d;
    return;
  }
  if (drag) {
    if (!drag.moved && Math.abs(ev.clientX - drag.x0) + Math.abs(ev.clientY - drag.y0) > (drag.touch ? 6 : 2)) drag.moved = true;
    if (!drag.moved) return;
    if (drag.box) {
      state.boxDraft = [drag.x0 - rect.left, drag.y0 - rect.top, ev.clientX - rect.left, ev.clientY - rect.top];
    } else {
      state.view.cx -= (ev.clientX - drag.x) / state.view.scale; state.view.cy += (ev.clientY - drag.y) / state.view.scale;
      drag.x = ev.clientX; drag.y = ev.clientY; canvas.style.cursor = "grabbing";
    }
    draw();
    return;
  }
  if (ev.pointerType === "mouse") hover(ev);
});
function endPointer(ev) {
  pointers.delete(ev.pointerId);
  if (pinch) { if (!pointers.size) { pinch = null; recordView(); } drag = null; return; }
  const d = drag;
  drag = null; canvas.style.cursor = "";
  if (!d) return;
  if (ev.type === "pointercancel") { state.boxDraft = null; draw(); return; }
  if (!d.moved) {
    const i = nearest(ev);
    if (i >= 0) select(state.map.items[i]);
    if (d.touch) $("tip").hidden = true; // a tap picks; no tooltip is left behind on a phone
  } else if (d.box) {
    const [x0, y0, x1, y1] = state.boxDraft, v = state.view, w = canvas.clientWidth, h = canvas.clientHeight;
    const wx = (px) => v.cx + (px - w / 2) / v.scale, wy = (py) => v.cy - (py - h / 2) / v.scale;
    state.box = [Math.min(wx(x0), wx(x1)), Math.min(wy(y0), wy(y1)), Math.max(wx(x0), wx(x1)), Math.max(wy(y0), wy(y1))];
    state.boxDraft = null;
    refilter(); record(); draw();
  } else recordView();
}
canvas.addEventListener("pointerup", endPointer);
canvas.addEventListener("pointercancel", endPointer);
canvas.addEventListener("lostpointercapture", (ev) => pointers.delete(ev.pointerId));
canvas.addEventListener("pointerleave", (ev) => { if (ev.pointerType === "mouse") $("tip").hidden = true; });

function zoomAt(px, py, factor) {
  const v = state.view;
  const wx = v.cx + (px - canvas.clientWidth / 2) / v.scale, wy = v.cy - (py - canvas.clientHeight / 2) / v.scale;
  v.scale *= factor;
  v.cx = wx - (px - canvas.clientWidth / 2) / v.scale; v.cy = wy + (py - canvas.clientHeight / 2) / v.scale;
  draw();
}
canvas.addEventListener("wheel", (ev) => {
  ev.preventDefault();
  if (!state.view) return;
  const rect = canvas.getBoundingClientRect();
  zoomAt(ev.clientX - rect.left, ev.clientY - rect.top, Math.exp(-ev.deltaY * 0.0015));
  recordView();
}, { passive: false });
// the map by keyboard: arrows pan, + / - zoom about the centre, 0 resets, Escape clears the box
canvas.addEventListener("keydown", (ev) => {
  if (!state.view) return;
  const step = 40 / state.view.scale, pan = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, step], ArrowDown: [0, -step] };
  if (pan[ev.key]) { state.view.cx += pan[ev.key][0]; state.view.cy += pan[ev.key][1]; draw(); }
  else if (ev.key === "+" || ev.key === "=") zoomAt(canvas.clientWidth / 2, canvas.clientHeight / 2, 1.25);
  else if (ev.key === "-") zoomAt(canvas.clientWidth / 2, canvas.clientHeight / 2, 0.8);
  else if (ev.key === "0") resetView();
  else if (ev.key === "Escape" && state.box) { clearBox(); return; }
  else return;
  ev.preventDefault();
  recordView();
});
window.addEventListener("resize", draw);

// ---- the map bar -----------------------------------------------------------------------------------------

function clearBox() { state.box = null; state.isolate = false; refilter(); record(); draw(); }
$("box-mode").onclick = () => {
  boxMode = !boxMode;
  $("box-mode").setAttribute("aria-pressed", String(boxMode));
  canvas.style.cursor = boxMode ? "crosshair" : "";
};
$("clear-selection").onclick = clearBox;
$("isolate").onclick = () => { state.isolate = !state.isolate; refilter(); record(); draw(); };
$("zoom-selection").onclick = () => {
  if (!state.box) return;
  const [x0, y0, x1, y1] = state.box;
  state.view = { scale: Infinity, cx: 0, cy: 0 };
  fitTo([[x0, y0], [x1, y1]]);
  draw(); recordView();
};
$("projection").onchange = async () => {
  const was = { box: state.box, isolate: state.isolate, sample: state.sample };
  state.box = null; state.isolate = false; // a box is drawn in one projection's coordinates
  if ($("projection").value !== "pca") state.sample = null; // t-SNE: the server's map size only
  try { await loadMap($("projection").value); record(); } catch (e) { Object.assign(state, was); refilter(); draw(); }
};
// How many points: the server's map, or another PCA map of the most frequent items (t-SNE: the server's only).
function sampleOptions(mp) {
  const total = mp.total, shown = mp.items.length - (mp.placed || []).length;
  // 20 000: the server's default bound on a map a page may ask for (--max-map is not a serve flag)
  const sizes = [...new Set([500, 1000, 3000, 10000, 20000, Math.min(total, 20000), shown].filter((n) => n <= total))]
    .sort((a, b) => a - b);
  $("sample").replaceChildren(...sizes.map((n) => new Option(n === total ? `all ${n.toLocaleString()}` : n.toLocaleString(), String(n))));
  $("sample").value = String(shown);
  $("sample").disabled = state.projection !== "pca";
  $("sample").title = state.projection !== "pca" ? "t-SNE is computed for the server's --map-sample only" : "";
}
$("sample").onchange = async () => {
  const was = state.sample;
  state.sample = Number($("sample").value);
  state.box = null; state.isolate = false;
  try { await loadMap(state.projection); record(); } catch (e) { state.sample = was; $("sample").value = String(was || state.map.items.length); }
};
$("colour").onchange = () => { state.colour = $("colour").value; state.hide = new Set(); recolour(); record(); draw(); };
$("label").onchange = () => { state.label = $("label").value; record(); draw(); };
