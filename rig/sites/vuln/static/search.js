// VulnDB's search page. The product picker loads the chosen vendor's products (XHR GET); "Search" POSTs the form's
// state as JSON (XHR) and renders the first batch; "Load more" POSTs the same search with the cursor the previous
// batch handed back and appends the rows. The results table says what its rows were computed under (data-scope,
// from the server) and how many are shown (data-rows, data-batches); only a search changes data-scope.
(() => {
  "use strict";
  const form = document.getElementById("search-form");
  const vendor = document.getElementById("vendor");
  const product = document.getElementById("product");
  const table = document.getElementById("results");
  const body = table.tBodies[0];
  const status = document.getElementById("status");
  const count = document.getElementById("result-count");
  const shown = document.getElementById("shown");
  const more = document.getElementById("load-more");
  const scoreHead = document.getElementById("score-head");
  let last = null, cursor = null, serial = 0;

  function xhr(method, url, payload) {
    return new Promise((resolve, reject) => {
      const req = new XMLHttpRequest();
      req.open(method, url);
      req.responseType = "json";
      if (payload !== undefined) req.setRequestHeader("Content-Type", "application/json");
      req.onload = () => resolve(req.response || {error: "The server sent no answer."});
      req.onerror = () => reject(new Error("network"));
      req.send(payload === undefined ? null : JSON.stringify(payload));
    });
  }

  vendor.addEventListener("change", async () => {
    const chosen = vendor.value;
    product.disabled = true;
    product.dataset.loaded = "";
    product.replaceChildren(new Option("Any product", ""));
    if (!chosen) return;
    let data;
    try {
      data = await xhr("GET", `${form.getAttribute("data-products")}?vendor=${encodeURIComponent(chosen)}`);
    } catch (err) {
      data = {error: "The products could not be loaded."};
    }
    if (vendor.value !== chosen) return;  // the vendor changed meanwhile
    if (data.error) { status.textContent = data.error; return; }
    for (const p of data.products) product.append(new Option(p.name, p.name));
    product.disabled = false;
    product.dataset.loaded = chosen;
  });

  function state() {
    const f = new FormData(form);
    const get = name => String(f.get(name) || "").trim();
    return {keyword: get("keyword"), vendor: get("vendor"), product: product.disabled ? "" : get("product"),
            cvss_version: get("cvss_version") || "3.1", score_min: get("score_min"), score_max: get("score_max"),
            date_type: get("date_type"), date_from: get("date_from"), date_to: get("date_to"), sort: get("sort")};
  }

  function cell(text) {
    const td = document.createElement("td");
    td.textContent = text;
    return td;
  }

  function append(rows) {
    for (const r of rows) {
      const tr = document.createElement("tr");
      const id = document.createElement("td");
      const a = document.createElement("a");
      a.href = form.getAttribute("data-records") + encodeURIComponent(r.cve);
      a.textContent = r.cve;
      id.append(a);
      const summary = cell(r.summary);
      summary.className = "summary";
      tr.append(id, cell(r.vendor), cell(r.product), cell(r.published), cell(r.modified), cell(r.score),
                cell(r.severity), summary);
      body.append(tr);
    }
  }

  function finish(data) {
    const n = body.rows.length;
    table.dataset.rows = String(n);
    table.dataset.total = String(data.total);
    table.dataset.complete = String(n >= data.total);
    count.textContent = `${data.total} matching record${data.total === 1 ? "" : "s"}`;
    count.hidden = false;
    shown.textContent = `Showing ${n} of ${data.total}`;
    shown.hidden = false;
    cursor = data.next_cursor;
    more.hidden = !cursor;
    more.disabled = false;
    table.dataset.state = "ready";
  }

  async function post(search, from) {
    const mine = ++serial;
    table.dataset.state = "loading";
    more.disabled = true;
    status.textContent = "Loading…";
    let data;
    try {
      data = await xhr("POST", form.getAttribute("data-api"), Object.assign({}, search, {cursor: from}));
    } catch (err) {
      data = {error: "The server did not answer; try again."};
    }
    if (mine !== serial) return null;
    if (data.error) {
      status.textContent = data.error;
      table.dataset.state = "error";
      more.disabled = false;
      return null;
    }
    status.textContent = "";
    return data;
  }

  form.addEventListener("submit", async e => {
    e.preventDefault();
    const search = state();
    const data = await post(search, null);
    if (!data) return;
    last = search;
    body.replaceChildren();
    append(data.rows);
    scoreHead.textContent = `CVSS ${data.version}`;
    table.dataset.scope = data.scope;
    table.dataset.batches = "1";
    table.hidden = false;
    finish(data);
  });

  more.addEventListener("click", async () => {
    if (!last || !cursor) return;
    const data = await post(last, cursor);
    if (!data) return;
    append(data.rows);
    table.dataset.batches = String(Number(table.dataset.batches) + 1);
    finish(data);
  });
})();
