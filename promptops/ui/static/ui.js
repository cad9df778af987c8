// promptops ui: the one script. It builds DOM with textContent only (never innerHTML),
// so nothing a prompt or an argument says can become markup or script.
"use strict";
(function () {
  function byId(id) { return document.getElementById(id); }

  // Search as you type: the server searches (fast on 10,000 prompts), this draws the list.
  var q = byId("q"), pkg = byId("package"), results = byId("results"), count = byId("count");
  var seq = 0, timer = null;
  function drawRow(item) {
    var li = document.createElement("li"); li.className = "prompt";
    var a = document.createElement("a"); a.className = "name";
    a.href = item.url; a.textContent = item.title || item.name; li.appendChild(a);
    li.appendChild(document.createTextNode(" "));
    var code = document.createElement("code"); code.textContent = item.name; li.appendChild(code);
    var span = document.createElement("span"); span.className = "muted";
    span.textContent = " " + item.package + " " + item.version; li.appendChild(span);
    var p = document.createElement("p"); p.textContent = item.description; li.appendChild(p);
    var args = document.createElement("p"); args.className = "args";
    args.textContent = "Arguments: " + (item.arguments.length ? item.arguments.join(", ") : "none");
    li.appendChild(args);
    if (item.tags.length) {
      var ul = document.createElement("ul"); ul.className = "tags";
      ul.setAttribute("aria-label", "Tags");
      item.tags.forEach(function (t) {
        var tag = document.createElement("li"); tag.className = "tag"; tag.textContent = t;
        ul.appendChild(tag);
      });
      li.appendChild(ul);
    }
    return li;
  }
  function search() {
    var mine = ++seq;
    var url = "/api/search?limit=100&q=" + encodeURIComponent(q.value) +
      "&package=" + encodeURIComponent(pkg ? pkg.value : "");
    fetch(url, {headers: {"Accept": "application/json"}}).then(function (r) {
      return r.json();
    }).then(function (data) {
      if (mine !== seq) return;  // a later keystroke's answer wins
      results.replaceChildren.apply(results, data.items.map(drawRow));
      count.textContent = data.total + (data.total === 1 ? " prompt" : " prompts");
      var more = byId("more"); if (more) more.hidden = true;
      var state = "?q=" + encodeURIComponent(q.value) +
        (pkg && pkg.value ? "&package=" + encodeURIComponent(pkg.value) : "");
      history.replaceState(null, "", state);
      document.body.setAttribute("data-searched", String(mine));
    });
  }
  if (q && results) {
    q.addEventListener("input", function () {
      clearTimeout(timer); timer = setTimeout(search, 60);
    });
    if (pkg) pkg.addEventListener("change", search);
  }

  // JSON arguments: checked in the browser before the server checks them again.
  Array.prototype.forEach.call(document.querySelectorAll("textarea[data-json]"), function (ta) {
    function check() {
      var want = ta.getAttribute("data-json"), msg = "";
      if (ta.value.trim() !== "") {
        try {
          var v = JSON.parse(ta.value);
          var isArray = Array.isArray(v);
          if (want === "array" && !isArray) msg = "Enter a JSON array, like [1, 2]";
          if (want === "object" && (isArray || v === null || typeof v !== "object"))
            msg = "Enter a JSON object, like {\"key\": \"value\"}";
        } catch (err) { msg = "Not valid JSON: " + err.message; }
      }
      ta.setCustomValidity(msg);
    }
    ta.addEventListener("input", check); check();
  });

  // Copy buttons: the text of the named <pre>, as text.
  Array.prototype.forEach.call(document.querySelectorAll("button[data-copy]"), function (b) {
    b.addEventListener("click", function () {
      var src = byId(b.getAttribute("data-copy")), status = byId("copied");
      if (!src) return;
      var text = src.textContent;
      function done(ok) { if (status) status.textContent = ok ? "Copied." : "Copy failed: select the text."; }
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(function () { done(true); },
                                                 function () { done(false); });
      } else { done(false); }
    });
  });

  // Live reload (working tree): reload when the server has rebuilt after a save.
  if (document.body.getAttribute("data-live") === "1") {
    var gen = document.body.getAttribute("data-generation");
    setInterval(function () {
      fetch("/api/generation").then(function (r) { return r.json(); }).then(function (d) {
        if (String(d.generation) !== gen) location.reload();
      }).catch(function () {});
    }, 1000);
  }
})();
