// The admin page: progress, agreement and re-checks, refreshed every few seconds.
// Every value enters the page as text (textContent).
"use strict";

(() => {
  const TOKEN = decodeURIComponent(location.pathname.split("/").pop());
  const REFRESH_MS = 10000;
  const $ = (id) => document.getElementById(id);

  // columns that count things; every other number is a statistic, shown to 3 places
  const COUNTS = new Set(["instructions", "finished", "writings", "rated", "rating_pairs", "ratings", "pairs", "gap", "instructions_picked_twice"]);

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
        const value = key === "last_save" && row[key] ? new Date(row[key]).toLocaleString() : row[key];
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
    put(
      "progress",
      data.progress,
      {
        rater: "rater",
        instructions: "instructions",
        finished: "finished",
        writings: data.kind === "pick" ? "candidates" : "writings",
        rated: "rated",
        last_save: "last save",
      },
      "No raters.",
    );
    const agreement = data.agreement ? [data.agreement] : [];
    const columns =
      data.kind === "pick"
        ? { instructions_picked_twice: "instructions picked twice", same_choice: "same choice", chosen: "chosen" }
        : {
            rating_pairs: "rating pairs",
            kappa: "Cohen's κ",
            quadratic_kappa: "weighted κ",
            pearson: "Pearson",
            mean_abs_difference: "mean |difference|",
            exact_agreement: "exact agreement",
          };
    put("agreement", agreement, columns, "No ratings yet.");
    $("per-rater-box").hidden = data.kind === "pick";
    put(
      "per-rater",
      data.per_rater,
      {
        rater: "rater",
        ratings: "ratings",
        pairs: "pairs",
        mean_abs_difference: "mean |difference|",
        pearson: "Pearson",
        kappa: "κ",
        quadratic_kappa: "weighted κ",
      },
      "No writing has two ratings yet.",
    );
    $("recheck-hint").textContent =
      data.kind === "pick"
        ? "Instructions whose raters chose different candidates."
        : "Writings whose two ratings are 2 or more points apart.";
    const recheck =
      data.kind === "pick"
        ? { infer_id: "sample", task: "task", choices: "choices" }
        : { infer_id: "sample", task: "task", model: "model", ratings: "ratings", gap: "gap" };
    put("disagreements", data.disagreements, recheck, "Nothing to re-check.");
    $("updated").textContent = `updated ${new Date().toLocaleTimeString()}`;
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
      $("message").textContent = `Could not refresh: ${err.message}`;
      $("message").hidden = false;
    }
  }

  const base = `/admin/${encodeURIComponent(TOKEN)}/export`;
  $("export-csv").setAttribute("href", `${base}.csv`);
  $("export-jsonl").setAttribute("href", `${base}.jsonl`);
  refresh();
  setInterval(refresh, REFRESH_MS);
})();
