// The page's own stylesheet and script, inline so the file works alone from file:// with no
// network. The script only reads the page (filters and search); it never builds markup from text.

export const STYLE = `
:root{--fg:#1b1f24;--muted:#57606a;--bg:#fff;--panel:#f6f8fa;--line:#d0d7de;--good:#1a7f37;--good-bg:#dafbe1;--bad:#cf222e;--bad-bg:#ffebe9;--warn:#9a6700;--warn-bg:#fff8c5;--neutral:#57606a;--neutral-bg:#eaeef2;--agent:#0969da;--user:#8250df;--tool:#bc4c00;--focus:#0969da}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9da7b3;--bg:#0d1117;--panel:#161b22;--line:#30363d;--good:#3fb950;--good-bg:#12261e;--bad:#f85149;--bad-bg:#2d1214;--warn:#d29922;--warn-bg:#2b2111;--neutral:#9da7b3;--neutral-bg:#21262d;--agent:#58a6ff;--user:#bc8cff;--tool:#f0883e;--focus:#58a6ff}}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main,header.top{max-width:1200px;margin:0 auto;padding:0 1rem}
a{color:var(--agent)}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:var(--bg);padding:.5rem;z-index:2}
h1{font-size:1.5rem;margin:1rem 0 .25rem}h2{font-size:1.2rem;margin:1.5rem 0 .5rem}h3{font-size:1.05rem;margin:0 0 .5rem;display:flex;flex-wrap:wrap;gap:.4rem;align-items:center}
h4{font-size:1rem;margin:.5rem 0}h5{font-size:.85rem;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);margin:1rem 0 .4rem}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.875em}
pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:.25rem 0;background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:.5rem;max-height:24rem;overflow:auto}
.meta{color:var(--muted);margin:0}
.tiles{display:flex;flex-wrap:wrap;gap:.5rem;padding:0;margin:.75rem 0;list-style:none}
.tile{border:1px solid var(--line);border-left-width:6px;border-radius:6px;padding:.4rem .8rem;min-width:8rem;background:var(--panel)}
.tile .n{font-size:1.4rem;font-weight:600;display:block}.tile.good{border-left-color:var(--good)}.tile.bad{border-left-color:var(--bad)}.tile.warn{border-left-color:var(--warn)}
.badge{display:inline-block;border:1px solid currentColor;border-radius:999px;padding:0 .5rem;font-size:.85rem;font-weight:600;white-space:nowrap}
.good{color:var(--good)}.bad{color:var(--bad)}.warn{color:var(--warn)}.neutral{color:var(--neutral)}
.badge.good{background:var(--good-bg)}.badge.bad{background:var(--bad-bg)}.badge.warn{background:var(--warn-bg)}.badge.neutral{background:var(--neutral-bg)}
.mark{font-weight:600;white-space:nowrap}
table{border-collapse:collapse;margin:.5rem 0;max-width:100%}th,td{border:1px solid var(--line);padding:.25rem .5rem;text-align:left;vertical-align:top;overflow-wrap:anywhere}caption{text-align:left;font-weight:600;padding:.25rem 0}
tr.flip td{background:var(--warn-bg)}
.filters{background:var(--bg);border-bottom:1px solid var(--line);padding:.5rem 0;display:flex;flex-wrap:wrap;gap:.75rem 1.25rem;align-items:center}
.filters input[type=search]{font:inherit;padding:.3rem .5rem;min-width:min(20rem,100%);border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg)}
.filters select{font:inherit;padding:.25rem;background:var(--bg);color:var(--fg);border:1px solid var(--line);border-radius:6px}
.scenario{border:1px solid var(--line);border-radius:8px;padding:.75rem 1rem;margin:1rem 0}
.scenario[data-attention=true]{border-left:6px solid var(--bad)}.scenario[data-attention=true][data-tone=warn]{border-left-color:var(--warn)}.scenario[data-attention=true][data-tone=neutral]{border-left-color:var(--neutral)}
.facts{display:flex;flex-wrap:wrap;gap:.25rem 1.5rem;margin:.25rem 0}.facts div{min-width:0}.facts dt{font-size:.8rem;color:var(--muted)}.facts dd{margin:0;overflow-wrap:anywhere}
.call{border-top:1px solid var(--line);padding:.5rem 0}
.call summary{cursor:pointer;padding:.25rem 0}.call-title{font-weight:600}
.note{color:var(--muted);font-size:.9em}
.expectations{padding-left:0;list-style:none}.expectation{padding:.35rem .5rem;border-radius:6px;margin:.25rem 0}
.expectation[data-passed=false]{background:var(--bad-bg)}.expectation .num{color:var(--muted)}
.detail{margin:.2rem 0 0 1.5rem}.context{margin:.3rem 0 0 1.5rem}.context-lines{margin:0;padding-left:1.25rem}
.label{font-size:.8rem;color:var(--muted);font-weight:600}
.chat{list-style:none;padding:0;margin:0;display:flex;flex-direction:column;gap:.5rem}
.turn{max-width:min(44rem,92%);overflow-wrap:anywhere}
.turn .who{font-size:.8rem;color:var(--muted);font-weight:600}
.turn .bubble{white-space:pre-wrap;border-radius:10px;padding:.4rem .7rem;border:1px solid var(--line)}
.turn.agent .bubble{background:var(--panel);border-left:4px solid var(--agent)}
.turn.user{align-self:flex-end}.turn.user .bubble{border-right:4px solid var(--user)}
.turn.tool,.turn.error{align-self:stretch;max-width:none}
.tool-card{border:1px dashed var(--tool);border-radius:8px;padding:.4rem .6rem}
.turn.error .error-body{border-color:var(--bad);background:var(--bad-bg)}
.turn.pointed{outline:3px solid var(--bad);outline-offset:2px;border-radius:8px}
.pointer{color:var(--bad)}
.at{font-weight:400}
.call-error,.warn-text{border:1px solid var(--bad);background:var(--bad-bg);border-radius:6px;padding:.4rem .6rem}
.timeline{margin:.25rem 0}.timeline-svg{max-width:48rem;height:auto;display:block}
.timeline figcaption{font-size:.85rem;color:var(--muted)}
.timeline text{font-size:11px;fill:var(--fg)}.timeline text.axis{fill:var(--muted)}.timeline .tick{stroke:var(--line);stroke-width:1}
.mark-agent{fill:var(--agent)}.mark-user{fill:var(--user)}.mark-tool{fill:var(--tool)}.mark-error{fill:var(--bad)}.mark-call{fill:var(--neutral)}.mark-wait{fill:var(--user);opacity:.6}
.sides{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,30rem),1fr));gap:1rem}
.side-col{min-width:0}.side-title{border-bottom:2px solid var(--line)}
.comparison{border:1px solid var(--line);border-radius:6px;padding:.5rem .75rem;margin:.5rem 0;background:var(--panel)}
.diff .diff-add{color:var(--good)}.diff .diff-del{color:var(--bad)}
.bound.exceeded{color:var(--bad)}
.empty{padding:1rem;border:1px dashed var(--line);border-radius:6px}
@media (min-width:48rem) and (min-height:40rem){.filters{position:sticky;top:0;z-index:1}}
[hidden]{display:none!important}
`;

