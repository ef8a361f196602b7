// likewise explorer: search by name or id, neighbours, a basket, analogies, customers and a pan/zoom map in
// two projections. The page's state lives in the URL (?model=&item=&basket=&view=&colour=), so a link
// opens the same view and Back / Forward step through it. No dependencies, no CDN.
"use strict";

const $ = (id) => document.getElementById(id);
const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
  "#bcbd22", "#17becf", "#393b79", "#ad494a", "#637939", "#843c39", "#7b4173", "#3182bd", "#e6550d",
  "#31a354", "#756bb1", "#636363", "#9c9ede", "#cedb9c", "#e7ba52", "#ce6dbd"];
const MARK = { selected: "#c0392b", neighbour: "#e67e22", basket: "#1e7d32" };
const PROJECTION_NAMES = { pca: "PCA", tsne: "t-SNE" };

// Everything the page shows of one model; a model switch replaces it whole (fresh()), and every answer
// that comes back checks it still belongs to the current generation before it touches the page.
const fresh = (model) => ({
  model, info: null, gen: 0, map: null, view: null, extra: new Map(), details: new Map(),
  selected: null, neighbours: [], basket: [], projection: "pca", colour: null, types: "",
  labelBoxes: [], marks: [], recommendations: [],
});
let state = fresh(null);
let models = null;
let generation = 0;

// ---- API ---------------------------------------------------------------------------------------------

async function api(path, body) {
  const headers = { "Accept": "application/json" };
  const token = sessionStorage.getItem("likewise-token");
  if (token) headers["Authorization"] = "Bearer " + token;
  const init = { headers };
  if (body !== undefined) {
    init.method = "POST";
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const r = await fetch(path, init);
  if (r.status === 401) {
    const t = window.prompt("This server needs an API token:");
    if (t) { sessionStorage.setItem("likewise-token", t); return api(path, body); }
  }
  const data = await r.json().catch(() => ({ error: r.statusText }));
  if (!r.ok) { const e = new Error(data.error || r.statusText); e.data = data; throw e; }
  return data;
}
const m = (path) => `/models/${encodeURIComponent(state.model)}${path}`;
const typeQuery = () => (state.types ? `&types=${encodeURIComponent(state.types)}` : "");
const typeBody = () => (state.types ? { types: [state.types] } : {});
// a request made for generation g: its answer is dropped if the model changed meanwhile
const current = (g) => g === state.gen;

function message(text, suggestions) {
  const p = $("message");
  p.textContent = text || "";
  for (const s of suggestions || []) {
    const a = document.createElement("a");
    a.href = "#"; a.textContent = display(s); a.className = "suggestion"; a.dataset.item = s;
    a.onclick = (ev) => { ev.preventDefault(); select(s); };
    p.appendChild(a);
  }
}

// ---- names and attributes ------------------------------------------------------------------------------

function remember(items, payload) {
  if (!payload || !payload.attributes) return;
  items.forEach((k, i) => {
    const row = {};
    for (const [c, v] of Object.entries(payload.attributes)) row[c] = v[i];
    state.details.set(k, row);
  });
}
function nameOf(key) {
  const col = state.info && state.info.attributes && state.info.attributes.name_column;
  const d = state.details.get(key);
  return col && d && d[col] ? d[col] : null;
}
const display = (key) => nameOf(key) || key;

// Names, attributes and map places for items not yet known (outside the map's sample): one /coords call.
async function ensureKnown(keys) {
  const mp = state.map, g = state.gen;
  if (!mp) return;
  const missing = [...new Set(keys)].filter((k) => k && !mp.index.has(k) && !state.extra.has(k));
  if (!missing.length) return;
  try {
    const c = await api(m("/coords"), { items: missing, projection: mp.projection });
    if (!current(g)) return;
    remember(c.items, c);
    c.items.forEach((k, i) => { if (!mp.index.has(k)) state.extra.set(k, [c.x[i], c.y[i]]); });
  } catch (e) { /* an unknown key: the caller reports it */ }
}

// ---- the URL: every view is a link; Back and Forward step through them --------------------------------

function urlOf(s) {
  const q = new URLSearchParams();
  if (s.model) q.set("model", s.model);
  if (s.selected) q.set("item", s.selected);
  for (const b of s.basket) q.append("basket", b);
  if (s.projection !== "pca") q.set("view", s.projection);
  if (s.colour && s.map && s.colour !== s.map.colour_column) q.set("colour", s.colour);
  return "?" + q.toString();
}
function record() {
  const url = urlOf(state);
  if (url !== location.search) history.pushState(null, "", url);
}
function fromUrl() {
  const q = new URLSearchParams(location.search);
  return { model: q.get("model"), item: q.get("item"), basket: q.getAll("basket"),
    view: q.get("view") || "pca", colour: q.get("colour") };
}
window.addEventListener("popstate", () => applyUrl());

async function applyUrl() {
  const want = fromUrl();
  const model = models.models.some((x) => x.name === want.model) ? want.model : models.default;
  if (model !== state.model) await openModel(model);
  const g = state.gen;
  const view = (state.info.projections || ["pca"]).includes(want.view) ? want.view : "pca";
  if (want.colour && $("colour").querySelector(`option[value="${CSS.escape(want.colour)}"]`)) {
    state.colour = want.colour; $("colour").value = want.colour; recolour();
  }
  if (view !== state.projection) await loadMap(view);
  if (!current(g)) return;
  state.basket = want.basket;
  renderBasket();
  if (want.item) await select(want.item, { push: false });
  else { clearSelection(); draw(); }
}

// ---- search with autocomplete (a combobox) ---------------------------------------------------------------

let searchTimer = null, active = -1;
const search = $("search"), suggestBox = $("suggest");
function closeSuggest() {
  suggestBox.replaceChildren(); suggestBox.hidden = true; active = -1;
  search.setAttribute("aria-expanded", "false"); search.removeAttribute("aria-activedescendant");
}
search.addEventListener("input", () => { clearTimeout(searchTimer); searchTimer = setTimeout(suggest, 120); });
search.addEventListener("blur", () => { clearTimeout(searchTimer); closeSuggest(); });
search.addEventListener("keydown", (ev) => {
  const items = [...suggestBox.children];
  if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
    ev.preventDefault();
    if (!items.length) return;
    active = (active + (ev.key === "ArrowDown" ? 1 : -1) + items.length) % items.length;
    items.forEach((li, i) => { li.classList.toggle("active", i === active); li.setAttribute("aria-selected", i === active); });
    search.setAttribute("aria-activedescendant", items[active].id);
  } else if (ev.key === "Enter") {
    ev.preventDefault();
    const pick = items[active >= 0 ? active : 0];
    select(pick ? pick.dataset.item : search.value.trim());
  } else if (ev.key === "Escape") {
    closeSuggest();
  }
});

