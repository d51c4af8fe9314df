"use strict";
// The status page: polls /api/status every 2 s and redraws. The first
// request asks for the server-side history so charts start full; later
// samples are appended here. Values the server reports as null are drawn
// as "—": the figure is not available on this node.
(function () {
  const POLL_MS = 2000;
  const DASH = "—";
  let hist = null; // {times, p50, p95, p99, nodes: {id: {send, recv}}}
  let maxLen = 150;
  let last = null;

  const $ = (id) => document.getElementById(id);
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  const isNum = (v) => typeof v === "number" && isFinite(v);

  function bytes(v) {
    if (!isNum(v)) return DASH;
    const u = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let i = 0;
    while (Math.abs(v) >= 1024 && i < u.length - 1) { v /= 1024; i++; }
    return (i === 0 ? v.toFixed(0) : v.toFixed(v < 10 ? 1 : 0)) + " " + u[i];
  }
  const rate = (v) => (isNum(v) ? bytes(v) + "/s" : DASH);
  const pct = (v, d) => (isNum(v) ? (v * 100).toFixed(d === undefined ? 1 : d) + "%" : DASH);
  const num = (v) => (isNum(v) ? v.toLocaleString("en-US") : DASH);
  function secs(v) {
    if (!isNum(v)) return DASH;
    if (v < 1e-3) return (v * 1e6).toFixed(0) + " µs";
    if (v < 1) return (v * 1e3).toFixed(v < 0.01 ? 2 : 1) + " ms";
    return v.toFixed(2) + " s";
  }
  const yesno = (v) => (v === true ? "yes" : v === false ? "no" : DASH);

  // spark draws values (nulls break the line) scaled to their own max.
  function spark(values, cls) {
    const w = 80, h = 18;
    const nums = (values || []).filter(isNum);
    if (nums.length < 2) return "";
    const max = Math.max(...nums) || 1;
    const n = values.length;
    let segs = [], cur = [];
    values.forEach((v, i) => {
      if (!isNum(v)) { if (cur.length) segs.push(cur); cur = []; return; }
      const x = (n === 1 ? w : (i / (n - 1)) * w).toFixed(1);
      const y = (h - 1 - (v / max) * (h - 2)).toFixed(1);
      cur.push(x + "," + y);
    });
    if (cur.length) segs.push(cur);
    return '<svg class="spark ' + cls + '" width="' + w + '" height="' + h + '" viewBox="0 0 ' + w + " " + h + '">' +
      segs.map((s) => '<polyline points="' + s.join(" ") + '"/>').join("") + "</svg>";
  }

  function bar(frac, hot) {
    if (!isNum(frac)) return DASH;
    const f = Math.max(0, Math.min(1, frac));
    return '<span class="bar' + (hot ? " hot" : "") + '"><i style="width:' + (f * 100).toFixed(1) + '%"></i></span>';
  }

  function mergeHistory(st) {
    if (st.history) {
      const h = st.history;
      maxLen = Math.max(maxLen, h.times.length);
      hist = { times: h.times, p50: h.get_p50, p95: h.get_p95, p99: h.get_p99, nodes: {} };
      for (const id in h.nodes) hist.nodes[id] = { send: h.nodes[id].send, recv: h.nodes[id].recv };
      return;
    }
    if (!hist) hist = { times: [], p50: [], p95: [], p99: [], nodes: {} };
    const trim = (a) => { while (a.length > maxLen) a.shift(); };
    const len = hist.times.length;
    hist.times.push(Date.parse(st.time));
    hist.p50.push(st.scheduler.get_p50); hist.p95.push(st.scheduler.get_p95); hist.p99.push(st.scheduler.get_p99);
    [hist.times, hist.p50, hist.p95, hist.p99].forEach(trim);
    const seen = {};
    for (const n of st.nodes) {
      seen[n.id] = true;
      let nh = hist.nodes[n.id];
      if (!nh) nh = hist.nodes[n.id] = { send: new Array(len).fill(null), recv: new Array(len).fill(null) };
      nh.send.push(n.throughput_send); nh.recv.push(n.throughput_recv);
      trim(nh.send); trim(nh.recv);
    }
    for (const id in hist.nodes) {
      if (seen[id]) continue;
      const nh = hist.nodes[id];
      nh.send.push(null); nh.recv.push(null); trim(nh.send); trim(nh.recv);
    }
  }

  function tile(label, value, id) {
    return '<div class="tile"' + (id ? ' id="' + id + '"' : "") + "><b>" + esc(value) + "</b><span>" + esc(label) + "</span></div>";
  }

  function drawSummary(st) {
    const peers = st.nodes.filter((n) => n.role === "peer");
    const alive = peers.filter((n) => n.state === "alive").length;
    const full = peers.filter((n) => n.disk_full).length;
    const cap = peers.reduce((a, n) => a + (n.capacity_bytes || 0), 0);
    const free = peers.reduce((a, n) => a + (n.free_bytes || 0), 0);
    $("summary").innerHTML =
      tile("peers alive", alive + " / " + peers.length + (full ? " (" + full + " disk full)" : ""), "tile-peers") +
      tile("default code", st.default_code || DASH) +
      tile("capacity used", cap ? pct((cap - free) / cap) : DASH) +
      tile("S3 requests", num(st.s3.requests)) +
      tile("S3 in flight", num(st.s3.in_flight)) +
      tile("bytes in / out", bytes(st.s3.bytes_in) + " / " + bytes(st.s3.bytes_out)) +
      tile("repair pending", num(st.repair.pending)) +
      tile("scrub corrupt / repaired", st.scrub ? num(st.scrub.corrupt_found) + " / " + num(st.scrub.repaired) : DASH) +
      tile("ring epoch", num(st.ring.epoch));
  }

  function drawNodes(st) {
    const q = $("filter").value.trim().toLowerCase();
    const rows = [];
    for (const n of st.nodes) {
      const hay = (n.id + " " + n.role + " " + n.state + " " + (n.disk_full ? "disk full " : "") + (n.zone || "")).toLowerCase();
      if (q && !hay.includes(q)) continue;
      const nh = (hist && hist.nodes[n.id]) || { send: [], recv: [] };
      const used = n.capacity_bytes ? (n.capacity_bytes - n.free_bytes) / n.capacity_bytes : null;
      const capCell = n.capacity_bytes
        ? bar(used, used > 0.85) + "<small>" + bytes(n.capacity_bytes - n.free_bytes) + " used · " + bytes(n.free_bytes) + " free</small>"
        : DASH;
      rows.push('<tr class="row-' + esc(n.state) + '" data-node="' + esc(n.id) + '" data-state="' + esc(n.state) + '">' +
        "<td>" + esc(n.id) + "</td><td>" + esc(n.role) + "</td>" +
        '<td><span class="state state-' + esc(n.state) + '">' + esc(n.state) + "</span>" +
        (n.disk_full ? ' <span class="state state-full" title="refuses new shards until space is freed">disk full</span>' : "") + "</td>" +
        '<td class="opt">' + esc(n.zone || DASH) + "</td>" +
        '<td class="cap">' + capCell + "</td>" +
        "<td>" + spark(nh.send, "send") + rate(n.throughput_send) + "</td>" +
        "<td>" + spark(nh.recv, "recv") + rate(n.throughput_recv) + "</td>" +
        "<td>" + (isNum(n.cpu) ? bar(n.cpu, n.cpu > 0.85) + " " + pct(n.cpu, 0) : DASH) + "</td>" +
        '<td class="opt num">' + num(n.active_requests) + "</td></tr>");
    }
    $("nodes").tBodies[0].innerHTML = rows.join("") || '<tr><td colspan="9" class="muted">no nodes match</td></tr>';
  }

  function kv(pairs) {
    return pairs.map((p) => '<div data-k="' + esc(p[0]) + '"><span>' + esc(p[0]) + "</span>" + esc(p[1]) + "</div>").join("");
  }

  // pbar draws P on an axis spanning [a, b], with the band shaded.
  function pbar(p, lo, hi, mean, a, b) {
    const w = 140, h = 14, x = (v) => Math.max(0, Math.min(w, ((v - a) / (b - a)) * w)).toFixed(1);
    let s = '<svg class="pbar" width="' + w + '" height="' + h + '" viewBox="0 0 ' + w + " " + h + '">' +
      '<line class="axis" x1="0" x2="' + w + '" y1="' + h / 2 + '" y2="' + h / 2 + '"/>';
    if (isNum(lo) && isNum(hi)) s += '<rect class="band" x="' + x(lo) + '" y="2" width="' + (x(hi) - x(lo)).toFixed(1) + '" height="' + (h - 4) + '"/>';
    if (isNum(mean)) s += '<line class="mean" x1="' + x(mean) + '" x2="' + x(mean) + '" y1="0" y2="' + h + '"/>';
    if (isNum(p)) {
      const out = isNum(lo) && isNum(hi) && (p < lo || p > hi);
      s += '<circle class="dot' + (out ? " out" : "") + '" cx="' + x(p) + '" cy="' + h / 2 + '" r="3.5"/>';
    }
    return s + "</svg>";
  }

  function drawRing(st) {
    const r = st.ring;
    $("ring-summary").innerHTML = kv([
      ["epoch", num(r.epoch)], ["peers", num(r.peers)], ["vnodes", num(r.vnodes)],
      ["data moving", yesno(r.moving)],
      ["older layouts read", num(r.older_layouts)], ["data settled on epoch", num(r.settled)],
      ["band", isNum(r.p_low) ? r.p_low.toFixed(2) + " – " + r.p_high.toFixed(2) + (r.band_source === "display" ? " (display default)" : "") : DASH],
    ]);
    const peers = st.nodes.filter((n) => n.role === "peer");
    const ps = peers.map((n) => n.p).filter(isNum).concat([r.p_low, r.p_high].filter(isNum));
    const a = ps.length ? Math.max(0, Math.min(...ps) - 0.1) : 0;
    const b = ps.length ? Math.max(...ps) + 0.1 : 2;
    $("ring-peers").tBodies[0].innerHTML = peers.map((n) =>
      '<tr data-peer="' + esc(n.id) + '"><td>' + esc(n.id) + '</td><td class="num">' + num(n.vnodes) + '</td><td class="num">' +
      pct(n.share, 2) + '</td><td class="num">' + pct(n.weight, 2) + "</td><td>" +
      pbar(n.p, r.p_low, r.p_high, r.p_mean, a, b) + " " + (isNum(n.p) ? n.p.toFixed(2) : DASH) + "</td></tr>").join("");
  }

  function lineChart(series, times) {
    const w = 600, h = 140, padL = 44, padB = 14;
    const all = series.flatMap((s) => s.values.filter(isNum));
    if (!all.length) return '<p class="muted">' + DASH + " no GET completed in the recent window</p>";
    const max = Math.max(...all) * 1.1 || 1;
    const n = times.length;
    const x = (i) => padL + (n <= 1 ? 0 : (i / (n - 1)) * (w - padL - 4));
    const y = (v) => (h - padB) - (v / max) * (h - padB - 6);
    let s = '<svg viewBox="0 0 ' + w + " " + h + '" preserveAspectRatio="none">';
    for (let k = 0; k <= 2; k++) {
      const v = (max / 2) * k;
      s += '<line class="grid" x1="' + padL + '" x2="' + w + '" y1="' + y(v) + '" y2="' + y(v) + '"/>' +
        '<text x="2" y="' + (y(v) + 3) + '">' + esc(secs(v)) + "</text>";
    }
    if (n > 1) {
      const mins = ((times[n - 1] - times[0]) / 60000).toFixed(1);
      s += '<text x="' + padL + '" y="' + (h - 2) + '">-' + mins + ' min</text><text x="' + (w - 30) + '" y="' + (h - 2) + '">now</text>';
    }
    for (const se of series) {
      let seg = [];
      const flush = () => {
        if (seg.length === 1) {
          const [cx, cy] = seg[0].split(",");
          s += '<circle class="' + se.cls + '" cx="' + cx + '" cy="' + cy + '" r="2.5"/>';
        } else if (seg.length) s += '<polyline class="' + se.cls + '" points="' + seg.join(" ") + '"/>';
        seg = [];
      };
      se.values.forEach((v, i) => { if (isNum(v)) seg.push(x(i).toFixed(1) + "," + y(v).toFixed(1)); else flush(); });
      flush();
    }
    return s + "</svg>";
  }

  function drawScheduler(st) {
    const sc = st.scheduler;
    const pool = isNum(sc.pool_size) && isNum(sc.pool_in_use)
      ? sc.pool_in_use + " / " + sc.pool_size : DASH;
    $("sched-summary").innerHTML = kv([
      ["policy", sc.policy || DASH], ["fetch pool", pool], ["queue", num(sc.queue)],
      ["p50", secs(sc.get_p50)], ["p95", secs(sc.get_p95)], ["p99", secs(sc.get_p99)],
    ]);
    $("latency-chart").innerHTML = lineChart([
      { cls: "l50", values: hist.p50 }, { cls: "l95", values: hist.p95 }, { cls: "l99", values: hist.p99 },
    ], hist.times);
    const peers = sc.peers || [];
    $("sched-peers").tBodies[0].innerHTML = peers.length ? peers.map((p) => {
      const tot = p.chosen + p.skipped;
      return '<tr data-peer="' + esc(p.id) + '"><td>' + esc(p.id) + (p.failing ? ' <span class="bad">failing</span>' : "") +
        '</td><td class="num">' + num(p.chosen) + '</td><td class="num">' + num(p.skipped) + "</td><td>" +
        (tot ? '<span class="split"><i style="width:' + ((p.chosen / tot) * 100).toFixed(1) + '%"></i></span>' : DASH) +
        '</td><td class="opt num">' + bytes(p.inflight_bytes) + '</td><td class="opt num">' + (p.throughput ? rate(p.throughput) : DASH) + "</td></tr>";
    }).join("") : '<tr><td colspan="6" class="muted">no reads scheduled yet</td></tr>';
  }

  function job(name, p) {
    const total = isNum(p.pending) && isNum(p.done) ? p.pending + p.done : null;
    return '<div class="job" data-job="' + esc(name) + '"><h3>' + esc(name) + '</h3><div class="kv">' + kv([
      ["running", yesno(p.running)], ["pending", num(p.pending)], ["done", num(p.done)], ["failed", num(p.failed)],
    ]) + "</div>" + (total ? bar(p.done / total) : "") + "</div>";
  }

  function drawJobs(st) {
    const ups = (st.index_upgrades || []).map((u) =>
      job("index upgrade " + u.dir, { running: true, pending: u.total - u.moved, done: u.moved, failed: 0 }));
    $("jobs-body").innerHTML = job("repair", st.repair) + job("rebalance", st.rebalance) + ups.join("") + lifecycle(st.lifecycle);
  }

  function lifecycle(lc) {
    if (!lc) return "";
    return '<div class="job" data-job="lifecycle"><h3>lifecycle</h3><div class="kv">' + kv([
      ["objects expired", num(lc.expired)], ["versions expired", num(lc.noncurrent_expired)], ["uploads aborted", num(lc.aborted)], ["failed", num(lc.errors)],
      ["passes", num(lc.passes)], ["last pass", when(lc.last_pass)],
    ]) + "</div></div>";
  }

  function when(t) { return t ? new Date(t).toLocaleString() : DASH; }

  function drawScrub(st) {
    const sc = st.scrub || { peers: [] };
    $("scrub-summary").innerHTML = kv([
      ["objects checked", num(sc.objects_checked)], ["shards checked", num(sc.shards_checked)],
      ["corrupt found", num(sc.corrupt_found)], ["repaired", num(sc.repaired)], ["pending", num(sc.pending)],
    ]);
    const peers = sc.peers || [];
    $("scrub-peers").tBodies[0].innerHTML = peers.length ? peers.map((p) => {
      const state = p.error ? '<span class="bad" title="' + esc(p.error) + '">unreachable</span>'
        : p.running ? "running" + (p.manual ? " (asked)" : "") : "idle";
      const prog = p.pass_objects ? bar(p.pass_checked / p.pass_objects) + " " + num(p.pass_checked) + " / " + num(p.pass_objects) : DASH;
      return '<tr data-peer="' + esc(p.id) + '"><td>' + esc(p.id) + "</td><td>" + state + "</td><td>" + prog +
        "</td><td>" + esc(when(p.pass_started)) + "</td><td>" + esc(when(p.last_finished)) + "</td><td>" + esc(when(p.next_pass)) +
        '</td><td class="opt num">' + num(p.objects_checked) + '</td><td class="opt num">' + num(p.shards_checked) +
        '</td><td class="num">' + (p.corrupt_found ? '<span class="bad">' + num(p.corrupt_found) + "</span>" : num(p.corrupt_found)) +
        '</td><td class="num">' + num(p.repaired) + '</td><td class="num">' + num(p.pending) + "</td></tr>";
    }).join("") : '<tr><td colspan="11" class="muted">no scrub report yet</td></tr>';
  }

  function drawBuckets(st) {
    const b = st.buckets;
    const list = b.list || [];
    $("bucket-list").tBodies[0].innerHTML = list.length ? list.map((x) =>
      '<tr data-bucket="' + esc(x.name) + '"><td>' + esc(x.name) + '</td><td class="num">' + (x.capped ? "≥ " : "") + num(x.objects) +
      '</td><td class="num">' + (x.capped ? "≥ " : "") + bytes(x.bytes) + "</td></tr>").join("")
      : '<tr><td colspan="3" class="muted">' + (b.scanned && !b.scanned.startsWith("0001") ? "no buckets" : "not counted yet") + "</td></tr>";
    $("bucket-note").textContent = b.scanned && !b.scanned.startsWith("0001")
      ? "counted " + new Date(b.scanned).toLocaleTimeString() + " (at most " + num(b.cap) + " objects per bucket)" : "";
  }

  function drawErrors(st) {
    const e = (st.errors || []).slice().reverse();
    $("error-list").innerHTML = e.length ? e.map((l) =>
      '<li class="lvl-' + esc(l.level) + '">' + esc(new Date(l.time).toLocaleTimeString()) + " " + esc(l.level) + " " + (l.source ? "[" + esc(l.source) + "] " : "") + esc(l.message) + "</li>").join("")
      : '<li class="muted">none</li>';
  }

  function draw(st) {
    $("node").textContent = st.node_id + (st.version ? " · " + st.version : "");
    // Only a login session can be ended: not a public page, not basic auth.
    $("logout").hidden = !st.session;
    drawSummary(st); drawNodes(st); drawRing(st); drawScheduler(st); drawJobs(st); drawScrub(st); drawBuckets(st); drawErrors(st);
    const live = $("live");
    live.textContent = "updated " + new Date(st.time).toLocaleTimeString();
    live.classList.remove("stale");
    document.body.dataset.updates = String((Number(document.body.dataset.updates) || 0) + 1);
  }

  async function poll() {
    try {
      // From the origin, not the page's URL: opened as http://KEY:SECRET@host/,
      // a relative URL keeps the keys, and fetch refuses URLs that carry any.
      const res = await fetch(location.origin + "/api/status" + (hist ? "" : "?history=1"), { cache: "no-store", credentials: "same-origin" });
      if (res.status === 401) { location.href = "/login"; return; }
      if (!res.ok) throw new Error("HTTP " + res.status);
      const st = await res.json();
      mergeHistory(st);
      last = st;
      draw(st);
    } catch (err) {
      const live = $("live");
      live.classList.add("stale");
      live.textContent = "no update: " + err.message;
    } finally {
      setTimeout(poll, POLL_MS);
    }
  }

  $("filter").addEventListener("input", () => { if (last) drawNodes(last); });
  poll();
})();
