// Data explorer: geography tree (children fetched on expand), indicator and year window,
// Table / Summary / Aggregate tabs, sortable columns and pages. All state lives in the URL:
// ?node=&indicator=&year_from=&year_to=&sort=&dir=&page= and the fragment #view=.
(() => {
  "use strict";
  const explorer = document.getElementById("explorer");
  const root = explorer.dataset.root;
  const WORLD = explorer.dataset.world;
  const VIEWS = ["table", "summary", "aggregate"];
  const tree = document.getElementById("geo-tree");
  const form = document.getElementById("controls");
  const status = document.getElementById("scope-status");
  const tabs = Array.from(document.querySelectorAll('[role="tab"]'));
  const state = {node: "", indicator: "", year_from: 0, year_to: 0, view: "table", sort: "", dir: "", page: 1};
  let loadSeq = 0;

  // ---- URL <-> state -------------------------------------------------------------------------
  function readUrl() {
    const q = new URLSearchParams(location.search);
    const h = new URLSearchParams(location.hash.slice(1));
    state.node = q.get("node") || "";
    state.indicator = q.get("indicator") || form.indicator.value;
    state.year_from = Number(q.get("year_from") || form.year_from.value);
    state.year_to = Number(q.get("year_to") || form.year_to.value);
    state.view = VIEWS.includes(h.get("view")) ? h.get("view") : "table";
    state.sort = q.get("sort") || "";
    state.dir = state.sort ? (q.get("dir") === "desc" ? "desc" : "asc") : "";
    state.page = Math.max(1, parseInt(q.get("page"), 10) || 1);
  }

  function stateUrl() {
    const q = new URLSearchParams();
    if (state.node) q.set("node", state.node);
    q.set("indicator", state.indicator);
    q.set("year_from", String(state.year_from));
    q.set("year_to", String(state.year_to));
    if (state.sort) { q.set("sort", state.sort); q.set("dir", state.dir); }
    if (state.page > 1) q.set("page", String(state.page));
    const frag = state.node || state.view !== "table" ? "#view=" + state.view : "";
    return location.pathname + "?" + q.toString().replace(/%2F/g, "/") + frag;
  }

  function commit(replace) {
    const url = stateUrl();
    if (url === location.pathname + location.search + location.hash) return;
    if (replace) history.replaceState(null, "", url); else history.pushState(null, "", url);
  }

  function syncControls() {
    form.indicator.value = state.indicator;
    form.year_from.value = String(state.year_from);
    form.year_to.value = String(state.year_to);
  }

  // ---- tree ---------------------------------------------------------------------------------
  const level = el => Number(el.getAttribute("aria-level"));
  const items = () => Array.from(tree.querySelectorAll('[role="treeitem"]'));
  const itemFor = id => items().find(el => el.dataset.node === id) || null;

  function makeItem(child, setsize, pos) {
    const el = document.createElement("div");
    el.setAttribute("role", "treeitem");
    el.dataset.node = child.id;
    el.setAttribute("aria-level", String(child.level));
    el.setAttribute("aria-setsize", String(setsize));
    el.setAttribute("aria-posinset", String(pos));
    if (child.has_children) el.setAttribute("aria-expanded", "false");
    el.setAttribute("aria-selected", child.id === state.node ? "true" : "false");
    el.tabIndex = -1;
    const twisty = document.createElement("span");
    twisty.className = "twisty";
    twisty.setAttribute("aria-hidden", "true");
    el.append(twisty, child.label);
    return el;
  }

  function descendants(item) {
    const out = [];
    for (let n = item.nextElementSibling; n && level(n) > level(item); n = n.nextElementSibling) out.push(n);
    return out;
  }

  function expand(item) {
    if (item.getAttribute("aria-expanded") !== "false") return item._loading || Promise.resolve();
    const token = (item._token || 0) + 1;
    item._token = token;
    item.setAttribute("aria-expanded", "true");
    item.setAttribute("aria-busy", "true");
    item._loading = fetch(`${root}/api/children?node=${encodeURIComponent(item.dataset.node)}`)
      .then(res => res.json())
      .then(data => {
        if (item._token !== token || !item.isConnected) return;
        item.removeAttribute("aria-busy");
        const frag = document.createDocumentFragment();
        data.children.forEach((c, i) => frag.append(makeItem(c, data.children.length, i + 1)));
        item.after(frag);
      })
      .catch(() => {
        if (item._token !== token) return;
        item.removeAttribute("aria-busy");
        item.setAttribute("aria-expanded", "false");
      })
      .finally(() => { if (item._token === token) item._loading = null; });
    return item._loading;
  }

  function collapse(item) {
    if (item.getAttribute("aria-expanded") !== "true") return;
    item._token = (item._token || 0) + 1;
    item._loading = null;
    item.removeAttribute("aria-busy");
    item.setAttribute("aria-expanded", "false");
    const gone = descendants(item);
    const hadFocus = gone.some(d => d === document.activeElement);
    gone.forEach(d => d.remove());
    if (hadFocus || !tree.querySelector('[role="treeitem"][tabindex="0"]')) focusItem(item, hadFocus);
  }

  function focusItem(item, moveFocus = true) {
    items().forEach(el => { el.tabIndex = el === item ? 0 : -1; });
    if (moveFocus) item.focus();
  }

  function markSelected() {
    items().forEach(el => el.setAttribute("aria-selected", el.dataset.node === state.node ? "true" : "false"));
    const sel = itemFor(state.node);
    if (sel) focusItem(sel, false);
  }

  async function reveal(id) {
    const parts = id && id !== WORLD ? id.split("/") : [];
    const chain = id ? [WORLD, ...parts.map((_, i) => parts.slice(0, i + 1).join("/"))] : [];
    for (const nodeId of chain) {
      const it = itemFor(nodeId);
      if (!it) break;
      await expand(it);
    }
    markSelected();
  }

  function selectNode(item) {
    focusItem(item);
    expand(item);
    if (state.node === item.dataset.node) return;
    state.node = item.dataset.node;
    state.page = 1;
    markSelected();
    commit(false);
    load();
  }

  tree.addEventListener("click", e => {
    const item = e.target.closest('[role="treeitem"]');
    if (!item) return;
    if (e.target.closest(".twisty") && item.hasAttribute("aria-expanded")) {
      if (item.getAttribute("aria-expanded") === "true") collapse(item); else expand(item);
      return;
    }
    selectNode(item);
  });

  tree.addEventListener("keydown", e => {
    const item = e.target.closest('[role="treeitem"]');
    if (!item) return;
    const all = items();
    const i = all.indexOf(item);
    const expanded = item.getAttribute("aria-expanded");
    switch (e.key) {
      case "ArrowDown": if (all[i + 1]) focusItem(all[i + 1]); break;
      case "ArrowUp": if (i > 0) focusItem(all[i - 1]); break;
      case "ArrowRight":
        if (expanded === "false") expand(item);
        else if (expanded === "true" && all[i + 1] && level(all[i + 1]) > level(item)) focusItem(all[i + 1]);
        break;
      case "ArrowLeft":
        if (expanded === "true") collapse(item);
        else {
          const parent = all.slice(0, i).reverse().find(el => level(el) < level(item));
          if (parent) focusItem(parent);
        }
        break;
      case "Home": focusItem(all[0]); break;
      case "End": focusItem(all[all.length - 1]); break;
      case "Enter": case " ": selectNode(item); break;
      default: return;
    }
    e.preventDefault();
  });

  // ---- indicator and time window --------------------------------------------------------------
  form.addEventListener("submit", e => e.preventDefault());
  form.addEventListener("change", () => {
    state.indicator = form.indicator.value;
    state.year_from = Number(form.year_from.value);
    state.year_to = Number(form.year_to.value);
    const year = Number(state.sort);
    if (/^\d{4}$/.test(state.sort) && (year < state.year_from || year > state.year_to)) {
      state.sort = "";
      state.dir = "";
    }
    state.page = 1;
    commit(false);
    load();
  });

  // ---- tabs ---------------------------------------------------------------------------------
  function showTab() {
    tabs.forEach(t => {
      const on = t.id === "tab-" + state.view;
      t.setAttribute("aria-selected", on ? "true" : "false");
      t.tabIndex = on ? 0 : -1;
      document.getElementById(t.getAttribute("aria-controls")).hidden = !on;
    });
  }

  function selectTab(view) {
    if (view === state.view) return;
    state.view = view;
    state.sort = "";
    state.dir = "";
    state.page = 1;
    showTab();
    commit(false);
    load();
  }

  tabs.forEach(t => t.addEventListener("click", () => selectTab(t.id.slice(4))));
  document.getElementById("views").addEventListener("keydown", e => {
    const i = tabs.indexOf(e.target);
    if (i < 0) return;
    const next = {ArrowRight: (i + 1) % tabs.length, ArrowLeft: (i + tabs.length - 1) % tabs.length,
                  Home: 0, End: tabs.length - 1}[e.key];
    if (next === undefined) return;
    e.preventDefault();
    tabs[next].focus();
    selectTab(tabs[next].id.slice(4));
  });

  // ---- results: sorting and pages -------------------------------------------------------------
  document.querySelector(".data-pane").addEventListener("click", e => {
    const sortBtn = e.target.closest("button[data-sort]");
    if (sortBtn) {
      const th = sortBtn.closest("th");
      state.sort = sortBtn.dataset.sort;
      state.dir = th.getAttribute("aria-sort") === "ascending" ? "desc" : "asc";
      state.page = 1;
      commit(false);
      load();
      return;
    }
    const pageBtn = e.target.closest("button[data-page]");
    if (pageBtn && !pageBtn.disabled) {
      state.page = Number(pageBtn.dataset.page);
      commit(false);
      load();
    }
  });

  async function load() {
    const seq = ++loadSeq;
    document.querySelectorAll('[role="tabpanel"]').forEach(p => {
      p.replaceChildren();
      p.removeAttribute("aria-busy");
    });
    if (!state.node) {
      status.textContent = "Select World, a continent or a country in the tree to show data.";
      return;
    }
    const label = state.node.split("/").pop();
    status.textContent = `Selected: ${label}`;
    const panel = document.getElementById("panel-" + state.view);
    panel.setAttribute("aria-busy", "true");
    const loading = document.createElement("p");
    loading.className = "loading";
    loading.textContent = "Loading…";
    panel.append(loading);
    const q = new URLSearchParams({node: state.node, indicator: state.indicator, year_from: String(state.year_from),
                                   year_to: String(state.year_to), view: state.view, page: String(state.page)});
    if (state.sort) { q.set("sort", state.sort); q.set("dir", state.dir); }
    let html;
    try {
      html = await (await fetch(`${root}/api/results?${q}`)).text();
    } catch (err) {
      html = '<p class="error" role="alert">The data could not be loaded. Try again.</p>';
    }
    if (seq !== loadSeq) return;
    panel.innerHTML = html;
    panel.removeAttribute("aria-busy");
  }

  // ---- start and history ----------------------------------------------------------------------
  function restore() {
    readUrl();
    syncControls();
    showTab();
    reveal(state.node);
    load();
  }

  window.addEventListener("popstate", restore);
  readUrl();
  if (state.node) commit(true);
  restore();
})();