async function suggest() {
  const prefix = search.value.trim(), g = state.gen;
  active = -1;
  if (!prefix) { closeSuggest(); return; }
  try {
    const data = await api(m(`/search?prefix=${encodeURIComponent(prefix)}&limit=10`));
    if (!current(g) || search.value.trim() !== prefix) return;
    suggestBox.replaceChildren(...data.items.map((it, i) => {
      if (it.name) state.details.set(it.item, { ...(state.details.get(it.item) || {}), [state.info.attributes.name_column]: it.name });
      const li = document.createElement("li");
      li.id = `option-${i}`; li.dataset.item = it.item;
      li.setAttribute("role", "option"); li.setAttribute("aria-selected", "false");
      const a = document.createElement("span"); a.textContent = it.name || it.item;
      const b = document.createElement("span"); b.className = it.name ? "key" : "count";
      b.textContent = it.name ? it.item : String(it.count);
      li.append(a, b);
      li.onmousedown = (ev) => { ev.preventDefault(); select(it.item); };
      return li;
    }));
    suggestBox.hidden = !data.items.length;
    search.setAttribute("aria-expanded", String(!!data.items.length));
  } catch (e) { message(e.message); }
}

// ---- neighbours ----------------------------------------------------------------------------------------

let selectSeq = 0;
function clearSelection() {
  state.selected = null; state.neighbours = [];
  $("neighbours").replaceChildren(); $("item-details").textContent = "";
  $("neighbours-title").textContent = "Neighbours";
}

