// likewise explorer: search by name, id, attribute value or a mistyped word, neighbours, what is bought with
// an item, a basket, analogies, customers and a map to work in (map.js). The page's state lives in the URL
// (?model=&item=&basket=&view=&colour=&label=&hide=&at=&box=&iso=&type=&customer=), so a link opens the
// same view and Back / Forward step through it. Every error is said in words beside what the user did.
// No dependencies, no CDN. Three classic scripts share these globals: app.js, panels.js, map.js.
"use strict";

const $ = (id) => document.getElementById(id);
const PROJECTION_NAMES = { pca: "PCA", tsne: "t-SNE", umap: "UMAP" };

// Everything the page shows of one model; a model switch replaces it whole (fresh()), and every answer
// that comes back checks it still belongs to the current generation before it touches the page.
const fresh = (model) => ({
  model, info: null, gen: 0, map: null, view: null, extra: new Map(), details: new Map(),
  selected: null, neighbours: [], basket: [], projection: "pca", colour: null, label: "", types: "",
  hide: new Set(), box: null, isolate: false, highlight: [], customer: null, k: 10, sample: null,
  labelBoxes: [], marks: [], recommendations: [],
});
let state = fresh(null);
let models = null;
let generation = 0;

// ---- API, and the connection: a server that stops answering is said so, and asked again until it does ----

let offlineTimer = null;
function offline() {
  const p = $("connection");
  p.hidden = false;
  p.textContent = `The server at ${location.host} is not answering (is likewise serve still running?). `
    + "Retrying every 2 s…";
  if (offlineTimer) return;
  offlineTimer = setInterval(async () => {
    try {
      const r = await fetch("/health", { headers: { Accept: "application/json" } });
      if (!r.ok) return;
    } catch (e) { return; }
    clearInterval(offlineTimer); offlineTimer = null;
    p.hidden = true; p.textContent = "";
    if (!document.body.dataset.ready) start(); // it never opened: open it now
  }, 2000);
}

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
  let r;
  try {
    r = await fetch(path, init);
  } catch (e) { // no answer at all (fetch's "Failed to fetch"): say it in words and keep trying
    offline();
    const err = new Error(`could not reach the server at ${location.host}: it did not answer; retrying`);
    err.offline = true;
    throw err;
  }
  if (r.status === 401) {
    const t = window.prompt("This server needs an API token:");
    if (t) { sessionStorage.setItem("likewise-token", t); return api(path, body); }
  }
  const data = await r.json().catch(() => ({ error: `the server answered ${r.status} ${r.statusText}` }));
  if (!r.ok) { const e = new Error(data.error || r.statusText); e.data = data; throw e; }
  return data;
}
const m = (path) => `/models/${encodeURIComponent(state.model)}${path}`;
const typeQuery = () => (state.types ? `&types=${encodeURIComponent(state.types)}` : "");
const typeBody = () => (state.types ? { types: [state.types] } : {});
const sampleBody = () => (state.sample ? { sample: state.sample } : {});
const sampleQuery = () => (state.sample ? `&sample=${state.sample}` : "");
// a request made for generation g: its answer is dropped if the model changed meanwhile
const current = (g) => g === state.gen;

// An error or a notice, written into the element beside what the user did, with close keys as links.
function say(el, text, suggestions, onPick) {
  el.textContent = text || "";
  for (const s of suggestions || []) {
    const a = document.createElement("a");
    a.href = "#"; a.textContent = display(s); a.className = "suggestion"; a.dataset.item = s;
    a.onclick = (ev) => { ev.preventDefault(); (onPick || select)(s); };
    el.appendChild(a);
  }
}
const message = (text, suggestions) => say($("message"), text, suggestions);
const sayError = (el, e, onPick) => say(el, e.message, e.data && e.data.suggestions, onPick);
function notice(text) { $("notice").hidden = !text; $("notice").textContent = text || ""; }

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

