// The ledger's web view: the state at a chosen moment and the usage over the
// ledger's whole range, read from ledger-query serve's JSON API on the same
// origin. Plain JavaScript, no external files: it works offline.
//
// First load: /range, then one /usage (the whole range, ~100-300 points per
// series) and one /state (the moment of ?at=, else now). Moving the moment
// reloads only /state; clicking a workload loads its /workload history and
// its /why timeline. After the first load, /findings (the charts' period and
// step) marks on every chart's time axis when findings opened and closed.
//
// For tests the DOM carries the numbers as attributes: every quota row
// (data-cq, data-flavor, data-resource, data-reserved, data-admitted,
// data-nominal, the state's own strings), #state[data-state-seq] once a state
// has loaded, #findings[data-findings-count], #errors[data-error-count],
// #charts[data-from, data-to, data-step] (the /usage asked for), a chart's
// held line (path.line.held[data-above]: the steps held is above reserved,
// drawn only for a series some pod held through ResourceClaims), the API
// requests made per endpoint (body[data-requests-state], ...) and
// body[data-ready="1"] once the first loads have finished (failed or not).
// #open-findings[data-open-findings] counts the findings in scope, with
// #finding-types li[data-type, data-count] per type, #findings[data-shown-count]
// the rows of the list, and a workload row with findings carries
// data-findings (their types); a folded queue's GPU line
// span.gpu-summary[data-gpu-reserved, data-gpu-nominal] and
// span.cq-flags[data-cq, data-pending, data-findings]; at the first load's
// end body[data-document-height] and body[data-findings-bottom] (px);
// #charts[data-finding-events] counts /findings' events, drawn per chart as
// path.finding-tick[data-time, data-change, data-count, data-types], one per
// step and change.
// Live refresh: every REFRESH_MS (while the tab is visible) it asks /range;
// when the ledger's last seq has grown it loads the range and the usage
// again, and the state too when the moment is `now`
// (body[data-refreshes] counts those reloads).
// ?at=T chooses the moment (RFC 3339, seq:N or now); ?workload=NS/NAME opens
// that workload's history; ?cq= and ?ns= narrow every table and chart to a
// ClusterQueue and a namespace; ?finding=TYPE lists the findings of one type.
// Under `serve --fleet` the page is one cluster's, at /clusters/NAME/: it reads
// that cluster's API under the same prefix, and its header links the fleet's
// overview (#fleet-link[data-cluster]).
"use strict";

