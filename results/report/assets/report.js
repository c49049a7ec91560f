// report.js draws the charts of an extractbench report with uPlot, from the
// REPORT object that report.html embeds. When a chart has drawn at least one
// series and its canvas holds ink, it counts as drawn: the count goes into
// <body data-charts-drawn="N"> and the title, which the headless browser test
// reads back; each chart element also gets data-drawn and data-layout (where
// its axis ticks, axis titles and reference labels were drawn) for the test
// to check that nothing overlaps.
(function () {
  "use strict";
  var specs = (REPORT && REPORT.charts) || [];
  var drawn = 0;
  var baseTitle = document.title;

  function mark() {
    document.body.setAttribute("data-charts-drawn", String(drawn));
    document.title = baseTitle + " (" + drawn + " of " + specs.length + " charts drawn)";
  }

  // inked reports whether the canvas has any non-transparent pixel.
  function inked(u) {
    var c = u.ctx.canvas;
    if (!c.width || !c.height) return false;
    var px = u.ctx.getImageData(0, 0, c.width, c.height).data;
    for (var i = 3; i < px.length; i += 4) {
      if (px[i] !== 0) return true;
    }
    return false;
  }

  function hasData(values) {
    for (var i = 0; i < values.length; i++) {
      if (values[i] !== null && values[i] !== undefined) return true;
    }
    return false;
  }

  function fmt(v, unit) {
    if (v === null || v === undefined) return "–";
    var a = Math.abs(v);
    var s = a >= 100 ? Math.round(v).toLocaleString("en") : a >= 10 ? v.toFixed(1) : v.toFixed(2);
    return unit ? s + " " + unit : s;
  }

  var pxr = (typeof uPlot !== "undefined" && uPlot.pxRatio) || window.devicePixelRatio || 1;
  var markerFont = 11; // CSS px

  // axisSize fits an axis to its widest tick label, so the axis title never
  // sits on the ticks (uPlot's fixed size does not know "12,000" is wide).
  function axisSize(u, values, axisIdx, cycleNum) {
    var axis = u.axes[axisIdx];
    if (cycleNum > 1 && axis._size) return axis._size;
    var size = (axis.ticks && axis.ticks.show !== false ? axis.ticks.size : 0) + axis.gap;
    if (axisIdx > 0) {
      u.ctx.font = axis.font[0];
      var widest = 0;
      (values || []).forEach(function (v) {
        if (v !== null && v !== undefined) widest = Math.max(widest, u.ctx.measureText(String(v)).width / pxr);
      });
      size += widest;
    } else {
      size += axis.font[1] / pxr * 1.5;
    }
    return Math.ceil(size) + 4;
  }

  // Every scale range, tick and tick label below is computed here rather
  // than by uPlot's defaults: those loop until a tick passes the range's
  // end, and a range that float steps cannot cross (log(0) = -Infinity on a
  // log axis, 1e20 to 1e20 + 1) never ends, which froze the browser on a
  // rate sweep's report. Here every loop is counted, every range is finite
  // and non-empty, and a log axis only ever sees x > 0.

  // maxTicks bounds the ticks of any axis, whatever the data.
  var maxTicks = 40;

  function finite(v) {
    return typeof v === "number" && isFinite(v);
  }

  // extent is [min, max] of the finite numbers of values, or null.
  function extent(values) {
    var lo = null, hi = null;
    for (var i = 0; i < values.length; i++) {
      var v = values[i];
      if (!finite(v)) continue;
      if (lo === null || v < lo) lo = v;
      if (hi === null || v > hi) hi = v;
    }
    return lo === null ? null : [lo, hi];
  }

  // niceStep is a round increment (1, 2, 2.5 or 5 × 10^k) of at least raw.
  function niceStep(raw) {
    var mag = Math.pow(10, Math.floor(Math.log10(raw)));
    if (!finite(mag) || mag <= 0) return raw;
    var ms = [1, 2, 2.5, 5, 10];
    for (var i = 0; i < ms.length; i++) {
      if (ms[i] * mag >= raw) return ms[i] * mag;
    }
    return 10 * mag;
  }

  // niceSplits returns at most count + 1 round ticks within [min, max];
  // on an axis of counts the step is a whole number.
  function niceSplits(min, max, count, whole) {
    if (!finite(min) || !finite(max)) return [];
    if (!(max > min)) return [min];
    count = Math.max(1, Math.min(maxTicks, Math.floor(count) || 1));
    var step = niceStep((max - min) / count);
    if (whole) step = Math.max(1, Math.round(step));
    if (!finite(step) || step <= 0) return [min, max];
    var first = Math.ceil(min / step) * step, out = [];
    for (var i = 0; i <= count + 1 && out.length <= count; i++) {
      var v = first + i * step;
      if (v > max + step * 1e-9) break;
      out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
    }
    return out;
  }

  // numRange pads [lo, hi] by a tenth and rounds it out to a nice step
  // (a whole one for counts), keeping a range of figures ≥ 0 from going
  // below 0; [0, 1] when there is nothing finite to show.
  function numRange(lo, hi, whole) {
    if (!finite(lo) || !finite(hi)) return [0, 1];
    if (lo > hi) { var t = lo; lo = hi; hi = t; }
    var pad = hi > lo ? (hi - lo) * 0.1 : Math.abs(hi) * 0.1 || 1;
    var a = lo - pad, b = hi + pad;
    if (lo >= 0 && a < 0) a = 0;
    var step = niceStep((b - a) / 5);
    if (whole) step = Math.max(1, Math.round(step));
    if (finite(step) && step > 0) {
      var a2 = Math.floor(a / step) * step, b2 = Math.ceil(b / step) * step;
      if (finite(a2) && finite(b2) && b2 > a2) { a = a2; b = b2; }
    }
    if (!(b > a) || !finite(b - a)) return [lo - 1, lo + 1]; // beyond what doubles resolve
    return [a, b];
  }

  // yRange is a left or right axis's range: the fixed one when the chart
  // sets it, else the data's taken together with the reference lines, so
  // the card's memory or an objective is never drawn off the chart.
  function yRange(fixed, lines, whole) {
    return function (u, min, max) {
      if (fixed && finite(fixed[0]) && finite(fixed[1]) && fixed[1] > fixed[0]) return [fixed[0], fixed[1]];
      var lo = finite(min) ? min : null, hi = finite(max) ? max : null;
      (lines || []).forEach(function (m) {
        if (!finite(m.value)) return;
        if (lo === null || m.value < lo) lo = m.value;
        if (hi === null || m.value > hi) hi = m.value;
      });
      return lo === null ? [0, 1] : numRange(lo, hi, whole);
    };
  }

  // xRange is the x axis's range from the chart's own x: on a log axis the
  // powers of 2 around them, else the data with a margin for the named
  // points at the ends.
  function xRange(xs, log, pad) {
    var e = extent(xs) || [0, 1];
    return function () {
      if (log) {
        var a = Math.pow(2, Math.floor(Math.log2(e[0]))), b = Math.pow(2, Math.ceil(Math.log2(e[1])));
        if (!(a > 0)) a = e[0];
        if (!finite(b)) b = e[1];
        if (!(b > a)) { a /= 2; b = finite(b * 2) ? b * 2 : b; }
        return [a, b];
      }
      if (!(e[1] > e[0])) return [e[0] - 1, e[0] + 1];
      var m = pad ? (e[1] - e[0]) * 0.05 : 0;
      return [e[0] - m, e[1] + m];
    };
  }

  // decimals is how many decimals a step needs to print exactly: 1 for
  // 0.5, 2 for 0.25 (one decimal printed 0.25, 0.75 as 0.3, 0.8).
  function decimals(step) {
    if (!finite(step) || step <= 0 || step >= 1) return 0;
    for (var d = 0; d < 6; d++) {
      var scaled = step * Math.pow(10, d);
      if (Math.abs(scaled - Math.round(scaled)) < 1e-9 * Math.max(1, scaled)) return d;
    }
    return 6;
  }

  // tickText prints a tick of a numeric axis with the decimals its step needs.
  function tickText(v, step) {
    if (!finite(v)) return "";
    var a = Math.abs(v);
    if (a >= 1e15 || (a > 0 && a < 1e-6)) return v.toPrecision(3);
    var d = decimals(step);
    return v.toLocaleString("en", { minimumFractionDigits: d, maximumFractionDigits: d });
  }

  function numValues(u, splits) {
    var step = splits.length > 1 ? Math.abs(splits[1] - splits[0]) : 1;
    return splits.map(function (v) { return tickText(v, step); });
  }

  // levelTicks puts a tick on each level the chart has, skipping a level
  // whose name would touch the last one drawn (levels bunch on a linear
  // axis, and auto levels sit close together on a log one).
  function levelTicks(xs, names, log) {
    return function (u, axisIdx, min, max) {
      var axis = u.axes[axisIdx];
      u.ctx.font = axis.font[0];
      var width = (u.bbox && u.bbox.width ? u.bbox.width / pxr : u.width) || 1;
      var lmin = log ? Math.log2(min) : min, span = (log ? Math.log2(max) : max) - lmin;
      function pos(v) { return span > 0 ? ((log ? Math.log2(v) : v) - lmin) / span * width : 0; }
      var out = [], lastPos = null, lastHalf = 0;
      for (var i = 0; i < xs.length && out.length < maxTicks; i++) {
        var v = xs[i];
        if (!finite(v) || v < min || v > max) continue;
        var half = u.ctx.measureText(names ? String(names[i]) : tickText(v, 1)).width / pxr / 2;
        var p = pos(v);
        if (lastPos !== null && p - lastPos < lastHalf + half + 6) continue;
        out.push(v);
        lastPos = p;
        lastHalf = half;
      }
      return out;
    };
  }

  function levelValues(xs, names) {
    return function (u, splits) {
      return splits.map(function (v) {
        var i = xs.indexOf(v);
        return names && i >= 0 ? String(names[i]) : tickText(v, 1);
      });
    };
  }

  function noFilter(u, splits) {
    return splits;
  }

  // label draws a text on a white box and returns the box in CSS px.
  function label(ctx, text, x, y, align, baseline, color) {
    ctx.font = (markerFont * pxr) + "px system-ui, sans-serif";
    var w = ctx.measureText(text).width, h = markerFont * 1.3 * pxr, pad = 2 * pxr;
    var x0 = align === "right" ? x - w : x;
    var y0 = baseline === "bottom" ? y - h : y;
    ctx.fillStyle = "rgba(255, 255, 255, 0.85)";
    ctx.fillRect(x0 - pad, y0, w + 2 * pad, h);
    ctx.fillStyle = color;
    ctx.textAlign = "left";
    ctx.textBaseline = "top";
    ctx.fillText(text, x0, y0 + 1.5 * pxr);
    return { text: text, box: [(x0 - pad) / pxr, y0 / pxr, (x0 + w + pad) / pxr, (y0 + h) / pxr] };
  }

  // markerRow is the height of one reference label's row, CSS px.
  var markerRow = Math.ceil(markerFont * 1.3) + 4;

  // drawMarkers draws the chart's labelled reference lines: objectives and
  // the card's memory across, the recommended levels upright. Their labels
  // sit in rows above the plot, one row each, so a label never covers a
  // line of data nor another label; a short stroke in the line's colour and
  // dash leads each label, and an upright line reaches up to its own.
  function drawMarkers(u, spec) {
    var ctx = u.ctx, b = u.bbox, out = [];
    var rowH = markerRow * pxr, row = 0;
    var top = b.top - markerCount(spec) * rowH; // the first row's top
    ctx.save();
    ctx.lineWidth = 1.5 * pxr;
    ctx.setLineDash([3 * pxr, 3 * pxr]);
    function key(text, x, y, color, left) {
      // A stroke then the text, from x rightwards (or leftwards when left).
      ctx.font = (markerFont * pxr) + "px system-ui, sans-serif";
      var w = ctx.measureText(text).width, lead = 14 * pxr, gap = 4 * pxr;
      var x0 = left ? x - w - lead - gap : x;
      x0 = Math.max(b.left, Math.min(x0, b.left + b.width - w - lead - gap));
      ctx.strokeStyle = color;
      ctx.beginPath();
      ctx.moveTo(x0, y + rowH / 2);
      ctx.lineTo(x0 + lead, y + rowH / 2);
      ctx.stroke();
      var l = label(ctx, text, x0 + lead + gap, y + 1 * pxr, "left", "top", color);
      l.box[0] = x0 / pxr;
      return l;
    }
    (spec.hLines || []).forEach(function (m) {
      var y = u.valToPos(m.value, "y", true);
      var y0 = top + row * rowH;
      row++;
      if (!(y >= b.top - 1 && y <= b.top + b.height + 1)) return;
      ctx.strokeStyle = m.color;
      ctx.beginPath();
      ctx.moveTo(b.left, y);
      ctx.lineTo(b.left + b.width, y);
      ctx.stroke();
      out.push(key(m.label, b.left + b.width, y0, m.color, true));
    });
    (spec.vLines || []).forEach(function (m) {
      var x = u.valToPos(m.value, "x", true);
      var y0 = top + row * rowH;
      row++;
      if (!(x >= b.left - 1 && x <= b.left + b.width + 1)) return;
      ctx.strokeStyle = m.color;
      ctx.beginPath();
      ctx.moveTo(x, y0 + rowH / 2);
      ctx.lineTo(x, b.top + b.height);
      ctx.stroke();
      out.push(key(m.label, x, y0, m.color, x > b.left + b.width / 2));
    });
    ctx.restore();
    return out;
  }

  // markers counts a chart's reference lines: the rows above its plot.
  function markerCount(spec) {
    return (spec.hLines || []).length + (spec.vLines || []).length;
  }

  // layout records, in CSS px of the chart's canvas, where each axis drew
  // its tick labels and its title, and where the reference labels went,
  // for the browser test to check that nothing overlaps.
  function layout(u, markers) {
    var axes = [];
    u.axes.forEach(function (a, i) {
      if (!a.show || !a._show) return;
      var side = a.side, c = side === 0 || side === 3 ? -1 : 1, vertical = side === 1 || side === 3;
      var ticks = (a.ticks && a.ticks.show !== false ? a.ticks.size : 0) + a.gap;
      u.ctx.font = a.font[0];
      var extent = 0;
      (a._values || []).forEach(function (v) {
        if (v === null || v === undefined) return;
        extent = Math.max(extent, vertical ? u.ctx.measureText(String(v)).width / pxr : a.font[1] / pxr);
      });
      var t0 = a._pos + c * ticks, t1 = t0 + c * extent;
      var l0 = a._lpos + c * a.labelGap, l1 = l0 + c * (a.labelFont[1] / pxr);
      axes.push({ axis: i, side: side, label: a.label || "", levels: !!a.levels,
        ticks: [Math.min(t0, t1), Math.max(t0, t1)], title: a.label ? [Math.min(l0, l1), Math.max(l0, l1)] : null,
        splits: a._splits || [], values: (a._values || []).map(String) });
    });
    // How each series was drawn, for the test to check that series which
    // coincide both show.
    var series = u.series.slice(1).map(function (s) {
      return { label: s.label, width: s.width, dash: !!(s.dash && s.dash.length) };
    });
    return { width: u.width, height: u.height, plot: [u.bbox.left / pxr, u.bbox.top / pxr, (u.bbox.left + u.bbox.width) / pxr, (u.bbox.top + u.bbox.height) / pxr], axes: axes, markers: markers, series: series };
  }

  function draw(spec) {
    var el = document.getElementById(spec.id);
    if (!el) return;
    el.textContent = "";
    var seriesDrew = false;
    var counted = false;
    var right = spec.series.some(function (s) { return s.axis === 1; });
    var xs = spec.x || [];
    if (!xs.every(finite)) throw new Error("an x value is not a number");
    var names = spec.xNames && spec.xNames.length === xs.length ? spec.xNames : null;
    // A log axis only where every x is above 0: Go never sends another, and
    // this page must not hang if it did.
    var log = !!spec.xLog && xs.length > 1 && xs.every(function (v) { return v > 0; });
    var levels = !!names || log;
    var xScale = { time: false, range: xRange(xs, log, levels) };
    if (log) {
      xScale.distr = 3;
      xScale.log = 2;
    }
    var count = spec.yCount || [false, false];
    var scales = { x: xScale, y: { range: yRange(spec.yRange, spec.hLines, count[0]) } };
    if (right) scales.y2 = { range: yRange(null, null, count[1]) };
    function ySplits(u, axisIdx, min, max) {
      var h = (u.bbox && u.bbox.height ? u.bbox.height / pxr : u.height) || 1;
      return niceSplits(min, max, Math.max(2, Math.floor(h / 30)), count[u.axes[axisIdx].scale === "y2" ? 1 : 0]);
    }
    var axes = [
      levels
        ? { label: spec.xLabel, levels: true, size: axisSize, splits: levelTicks(xs, names, log), values: levelValues(xs, names), filter: noFilter }
        : { label: spec.xLabel, size: axisSize, values: numValues, filter: noFilter, splits: function (u, axisIdx, min, max) {
          var w = (u.bbox && u.bbox.width ? u.bbox.width / pxr : u.width) || 1;
          return niceSplits(min, max, Math.max(2, Math.floor(w / 80)));
        } },
      { label: spec.yLabel[0], scale: "y", size: axisSize, splits: ySplits, values: numValues, filter: noFilter },
    ];
    if (right) {
      axes.push({ label: spec.yLabel[1], scale: "y2", side: 1, size: axisSize, grid: { show: false }, splits: ySplits, values: numValues, filter: noFilter });
    }
    var series = [{ label: spec.xLabel, value: function (u, v, si, idx) {
      if (v === null || v === undefined || idx === null || idx === undefined) return "hover for the values at one point";
      return names ? String(names[idx]) : fmt(v, "");
    } }];
    spec.series.forEach(function (s) {
      series.push({
        label: s.label,
        scale: s.axis === 1 ? "y2" : "y",
        stroke: s.color,
        width: s.width || 2, // wider under an identical line drawn after it (Go's separate)
        dash: s.dash ? [6, 4] : undefined,
        spanGaps: true,
        points: { show: levels && xs.length <= 64 }, // levels, not dense samples
        // Before a hover the legend shows the figure Go chose (the value at
        // the recommended level, with its unit), never a bare dash.
        value: (function (unit, legend) {
          return function (u, v, si, idx) { return idx === null || idx === undefined ? (legend || fmt(v, unit)) : fmt(v, unit); };
        })(s.unit, s.legend),
      });
    });
    var bands = (spec.bands || []).map(function (b) {
      return { series: [b[0] + 1, b[1] + 1], fill: "rgba(0, 114, 178, 0.15)" };
    });
    var markers = [];
    var opts = {
      title: spec.title,
      width: Math.max(320, el.clientWidth || 600),
      height: 300 + markerCount(spec) * markerRow,
      padding: [markerCount(spec) ? markerCount(spec) * markerRow + 8 : null, null, null, null],
      scales: scales,
      axes: axes,
      series: series,
      bands: bands,
      hooks: {
        drawSeries: [function (u, si) {
          if (si > 0 && hasData(u.data[si])) seriesDrew = true;
        }],
        draw: [function (u) {
          markers = drawMarkers(u, spec);
          el.setAttribute("data-layout", JSON.stringify(layout(u, markers)));
          if (!counted && seriesDrew && inked(u)) {
            counted = true;
            drawn++;
            el.setAttribute("data-drawn", "1");
            mark();
          }
        }],
      },
    };
    var data = [xs].concat(spec.series.map(function (s) {
      return xs.map(function (_, i) { var v = s.values[i]; return finite(v) ? v : null; });
    }));
    new uPlot(opts, data, el);
  }

  // screen records, for the browser test, the window and the boxes of the
  // elements marked data-check (the first screen), and whether each table
  // marked data-fit fits its room or scrolls.
  function screen() {
    var out = { width: window.innerWidth, height: window.innerHeight, docWidth: document.documentElement.scrollWidth, boxes: [], tables: [] };
    document.querySelectorAll("[data-check]").forEach(function (el) {
      var r = el.getBoundingClientRect();
      out.boxes.push({ name: el.getAttribute("data-check"), box: [r.left, r.top + window.scrollY, r.right, r.bottom + window.scrollY],
        background: getComputedStyle(el).backgroundColor });
    });
    document.querySelectorAll("table[data-fit]").forEach(function (t) {
      var room = t.parentElement, r = t.getBoundingClientRect();
      out.tables.push({ id: t.getAttribute("data-fit"), right: r.right, width: t.scrollWidth, room: room.clientWidth,
        scrolls: room.scrollWidth > room.clientWidth + 1 });
    });
    document.body.setAttribute("data-screen", JSON.stringify(out));
  }

  // scrollHints puts a line above each table wider than its room, naming
  // the columns out of sight: where scrollbars hide until used, nothing
  // else says that the table goes on. Done again when the window resizes.
  function scrollHints() {
    document.querySelectorAll(".scroll").forEach(function (wrap) {
      var hint = wrap.previousElementSibling;
      if (!hint || !hint.classList.contains("scroll-hint")) {
        hint = document.createElement("p");
        hint.className = "scroll-hint";
        wrap.parentNode.insertBefore(hint, wrap);
      }
      var t = wrap.querySelector("table");
      var scrolls = !!t && wrap.scrollWidth > wrap.clientWidth + 1;
      // Only a table that scrolls gets its verdict column widened (CSS).
      wrap.classList.toggle("scrolls", scrolls);
      scrolls = scrolls && wrap.scrollWidth > wrap.clientWidth + 1;
      var hidden = [];
      if (scrolls) {
        var heads = t.querySelectorAll("thead th"), room = wrap.getBoundingClientRect().right;
        heads.forEach(function (th) {
          if (getComputedStyle(th).position === "sticky" && th.getBoundingClientRect().left > wrap.getBoundingClientRect().left + 1) room = Math.min(room, th.getBoundingClientRect().left);
        });
        heads.forEach(function (th) {
          if (getComputedStyle(th).position !== "sticky" && th.getBoundingClientRect().right > room + 1) hidden.push(th.textContent.trim());
        });
      }
      hint.textContent = hidden.length ? "Wider than the window: scroll the table sideways (→) for " + hidden.join(", ") + "." : "";
      hint.hidden = !hidden.length;
    });
  }
  window.addEventListener("resize", scrollHints);

  specs.forEach(function (spec) {
    try {
      draw(spec);
    } catch (e) {
      var el = document.getElementById(spec.id);
      if (el) {
        el.classList.add("chart-error");
        el.textContent = "The chart could not be drawn (" + e + "); the figures are in the tables below.";
      }
    }
  });
  mark();
  scrollHints();
  screen();
})();
