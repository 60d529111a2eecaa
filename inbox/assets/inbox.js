// The approvals inbox: refresh the live part of the list page, and send a
// decision form once. Server-rendered fragments only (html/template escapes
// every value); no value from a request is ever evaluated here, and text is
// only ever set with textContent.
(function () {
  "use strict";
  document.addEventListener("submit", function (e) {
    var f = e.target;
    if (f.dataset.sent) { e.preventDefault(); return; } // a double click sends one
    f.dataset.sent = "1";
  });

  function pad(n) { return (n < 10 ? "0" : "") + n; }
  // age says how long ago t was, to the second, as the server says it.
  function age(t) {
    var s = Math.max(0, Math.floor((Date.now() - t) / 1000));
    if (s < 60) { return s + "s"; }
    if (s < 3600) { return Math.floor(s / 60) + "m " + (s % 60) + "s"; }
    if (s < 48 * 3600) { return Math.floor(s / 3600) + "h " + Math.floor(s % 3600 / 60) + "m"; }
    return Math.floor(s / 86400) + "d " + Math.floor(s % 86400 / 3600) + "h";
  }
  function local(t) {
    var d = new Date(t);
    return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " +
      pad(d.getHours()) + ":" + pad(d.getMinutes()) + ":" + pad(d.getSeconds()) + " your time";
  }
  // times fills in, from each <time>'s datetime, the age of a waiting
  // request (the server sends only its UTC time, so an unchanged list is
  // the same bytes from poll to poll) and the viewer's local time beside
  // the UTC one.
  function times(root) {
    Array.prototype.forEach.call(root.querySelectorAll("time[data-age]"), function (el) {
      var t = Date.parse(el.getAttribute("datetime"));
      if (isNaN(t)) { return; }
      if (!el.dataset.utc) { el.dataset.utc = el.textContent; }
      el.textContent = age(t);
      el.title = "since " + el.dataset.utc + " (" + local(t) + ")";
    });
    Array.prototype.forEach.call(root.querySelectorAll("time[data-local]"), function (el) {
      var t = Date.parse(el.getAttribute("datetime"));
      if (isNaN(t) || el.dataset.utc) { return; }
      el.dataset.utc = el.textContent;
      el.textContent = el.dataset.utc + " (" + local(t) + ")";
    });
  }
  // served holds each waiting row's markup as the server sent it, before
  // times filled in its age: what a poll's row is compared with.
  var served = new WeakMap();
  Array.prototype.forEach.call(document.querySelectorAll("#pending tbody > tr[data-id]"), function (tr) {
    served.set(tr, tr.outerHTML);
  });
  times(document);
  setInterval(function () { times(document); }, 1000);

  var live = document.getElementById("live");
  if (!live) { return; }
  var every = parseInt(live.dataset.poll, 10) || 2000;
  var offline = document.getElementById("offline");
  var last = null;

  // patchRows brings the rows of tbody have to those of want, keyed by
  // data-id: a row whose served markup did not change is left in place (a
  // selection, focus or half-read row survives), a changed one is
  // replaced, a gone one removed, a new one inserted in order.
  function patchRows(have, want) {
    var old = new Map();
    Array.prototype.forEach.call(have.children, function (tr) { old.set(tr.dataset.id, tr); });
    var prev = null;
    Array.prototype.forEach.call(Array.prototype.slice.call(want.children), function (tr) {
      var keep = old.get(tr.dataset.id);
      var row = tr;
      if (keep && served.get(keep) === tr.outerHTML) { row = keep; }
      else { served.set(row, tr.outerHTML); times(row); }
      old.delete(tr.dataset.id);
      if (keep && keep !== row) { keep.remove(); }
      var next = prev ? prev.nextElementSibling : have.firstElementChild;
      if (next !== row) { have.insertBefore(row, next); }
      prev = row;
    });
    old.forEach(function (tr) { tr.remove(); });
  }
  function ids(root) {
    return Array.prototype.map.call(root.children, function (el) { return el.id || el.tagName; }).join(" ");
  }
  // update shows the live part html in place: the rows of what waits are
  // patched (patchRows), everything else, small, is replaced when it
  // changed.
  function update(html) {
    var doc = new DOMParser().parseFromString(html, "text/html");
    var body = doc.body;
    if (ids(body) !== ids(live)) { // a problem came or went: start afresh
      live.replaceChildren.apply(live, Array.prototype.slice.call(body.childNodes));
      times(live);
      return;
    }
    Array.prototype.forEach.call(Array.prototype.slice.call(body.children), function (want, i) {
      var have = live.children[i];
      var haveRows = have.querySelector("tbody");
      var wantRows = want.querySelector("tbody");
      if (want.id === "pending" && haveRows && wantRows) {
        patchRows(haveRows, wantRows);
        ["h1", "nav.pager"].forEach(function (sel) {
          var a = have.querySelector(sel), b = want.querySelector(sel);
          if (a && b) { if (a.outerHTML !== b.outerHTML) { a.replaceWith(b); } }
          else if (a) { a.remove(); }
          else if (b) { have.appendChild(b); }
        });
        return;
      }
      if (have.outerHTML !== want.outerHTML) { have.replaceWith(want); times(want); }
    });
  }
  function refresh() {
    // no-cache: the browser revalidates with the ETag it holds, and an
    // unchanged list comes back as 304 with no body.
    fetch(live.dataset.src, { credentials: "same-origin", cache: "no-cache" })
      .then(function (r) { return r.text(); })
      .then(function (html) {
        offline.hidden = true;
        if (html !== last) {
          last = html;
          update(html);
        }
      })
      .catch(function () { offline.hidden = false; })
      .finally(function () { setTimeout(refresh, every); });
  }
  setTimeout(refresh, every);
})();
