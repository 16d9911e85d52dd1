// The complaint search page. Filters apply when Search is pressed; view controls (tab, sort, page size, page,
// interval, order) apply at once to the query shown. Results arrive by fetch from the search API; once they are
// on the page the URL is the query they answer (history.pushState), so a link, a reload or Back shows them again.
(function () {
  "use strict";
  const form = document.getElementById("search-form");
  const api = form.getAttribute("data-api");
  const subApi = form.getAttribute("data-subproducts");
  const detailUrl = form.getAttribute("data-detail");
  const area = document.getElementById("results-area");
  const $ = id => document.getElementById(id);
  const FILTERS = ["search_term", "product", "sub_product", "company", "state", "date_received_min",
                   "date_received_max", "has_narrative"];
  const VIEW = ["tab", "sort", "page", "size", "interval", "trend_order"];
  let applied = null;  // URLSearchParams of the query whose results are shown (as the server applied it)
  let tab = "list";
  let serial = 0;      // a late answer never overwrites a newer one

  function formFilters() {
    const out = new URLSearchParams();
    for (const name of FILTERS) {
      const el = form.elements.namedItem(name);
      if (!el || el.disabled) continue;
      const value = el.type === "checkbox" ? (el.checked ? "true" : "") : el.value.trim();
      if (value) out.set(name, value);
    }
    return out;
  }

  function appliedFilters() {
    const out = new URLSearchParams();
    for (const [k, v] of applied || []) if (FILTERS.includes(k)) out.append(k, v);
    return out;
  }

  async function loadSubproducts(product, chosen) {
    const select = $("sub_product");
    select.replaceChildren(new Option("All sub-products", ""));
    select.disabled = true;
    if (!product) return;
    const reply = await fetch(subApi + "?" + new URLSearchParams({product: product}));
    if (!reply.ok) return;
    const data = await reply.json();
    if ($("product").value !== product) return;  // changed again meanwhile
    for (const sub of data.sub_products) select.appendChild(new Option(sub, sub));
    select.value = chosen || "";
    select.disabled = false;
  }

  function showTab(name) {
    tab = name;
    for (const t of document.querySelectorAll("[role=tab]")) {
      const on = t.dataset.tab === name;
      t.setAttribute("aria-selected", String(on));
      $(t.getAttribute("aria-controls")).hidden = !on;
    }
  }

  function fill(tbody, rows, link) {
    tbody.replaceChildren(...rows.map(cells => {
      const tr = document.createElement("tr");
      cells.forEach((cell, i) => {
        const td = document.createElement("td");
        if (link && i === 0) {
          const a = document.createElement("a");
          a.href = detailUrl + encodeURIComponent(cell);
          a.textContent = cell;
          td.appendChild(a);
        } else {
          td.textContent = cell;
        }
        tr.appendChild(td);
      });
      return tr;
    }));
  }

  function render(data) {
    showTab(data.tab);
    const n = data.total;
    $("result-count").textContent = n + (n === 1 ? " complaint" : " complaints");
    $("result-count").hidden = false;
    $("interpreted-term").textContent = data.interpreted;
    $("interpreted").hidden = !data.interpreted;
    $("status").textContent = n ? "" : "No complaints match this search.";
    $("status").className = "";
    if (data.list) {
      fill($("results").tBodies[0], data.list.rows, true);
      $("results").hidden = false;
      $("results").dataset.page = String(data.list.page);
      $("results").dataset.pages = String(data.list.pages);
      $("page-info").textContent = "Page " + data.list.page + " of " + data.list.pages;
      $("prev").disabled = data.list.page <= 1;
      $("next").disabled = data.list.page >= data.list.pages;
      $("pager").hidden = false;
      $("sort").value = data.list.sort;
      $("size").value = String(data.list.size);
    }
    if (data.trends) {
      fill($("trends").tBodies[0], data.trends.rows, false);
      $("trends").hidden = false;
      $("interval").value = data.trends.interval;
      $("trend_order").value = data.trends.trend_order;
    }
    fill($("agg-company").tBodies[0], data.facets.company, false);
    fill($("agg-state").tBodies[0], data.facets.state, false);
    $("facets").hidden = false;
    $("export-link").href = api + "?" + data.params + "&format=csv";
    $("export").hidden = false;
    $("export-status").textContent = "";
    $("export-preview").hidden = true;
    $("export-download").hidden = true;
    // what the shown results answer: only a query that ran changes these, never setting a control
    area.dataset.params = data.params;
    area.dataset.interpreted = data.interpreted;
    area.dataset.tab = data.tab;
    area.dataset.state = "ready";
  }

  async function run(filters, view, history_) {
    const params = new URLSearchParams(filters);
    params.set("tab", view.tab);
    if (view.tab === "list") {
      params.set("sort", $("sort").value);
      params.set("page", String(view.page || 1));
      params.set("size", $("size").value);
    } else {
      params.set("interval", $("interval").value);
      params.set("trend_order", $("trend_order").value);
    }
    const mine = ++serial;
    area.dataset.state = "loading";
    $("status").textContent = "Searching…";
    $("status").className = "";
    let data;
    try {
      const reply = await fetch(api + "?" + params);
      data = await reply.json();
    } catch (err) {
      data = {error: "The register did not answer; try again."};
    }
    if (mine !== serial) return false;
    if (data.error) {
      $("status").textContent = data.error;
      $("status").className = "error";
      area.dataset.state = "error";
      return false;
    }
    applied = new URLSearchParams(data.params);
    render(data);
    const url = location.pathname + "?" + data.params;
    if (history_ === "push" && location.pathname + location.search !== url) history.pushState(null, "", url);
    else if (history_ === "replace") history.replaceState(null, "", url);
    return true;
  }

  function viewChange(view) {
    if (applied) run(appliedFilters(), view, "push");
  }

  async function fromUrl() {
    const params = new URLSearchParams(location.search);
    if (![...FILTERS, ...VIEW].some(k => params.has(k))) {
      applied = null;
      return;
    }
    for (const name of FILTERS) {
      const el = form.elements.namedItem(name);
      if (el.type === "checkbox") el.checked = params.get(name) === "true";
      else if (name !== "sub_product") el.value = params.get(name) || "";
    }
    await loadSubproducts(params.get("product") || "", params.get("sub_product") || "");
    for (const name of ["sort", "size", "interval", "trend_order"]) if (params.get(name)) $(name).value = params.get(name);
    showTab(params.get("tab") === "trends" ? "trends" : "list");
    const filters = new URLSearchParams();
    for (const [k, v] of params) if (FILTERS.includes(k)) filters.append(k, v);
    const ok = await run(filters, {tab: tab, page: Number(params.get("page") || 1)}, "replace");
    if (!ok && !applied) history.replaceState(null, "", location.pathname);  // the link's query cannot be answered
  }

  async function exportCsv() {
    const href = $("export-link").href;
    $("export-status").textContent = "Exporting…";
    const reply = await fetch(href);
    const text = await reply.text();
    if (!reply.ok) {
      $("export-status").textContent = text;
      return;
    }
    const lines = text.replace(/\n$/, "").split("\n");
    $("export-status").textContent = "Exported " + (lines.length - 1) + " rows of the " + tab + " view as CSV (" +
      reply.headers.get("Content-Type") + ").";
    $("export-preview").textContent = lines.slice(0, 6).join("\n") + (lines.length > 6 ? "\n…" : "");
    $("export-preview").hidden = false;
    const link = $("export-download");
    if (link.href.startsWith("blob:")) URL.revokeObjectURL(link.href);
    link.href = URL.createObjectURL(new Blob([text], {type: "text/csv"}));
    link.download = "complaints-" + tab + ".csv";
    link.hidden = false;
  }

  form.addEventListener("submit", event => {
    event.preventDefault();
    run(formFilters(), {tab: tab, page: 1}, "push");
  });
  $("clear").addEventListener("click", () => {
    form.reset();
    loadSubproducts("", "");
  });
  $("product").addEventListener("change", () => loadSubproducts($("product").value, ""));
  for (const t of document.querySelectorAll("[role=tab]")) {
    t.addEventListener("click", () => {
      showTab(t.dataset.tab);
      viewChange({tab: t.dataset.tab, page: 1});
    });
  }
  $("sort").addEventListener("change", () => viewChange({tab: "list", page: 1}));
  $("size").addEventListener("change", () => viewChange({tab: "list", page: 1}));
  $("interval").addEventListener("change", () => viewChange({tab: "trends"}));
  $("trend_order").addEventListener("change", () => viewChange({tab: "trends"}));
  $("prev").addEventListener("click", () => viewChange({tab: "list", page: Number($("results").dataset.page) - 1}));
  $("next").addEventListener("click", () => viewChange({tab: "list", page: Number($("results").dataset.page) + 1}));
  $("export-csv").addEventListener("click", exportCsv);
  window.addEventListener("popstate", fromUrl);
  fromUrl();
})();
