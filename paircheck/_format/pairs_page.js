// paircheck's pairs page: filters, search and sorting over the rows already in the page.
// Without this script the full table is still there; it only hides and reorders rows.
// The state lives in the URL fragment (#engine=vllm&evidence=measured&sort=draft), so a
// filtered view is a link. The filters mean what `paircheck pairs` means by them.
(function () {
  "use strict";
  var form = document.getElementById("filters");
  var table = document.getElementById("pairs");
  var count = document.getElementById("count");
  var empty = document.getElementById("empty");
  if (!form || !table) { return; }
  var entries = Array.prototype.slice.call(table.tBodies);
  var headers = Array.prototype.slice.call(table.tHead.rows[0].cells);
  var FILTERS = ["family", "engine", "method", "evidence", "q"];
  var sort = { key: "", desc: false };

  function words(text) {
    return text.toLowerCase().split(/\s+/).filter(function (w) { return w.length > 0; });
  }

  function hasWord(list, word) {
    return (" " + list + " ").indexOf(" " + word + " ") !== -1;
  }

  // One entry against the filters, as `paircheck pairs` reads them: family and method
  // exactly, engine among the engines it works or fails on, evidence for at least one engine
  // (for the chosen engine, when there is one), every search word in its names or repos.
  function matches(entry, f) {
    var d = entry.dataset;
    if (f.family && d.family !== f.family) { return false; }
    if (f.method && d.method !== f.method) { return false; }
    if (f.engine && !hasWord(d.engines, f.engine)) { return false; }
    if (f.evidence && f.engine && !hasWord(d.levels, f.engine + ":" + f.evidence)) { return false; }
    if (f.evidence && !hasWord(d.evidence, f.evidence)) { return false; }
    var text = d.search;
    return words(f.q || "").every(function (w) { return text.indexOf(w) !== -1; });
  }

  function current() {
    var f = {};
    FILTERS.forEach(function (name) { f[name] = form.elements[name].value.trim(); });
    return f;
  }

  function sortValue(entry, key) {
    var cell = entry.rows[0].querySelector("[data-col='" + key + "']");
    return cell ? cell.getAttribute("data-sort") : "";
  }

  function order() {
    var sorted = entries.slice();
    var key = sort.key;
    sorted.sort(function (a, b) {
      var c = 0;
      if (key) {
        // Keys are prepared by paircheck (case-folded, numbers zero-padded): plain string order.
        var x = sortValue(a, key), y = sortValue(b, key);
        c = x < y ? -1 : (x > y ? 1 : 0);
        if (sort.desc) { c = -c; }
      }
      // Ties keep the registry's order (family, target, draft, method).
      return c || Number(a.dataset.order) - Number(b.dataset.order);
    });
    sorted.forEach(function (entry) { table.appendChild(entry); });
    headers.forEach(function (th) {
      var col = th.getAttribute("data-col");
      if (col && col === key) {
        th.setAttribute("aria-sort", sort.desc ? "descending" : "ascending");
      } else {
        th.removeAttribute("aria-sort");
      }
    });
  }

  function fragment(f) {
    var params = new URLSearchParams();
    FILTERS.forEach(function (name) { if (f[name]) { params.set(name, f[name]); } });
    if (sort.key) {
      params.set("sort", sort.key);
      if (sort.desc) { params.set("dir", "desc"); }
    }
    return params.toString();
  }

  function writeFragment(f) {
    var hash = fragment(f);
    var url = location.href.split("#")[0] + (hash ? "#" + hash : "");
    if (url === location.href) { return; }
    // replaceState: typing in the search box does not add a history entry per key.
    history.replaceState(null, "", url);
  }

  function apply() {
    var f = current();
    var shown = 0;
    entries.forEach(function (entry) {
      var ok = matches(entry, f);
      entry.hidden = !ok;
      if (ok) { shown += 1; }
    });
    order();
    count.textContent = shown + " of " + entries.length + " pairs";
    empty.hidden = shown !== 0;
    writeFragment(f);
  }

  function known(select, value) {
    return Array.prototype.some.call(select.options, function (o) { return o.value === value; });
  }

  // Restore the filters and the sort from the fragment (on load and when it changes).
  function restore() {
    var params = new URLSearchParams(location.hash.replace(/^#/, ""));
    FILTERS.forEach(function (name) {
      var field = form.elements[name];
      var value = params.get(name) || "";
      if (field.tagName === "SELECT" && !known(field, value)) { value = ""; }
      field.value = value;
    });
    var key = params.get("sort") || "";
    var sortable = headers.some(function (th) { return th.getAttribute("data-col") === key; });
    sort = { key: sortable ? key : "", desc: sortable && params.get("dir") === "desc" };
    apply();
  }

  headers.forEach(function (th) {
    var button = th.querySelector("button");
    if (!button) { return; }
    button.addEventListener("click", function () {
      var key = th.getAttribute("data-col");
      sort = { key: key, desc: sort.key === key ? !sort.desc : false };
      apply();
    });
  });

  form.addEventListener("input", apply);
  form.addEventListener("change", apply);
  form.addEventListener("submit", function (event) { event.preventDefault(); });
  // Clear the fields here, not by the browser's reset (which comes after this event), so the
  // table is updated by the time the click returns.
  form.addEventListener("reset", function (event) {
    event.preventDefault();
    FILTERS.forEach(function (name) { form.elements[name].value = ""; });
    sort = { key: "", desc: false };
    apply();
  });
  window.addEventListener("hashchange", restore);

  // Copy buttons for the commands; where the clipboard is refused, the text is selected.
  Array.prototype.forEach.call(document.querySelectorAll(".cmd"), function (box) {
    var pre = box.querySelector("pre");
    var label = box.querySelector(".label");
    if (!pre || !label) { return; }
    var button = document.createElement("button");
    button.type = "button";
    button.className = "copy";
    button.textContent = "Copy";
    button.setAttribute("aria-label", "Copy: " + label.textContent);
    button.addEventListener("click", function () {
      function select() {
        var range = document.createRange();
        range.selectNodeContents(pre);
        var sel = window.getSelection();
        sel.removeAllRanges();
        sel.addRange(range);
        button.textContent = "Selected: press Ctrl+C";
      }
      if (!navigator.clipboard || !window.isSecureContext) { select(); return; }
      navigator.clipboard.writeText(pre.textContent).then(function () {
        button.textContent = "Copied";
      }, select);
    });
    label.appendChild(button);
  });

  form.hidden = false;
  restore();
}());
