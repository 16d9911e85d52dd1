// The advanced search: every field of the builder (outside the form, so never submitted itself) writes its clause
// into the query box (FIELD:value, a phrase quoted, years as a PUB_YEAR range), ANDed in the order of the fields.
// The query box can be edited by hand afterwards; editing a field builds it again.
(function () {
  "use strict";
  const builder = document.getElementById("builder");
  const box = document.getElementById("query");
  const $ = id => document.getElementById(id);
  const quoted = v => /[\s:()"]/.test(v) ? '"' + v.replace(/"/g, "") + '"' : v;

  function build() {
    const parts = [];
    const terms = $("adv-terms").value.trim();
    if (terms) parts.push(terms);
    for (const id of ["adv-title", "adv-abstract", "adv-author", "adv-journal"]) {
      const el = $(id);
      const value = el.value.trim().replace(/\s+/g, " ");
      if (!value) continue;
      parts.push(el.dataset.clause + ":" + (id === "adv-author" ? '"' + value.replace(/"/g, "") + '"' : quoted(value)));
    }
    const from = $("adv-year-from").value.trim(), to = $("adv-year-to").value.trim();
    if (from || to) parts.push("PUB_YEAR:[" + (from || builder.dataset.first) + " TO " + (to || builder.dataset.last) + "]");
    if ($("adv-type").value) parts.push("PUB_TYPE:" + $("adv-type").value);
    if ($("adv-oa").checked) parts.push("OPEN_ACCESS:y");
    box.value = parts.join(" AND ");
  }

  for (const el of document.querySelectorAll("#builder input, #builder select")) {
    el.addEventListener("input", build);
    el.addEventListener("change", build);
  }
  build();
})();
