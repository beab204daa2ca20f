// The rater's page: one instruction at a time, every change saved as it is made.
// Writings are untrusted model output: they only ever enter the page as text
// (textContent, text nodes), never as HTML.
"use strict";

(() => {
  const MARKER = "[fill in the blank]";
  // The page's words, one table per language, put into the page by the server
  // (wording.py): the page speaks the language of the instruction it shows.
  const WORDS = JSON.parse(document.getElementById("words").textContent);
  const TOKEN = decodeURIComponent(location.pathname.split("/").pop());
  const RETRY_MS = 3000;
  const NOTE_DELAY_MS = 600;
  const $ = (id) => document.getElementById(id);

  let language = speaks(document.documentElement.lang); // what the page speaks now
  let T = WORDS.text[language]; // its words
  let campaign = null; // the API's answer
  let index = 0; // the instruction shown
  let active = 0; // the selected card
  let cards = []; // the cards shown: {element, slot?, writing}

  class Failure extends Error {
    constructor(message, retry) {
      super(message);
      this.retry = retry;
    }
  }

  // `keepalive` lets a save started as the page goes away finish after it has gone.
  async function api(method, path, body, keepalive = false) {
    let response;
    try {
      response = await fetch(path, {
        method,
        keepalive,
        headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw new Failure(T.retrying, true);
    }
    let payload = {};
    try {
      payload = await response.json();
    } catch (err) {
      payload = {};
    }
    if (!response.ok) {
      throw new Failure(payload.error || String(response.status), response.status >= 500);
    }
    return payload;
  }

  // The language the page speaks for data in `lang`: its own if the page has its
  // words, else the fallback (English), as the server chose the guidelines.
  function speaks(lang) {
    return Object.hasOwn(WORDS.text, lang) ? lang : WORDS.fallback;
  }

  // A sentence of the table with its {name}s filled in from `values`.
  function say(template, values) {
    return template.replace(/\{(\w+)\}/g, (whole, name) => (Object.hasOwn(values, name) ? String(values[name]) : whole));
  }

  // Every key of `root` (the page, or a card just made) in the words spoken now.
  function translate(root) {
    for (const element of root.querySelectorAll("[data-text]")) {
      element.textContent = T[element.dataset.text];
    }
    for (const element of root.querySelectorAll("[data-placeholder]")) {
      element.placeholder = T[element.dataset.placeholder];
    }
    for (const element of root.querySelectorAll("[data-label]")) {
      element.setAttribute("aria-label", T[element.dataset.label]);
    }
  }

  // A line of the shortcuts table as nodes: each [key] a key cap, the rest text.
  function keyed(line) {
    return line.split(/\[([^\]]+)\]/).flatMap((part, i) => {
      if (i % 2 === 0) return part ? [document.createTextNode(part)] : [];
      const cap = document.createElement("kbd");
      cap.textContent = part;
      return [cap];
    });
  }

  function fillKeys() {
    const rows = T.keys.map(([keys, does]) => {
      const row = document.createElement("tr");
      for (const line of [keys, does]) {
        const cell = document.createElement("td");
        cell.append(...keyed(line));
        row.append(cell);
      }
      return row;
    });
    $("keys-table").replaceChildren(...rows);
  }

  // Speak the language the page has for data in `lang`: the page's own words, its
  // title and its lang attribute (which the fonts and screen readers follow).
  function speak(lang) {
    language = speaks(lang);
    T = WORDS.text[language];
    document.documentElement.lang = language;
    document.title = T.title;
    translate(document);
    fillKeys();
  }

  function clock(iso, lang) {
    return new Date(iso).toLocaleTimeString(lang);
  }

  // One thing saved on its own (a writing's rating, an instruction's pick): what the page
  // holds (`draft`), whether the server has it, and the request in flight, one at a time.
  // It speaks of itself in the language of its instruction (`lang`).
  class Slot {
    constructor(url, draft, saved, problem, lang) {
      this.url = url;
      this.draft = draft;
      this.problem = problem;
      this.lang = speaks(lang);
      this.words = WORDS.text[this.lang];
      this.held = saved ? saved.saved : null; // when the server last stored it
      this.version = 0;
      this.sent = 0;
      this.inflight = false;
      this.timer = null;
      this.message = saved ? this.said(saved.saved) : "";
      this.status = null; // the element showing `message`
    }

    said(iso) {
      return say(this.words.saved, { time: clock(iso, this.lang) });
    }

    get dirty() {
      return this.version !== this.sent;
    }

    change(delay) {
      this.version += 1;
      clearTimeout(this.timer);
      this.timer = null;
      const why = this.problem(this.draft);
      if (why) {
        this.show(this.words[why]);
        return;
      }
      this.timer = setTimeout(() => this.send(), delay);
      this.show(this.words.saving);
    }

    get waiting() {
      return this.inflight || this.timer !== null;
    }

    // The page is going away: a save still waiting for its delay goes now.
    flush() {
      if (this.timer !== null && !this.inflight) {
        this.send(true);
      }
    }

    async send(keepalive = false) {
      if (this.inflight) {
        return; // the answer to the request in flight sends any newer draft
      }
      clearTimeout(this.timer);
      this.timer = null;
      if (!this.dirty) {
        paintBar();
        return;
      }
      const version = this.version;
      let retry = false;
      this.inflight = true;
      this.show(this.words.saving);
      try {
        const reply = await api("PUT", this.url, this.draft.body(), keepalive);
        this.sent = version;
        this.held = reply.saved;
        this.show(this.said(reply.saved));
      } catch (err) {
        this.show(say(this.words.failed, { why: err.message }));
        retry = err.retry;
      } finally {
        this.inflight = false;
      }
      clearTimeout(this.timer); // a change made meanwhile is sent now, or not at all
      this.timer = null;
      if (retry) {
        this.timer = setTimeout(() => this.send(), RETRY_MS);
      } else if (this.version !== version) {
        const why = this.problem(this.draft); // changed while the request was in flight
        if (why) {
          this.show(this.words[why]);
        } else {
          this.send();
        }
      }
      paintBar();
    }

    show(message) {
      this.message = message;
      if (this.status) {
        this.status.textContent = message;
      }
      paintBar();
    }
  }

  function ratingSlot(item, writing) {
    const saved = writing.rating;
    const draft = {
      score: saved ? saved.score : null,
      errors: new Set(saved ? saved.errors : []),
      note: saved ? saved.note : "",
      body() {
        return { score: this.score, errors: [...this.errors], note: this.note };
      },
    };
    const problem = (d) => {
      if (d.score === null) return "need_score";
      if (d.score < campaign.passing && d.errors.size === 0) return "need_error";
      if (d.errors.has("unsafe") && d.score !== 1) return "unsafe_one";
      return null;
    };
    return new Slot(`/api/ratings/${encodeURIComponent(writing.id)}`, draft, saved, problem, item.language);
  }

  function pickSlot(item) {
    const saved = item.pick;
    const draft = {
      choice: saved ? saved.choice : null,
      reason: saved ? saved.reason : "",
      body() {
        return { choice: this.choice, reason: this.reason };
      },
    };
    const problem = (d) => {
      if (d.choice === null) return "need_choice";
      if (!d.reason.trim()) return "need_reason";
      return null;
    };
    return new Slot(`/api/picks/${encodeURIComponent(item.id)}`, draft, saved, problem, item.language);
  }

  function slots() {
    return campaign.instructions.flatMap((item) =>
      campaign.kind === "pick" ? [item.slot] : item.writings.map((w) => w.slot),
    );
  }

  function finished(item) {
    return campaign.kind === "pick" ? item.slot.held !== null : item.writings.every((w) => w.slot.held !== null);
  }

  function paintBar() {
    if (!campaign) return;
    const all = campaign.instructions;
    const done = all.filter(finished).length;
    const progress = say(T.progress, { index: index + 1, count: all.length, done });
    $("progress").textContent = done === all.length ? `${progress} · ${T.all_done}` : progress;
    const pending = slots();
    const state = $("state");
    const unsaved = pending.filter((s) => s.dirty && !s.waiting).length;
    state.classList.toggle("warn", unsaved > 0);
    if (pending.some((s) => s.waiting)) {
      state.textContent = T.saving;
    } else if (unsaved > 0) {
      state.textContent = say(T.unsaved, { count: unsaved });
    } else {
      state.textContent = T.all_saved;
    }
    $("prev").disabled = index === 0;
    $("next").disabled = index === all.length - 1;
  }

  // The grounding as text nodes, each blank marker in a <mark> of its own.
  function fillGrounding(element, text) {
    element.replaceChildren();
    text.split(MARKER).forEach((part, i) => {
      if (i > 0) {
        const mark = document.createElement("mark");
        mark.textContent = MARKER;
        element.append(mark);
      }
      element.append(document.createTextNode(part));
    });
  }

  function fillWriting(element, text) {
    element.textContent = text.trim() ? text : T.empty;
    element.classList.toggle("empty", !text.trim());
  }

  function scoreField(card, writing) {
    const field = card.querySelector(".score");
    const slot = writing.slot;
    for (const value of [1, 2, 3, 4, 5]) {
      const label = document.createElement("label");
      const input = document.createElement("input");
      input.type = "radio";
      input.name = `score-${writing.id}`;
      input.value = String(value);
      input.checked = slot.draft.score === value;
      input.addEventListener("change", () => setScore(card, writing, value));
      label.append(input, document.createTextNode(` ${value}`));
      field.append(label);
    }
  }

  function errorsField(card, writing) {
    const field = card.querySelector(".errors");
    const slot = writing.slot;
    let group = null;
    for (const type of T.error_types) {
      if (!group || group.dataset.name !== type.group) {
        const row = document.createElement("div");
        row.className = "group";
        const name = document.createElement("span");
        name.className = "group-name";
        name.textContent = type.group;
        group = document.createElement("div");
        group.dataset.name = type.group;
        row.append(name, group);
        field.append(row);
      }
      const label = document.createElement("label");
      const input = document.createElement("input");
      input.type = "checkbox";
      input.value = type.id;
      input.checked = slot.draft.errors.has(type.id);
      input.addEventListener("change", () => {
        if (input.checked) {
          slot.draft.errors.add(type.id);
        } else {
          slot.draft.errors.delete(type.id);
        }
        if (type.id === "unsafe" && input.checked && slot.draft.score !== 1) {
          setScore(card, writing, 1); // an unsafe writing scores 1: say it for the rater
          return;
        }
        slot.change(0);
      });
      label.append(input, document.createTextNode(` ${type.label}`));
      group.append(label);
    }
    field.disabled = !(slot.draft.score !== null && slot.draft.score < campaign.passing);
  }

  function setScore(card, writing, value) {
    const slot = writing.slot;
    slot.draft.score = value;
    card.querySelector(`input[value="${value}"][type=radio]`).checked = true;
    const errors = card.querySelector(".errors");
    errors.disabled = value >= campaign.passing;
    if (value >= campaign.passing) {
      slot.draft.errors.clear();
      errors.querySelectorAll("input").forEach((box) => {
        box.checked = false;
      });
    }
    slot.change(0);
  }

  function noteField(card, slot, key) {
    const area = card.querySelector("textarea");
    const count = card.querySelector(".count");
    area.maxLength = campaign.note_limit;
    area.value = slot.draft[key];
    const counted = () => {
      count.textContent = `${area.value.length}/${campaign.note_limit}`;
    };
    counted();
    area.addEventListener("input", () => {
      slot.draft[key] = area.value;
      counted();
      slot.change(NOTE_DELAY_MS);
    });
    area.addEventListener("blur", () => {
      if (slot.dirty && !slot.problem(slot.draft) && !slot.inflight) {
        clearTimeout(slot.timer);
        slot.send();
      }
    });
  }

  function rateCard(writing, text) {
    const card = $("card").content.firstElementChild.cloneNode(true);
    translate(card);
    card.querySelector(".label").textContent = say(T.writing, { label: writing.label });
    fillWriting(card.querySelector(".writing"), text);
    scoreField(card, writing);
    errorsField(card, writing);
    noteField(card, writing.slot, "note");
    writing.slot.status = card.querySelector(".saved");
    writing.slot.status.textContent = writing.slot.message;
    return card;
  }

  function pickCard(item, writing, position, text) {
    const card = $("pick").content.firstElementChild.cloneNode(true);
    translate(card);
    card.querySelector(".label").textContent = say(T.candidate, { label: writing.label });
    fillWriting(card.querySelector(".writing"), text);
    const input = card.querySelector("input");
    input.checked = item.slot.draft.choice === writing.id;
    input.addEventListener("change", () => choose(item, position));
    return card;
  }

  function choose(item, position) {
    const writing = item.writings[position];
    if (!writing) return;
    item.slot.draft.choice = writing.id;
    cards[position].element.querySelector("input").checked = true;
    select(position);
    item.slot.change(0);
  }

  function reasonCard(item) {
    const card = $("reason").content.firstElementChild.cloneNode(true);
    translate(card);
    noteField(card, item.slot, "reason");
    item.slot.status = card.querySelector(".saved");
    item.slot.status.textContent = item.slot.message;
    return card;
  }

  // One instruction's texts, fetched when first needed (the request's promise is kept).
  function texts(item) {
    if (!item.texts) {
      item.texts = api("GET", `/api/assignments/${encodeURIComponent(item.id)}`).catch((err) => {
        item.texts = null;
        throw err;
      });
    }
    return item.texts;
  }

  async function show(position) {
    const items = campaign.instructions;
    index = Math.max(0, Math.min(items.length - 1, position));
    const item = items[index];
    history.replaceState(null, "", `#${index + 1}`);
    speak(item.language);
    paintBar();
    let content;
    try {
      content = await texts(item);
    } catch (err) {
      fail(err.message);
      return;
    }
    if (items[index] !== item) return; // the rater moved on while it loaded
    $("message").hidden = true;
    $("task").textContent = T.tasks[item.task] || item.task;
    $("instruction").textContent = content.instruction;
    const grounded = Boolean(content.grounding);
    $("grounding-box").hidden = !grounded;
    $("grounding-title").textContent = T.grounding[item.task] || "";
    fillGrounding($("grounding"), grounded ? content.grounding : "");
    $("reference-box").hidden = content.reference === null;
    $("reference").textContent = content.reference || "";
    for (const section of document.querySelectorAll(".guideline")) {
      section.hidden = !(section.dataset.task === item.task && section.dataset.language === language);
    }
    const text = new Map(content.writings.map((w) => [w.id, w.text]));
    const box = $("writings");
    box.replaceChildren();
    for (const s of slots()) s.status = null;
    cards = item.writings.map((writing, i) => {
      const element =
        campaign.kind === "pick" ? pickCard(item, writing, i, text.get(writing.id)) : rateCard(writing, text.get(writing.id));
      element.addEventListener("focusin", () => select(i));
      element.addEventListener("click", () => select(i));
      box.append(element);
      return { element, writing };
    });
    if (campaign.kind === "pick") {
      box.append(reasonCard(item));
    }
    select(0);
    window.scrollTo(0, 0);
    if (index + 1 < items.length) {
      texts(items[index + 1]).catch(() => {}); // ready before the rater gets there
    }
  }

  function select(position) {
    if (!cards.length) return;
    active = Math.max(0, Math.min(cards.length - 1, position));
    cards.forEach((card, i) => card.element.classList.toggle("active", i === active));
  }

  function move(step) {
    select(active + step);
    cards[active].element.scrollIntoView({ block: "nearest" });
  }

  function toggle(id) {
    const panel = $(id);
    panel.hidden = !panel.hidden;
  }

  function onKey(event) {
    if (!campaign || !cards.length || event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target.matches("textarea")) {
      if (event.key === "Escape") {
        target.blur();
      }
      return;
    }
    const item = campaign.instructions[index];
    const key = event.key.toLowerCase();
    let handled = true;
    if (/^[1-9]$/.test(key) && campaign.kind === "pick") {
      choose(item, Number(key) - 1);
    } else if (/^[1-5]$/.test(key)) {
      setScore(cards[active].element, cards[active].writing, Number(key));
    } else if (key === "j") {
      move(1);
    } else if (key === "k") {
      move(-1);
    } else if (key === "n") {
      show(index + 1);
    } else if (key === "p") {
      show(index - 1);
    } else if (key === "e" && campaign.kind === "rate") {
      const errors = cards[active].element.querySelector(".errors");
      if (errors.disabled) {
        cards[active].writing.slot.show(T.errors_off);
      } else {
        errors.querySelector("input").focus();
      }
    } else if (key === "m") {
      const area = campaign.kind === "pick" ? $("writings").querySelector(".reason textarea") : cards[active].element.querySelector("textarea");
      area.focus();
    } else if (key === "g") {
      toggle("guide");
    } else if (key === "?") {
      toggle("keys");
    } else {
      handled = false;
    }
    if (handled) {
      event.preventDefault();
    }
  }

  function fail(message) {
    const box = $("message");
    box.textContent = message;
    box.hidden = false;
  }

  async function start() {
    speak(language); // the campaign's language, until an instruction is shown
    try {
      campaign = await api("GET", "/api/assignments");
    } catch (err) {
      fail(err.retry ? err.message : T.invalid);
      return;
    }
    for (const item of campaign.instructions) {
      if (campaign.kind === "pick") {
        item.slot = pickSlot(item);
      } else {
        for (const writing of item.writings) writing.slot = ratingSlot(item, writing);
      }
    }
    $("main").hidden = false;
    const asked = Number.parseInt(location.hash.slice(1), 10);
    const firstOpen = campaign.instructions.findIndex((item) => !finished(item));
    show(asked >= 1 && asked <= campaign.instructions.length ? asked - 1 : Math.max(firstOpen, 0));
    $("prev").addEventListener("click", () => show(index - 1));
    $("next").addEventListener("click", () => show(index + 1));
    $("toggle-guide").addEventListener("click", () => toggle("guide"));
    $("toggle-keys").addEventListener("click", () => toggle("keys"));
    document.addEventListener("keydown", onKey);
    window.addEventListener("pagehide", () => slots().forEach((s) => s.flush()));
    window.addEventListener("beforeunload", (event) => {
      if (slots().some((s) => s.dirty && !s.waiting)) {
        event.preventDefault(); // a change that cannot be saved yet (a 2 without an error type)
      }
    });
  }

  start();
})();