// Names, attributes and map places for items not yet known (outside the map's sample): /coords calls.
// Returns the keys the server does not know, each with its error (an unknown key fails the whole call,
// so it is taken out and the rest asked again).
async function ensureKnown(keys) {
  const mp = state.map, g = state.gen, unknown = [];
  if (!mp) return unknown;
  let missing = [...new Set(keys)].filter((k) => k && !mp.index.has(k) && !state.extra.has(k));
  while (missing.length) {
    try {
      const c = await api(m("/coords"), { items: missing, projection: mp.projection, ...sampleBody() });
      if (!current(g)) return unknown;
      remember(c.items, c);
      c.items.forEach((k, i) => { if (!mp.index.has(k)) state.extra.set(k, [c.x[i], c.y[i]]); });
      return unknown;
    } catch (e) {
      // the 404 names the key under its kind ("item", "product", ...)
      const named = e.data ? Object.entries(e.data).filter(([f]) => f !== "error").map(([, v]) => v) : [];
      const bad = missing.find((k) => named.includes(k));
      if (bad === undefined) return unknown; // not about a key: the caller says
      unknown.push({ key: bad, error: e });
      missing = missing.filter((k) => k !== bad);
    }
  }
  return unknown;
}

// ---- the URL: every view is a link; Back and Forward step through them --------------------------------

function urlOf(s) {
  const q = new URLSearchParams();
  if (s.model) q.set("model", s.model);
  if (s.selected) q.set("item", s.selected);
  for (const b of s.basket) q.append("basket", b);
  if (s.types) q.set("type", s.types);
  if (s.projection !== "pca") q.set("view", s.projection);
  if (s.sample) q.set("sample", String(s.sample));
  if (s.k !== 10) q.set("k", String(s.k));
  if (s.colour && s.map && s.colour !== defaultColour(s.map)) q.set("colour", s.colour);
  if (s.label) q.set("label", s.label);
  for (const h of s.hide) q.append("hide", h);
  const at = viewParam(s);
  if (at) q.set("at", at);
  if (s.box) q.set("box", s.box.map((v) => +v.toPrecision(5)).join(","));
  if (s.isolate && s.box) q.set("iso", "1");
  if (s.customer) q.set("customer", s.customer.key);
  return "?" + q.toString();
}
function record() {
  const url = urlOf(state);
  if (url !== location.search) history.pushState(null, "", url);
}
// pans and zooms replace the entry (a drag is one view, not a hundred)
let viewTimer = null;
function recordView() {
  clearTimeout(viewTimer);
  viewTimer = setTimeout(() => {
    const url = urlOf(state);
    if (url !== location.search) history.replaceState(null, "", url);
  }, 250);
}
function fromUrl() {
  const q = new URLSearchParams(location.search);
  const nums = (v) => (v ? v.split(",").map(Number) : null);
  return { model: q.get("model"), item: q.get("item"), basket: q.getAll("basket"), types: q.get("type") || "",
    view: q.get("view") || "pca", colour: q.get("colour"), label: q.get("label") || "", hide: q.getAll("hide"),
    at: nums(q.get("at")), box: nums(q.get("box")), iso: q.get("iso") === "1", customer: q.get("customer"),
    sample: q.get("sample") ? Number(q.get("sample")) : null, k: q.get("k") ? Number(q.get("k")) : 10 };
}
window.addEventListener("popstate", () => applyUrl().catch((e) => message(e.message)));