export const SCRIPT = `(function () {
  "use strict";
  var search = document.getElementById("search");
  var failedOnly = document.getElementById("failed-only");
  var agent = document.getElementById("agent");
  var shown = document.getElementById("shown");
  var empty = document.getElementById("no-match");
  var scenarios = Array.prototype.slice.call(document.querySelectorAll("section.scenario"));
  var texts = scenarios.map(function (s) { return s.textContent.toLowerCase(); });
  function apply() {
    var query = search.value.trim().toLowerCase();
    var count = 0;
    scenarios.forEach(function (s, i) {
      var keep = (!failedOnly.checked || s.getAttribute("data-attention") === "true") &&
        (agent.value === "" || s.getAttribute("data-agent") === agent.value) &&
        (query === "" || texts[i].indexOf(query) >= 0);
      s.hidden = !keep;
      if (!keep) return;
      count++;
      if (query !== "") {
        Array.prototype.forEach.call(s.querySelectorAll("article.call > details"), function (d) {
          if (d.textContent.toLowerCase().indexOf(query) >= 0) d.open = true;
        });
      }
    });
    shown.textContent = "Showing " + count + " of " + scenarios.length + " scenarios";
    empty.hidden = count !== 0;
  }
  search.form.addEventListener("submit", function (e) { e.preventDefault(); });
  search.addEventListener("input", apply);
  failedOnly.addEventListener("change", apply);
  agent.addEventListener("change", apply);
  document.addEventListener("keydown", function (e) {
    var t = e.target;
    var typing = t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA");
    if (e.key === "/" && !typing) { e.preventDefault(); search.focus(); }
  });
  apply();
})();`;
