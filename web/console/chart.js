// Hand-drawn charts on <canvas>: a line chart over the last `capacity` points and a bar
// chart. No library, no external resources.
const COLORS = ['#0b4f9c', '#a31515', '#1d6b1d', '#8a4b00'];

// Axes: the value axis (left) carries 0, half and the maximum with the chart's unit; the
// time axis (bottom) runs from "-N s" (the oldest point the chart keeps) to "now". The
// unit and time span are also on the canvas's dataset (data-unit, data-span-seconds) so a
// test can read what the pixels say.
const AXIS_BOTTOM = 16, LEGEND = 14;

function tickText(v, unit) {
  const text = v === 0 ? '0' : v >= 100 ? v.toFixed(0) : v >= 1 ? v.toFixed(1) : v.toPrecision(2);
  return `${text}${unit ? ` ${unit}` : ''}`;
}

export class LineChart {
  // unit: the value axis's unit ("req/s", "ms", "%"); periodSeconds: seconds between points.
  constructor(canvas, names, { unit = '', periodSeconds = 1, capacity = 60 } = {}) {
    this.canvas = canvas;
    this.names = names;
    this.capacity = capacity;
    this.unit = unit;
    this.periodSeconds = periodSeconds;
    this.series = names.map(() => []);
    canvas.dataset.unit = unit;
    canvas.dataset.spanSeconds = String(Math.round((capacity - 1) * periodSeconds));
  }
  push(values) {
    values.forEach((v, i) => {
      const s = this.series[i];
      s.push(Number.isFinite(v) ? v : 0);
      if (s.length > this.capacity) s.shift();
    });
    this.draw();
  }
  clear() {
    this.series = this.names.map(() => []);
    this.draw();
  }
  draw() {
    const ctx = this.canvas.getContext('2d');
    const w = this.canvas.width, h = this.canvas.height;
    ctx.clearRect(0, 0, w, h);
    let max = 0;
    for (const s of this.series) for (const v of s) max = Math.max(max, v);
    if (max <= 0) max = 1;
    ctx.font = '10px system-ui, sans-serif';
    // The value axis is as wide as its widest tick label.
    const ticks = [0, 0.5, 1].map((f) => [f, tickText(max * f, this.unit)]);
    const left = 6 + Math.max(...ticks.map(([, t]) => ctx.measureText(t).width));
    const right = w - 4, top = LEGEND + 6, bottom = h - AXIS_BOTTOM;
    // Value axis: line, three ticks with the unit, light grid lines.
    ctx.strokeStyle = '#8a8a8a';
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(left, top); ctx.lineTo(left, bottom); ctx.lineTo(right, bottom);
    ctx.stroke();
    ctx.fillStyle = '#4a4a4a';
    ctx.textAlign = 'right';
    for (const [f, text] of ticks) {
      const y = bottom - f * (bottom - top);
      ctx.fillText(text, left - 3, y + 3);
      if (f > 0) {
        ctx.strokeStyle = '#e0e0e0';
        ctx.beginPath(); ctx.moveTo(left + 1, y); ctx.lineTo(right, y); ctx.stroke();
      }
    }
    // Time axis: the oldest kept point, the middle, now.
    const span = (this.capacity - 1) * this.periodSeconds;
    ctx.textAlign = 'left';
    ctx.fillText(`-${Math.round(span)} s`, left, h - 3);
    ctx.textAlign = 'center';
    ctx.fillText(`-${Math.round(span / 2)} s`, (left + right) / 2, h - 3);
    ctx.textAlign = 'right';
    ctx.fillText('now', right, h - 3);
    ctx.textAlign = 'left';
    // Series, right-aligned so the newest point is at "now".
    let labelX = left;
    this.series.forEach((s, i) => {
      ctx.strokeStyle = COLORS[i % COLORS.length];
      ctx.lineWidth = 2;
      ctx.beginPath();
      const offset = this.capacity - s.length;
      s.forEach((v, j) => {
        const x = left + ((offset + j) / (this.capacity - 1)) * (right - left);
        const y = bottom - (v / max) * (bottom - top);
        if (j === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
      });
      ctx.stroke();
      ctx.fillStyle = COLORS[i % COLORS.length];
      const last = s.length ? s[s.length - 1] : 0;
      const label = `${this.names[i]} ${last.toFixed(2)}`;
      ctx.fillText(label, labelX, LEGEND - 2);
      labelX += ctx.measureText(label).width + 10;
    });
  }
}

// A bar chart whose value axis is counted in `unit` and whose bars are labelled by
// `category` (both drawn as axis titles and kept on the canvas's dataset).
export class BarChart {
  constructor(canvas, { unit = '', category = '' } = {}) {
    this.canvas = canvas;
    this.unit = unit;
    this.category = category;
    canvas.dataset.unit = unit;
    canvas.dataset.category = category;
  }
  // bars: [{label, value}]
  draw(bars) {
    const ctx = this.canvas.getContext('2d');
    const w = this.canvas.width, h = this.canvas.height;
    ctx.clearRect(0, 0, w, h);
    ctx.font = '11px system-ui, sans-serif';
    if (!bars.length) {
      ctx.fillStyle = '#4a4a4a';
      ctx.fillText('no data yet', 4, 14);
      return;
    }
    const max = Math.max(1, ...bars.map((b) => b.value));
    ctx.fillStyle = '#4a4a4a';
    ctx.fillText(`${this.unit} by ${this.category}`, 4, 11);
    const slot = (w - 4) / bars.length;
    bars.forEach((b, i) => {
      const bh = (b.value / max) * (h - 44);
      ctx.fillStyle = COLORS[0];
      ctx.fillRect(2 + i * slot + 2, h - 16 - bh, Math.max(2, slot - 4), bh);
      ctx.fillStyle = '#1a1a1a';
      ctx.fillText(String(b.label), 2 + i * slot + 2, h - 4);
      ctx.fillText(String(b.value), 2 + i * slot + 2, h - 18 - bh);
    });
  }
}
