// BioKB's taxonomy browser: a nested ARIA tree (treeitems own a role=group of their children) whose children are
// fetched when a node first expands, and a panel for the selected taxon (fetched too). The selection lives only in
// the page: the panel says which taxon it shows (data-path, data-taxon-id) and how its children table is sorted
// (data-sort on #taxon-children).
(() => {
  "use strict";
  const browser = document.getElementById("browser");
  const base = browser.dataset.base;
  const tree = document.getElementById("taxa-tree");
  const panel = document.getElementById("taxon-panel");
  let panelSeq = 0;

  const items = () => Array.from(tree.querySelectorAll('[role="treeitem"]'));
  const visibleItems = () => items().filter(el => !el.closest('[role="group"][hidden]'));
  const label = item => item.querySelector(":scope > .label").textContent;

  function makeItem(child, level, setsize, pos) {
    const li = document.createElement("li");
    li.setAttribute("role", "treeitem");
    li.dataset.id = String(child.id);
    li.setAttribute("aria-level", String(level));
    li.setAttribute("aria-setsize", String(setsize));
    li.setAttribute("aria-posinset", String(pos));
    li.setAttribute("aria-selected", "false");
    if (child.has_children) li.setAttribute("aria-expanded", "false");
    li.tabIndex = -1;
    const twisty = document.createElement("span");
    twisty.className = "twisty";
    twisty.setAttribute("aria-hidden", "true");
    const name = document.createElement("span");
    name.className = "label";
    name.id = `taxon-label-${child.id}`;
    name.textContent = child.name;
    li.setAttribute("aria-labelledby", name.id);  // the name alone, not the names of the children it holds
    const rank = document.createElement("span");
    rank.className = "rank";
    rank.setAttribute("aria-hidden", "true");
    rank.textContent = " " + child.rank;
    li.append(twisty, name, rank);
    return li;
  }

  function expand(item) {
    if (item.getAttribute("aria-expanded") !== "false") return item._loading || Promise.resolve();
    item.setAttribute("aria-expanded", "true");
    const group = item.querySelector(':scope > [role="group"]');
    if (group) { group.hidden = false; return Promise.resolve(); }
    item.setAttribute("aria-busy", "true");
    item._loading = fetch(`${base}/api/taxonomy/children?id=${item.dataset.id}`)
      .then(res => res.json())
      .then(data => {
        const ul = document.createElement("ul");
        ul.setAttribute("role", "group");
        const level = Number(item.getAttribute("aria-level")) + 1;
        data.children.forEach((c, i) => ul.append(makeItem(c, level, data.children.length, i + 1)));
        item.append(ul);
      })
      .catch(() => item.setAttribute("aria-expanded", "false"))
      .finally(() => { item.removeAttribute("aria-busy"); item._loading = null; });
    return item._loading;
  }

  function collapse(item) {
    if (item.getAttribute("aria-expanded") !== "true") return;
    item.setAttribute("aria-expanded", "false");
    const group = item.querySelector(':scope > [role="group"]');
    if (group) group.hidden = true;
  }

  function focusItem(item) {
    items().forEach(el => { el.tabIndex = el === item ? 0 : -1; });
    item.focus();
  }

  function cell(text, numeric) {
    const td = document.createElement("td");
    td.textContent = String(text);
    if (numeric) td.className = "num";
    return td;
  }

  function renderChildren(table, rows, sort) {
    const [key, dir] = sort.split(":");
    const sorted = rows.slice().sort((a, b) => {
      const x = a[key], y = b[key];
      const c = typeof x === "number" ? x - y : String(x).localeCompare(String(y));
      return (dir === "desc" ? -c : c) || a.name.localeCompare(b.name);
    });
    table.dataset.sort = sort;
    table.querySelectorAll("th[data-key]").forEach(th => {
      th.setAttribute("aria-sort", th.dataset.key === key ? (dir === "desc" ? "descending" : "ascending") : "none");
    });
    const body = table.tBodies[0];
    body.replaceChildren(...sorted.map(c => {
      const tr = document.createElement("tr");
      tr.append(cell(c.id), cell(c.name), cell(c.rank), cell(c.reviewed, true), cell(c.unreviewed, true));
      return tr;
    }));
  }

  async function showPanel(item) {
    const seq = ++panelSeq;
    panel.dataset.state = "loading";
    let data;
    try {
      const res = await fetch(`${base}/api/taxonomy/node?id=${item.dataset.id}`);
      data = await res.json();
    } catch (err) {
      data = {error: "The taxon could not be loaded."};
    }
    if (seq !== panelSeq) return;
    panel.replaceChildren();
    const h = document.createElement("h2");
    h.id = "panel-heading";
    if (data.error) {
      h.textContent = data.error;
      panel.append(h);
      panel.dataset.state = "error";
      return;
    }
    h.textContent = `${data.name} (${data.rank})`;
    const facts = document.createElement("p");
    facts.id = "panel-facts";
    facts.textContent = `Taxon ID ${data.id}` + (data.common ? ` · ${data.common}` : "") +
      (data.ancestors.length ? ` · lineage: ${data.ancestors.map(a => a.name).join(" › ")}` : "");
    const counts = document.createElement("p");
    counts.id = "panel-counts";
    counts.textContent = `${data.reviewed} reviewed and ${data.unreviewed} unreviewed entries in this taxon and below.`;
    const link = document.createElement("a");
    link.id = "panel-search";
    link.href = data.search;
    link.textContent = `Search the entries of ${data.name}`;
    panel.append(h, facts, counts, link);
    if (data.children.length) {
      const table = document.createElement("table");
      table.id = "taxon-children";
      const caption = document.createElement("caption");
      caption.textContent = `Taxa directly below ${data.name}, with the entries of each`;
      const head = document.createElement("tr");
      for (const [key, text, numeric] of [["id", "Taxon ID", true], ["name", "Name"], ["rank", "Rank"],
                                          ["reviewed", "Reviewed", true], ["unreviewed", "Unreviewed", true]]) {
        const th = document.createElement("th");
        th.scope = "col";
        th.dataset.key = key;
        if (numeric) th.className = "num";
        const b = document.createElement("button");
        b.type = "button";
        b.textContent = text;
        b.addEventListener("click", () => {
          const cur = table.dataset.sort;
          const next = cur === `${key}:asc` ? `${key}:desc` : (cur === `${key}:desc` ? `${key}:asc`
            : `${key}:${numeric && key !== "id" ? "desc" : "asc"}`);
          renderChildren(table, data.children, next);
        });
        th.append(b);
        head.append(th);
      }
      const thead = document.createElement("thead");
      thead.append(head);
      table.append(caption, thead, document.createElement("tbody"));
      panel.append(table);
      renderChildren(table, data.children, "name:asc");
    }
    panel.dataset.path = data.path;
    panel.dataset.taxonId = String(data.id);
    panel.dataset.state = "ready";
  }

  function select(item) {
    focusItem(item);
    expand(item);
    if (item.getAttribute("aria-selected") === "true") return;
    items().forEach(el => el.setAttribute("aria-selected", el === item ? "true" : "false"));
    showPanel(item);
  }

  tree.addEventListener("click", e => {
    const item = e.target.closest('[role="treeitem"]');
    if (!item) return;
    const twisty = e.target.closest(".twisty") && item.hasAttribute("aria-expanded");
    if (!twisty) select(item);
    else (item.getAttribute("aria-expanded") === "true" ? collapse : expand)(item);
  });

  // keyboard: the tree pattern's keys, each a function of the focused item and the visible items around it
  const KEYS = {
    ArrowDown: (item, all, i) => all[i + 1] && focusItem(all[i + 1]),
    ArrowUp: (item, all, i) => i > 0 && focusItem(all[i - 1]),
    ArrowRight: item => expand(item),
    ArrowLeft: item => {
      if (item.getAttribute("aria-expanded") === "true") return collapse(item);
      const up = item.parentElement.closest('[role="treeitem"]');
      if (up) focusItem(up);
    },
    Enter: item => select(item),
    " ": item => select(item),
  };
  tree.addEventListener("keydown", e => {
    const item = e.target.closest('[role="treeitem"]');
    const act = KEYS[e.key];
    if (!item || !act) return;
    const all = visibleItems();
    act(item, all, all.indexOf(item));
    e.preventDefault();
  });
})();
