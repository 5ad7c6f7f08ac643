"use strict";
// kinspect report: unpacks each stage when it is first shown, and links source lines to the
// stage lines they produced. Everything it shows was escaped when the report was written.
(() => {
  const data = JSON.parse(document.getElementById("kinspect-data").textContent);
  const unpacked = new Map();            // blob id -> Promise of {lines: [html], map: [source line]}
  const state = { variant: -1, line: 0, hit: 0 };

  function unpack(id) {
    if (!unpacked.has(id)) {
      const text = document.getElementById("blob-" + id).textContent.trim();
      const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
      const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      unpacked.set(id, new Response(stream).text().then(JSON.parse));
    }
    return unpacked.get(id);
  }

  const section = (i) => document.getElementById("variant-" + i);
  const codesOf = (i) => data.variants[i].codes;

  async function render(pre) {
    if (pre.dataset.done) return;
    pre.dataset.done = "1";
    const code = await unpack(pre.dataset.blob);
    const first = Number(pre.dataset.first);
    pre.innerHTML = code.lines.map((h, k) => {
      const src = code.map[k];
      return `<div class="ln${src ? " mapped" : ""}" data-src="${src}"><span class="no">${first + k}</span>` +
             `<span class="tx">${h}</span></div>`;
    }).join("");
    mark(pre);
  }

  function visibleStage(sec) {
    return sec.querySelector("pre.stage-code:not([hidden])");
  }

  function mark(pre) {
    pre.querySelectorAll(".ln.hit, .ln.sel").forEach((el) => el.classList.remove("hit", "sel"));
    if (!state.line) return [];
    const found = [...pre.querySelectorAll(`.ln[data-src="${state.line}"]`)];
    found.forEach((el) => el.classList.add(pre.dataset.code === "python" ? "sel" : "hit"));
    return found;
  }

  function scrollTo(pre, el) {
    if (el) pre.scrollTop = Math.max(0, el.offsetTop - pre.clientHeight / 3);
  }

  async function select(line) {
    const sec = section(state.variant);
    state.line = line;
    state.hit = 0;
    sec.querySelectorAll("pre.lines").forEach((pre) => {
      const found = pre.dataset.done ? mark(pre) : [];
      if (!pre.hidden) scrollTo(pre, found[0]);
    });
    const codes = await Promise.all(codesOf(state.variant).map((c) => unpack(c.blob)));
    codesOf(state.variant).forEach((c, k) => {
      const n = codes[k].map.filter((x) => x === line).length;
      const tab = sec.querySelector(`.tabs button[data-stage="${CSS.escape(c.name)}"] .n`);
      if (tab) tab.textContent = line ? String(n) : "";
    });
    counter(sec);
  }

  function counter(sec) {
    const pre = visibleStage(sec);
    const hits = pre ? pre.querySelectorAll(".ln.hit").length : 0;
    sec.querySelector(".hits .count").textContent =
      state.line ? `line ${state.line}: ${hits} line${hits === 1 ? "" : "s"} here` : "click a line to link it";
  }

  async function showStage(sec, name) {
    sec.querySelectorAll(".tabs button").forEach((b) => b.classList.toggle("on", b.dataset.stage === name));
    let shown = null;
    sec.querySelectorAll("pre.stage-code").forEach((pre) => {
      pre.hidden = pre.dataset.code !== name;
      if (!pre.hidden) shown = pre;
    });
    sec.querySelectorAll(".stage-note").forEach((n) => { n.hidden = n.dataset.code !== name; });
    if (shown) {
      await render(shown);
      scrollTo(shown, shown.querySelector(".ln.hit"));
    }
    counter(sec);
  }

  async function showVariant(i) {
    if (state.variant === i) return;
    document.querySelectorAll("section.variant").forEach((s) => { s.hidden = s.id !== "variant-" + i; });
    document.querySelectorAll("table.metrics tbody tr").forEach((tr) => {
      tr.classList.toggle("chosen", Number(tr.dataset.variant) === i);
    });
    state.variant = i;
    state.line = 0;
    const sec = section(i);
    const python = sec.querySelector('pre[data-code="python"]');
    const on = sec.querySelector(".tabs button.on") || sec.querySelector(".tabs button");
    await Promise.all([python ? render(python) : null, on ? showStage(sec, on.dataset.stage) : null]);
    await select(0);
  }

  function sortBy(th) {
    const table = th.closest("table");
    const k = [...th.parentNode.children].indexOf(th);
    const desc = !th.classList.contains("sorted-desc");
    table.querySelectorAll("th").forEach((h) => h.classList.remove("sorted-asc", "sorted-desc"));
    th.classList.add(desc ? "sorted-desc" : "sorted-asc");
    const key = (tr) => {
      const td = tr.children[k];
      if (th.dataset.sort === "text") return td.textContent;
      return td.dataset.v === "" ? -Infinity : Number(td.dataset.v);
    };
    const rows = [...table.tBodies[0].rows];
    rows.sort((a, b) => {
      const x = key(a), y = key(b);
      const c = typeof x === "string" ? x.localeCompare(y) : x - y;
      return desc ? -c : c;
    });
    rows.forEach((tr) => table.tBodies[0].appendChild(tr));
  }

  document.addEventListener("click", (ev) => {
    const t = ev.target;
    const th = t.closest("table.program th[data-sort]");
    if (th) return void sortBy(th);
    const row = t.closest("table.metrics tbody tr");
    if (row) return void showVariant(Number(row.dataset.variant));
    const tab = t.closest(".tabs button");
    if (tab) return void showStage(tab.closest("section.variant"), tab.dataset.stage);
    const step = t.closest(".hits button");
    if (step) {
      const sec = step.closest("section.variant");
      const pre = visibleStage(sec);
      const hits = pre ? [...pre.querySelectorAll(".ln.hit")] : [];
      if (!hits.length) return;
      state.hit = (state.hit + Number(step.dataset.step) + hits.length) % hits.length;
      return void scrollTo(pre, hits[state.hit]);
    }
    const ln = t.closest(".ln.mapped");
    if (ln) {
      const line = Number(ln.dataset.src);
      const pre = ln.closest("pre");
      return void select(line).then(() => {
        const python = section(state.variant).querySelector('pre[data-code="python"]');
        if (python && python !== pre) scrollTo(python, python.querySelector(".ln.sel"));
      });
    }
    const verdict = t.closest("li[data-line]");
    if (verdict) return void select(Number(verdict.dataset.line));
  });

  if (typeof DecompressionStream === "undefined") {
    document.querySelectorAll("pre.lines").forEach((pre) => {
      pre.textContent = "This browser cannot unpack the stages (it lacks DecompressionStream: " +
                        "Chrome 80+, Firefox 113+, Safari 16.4+).";
    });
    document.body.dataset.ready = "no-decompression";
  } else {
    showVariant(data.chosen).then(() => { document.body.dataset.ready = "1"; });
  }
})();
