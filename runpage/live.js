// The run page, live: see live.go. Without this script the page is whole
// and reloads itself (a <noscript> refresh); with it, nothing reloads the
// page: logs are replaced where they stand and changed parts are swapped,
// so a reader keeps their place.
(function () {
  "use strict";
  var url = document.body.getAttribute("data-live");
  if (!url || !window.EventSource || !window.fetch || !window.DOMParser) {
    return;
  }
  var parts = ["run-head", "live"];
  var busy = false, again = false;

  function swap(oldEl, newEl) {
    var open = {};
    oldEl.querySelectorAll("details[id]").forEach(function (d) { open[d.id] = d.open; });
    newEl.querySelectorAll("details[id]").forEach(function (d) {
      if (d.id in open) { d.open = open[d.id]; }
    });
    oldEl.replaceWith(newEl);
  }

  // anchor is the first element with an id that the reader can see, and
  // where it is; restore puts it back there after a swap, so that rows or
  // logs added above do not move what the reader is looking at.
  function anchor() {
    var els = document.querySelectorAll("[id]");
    for (var i = 0; i < els.length; i++) {
      var r = els[i].getBoundingClientRect();
      if (r.bottom > 0 && r.height > 0) { return { id: els[i].id, top: r.top }; }
    }
    return null;
  }

  function restore(keep) {
    var el = keep && document.getElementById(keep.id);
    if (el) { window.scrollBy(0, el.getBoundingClientRect().top - keep.top); }
  }

  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(location.href, { cache: "no-store", credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var keep = anchor();
        parts.forEach(function (id) {
          var a = document.getElementById(id), b = doc.getElementById(id);
          if (a && b && a.innerHTML !== b.innerHTML) { swap(a, document.importNode(b, true)); }
        });
        restore(keep);
      })
      .catch(function () {})
      .then(function () {
        busy = false;
        if (again) { again = false; refresh(); }
      });
  }

  var state = document.body.getAttribute("data-state") || "";
  var es = new EventSource(url + (url.indexOf("?") < 0 ? "?" : "&") + "s=" + encodeURIComponent(state));
  es.addEventListener("log", function (ev) {
    var d = JSON.parse(ev.data), pre = document.getElementById(d.id);
    if (!pre) { refresh(); return; }
    if (pre.textContent !== d.text) { pre.textContent = d.text; }
  });
  es.addEventListener("state", refresh);
  es.addEventListener("end", function () { es.close(); refresh(); });
  var note = document.getElementById("live-note");
  if (note) { note.textContent = " · live: this page follows the run"; }
})();
