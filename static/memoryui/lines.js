/* Line anchors and ranges on numbered views (tables marked `data-lines`, rows `tr#L<n>`).
 * Without this script a line number is a plain `#L<n>` anchor highlighted by :target.
 * With it: shift-click a second number to select a range (URL `#L10-L20`); a range in the
 * URL is highlighted and scrolled into view on load and on back/forward.
 */
(function () {
  "use strict";
  if (!document.querySelector("[data-lines]")) return;
  var RANGE = /^#L(\d+)(?:-L?(\d+))?$/;
  var last = null; // the line clicked last: where a shift-click range starts
  var keepY = null; // a plain click selects a line without jumping to it

  function parse(hash) {
    var m = RANGE.exec(hash || "");
    if (!m) return null;
    var a = parseInt(m[1], 10), b = m[2] ? parseInt(m[2], 10) : a;
    return a <= b ? [a, b] : [b, a];
  }

  function row(n) {
    var el = document.getElementById("L" + n);
    return el && el.tagName === "TR" && el.closest("[data-lines]") ? el : null;
  }

  function highlight(range, scroll) {
    var old = document.querySelectorAll("[data-lines] tr.is-selected");
    for (var i = 0; i < old.length; i++) old[i].classList.remove("is-selected");
    if (!range) return;
    var first = null, count = document.querySelectorAll("[data-lines] tr[id^='L']").length;
    for (var n = range[0]; n <= Math.min(range[1], count); n++) {
      var r = row(n);
      if (!r) continue;
      r.classList.add("is-selected");
      if (!first) first = r;
    }
    if (first && scroll) reveal(first, row(Math.min(range[1], count)) || first);
  }

  // A short range is centred (with its context above); a long one starts at the top.
  function reveal(first, lastRow) {
    var top = first.getBoundingClientRect().top;
    var height = lastRow.getBoundingClientRect().bottom - top;
    if (height < window.innerHeight / 2) {
      window.scrollTo(window.scrollX, window.scrollY + top - (window.innerHeight - height) / 2);
    } else {
      first.scrollIntoView({ block: "start" });
    }
  }

  document.addEventListener("click", function (event) {
    var a = event.target.closest && event.target.closest("[data-lines] td.ln a");
    if (!a || event.button !== 0 || event.ctrlKey || event.metaKey || event.altKey) return;
    var picked = parse(a.getAttribute("href"));
    if (!picked) return;
    var n = picked[0];
    if (event.shiftKey) {
      event.preventDefault();
      var start = last !== null ? last : (parse(location.hash) || [n])[0];
      var lo = Math.min(start, n), hi = Math.max(start, n);
      var hash = lo === hi ? "#L" + lo : "#L" + lo + "-L" + hi;
      keepY = window.scrollY;
      location.replace(hash);
      highlight([lo, hi], false);
      return;
    }
    last = n;
    // the anchor navigates (so :target follows); hashchange puts the page back, no jump
    keepY = a.getAttribute("href") === location.hash ? null : window.scrollY;
  });

  window.addEventListener("hashchange", function () {
    var range = parse(location.hash);
    highlight(range, keepY === null);
    if (keepY !== null) {
      window.scrollTo(window.scrollX, keepY);
      keepY = null;
    }
  });

  var initial = parse(location.hash);
  if (initial) {
    last = initial[0];
    highlight(initial, initial[0] !== initial[1]);
  }
})();
