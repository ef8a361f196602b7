// likewise explorer: search, neighbours, a pan/zoom map and a basket builder. No dependencies, no CDN.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { model: null, map: null, selected: null, neighbours: [], basket: [], view: null, extra: new Map(),
  types: "" }; // types: the type filter of a typed space ("" = every type but hidden ones)
const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
  "#bcbd22", "#17becf", "#393b79", "#ad494a", "#637939", "#843c39", "#7b4173", "#3182bd"];

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

function message(text, suggestions) {
  const p = $("message");
  p.textContent = text || "";
  for (const s of suggestions || []) {
    const a = document.createElement("a");
    a.href = "#"; a.textContent = " " + s; a.className = "suggestion";
    a.onclick = (ev) => { ev.preventDefault(); select(s); };
    p.appendChild(a);
  }
}

// ---- search with autocomplete --------------------------------------------------------------------------

let searchTimer = null, active = -1;
$("search").addEventListener("input", () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(suggest, 120);
});
$("search").addEventListener("blur", () => { clearTimeout(searchTimer); $("suggest").replaceChildren(); });
$("search").addEventListener("keydown", (ev) => {
  const items = [...$("suggest").children];
  if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
    ev.preventDefault();
    active = (active + (ev.key === "ArrowDown" ? 1 : -1) + items.length) % Math.max(items.length, 1);
    items.forEach((li, i) => li.classList.toggle("active", i === active));
  } else if (ev.key === "Enter") {
    ev.preventDefault();
    const pick = items[active >= 0 ? active : 0];
    select(pick ? pick.dataset.item : $("search").value.trim());
  } else if (ev.key === "Escape") {
    $("suggest").replaceChildren();
  }
});

async function suggest() {
  const prefix = $("search").value.trim();
  active = -1;
  if (!prefix) { $("suggest").replaceChildren(); return; }
  try {
    const data = await api(m(`/search?prefix=${encodeURIComponent(prefix)}&limit=10`));
    $("suggest").replaceChildren(...data.items.map((it) => {
      const li = document.createElement("li");
      li.dataset.item = it.item;
      li.setAttribute("role", "option");
      li.innerHTML = `<span></span><span class="count">${it.count}</span>`;
      li.firstChild.textContent = it.item;
      li.onmousedown = (ev) => { ev.preventDefault(); select(it.item); };
      return li;
    }));
  } catch (e) { message(e.message); }
}

// ---- neighbours ----------------------------------------------------------------------------------------

async function select(item) {
  if (!item) return;
  clearTimeout(searchTimer); // a pending autocomplete must not reopen the list over the answer
  $("suggest").replaceChildren();
  $("search").value = item;
  message("");
  try {
    const data = await api(m(`/similar?item=${encodeURIComponent(item)}&k=10${typeQuery()}`));
    state.selected = item;
    state.neighbours = data.neighbours.map((n) => n.item);
    $("neighbours-title").textContent = `Neighbours of ${item}`;
    $("neighbours").replaceChildren(...data.neighbours.map((n) => row(n, true)));
    await placeOffMap([item, ...state.neighbours]);
  } catch (e) {
    message(e.message, e.data && e.data.suggestions);
    $("neighbours").replaceChildren();
    state.selected = null; state.neighbours = [];
  }
  draw();
}

// Items outside the map's sample (big catalogues) are placed on the same axes by the server.
async function placeOffMap(keys) {
  const mp = state.map;
  if (!mp) return;
  const missing = keys.filter((k) => !mp.index.has(k) && !state.extra.has(k));
  if (!missing.length) return;
  const c = await api(m("/coords"), { items: missing });
  c.items.forEach((k, i) => state.extra.set(k, [c.x[i], c.y[i]]));
}

function position(key) {
  const mp = state.map, i = mp.index.get(key);
  if (i !== undefined) return [mp.x[i], mp.y[i]];
  return state.extra.get(key);
}

