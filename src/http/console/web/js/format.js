// How the console writes numbers, sizes and times (en-US grouping, binary units, UTC).

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const decimal = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });
const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

export function count(n) {
  return typeof n === 'number' ? integer.format(n) : '–';
}

export function rate(n) {
  return typeof n === 'number' ? decimal.format(n) : '–';
}

// 1536 -> [1.5, 'KiB']
function scaled(n) {
  let v = n;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return [v, units[i]];
}

export function bytes(n) {
  if (typeof n !== 'number') return '–';
  const [v, unit] = scaled(n);
  return unit === 'B' ? `${integer.format(v)} B` : `${decimal.format(v)} ${unit}`;
}

// A chart axis: few digits ("954 MiB", "1.2 GiB").
export function shortBytes(n) {
  if (typeof n !== 'number') return '';
  const [v, unit] = scaled(n);
  return `${v >= 100 || unit === 'B' ? Math.round(v) : Math.round(v * 10) / 10} ${unit}`;
}

export function duration(seconds) {
  if (typeof seconds !== 'number') return '–';
  const s = Math.floor(seconds);
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${s % 60}s`;
  return `${s}s`;
}

export function time(ms) {
  if (typeof ms !== 'number' || ms <= 0) return '–';
  return new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}
