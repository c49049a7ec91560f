// layoutcheck.js is injected by the browser test (chromium_layout_test.go)
// after report.js into a copy of report.html. Once the charts have drawn it
// measures what a reader sees and writes its findings as JSON into
// <body data-layoutcheck>: text whose contrast with its effective
// background is below WCAG AA, words of a table header broken across lines
// (letter by letter wrapping), short words broken inside a cell, cells
// taller than 12 lines (a column squeezed to a word's width),
// tables whose columns leave the window without a visible way to scroll,
// and every chart's drawn series styles and numeric axis ticks (which the
// Go test checks against the chart data).
window.setTimeout(function () {
  "use strict";

  function parseColor(s) {
    var m = /rgba?\(([^)]+)\)/.exec(s || "");
    if (!m) return null;
    var p = m[1].split(/[ ,\/]+/).filter(Boolean).map(parseFloat);
    return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
  }

  // over composites colour c on an opaque background bg.
  function over(c, bg) {
    return { r: c.r * c.a + bg.r * (1 - c.a), g: c.g * c.a + bg.g * (1 - c.a), b: c.b * c.a + bg.b * (1 - c.a), a: 1 };
  }

  // background is the opaque colour behind el: its own and its ancestors'
  // background colours composited over the white canvas.
  function background(el) {
    var layers = [];
    for (var e = el; e && e.nodeType === 1; e = e.parentElement) {
      var c = parseColor(getComputedStyle(e).backgroundColor);
      if (c && c.a > 0) {
        layers.push(c);
        if (c.a >= 1) break;
      }
    }
    var bg = { r: 255, g: 255, b: 255, a: 1 };
    for (var i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg);
    return bg;
  }

  function luminance(c) {
    function lin(v) {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    }
    return 0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b);
  }

  function contrast(a, b) {
    var la = luminance(a), lb = luminance(b);
    return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
  }

  function visible(el) {
    if (!el.getClientRects().length) return false;
    for (var e = el; e && e.nodeType === 1; e = e.parentElement) {
      var s = getComputedStyle(e);
      if (s.visibility === "hidden" || s.display === "none" || parseFloat(s.opacity) === 0) return false;
    }
    return true;
  }

  function ownText(el) {
    var t = "";
    el.childNodes.forEach(function (n) {
      if (n.nodeType === 3) t += n.nodeValue;
    });
    return t.replace(/\s+/g, " ").trim();
  }

  function hex(c) {
    return "rgb(" + Math.round(c.r) + ", " + Math.round(c.g) + ", " + Math.round(c.b) + ")";
  }

  function contentWidth(el) {
    var s = getComputedStyle(el);
    return el.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
  }

  function where(el) {
    var r = el.getBoundingClientRect();
    return [Math.round(r.left), Math.round(r.top + window.scrollY)];
  }

  var out = { width: window.innerWidth, checked: 0, contrast: [], headers: [], words: [], tall: [], tables: [], charts: [] };

  document.body.querySelectorAll("*").forEach(function (el) {
    if (el.tagName === "SCRIPT" || el.tagName === "STYLE") return;
    var text = ownText(el);
    if (!text || !visible(el)) return;
    out.checked++;
    var s = getComputedStyle(el);
    var bg = background(el);
    var fg = over(parseColor(s.color) || { r: 0, g: 0, b: 0, a: 1 }, bg);
    var size = parseFloat(s.fontSize), bold = parseInt(s.fontWeight, 10) >= 700;
    var need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    var ratio = contrast(fg, bg);
    if (ratio < need) {
      out.contrast.push({ text: text.slice(0, 60), tag: el.tagName.toLowerCase() + (el.className ? "." + String(el.className).replace(/ /g, ".") : ""),
        color: hex(fg), background: hex(bg), ratio: Math.round(ratio * 100) / 100, need: need, at: where(el) });
    }
  });

  // brokenAcrossLines reports whether the text node's characters
  // [start, start + n) lie on more than one line.
  function brokenAcrossLines(node, start, n) {
    var range = document.createRange(), tops = {};
    range.setStart(node, start);
    range.setEnd(node, start + n);
    Array.prototype.forEach.call(range.getClientRects(), function (rc) {
      if (rc.width > 0) tops[Math.round(rc.top)] = true;
    });
    return Object.keys(tops).length > 1;
  }

  function tableName(t) {
    var id = t.getAttribute("data-fit") || t.id;
    if (id) return id;
    var h = t.closest("details") && t.closest("details").querySelector("summary");
    return (h ? h.textContent.trim() + ": " : "") + Array.prototype.map.call(t.querySelectorAll("th"), function (th) { return th.textContent.trim(); }).slice(0, 3).join("|");
  }

  document.querySelectorAll("table").forEach(function (t) {
    if (!visible(t) || t.closest(".uplot")) return;
    var name = tableName(t);
    t.querySelectorAll("th, td").forEach(function (cell) {
      // A header's words never break; nor do a cell's short words (a
      // state, a figure, a level), though a line may end after a dash or a
      // slash. A long path or hash may break anywhere.
      var walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT), node;
      while ((node = walk.nextNode())) {
        var words = /\S+/g, w;
        while ((w = words.exec(node.nodeValue))) {
          // A path, a hash or markup quoted from a document may break.
          if (cell.tagName === "TD" && (w[0].length > 20 || /[<>'"=]/.test(w[0]))) continue;
          var parts = /[^\-–\/]+[\-–\/]?/g, m;
          while ((m = parts.exec(w[0]))) {
            if (brokenAcrossLines(node, w.index + m.index, m[0].length)) {
              (cell.tagName === "TH" ? out.headers : out.words).push({ table: name, word: m[0], room: Math.round(contentWidth(cell)), text: cell.textContent.trim().slice(0, 60) });
            }
          }
        }
      }
      if (cell.tagName === "TD" && !cell.classList.contains("excerpt")) {
        var all = document.createRange(), lines = {};
        all.selectNodeContents(cell);
        Array.prototype.forEach.call(all.getClientRects(), function (rc) {
          if (rc.width > 0) lines[Math.round(rc.top)] = true;
        });
        var n = Object.keys(lines).length;
        if (n > 12) out.tall.push({ table: name, lines: n, room: Math.round(contentWidth(cell)), text: cell.textContent.trim().slice(0, 60) });
      }
    });
    var r = t.getBoundingClientRect();
    var wrap = t.parentElement;
    var scrolls = wrap.scrollWidth > wrap.clientWidth + 1 && /auto|scroll/.test(getComputedStyle(wrap).overflowX);
    var hint = wrap.previousElementSibling;
    var cue = scrolls && !!hint && hint.classList.contains("scroll-hint") && visible(hint) && hint.getBoundingClientRect().height > 0;
    out.tables.push({ name: name, right: Math.round(r.right), wrapRight: Math.round(wrap.getBoundingClientRect().right), scrolls: scrolls, cue: cue });
  });

  document.querySelectorAll(".chart[data-layout]").forEach(function (el) {
    var l = JSON.parse(el.getAttribute("data-layout"));
    out.charts.push({ id: el.id, series: l.series || [], axes: l.axes.map(function (a) { return { axis: a.axis, levels: !!a.levels, splits: a.splits || [], values: a.values || [] }; }) });
  });

  document.body.setAttribute("data-layoutcheck", JSON.stringify(out));
}, 50);
