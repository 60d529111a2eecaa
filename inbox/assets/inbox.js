// The approvals inbox: refresh the live part of the list page, and send a
// decision form once. Server-rendered fragments only (html/template escapes
// every value); no value from a request is ever evaluated here.
(function () {
  "use strict";
  document.addEventListener("submit", function (e) {
    var f = e.target;
    if (f.dataset.sent) { e.preventDefault(); return; } // a double click sends one
    f.dataset.sent = "1";
  });
  var live = document.getElementById("live");
  if (!live) { return; }
  var every = parseInt(live.dataset.poll, 10) || 2000;
  var offline = document.getElementById("offline");
  var last = null;
  function refresh() {
    fetch(live.dataset.src, { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.text(); })
      .then(function (html) {
        offline.hidden = true;
        if (html !== last) {
          last = html;
          var doc = new DOMParser().parseFromString(html, "text/html");
          live.replaceChildren.apply(live, Array.prototype.slice.call(doc.body.childNodes));
        }
      })
      .catch(function () { offline.hidden = false; })
      .finally(function () { setTimeout(refresh, every); });
  }
  setTimeout(refresh, every);
})();