function row(n, addable) {
  const li = document.createElement("li");
  li.dataset.item = n.item;
  const a = document.createElement("span");
  a.className = "item"; a.textContent = n.item; a.onclick = () => select(n.item);
  const s = document.createElement("span");
  s.className = "score"; s.textContent = n.score.toFixed(3);
  li.append(a);
  if (addable) {
    const b = document.createElement("button");
    b.type = "button"; b.textContent = "+"; b.title = "add to basket"; b.onclick = () => addToBasket(n.item);
    li.append(b);
  }
  li.append(s);
  return li;
}

// ---- basket --------------------------------------------------------------------------------------------

function addToBasket(item) {
  if (!state.basket.includes(item)) state.basket.push(item);
  renderBasket();
}

async function renderBasket() {
  $("basket").replaceChildren(...state.basket.map((item) => {
    const li = document.createElement("li");
    li.dataset.item = item;
    li.textContent = item;
    const b = document.createElement("button");
    b.type = "button"; b.textContent = "×"; b.title = "remove";
    b.onclick = () => { state.basket = state.basket.filter((x) => x !== item); renderBasket(); };
    li.append(b);
    return li;
  }));
  if (!state.basket.length) { $("recommendations").replaceChildren(); return; }
  try {
    const data = await api(m("/recommend"), { items: state.basket, k: 10, ...typeBody() });
    $("recommendations").replaceChildren(...data.neighbours.map((n) => row(n, true)));
  } catch (e) { message(e.message); }
}

// ---- map -----------------------------------------------------------------------------------------------

const canvas = $("map");
const ctx = canvas.getContext("2d");

async function loadMap() {
  state.map = await api(m("/map"));
  const mp = state.map;
  // colour by the labels file when there is one, else by type in a typed space
  mp.groups = mp.labels || mp.types;
  const labels = mp.groups ? [...new Set(mp.groups.filter((l) => l != null))].sort() : [];
  mp.colour = mp.groups ? mp.groups.map((l) => (l == null ? "#999" : PALETTE[labels.indexOf(l) % PALETTE.length])) : null;
  mp.index = new Map(mp.items.map((k, i) => [k, i]));
  mp.placedSet = new Set(mp.placed || []);
  $("legend").innerHTML = labels.slice(0, 16).map((l, i) => `<span style="background:${PALETTE[i % PALETTE.length]}"></span>`
    + l.replace(/[&<>]/g, "")).join("") + (mp.placedSet.size ? '<span class="placed"></span>placed' : "");
  $("map-info").textContent = `${mp.items.length.toLocaleString()} of ${mp.total.toLocaleString()} items`
    + (mp.sampled ? " (most frequent)" : "") + " · drag to pan, wheel to zoom, click a point";
  resetView();
}

function resetView() {
  const mp = state.map;
  if (!mp) return;
  const xs = mp.x, ys = mp.y;
  const minx = Math.min(...xs), maxx = Math.max(...xs), miny = Math.min(...ys), maxy = Math.max(...ys);
  const w = canvas.clientWidth, h = canvas.clientHeight;
  const scale = 0.9 * Math.min(w / (maxx - minx || 1), h / (maxy - miny || 1));
  state.view = { scale, cx: (minx + maxx) / 2, cy: (miny + maxy) / 2 };
  draw();
}
$("reset").onclick = resetView;

const toScreen = (x, y) => {
  const v = state.view;
  return [canvas.clientWidth / 2 + (x - v.cx) * v.scale, canvas.clientHeight / 2 - (y - v.cy) * v.scale];
};

