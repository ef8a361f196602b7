// The explorer's panels below the basket: analogies, and customers (similar customers, lookalikes, one
// customer's purchases, next basket and "something new", their place on the map). Each panel says its own
// errors under its own form. Shares the globals of app.js.
"use strict";

// ---- field autocomplete: item names for the analogy, customer keys for the customer fields ------------

let fieldTimer = null;
function completeField(input, listId, ask) {
  input.addEventListener("input", () => {
    clearTimeout(fieldTimer);
    const text = input.value.trim(), g = state.gen;
    if (!text) return;
    fieldTimer = setTimeout(async () => {
      try {
        const values = await ask(text);
        if (!current(g) || input.value.trim() !== text) return;
        $(listId).replaceChildren(...values.map((v) => new Option(v[1] || v[0], v[0])));
      } catch (e) { /* a suggestion is a courtesy: the form says the error when it is sent */ }
    }, 150);
  });
}
for (const x of ["a", "b", "c"]) {
  const input = $(`analogy-${x}`);
  input.setAttribute("list", "item-names");
  completeField(input, "item-names", async (text) => {
    const data = await api(m(`/search?prefix=${encodeURIComponent(text)}&limit=8`));
    return data.items.map((it) => [it.name || it.item, it.name ? it.item : ""]);
  });
}
completeField($("customer"), "customer-list", async (text) => {
  const data = await api(m(`/customers?prefix=${encodeURIComponent(text)}&limit=10`));
  return data.customers.map((c) => [c, ""]);
});

// ---- analogies -----------------------------------------------------------------------------------------

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
  const g = state.gen, err = $("analogy-error");
  say(err, "");
  try {
    const [a, b, c] = await Promise.all(["a", "b", "c"].map((x) => resolve($(`analogy-${x}`).value)));
    const data = await api(m("/analogy"), { a, b, c, k: 5 });
    await ensureKnown(data.answers[0].results.map((n) => n.item));
    if (!current(g)) return;
    $("analogy-results").replaceChildren(...data.answers[0].results.map((n) => row(n, true)));
  } catch (e) {
    if (current(g)) { $("analogy-results").replaceChildren(); sayError(err, e); }
  }
});

// ---- customers -----------------------------------------------------------------------------------------

function customerRow(n, score) {
  const li = document.createElement("li");
  li.dataset.item = n.item;
  const wrap = document.createElement("div"); wrap.className = "row";
  const a = document.createElement("button");
  a.type = "button"; a.className = "item customer"; a.textContent = n.item;
  a.title = "show this customer's purchases, next basket and place on the map";
  a.onclick = () => openCustomer(n.item);
  const s = document.createElement("span"); s.className = "score"; s.textContent = score ?? n.score.toFixed(3);
  wrap.append(a, s); li.append(wrap);
  return li;
}

$("similar-customers-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const g = state.gen, err = $("customer-error");
  say(err, "");
  try {
    const data = await api(m("/similar_customers"), { customer: $("customer").value.trim(), k: 10 });
    if (!current(g)) return;
    $("similar-customers").replaceChildren(...data.answers[0].results.map((n) => customerRow(n)));
  } catch (e) {
    if (current(g)) { $("similar-customers").replaceChildren(); sayError(err, e, openCustomer); }
  }
});
$("open-customer").onclick = () => {
  const key = $("customer").value.trim();
  if (!key) { say($("customer-error"), "Type a customer first."); return; }
  openCustomer(key, { errorIn: $("customer-error") });
};
$("lookalike-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const g = state.gen, err = $("lookalike-error");
  say(err, "");
  const seeds = $("seeds").value.split(/[\s,]+/).filter(Boolean);
  try {
    const data = await api(m("/lookalike"), { seeds, k: 10, method: "centroid" });
    if (!current(g)) return;
    $("lookalike").replaceChildren(...data.answers[0].results.map((n) => customerRow(n)));
  } catch (e) { if (current(g)) { $("lookalike").replaceChildren(); sayError(err, e); } }
});

// One customer: what they bought (marked on the map), their place on the map, their next basket and
// "something new". In the URL as customer=KEY.
let customerSeq = 0;
function closeCustomer() {
  state.customer = null;
  $("customer-view").hidden = true;
  for (const id of ["bought", "next-basket", "something-new"]) $(id).replaceChildren();
  say($("customer-view-error"), "");
}
async function openCustomer(key, { push = true, errorIn = null } = {}) {
  const g = state.gen, seq = ++customerSeq;
  const err = errorIn || $("customer-view-error");
  say(err, "");
  if (!state.info.customers) { say(errorIn || $("message"), `Model ${state.model} has no customers.`); return; }
  let c;
  try {
    c = await api(m(`/customer?customer=${encodeURIComponent(key)}&k=50&projection=${state.projection}${sampleQuery()}`));
  } catch (e) {
    if (current(g) && seq === customerSeq) sayError(errorIn || $("customer-error"), e, (s) => openCustomer(s));
    return;
  }
  if (!current(g) || seq !== customerSeq) return;
  remember(c.bought.map((b) => b.item), c);
  await ensureKnown(c.bought.map((b) => b.item));
  if (!current(g) || seq !== customerSeq) return;
  state.customer = { key: c.customer, x: c.x, y: c.y, bought: c.bought.map((b) => b.item) };
  $("customer-view").hidden = false;
  $("customer").value = c.customer;
  $("customer-title").textContent = `Customer ${c.customer}`;
  $("customer-facts").textContent = `${c.products.toLocaleString()} products bought`
    + (c.baskets != null ? ` in ${c.baskets.toLocaleString()} baskets` : "")
    + (c.bought.length < c.products ? ` (the ${c.bought.length} bought most often are listed)` : "");
  $("bought").replaceChildren(...c.bought.map((b) => row(b, true, { score: String(b.baskets) })));
  if (push) record();
  showOnMap(state.customer.bought.slice(0, 20), [[c.x, c.y]]);
  draw();
  const next = async (explore, list) => {
    try {
      const data = await api(m("/next_basket"), { customer: c.customer, k: 10, explore });
      await ensureKnown(data.answers[0].results.map((n) => n.item));
      if (!current(g) || seq !== customerSeq) return;
      $(list).replaceChildren(...data.answers[0].results.map((n) => row(n, true)));
    } catch (e) {
      if (current(g) && seq === customerSeq) { $(list).replaceChildren(); sayError(err, e); }
    }
  };
  await Promise.all([next(false, "next-basket"), next(true, "something-new")]);
}
