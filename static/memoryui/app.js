/* memoryui: progressive enhancement only -- every page works without it.
 * Loaded with `defer`; no inline scripts anywhere (the CSP forbids them).
 *
 * (a) Confirmations: `data-confirm="Question?"` on a <form> (asked on submit) or on a
 *     button / link (asked on click). Runs in the capture phase, so a "Cancel" also stops
 *     htmx (hx-post etc.) on the same element.
 * (b) Keyboard navigation: a list with `data-keynav` whose items carry `data-keynav-item`.
 *     j / k move `.is-current` (and focus) between items; a letter mapped on the list, e.g.
 *     `data-key-p=".js-promote"`, clicks the first matching enabled control in the current
 *     item. Keys are ignored while typing in form fields or with modifier keys.
 * (c) Error flashes: a 4xx answer to an htmx request that carries `HX-Reswap: none` holds
 *     only an out-of-band message (memoryui.web.common.error_page); htmx 2 would drop it,
 *     so it is let through and the message area shows the error.
 * (d) Phone drawer: the sidebar opens and closes with a CSS-only checkbox (base.html);
 *     this only adds Escape to close it and puts focus back on the toggle.
 */
(function () {
  "use strict";

  /* ---------------------------------------------------------------- (a) data-confirm */

  var confirmedSubmitter = null;

  function ask(el) {
    var message = el.getAttribute("data-confirm");
    return !message || window.confirm(message);
  }

  function isSubmitter(el) {
    return (
      (el instanceof HTMLButtonElement && el.type === "submit" && el.form !== null) ||
      (el instanceof HTMLInputElement &&
        (el.type === "submit" || el.type === "image") &&
        el.form !== null)
    );
  }

  function cancel(event) {
    event.preventDefault();
    event.stopImmediatePropagation();
  }

  document.addEventListener(
    "click",
    function (event) {
      var target = event.target;
      if (!(target instanceof Element)) return;
      var el = target.closest("[data-confirm]");
      if (!el || el instanceof HTMLFormElement) return;
      if (!ask(el)) {
        cancel(event);
        return;
      }
      if (isSubmitter(el)) {
        // The submit that follows this click must not ask a second time.
        confirmedSubmitter = el;
        window.setTimeout(function () {
          confirmedSubmitter = null;
        }, 0);
      }
    },
    true
  );

  document.addEventListener(
    "submit",
    function (event) {
      var form = event.target;
      if (!(form instanceof HTMLFormElement)) return;
      var submitter = event.submitter || null;
      if (submitter && submitter.hasAttribute("data-confirm")) {
        if (submitter === confirmedSubmitter) {
          confirmedSubmitter = null;
          return;
        }
        if (!ask(submitter)) cancel(event);
        return;
      }
      if (form.hasAttribute("data-confirm") && !ask(form)) cancel(event);
    },
    true
  );

  /* ---------------------------------------------------------------- (c) error flashes */

  document.addEventListener("htmx:beforeSwap", function (event) {
    var d = event.detail;
    if (!d || !d.xhr || d.xhr.status < 400 || d.xhr.status >= 500) return;
    if ((d.xhr.getResponseHeader("HX-Reswap") || "").trim() !== "none") return;
    d.shouldSwap = true;
    d.isError = false;
  });

  /* ---------------------------------------------------------------- (d) phone drawer */

  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    var toggle = document.getElementById("drawer-toggle");
    if (!toggle || !toggle.checked) return;
    toggle.checked = false;
    toggle.focus({ preventScroll: true });
    event.preventDefault();
  });

  /* ---------------------------------------------------------------- (b) keyboard lists */

  var TYPING = "input, textarea, select, [contenteditable]:not([contenteditable='false'])";
  var lastIndex = {}; // list id (or "") -> index of the current item, survives htmx swaps

  function listKey(list) {
    return list.id || "";
  }

  function itemsOf(list) {
    return Array.prototype.filter.call(
      list.querySelectorAll("[data-keynav-item]"),
      function (item) {
        return item.closest("[data-keynav]") === list;
      }
    );
  }

  function currentOf(list, items) {
    for (var i = 0; i < items.length; i++) {
      if (items[i].classList.contains("is-current")) return items[i];
    }
    return null;
  }

  function setCurrent(list, items, item, focus) {
    items.forEach(function (other) {
      if (other !== item) other.classList.remove("is-current");
    });
    item.classList.add("is-current");
    lastIndex[listKey(list)] = items.indexOf(item);
    if (focus) {
      if (!item.hasAttribute("tabindex")) item.setAttribute("tabindex", "-1");
      item.focus({ preventScroll: true });
      item.scrollIntoView({ block: "nearest" });
    }
  }

  function actionIn(item, selector) {
    var found;
    try {
      found = item.querySelectorAll(selector);
    } catch (e) {
      return null; // a bad selector in a template must not break the page
    }
    for (var i = 0; i < found.length; i++) {
      var el = found[i];
      // Never a control that came from rendered memory content.
      if (!el.disabled && !el.closest(".markdown")) return el;
    }
    return null;
  }

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.isComposing) return;
    var target = event.target;
    if (target instanceof Element && (target.closest(TYPING) || target.isContentEditable)) {
      return;
    }
    var key = event.key;
    if (typeof key !== "string" || !/^[a-z]$/.test(key)) return;

    var list =
      (target instanceof Element && target.closest("[data-keynav]")) ||
      document.querySelector("[data-keynav]");
    if (!list) return;
    var items = itemsOf(list);
    if (!items.length) return;
    var current = currentOf(list, items);
    var index = current ? items.indexOf(current) : -1;

    if (key === "j" || key === "k") {
      var next = key === "j" ? Math.min(index + 1, items.length - 1) : Math.max(index - 1, 0);
      setCurrent(list, items, items[next], true);
      event.preventDefault();
      return;
    }

    var selector = list.getAttribute("data-key-" + key);
    if (!selector || !current) return;
    var control = actionIn(current, selector);
    if (!control) return;
    event.preventDefault();
    control.click();
  });

  // Clicking or tabbing into an item makes it the current one.
  document.addEventListener("focusin", function (event) {
    var target = event.target;
    if (!(target instanceof Element)) return;
    var item = target.closest("[data-keynav-item]");
    var list = item && item.closest("[data-keynav]");
    if (list) setCurrent(list, itemsOf(list), item, false);
  });

  // After htmx removes or replaces the current item (promote, dismiss), move on to the
  // item now at the same position so the reviewer can keep going with the keyboard.
  document.addEventListener("htmx:afterSettle", function () {
    var lists = document.querySelectorAll("[data-keynav]");
    Array.prototype.forEach.call(lists, function (list) {
      var index = lastIndex[listKey(list)];
      var items = itemsOf(list);
      if (index === undefined || !items.length || currentOf(list, items)) return;
      var active = document.activeElement;
      var focusLost = !active || active === document.body;
      setCurrent(list, items, items[Math.min(index, items.length - 1)], focusLost);
    });
  });
})();