async function applyUrl() {
  const want = fromUrl(), said = [];
  const known = models.models.map((x) => x.name);
  let model = want.model || models.default;
  if (!known.includes(model)) {
    said.push(`There is no model ${JSON.stringify(want.model)} on this server (it serves ${known.join(", ")}); `
      + `showing ${models.default}.`);
    model = models.default;
  }
  if (model !== state.model) await openModel(model);
  const g = state.gen;
  if (!current(g)) return;
  const mapSaid = [];
  const offered = state.info.projections || ["pca"];
  let view = want.view;
  if (!offered.includes(view)) {
    mapSaid.push(view === "umap"
      ? "UMAP is not available here: it needs umap-learn (pip install '.[umap]' in the likewise clone); showing PCA."
      : `There is no projection ${JSON.stringify(view)} (this server offers ${offered.join(", ")}); showing PCA.`);
    view = "pca";
  }
  if (want.types !== state.types) {
    const types = state.info.types ? Object.keys(state.info.types.counts) : [];
    state.types = types.includes(want.types) ? want.types : "";
    if (want.types && !state.types) said.push(`There is no item type ${JSON.stringify(want.types)} in ${model}; showing every type.`);
    $("type-filter").value = state.types;
  }
  const ks = [...$("k").options].map((o) => Number(o.value));
  state.k = ks.includes(want.k) ? want.k : 10;
  if (want.k !== state.k) said.push(`Neighbours come in lists of ${ks.join(", ")}; showing ${state.k}.`);
  $("k").value = String(state.k);
  const sample = view === "pca" && Number.isInteger(want.sample) && want.sample >= 2 ? want.sample : null;
  if (want.sample && !sample) mapSaid.push(`A map of ${want.sample} points cannot be drawn here (PCA maps only, 2 points at least); showing the server's.`);
  if (view !== state.projection || sample !== state.sample) {
    state.sample = sample;
    try { await loadMap(view); } catch (e) { if (!sample) throw e; state.sample = null; await loadMap(view); mapSaid.push(e.message); }
  }
  if (!current(g)) return;
  const colours = [...$("colour").options].map((o) => o.value);
  let colour = want.colour || defaultColour(state.map);
  if (!colours.includes(colour)) {
    mapSaid.push(`There is no column ${JSON.stringify(want.colour)} to colour by (${colours.join(", ")}); `
      + `colouring by ${defaultColour(state.map)}.`);
    colour = defaultColour(state.map);
  }
  const labels = [...$("label").options].map((o) => o.value);
  const label = labels.includes(want.label) ? want.label : "";
  if (want.label && !label) mapSaid.push(`There is no column ${JSON.stringify(want.label)} to label by; labelling by name.`);
  state.colour = colour; $("colour").value = colour;
  state.label = label; $("label").value = label;
  state.hide = new Set(want.hide);
  state.box = want.box && want.box.length === 4 && want.box.every(Number.isFinite) ? want.box : null;
  state.isolate = want.iso && !!state.box;
  recolour();
  if (want.at && want.at.length === 3 && want.at.every(Number.isFinite) && want.at[2] > 0) setView(want.at);
  else resetView();
  state.basket = want.basket;
  await renderBasket();
  if (!current(g)) return;
  if (want.item) await select(want.item, { push: false, keepView: !!want.at });
  else { clearSelection(); draw(); }
  if (want.customer) await openCustomer(want.customer, { push: false });
  else closeCustomer();
  notice(said.join(" "));
  say($("map-error"), mapSaid.join(" "));
  history.replaceState(null, "", urlOf(state)); // the URL says what is shown, never what was refused
}

// ---- search with autocomplete (a combobox) ---------------------------------------------------------------

let searchTimer = null, active = -1, suggested = null, pending = null;
const search = $("search"), suggestBox = $("suggest");
function closeSuggest() {
  suggestBox.replaceChildren(); suggestBox.hidden = true; active = -1; suggested = null;
  search.setAttribute("aria-expanded", "false"); search.removeAttribute("aria-activedescendant");
  if (state.highlight.length) { state.highlight = []; draw(); }
}
search.addEventListener("input", () => {
  clearTimeout(searchTimer); suggested = null;
  searchTimer = setTimeout(() => { pending = suggest(); }, 120);
});
search.addEventListener("blur", () => { clearTimeout(searchTimer); closeSuggest(); });
search.addEventListener("keydown", async (ev) => {
  const items = [...suggestBox.children];
  if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
    ev.preventDefault();
    if (!items.length) return;
    active = (active + (ev.key === "ArrowDown" ? 1 : -1) + items.length) % items.length;
    items.forEach((li, i) => { li.classList.toggle("active", i === active); li.setAttribute("aria-selected", i === active); });
    search.setAttribute("aria-activedescendant", items[active].id);
  } else if (ev.key === "Enter") {
    ev.preventDefault();
    const text = search.value.trim();
    if (!text) return;
    if (suggested !== text && !/^#\d+$/.test(text)) { // Enter before the list came: ask for it now
      clearTimeout(searchTimer);
      pending = suggest();
      await pending;
      if (search.value.trim() !== text) return;
    }
    // the first suggestion, unless it is only a close spelling: then the answer says "unknown, did you mean"
    const now = [...suggestBox.children];
    const pick = active >= 0 ? now[active] : now.find((li) => li.dataset.match !== "close");
    select(pick ? pick.dataset.item : text);
  } else if (ev.key === "Escape") {
    closeSuggest();
  }
});

