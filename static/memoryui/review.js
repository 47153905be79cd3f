/* memoryui review queue: small enhancements on top of htmx and app.js (all optional).
 *
 * - Errors the review views answer with 400/404/409/413 are swapped in like any answer
 *   (the editor shows its conflict view or the broken rule) for elements inside
 *   [data-review]; htmx 2 would drop them by default.
 * - "Skip" (s) moves on to the next entry without deciding anything.
 * - In the promotion editor: Esc cancels (closes the inline editor), Ctrl/Cmd+Enter saves.
 * - The "Promote to" menu closes once a target is chosen.
 * - The bulk bar says how many entries are selected.
 * - After an action the server swaps #review-day-counts out of band (data-days: date ->
 *   entries); each day's heading count is written from it.
 */
(function () {
  "use strict";

  var SWAPPED = [400, 404, 409, 413];

  document.addEventListener("htmx:beforeSwap", function (event) {
    var d = event.detail;
    if (!d || !d.xhr || SWAPPED.indexOf(d.xhr.status) < 0) return;
    var elt = d.elt || d.target;
    if (elt instanceof Element && elt.closest("[data-review]")) {
      d.shouldSwap = true;
      d.isError = false;
    }
  });

  function entryOf(el) {
    return el.closest("[data-keynav-item]");
  }

  document.addEventListener("click", function (event) {
    var t = event.target instanceof Element ? event.target : null;
    if (!t) return;
    var skip = t.closest(".js-skip");
    if (skip) {
      var item = entryOf(skip);
      if (!item) return;
      event.preventDefault();
      item.classList.add("is-skipped");
      item.focus({ preventScroll: true });
      item.dispatchEvent(new KeyboardEvent("keydown", { key: "j", bubbles: true }));
      return;
    }
    var choice = t.closest(".promote-menu button");
    if (choice) {
      // A target was chosen: close the menu so it does not cover the editor it opens.
      var menu = choice.closest("details");
      if (menu) menu.open = false;
      return;
    }
    var cancel = t.closest(".js-cancel");
    if (cancel) {
      var slot = cancel.closest(".promote-slot");
      if (!slot) return; // the full-page editor: the link goes back to the queue
      event.preventDefault();
      var owner = entryOf(slot);
      slot.innerHTML = "";
      if (owner) owner.focus();
    }
  });

  function updateSelected() {
    var label = document.getElementById("bulk-count");
    if (!label) return;
    var n = document.querySelectorAll(".js-select:checked").length;
    label.textContent = n === 0 ? "No entries selected"
      : n === 1 ? "1 entry selected" : n + " entries selected";
  }

  function updateDays() {
    var data = document.getElementById("review-day-counts");
    if (!data) return;
    var days;
    try {
      days = JSON.parse(data.getAttribute("data-days") || "{}");
    } catch (e) {
      return;
    }
    document.querySelectorAll("[data-day-count]").forEach(function (el) {
      var n = days[el.getAttribute("data-day-count")];
      el.textContent = String(n || 0);
    });
  }

  document.addEventListener("change", function (event) {
    var t = event.target;
    if (t instanceof Element && t.classList.contains("js-select")) updateSelected();
  });
  ["htmx:afterSettle", "htmx:oobAfterSwap"].forEach(function (name) {
    document.addEventListener(name, function () {
      updateSelected();
      updateDays();
    });
  });
  document.addEventListener("DOMContentLoaded", updateSelected);

  document.addEventListener("keydown", function (event) {
    var t = event.target instanceof Element ? event.target : null;
    var editor = t && t.closest(".promote-editor");
    if (!editor) return;
    if (event.key === "Escape") {
      var cancel = editor.querySelector(".js-cancel");
      if (cancel && editor.closest(".promote-slot")) {
        event.preventDefault();
        cancel.click();
      }
    } else if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      var form = editor.querySelector("form.promote-save");
      if (form) {
        event.preventDefault();
        form.requestSubmit();
      }
    }
  });
})();
