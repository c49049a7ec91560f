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

  // rangeWith widens an automatic range to take in the reference lines, so
  // the card's memory or an objective is never drawn off the chart.
  function rangeWith(lines) {
    return function (u, min, max) {
      lines.forEach(function (m) {
        if (min === null || m.value < min) min = m.value;
        if (max === null || m.value > max) max = m.value;
      });
      if (min === null || max === null) return [0, 1];
      return uPlot.rangeNum(min, max, 0.1, true);
    };
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

  // drawMarkers draws the chart's labelled reference lines: objectives and
  // the card's memory across, the recommended level upright.
  function drawMarkers(u, spec) {
    var ctx = u.ctx, b = u.bbox, out = [];
    ctx.save();
    ctx.lineWidth = 1.5 * pxr;
    ctx.setLineDash([3 * pxr, 3 * pxr]);
    (spec.hLines || []).forEach(function (m) {
      var y = u.valToPos(m.value, "y", true);
      if (!(y >= b.top - 1 && y <= b.top + b.height + 1)) return;
      ctx.strokeStyle = m.color;
      ctx.beginPath();
      ctx.moveTo(b.left, y);
      ctx.lineTo(b.left + b.width, y);
      ctx.stroke();
      // Above the line, or below it when the line is near the top.
      var above = y - b.top > markerFont * 1.6 * pxr;
      out.push(label(ctx, m.label, b.left + b.width - 4 * pxr, above ? y - 2 * pxr : y + 2 * pxr, "right", above ? "bottom" : "top", m.color));
    });
    (spec.vLines || []).forEach(function (m) {
      var x = u.valToPos(m.value, "x", true);
      if (!(x >= b.left - 1 && x <= b.left + b.width + 1)) return;
      ctx.strokeStyle = m.color;
      ctx.beginPath();
      ctx.moveTo(x, b.top);
      ctx.lineTo(x, b.top + b.height);
      ctx.stroke();
      var left = x > b.left + b.width / 2;
      // At the foot of the line: hLine labels sit at the top right.
      out.push(label(ctx, m.label, left ? x - 4 * pxr : x + 4 * pxr, b.top + b.height - 4 * pxr, left ? "right" : "left", "bottom", m.color));
    });
    ctx.restore();
    return out;
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
      axes.push({ axis: i, side: side, label: a.label || "",
        ticks: [Math.min(t0, t1), Math.max(t0, t1)], title: a.label ? [Math.min(l0, l1), Math.max(l0, l1)] : null });
    });
    return { width: u.width, height: u.height, plot: [u.bbox.left / pxr, u.bbox.top / pxr, (u.bbox.left + u.bbox.width) / pxr, (u.bbox.top + u.bbox.height) / pxr], axes: axes, markers: markers };
  }

  function draw(spec) {
    var el = document.getElementById(spec.id);
    if (!el) return;
    el.textContent = "";
    var seriesDrew = false;
    var counted = false;
    var right = spec.series.some(function (s) { return s.axis === 1; });
    var xScale = { time: false };
    if (spec.xLog && spec.x.length > 1) {
      xScale.distr = 3;
      xScale.log = 2;
    }
    var yScale = {};
    if (spec.yRange && spec.yRange[1] > spec.yRange[0]) {
      yScale.range = [spec.yRange[0], spec.yRange[1]];
    } else if ((spec.hLines || []).length) {
      yScale.range = rangeWith(spec.hLines);
    }
    var axes = [
      { label: spec.xLabel, size: axisSize },
      { label: spec.yLabel[0], scale: "y", size: axisSize },
    ];
    if (right) {
      axes.push({ label: spec.yLabel[1], scale: "y2", side: 1, size: axisSize, grid: { show: false } });
    }
    var series = [{ label: spec.xLabel, value: function (u, v) { return v === null || v === undefined ? "hover for the values at one point" : fmt(v, ""); } }];
    spec.series.forEach(function (s) {
      series.push({
        label: s.label,
        scale: s.axis === 1 ? "y2" : "y",
        stroke: s.color,
        width: 2,
        dash: s.dash ? [6, 4] : undefined,
        spanGaps: true,
        points: { show: spec.xLog && spec.x.length <= 64 }, // levels, not dense samples
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
      height: 300,
      scales: { x: xScale, y: yScale },
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
    var data = [spec.x].concat(spec.series.map(function (s) { return s.values; }));
    new uPlot(opts, data, el);
  }

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
})();
