// samsa console: the little behaviour plain HTML lacks. Everything works
// without it; htmx (loaded beside it) refreshes the lag table.
document.addEventListener("DOMContentLoaded", () => {
  // Message browser: only the input the chosen starting point uses is enabled.
  const from = document.getElementById("browse-from");
  if (from) {
    const sync = () => {
      document.getElementById("browse-offset").disabled = from.value !== "offset";
      document.getElementById("browse-timestamp").disabled = from.value !== "timestamp";
    };
    from.addEventListener("change", sync);
    sync();
  }
  // Offset reset: a real reset asks once more.
  const reset = document.getElementById("reset");
  if (reset) {
    reset.addEventListener("submit", (e) => {
      if (!document.getElementById("reset-dryrun").checked && !window.confirm("Commit the new offsets for this group?")) {
        e.preventDefault();
      }
    });
  }
});

// Charts: a sparkline of the last samples, drawn as SVG (no library).
const chartPoints = 60;

function sparkline(el, values, unit) {
  const w = 320, h = 60, pad = 4;
  const peak = Math.max(0, ...values);
  const top = Math.max(1, peak);
  // One sample draws as a short flat segment rather than nothing.
  const drawn = values.length === 1 ? [values[0], values[0]] : values;
  const pts = drawn.map((v, i) => {
    const x = pad + i * (w - 2 * pad) / (drawn.length - 1);
    const y = h - pad - (v / top) * (h - 2 * pad);
    return x.toFixed(1) + "," + y.toFixed(1);
  }).join(" ");
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 " + w + " " + h);
  svg.setAttribute("width", w);
  svg.setAttribute("height", h);
  svg.setAttribute("class", "chart");
  const line = document.createElementNS(ns, "polyline");
  line.setAttribute("points", pts);
  line.setAttribute("fill", "none");
  line.setAttribute("stroke", "#3559c7");
  line.setAttribute("stroke-width", "2");
  svg.appendChild(line);
  const label = document.createElement("span");
  label.className = "chart-label";
  label.textContent = values.length ? values[values.length - 1].toFixed(unit === "msg/s" ? 1 : 0) + " " + unit + " (peak " + peak.toFixed(0) + ")" : "";
  el.replaceChildren(svg, label);
}

// Topic page: messages per second from the growth of the end offsets.
document.addEventListener("DOMContentLoaded", () => {
  const el = document.getElementById("rate-chart");
  if (!el) return;
  const rates = [];
  let last = null;
  const sample = async () => {
    try {
      const resp = await fetch(el.dataset.src, { headers: { "Accept": "application/json" } });
      if (!resp.ok) return;
      const s = await resp.json();
      if (last && s.t > last.t) {
        rates.push(Math.max(0, (s.end - last.end) * 1000 / (s.t - last.t)));
        if (rates.length > chartPoints) rates.shift();
        sparkline(el, rates, "msg/s");
      }
      last = s;
    } catch (e) { /* the next sample tries again */ }
  };
  sample();
  setInterval(sample, 2000);
});

// Group page: total lag after each refresh of the lag table.
(() => {
  const lags = [];
  const record = () => {
    const el = document.getElementById("lag-chart");
    const total = document.getElementById("total-lag");
    if (!el || !total) return;
    lags.push(Number(total.textContent) || 0);
    if (lags.length > chartPoints) lags.shift();
    sparkline(el, lags, "messages behind");
  };
  document.addEventListener("DOMContentLoaded", record);
  document.addEventListener("htmx:afterSwap", record);
})();
