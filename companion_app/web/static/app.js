// Enhancements over the plain forms (which work without script): answers in place without
// leaving the page, server push that keeps every open page of a game current, photos shrunk
// on the phone and sent with progress and a cancel button, the letter picker, questions
// before a turn is changed, and the list of this device's games.
"use strict";

const csrf = () => document.querySelector('meta[name="csrf-token"]').content;
const texts = () => JSON.parse(document.getElementById("texts").textContent);
const MAX_SIDE = 2560;       // a phone photo is shrunk to this many pixels on its long side
const JPEG_QUALITY = 0.88;
const GAMES_KEY = "erudit.games";
const GAMES_KEPT = 30;

let busyNow = false;         // a request of this page is under way: a push waits for it
let refreshWanted = false;

function busy(on, text) {
  busyNow = on;
  const box = document.getElementById("busy");
  if (text) document.getElementById("busy-text").textContent = text;
  if (box) box.hidden = !on;
  if (!on && refreshWanted) refresh();
}

function showError(message) {
  const flash = document.getElementById("flash");
  // a sentence: its first letter a capital, unless it starts with a name (`photo.jpg: …`)
  const first = message.split(" ")[0].replace(/[:,]$/, "");
  flash.textContent = /^\p{L}+$/u.test(first) ? message.charAt(0).toUpperCase() + message.slice(1)
    : message;
  flash.hidden = false;
  flash.scrollIntoView({ behavior: "smooth", block: "center" });
}

function clearError() {
  const flash = document.getElementById("flash");
  if (flash) { flash.hidden = true; flash.textContent = ""; }
}

// -- answers in place -----------------------------------------------------------------
async function send(form, body) {
  let response;
  try {
    response = await fetch(form.action, {
      method: "POST", body, credentials: "same-origin",
      headers: { "Accept": "application/json", "X-CSRF-Token": csrf() },
    });
  } catch (err) {
    return { ok: false, data: { error: texts().network } };
  }
  try {
    return { ok: response.ok, status: response.status, data: await response.json() };
  } catch (err) {
    return { ok: false, data: { error: texts().server.replace("{status}", response.status) } };
  }
}

async function submitJson(form, submitter) {
  const question = (submitter && submitter.dataset.confirm) || form.dataset.confirm;
  if (question && !window.confirm(question)) return;
  const body = new FormData(form, submitter);
  busy(true, form.dataset.busy);
  let answer = await send(form, body);
  if (answer.status === 409 && answer.data.ask) {         // a past turn would change: ask
    busy(false);
    if (!window.confirm([answer.data.ask, ...answer.data.changes].join("\n"))) {
      closePicker();
      return;
    }
    body.set("agree", "1");
    busy(true);
    answer = await send(form, body);
  }
  closePicker();
  if (!answer.ok) {
    busy(false);
    showError(answer.data.error || texts().failed);
    return;
  }
  clearError();
  await refresh(true);
  busy(false);
}

function closePicker() {
  const dialog = document.getElementById("picker");
  if (dialog && dialog.open) dialog.close();
}

// The page fetched anew and put in place of the old one: the reader stays where they were.
async function refresh(own = false) {
  const dialog = document.getElementById("picker");
  if (!own && (busyNow || (dialog && dialog.open) || uploading)) {   // after what is under way
    refreshWanted = true;
    return;
  }
  refreshWanted = false;
  let html;
  try {
    const response = await fetch(window.location.pathname, {
      credentials: "same-origin", headers: { "Accept": "text/html" } });
    if (!response.ok) return;
    html = await response.text();
  } catch (err) {
    return;                       // the push says again when the server is back
  }
  const fresh = new DOMParser().parseFromString(html, "text/html");
  const main = document.querySelector("main");
  const next = fresh.querySelector("main");
  const flash = document.getElementById("flash");
  const kept = flash && !flash.hidden ? flash.textContent : "";
  main.replaceWith(next);
  if (kept) showError(kept);
  document.title = fresh.title;
  setup();
}

// -- server push ----------------------------------------------------------------------
let source = null;

function listen() {
  const main = document.querySelector("main");
  const url = main && main.dataset.events;
  if (!url || source) return;
  source = new EventSource(url);
  source.addEventListener("state", (event) => {
    const now = JSON.parse(event.data).state;
    if (now !== document.querySelector("main").dataset.state) refresh();
  });
}

// -- photos ---------------------------------------------------------------------------
let uploading = null;

