// report.js draws the charts of an extractbench report with uPlot, from the
// REPORT object that report.html embeds. When a chart has drawn at least one
// series and its canvas holds ink, it counts as drawn: the count goes into
// <body data-charts-drawn="N"> and the title, which the headless browser test
// reads back.
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
    }
    var axes = [
      { label: spec.xLabel },
      { label: spec.yLabel[0], scale: "y", size: 60 },
    ];
    if (right) {
      axes.push({ label: spec.yLabel[1], scale: "y2", side: 1, size: 60, grid: { show: false } });
    }
    var series = [{ label: spec.xLabel, value: function (u, v) { return fmt(v, ""); } }];
    spec.series.forEach(function (s) {
      series.push({
        label: s.label,
        scale: s.axis === 1 ? "y2" : "y",
        stroke: s.color,
        width: 2,
        dash: s.dash ? [6, 4] : undefined,
        spanGaps: true,
        points: { show: spec.xLog && spec.x.length <= 64 }, // levels, not dense samples
        value: (function (unit) { return function (u, v) { return fmt(v, unit); }; })(s.unit),
      });
    });
    var bands = (spec.bands || []).map(function (b) {
      return { series: [b[0] + 1, b[1] + 1], fill: "rgba(0, 114, 178, 0.15)" };
    });
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
          if (!counted && seriesDrew && inked(u)) {
            counted = true;
            drawn++;
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
