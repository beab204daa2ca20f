// The admin page: progress, agreement and re-checks, refreshed every few seconds.
// Every value enters the page as text (textContent). It speaks the campaign's language,
// in the words the server put into the page (wording.py).
"use strict";

(() => {
  const WORDS = JSON.parse(document.getElementById("words").textContent);
  const LANG = document.documentElement.lang;
  const T = WORDS.text[LANG];
  const HEADING = T.columns;
  const TOKEN = decodeURIComponent(location.pathname.split("/").pop());
  const REFRESH_MS = 10000;
  const $ = (id) => document.getElementById(id);

  // columns that count things; every other number is a statistic, shown to 3 places
  const COUNTS = new Set(["instructions", "finished", "writings", "rated", "rating_pairs", "ratings", "pairs", "gap", "instructions_picked_twice"]);

  // A sentence of the table with its {name}s filled in from `values`.
  function say(template, values) {
    return template.replace(/\{(\w+)\}/g, (whole, name) => (Object.hasOwn(values, name) ? String(values[name]) : whole));
  }

  // The columns of a table, as keys of the rows, each headed in the page's language.
  function headed(keys) {
    return Object.fromEntries(keys.map((key) => [key, HEADING[key]]));
  }

  function cell(value, key) {
    if (value === null || value === undefined) return "";
    if (typeof value === "number" && !COUNTS.has(key)) return value.toFixed(3);
    if (typeof value === "object") {
      return Object.entries(value)
        .map(([k, v]) => `${k}: ${v}`)
        .join(", ");
    }
    return String(value);
  }

  // A table of `rows` (objects) with one column per key of `columns` (key -> heading).
  function table(rows, columns) {
    const element = document.createElement("table");
    const head = element.createTHead().insertRow();
    for (const heading of Object.values(columns)) {
      const th = document.createElement("th");
      th.textContent = heading;
      head.append(th);
    }
    const body = element.createTBody();
    for (const row of rows) {
      const line = body.insertRow();
      for (const key of Object.keys(columns)) {
        const value = key === "last_save" && row[key] ? new Date(row[key]).toLocaleString(LANG) : row[key];
        line.insertCell().textContent = cell(value, key);
      }
    }
    return element;
  }

  function put(id, rows, columns, empty) {
    const box = $(id);
    if (!rows.length) {
      const note = document.createElement("p");
      note.className = "hint";
      note.textContent = empty;
      box.replaceChildren(note);
    } else {
      box.replaceChildren(table(rows, columns));
    }
  }

  function paint(data) {
    const pick = data.kind === "pick";
    const progress = headed(["rater", "instructions", "finished", "writings", "rated", "last_save"]);
    if (pick) progress.writings = HEADING.candidates;
    put("progress", data.progress, progress, T.no_raters);
    const agreement = data.agreement ? [data.agreement] : [];
    const measures = pick
      ? ["instructions_picked_twice", "same_choice", "chosen"]
      : ["rating_pairs", "kappa", "quadratic_kappa", "pearson", "mean_abs_difference", "exact_agreement"];
    put("agreement", agreement, headed(measures), T.no_ratings);
    $("per-rater-box").hidden = pick;
    const against = ["rater", "ratings", "pairs", "mean_abs_difference", "pearson", "kappa", "quadratic_kappa"];
    put("per-rater", data.per_rater, headed(against), T.no_pairs);
    $("recheck-hint").textContent = pick ? T.recheck_pick : T.recheck_rate;
    const recheck = pick ? ["infer_id", "task", "choices"] : ["infer_id", "task", "model", "ratings", "gap"];
    put("disagreements", data.disagreements, headed(recheck), T.nothing);
    $("updated").textContent = say(T.updated, { time: new Date().toLocaleTimeString(LANG) });
  }

  async function refresh() {
    try {
      const response = await fetch("/api/admin/summary", {
        headers: { Authorization: `Bearer ${TOKEN}` },
      });
      const payload = await response.json();
      if (!response.ok) throw new Error(payload.error || String(response.status));
      $("message").hidden = true;
      paint(payload);
    } catch (err) {
      $("message").textContent = say(T.refresh_failed, { why: err.message });
      $("message").hidden = false;
    }
  }

  for (const element of document.querySelectorAll("[data-text]")) {
    element.textContent = T[element.dataset.text];
  }
  const base = `/admin/${encodeURIComponent(TOKEN)}/export`;
  $("export-csv").setAttribute("href", `${base}.csv`);
  $("export-jsonl").setAttribute("href", `${base}.jsonl`);
  refresh();
  setInterval(refresh, REFRESH_MS);
})();