async function shrunk(file) {
  // a camera's 12–48 MP JPEG as a JPEG of MAX_SIDE pixels, turned upright (EXIF)
  if (!window.createImageBitmap || !/^image\//.test(file.type)) return file;
  let bitmap;
  try {
    bitmap = await createImageBitmap(file, { imageOrientation: "from-image" });
  } catch (err) {
    return file;                  // a format the browser cannot draw: the server says why
  }
  const scale = Math.min(1, MAX_SIDE / Math.max(bitmap.width, bitmap.height));
  if (scale === 1 && file.type === "image/jpeg") { bitmap.close(); return file; }
  const canvas = document.createElement("canvas");
  canvas.width = Math.round(bitmap.width * scale);
  canvas.height = Math.round(bitmap.height * scale);
  canvas.getContext("2d").drawImage(bitmap, 0, 0, canvas.width, canvas.height);
  bitmap.close();
  const blob = await new Promise((done) => canvas.toBlob(done, "image/jpeg", JPEG_QUALITY));
  return blob ? new File([blob], "photo.jpg", { type: "image/jpeg" }) : file;
}

async function sendPhoto(form) {
  const input = form.querySelector('input[type="file"]');
  const panel = form.querySelector(".upload");
  const bar = panel.querySelector("progress");
  const label = panel.querySelector(".upload-text");
  const words = texts();
  form.classList.add("sending");
  panel.hidden = false;
  bar.removeAttribute("value");
  label.textContent = words.shrinking;
  const photo = await shrunk(input.files[0]);
  const body = new FormData(form);
  body.set("photo", photo, photo.name || "photo.jpg");
  const xhr = new XMLHttpRequest();
  uploading = xhr;
  const finished = new Promise((resolve) => {
    xhr.upload.addEventListener("progress", (event) => {
      if (!event.lengthComputable) return;
      bar.max = event.total;
      bar.value = event.loaded;
      label.textContent = words.sending
        .replace("{sent}", (event.loaded / 1048576).toFixed(1))
        .replace("{total}", (event.total / 1048576).toFixed(1));
    });
    xhr.upload.addEventListener("load", () => {
      bar.removeAttribute("value");
      label.textContent = words.reading;
    });
    xhr.addEventListener("load", () => resolve("done"));
    xhr.addEventListener("error", () => resolve("network"));
    xhr.addEventListener("abort", () => resolve("cancelled"));
  });
  xhr.open("POST", form.action);
  xhr.setRequestHeader("Accept", "application/json");
  xhr.setRequestHeader("X-CSRF-Token", csrf());
  xhr.send(body);
  const how = await finished;
  uploading = null;
  form.classList.remove("sending");
  panel.hidden = true;
  input.value = "";
  if (how === "cancelled") {
    if (refreshWanted) refresh();
    return;
  }
  if (how === "network") { showError(words.network); return; }
  let data = {};
  try { data = JSON.parse(xhr.responseText); } catch (err) { /* not JSON: a proxy's page */ }
  if (xhr.status >= 400) {
    showError(data.error || words.server.replace("{status}", xhr.status));
    return;
  }
  clearError();
  await refresh(true);
  const pending = document.getElementById("pending");
  if (pending) pending.scrollIntoView({ block: "start" });
}

// -- this device's games --------------------------------------------------------------
function remembered() {
  try { return JSON.parse(localStorage.getItem(GAMES_KEY)) || []; } catch (err) { return []; }
}

function remember() {
  const main = document.querySelector("main");
  if (!main || !main.dataset.game) return;
  const game = JSON.parse(main.dataset.game);
  game.seen = Date.now();
  const games = [game, ...remembered().filter((g) => g.url !== game.url)].slice(0, GAMES_KEPT);
  try { localStorage.setItem(GAMES_KEY, JSON.stringify(games)); } catch (err) { /* full */ }
}

function listGames() {
  const section = document.getElementById("my-games");
  if (!section) return;
  const games = remembered();
  const list = section.querySelector("ul");
  list.replaceChildren();
  for (const game of games) {
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.href = game.url;
    link.textContent = game.players.join(" · ");
    const about = document.createElement("small");
    about.textContent = game.summary + " · " +
      new Date(game.seen).toLocaleDateString(document.documentElement.lang);
    const what = document.createElement("div");
    what.append(link, about);
    const forget = document.createElement("button");
    forget.type = "button";
    forget.className = "forget";
    forget.textContent = texts().forget;
    forget.addEventListener("click", () => {
      localStorage.setItem(GAMES_KEY, JSON.stringify(remembered().filter((g) => g.url !== game.url)));
      listGames();
    });
    item.append(what, forget);
    list.append(item);
  }
  section.hidden = games.length === 0;
}

// -- the letter picker ----------------------------------------------------------------
function setupPicker() {
  const dialog = document.getElementById("picker");
  if (!dialog) return;
  const form = dialog.querySelector("form");
  const asStar = dialog.querySelector("#as-star");
  for (const cell of document.querySelectorAll(".board.tap .cell, .zoom .cell")) {
    cell.addEventListener("click", () => {
      form.elements.cell.value = cell.dataset.cell;
      const symbol = cell.dataset.symbol;
      dialog.querySelector("#picker-cell").textContent = cell.dataset.cell +
        (cell.dataset.turn ? " · " + cell.title.split(" · ")[1] : "");
      asStar.checked = symbol === "*" || (symbol !== symbol.toUpperCase());
      for (const b of dialog.querySelectorAll(".letters button")) {
        b.classList.toggle("current", b.value.toUpperCase() === symbol.toUpperCase());
      }
      dialog.showModal();
    });
  }
  // a star standing for a letter is written in lower case in the board text
  form.addEventListener("submit", (event) => {
    const b = event.submitter;
    if (b && b.name === "symbol" && /^\p{L}$/u.test(b.value)) {
      b.value = asStar.checked ? b.value.toLowerCase() : b.value.toUpperCase();
    }
  }, true);
  dialog.querySelector(".close").addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => { if (refreshWanted && !busyNow) refresh(); });
}

function setupForms() {
  for (const form of document.querySelectorAll("form[data-api]")) {
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (form.classList.contains("photo-form")) sendPhoto(form);
      else submitJson(form, event.submitter);
    });
  }
  for (const input of document.querySelectorAll("input[data-autosubmit]")) {
    input.addEventListener("change", () => { if (input.files.length) input.form.requestSubmit(); });
  }
  for (const button of document.querySelectorAll(".upload .cancel")) {
    button.addEventListener("click", () => { if (uploading) uploading.abort(); });
  }
}

function setup() {
  setupForms();
  setupPicker();
  remember();
  listGames();
  listen();
}

document.addEventListener("DOMContentLoaded", setup);