async function select(item, { push = true } = {}) {
  if (!item) return;
  const g = state.gen, seq = ++selectSeq;
  clearTimeout(searchTimer); // a pending autocomplete must not reopen the list over the answer
  closeSuggest();
  message("");
  try {
    const data = await api(m(`/similar?item=${encodeURIComponent(item)}&k=10${typeQuery()}`));
    if (!current(g) || seq !== selectSeq) return;
    const keys = data.answers[0].results.map((n) => n.item);
    await ensureKnown([item, ...keys]);
    if (!current(g) || seq !== selectSeq) return;
    state.selected = item;
    state.neighbours = keys;
    search.value = display(item);
    $("neighbours-title").textContent = `Neighbours of ${display(item)}`;
    $("item-details").textContent = detailsText(item);
    $("neighbours").replaceChildren(...data.answers[0].results.map((n) => row(n, true)));
  } catch (e) { // an unknown item: say so, offer close keys, keep showing what was shown
    if (!current(g) || seq !== selectSeq) return;
    message(e.message, e.data && e.data.suggestions);
    return;
  }
  if (push) record();
  draw();
}

function detailsText(key) {
  const d = state.details.get(key);
  const parts = [nameOf(key) ? key : null];
  if (d) for (const [c, v] of Object.entries(d)) if (v != null && c !== state.info.attributes.name_column) parts.push(`${c}: ${v}`);
  return parts.filter(Boolean).join(" · ");
}

function row(n, addable, onPick) {
  const li = document.createElement("li");
  li.dataset.item = n.item;
  const wrap = document.createElement("div"); wrap.className = "row";
  const a = document.createElement("button");
  a.type = "button"; a.className = "item"; a.onclick = onPick || (() => select(n.item));
  a.textContent = display(n.item);
  if (nameOf(n.item)) { const k = document.createElement("span"); k.className = "key"; k.textContent = " " + n.item; a.append(k); }
  const s = document.createElement("span");
  s.className = "score"; s.textContent = n.score.toFixed(3);
  wrap.append(a, s);
  if (addable) {
    const b = document.createElement("button");
    b.type = "button"; b.className = "add"; b.textContent = "+";
    b.setAttribute("aria-label", `add ${display(n.item)} to the basket`); b.title = "add to the basket";
    b.onclick = () => addToBasket(n.item);
    wrap.append(b);
  }
  li.append(wrap);
  return li;
}

// ---- basket --------------------------------------------------------------------------------------------

function addToBasket(item) {
  if (!state.basket.includes(item)) state.basket.push(item);
  record();
  renderBasket();
}

const COMPLETION_EXPLAINED = {
  itemitem: "Score = the item-item model's weights (EASE, fitted in training) from the basket's items, summed: "
    + "higher = bought with them more often; compare scores within this list, they are not probabilities.",
  affinity: "Score = skip-gram's log-odds that the item goes with the basket (item vector · context vector "
    + "plus a popularity term, combined by the RULE rule); higher is likelier, only differences matter, "
    + "not a probability.",
  cosine: "Score = cosine similarity to the sum of the basket's unit vectors: items like the basket (1 at most).",
};

let basketSeq = 0;
async function renderBasket() {
  const g = state.gen, seq = ++basketSeq;
  await ensureKnown(state.basket);
  if (!current(g) || seq !== basketSeq) return;
  $("basket").replaceChildren(...state.basket.map((item) => {
    const li = document.createElement("li");
    li.dataset.item = item;
    li.append(display(item));
    const b = document.createElement("button");
    b.type = "button"; b.textContent = "×"; b.setAttribute("aria-label", `remove ${display(item)} from the basket`);
    b.title = "remove";
    b.onclick = () => { state.basket = state.basket.filter((x) => x !== item); record(); renderBasket(); };
    li.append(b);
    return li;
  }));
  const empty = !state.basket.length;
  $("recommendations-title").hidden = empty; $("recommendations-explain").hidden = empty;
  if (empty) { $("recommendations").replaceChildren(); state.recommendations = []; draw(); return; }
  const how = state.info.completion || "cosine";
  $("recommendations-explain").textContent = (COMPLETION_EXPLAINED[how] || "").replace("RULE", state.info.basket_rule || "mixture");
  try {
    const data = await api(m("/recommend"), { items: state.basket, k: 10, ...typeBody() });
    if (!current(g) || seq !== basketSeq) return;
    await ensureKnown(data.answers[0].results.map((n) => n.item));
    if (!current(g) || seq !== basketSeq) return;
    state.recommendations = data.answers[0].results.map((n) => n.item);
    $("recommendations").replaceChildren(...data.answers[0].results.map((n) => row(n, true)));
  } catch (e) { if (current(g)) message(e.message, e.data && e.data.suggestions); }
  draw();
}