(() => {
  const CLUSTER_BASE = (window.location.pathname.match(/^\/clusters\/[^/]+/) || [""])[0];
  const API = CLUSTER_BASE + "/ledger/v1";
  const SVG_NS = "http://www.w3.org/2000/svg";
  const MAX_WORKLOAD_ROWS = 500;
  const MAX_FINDING_ROWS = 1000;
  const MAX_OPEN_CHART_QUEUES = 4;
  // The server looks for the writer's new commits every second (serve's
  // followMs); polling a few times slower keeps the idle page's load light.
  const REFRESH_MS = 3000;
  // Usage steps the page picks from: the first at least range/200 long.
  const STEPS = [
    ["1m", 60], ["5m", 300], ["15m", 900], ["1h", 3600], ["6h", 21600], ["1d", 86400],
    ["1w", 604800],
  ];

  const $ = (id) => document.getElementById(id);

  const view = {
    range: null,          // {firstSeq, lastSeq, firstTime, lastTime} with firstMs/lastMs
    usage: null,          // the /usage answer, with fromMs/toMs/stepMs
    state: null,          // the /state answer shown
    at: null,             // the moment it was asked for (?at=)
    momentMs: null,       // the moment shown (the state's at.time)
    charts: [],           // {marker, marks, x: ms -> px, fromMs, toMs, bottom}
    findingTimes: null,   // /findings' events, with ms
    findingsLoaded: null, // {fromMs, step, lastMs}: the period and range they cover
    stateRequest: null,   // the AbortController of the /state request in flight
    stateGeneration: 0,
    workloadGeneration: 0,
    scope: {cq: "", ns: "", finding: ""},  // ?cq=, ?ns=, ?finding=
  };

  // ---- DOM helpers --------------------------------------------------------

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    setAttrs(node, attrs);
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG_NS, tag);
    setAttrs(node, attrs);
    for (const child of children.flat()) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  function setAttrs(node, attrs) {
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.setAttribute("class", value);
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
  }

  function fillBody(table, rows) {
    const body = table.tBodies[0];
    body.replaceChildren(...rows);
  }

  // ---- errors -------------------------------------------------------------

  // One message per source (range, usage, state, workload); a later success
  // of the same source clears it.
  const errors = new Map();

  function setError(source, error) {
    if (error) errors.set(source, error);
    else errors.delete(source);
    const box = $("errors");
    box.replaceChildren(...[...errors].map(([what, err]) =>
      el("div", {class: "error", "data-source": what},
         el("strong", {}, `${what}: `), err.message)));
    box.dataset.errorCount = String(errors.size);
  }

  class ApiError extends Error {}

  // GET a JSON answer of the API. A 4xx/5xx answer carries a Kubernetes
  // Status whose message, reason and code become the error's message.
  const requests = {};

  async function getJson(path, signal) {
    const endpoint = path.replace(/^\/|\?.*$/g, "");
    requests[endpoint] = (requests[endpoint] || 0) + 1;
    document.body.dataset[`requests${endpoint[0].toUpperCase()}${endpoint.slice(1)}`] =
        String(requests[endpoint]);
    let response;
    try {
      response = await fetch(API + path, {signal, headers: {Accept: "application/json"}});
    } catch (err) {
      if (err.name === "AbortError") throw err;
      throw new ApiError(`GET ${API}${path}: the server did not answer (${err.message})`);
    }
    const text = await response.text();
    let body = null;
    try {
      body = JSON.parse(text);
    } catch (err) {
      if (response.ok) throw new ApiError(`GET ${API}${path}: not JSON (${err.message})`);
    }
    if (!response.ok) {
      const status = body && typeof body === "object" ? body : {};
      const detail = status.message || text.trim() || response.statusText;
      const reason = status.reason ? ` ${status.reason}` : "";
      throw new ApiError(`GET ${API}${path}: HTTP ${response.status}${reason}: ${detail}`);
    }
    return body;
  }

  // ---- times and quantities -----------------------------------------------

  const isoSeconds = (ms) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
  const shortTime = (ms) => isoSeconds(ms).replace("T", " ").replace(/:00Z$|Z$/, "");

  // Time ticks at round UTC times, at most five per chart, so that the axis
  // reads (minutes, hours, days) without a label per step; the first label
  // and each midnight carry the date.
  const TICK_SECONDS = [60, 300, 900, 1800, 3600, 10800, 21600, 43200, 86400, 172800, 604800];
  function timeTicks(fromMs, toMs) {
    const span = Math.max(1, toMs - fromMs);
    let every = TICK_SECONDS.map((s) => s * 1000).find((t) => span / t <= 5);
    if (!every) every = 604800000 * Math.ceil(span / (5 * 604800000));
    const ticks = [];
    for (let t = Math.ceil(fromMs / every) * every; t <= toMs; t += every) ticks.push(t);
    return {every, ticks};
  }

  function tickLabel(ms, every, first) {
    const iso = isoSeconds(ms);
    const day = iso.slice(5, 10);
    const hm = iso.slice(11, 16);
    if (every >= 86400000) return day;
    return first || hm === "00:00" ? `${day} ${hm}` : hm;
  }

  function timeAxis(fromMs, toMs, x, top, bottom) {
    const {every, ticks} = timeTicks(fromMs, toMs);
    return {every, ticks, nodes: ticks.flatMap((ms, i) => [
      svg("line", {class: "grid", x1: x(ms), x2: x(ms), y1: top, y2: bottom}),
      svg("text", {class: "tick time", x: x(ms), y: bottom + 14, "text-anchor": "middle"},
          tickLabel(ms, every, i === 0)),
    ])};
  }

  const SUFFIX = {
    n: 1e-9, u: 1e-6, m: 1e-3, "": 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
    Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
  };

  // A Kubernetes quantity ("128Gi", "500m", "1.5", "1e3") as a number; NaN
  // when it is not one. For bars and axes only: the tables show the strings.
  function parseQuantity(text) {
    if (text === null || text === undefined) return NaN;
    const m = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/
        .exec(String(text).trim());
    if (!m) return NaN;
    if (m[2]) return Number(m[1] + m[2]);
    return Number(m[1]) * SUFFIX[m[3] || ""];
  }

  const trim = (n, digits) => String(Number(n.toFixed(digits)));

  // A number of the resource's units, short: binary units for memory.
  function formatAmount(value, resource) {
    if (!Number.isFinite(value)) return "?";
    const abs = Math.abs(value);
    if (/memory|storage|bytes/i.test(resource || "") && abs >= 1024) {
      for (const unit of ["Ei", "Pi", "Ti", "Gi", "Mi", "Ki"]) {
        if (abs >= SUFFIX[unit]) return trim(value / SUFFIX[unit], 2) + unit;
      }
    }
    for (const unit of ["E", "P", "T", "G", "M", "k"]) {
      if (abs >= SUFFIX[unit] * 10) return trim(value / SUFFIX[unit], 2) + unit;
    }
    return trim(value, 3);
  }

  const formatUsageMap = (map) =>
    Object.entries(map || {}).map(([resource, amount]) => `${resource} ${amount}`).join(", ");

  // ---- the moment -----------------------------------------------------------

  function momentFromUrl() {
    const at = new URLSearchParams(window.location.search).get("at");
    return at && at.trim() ? at.trim() : "now";
  }

  // The address names what is shown: ?at= the moment, ?workload= the panel.
  function syncUrl() {
    const url = new URL(window.location.href);
    if (view.at) url.searchParams.set("at", view.at);
    for (const key of ["cq", "ns", "finding"]) {
      if (view.scope[key]) url.searchParams.set(key, view.scope[key]);
      else url.searchParams.delete(key);
    }
    const panel = $("workload-panel");
    if (panel.hidden) url.searchParams.delete("workload");
    else url.searchParams.set("workload", panel.dataset.workload);
    window.history.replaceState(null, "", url);
  }

  function setupMomentControls() {
    const slider = $("moment-slider");
    const text = $("moment-text");
    slider.addEventListener("input", () => {
      const ms = Number(slider.value) * 1000;
      text.value = isoSeconds(ms);
      moveMarkers(ms);
    });
    slider.addEventListener("change", () => loadState(isoSeconds(Number(slider.value) * 1000)));
    $("moment").addEventListener("submit", (event) => {
      event.preventDefault();
      const at = text.value.trim();
      if (at) loadState(at);
    });
    $("moment-now").addEventListener("click", () => loadState("now"));
  }

  function showMoment(ms) {
    view.momentMs = ms;
    const slider = $("moment-slider");
    if (!slider.disabled) slider.value = String(Math.round(ms / 1000));
    moveMarkers(ms);
  }

  // ---- /range ---------------------------------------------------------------

  async function loadRange() {
    try {
      const range = await getJson("/range");
      range.firstMs = Date.parse(range.firstTime);
      range.lastMs = Date.parse(range.lastTime);
      if (!Number.isFinite(range.firstMs) || !Number.isFinite(range.lastMs)) {
        throw new ApiError(`GET ${API}/range: no times in ${JSON.stringify(range)}`);
      }
      view.range = range;
      setError("range", null);
      $("range").textContent = `seq ${range.firstSeq}–${range.lastSeq} · ` +
          `${range.firstTime} – ${range.lastTime}`;
      const slider = $("moment-slider");
      slider.min = String(Math.floor(range.firstMs / 1000));
      slider.max = String(Math.ceil(range.lastMs / 1000));
      slider.disabled = false;
      if (view.momentMs !== null) showMoment(view.momentMs);
      return range;
    } catch (err) {
      $("range").textContent = "range unknown";
      setError("range", err);
      return null;
    }
  }

  // ---- /usage and the charts ------------------------------------------------

  function usageQuery(range) {
    const span = Math.max(0, range.lastMs - range.firstMs) / 1000;
    const [step, seconds] = STEPS.find(([, s]) => s * 200 >= span) || STEPS[STEPS.length - 1];
    const stepMs = seconds * 1000;
    const fromMs = Math.floor(range.firstMs / stepMs) * stepMs;
    const toMs = Math.floor(range.lastMs / stepMs) * stepMs + stepMs;
    return {step, stepMs, fromMs, toMs};
  }

  async function loadUsage(range) {
    const section = $("charts");
    if (!range) {
      section.removeAttribute("aria-busy");
      return;
    }
    const q = usageQuery(range);
    $("usage-step").textContent = `(step ${q.step})`;
    section.dataset.from = isoSeconds(q.fromMs);
    section.dataset.to = isoSeconds(q.toMs);
    section.dataset.step = q.step;
    try {
      const usage = await getJson(`/usage?from=${encodeURIComponent(isoSeconds(q.fromMs))}` +
          `&to=${encodeURIComponent(isoSeconds(q.toMs))}&step=${q.step}`);
      usage.fromMs = Date.parse(usage.from) || q.fromMs;
      usage.toMs = Date.parse(usage.to) || q.toMs;
      usage.stepMs = q.stepMs;
      view.usage = usage;
      setError("usage", null);
      renderCharts(usage);
    } catch (err) {
      setError("usage", err);
      $("charts-body").replaceChildren(el("p", {class: "muted"}, "no usage series"));
    } finally {
      section.removeAttribute("aria-busy");
    }
  }

  const CHART = {width: 320, height: 120, left: 50, right: 8, top: 8, bottom: 20};

  // What the ledger did not see of the period (docs/reference.md
  // "Observation"): one line per gap, and one when the period starts before
  // its first record.
  function renderCoverage(usage) {
    const coverage = usage.coverage || {gaps: []};
    const lines = [];
    if (coverage.observedFrom && Date.parse(coverage.observedFrom) > usage.fromMs) {
      lines.push(`the ledger observed nothing before ${coverage.observedFrom} (its first record)`);
    }
    for (const gap of coverage.gaps || []) {
      lines.push(`the ledger did not observe ${(gap.resources || []).join(", ")} from ${gap.from} ` +
                 `to ${gap.to} (${gap.reason}); changes made then are recorded at the end of the gap`);
    }
    $("coverage").replaceChildren(...lines.map((text) => el("li", {class: "gap"}, text)));
  }

  function renderCharts(usage) {
    view.charts = [];
    renderCoverage(usage);
    const byQueue = new Map();
    for (const series of usage.series || []) {
      if (view.scope.cq && series.clusterQueue !== view.scope.cq) continue;
      if (!byQueue.has(series.clusterQueue)) byQueue.set(series.clusterQueue, []);
      byQueue.get(series.clusterQueue).push(series);
    }
    // More queues than a screen holds: each queue's charts fold under its
    // name (opened on demand), so the tables stay within a few screens.
    const folded = byQueue.size > MAX_OPEN_CHART_QUEUES;
    // A refresh redraws the charts: the queues opened by hand stay open.
    const opened = new Set([...document.querySelectorAll("details.cq-charts[open]")]
                               .map((d) => d.dataset.cq));
    const groups = [...byQueue].map(([queue, list]) =>
      el("details", {class: "cq-charts", "data-cq": queue,
                     open: folded && !opened.has(queue) ? null : ""},
         el("summary", {}, el("h3", {}, queue), gpuSummary(list),
            el("span", {class: "muted"}, ` · ${list.length} charts`),
            el("span", {class: "cq-flags", "data-cq": queue})),
         el("div", {class: "chart-row"}, list.map((series) => renderChart(usage, series)))));
    $("charts-body").replaceChildren(
        ...(groups.length ? groups : [el("p", {class: "muted"}, "no ClusterQueue has quota")]));
    if (view.momentMs !== null) moveMarkers(view.momentMs);
    markQueues();
  }

  // A queue's line also answers "what is wrong there now": its pending
  // workloads and its open findings at the moment shown (a link to the
  // findings list narrowed to it). Filled whenever the charts or the state
  // change, whichever loads last.
  function markQueues() {
    const spans = document.querySelectorAll("span.cq-flags");
    if (!view.state || !spans.length) return;
    const pending = new Map((view.state.clusterQueues || []).map(
        (cq) => [cq.name, Number((cq.workloads || {}).pending) || 0]));
    const findings = new Map();
    const workloads = workloadIndex();
    for (const f of view.state.findings || []) {
      const place = findingPlace(f, workloads);
      if (place.cq) findings.set(place.cq, (findings.get(place.cq) || 0) + 1);
    }
    for (const span of spans) {
      const cq = span.dataset.cq;
      const n = findings.get(cq) || 0;
      span.dataset.pending = String(pending.get(cq) || 0);
      span.dataset.findings = String(n);
      span.replaceChildren(...[
        pending.get(cq) ? el("span", {class: "muted"}, ` · ${pending.get(cq)} pending`) : null,
        n ? el("a", {class: "finding-mark", href: linkWith({cq}, "#findings")},
               ` ⚠ ${n} finding${n === 1 ? "" : "s"}`) : null,
      ].filter(Boolean));
    }
  }

  // A folded queue's line: its GPUs (resources named */gpu, all flavors) in
  // the last step, reserved and held against nominal, with a bar.
  function gpuSummary(list) {
    let reserved = 0, held = 0, nominal = 0, any = false;
    for (const series of list) {
      if (!/\/gpu$/.test(series.resource)) continue;
      const last = (series.points || [])[series.points.length - 1];
      if (!last) continue;
      any = true;
      reserved += Number(last.reserved) || 0;
      held += Number(last.held) || 0;
      nominal += Number(last.nominal) || 0;
    }
    if (!any) return null;
    const share = nominal > 0 ? Math.min(1, Math.max(reserved, held) / nominal) : 0;
    const fmt = (v) => (Math.round(v * 10) / 10).toString();
    return el("span", {class: "gpu-summary", "data-gpu-reserved": fmt(reserved),
                       "data-gpu-nominal": fmt(nominal)},
      el("span", {class: "bar"}, el("span", {class: "fill", style: `width:${(share * 100).toFixed(1)}%`})),
      ` GPUs in the last step: reserved ${fmt(reserved)}, held ${fmt(held)} of nominal ${fmt(nominal)}`);
  }

  // Step lines: each point is the mean over [time, time + step).
  function stepPath(points, key, x, y, toMs) {
    let d = "";
    points.forEach((p, i) => {
      const v = p[key];
      const x0 = x(p.ms);
      const x1 = x(i + 1 < points.length ? points[i + 1].ms : toMs);
      d += (i === 0 ? `M${x0.toFixed(1)},${y(v).toFixed(1)}` : `V${y(v).toFixed(1)}`) +
          `H${x1.toFixed(1)}`;
    });
    return d;
  }

  // Uncharged, shaded: the band from the reserved line up to the held line
  // where held is above it (empty elsewhere).
  function unchargedPath(points, x, y, toMs) {
    let d = "";
    points.forEach((p, i) => {
      if (!(p.held > p.reserved)) return;
      const x0 = x(p.ms).toFixed(1);
      const x1 = x(i + 1 < points.length ? points[i + 1].ms : toMs).toFixed(1);
      d += `M${x0},${y(p.reserved).toFixed(1)}V${y(p.held).toFixed(1)}H${x1}` +
          `V${y(p.reserved).toFixed(1)}Z`;
    });
    return d;
  }

  // Held (what pods held through ResourceClaims) is drawn for a series some
  // pod held in the range; data-above counts the steps it is above reserved.
  function heldLayers(points, x, y, toMs) {
    if (!points.some((p) => p.held > 0)) return [];
    const above = points.filter((p) => p.held > p.reserved).length;
    return [
      svg("path", {class: "band uncharged", d: unchargedPath(points, x, y, toMs)}),
      svg("path", {class: "line held", "data-above": above, d: stepPath(points, "held", x, y, toMs)}),
    ];
  }

  function renderChart(usage, series) {
    const points = (series.points || []).map((p) => ({
      ms: Date.parse(p.time),
      time: p.time,
      reserved: parseQuantity(p.reserved),
      admitted: parseQuantity(p.admitted),
      nominal: parseQuantity(p.nominal),
      // Absent from a server older than held: drawn as nothing held.
      held: parseQuantity(p.held ?? "0"),
      uncharged: parseQuantity(p.uncharged ?? "0"),
    }));
    const {width, height, left, right, top, bottom} = CHART;
    const fromMs = usage.fromMs;
    const toMs = usage.toMs;
    let max = 0;
    for (const p of points) {
      for (const v of [p.reserved, p.admitted, p.nominal, p.held]) {
        if (Number.isFinite(v)) max = Math.max(max, v);
      }
    }
    if (max <= 0) max = 1;
    max *= 1.08;
    const x = (ms) => left + (width - left - right) * (ms - fromMs) / Math.max(1, toMs - fromMs);
    const y = (v) => top + (height - top - bottom) * (1 - (Number.isFinite(v) ? v : 0) / max);
    const resource = series.resource;
    const readout = el("span", {class: "readout muted"});
    const marker = svg("line", {class: "marker", y1: top, y2: height - bottom, x1: -10, x2: -10});
    const marks = svg("g", {class: "finding-ticks"});
    const axis = timeAxis(fromMs, toMs, x, top, height - bottom);
    const plot = svg("svg", {
      viewBox: `0 0 ${width} ${height}`, width, height, role: "img",
      "aria-label": `${series.clusterQueue} ${series.flavor} ${resource}: reserved, admitted, nominal and held`,
    },
      svg("rect", {class: "plot", x: left, y: top, width: width - left - right,
                   height: height - top - bottom}),
      svg("line", {class: "axis", x1: left, x2: width - right, y1: y(0), y2: y(0)}),
      svg("text", {class: "tick", x: left - 4, y: y(0) + 4, "text-anchor": "end"}, "0"),
      svg("text", {class: "tick", x: left - 4, y: top + 8, "text-anchor": "end"},
          formatAmount(max / 1.08, resource)),
      svg("line", {class: "grid", x1: left, x2: width - right, y1: y(max / 1.08), y2: y(max / 1.08)}),
      axis.nodes,
      svg("path", {class: "line nominal", d: stepPath(points, "nominal", x, y, toMs)}),
      heldLayers(points, x, y, toMs),
      svg("path", {class: "line reserved", d: stepPath(points, "reserved", x, y, toMs)}),
      svg("path", {class: "line admitted", d: stepPath(points, "admitted", x, y, toMs)}),
      marks,
      marker);

    const timeAt = (event) => {
      const box = plot.getBoundingClientRect();
      const px = (event.clientX - box.left) * width / box.width;
      const ms = fromMs + (px - left) / (width - left - right) * (toMs - fromMs);
      return Math.min(Math.max(ms, fromMs), toMs);
    };
    plot.addEventListener("mousemove", (event) => {
      const ms = timeAt(event);
      const i = Math.min(points.length - 1, Math.max(0, Math.floor((ms - fromMs) / usage.stepMs)));
      const p = points[i];
      if (!p) return;
      readout.textContent = `${shortTime(p.ms)}: reserved ${formatAmount(p.reserved, resource)}, ` +
          `admitted ${formatAmount(p.admitted, resource)}, nominal ${formatAmount(p.nominal, resource)}` +
          (p.held > 0 || p.uncharged > 0
            ? `, held ${formatAmount(p.held, resource)}, uncharged ${formatAmount(p.uncharged, resource)}`
            : "");
    });
    plot.addEventListener("mouseleave", () => { readout.textContent = ""; });
    plot.addEventListener("click", (event) => {
      let ms = timeAt(event);
      if (view.range) ms = Math.min(Math.max(ms, view.range.firstMs), view.range.lastMs);
      loadState(isoSeconds(Math.round(ms / 1000) * 1000));
    });

    const figure = el("figure", {
      class: "chart", "data-cq": series.clusterQueue, "data-flavor": series.flavor,
      "data-resource": resource, "data-points": points.length,
      "data-tick-every": axis.every, "data-ticks": axis.ticks.join(" "),
    }, el("figcaption", {}, el("span", {class: "series-name"},
          // "-": held in a resource no single flavor of its admission charges.
          `${series.flavor === "-" ? "no single flavor" : series.flavor} · ${resource}`), " ",
          readout), plot);
    const chart = {marker, marks, x, fromMs, toMs, bottom: height - bottom};
    view.charts.push(chart);
    drawFindingTicks(chart);
    return figure;
  }

  function moveMarkers(ms) {
    for (const chart of view.charts) {
      const inside = ms >= chart.fromMs && ms <= chart.toMs;
      const px = inside ? chart.x(ms).toFixed(1) : -10;
      chart.marker.setAttribute("x1", px);
      chart.marker.setAttribute("x2", px);
      chart.marker.setAttribute("data-at", isoSeconds(ms));
    }
  }

  // ---- /findings: the findings on the charts' time line ---------------------

  // When findings opened and closed over the charts' period, at their step
  // (GET /findings, tools/query/findings_timeline.h). Loaded after the first
  // screen: it folds the period, which the first load does not wait for.
  // A refresh over the same period and step asks only from the step that
  // held the last record seen before, and keeps the events before it.
  async function loadFindingTimes(range) {
    if (!range) return;
    const q = usageQuery(range);
    const loaded = view.findingsLoaded;
    const tail = loaded && loaded.fromMs === q.fromMs && loaded.step === q.step;
    const fromMs = tail ? Math.max(q.fromMs, Math.floor(loaded.lastMs / q.stepMs) * q.stepMs)
                        : q.fromMs;
    try {
      const answer = await getJson(`/findings?from=${encodeURIComponent(isoSeconds(fromMs))}` +
          `&to=${encodeURIComponent(isoSeconds(q.toMs))}&step=${q.step}`);
      const events = (answer.events || []).map((e) => ({...e, ms: Date.parse(e.time)}));
      view.findingTimes = tail
        ? view.findingTimes.filter((e) => e.ms < fromMs).concat(events) : events;
      view.findingsLoaded = {fromMs: q.fromMs, step: q.step, lastMs: range.lastMs};
      setError("findings", null);
      $("charts").dataset.findingEvents = String(view.findingTimes.length);
      for (const chart of view.charts) drawFindingTicks(chart);
    } catch (err) {
      setError("findings", err);
    }
  }

  // One tick per step and change on the time axis: an opening filled, a
  // closing hollow; its title names the findings, a click shows the
  // findings list (of their type, when one) at a moment they were open.
  function drawFindingTicks(chart) {
    const buckets = new Map();
    for (const e of view.findingTimes || []) {
      if (!(e.ms >= chart.fromMs && e.ms <= chart.toMs)) continue;
      const key = `${e.ms} ${e.change}`;
      if (!buckets.has(key)) buckets.set(key, []);
      buckets.get(key).push(e);
    }
    const b = chart.bottom;
    chart.marks.replaceChildren(...[...buckets.values()].map((events) => {
      const first = events[0];
      const px = chart.x(first.ms);
      const types = [...new Set(events.map((e) => e.type))];
      const names = events.slice(0, 6).map((e) => `${e.type} ${e.object}`);
      if (events.length > names.length) names.push(`and ${events.length - names.length} more`);
      const tick = svg("path", {
        class: `finding-tick ${first.change}`, "data-time": first.time, "data-change": first.change,
        "data-count": events.length, "data-types": types.join(" "),
        d: `M${(px - 3.5).toFixed(1)},${b}L${(px + 3.5).toFixed(1)},${b}L${px.toFixed(1)},${b - 7}Z`,
      }, svg("title", {}, `${events.length} finding${events.length === 1 ? "" : "s"} ` +
                         `${first.change} from ${shortTime(first.ms)}: ${names.join("; ")}`));
      tick.addEventListener("click", (event) => {
        event.stopPropagation();
        setScope({finding: types.length === 1 ? types[0] : ""});
        loadState(`seq:${first.openSeq}`).then(() => { window.location.hash = "findings"; });
      });
      return tick;
    }));
  }

  // ---- /state ---------------------------------------------------------------

  async function loadState(at) {
    if (view.stateRequest) view.stateRequest.abort();
    const controller = new AbortController();
    view.stateRequest = controller;
    const generation = ++view.stateGeneration;
    const section = $("state");
    section.setAttribute("aria-busy", "true");
    $("moment-text").value = at;
    try {
      const state = await getJson(`/state?at=${encodeURIComponent(at)}`, controller.signal);
      if (generation !== view.stateGeneration) return;
      setError("state", null);
      view.at = at;
      syncUrl();
      renderState(state);
    } catch (err) {
      if (err.name === "AbortError" || generation !== view.stateGeneration) return;
      setError("state", err);
    } finally {
      if (generation === view.stateGeneration) {
        section.removeAttribute("aria-busy");
        view.stateRequest = null;
      }
    }
  }

  function renderState(state) {
    view.state = state;
    const section = $("state");
    const at = state.at || {};
    section.dataset.stateSeq = String(at.seq);
    section.dataset.stateTime = String(at.time);
    $("state-at").textContent = `${at.time} (seq ${at.seq})`;
    $("state-digest").textContent = state.digest ? `digest ${state.digest}` : "";
    const ms = Date.parse(at.time);
    if (Number.isFinite(ms)) showMoment(ms);

    fillScopeChoices(state);
    markQueues();
    const queues = (state.clusterQueues || []).filter((cq) => !view.scope.cq || cq.name === view.scope.cq);
    fillBody($("cq-table"), queues.map((cq) => {
      const w = cq.workloads || {};
      const held = (cq.draHeld && cq.draHeld.counters) || [];
      return el("tr", {"data-cq": cq.name},
        el("td", {}, cq.name), el("td", {}, cq.cohort || ""),
        el("td", {class: "num"}, w.pending), el("td", {class: "num"}, w.reserved),
        el("td", {class: "num"}, w.admitted),
        el("td", {class: "num"}, cq.draHeld ? cq.draHeld.devices : ""),
        el("td", {}, held.map((c) => `${c.driver} ${c.counter} ${c.consumed}`).join(", ")));
    }));

    const quotaRows = [];
    for (const cq of queues) {
      for (const q of cq.quotas || []) {
        const reserved = parseQuantity(q.reserved);
        const nominal = parseQuantity(q.nominal);
        const share = nominal > 0 ? reserved / nominal : (reserved > 0 ? Infinity : 0);
        const over = share > 1;
        quotaRows.push(el("tr", {
          "data-cq": cq.name, "data-flavor": q.flavor, "data-resource": q.resource,
          "data-reserved": q.reserved, "data-admitted": q.admitted, "data-nominal": q.nominal,
          class: over ? "over" : null,
        },
          el("td", {}, cq.name), el("td", {}, q.flavor), el("td", {}, q.resource),
          el("td", {class: "num"}, q.reserved), el("td", {class: "num"}, q.admitted),
          el("td", {class: "num"}, q.nominal),
          el("td", {class: "num"}, q.borrowingLimit ?? "—"),
          el("td", {class: "num"}, q.lendingLimit ?? "—"),
          el("td", {class: "bar-cell"},
             el("div", {class: "bar"},
                el("div", {class: over ? "fill over" : "fill",
                           style: `width:${Math.min(100, share * 100).toFixed(1)}%`})),
             el("span", {class: "pct"},
                Number.isFinite(share) ? `${Math.round(share * 100)}%` : "∞"))));
      }
    }
    fillBody($("quota-table"), quotaRows);
    // Many queues: the charts above show the same numbers over time, so the
    // quota rows fold under their summary.
    $("quota").open = queues.length <= MAX_OPEN_CHART_QUEUES;
    $("quota-summary").textContent = `${quotaRows.length} rows, ` +
        `${quotaRows.filter((r) => r.classList.contains("over")).length} above nominal`;

    renderWorkloads();

    renderPools(state.pools || []);

    renderFindings();
    highlightHistory();
  }

  // A pool's row: devices allocated of published, and its counters folded
  // under the one most consumed (a GPU node publishes a counter per
  // partitionable device, too many to list by default).
  function renderPools(pools) {
    let devices = 0, allocated = 0;
    fillBody($("pool-table"), pools.map((p) => {
      const used = (p.allocations || []).length;
      devices += Number(p.devices) || 0;
      allocated += used;
      const counters = (p.counters || []).map((c) => {
        const share = parseQuantity(c.consumed) / parseQuantity(c.capacity);
        return {share, item: el("li", {
          "data-counter-set": c.counterSet, "data-counter": c.counter,
          "data-consumed": c.consumed, "data-capacity": c.capacity,
          class: share > 1 ? "over" : null,
        }, `${c.counterSet}/${c.counter}: ${c.consumed} / ${c.capacity}`)};
      });
      const top = Math.max(0, ...counters.map((c) => (Number.isFinite(c.share) ? c.share : 0)));
      return el("tr", {
        "data-driver": p.driver, "data-pool": p.pool, "data-devices": p.devices,
        "data-allocated": used,
      },
        el("td", {}, p.driver), el("td", {}, p.pool), el("td", {class: "num"}, p.generation),
        el("td", {}, p.complete ? "yes" : "no"), el("td", {class: "num"}, p.resourceSliceCount),
        el("td", {class: "num"}, p.devices), el("td", {class: "num"}, used),
        el("td", {}, el("details", {class: "counters", open: counters.length <= 4 ? "" : null},
          el("summary", {}, `${counters.length} counters, most consumed ${Math.round(top * 100)}%`),
          el("ul", {class: "counters"}, counters.map((c) => c.item)))));
    }));
    $("pools").open = pools.length <= 2 * MAX_OPEN_CHART_QUEUES;
    $("pool-summary").textContent =
        `${pools.length} pools, ${allocated} of ${devices} devices allocated`;
  }

  // ---- scope (?cq=, ?ns=) and findings (?finding=) ---------------------------

  function scopeFromUrl() {
    const params = new URLSearchParams(window.location.search);
    return {cq: params.get("cq") || "", ns: params.get("ns") || "",
            finding: params.get("finding") || ""};
  }

  function inScope(w) {
    return (!view.scope.cq || w.clusterQueue === view.scope.cq) &&
           (!view.scope.ns || w.namespace === view.scope.ns);
  }

  // A finding's object is "Kind name" (ledger-query's findings): a Workload's
  // ClusterQueue comes from the state's workloads, a namespaced object's
  // namespace from its "namespace/name".
  function findingPlace(f, workloads) {
    const object = String(f.object || "");
    const space = object.indexOf(" ");
    const kind = space < 0 ? object : object.slice(0, space);
    const name = space < 0 ? "" : object.slice(space + 1);
    const slash = name.indexOf("/");
    const place = {workload: null, cq: kind === "ClusterQueue" ? name : null,
                   ns: slash < 0 ? null : name.slice(0, slash)};
    if (kind === "Workload") {
      place.workload = name;
      const w = workloads.get(name);
      if (w) place.cq = w.clusterQueue;
    }
    return place;
  }

  function workloadIndex() {
    const out = new Map();
    for (const w of (view.state && view.state.workloads) || []) out.set(`${w.namespace}/${w.name}`, w);
    return out;
  }

  function scopedFindings() {
    const workloads = workloadIndex();
    return ((view.state && view.state.findings) || []).filter((f) => {
      const place = findingPlace(f, workloads);
      return (!view.scope.cq || place.cq === view.scope.cq) &&
             (!view.scope.ns || place.ns === view.scope.ns);
    });
  }

  function linkWith(changes, hash) {
    const url = new URL(window.location.href);
    for (const [key, value] of Object.entries(changes)) {
      if (value) url.searchParams.set(key, value);
      else url.searchParams.delete(key);
    }
    url.hash = hash;
    return url.pathname + url.search + url.hash;
  }

  // The overview's count per finding type, each a link to the findings list
  // of that type; the findings list below, of the chosen type if any.
  function renderFindings() {
    const all = (view.state && view.state.findings) || [];
    $("findings").dataset.findingsCount = String(all.length);
    const scoped = scopedFindings();
    const byType = new Map();
    for (const f of scoped) byType.set(f.type, (byType.get(f.type) || 0) + 1);
    const open = $("open-findings");
    open.dataset.openFindings = String(scoped.length);
    open.textContent = String(scoped.length);
    open.className = scoped.length ? "alarm" : "";
    $("scope-note").textContent = [view.scope.cq && `ClusterQueue ${view.scope.cq}`,
                                   view.scope.ns && `namespace ${view.scope.ns}`]
        .filter(Boolean).map((s) => `in ${s}`).join(", ");
    $("finding-types").replaceChildren(...[...byType].sort((a, b) => b[1] - a[1]).map(
        ([type, count]) => el("li", {"data-type": type, "data-count": count},
                              el("a", {href: linkWith({finding: type}, "findings")},
                                 `${count} ${type}`))));
    const shown = view.scope.finding ? scoped.filter((f) => f.type === view.scope.finding) : scoped;
    $("findings").dataset.shownCount = String(shown.length);
    $("findings-all").hidden = !view.scope.finding;
    $("findings-all").href = linkWith({finding: ""}, "findings");
    $("findings-count").textContent = (shown.length > MAX_FINDING_ROWS
        ? `(${shown.length}, the first ${MAX_FINDING_ROWS} shown)` : `(${shown.length})`) +
        (view.scope.finding ? ` of type ${view.scope.finding}` : "");
    fillBody($("finding-table"), shown.slice(0, MAX_FINDING_ROWS).map((f) =>
      el("tr", {"data-type": f.type},
         el("td", {}, f.type), el("td", {}, f.object), el("td", {}, f.message))));
  }

  function fillScopeChoices(state) {
    const fill = (select, names, chosen) => {
      const wanted = [...new Set(chosen ? [...names, chosen] : names)].sort();
      select.replaceChildren(el("option", {value: ""}, "all"),
                             ...wanted.map((n) => el("option", {value: n}, n)));
      select.value = chosen;
    };
    fill($("scope-cq"), (state.clusterQueues || []).map((cq) => cq.name), view.scope.cq);
    fill($("scope-ns"), (state.workloads || []).map((w) => w.namespace), view.scope.ns);
  }

  function setScope(changes) {
    Object.assign(view.scope, changes);
    syncUrl();
    if (view.state) renderState(view.state);
    if (view.usage) renderCharts(view.usage);
  }

  function renderWorkloads() {
    const all = ((view.state && view.state.workloads) || []).filter(inScope);
    const filter = $("workload-filter").value.trim().toLowerCase();
    const matching = filter
      ? all.filter((w) => [`${w.namespace}/${w.name}`, w.clusterQueue, w.localQueue, w.state]
          .some((s) => String(s || "").toLowerCase().includes(filter)))
      : all;
    const shown = matching.slice(0, MAX_WORKLOAD_ROWS);
    const withFinding = new Map();
    const index = workloadIndex();
    for (const f of (view.state && view.state.findings) || []) {
      const place = findingPlace(f, index);
      if (place.workload) {
        withFinding.set(place.workload, [...(withFinding.get(place.workload) || []), f.type]);
      }
    }
    $("workload-count").textContent = matching.length > shown.length
      ? `(${matching.length} of ${all.length}, the first ${shown.length} shown)`
      : filter ? `(${matching.length} of ${all.length})` : `(${all.length})`;
    fillBody($("workload-table"), shown.map((w) => {
      const target = `${w.namespace}/${w.name}`;
      const open = () => loadWorkload(target);
      return el("tr", {
        "data-workload": target, "data-state": w.state, "data-cq": w.clusterQueue,
        "data-findings": (withFinding.get(target) || []).join(" ") || null,
        class: withFinding.has(target) ? "has-finding" : null,
        title: withFinding.has(target) ? `findings: ${withFinding.get(target).join(", ")}` : null,
        tabindex: 0, onclick: open,
        onkeydown: (event) => { if (event.key === "Enter") open(); },
      },
        el("td", {}, withFinding.has(target) ? "⚠ " : "", target), el("td", {}, w.state),
        el("td", {}, w.clusterQueue),
        el("td", {}, w.localQueue), el("td", {}, formatUsageMap(w.recorded)),
        el("td", {}, formatUsageMap(w.computed)),
        el("td", {class: "errors-cell"}, (w.errors || []).join("; ")));
    }));
  }

  // ---- /workload ------------------------------------------------------------

  async function loadWorkload(target) {
    const generation = ++view.workloadGeneration;
    const panel = $("workload-panel");
    panel.hidden = false;
    panel.dataset.workload = target;
    panel.setAttribute("aria-busy", "true");
    $("workload-title").textContent = target;
    syncUrl();
    $("workload-body").replaceChildren(el("p", {class: "muted"}, "loading…"));
    try {
      const query = encodeURIComponent(target);
      const [history, why] = await Promise.all([getJson(`/workload?target=${query}`),
                                                getJson(`/why?workload=${query}`)]);
      if (generation !== view.workloadGeneration) return;
      setError("workload", null);
      renderHistory(history);
      $("workload-body").append(renderWhy(why));
    } catch (err) {
      if (generation !== view.workloadGeneration) return;
      setError("workload", err);
      $("workload-body").replaceChildren(el("p", {class: "error"}, err.message));
    } finally {
      if (generation === view.workloadGeneration) panel.removeAttribute("aria-busy");
    }
  }

  function renderHistory(history) {
    const changes = history.changes || [];
    const panel = $("workload-panel");
    panel.dataset.changes = String(changes.length);
    const rows = changes.map((c) => el("tr", {"data-seq": c.seq, "data-event": c.event},
      el("td", {}, el("button", {
        type: "button", class: "link", title: "show the state at this change",
        onclick: () => loadState(`seq:${c.seq}`),
      }, c.time)),
      el("td", {class: "num"}, c.seq), el("td", {}, c.event), el("td", {}, c.state),
      el("td", {}, c.clusterQueue), el("td", {}, formatUsageMap(c.usage)),
      el("td", {class: "detail"}, c.detail)));
    $("workload-body").replaceChildren(
      changes.length
        ? el("table", {class: "data history"},
             el("thead", {}, el("tr", {},
                ["time", "seq", "event", "state", "ClusterQueue", "usage", "detail"]
                    .map((h) => el("th", {}, h)))),
             el("tbody", {}, rows))
        : el("p", {class: "muted"}, "no changes"));
    highlightHistory();
  }

  // ---- /why: the workload's life as intervals, and its evictions ----------

  // What held what a pending interval lacked, as `ledger-query why` writes
  // it: the holders, else the admission check's first word, else "-".
  function blockedText(interval) {
    const held = (interval.blockedBy || [])
      .map((h) => `${h.workload} ${h.resource}=${h.amount}`).join(", ");
    if (held) return held;
    return (interval.shortfalls || [])[0] || "-";
  }

  // The why timeline under the history: rows tr[data-interval] (state,
  // from, to, reason, blocked by) and tr[data-eviction] (at, reason,
  // preemptor, policy, conforms, explanation); a preemption that did not
  // follow the preempting queue's policy is tr.nonconforming[data-conforms=false].
  function renderWhy(why) {
    const intervals = (why.intervals || []).map((i) => el("tr",
      {"data-interval": i.state, "data-from": i.from},
      el("td", {}, i.state), el("td", {}, i.from), el("td", {}, i.to || "-"),
      el("td", {class: "detail"}, i.reason || "-"),
      el("td", {class: "detail"}, i.state === "Pending" ? blockedText(i) : "-")));
    const evictions = (why.evictions || []).map((e) => {
      const conforms = e.conforms === null || e.conforms === undefined ? "-"
        : e.conforms ? "yes" : "NO";
      return el("tr", {"data-eviction": e.at, "data-conforms": String(e.conforms),
                       class: e.conforms === false ? "nonconforming" : null},
        el("td", {}, e.at), el("td", {class: "detail"}, e.reason || "-"),
        el("td", {}, e.preemptor || "-"), el("td", {}, e.policy || "-"),
        el("td", {title: e.conforms === false ? "the preempting queue's policy does not allow it"
                                              : null}, conforms),
        el("td", {class: "detail"}, e.explanation || ""));
    });
    const table = (heads, rows) => el("table", {class: "data why"},
      el("thead", {}, el("tr", {}, heads.map((h) => el("th", {}, h)))), el("tbody", {}, rows));
    return el("section", {id: "workload-why"},
      el("h3", {}, "Why it waited"),
      intervals.length ? table(["state", "from", "to", "reason", "blocked by"], intervals)
        : el("p", {class: "muted"}, "no intervals"),
      evictions.length ? [el("h3", {}, "Evictions"),
        table(["at", "reason", "preemptor", "policy", "conforms", "explanation"], evictions)]
        : null);
  }

  // Marks the changes up to the state shown, and the last of them.
  function highlightHistory() {
    const seq = view.state && view.state.at ? Number(view.state.at.seq) : Infinity;
    const rows = [...document.querySelectorAll("#workload-body tr[data-seq]")];
    let last = null;
    for (const row of rows) {
      const past = Number(row.dataset.seq) <= seq;
      row.classList.toggle("future", !past);
      row.classList.remove("current");
      if (past) last = row;
    }
    if (last) last.classList.add("current");
  }

  // ---- start ----------------------------------------------------------------

  async function start() {
    if (CLUSTER_BASE) {
      const cluster = decodeURIComponent(CLUSTER_BASE.slice("/clusters/".length));
      const link = $("fleet-link");
      link.dataset.cluster = cluster;
      link.append(`cluster ${cluster} of the fleet`);
      link.hidden = false;
      document.title = `${cluster}: ${document.title}`;
    }
    setupMomentControls();
    view.scope = scopeFromUrl();
    $("scope-cq").addEventListener("change", (e) => setScope({cq: e.target.value}));
    $("scope-ns").addEventListener("change", (e) => setScope({ns: e.target.value}));
    $("workload-filter").addEventListener("input", renderWorkloads);
    $("workload-close").addEventListener("click", () => {
      view.workloadGeneration++;
      $("workload-panel").hidden = true;
      syncUrl();
    });
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape") $("workload-close").click();
    });
    $("errors").dataset.errorCount = "0";
    const workload = new URLSearchParams(window.location.search).get("workload");
    await Promise.all([loadRange().then(loadUsage), loadState(momentFromUrl()),
                       workload ? loadWorkload(workload) : null]);
    // Milliseconds from the navigation's start to the first loads' end
    // (tools/bench/web_load.py reads it).
    document.body.dataset.loadMs = String(Math.round(performance.now()));
    // The first screen's question (tests/serve/web_view_test.py): is the
    // count of open findings in view, and how tall is the page?
    document.body.dataset.documentHeight = String(document.documentElement.scrollHeight);
    document.body.dataset.findingsBottom =
        String(Math.round($("open-findings").getBoundingClientRect().bottom));
    document.body.dataset.ready = "1";
    await loadFindingTimes(view.range);
    document.body.dataset.refreshes = "0";
    setInterval(refresh, REFRESH_MS);
  }

  // A ledger that grew since the last look: the newest records reach the
  // charts, the range and (at `now`) the state, as a reload would show them.
  let refreshing = false;
  async function refresh() {
    if (refreshing || document.hidden || !view.range) return;
    refreshing = true;
    try {
      const latest = await getJson("/range");
      if (Number(latest.lastSeq) <= Number(view.range.lastSeq)) return;
      const range = await loadRange();
      await Promise.all([loadUsage(range).then(() => loadFindingTimes(range)),
                         view.at === "now" ? loadState("now") : null]);
      document.body.dataset.refreshes = String(Number(document.body.dataset.refreshes) + 1);
    } catch (err) {
      setError("range", err);  // the next poll tries again
    } finally {
      refreshing = false;
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
