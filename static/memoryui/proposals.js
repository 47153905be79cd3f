/* memoryui inbox of proposed changes: small enhancements (everything works without them).
 *
 * - The bulk bar says how many proposals are ticked, and offers "Select all on this page".
 * - "Reject selected" without a reason focuses the reason field instead of asking the
 *   server for a 400.
 */
(function () {
  "use strict";

  function boxes() {
    return Array.prototype.slice.call(document.querySelectorAll(".proposal-select"));
  }

  function update() {
    var label = document.getElementById("bulk-count");
    if (!label) return;
    var n = boxes().filter(function (b) { return b.checked; }).length;
    label.textContent = n === 0 ? "Tick proposals to decide them together"
      : n === 1 ? "1 proposal selected" : n + " proposals selected";
  }

  document.addEventListener("change", function (event) {
    var t = event.target;
    if (t instanceof Element && t.classList.contains("proposal-select")) update();
  });

  document.addEventListener("click", function (event) {
    var t = event.target instanceof Element ? event.target : null;
    if (!t) return;
    if (t.closest(".js-select-all")) {
      var all = boxes();
      var on = all.some(function (b) { return !b.checked; });
      all.forEach(function (b) { b.checked = on; });
      update();
      return;
    }
    var reject = t.closest(".proposal-bulk button[value=reject]");
    if (reject) {
      var reason = document.getElementById("bulk-reason");
      if (reason && !reason.value.trim()) {
        event.preventDefault();
        reason.setCustomValidity("Give a reason for rejecting.");
        reason.reportValidity();
        reason.addEventListener("input", function () { reason.setCustomValidity(""); },
          { once: true });
      }
    }
  });

  function ready() {
    var all = document.querySelector(".js-select-all");
    if (all) all.hidden = false;
    update();
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", ready);
  } else {
    ready();
  }
  document.addEventListener("htmx:afterSettle", update);
})();