// ---- analogies and customers ---------------------------------------------------------------------------

// A name typed in a form field is looked up (the first search hit) unless it is a key or #id already.
async function resolve(text) {
  const t = text.trim();
  if (!t || t.startsWith("#")) return t;
  const data = await api(m(`/search?prefix=${encodeURIComponent(t)}&limit=1`));
  const hit = data.items[0];
  return hit && (hit.item === t || (hit.name && hit.name.toLowerCase() === t.toLowerCase())) ? hit.item : t;
}

$("analogy-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const g = state.gen;
  try {
    const [a, b, c] = await Promise.all(["a", "b", "c"].map((x) => resolve($(`analogy-${x}`).value)));
    const data = await api(m("/analogy"), { a, b, c, k: 5 });
    await ensureKnown(data.answers[0].results.map((n) => n.item));
    if (!current(g)) return;
    $("analogy-results").replaceChildren(...data.answers[0].results.map((n) => row(n, true)));
    message("");
  } catch (e) { if (current(g)) { $("analogy-results").replaceChildren(); message(e.message, e.data && e.data.suggestions); } }
});

function customerRow(n) {
  const li = document.createElement("li");
  li.dataset.item = n.item;
  const wrap = document.createElement("div"); wrap.className = "row";
  const a = document.createElement("span"); a.className = "customer"; a.textContent = n.item; a.style.flex = "1";
  const s = document.createElement("span"); s.className = "score"; s.textContent = n.score.toFixed(3);
  wrap.append(a, s); li.append(wrap);
  return li;
}
$("similar-customers-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const g = state.gen;
  try {
    const data = await api(m("/similar_customers"), { customer: $("customer").value.trim(), k: 10 });
    if (!current(g)) return;
    $("similar-customers").replaceChildren(...data.answers[0].results.map(customerRow));
    message("");
  } catch (e) { if (current(g)) { $("similar-customers").replaceChildren(); message(e.message, e.data && e.data.suggestions); } }
});
$("lookalike-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const g = state.gen;
  const seeds = $("seeds").value.split(/[\s,]+/).filter(Boolean);
  try {
    const data = await api(m("/lookalike"), { seeds, k: 10, method: "centroid" });
    if (!current(g)) return;
    $("lookalike").replaceChildren(...data.answers[0].results.map(customerRow));
    message("");
  } catch (e) { if (current(g)) { $("lookalike").replaceChildren(); message(e.message, e.data && e.data.suggestions); } }
});

// ---- map -----------------------------------------------------------------------------------------------

const canvas = $("map");
const ctx = canvas.getContext("2d");

async function loadMap(projection) {
  const g = state.gen;
  $("projection").value = projection;
  let mp = await api(m(`/map?projection=${projection}`));
  while (mp.status === "computing") { // a second projection computing on the server: show its progress, ask again
    if (!current(g) || $("projection").value !== projection) return;
    const bar = $("map-progress");
    bar.hidden = false; bar.max = mp.total; bar.value = mp.done;
    $("map-info").textContent = `computing ${PROJECTION_NAMES[projection]} of ${mp.items.toLocaleString()} items: `
      + `${mp.done} of ${mp.total} iterations (${mp.seconds} s)`;
    await new Promise((r) => setTimeout(r, 250));
    mp = await api(m(`/map?projection=${projection}`));
  }
  if (!current(g) || $("projection").value !== projection) return;
  $("map-progress").hidden = true;
  state.projection = projection;
  state.map = mp;
  state.extra = new Map(); // off-map places belong to one projection
  mp.index = new Map(mp.items.map((k, i) => [k, i]));
  mp.placedSet = new Set(mp.placed || []);
  remember(mp.items, mp);
  const cols = mp.colourable || [];
  const options = cols.map((c) => new Option(c, c));
  if (mp.types) options.push(new Option("type", "type"));
  $("colour").replaceChildren(...(options.length ? options : [new Option("nothing", "")]));
  $("colour").disabled = !options.length;
  if (!state.colour || ![...$("colour").options].some((o) => o.value === state.colour)) {
    state.colour = mp.colour_column || (mp.types ? "type" : "");
  }
  $("colour").value = state.colour;
  recolour();
  $("map-info").textContent = `${PROJECTION_NAMES[projection]}: ${mp.items.length.toLocaleString()} of `
    + `${mp.total.toLocaleString()} items` + (mp.sampled ? " (most frequent)" : "")
    + (projection === "tsne" ? ` · computed in ${mp.seconds} s; items outside it sit near their neighbours` : "");
  await ensureKnown([state.selected, ...state.neighbours, ...state.basket, ...state.recommendations].filter(Boolean));
  resetView();
}