function draw() {
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth, h = canvas.clientHeight;
  if (canvas.width !== w * dpr || canvas.height !== h * dpr) { canvas.width = w * dpr; canvas.height = h * dpr; }
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);
  const mp = state.map;
  if (!mp || !state.view) return;
  const r = mp.items.length > 5000 ? 1.5 : 3;
  for (let i = 0; i < mp.items.length; i++) {
    const [sx, sy] = toScreen(mp.x[i], mp.y[i]);
    if (sx < -5 || sy < -5 || sx > w + 5 || sy > h + 5) continue;
    ctx.fillStyle = mp.colour ? mp.colour[i] : "#1f77b4";
    ctx.globalAlpha = state.selected ? 0.35 : 0.8;
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
  const mark = (key, colour, label) => {
    const xy = position(key);
    if (xy === undefined) return;
    const [sx, sy] = toScreen(xy[0], xy[1]);
    if (!mp.index.has(key)) { ctx.fillStyle = "#222"; ctx.beginPath(); ctx.arc(sx, sy, r, 0, 2 * Math.PI); ctx.fill(); }
    ctx.strokeStyle = colour; ctx.lineWidth = 2;
    ctx.beginPath(); ctx.arc(sx, sy, r + 4, 0, 2 * Math.PI); ctx.stroke();
    if (label) { ctx.fillStyle = "#222"; ctx.font = "12px system-ui"; ctx.fillText(key, sx + r + 6, sy + 4); }
  };
  state.neighbours.forEach((k, i) => mark(k, "#e67e22", i < 3)); // name the closest three: clusters are tight
  if (state.selected) mark(state.selected, "#c0392b", true);
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
  const mp = state.map;
  tip.textContent = mp.items[i] + (mp.labels && mp.labels[i] != null ? ` · ${mp.labels[i]}` : "")
    + (mp.types ? ` · ${mp.types[i]}` : "") + (mp.placedSet.has(mp.items[i]) ? " · placed" : "");
  const rect = canvas.getBoundingClientRect();
  tip.style.left = ev.clientX - rect.left + 12 + "px"; tip.style.top = ev.clientY - rect.top + 12 + "px";
  tip.hidden = false;
});
canvas.addEventListener("mouseleave", () => { $("tip").hidden = true; });
canvas.addEventListener("wheel", (ev) => {
  ev.preventDefault();
  if (!state.view) return;
  const rect = canvas.getBoundingClientRect();
  const px = ev.clientX - rect.left, py = ev.clientY - rect.top, v = state.view;
  const wx = v.cx + (px - canvas.clientWidth / 2) / v.scale, wy = v.cy - (py - canvas.clientHeight / 2) / v.scale;
  v.scale *= Math.exp(-ev.deltaY * 0.0015);
  v.cx = wx - (px - canvas.clientWidth / 2) / v.scale; v.cy = wy + (py - canvas.clientHeight / 2) / v.scale;
  draw();
}, { passive: false });
window.addEventListener("resize", draw);

// ---- start ---------------------------------------------------------------------------------------------

async function start() {
  try {
    const data = await api("/models");
    const sel = $("model");
    sel.replaceChildren(...data.models.map((x) => new Option(x.name, x.name)));
    const wanted = new URLSearchParams(location.search).get("model");
    state.model = data.models.some((x) => x.name === wanted) ? wanted : data.default;
    sel.value = state.model;
    sel.onchange = () => { state.model = sel.value; state.basket = []; state.types = ""; renderBasket(); showModel(data); };
    $("type-filter").onchange = () => {
      state.types = $("type-filter").value;
      if (state.selected) select(state.selected);
      renderBasket();
    };
    await showModel(data);
  } catch (e) { message(e.message); }
}

async function showModel(data) {
  const info = data.models.find((x) => x.name === state.model);
  $("model-info").textContent = `${info.items.toLocaleString()} items · ${info.dim} dims · `
    + (info.index ? `ANN index (recall@10 ${info.index.recall_at_10 ?? "?"})` : "exact search")
    + (info.placed ? ` · ${info.placed} placed` : "");
  // a typed space: a filter over its types (hidden ones, such as attribute tokens, only when chosen)
  const types = info.types ? Object.keys(info.types.counts) : [];
  $("type-box").hidden = !types.length;
  $("type-filter").replaceChildren(new Option("every type", ""), ...types.map((t) => new Option(
    `${t} (${info.types.counts[t].toLocaleString()})`, t)));
  $("type-filter").value = state.types;
  state.selected = null; state.neighbours = []; state.extra = new Map();
  await loadMap();
  document.body.dataset.ready = "1";
}

start();
