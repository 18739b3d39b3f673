/* occlint HTML report: progressive enhancement only (sorting, filtering, open on link).
   Without it (JS off or blocked by a Content-Security-Policy) the page is complete. */
(function () {
  "use strict";
  var doc = document;

  function cellValue(row, index, numeric) {
    var cell = row.cells[index];
    if (!cell) { return numeric ? -Infinity : ""; }
    if (numeric) {
      var v = parseFloat(cell.getAttribute("data-v"));
      return isNaN(v) ? -Infinity : v;
    }
    return cell.textContent.trim().toLowerCase();
  }

  function makeSortable(table) {
    var heads = table.tHead ? table.tHead.rows[0].cells : [];
    var body = table.tBodies[0];
    Array.prototype.forEach.call(heads, function (th, index) {
      var kind = th.getAttribute("data-sort");
      if (!kind) { return; }
      var button = doc.createElement("button");
      button.type = "button";
      while (th.firstChild) { button.appendChild(th.firstChild); }
      th.appendChild(button);
      button.addEventListener("click", function () {
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var rows = Array.prototype.slice.call(body.rows).map(function (row, i) {
          return { row: row, key: cellValue(row, index, kind === "num"), i: i };
        });
        rows.sort(function (a, b) {
          var d = a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
          return (ascending ? d : -d) || a.i - b.i;
        });
        rows.forEach(function (r) { body.appendChild(r.row); });
      });
    });
  }

  var RANK = { error: 3, warning: 2, info: 1, none: 0 };

  function addFilter(table) {
    var body = table.tBodies[0];
    var bar = doc.createElement("div");
    bar.className = "tools";
    var search = doc.createElement("input");
    search.type = "search";
    search.placeholder = "Filter kernels (name, file, target, limiter)";
    search.setAttribute("aria-label", "Filter kernels");
    var level = doc.createElement("select");
    level.setAttribute("aria-label", "Minimum severity");
    [["0", "all kernels"], ["1", "with findings"], ["2", "with warnings or errors"],
     ["3", "with errors"]].forEach(function (o) {
      var opt = doc.createElement("option");
      opt.value = o[0];
      opt.textContent = o[1];
      level.appendChild(opt);
    });
    var shown = doc.createElement("span");
    shown.className = "shown";
    var toggle = doc.createElement("button");
    toggle.type = "button";
    toggle.textContent = "Expand all details";
    bar.appendChild(search);
    bar.appendChild(level);
    bar.appendChild(shown);
    bar.appendChild(toggle);
    table.parentNode.insertBefore(bar, table);

    function apply() {
      var words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
      var min = parseInt(level.value, 10);
      var count = 0;
      Array.prototype.forEach.call(body.rows, function (row) {
        var text = row.textContent.toLowerCase();
        var ok = RANK[row.getAttribute("data-worst")] >= min && words.every(function (w) {
          return text.indexOf(w) >= 0;
        });
        row.classList.toggle("hidden", !ok);
        if (ok) { count += 1; }
      });
      shown.textContent = count + " of " + body.rows.length + " shown";
    }
    search.addEventListener("input", apply);
    level.addEventListener("change", apply);
    toggle.addEventListener("click", function () {
      var all = doc.querySelectorAll("details.kernel");
      var open = toggle.getAttribute("data-open") !== "1";
      Array.prototype.forEach.call(all, function (d) { d.open = open; });
      toggle.setAttribute("data-open", open ? "1" : "0");
      toggle.textContent = open ? "Collapse all details" : "Expand all details";
    });
    apply();
  }

  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && doc.getElementById(id);
    if (el && el.tagName === "DETAILS") { el.open = true; }
  }

  // a long kernel name cut to three lines (its whole name in its title): a click shows it
  // whole, another cuts it again
  doc.addEventListener("click", function (event) {
    var name = event.target.closest && event.target.closest("#launch-table span.name[title]");
    if (name) { name.classList.toggle("whole"); }
  });

  Array.prototype.forEach.call(doc.querySelectorAll("table[data-sortable]"), makeSortable);
  var kernels = doc.getElementById("kernel-table");
  if (kernels) { addFilter(kernels); }
  window.addEventListener("hashchange", openTarget);
  openTarget();
  doc.documentElement.setAttribute("data-js", "on");
}());