function groupsOf(col) {
  const mp = state.map;
  if (!col) return null;
  if (col === "type") return mp.types;
  return (mp.groups && mp.groups[col]) || (mp.attributes && mp.attributes[col]) || null;
}

function recolour() {
  const mp = state.map;
  if (!mp) return;
  const groups = groupsOf(state.colour);
  const values = groups ? [...new Set(groups.filter((l) => l != null))].sort(
    (a, b) => String(a).localeCompare(String(b), undefined, { numeric: true })) : [];
  const colourOf = new Map(values.map((v, i) => [v, PALETTE[i % PALETTE.length]]));
  mp.colour = groups ? groups.map((l) => (l == null ? "#999" : colourOf.get(l))) : null;
  const legend = values.slice(0, PALETTE.length).map((v) => legendItem(colourOf.get(v), v));
  if (values.length > PALETTE.length) legend.push(legendItem("#999", `… ${values.length - PALETTE.length} more`));
  if (mp.placedSet.size) legend.push(legendItem(null, "placed, not trained", "placed"));
  legend.push(legendItem(MARK.selected, "selected", "ring"), legendItem(MARK.neighbour, "neighbours", "ring"),
    legendItem(MARK.basket, "basket", "square"));
  $("legend").replaceChildren(...legend);
  draw();
}
function legendItem(colour, text, shape) {
  const li = document.createElement("li");
  const s = document.createElement("span");
  s.className = "swatch" + (shape ? " " + shape : "");
  if (colour) { if (shape) s.style.borderColor = colour; else s.style.background = colour; }
  li.append(s, String(text));
  return li;
}

function position(key) {
  const mp = state.map, i = mp.index.get(key);
  if (i !== undefined) return [mp.x[i], mp.y[i]];
  return state.extra.get(key);
}

function resetView() {
  const mp = state.map;
  if (!mp) return;
  const xs = mp.x, ys = mp.y;
  const minx = Math.min(...xs), maxx = Math.max(...xs), miny = Math.min(...ys), maxy = Math.max(...ys);
  const w = canvas.clientWidth, h = canvas.clientHeight;
  const scale = 0.85 * Math.min(w / (maxx - minx || 1), h / (maxy - miny || 1));
  state.view = { scale, cx: (minx + maxx) / 2, cy: (miny + maxy) / 2 };
  draw();
}
$("reset").onclick = resetView;

const toScreen = (x, y) => {
  const v = state.view;
  return [canvas.clientWidth / 2 + (x - v.cx) * v.scale, canvas.clientHeight / 2 - (y - v.cy) * v.scale];
};

