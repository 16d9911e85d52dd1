// The eco data browser: POSTs the form state as JSON and renders the rows; "Load more" appends the next batch.
(function () {
  "use strict";
  const form = document.getElementById("query");
  const table = document.getElementById("results");
  const head = table.querySelector("thead");
  const body = table.querySelector("tbody");
  const count = document.getElementById("result-count");
  const shown = document.getElementById("shown");
  const status = document.getElementById("status");
  const notes = document.getElementById("notes");
  const more = document.getElementById("load-more");
  const exportLink = document.getElementById("export");
  // form.dataset would be the <select name="dataset">: read the form's data attributes with getAttribute
  const apiUrl = form.getAttribute("data-api");
  const exportUrl = form.getAttribute("data-export");
  let last = null;     // the state of the query whose rows are shown
  let serial = 0;      // increases with every request, so a late answer never overwrites a newer one

  function formState() {
    const data = new FormData(form);
    const num = name => (data.get(name) || "").trim();
    return {
      dataset: data.get("dataset") || "", start: data.get("start") || "", end: data.get("end") || "",
      weather: data.getAll("weather"), source: data.getAll("source"),
      min_precip: num("min_precip"), min_temp: num("min_temp"), agg: data.get("agg") || "daily",
      sort: data.get("sort") || "period", dir: data.get("dir") || "asc", limit: Number(data.get("limit") || 10),
    };
  }

  function describe(state) {
    const select = form.elements.namedItem("dataset");
    const parts = [select.options[select.selectedIndex].text.replace(/ \(\w+\)$/, ""), state.agg,
                   (state.start || "first month") + " to " + (state.end || "last month")];
    if (state.weather.length) parts.push("weather: " + state.weather.join(", "));
    if (state.source.length) parts.push("source: " + state.source.join(", "));
    if (state.min_precip !== "") parts.push("precipitation ≥ " + state.min_precip);
    if (state.min_temp !== "") parts.push("max temperature ≥ " + state.min_temp);
    return parts.join("; ");
  }

  async function post(state, offset) {
    const mine = ++serial;
    table.dataset.state = "loading";
    more.disabled = true;
    status.textContent = "Loading…";
    status.className = "";
    let reply, data;
    try {
      reply = await fetch(apiUrl, {
        method: "POST", headers: {"Content-Type": "application/json"},
        body: JSON.stringify(Object.assign({}, state, {offset: offset, limit: state.limit})),
      });
      data = await reply.json();
    } catch (err) {
      data = {error: "The server did not answer; try again."};
    }
    if (mine !== serial) return null;
    if (data.error) {
      status.textContent = data.error;
      status.className = "error";
      table.dataset.state = "error";
      more.disabled = false;
      return null;
    }
    status.textContent = "";
    return data;
  }

  function renderHead(data) {
    const row = document.createElement("tr");
    for (const col of data.columns) {
      const th = document.createElement("th");
      th.scope = "col";
      th.setAttribute("aria-sort", col.key === data.sort ? (data.dir === "desc" ? "descending" : "ascending") : "none");
      const button = document.createElement("button");
      button.type = "button";
      button.dataset.sort = col.key;
      button.textContent = col.label;
      button.addEventListener("click", () => sortBy(col.key));
      th.appendChild(button);
      row.appendChild(th);
    }
    head.replaceChildren(row);
  }

  function appendRows(rows) {
    for (const cells of rows) {
      const tr = document.createElement("tr");
      for (const cell of cells) {
        const td = document.createElement("td");
        td.textContent = cell;
        tr.appendChild(td);
      }
      body.appendChild(tr);
    }
  }

  function finish(data) {
    const n = body.rows.length;
    table.dataset.rows = String(n);
    table.dataset.total = String(data.total);
    table.dataset.complete = String(n >= data.total);
    count.textContent = data.total + (data.total === 1 ? " record" : " records");
    count.hidden = false;
    shown.textContent = "Showing " + n + " of " + data.total;
    shown.hidden = false;
    more.hidden = n >= data.total;
    more.disabled = false;
    table.dataset.state = "ready";
  }

  async function run() {
    const state = formState();
    const data = await post(state, 0);
    if (!data) return;
    last = state;
    renderHead(data);
    body.replaceChildren();
    appendRows(data.rows);
    notes.replaceChildren(...data.notes.map(text => Object.assign(document.createElement("li"), {textContent: text})));
    table.caption.textContent = describe(state);
    table.hidden = false;
    table.dataset.batches = "1";
    table.dataset.sort = data.sort + ":" + data.dir;
    // what the shown rows were computed under (the server's applied query), and their batch size: only a run of
    // the query changes these, never setting a form control
    table.dataset.scope = data.scope;
    table.dataset.limit = String(data.limit);
    exportLink.href = exportUrl + "?" + table.dataset.scope;
    exportLink.hidden = false;
    finish(data);
  }

  async function loadMore() {
    if (!last) return;
    const data = await post(last, body.rows.length);
    if (!data) return;
    appendRows(data.rows);
    table.dataset.batches = String(Number(table.dataset.batches) + 1);
    finish(data);
  }

  function sortBy(key) {
    const sort = form.elements.namedItem("sort");
    const dir = form.elements.namedItem("dir");
    dir.value = table.dataset.sort === key + ":asc" ? "desc" : "asc";
    sort.value = key;
    run();
  }

  form.addEventListener("submit", event => { event.preventDefault(); run(); });
  more.addEventListener("click", loadMore);
})();
