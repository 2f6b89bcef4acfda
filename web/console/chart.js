// Hand-drawn charts on <canvas>: a line chart over the last `capacity` points and a bar
// chart. No library, no external resources.
const COLORS = ['#0b4f9c', '#a31515', '#1d6b1d', '#8a4b00'];

export class LineChart {
  constructor(canvas, names, capacity = 60) {
    this.canvas = canvas;
    this.names = names;
    this.capacity = capacity;
    this.series = names.map(() => []);
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
    const w = this.canvas.width, h = this.canvas.height, top = 14, bottom = h - 4;
    ctx.clearRect(0, 0, w, h);
    let max = 0;
    for (const s of this.series) for (const v of s) max = Math.max(max, v);
    if (max <= 0) max = 1;
    ctx.font = '11px system-ui, sans-serif';
    ctx.fillStyle = '#4a4a4a';
    const maxLabel = `max ${max.toPrecision(3)}`;
    ctx.fillText(maxLabel, 4, 11);
    let labelX = 12 + ctx.measureText(maxLabel).width;
    this.series.forEach((s, i) => {
      ctx.strokeStyle = COLORS[i % COLORS.length];
      ctx.lineWidth = 2;
      ctx.beginPath();
      s.forEach((v, j) => {
        const x = (j / (this.capacity - 1)) * (w - 2) + 1;
        const y = bottom - (v / max) * (bottom - top);
        if (j === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
      });
      ctx.stroke();
      ctx.fillStyle = COLORS[i % COLORS.length];
      const last = s.length ? s[s.length - 1] : 0;
      const label = `${this.names[i]} ${last.toFixed(2)}`;
      ctx.fillText(label, labelX, 11);
      labelX += ctx.measureText(label).width + 10;
    });
  }
}

export class BarChart {
  constructor(canvas) {
    this.canvas = canvas;
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
    const slot = (w - 4) / bars.length;
    bars.forEach((b, i) => {
      const bh = (b.value / max) * (h - 30);
      ctx.fillStyle = COLORS[0];
      ctx.fillRect(2 + i * slot + 2, h - 16 - bh, Math.max(2, slot - 4), bh);
      ctx.fillStyle = '#1a1a1a';
      ctx.fillText(String(b.label), 2 + i * slot + 2, h - 4);
      ctx.fillText(String(b.value), 2 + i * slot + 2, h - 18 - bh);
    });
  }
}