// Labels that never overlap: candidates in priority order (the selected item, its neighbours, the basket,
// the recommendations, then the map's items most frequent first), each tried right, left, above and
// below its point, kept only where its box is free. A small map (the demo's 15) is labelled whole.
const FONT = "12px system-ui, sans-serif";
function placeLabels(w, h) {
  const mp = state.map, boxes = [];
  const wanted = [state.selected, ...state.neighbours, ...state.basket, ...state.recommendations];
  const limit = mp.items.length <= 60 ? mp.items.length : 120;
  for (let i = 0; i < mp.items.length && wanted.length < limit + 30; i++) wanted.push(mp.items[i]);
  ctx.font = FONT;
  const seen = new Set();
  for (const key of wanted) {
    if (!key || seen.has(key)) continue;
    seen.add(key);
    const xy = position(key);
    if (!xy) continue;
    const [sx, sy] = toScreen(xy[0], xy[1]);
    if (sx < 0 || sy < 0 || sx > w || sy > h) continue;
    const text = display(key), tw = ctx.measureText(text).width + 4, th = 14;
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

function draw() {
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth, h = canvas.clientHeight;
  if (canvas.width !== w * dpr || canvas.height !== h * dpr) { canvas.width = w * dpr; canvas.height = h * dpr; }
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);
  const mp = state.map;
  if (!mp || !state.view) return;
  const r = mp.items.length > 5000 ? 1.5 : 3;
  const busy = state.selected || state.basket.length;
  for (let i = 0; i < mp.items.length; i++) {
    const [sx, sy] = toScreen(mp.x[i], mp.y[i]);
    if (sx < -5 || sy < -5 || sx > w + 5 || sy > h + 5) continue;
    ctx.fillStyle = mp.colour ? mp.colour[i] : "#1f77b4";
    ctx.globalAlpha = busy ? 0.45 : 0.85;
    if (mp.placedSet.has(mp.items[i])) { // placed from attributes, not trained: an outlined diamond
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
  const mark = (key, colour, shape) => {
    const xy = position(key);
    if (xy === undefined) return;
    const [sx, sy] = toScreen(xy[0], xy[1]);
    state.marks.push({ key, shape, x: sx, y: sy });
    if (!mp.index.has(key)) { ctx.fillStyle = "#222"; ctx.beginPath(); ctx.arc(sx, sy, r, 0, 2 * Math.PI); ctx.fill(); }
    ctx.strokeStyle = colour; ctx.lineWidth = shape === "selected" ? 3 : 2;
    ctx.beginPath();
    if (shape === "square") ctx.rect(sx - r - 4, sy - r - 4, 2 * r + 8, 2 * r + 8);
    else ctx.arc(sx, sy, r + (shape === "selected" ? 5 : 4), 0, 2 * Math.PI);
    ctx.stroke();
  };
  state.neighbours.forEach((k) => mark(k, MARK.neighbour, "neighbour"));
  state.basket.forEach((k) => mark(k, MARK.basket, "square"));
  if (state.selected) mark(state.selected, MARK.selected, "selected");
  state.labelBoxes = placeLabels(w, h);
  ctx.font = FONT; ctx.textBaseline = "top";
  for (const b of state.labelBoxes) {
    ctx.fillStyle = "rgba(255,255,255,.8)"; ctx.fillRect(b.x, b.y, b.w, b.h);
    ctx.fillStyle = b.key === state.selected ? MARK.selected : "#222";
    ctx.fillText(b.text, b.x + 2, b.y + 1);
  }
}

function nearest(ev) {
  const mp = state.map;
  if (!mp || !state.view) return -1;
  const rect = canvas.getBoundingClientRect();
  const px = ev.clientX - rect.left, py = ev.clientY - rect.top;
  let best = -1, bestD = 64; // within 8 px
  for (let i = 0; i < mp.items.length; i++) {
    const [sx, sy] = toScreen(mp.x[i], mp.y[i]);
    const d = (sx - px) ** 2 + (sy - py) ** 2;
    if (d < bestD) { bestD = d; best = i; }
  }
  return best;
}

let drag = null;
canvas.addEventListener("mousedown", (ev) => { drag = { x: ev.clientX, y: ev.clientY, moved: false }; });
window.addEventListener("mouseup", (ev) => {
  if (drag && !drag.moved) {
    const i = nearest(ev);
    if (i >= 0) select(state.map.items[i]);
  }
  drag = null; canvas.style.cursor = "grab";
});
canvas.addEventListener("mousemove", (ev) => {
  if (drag) {
    const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 2) drag.moved = true;
    if (drag.moved) {
      state.view.cx -= dx / state.view.scale; state.view.cy += dy / state.view.scale;
      drag.x = ev.clientX; drag.y = ev.clientY; canvas.style.cursor = "grabbing"; draw();
    }
    return;
  }
  const i = nearest(ev), tip = $("tip");
  if (i < 0) { tip.hidden = true; return; }
  const mp = state.map, key = mp.items[i], g = groupsOf(state.colour);
  tip.textContent = display(key) + (nameOf(key) ? ` (${key})` : "")
    + (g && g[i] != null && state.colour !== "type" ? ` · ${g[i]}` : "")
    + (mp.types ? ` · ${mp.types[i]}` : "") + (mp.placedSet.has(key) ? " · placed" : "");
  const rect = canvas.getBoundingClientRect();
  tip.style.left = Math.min(ev.clientX - rect.left + 12, Math.max(0, rect.width - tip.offsetWidth - 4)) + "px";
  tip.style.top = ev.clientY - rect.top + 12 + "px";
  tip.hidden = false;
});
canvas.addEventListener("mouseleave", () => { $("tip").hidden = true; });
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
}, { passive: false });
// the map by keyboard: arrows pan, + / - zoom about the centre, 0 resets
canvas.addEventListener("keydown", (ev) => {
  if (!state.view) return;
  const step = 40 / state.view.scale, pan = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, step], ArrowDown: [0, -step] };
  if (pan[ev.key]) { state.view.cx += pan[ev.key][0]; state.view.cy += pan[ev.key][1]; draw(); }
  else if (ev.key === "+" || ev.key === "=") zoomAt(canvas.clientWidth / 2, canvas.clientHeight / 2, 1.25);
  else if (ev.key === "-") zoomAt(canvas.clientWidth / 2, canvas.clientHeight / 2, 0.8);
  else if (ev.key === "0") resetView();
  else return;
  ev.preventDefault();
});
window.addEventListener("resize", draw);