async function suggest() {
  const prefix = search.value.trim(), g = state.gen;
  active = -1;
  if (!prefix) { closeSuggest(); $("search-status").textContent = ""; return; }
  let data;
  try {
    data = await api(m(`/search?prefix=${encodeURIComponent(prefix)}&limit=10`));
  } catch (e) { if (current(g)) message(e.message); return; }
  if (!current(g) || search.value.trim() !== prefix) return;
  const col = state.info.attributes && state.info.attributes.name_column;
  suggestBox.replaceChildren(...data.items.map((it, i) => {
    if (it.name && col) state.details.set(it.item, { ...(state.details.get(it.item) || {}), [col]: it.name });
    const li = document.createElement("li");
    li.id = `option-${i}`; li.dataset.item = it.item; li.dataset.match = it.match;
    li.setAttribute("role", "option"); li.setAttribute("aria-selected", "false");
    const a = document.createElement("span"); a.append(...marked(it.name || it.item, prefix));
    const b = document.createElement("span"); b.className = it.name ? "key" : "count";
    b.textContent = it.name ? it.item : String(it.count);
    li.append(a, b);
    li.onmousedown = (ev) => { ev.preventDefault(); select(it.item); };
    return li;
  }));
  suggested = prefix;
  const n = data.items.length;
  suggestBox.hidden = !n;
  search.setAttribute("aria-expanded", String(!!n));
  const close = n && data.items.every((it) => it.match === "close");
  const byValue = n && data.items.some((it) => it.match === "value");
  $("search-status").textContent = !n ? `No items match “${prefix}”.`
    : close ? `Nothing matches “${prefix}” as typed; close spellings:`
    : byValue ? `${n} shown, some because an attribute (an aisle, a department, …) holds “${prefix}”; all ringed on the map.`
    : `${n}${n === 10 ? "+" : ""} matches, ringed on the map.`;
  state.highlight = data.items.map((it) => it.item);
  draw();
  await ensureKnown(state.highlight); // matches outside the map's sample get their places too
  if (current(g) && suggested === prefix) draw();
}
// the part of a suggestion that matches what was typed, in <mark>
function marked(text, query) {
  const i = text.toLowerCase().indexOf(query.toLowerCase());
  if (i < 0 || !query) return [text];
  const b = document.createElement("mark"); b.textContent = text.slice(i, i + query.length);
  return [text.slice(0, i), b, text.slice(i + query.length)];
}

// ---- neighbours, and what is bought with the item ----------------------------------------------------

let selectSeq = 0;
function clearSelection() {
  state.selected = null; state.neighbours = [];
  $("neighbours").replaceChildren(); $("item-details").textContent = "";
  $("neighbours-title").textContent = "Neighbours";
  $("also-bought-box").hidden = true; $("also-bought").replaceChildren();
}

