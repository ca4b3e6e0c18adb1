// Small enhancements over plain forms: JSON submits with a busy overlay, the camera
// input that sends itself, and the letter picker opened by tapping a board cell.
"use strict";

const csrf = () => document.querySelector('meta[name="csrf-token"]').content;

function busy(on, text) {
  const box = document.getElementById("busy");
  if (text) document.getElementById("busy-text").textContent = text;
  box.hidden = !on;
}

function showError(message) {
  const flash = document.getElementById("flash");
  flash.textContent = message;
  flash.hidden = false;
  flash.scrollIntoView({ behavior: "smooth", block: "center" });
}

async function submitJson(form, submitter) {
  if (form.dataset.confirm && !window.confirm(form.dataset.confirm)) return;
  const body = new FormData(form, submitter);
  busy(true, form.dataset.busy);
  let answer;
  try {
    const response = await fetch(form.action, {
      method: "POST", body, credentials: "same-origin",
      headers: { "Accept": "application/json", "X-CSRF-Token": csrf() },
    });
    answer = { ok: response.ok, data: await response.json() };
  } catch (err) {
    answer = { ok: false, data: { error: String(err) } };
  }
  if (!answer.ok) {
    busy(false);
    const dialog = document.getElementById("picker");
    if (dialog && dialog.open) dialog.close();
    showError(answer.data.error || "error");
    return;
  }
  window.location.assign(window.location.pathname);
}

function setupForms() {
  for (const form of document.querySelectorAll("form[data-api]")) {
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      submitJson(form, event.submitter);
    });
  }
  for (const input of document.querySelectorAll("input[data-autosubmit]")) {
    input.addEventListener("change", () => { if (input.files.length) input.form.requestSubmit(); });
  }
}

function setupPicker() {
  const dialog = document.getElementById("picker");
  if (!dialog) return;
  const form = dialog.querySelector("form");
  const asStar = dialog.querySelector("#as-star");
  for (const cell of document.querySelectorAll(".board.tap .cell")) {
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
  // A star standing for a letter is written in lower case, as in board text.
  form.addEventListener("submit", (event) => {
    const b = event.submitter;
    if (b && b.name === "symbol" && /^\p{L}$/u.test(b.value)) {
      b.value = asStar.checked ? b.value.toLowerCase() : b.value.toUpperCase();
    }
  }, true);
  dialog.querySelector(".close").addEventListener("click", () => dialog.close());
}

document.addEventListener("DOMContentLoaded", () => { setupForms(); setupPicker(); });