$("projection").onchange = async () => {
  try { await loadMap($("projection").value); record(); } catch (e) { message(e.message); }
};
$("colour").onchange = () => { state.colour = $("colour").value; recolour(); record(); };

// ---- models --------------------------------------------------------------------------------------------

// Everything of the old model goes: title, neighbours, basket, answers, messages, map; then the new one loads.
async function openModel(name) {
  state = fresh(name);
  state.gen = ++generation;
  const g = state.gen;
  $("model").value = name;
  delete document.body.dataset.ready;
  message("");
  clearSelection();
  search.value = "";
  closeSuggest();
  for (const id of ["basket", "recommendations", "analogy-results", "similar-customers", "lookalike", "legend"]) $(id).replaceChildren();
  $("recommendations-title").hidden = true; $("recommendations-explain").hidden = true;
  $("map-info").textContent = ""; $("map-progress").hidden = true;
  draw();
  const info = models.models.find((x) => x.name === name);
  state.info = info;
  $("model-info").textContent = `${info.items.toLocaleString()} items · ${info.dim} dims · `
    + (info.index ? `ANN index (recall@10 ${info.index.recall_at_10 ?? "?"})` : "exact search")
    + (info.placed ? ` · ${info.placed} placed` : "")
    + (info.attributes ? ` · ${info.attributes.matched.toLocaleString()} with attributes` : "");
  const types = info.types ? Object.keys(info.types.counts) : [];
  $("type-box").hidden = !types.length;
  $("type-filter").replaceChildren(new Option("every type", ""), ...types.map((t) => new Option(
    `${t} (${info.types.counts[t].toLocaleString()})`, t)));
  $("type-filter").value = "";
  $("projection").replaceChildren(...(info.projections || ["pca"]).map((p) => new Option(PROJECTION_NAMES[p] || p, p)));
  $("customers-panel").hidden = !info.customers;
  $("customer").placeholder = (info.customer_examples || [])[0] || "";
  $("seeds").placeholder = (info.customer_examples || []).join(" ");
  await loadMap("pca");
  if (current(g)) document.body.dataset.ready = "1";
}

async function start() {
  try {
    models = await api("/models");
    const sel = $("model");
    sel.replaceChildren(...models.models.map((x) => new Option(x.name, x.name)));
    sel.onchange = async () => {
      try { await openModel(sel.value); record(); } catch (e) { message(e.message); }
    };
    $("type-filter").onchange = () => {
      state.types = $("type-filter").value;
      if (state.selected) select(state.selected, { push: false });
      renderBasket();
    };
    await applyUrl();
    history.replaceState(null, "", urlOf(state));
  } catch (e) { message(e.message); }
}

start();
