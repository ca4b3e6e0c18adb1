// Enhancements over the plain forms (which work without script): answers in place without
// leaving the page, server push that keeps every open page of a game current, photos shrunk
// on the phone and sent with progress and a cancel button, the letter picker, questions
// before a turn is changed, the list of this device's games, and the camera panel: this
// device's camera sending frames, or one of the server's cameras, watching the board.
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
  const quick = submitter && "liveQuick" in submitter.dataset && liveWatching();
  const question = (submitter && submitter.dataset.confirm) || form.dataset.confirm;
  if (question && !quick && !window.confirm(question)) return;
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
// One refresh at a time, in the order asked: a push heard while the page is being fetched
// waits for it, and is skipped when the fetched page already shows the state pushed.
let refreshing = Promise.resolve();
let pushed = null;                // the game's state the server last pushed

function refresh(own = false) {
  const dialog = document.getElementById("picker");
  if (!own && (busyNow || (dialog && dialog.open) || uploading)) {   // after what is under way
    refreshWanted = true;
    return Promise.resolve();
  }
  refreshWanted = false;
  const run = refreshing.then(() => fetchPage(own));
  refreshing = run.catch(() => {});
  return run;
}

async function fetchPage(own) {
  const main = document.querySelector("main");
  if (!own && pushed !== null && main && main.dataset.state === pushed) return;
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
  const next = fresh.querySelector("main");
  const flash = document.getElementById("flash");
  const kept = flash && !flash.hidden ? flash.textContent : "";
  document.querySelector("main").replaceWith(next);
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
    pushed = JSON.parse(event.data).state;
    if (pushed !== document.querySelector("main").dataset.state) refresh();
  });
  source.addEventListener("live", (event) => heard(JSON.parse(event.data), true));
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

// -- the camera panel -----------------------------------------------------------------
// The game's live state (LIVE: source, camera, state, note, read, cameras, frames_at) comes
// from the server push and from each answer to a frame; this page's own camera, when it
// sends, outlives the page being fetched anew (its preview is moved into the new panel).
const FRAME_MS = 250;        // about 4 frames a second
const BACKOFF_MS = 4000;     // the longest wait between frames when the server asks for fewer
const FRAME_SIDE = 1280;     // a frame's long side at most, in pixels
const FRAME_QUALITY = 0.8;
const STALE_S = 3;           // a paused camera's last frame older than this is said
const POLL_MS = 2000;

let live = null;
let liveAt = 0;              // performance.now() when `live` was heard
const camera = { stream: null, video: null, running: false, opening: false, wake: null,
                 answered: false, elsewhere: false };

function liveTexts() { return texts().live; }

function liveWatching() {
  return camera.running || Boolean(live && live.source && live.state !== "off");
}

function heard(state, pushed = false) {
  live = state;
  liveAt = performance.now();
  // stopped from another page, or a server camera took over: this one stops sending (the
  // server would take its next frame as a new start)
  if (pushed && camera.running && camera.answered &&
      (state.state === "off" || state.source !== "browser")) {
    stopCamera(true);
  }
  showLive();
}

function counted(forms, n) {
  const kind = new Intl.PluralRules(document.documentElement.lang).select(n);
  return (forms[kind] || forms.other).replace("{n}", n);
}

function liveStatus(words) {
  if (!live || live.state === "off" || !live.source) {
    return camera.running ? words.starting : words.off;
  }
  if (live.state === "paused") {
    return live.note ? words.paused.replace("{note}", live.note) : words.paused_plain;
  }
  if (live.state === "starting") return words.starting;
  if (live.source === "camera") {
    return words.camera.replace("{name}", live.cameras[live.camera] || "");
  }
  return camera.running ? words.mine : words.browser;
}

