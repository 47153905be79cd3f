/* memoryui editor helpers (progressive enhancement; the editor works without them).
 * - Warn before leaving a form marked `data-editor` with unsaved text.
 * - Ctrl/Cmd+S submits the editor's primary button.
 */
(function () {
  "use strict";
  var form = document.querySelector("form[data-editor]");
  if (!form) return;
  var dirty = form.hasAttribute("data-dirty");
  var submitting = false;
  form.addEventListener("input", function () { dirty = true; });
  form.addEventListener("submit", function () { submitting = true; });
  window.addEventListener("beforeunload", function (event) {
    if (dirty && !submitting) {
      event.preventDefault();
      event.returnValue = "";
    }
  });
  document.addEventListener("keydown", function (event) {
    if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key === "s") {
      var primary = form.querySelector("button.btn-primary[type=submit]");
      if (!primary) return;
      event.preventDefault();
      if (form.requestSubmit) form.requestSubmit(primary); else primary.click();
    }
  });
})();
