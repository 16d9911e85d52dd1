// Page-side observer of the sgr-rig recorder (an init script; idempotent).
// Reports user events, same-document navigations and typed secrets through the exposed binding,
// tracks DOM quiet, and answers `collect(opts)`: the
// whole retrieval state in one call, walking open shadow roots and same-origin iframes. Password
// values never leave the page except as `secret` (kept in the recorder's memory for scrubbing,
// never written).
(() => {
  const BINDING = "__sgrRecorderEvent";
  // Once per document: a popup's window keeps its properties from its initial about:blank document
  // when it navigates to a same-origin page, so an observer left on the window may watch a dead document.
  if (window.__sgrRec && window.__sgrRec.document === document) return;
  const clock = () => performance.timeOrigin + performance.now();
  const rec = { lastMutation: clock(), document };
  try {
    Object.defineProperty(window, "__sgrRec", { value: rec, enumerable: false, configurable: true });
  } catch (e) {
    return;
  }

  const send = (ev) => {
    const fn = window[BINDING];
    if (typeof fn !== "function") return;
    ev.url = location.href;
    ev.top = window === window.top;
    ev.t = clock();
    try {
      const p = fn(ev);
      if (p && p.catch) p.catch(() => {});
    } catch (e) {}
  };

  // ---- pending work: short timers, animation frames, fetch (with its body read) and XHR --------------
  // A page with none of these pending and no DOM mutation since collect() began is settled.
  const SHORT_TIMER_MS = 1000;
  const requests = new Set(); // pending fetches, body reads and XHRs, by start time
  const timers = new Set(), frames = new Set();
  rec.fetching = (staleMs, freshSince) => {
    // older requests are long-lived (long polls, streams): ignored, unless the action under way started them
    const since = clock() - (staleMs || 3000);
    let n = 0;
    for (const r of requests) if (r.start > since || (freshSince != null && r.start >= freshSince)) n++;
    return n;
  };
  rec.pending = (staleMs, freshSince) => timers.size + frames.size + rec.fetching(staleMs, freshSince);
  const W = window, origSetTimeout = W.setTimeout, origClearTimeout = W.clearTimeout;
  const origRaf = W.requestAnimationFrame, origCancelRaf = W.cancelAnimationFrame;
  W.setTimeout = function (fn, ms, ...args) {
    if (typeof fn !== "function" || Number(ms) > SHORT_TIMER_MS) return origSetTimeout.call(W, fn, ms, ...args);
    const id = origSetTimeout.call(W, function () { timers.delete(id); return fn.apply(this, arguments); }, ms, ...args);
    timers.add(id);
    return id;
  };
  W.clearTimeout = function (id) { timers.delete(id); return origClearTimeout.call(W, id); };
  W.requestAnimationFrame = function (fn) {
    const id = origRaf.call(W, function () { frames.delete(id); return fn.apply(this, arguments); });
    frames.add(id);
    return id;
  };
  W.cancelAnimationFrame = function (id) { frames.delete(id); return origCancelRaf.call(W, id); };
  const track = (p) => {
    const r = { start: clock() };
    requests.add(r);
    const end = () => requests.delete(r);
    p.then(end, end);
    return p;
  };
  if (W.fetch) {
    const origFetch = W.fetch;
    W.fetch = function () { return track(origFetch.apply(this, arguments)); };
  }
  if (W.Response) {
    for (const m of ["json", "text", "blob", "arrayBuffer", "formData"]) {
      const orig = Response.prototype[m];
      if (orig) Response.prototype[m] = function () { return track(orig.apply(this, arguments)); };
    }
  }
  if (W.XMLHttpRequest) {
    const origSend = XMLHttpRequest.prototype.send;
    XMLHttpRequest.prototype.send = function () {
      const r = { start: clock() };
      requests.add(r);
      this.addEventListener("loadend", () => origSetTimeout.call(W, () => requests.delete(r), 0), { once: true });
      return origSend.apply(this, arguments);
    };
  }

  // ---- DOM quiet -------------------------------------------------------------------------------
  const mo = new MutationObserver(() => { rec.lastMutation = clock(); });
  const watch = (root) => mo.observe(root, { subtree: true, childList: true, attributes: true, characterData: true });
  watch(document);

  // ---- selectors and names -----------------------------------------------------------------------
  const squash = (s, n) => (s || "").replace(/\s+/g, " ").trim().slice(0, n || 80);
  const quoteSel = (s) => JSON.stringify(s);
  const NESTED = new Set(["group", "tree", "treeitem", "listbox", "menu", "tablist", "grid"]);
  const ownText = (el) => {
    let s = "";
    for (const n of el.childNodes) {
      if (n.nodeType === 3) s += n.nodeValue;
      else if (n.nodeType === 1 && !NESTED.has(n.getAttribute("role")) && !/^(UL|OL|SCRIPT|STYLE)$/.test(n.tagName))
        s += " " + ownText(n);
    }
    return s;
  };
  const byId = (el, id) => {
    const root = el.getRootNode();
    return root.getElementById ? root.getElementById(id) : document.getElementById(id);
  };
  const nameOf = (el) => {
    const label = el.getAttribute("aria-label");
    if (label) return squash(label);
    const by = el.getAttribute("aria-labelledby");
    if (by) {
      const t = by.split(/\s+/).map((id) => { const r = byId(el, id); return r ? r.textContent : ""; }).join(" ");
      if (squash(t)) return squash(t);
    }
    if (el.tagName === "DETAILS") {
      const s = el.querySelector(":scope > summary");
      return squash(s ? s.textContent : "");
    }
    if (el.tagName === "INPUT" && /^(submit|button|reset)$/i.test(el.type)) return squash(el.value);
    if (el.labels && el.labels.length) return squash(el.labels[0].textContent);
    return squash(ownText(el)) || squash(el.getAttribute("title") || el.getAttribute("placeholder") || "");
  };
  const IMPLICIT = { A: "link", BUTTON: "button", DETAILS: "group", SUMMARY: "button", OPTION: "option", LI: "listitem", TR: "row", SELECT: "combobox", TEXTAREA: "textbox" };
  const roleOf = (el) => {
    const r = (el.getAttribute("role") || "").trim().split(/\s+/)[0];
    if (r) return r;
    if (el.tagName === "INPUT") {
      const t = (el.type || "text").toLowerCase();
      return { checkbox: "checkbox", radio: "radio", submit: "button", button: "button", reset: "button", range: "slider", number: "spinbutton" }[t] || "textbox";
    }
    return IMPLICIT[el.tagName] || el.tagName.toLowerCase();
  };
  const controlKey = (el) => el.getAttribute("name") || el.id || nameOf(el);
  const framePrefix = () => {
    try {
      const fe = window.frameElement;
      if (!fe) return "";
      return fe.ownerDocument.defaultView.__sgrRec.selectorOf(fe) + " >> internal:control=enter-frame >> ";
    } catch (e) {
      return "";
    }
  };
  const selectorOf = (el) => {
    const tag = el.tagName.toLowerCase();
    let sel;
    if (el.id && el.getRootNode().querySelectorAll("#" + CSS.escape(el.id)).length === 1) sel = "#" + CSS.escape(el.id);
    else if (/^(input|select|textarea)$/.test(tag) && el.getAttribute("name")) {
      sel = `${tag}[name=${quoteSel(el.getAttribute("name"))}]`;
      if (/^(checkbox|radio)$/i.test(el.type)) sel += `[value=${quoteSel(el.value)}]`;
    } else {
      const role = roleOf(el), name = nameOf(el);
      if (name && (el.hasAttribute("role") || /^(a|button|summary|input)$/.test(tag))) sel = `role=${role}[name=${quoteSel(name)}]`;
      else if (name && name.length <= 40) sel = `text=${quoteSel(name)}`;
      else {
        const parts = [];
        for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
          const sibs = e.parentElement ? Array.from(e.parentElement.children).filter((c) => c.tagName === e.tagName) : [];
          parts.unshift(sibs.length > 1 ? `${e.tagName.toLowerCase()}:nth-of-type(${sibs.indexOf(e) + 1})` : e.tagName.toLowerCase());
        }
        sel = parts.join(" > ");
      }
    }
    return framePrefix() + sel;
  };
  rec.selectorOf = selectorOf;

  // ---- events ------------------------------------------------------------------------------------
  const seen = new WeakSet();
  const ACTIONABLE = "a,button,input,select,textarea,label,summary,option,details,[role],[onclick],[tabindex]";
  const KEYS = /^(Enter|Escape|Tab|ArrowUp|ArrowDown|ArrowLeft|ArrowRight|PageUp|PageDown|Home|End| )$/;
  // A password field by its type, or a text field that is one by its autocomplete token (a visible password).
  const isPassword = (el) => el.tagName === "INPUT" && ((el.type || "").toLowerCase() === "password"
    || /\b(current|new)-password\b/i.test(el.getAttribute("autocomplete") || ""));
  const valueOf = (el) => {
    if (el.tagName === "SELECT") return el.multiple ? Array.from(el.selectedOptions).map((o) => o.value) : el.value;
    if (/^(checkbox|radio)$/i.test(el.type || "")) return el.checked ? el.value : null;
    if (isPassword(el)) return el.value ? "[redacted]" : "";
    return el.value;
  };
  const onEvent = (e) => {
    if (seen.has(e)) return;
    seen.add(e);
    const path = e.composedPath();
    const origin = path[0];
    if (!origin || origin.nodeType !== 1) return;
    const ev = { type: e.type, trusted: e.isTrusted };
    if (e.type === "click") {
      const el = path.find((n) => n.nodeType === 1 && n.matches && n.matches(ACTIONABLE)) || origin;
      ev.target = selectorOf(el);
      ev.tag = el.tagName.toLowerCase();
      ev.kind = (el.type || "").toLowerCase();
    } else if (e.type === "keydown") {
      if (!KEYS.test(e.key) && !e.ctrlKey && !e.metaKey && !e.altKey) return;
      const mods = ["ctrlKey:Control", "altKey:Alt", "metaKey:Meta", "shiftKey:Shift"].filter((m) => e[m.split(":")[0]]).map((m) => m.split(":")[1]);
      if (/^(Control|Alt|Meta|Shift)$/.test(e.key)) return;
      ev.target = selectorOf(origin);
      ev.value = mods.concat([e.key === " " ? "Space" : e.key]).join("+");
    } else if (e.type === "submit") {
      ev.target = selectorOf(origin);
    } else {
      if (!/^(INPUT|SELECT|TEXTAREA)$/.test(origin.tagName)) return;
      ev.target = selectorOf(origin);
      ev.tag = origin.tagName.toLowerCase();
      ev.kind = (origin.type || "").toLowerCase();
      ev.key = controlKey(origin);
      ev.value = valueOf(origin);
      if (/^(checkbox|radio)$/.test(ev.kind)) { ev.checked = origin.checked; ev.value = origin.value; }
      if (isPassword(origin)) { ev.password = true; ev.secret = origin.value; }
    }
    send(ev);
  };
  const TYPES = ["click", "input", "change", "submit", "keydown"];
  const listen = (target) => TYPES.forEach((t) => target.addEventListener(t, onEvent, true));
  listen(window);
  const attach = Element.prototype.attachShadow;
  Element.prototype.attachShadow = function (init) {
    const root = attach.call(this, init);
    try { watch(root); if (init && init.mode === "open") listen(root); } catch (e) {}
    return root;
  };
  for (const m of ["pushState", "replaceState"]) {
    const orig = history[m];
    history[m] = function () {
      const r = orig.apply(this, arguments);
      send({ type: m, value: location.href });
      return r;
    };
  }
  window.addEventListener("beforeunload", () => { rec.unloading = clock(); }, true);
  window.addEventListener("hashchange", () => send({ type: "hashchange", value: location.hash }), true);
  window.addEventListener("popstate", () => send({ type: "popstate", value: location.href }), true);

  // ---- state collection ---------------------------------------------------------------------------
  const SKIP_INPUT = /^(submit|button|reset|image|file)$/;
  const visible = (el) => (el.checkVisibility ? el.checkVisibility() : true);

  const tick = () => new Promise((resolve) => origSetTimeout.call(W, resolve, 0));

  rec.collect = async (opts) => {
    const t0 = clock();
    await tick(); // let tasks the last action queued run first (a form submission starts its navigation)
    if (rec.unloading && clock() - rec.unloading < 2000) return { url: location.href, quiet: 0, busy: true, partial: true, navigating: true };
    const roots = [], specials = new Set();
    const visit = (root) => {
      roots.push(root);
      for (const el of root.querySelectorAll("*")) {
        if (el.shadowRoot) { specials.add(el); visit(el.shadowRoot); }
        if (el.tagName === "IFRAME" || el.tagName === "FRAME") {
          let d = null;
          try { d = el.contentDocument; } catch (e) {}
          if (d && d.documentElement) { specials.add(el); visit(d); }
        }
      }
    };
    visit(document);

    let last = rec.lastMutation, loading = document.readyState === "loading", work = rec.pending(opts.staleMs, opts.freshSince);
    let fetching = rec.fetching(opts.staleMs, opts.freshSince);
    for (const root of roots) {
      if (root.nodeType !== 9 || root === document) continue;
      const r = root.defaultView && root.defaultView.__sgrRec;
      if (r && r.lastMutation > last) last = r.lastMutation;
      if (r) { work += r.pending(opts.staleMs, opts.freshSince); fetching += r.fetching(opts.staleMs, opts.freshSince); }
      if (root.readyState === "loading") loading = true;
    }
    // DOM quiet counts from the settle's start at the earliest: what an action scheduled shortly (a timer) may
    // not have run yet, above all in a renderer a busy machine runs late.
    const quiet = loading ? 0 : clock() - Math.max(last, opts.since || 0);
    const busy = loading || work > 0 || last > t0;
    if (busy && opts.minQuiet && quiet < opts.minQuiet) return { url: location.href, quiet, busy, fetching, partial: true };

    const controls = [], aria = [];
    for (const root of roots) {
      for (const el of root.querySelectorAll("input,select,textarea")) {
        const kind = el.tagName === "INPUT" ? (el.type || "text").toLowerCase() : el.tagName.toLowerCase();
        if (SKIP_INPUT.test(kind)) continue;
        const c = { k: controlKey(el) || "", t: kind };
        if (kind === "checkbox" || kind === "radio") { c.v = el.value; c.on = el.checked; }
        else if (kind === "select") c.v = el.multiple ? Array.from(el.selectedOptions).map((o) => o.value) : el.value;
        else if (isPassword(el)) c.v = el.value ? "[redacted]" : "";
        else c.v = el.value;
        if (kind === "select" && el.multiple) c.t = "select-multiple";
        controls.push(c);
      }
      for (const el of root.querySelectorAll("[aria-selected],[aria-expanded],[aria-pressed],[aria-checked],details")) {
        const st = [];
        const a = (n) => el.getAttribute(n);
        if (a("aria-selected") === "true") st.push("selected");
        if (a("aria-checked") === "true") st.push("checked"); else if (a("aria-checked") === "mixed") st.push("mixed");
        if (a("aria-pressed") === "true") st.push("pressed"); else if (a("aria-pressed") === "mixed") st.push("mixed");
        if (el.tagName === "DETAILS") st.push(el.open ? "expanded" : "collapsed");
        else if (a("aria-expanded") === "true") st.push("expanded");
        else if (a("aria-expanded") === "false") st.push("collapsed");
        if (st.length) aria.push({ r: roleOf(el), n: nameOf(el), s: st.join(" ") });
      }
    }

    const facts = {};
    const factOf = (el, f) => (f.attribute ? el.getAttribute(f.attribute) : squash(el.innerText || el.textContent, 400));
    for (const [name, f] of Object.entries(opts.facts || {})) {
      if (f.all) {  // every match, in page order (e.g. a table's visible column headers)
        let els = [];
        try { els = Array.from(document.querySelectorAll(f.selector)); } catch (e) {}
        facts[name] = els.length ? els.map((el) => factOf(el, f)).filter((v) => v !== null) : null;
        continue;
      }
      let el = null;
      try { el = document.querySelector(f.selector); } catch (e) {}
      facts[name] = el ? factOf(el, f) : null;
    }

    const out = { url: location.href, quiet, busy, fetching, controls, aria, facts };
    if (opts.text) out.text = textOf(document, specials);
    if (opts.html) {
      // recorders.redact.name_parts, base_name and secret_name, with the patterns they use
      const boundary = new RegExp(opts.secretBoundary, "g"), part = new RegExp(opts.secretPart), pair = new RegExp(opts.secretPair);
      const partsOf = (name) => name.replace(boundary, "_").toLowerCase().split(/[^a-z0-9]+/).filter((p) => p);
      const baseOf = (name) => {
        const ps = partsOf(name), kept = ps.filter((p, i) => !/^[0-9]+$/.test(p) && !(p === "v" && /^[0-9]+$/.test(ps[i + 1] || "")));
        return (kept.length > 1 && kept[0] === "x" ? kept.slice(1) : kept).join(" ");
      };
      const names = new Set((opts.secretNames || []).map(baseOf));
      const secretName = (name) => {
        const ps = partsOf(name);
        return names.has(baseOf(name)) || ps.some((p) => part.test(p)) || ps.slice(1).some((p, i) => pair.test(ps[i] + p));
      };
      out.html = serialize(document, secretName);
      // What a re-rendering of the HTML needs beside it, and whether it could show everything (canvas, video and
      // plugin content are not in any DOM).
      out.view = [innerWidth, innerHeight, Math.round(scrollX), Math.round(scrollY)];
      out.live = document.querySelector("canvas,video,embed,object") !== null;
    }
    return out;
  };

  // The live DOM as HTML: current values, checked and selected states (password and secret-named fields
  // left empty), open shadow roots as declarative <template shadowrootmode="open">, same-origin iframes
  // inlined as srcdoc. Re-parsing it shows the page as it was.
  const VOID = /^(area|base|br|col|embed|hr|img|input|link|meta|source|track|wbr)$/;
  const RAW = /^(script|style|xmp|iframe|noembed|noframes|plaintext|noscript)$/;
  const escText = (v) => v.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/\u00a0/g, "&nbsp;");
  const escAttr = (v) => v.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/\u00a0/g, "&nbsp;");
  const serialize = (doc, secretName) => {
    const out = [];
    const attr = (name, value) => out.push(" ", name, '="', escAttr(value), '"');
    const node = (n, rawText) => {
      if (n.nodeType === 3) { out.push(rawText ? n.nodeValue : escText(n.nodeValue)); return; }
      if (n.nodeType === 8) { out.push("<!--", n.nodeValue, "-->"); return; }
      if (n.nodeType === 10) { out.push("<!DOCTYPE ", n.name, ">"); return; }
      if (n.nodeType === 9 || n.nodeType === 11) { for (const c of n.childNodes) node(c, false); return; }
      if (n.nodeType !== 1) return;
      const tag = n.localName;
      const type = tag === "input" ? (n.type || "text").toLowerCase() : "";
      const secret = type === "password" || (tag === "input" && isPassword(n)) || secretName(n.getAttribute("name") || "");
      const check = type === "checkbox" || type === "radio";
      const liveAttr = tag === "input" ? /^(value|checked)$/ : tag === "option" ? /^selected$/ : null;
      let frameDoc = null;
      if (tag === "iframe" || tag === "frame") { try { frameDoc = n.contentDocument; } catch (e) {} }
      out.push("<", tag);
      for (const a of n.attributes) {
        if (liveAttr && liveAttr.test(a.name)) continue;
        if (frameDoc && a.name === "srcdoc") continue;
        attr(a.name, a.value);
      }
      if (tag === "input" && !secret && n.value !== "") attr("value", n.value);
      if (check && n.checked) attr("checked", "");
      if (tag === "option" && n.selected) attr("selected", "");
      if (frameDoc && frameDoc.documentElement) attr("srcdoc", serialize(frameDoc, secretName));
      out.push(">");
      if (VOID.test(tag)) return;
      if (n.shadowRoot) {
        out.push('<template shadowrootmode="open">');
        node(n.shadowRoot, false);
        out.push("</template>");
      }
      if (tag === "textarea") out.push(secret ? "" : escText(n.value));
      else if (tag === "template") node(n.content, false);
      else if (!frameDoc) for (const c of n.childNodes) node(c, RAW.test(tag));
      out.push("</", tag, ">");
    };
    node(doc, false);
    return out.join("");
  };

  // Visible text like innerText, but descending into open shadow roots (with slots) and same-origin iframes.
  const textOf = (doc, specials) => {
    const marked = new Set();
    for (const el of specials) {
      for (let p = el; p && !marked.has(p); p = p.parentNode || p.host) { if (p.nodeType === 1) marked.add(p); }
    }
    const SKIP = /^(SCRIPT|STYLE|TEMPLATE|NOSCRIPT)$/;
    const block = (el) => !(getComputedStyle(el).display || "").startsWith("inline");
    const children = (parent) => {
      let s = "";
      for (const ch of parent.childNodes) {
        if (ch.nodeType === 3) s += ch.nodeValue.replace(/\s+/g, " ");
        else if (ch.nodeType === 1 && !SKIP.test(ch.tagName)) {
          if (ch.tagName === "SLOT") {
            const assigned = ch.assignedNodes({ flatten: true });
            s += assigned.length ? assigned.map((n) => (n.nodeType === 3 ? n.nodeValue : n.nodeType === 1 ? node(n) : "")).join("") : children(ch);
          } else {
            const t = node(ch);
            if (t) s += block(ch) ? "\n" + t + "\n" : t;
          }
        }
      }
      return s;
    };
    const node = (el) => {
      if (!marked.has(el)) return visible(el) ? el.innerText || "" : "";
      if (!visible(el)) return "";
      if (el.shadowRoot && specials.has(el)) return children(el.shadowRoot);
      if (specials.has(el) && el.contentDocument) {
        const b = el.contentDocument.body;
        return b ? node(b) : "";
      }
      return children(el);
    };
    return doc.body ? node(doc.body) : "";
  };
})();