function showLive() {
  const panel = document.getElementById("live");
  if (!panel) return;
  const words = liveTexts();
  const on = liveWatching();
  const state = on ? (live && live.state !== "off" ? live.state : "starting") : "off";
  panel.dataset.state = state;
  panel.querySelector(".live-text").textContent = liveStatus(words);
  if (!panel.dataset.frame) panel.hidden = !on;            // a screen shows it while on
  showSince(panel, words);
  showBoardRead(panel);
  const last = panel.querySelector(".live-last");
  if (last) last.hidden = !on;
  if (!panel.dataset.frame) return;
  const secure = Boolean(navigator.mediaDevices && navigator.mediaDevices.getUserMedia);
  panel.querySelector(".live-insecure").hidden = secure;
  const start = panel.querySelector(".live-start");
  start.hidden = !secure || on;                          // one camera at a time
  panel.querySelector(".live-stop").hidden = !on;
  showCameras(panel, words, on);
  placePreview(panel);
}

// How long ago the last frame came, while the camera is paused: counted on from what the
// server last said (no frames come meanwhile), and asked again every POLL_MS.
function showSince(panel, words) {
  const since = panel.querySelector(".live-since");
  const paused = live && live.source && live.state === "paused" &&
    typeof live.frames_at === "number";
  const age = paused ? Math.floor(live.frames_at + (performance.now() - liveAt) / 1000) : null;
  since.hidden = age === null || age < STALE_S;
  if (!since.hidden) since.textContent = counted(words.last_frame, age);
}

function showBoardRead(panel) {
  const figure = panel.querySelector(".live-board");
  const img = figure.querySelector("img");
  const read = live && live.source ? live.read : 0;
  if (!read) { figure.hidden = true; return; }
  const src = panel.dataset.image + "?read=" + read;
  if (img.getAttribute("src") !== src) {
    img.onload = () => { figure.hidden = false; };
    img.onerror = () => { figure.hidden = true; };
    img.src = src;
  } else if (img.complete && img.naturalWidth) {
    figure.hidden = false;
  }
}

function showCameras(panel, words, on) {
  const box = panel.querySelector(".live-cameras");
  const names = (live && live.cameras) || [];
  const shown = on ? [] : names;
  if (box.dataset.names === JSON.stringify(shown)) return;
  box.dataset.names = JSON.stringify(shown);
  box.replaceChildren(...shown.map((name, index) => {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = "🎥 " + words.watch_with.replace("{name}", name);
    button.addEventListener("click", () => postCamera(panel, { source: String(index) }));
    return button;
  }));
}

async function postCamera(panel, fields) {
  const body = new FormData();
  for (const [name, value] of Object.entries(fields)) body.set(name, value);
  busy(true);
  const answer = await send({ action: panel.dataset.camera }, body);
  busy(false);
  if (!answer.ok) { showError(answer.data.error || texts().failed); return; }
  clearError();
  if (answer.data.live) heard(answer.data.live);
  else loadLive(panel);
}

async function loadLive(panel) {
  try {
    const response = await fetch(panel.dataset.live, {
      credentials: "same-origin", headers: { "Accept": "application/json" } });
    if (response.ok) heard(await response.json());
  } catch (err) {
    /* the push says it when the server is back */
  }
}

function placePreview(panel) {
  const box = panel.querySelector(".live-preview");
  if (!box) return;
  box.hidden = !camera.running;
  if (camera.running && camera.video.parentNode !== box) {
    box.append(camera.video);
    camera.video.play().catch(() => {});    // a video taken out of the page stops playing
  }
}

async function startCamera(panel) {
  const words = liveTexts();
  if (camera.running || camera.opening) return;
  camera.opening = true;
  try {
    camera.stream = await navigator.mediaDevices.getUserMedia({ audio: false, video: {
      facingMode: { ideal: "environment" }, width: { ideal: 1280 }, height: { ideal: 720 } } });
  } catch (err) {
    camera.opening = false;
    const why = err && err.name === "NotAllowedError" ? words.denied
      : err && (err.name === "NotFoundError" || err.name === "OverconstrainedError")
        ? words.no_camera : words.failed.replace("{error}", (err && err.message) || err);
    showError(why);
    return;
  }
  camera.opening = false;
  clearError();
  if (!camera.video) {
    camera.video = document.createElement("video");
    camera.video.muted = true;
    camera.video.playsInline = true;
    camera.video.setAttribute("playsinline", "");
  }
  camera.video.srcObject = camera.stream;
  camera.running = true;
  camera.answered = camera.elsewhere = false;
  keepAwake();
  showLive();
  sendFrames();
}

