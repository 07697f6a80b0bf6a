/**
 * `GET /docs`: one self-contained HTML page that renders `/openapi.json` with a small inline
 * script. No CDN, fonts or external assets, so it works offline and in locked-down CI networks.
 */
export const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svcd API</title>
<style>
  body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 60rem; padding: 1rem 1.5rem 4rem; color: #1b1b1b; }
  h1 { margin-bottom: 0; } .muted { color: #666; } code, pre { font: 13px/1.4 ui-monospace, monospace; }
  pre { background: #f5f5f5; padding: .6rem; overflow: auto; border-radius: 4px; }
  details { border: 1px solid #ddd; border-radius: 4px; margin: .35rem 0; }
  summary { cursor: pointer; padding: .4rem .6rem; list-style: none; }
  details > div { padding: 0 .8rem .6rem; }
  .m { display: inline-block; min-width: 4.2rem; font-weight: 600; font-family: ui-monospace, monospace; }
  .get { color: #1565c0; } .post { color: #2e7d32; } .delete { color: #c62828; } .patch, .put { color: #ef6c00; }
  table { border-collapse: collapse; width: 100%; } td, th { border-bottom: 1px solid #eee; padding: .25rem .4rem; text-align: left; vertical-align: top; }
  input[type=search] { width: 100%; padding: .45rem; font-size: 15px; margin: .8rem 0; box-sizing: border-box; }
</style>
</head>
<body>
<h1 id="title">svcd API</h1>
<p class="muted" id="subtitle">Loading <code>/openapi.json</code>…</p>
<div id="intro"></div>
<input type="search" id="filter" placeholder="Filter by path, method or summary">
<div id="ops"></div>
<script>
(function () {
  var esc = function (s) { return String(s).replace(/[&<>"']/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]; }); };
  var el = function (id) { return document.getElementById(id); };
  var typeOf = function (s) {
    if (!s) return "";
    if (s.type) return Array.isArray(s.type) ? s.type.join(" | ") : s.type;
    if (s.anyOf) return s.anyOf.map(typeOf).join(" | ");
    return s.$ref ? s.$ref.split("/").pop() : "any";
  };
  function render(doc) {
    el("title").textContent = doc.info.title + " " + doc.info.version;
    el("subtitle").textContent = "OpenAPI " + doc.openapi + " — raw document: /openapi.json";
    var schemes = Object.keys((doc.components || {}).securitySchemes || {}).map(function (k) {
      var s = doc.components.securitySchemes[k];
      return "<li><code>" + esc(k) + "</code>: " + esc(s.description || s.type) + "</li>";
    }).join("");
    el("intro").innerHTML = "<p>" + esc(doc.info.description || "") + "</p>" +
      "<p>Servers: " + (doc.servers || []).map(function (s) { return "<code>" + esc(s.url) + "</code>"; }).join(", ") + "</p>" +
      (schemes ? "<p>Authentication:</p><ul>" + schemes + "</ul>" : "");
    var html = "";
    (doc.tags || []).forEach(function (tag) {
      var rows = "";
      Object.keys(doc.paths).sort().forEach(function (path) {
        Object.keys(doc.paths[path]).forEach(function (method) {
          var op = doc.paths[path][method];
          if ((op.tags || [])[0] !== tag.name) return;
          var params = (op.parameters || []).map(function (p) {
            return "<tr><td><code>" + esc(p.name) + "</code></td><td>" + esc(p.in) + (p.required ? ", required" : "") +
              "</td><td>" + esc(typeOf(p.schema)) + "</td><td>" + esc(p.description || "") + "</td></tr>";
          }).join("");
          var body = op.requestBody ? Object.keys(op.requestBody.content).map(function (ct) {
            return "<p>Body <code>" + esc(ct) + "</code>" + (op.requestBody.description ? " — " + esc(op.requestBody.description) : "") +
              "</p><pre>" + esc(JSON.stringify(op.requestBody.content[ct].schema, null, 2)) + "</pre>";
          }).join("") : "";
          var auth = (op.security || []).length === 0 ? "no credentials" : op.security.map(function (s) { return Object.keys(s).join(" + "); }).join(" or ");
          var key = (method + " " + path + " " + (op.summary || "")).toLowerCase();
          rows += '<details data-key="' + esc(key) + '"><summary><span class="m ' + esc(method) + '">' + esc(method.toUpperCase()) +
            "</span> <code>" + esc(path) + "</code> — " + esc(op.summary || "") + "</summary><div>" +
            (op.description ? "<p>" + esc(op.description) + "</p>" : "") +
            "<p class=muted>Auth: " + esc(auth) + (op.servers ? " · server " + esc(op.servers[0].url) : "") + "</p>" +
            (params ? "<table><tr><th>Parameter</th><th>In</th><th>Type</th><th></th></tr>" + params + "</table>" : "") +
            body + "<p class=muted>Responses: " + esc(Object.keys(op.responses).join(", ")) + "</p></div></details>";
        });
      });
      if (rows) html += '<section><h2>' + esc(tag.name) + '</h2><p class="muted">' + esc(tag.description) + "</p>" + rows + "</section>";
    });
    el("ops").innerHTML = html;
  }
  el("filter").addEventListener("input", function () {
    var q = this.value.toLowerCase();
    Array.prototype.forEach.call(document.querySelectorAll("details"), function (d) {
      d.style.display = d.getAttribute("data-key").indexOf(q) >= 0 ? "" : "none";
    });
  });
  fetch("/openapi.json").then(function (r) { return r.json(); }).then(render).catch(function (e) {
    el("subtitle").textContent = "Could not load /openapi.json: " + e;
  });
})();
</script>
</body>
</html>
`;
