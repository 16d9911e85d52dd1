// sgr-rig report: sortable tables and the audit form. No external requests, no inline script.
"use strict";

function cellKey(row, index, numeric) {
  const cell = row.cells[index];
  const raw = cell ? (cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent.trim()) : "";
  if (!numeric) return raw.toLowerCase();
  const n = parseFloat(raw);
  return Number.isNaN(n) ? -Infinity : n;
}

function makeSortable(table) {
  const headers = Array.from(table.tHead ? table.tHead.rows[0].cells : []);
  headers.forEach((th, index) => {
    const button = th.querySelector("button.sort");
    if (!button) return;
    button.addEventListener("click", () => {
      const ascending = th.getAttribute("aria-sort") !== "ascending";
      headers.forEach((h) => h.removeAttribute("aria-sort"));
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      const numeric = th.dataset.kind === "num";
      const body = table.tBodies[0];
      const rows = Array.from(body.rows);
      rows.sort((a, b) => {
        const x = cellKey(a, index, numeric), y = cellKey(b, index, numeric);
        const order = x < y ? -1 : x > y ? 1 : 0;
        return ascending ? order : -order;
      });
      rows.forEach((r) => body.appendChild(r));
    });
  });
}

function setupAudit() {
  const form = document.getElementById("audit-form");
  if (!form) return;
  if (window.location.protocol === "file:") {
    document.getElementById("audit-fields").disabled = true;
    document.getElementById("audit-static").hidden = false;
  }
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("table.sortable").forEach(makeSortable);
  setupAudit();
});
