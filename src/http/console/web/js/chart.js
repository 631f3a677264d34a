// A live line chart on uPlot (npm, embedded at build time as vendor/uPlot.iife.min.js): a
// window of the last `points` samples, pushed one at a time by the page's poll.
import { el } from './dom.js';

const palette = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd'];

// Whole-number steps for counts (a depth axis never reads 0, 0, 1, 1).
const integerSteps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 1e7, 1e8, 1e9];

export function liveChart(container, { title, series, format = (v) => String(v), points = 150, key, integer = false }) {
  const box = el('div', { class: 'chart', dataset: { chart: key } });
  container.append(box);
  const data = [[], ...series.map(() => [])];
  // The box's inner width (it has a padding of 0.4rem on each side).
  const width = () => Math.max(260, (box.clientWidth || container.clientWidth || 600) - 14);
  const axis = { values: (u, ticks) => ticks.map(format), size: (u, values) => 16 + 7 * Math.max(3, ...(values || []).map((v) => v.length)) };
  if (integer) axis.incrs = integerSteps;
  const plot = new window.uPlot({
    title,
    width: width(),
    height: 220,
    scales: {
      x: { time: true },
      y: { range: (u, min, max) => [0, Math.max(integer ? 5 : 1, max * 1.1)] } },
    axes: [{}, axis],
    series: [{}, ...series.map((label, i) => ({
      label, stroke: palette[i % palette.length], width: 2, value: (u, v) => (v === null ? '–' : format(v)),
    }))],
  }, data, box);
  // The grid decides the box's width once every chart is in it, and again on every resize.
  const observer = new ResizeObserver(() => {
    if (Math.abs(plot.width - width()) > 1) plot.setSize({ width: width(), height: 220 });
  });
  observer.observe(box);
  return {
    // `values` in the order of `series`; null leaves a gap.
    push(seconds, values) {
      data[0].push(seconds);
      values.forEach((v, i) => data[i + 1].push(v));
      if (data[0].length > points) data.forEach((column) => column.shift());
      plot.setData(data);
      // At least 20 s across: one sample alone would stretch the time axis over years.
      const first = data[0][0];
      if (seconds - first < 20) plot.setScale('x', { min: seconds - 20, max: seconds });
      box.dataset.samples = String(data[0].length);
    },
    // Hides or shows series `i` (in the order of `series`) and its legend entry.
    show(i, visible) {
      if (plot.series[i + 1].show !== visible) plot.setSeries(i + 1, { show: visible });
    },
    destroy() {
      observer.disconnect();
      plot.destroy();
    },
  };
}
