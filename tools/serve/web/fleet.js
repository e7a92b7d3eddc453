// The fleet's overview of `ledger-query serve --fleet DIR`: one row per
// cluster's copy from /ledger/v1/clusters (tools/serve/fleet_overview.h):
// its last record and how far behind the clock, whether it is signed and
// verified, its open findings by type (each a link into that cluster's
// findings list), its pending workloads, and per resource its ClusterQueues'
// reserved and held quantities against nominal as bars. A cluster's name opens
// its own view at /clusters/NAME/. Plain JavaScript, no external files.
//
// For tests the DOM carries the figures: tr[data-cluster, data-last-seq,
// data-pending, data-findings-count] per cluster, li[data-type, data-count]
// per finding type, .fleet-resource[data-resource, data-nominal,
// data-reserved, data-held] per resource, body[data-clusters] (rows drawn),
// body[data-ready="1"] once the first load has finished (failed or not), then
// body[data-table-bottom] (px: where the last cluster's row ends) and
// body[data-load-ms] (performance.now(): what tools/bench/web_load.py times).
// Every REFRESH_MS (while the tab is visible) it loads the rows again.
"use strict";

(() => {
  const REFRESH_MS = 5000;
  const $ = (id) => document.getElementById(id);

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  function setError(error) {
    const box = $("errors");
    box.replaceChildren(...(error ? [el("div", {class: "error"}, error.message)] : []));
    box.dataset.errorCount = error ? "1" : "0";
  }

  async function loadClusters() {
    const response = await fetch("/ledger/v1/clusters", {headers: {Accept: "application/json"}});
    const body = await response.json().catch(() => null);
    if (!response.ok) {
      throw new Error(`GET /ledger/v1/clusters: ${body && body.message || response.status}`);
    }
    return body;
  }

  // "3d 4h", "5m 10s", "12s": how far a copy's last record is behind the clock.
  function behind(seconds) {
    if (seconds === null || seconds === undefined) return "";
    const s = Math.max(0, Number(seconds));
    const units = [["d", 86400], ["h", 3600], ["m", 60], ["s", 1]];
    const parts = [];
    let left = s;
    for (const [name, size] of units) {
      if (left >= size || (parts.length === 0 && size === 1)) {
        parts.push(`${Math.floor(left / size)}${name}`);
        left %= size;
      }
      if (parts.length === 2) break;
    }
    return `${parts.join(" ")} behind`;
  }

  function clusterHref(cluster) {
    return `/clusters/${encodeURIComponent(cluster)}/`;
  }

  function lastRecordCell(c) {
    if (!c.lastTime) return el("td", {class: "muted"}, "no record yet");
    return el("td", {}, el("span", {class: "mono"}, c.lastTime), ` seq ${c.lastSeq}`,
              el("br"), el("span", {class: "muted"}, behind(c.behindSeconds)));
  }

  function proofCell(c) {
    const signature = c.signed === undefined ? "" : (c.signed ? "signed" : "unsigned");
    let verified = "never verified";
    if (c.verifyOk === true) verified = `verified up to seq ${c.verifiedUpTo}`;
    if (c.verifyOk === false) verified = `verify FAILED (seq ${c.verifiedUpTo})`;
    return el("td", {class: c.verifyOk === false ? "fleet-failed" : ""}, signature,
              signature ? el("br") : null, el("span", {class: "muted"}, verified));
  }

  function findingsCell(c) {
    const types = Object.entries(c.findings || {});
    const total = types.reduce((n, [, count]) => n + count, 0);
    if (total === 0) return el("td", {"data-findings-count": 0, class: "muted"}, "none");
    const base = clusterHref(c.cluster);
    return el("td", {"data-findings-count": total},
              el("ul", {class: "finding-types"}, types.map(([type, count]) =>
                el("li", {"data-type": type, "data-count": count},
                   el("a", {href: `${base}?finding=${encodeURIComponent(type)}#findings`},
                      `${type} ${count}`)))));
  }

  function bar(r) {
    const pct = (share) => `${Math.min(100, Math.max(0, (share || 0) * 100)).toFixed(1)}%`;
    const over = (r.reservedShare || 0) > 1 || (r.heldShare || 0) > 1;
    const figures = `${r.reserved ?? "?"}, ${r.held ?? "?"} / ${r.nominal ?? "?"}`;
    return el("div", {class: "fleet-resource", "data-resource": r.resource,
                      "data-nominal": r.nominal, "data-reserved": r.reserved, "data-held": r.held,
                      title: `${r.resource}: reserved ${r.reserved}, held ${r.held}, ` +
                             `nominal ${r.nominal}`},
              el("span", {class: "fleet-resource-name"}, r.resource),
              el("span", {class: `fleet-bar${over ? " over" : ""}`},
                 el("span", {class: "fleet-bar-reserved", style: `width: ${pct(r.reservedShare)}`}),
                 el("span", {class: "fleet-bar-held", style: `width: ${pct(r.heldShare)}`})),
              el("span", {class: "mono"}, figures));
  }

  function row(c) {
    return el("tr", {"data-cluster": c.cluster, "data-last-seq": c.lastSeq,
                     "data-pending": c.pending},
              el("th", {scope: "row"}, el("a", {href: clusterHref(c.cluster)}, c.cluster),
                 el("br"), el("span", {class: "muted"}, `${c.clusterQueues} ClusterQueues`)),
              lastRecordCell(c), proofCell(c), findingsCell(c),
              el("td", {class: "num"}, c.pending),
              el("td", {}, (c.resources || []).map(bar)));
  }

  async function load() {
    try {
      const fleet = await loadClusters();
      $("clusters").tBodies[0].replaceChildren(...fleet.clusters.map(row));
      $("fleet-now").textContent =
          `${fleet.clusters.length} clusters; the clock: ${fleet.now}`;
      document.body.dataset.clusters = String(fleet.clusters.length);
      setError(null);
    } catch (err) {
      setError(err);
    }
  }

  async function start() {
    await load();
    const table = $("clusters").getBoundingClientRect();
    document.body.dataset.tableBottom = String(Math.ceil(table.bottom + window.scrollY));
    document.body.dataset.loadMs = String(Math.round(performance.now()));
    document.body.dataset.ready = "1";
    setInterval(() => { if (!document.hidden) load(); }, REFRESH_MS);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
