/**
 * The dashboard page: one self-contained HTML file (inline CSS and script, nothing fetched but its own
 * server's /events stream). Progress arrives as `progress` server-sent events every second, figures (SVG
 * drawn on the server by Vega) as `curves` events when a run completes; the page redraws without reload.
 */
export function dashboardPage(title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
${PAGE_STYLE}</style>
</head>
<body>
<header><h1>${escapeHtml(title)}</h1><span id="watching"></span><span id="connection" class="down">connecting</span></header>
<main>
<div id="notes" class="notes"></div>
<div id="queue" class="sub"></div>
<section id="sweeps"></section>
<section id="curves"></section>
</main>
<script>
${PAGE_SCRIPT}</script>
</body>
</html>
`;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** The page's style sheet. */
const PAGE_STYLE = `body { font: 14px/1.4 "DejaVu Sans", Verdana, sans-serif; margin: 0; color: #222; background: #f6f6f4; }
header { background: #223; color: #eee; padding: 10px 20px; display: flex; gap: 16px; align-items: baseline; flex-wrap: wrap; }
header h1 { font-size: 18px; margin: 0; }
#connection { margin-left: auto; font-size: 12px; }
#connection.live::before { content: "\\25CF "; color: #4caf50; }
#connection.down::before { content: "\\25CF "; color: #e53935; }
main { padding: 12px 20px; }
.notes { color: #8a5a00; }
.card { background: white; border: 1px solid #ddd; border-radius: 6px; padding: 12px 16px; margin-bottom: 14px; }
.card h2 { font-size: 16px; margin: 0 0 4px; }
.phase { font-size: 12px; padding: 1px 6px; border-radius: 8px; background: #e3e8f0; margin-left: 6px; }
.phase.complete, .phase.done { background: #d8f0d8; }
.phase.failed { background: #f7d4d4; }
.sub { color: #666; font-size: 12px; }
.bar { height: 14px; background: #eee; border-radius: 7px; overflow: hidden; margin: 8px 0; }
.bar > div { height: 100%; background: #4c78a8; transition: width .4s; }
.stats { display: grid; grid-template-columns: repeat(auto-fill, minmax(130px, 1fr)); gap: 6px 14px; margin: 8px 0; }
.stat b { display: block; font-size: 18px; font-variant-numeric: tabular-nums; }
.stat > span { color: #666; font-size: 12px; }
table { border-collapse: collapse; font-size: 12px; font-variant-numeric: tabular-nums; }
td, th { padding: 2px 8px; text-align: right; }
td:first-child, th:first-child { text-align: left; }
.mini { display: inline-block; width: 120px; height: 8px; background: #eee; vertical-align: middle; }
.mini > div { height: 100%; background: #72b7b2; }
pre.log { font-size: 11px; background: #fafafa; border: 1px solid #eee; padding: 6px; margin: 6px 0 0; white-space: pre-wrap; }
.figure { overflow-x: auto; margin: 8px 0; }
.figure svg { max-width: none; }
`;

/** The page's script: renders `progress` and `curves` events as they arrive, and reconnects. */
const PAGE_SCRIPT = `"use strict";
const fmt = (x) => x === null || x === undefined ? "–" : Math.round(x).toLocaleString("en-US");
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "style") el.style.cssText = v; else el.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) el.append(c instanceof Node ? c : String(c));
  return el;
}
function stat(cls, value, label) {
  return h("div", { class: "stat " + cls }, h("b", { class: "value" }, value), h("span", {}, label));
}
function eta(s) {
  const done = s.eventsExecuted ?? s.eventsWritten;
  if (!(s.eventsPerSecond > 0) || done >= s.eventsTotal) return "–";
  let t = Math.round((s.eventsTotal - done) / s.eventsPerSecond);
  return t >= 3600 ? Math.floor(t / 3600) + "h" + String(Math.floor(t % 3600 / 60)).padStart(2, "0") + "m" : t >= 60 ? Math.floor(t / 60) + "m" + String(t % 60).padStart(2, "0") + "s" : t + "s";
}
function sweepCard(s) {
  const pct = s.eventsTotal > 0 ? 100 * s.eventsWritten / s.eventsTotal : 0;
  const card = h("div", { class: "card sweep", "data-sweep": s.id },
    h("h2", {}, s.name, h("span", { class: "phase " + s.phase }, s.phase)),
    h("div", { class: "sub" }, s.id !== s.name ? s.id + " · " : "", s.liveNote),
    h("div", { class: "bar", title: pct.toFixed(1) + "%" }, h("div", { style: "width:" + pct.toFixed(2) + "%" })),
    h("div", { class: "stats" },
      h("div", { class: "stat events" }, h("b", {}, h("span", { class: "events-written", "data-value": String(s.eventsWritten) }, fmt(s.eventsWritten)), " / ", h("span", { class: "events-total" }, fmt(s.eventsTotal))), h("span", {}, "events written (" + pct.toFixed(1) + "%)" + (s.eventsExecuted > s.eventsWritten ? " · " + fmt(s.eventsExecuted) + " executed" : ""))),
      stat("rate", fmt(s.eventsPerSecond), "events/s · ETA " + eta(s)),
      stat("inflight", fmt(s.inflight), "calls in flight"),
      stat("runs", fmt(s.runsFinished) + " / " + fmt(s.runsTotal), "runs finished (" + fmt(s.runsActive) + " open)"),
      stat("failed", fmt(s.runsFailed), "runs failed"),
      stat("calls", fmt(s.calls), "LLM calls"),
      stat("retries", fmt(s.retries), "retries"),
      stat("requeued", fmt(s.requeued), "requeued"),
      stat("tokens", fmt(s.tokens), "tokens")));
  if (s.runs.length > 0) {
    const rows = s.runs.slice(0, 40).map((r) => {
      const share = r.total ? Math.min(100, 100 * r.written / r.total) : 0;
      return h("tr", { "data-run": r.run }, h("td", {}, r.run), h("td", {}, fmt(r.written)), h("td", {}, fmt(r.total)),
        h("td", {}, h("span", { class: "mini" }, h("div", { style: "width:" + share.toFixed(1) + "%" }))), h("td", {}, fmt(r.inflight)));
    });
    card.append(h("table", { class: "runs" }, h("thead", {}, h("tr", {}, h("th", {}, "open run"), h("th", {}, "written"), h("th", {}, "of"), h("th", {}, ""), h("th", {}, "in flight"))), h("tbody", {}, ...rows)));
    if (s.runs.length > 40) card.append(h("div", { class: "sub" }, "and " + (s.runs.length - 40) + " more open runs"));
  }
  if (s.log.length > 0) card.append(h("pre", { class: "log" }, s.log.join("\\n")));
  return card;
}
function renderProgress(p) {
  document.getElementById("watching").textContent = p.watching;
  document.getElementById("notes").replaceChildren(...p.notes.concat(p.error ? ["error: " + p.error] : []).map((n) => h("p", {}, n)));
  const q = p.queue;
  document.getElementById("queue").textContent = q ? "queue: " + q.waiting + " waiting, " + q.active + " active, " + q.delayed + " delayed, " + q.failed + " failed" : "";
  const sweeps = p.sweeps.map(sweepCard);
  document.getElementById("sweeps").replaceChildren(...(sweeps.length ? sweeps : [h("p", {}, "no sweep to show yet")]));
  document.body.dataset.updated = String(p.at);
}
function renderCurves(list) {
  const parts = list.map((c) => {
    const box = h("div", { class: "card curves", "data-corpus": c.dir },
      h("h2", {}, "Order parameters · " + c.name),
      h("div", { class: "sub" }, c.error ? c.error : c.runsMeasured + " of " + c.runsTotal + " runs measured" + (c.encoder ? ", encoder " + c.encoder : "") + (c.provisional ? " (provisional: recomputed from the complete runs, whitening fitted on them alone)" : "") + " · drawn " + new Date(c.drawnAt).toLocaleTimeString()));
    if (!c.error && c.figures.length === 0) box.append(h("p", { class: "sub" }, "no run is complete yet: curves appear when the first one is"));
    for (const f of c.figures) {
      const fig = h("div", { class: "figure", "data-figure": f.id });
      fig.innerHTML = f.svg; // drawn by this dashboard's server (Vega), text escaped there
      box.append(fig);
    }
    return box;
  });
  document.getElementById("curves").replaceChildren(...parts);
}
function connect() {
  const conn = document.getElementById("connection");
  const source = new EventSource("events");
  source.onopen = () => { conn.className = "live"; conn.textContent = "live"; };
  source.onerror = () => { conn.className = "down"; conn.textContent = "reconnecting"; };
  source.addEventListener("progress", (e) => renderProgress(JSON.parse(e.data)));
  source.addEventListener("curves", (e) => renderCurves(JSON.parse(e.data)));
}
connect();
`;
