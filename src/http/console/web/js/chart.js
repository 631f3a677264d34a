// A live line chart on uPlot (npm, embedded at build time as vendor/uPlot.iife.min.js): a
// window of the last `points` samples, pushed one at a time by the page's poll.
import { el } from './dom.js';

const palette = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd'];

export function liveChart(container, { title, series, format = (v) => String(v), points = 150, key }) {
  const box = el('div', { class: 'chart', dataset: { chart: key } });
  container.append(box);
  const data = [[], ...series.map(() => [])];
  const width = () => Math.max(280, box.clientWidth || container.clientWidth || 600);
  const plot = new window.uPlot({
    title,
    width: width(),
    height: 220,
    scales: { x: { time: true }, y: { range: (u, min, max) => [0, Math.max(1, max * 1.1)] } },
    axes: [{}, { values: (u, ticks) => ticks.map(format), size: 70 }],
    series: [{}, ...series.map((label, i) => ({
      label, stroke: palette[i % palette.length], width: 2, value: (u, v) => (v === null ? '–' : format(v)),
    }))],
  }, data, box);
  const resize = () => plot.setSize({ width: width(), height: 220 });
  window.addEventListener('resize', resize);
  return {
    // `values` in the order of `series`; null leaves a gap.
    push(seconds, values) {
      data[0].push(seconds);
      values.forEach((v, i) => data[i + 1].push(v));
      if (data[0].length > points) data.forEach((column) => column.shift());
      plot.setData(data);
      box.dataset.samples = String(data[0].length);
    },
    destroy() {
      window.removeEventListener('resize', resize);
      plot.destroy();
    },
  };
}