// "#12" is id 12: its key, its name and its place come from /coords
async function canonical(item) {
  if (!/^#\d+$/.test(item) || !state.map) return item;
  const c = await api(m("/coords"), { items: [item], projection: state.map.projection, ...sampleBody() });
  remember(c.items, c);
  if (!state.map.index.has(c.items[0])) state.extra.set(c.items[0], [c.x[0], c.y[0]]);
  return c.items[0];
}

async function select(input, { push = true, keepView = false } = {}) {
  if (!input) return;
  const g = state.gen, seq = ++selectSeq;
  clearTimeout(searchTimer); // a pending autocomplete must not reopen the list over the answer
  closeSuggest();
  message(""); $("search-status").textContent = "";
  let data, item;
  try {
    item = await canonical(input);
    data = await api(m(`/similar?item=${encodeURIComponent(item)}&k=${state.k}${typeQuery()}`));
    if (!current(g) || seq !== selectSeq) return;
    await ensureKnown([item, ...data.answers[0].results.map((n) => n.item)]);
  } catch (e) { // an unknown item: say so, offer close names, keep showing what was shown
    if (!current(g) || seq !== selectSeq) return;
    sayError($("message"), e);
    return;
  }
  if (!current(g) || seq !== selectSeq) return;
  const keys = data.answers[0].results.map((n) => n.item);
  state.selected = item;
  state.neighbours = keys;
  search.value = display(item);
  $("neighbours-title").textContent = `Neighbours of ${display(item)}`;
  $("item-details").textContent = detailsText(item);
  $("neighbours").replaceChildren(...data.answers[0].results.map((n) => row(n, true)));
  if (push) record();
  if (!keepView) showOnMap([item, ...keys]);
  draw();
  alsoBought(item, g, seq);
}

async function alsoBought(item, g, seq) {
  const box = $("also-bought-box");
  const how = state.info.completion || "cosine";
  if (how === "cosine") { box.hidden = true; return; } // no context vectors: it would repeat the neighbours
  $("also-bought-title").textContent = `Bought with ${display(item)}`;
  $("also-bought-explain").textContent = COMPLETION_EXPLAINED[how].replace("the basket's items", "it")
    .replace("the basket", "it").replace("RULE", state.info.basket_rule || "mixture");
  try {
    const data = await api(m(`/also_bought?item=${encodeURIComponent(item)}&k=${state.k}${typeQuery()}`));
    await ensureKnown(data.answers[0].results.map((n) => n.item));
    if (!current(g) || seq !== selectSeq) return;
    $("also-bought").replaceChildren(...data.answers[0].results.map((n) => row(n, true)));
    box.hidden = false;
  } catch (e) {
    if (!current(g) || seq !== selectSeq) return;
    box.hidden = false; $("also-bought").replaceChildren();
    $("also-bought-explain").textContent = e.message;
  }
}

function detailsText(key) {
  const d = state.details.get(key);
  const parts = [nameOf(key) ? key : null];
  const col = state.info.attributes && state.info.attributes.name_column;
  if (d) for (const [c, v] of Object.entries(d)) if (v != null && c !== col) parts.push(`${c}: ${v}`);
  return parts.filter(Boolean).join(" · ");
}

// One answer's line: the item by name (its key beside), its score, and "+" to add it to the basket.
function row(n, addable, { onPick, score } = {}) {
  const li = document.createElement("li");
  li.dataset.item = n.item;
  const wrap = document.createElement("div"); wrap.className = "row";
  const a = document.createElement("button");
  a.type = "button"; a.className = "item"; a.onclick = onPick || (() => select(n.item));
  a.textContent = display(n.item);
  if (nameOf(n.item)) { const k = document.createElement("span"); k.className = "key"; k.textContent = " " + n.item; a.append(k); }
  const s = document.createElement("span");
  s.className = "score"; s.textContent = score !== undefined ? score : n.score.toFixed(3);
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
  const unknown = await ensureKnown(state.basket);
  if (!current(g) || seq !== basketSeq) return;
  if (unknown.length) { // an unknown item never stays as a chip: it is taken out, and the page says so
    const bad = new Set(unknown.map((u) => u.key));
    state.basket = state.basket.filter((k) => !bad.has(k));
    history.replaceState(null, "", urlOf(state));
    const sugg = unknown.flatMap((u) => (u.error.data && u.error.data.suggestions) || []);
    say($("basket-error"), unknown.map((u) => u.error.message).join("; ")
      + ` — left out of the basket.${sugg.length ? " Add instead:" : ""}`, sugg, addToBasket);
  } else say($("basket-error"), "");
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
  } catch (e) { if (current(g)) sayError($("basket-error"), e, addToBasket); }
  draw();
}

// ---- models --------------------------------------------------------------------------------------------

// Everything of the old model goes: title, neighbours, basket, answers, messages, map; then the new one loads.
async function openModel(name) {
  state = fresh(name);
  state.gen = ++generation;
  const g = state.gen;
  $("model").value = name;
  delete document.body.dataset.ready;
  message(""); notice("");
  clearSelection();
  search.value = ""; $("search-status").textContent = "";
  closeSuggest();
  for (const id of ["basket", "recommendations", "analogy-results", "similar-customers", "lookalike", "legend"]) $(id).replaceChildren();
  for (const el of document.querySelectorAll(".panel-error")) el.textContent = "";
  closeCustomer();
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

let started = false;
async function start() {
  try {
    models = await api("/models");
    const sel = $("model");
    sel.replaceChildren(...models.models.map((x) => new Option(x.name, x.name)));
    if (!started) {
      started = true;
      sel.onchange = async () => {
        const was = state.model;
        try { await openModel(sel.value); record(); } catch (e) { sel.value = was; notice(e.message); }
      };
      $("k").onchange = () => {
        state.k = Number($("k").value);
        record();
        if (state.selected) select(state.selected, { push: false, keepView: true });
      };
      $("type-filter").onchange = () => {
        state.types = $("type-filter").value;
        record();
        if (state.selected) select(state.selected, { push: false, keepView: true });
        renderBasket();
      };
    }
    await applyUrl();
    history.replaceState(null, "", urlOf(state));
  } catch (e) { if (!e.offline) notice(e.message); }
}

document.addEventListener("DOMContentLoaded", start);