async function keepAwake() {
  // a phone on a stand must not lock its screen: the camera would stop with it
  try {
    if (navigator.wakeLock) camera.wake = await navigator.wakeLock.request("screen");
  } catch (err) {
    camera.wake = null;
  }
}

function stopCamera(elsewhere = false) {
  camera.running = false;
  camera.elsewhere = elsewhere;
  if (camera.stream) for (const track of camera.stream.getTracks()) track.stop();
  camera.stream = null;
  if (camera.video) { camera.video.srcObject = null; camera.video.remove(); }
  if (camera.wake) { camera.wake.release().catch(() => {}); camera.wake = null; }
  showLive();
}

function grab(canvas) {
  const video = camera.video;
  if (!video.videoWidth) return Promise.resolve(null);      // no picture yet
  const scale = Math.min(1, FRAME_SIDE / Math.max(video.videoWidth, video.videoHeight));
  canvas.width = Math.round(video.videoWidth * scale);
  canvas.height = Math.round(video.videoHeight * scale);
  canvas.getContext("2d").drawImage(video, 0, 0, canvas.width, canvas.height);
  return new Promise((done) => canvas.toBlob(done, "image/jpeg", FRAME_QUALITY));
}

async function postFrame(url, blob) {
  try {
    const response = await fetch(url, {
      method: "POST", body: blob, credentials: "same-origin",
      headers: { "Content-Type": "image/jpeg", "Accept": "application/json",
                 "X-CSRF-Token": csrf() } });
    let data = {};
    try { data = await response.json(); } catch (err) { /* not JSON: a proxy's page */ }
    return { status: response.status, data };
  } catch (err) {
    return { status: 0, data: {} };
  }
}

// One frame at a time: the next is taken once the server has answered the last, about
// FRAME_MS after it; a server asking for fewer (429) or out of reach is asked less often.
async function sendFrames() {
  const canvas = document.createElement("canvas");
  let wait = FRAME_MS;
  while (camera.running) {
    const started = performance.now();
    const panel = document.getElementById("live");
    if (!panel || !panel.dataset.frame) { stopCamera(); break; }      // the game is over
    const blob = await grab(canvas);
    if (blob && camera.running) {
      const answer = await postFrame(panel.dataset.frame, blob);
      if (!camera.running) {
        // a frame sent before a stop on another page came after it: it started anew
        if (answer.status === 200 && camera.elsewhere) unwatch(panel);
        break;
      }
      if (answer.status === 200) {
        wait = FRAME_MS;
        camera.answered = true;
        if (answer.data.live) heard(answer.data.live);
      } else if (answer.status === 429 || answer.status === 0 || answer.status >= 500) {
        wait = Math.min(2 * wait, BACKOFF_MS);
      } else {                                   // over, another camera, a frame refused
        stopCamera();
        showError(answer.data.error || texts().server.replace("{status}", answer.status));
        break;
      }
    }
    await new Promise((done) => setTimeout(done, Math.max(0, wait - (performance.now() - started))));
  }
}

function unwatch(panel) {
  const body = new FormData();
  body.set("stop", "1");
  send({ action: panel.dataset.camera }, body);
}

function setupLive() {
  const panel = document.getElementById("live");
  if (!panel) return;
  if (panel.dataset.frame) {
    panel.querySelector(".live-start").addEventListener("click", () => startCamera(panel));
    panel.querySelector(".live-stop").addEventListener("click", () => {
      const mine = camera.running;
      stopCamera();
      postCamera(panel, { stop: "1" });
      if (mine) showLive();
    });
  }
  showLive();
  if (live === null && panel.dataset.live) loadLive(panel);
}

setInterval(() => {
  const panel = document.getElementById("live");
  if (!panel || !live) return;
  showSince(panel, liveTexts());
  if (live.state === "paused" && panel.dataset.live && performance.now() - liveAt > POLL_MS) {
    loadLive(panel);
  }
}, 1000);

function setup() {
  setupForms();
  setupPicker();
  setupLive();
  remember();
  listGames();
  listen();
}

document.addEventListener("DOMContentLoaded", setup);
