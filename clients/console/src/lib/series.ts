/**
 * Metrics over time: the API answers one sample at a time, so the page
 * keeps the last `capacity` samples itself and draws each figure as a
 * line. Pure, so the scaling is tested without a browser.
 */
export interface Sample {
  t: number;
  cpuPct: number;
  memUsed: number;
  memTotal: number;
  diskUsed: number;
  diskTotal: number;
}

export class Series {
  readonly samples: Sample[] = [];
  constructor(readonly capacity = 150) {}

  /** Adds a sample; one not newer than the last is ignored (a repeated answer). */
  push(s: Sample): boolean {
    const last = this.samples[this.samples.length - 1];
    if (last && s.t <= last.t) return false;
    this.samples.push(s);
    if (this.samples.length > this.capacity) this.samples.shift();
    return true;
  }
}

/**
 * The points of an SVG polyline for `values` in a `width` × `height` box,
 * from 0 (bottom) to `max` (top; the largest value when not given).
 */
export function linePoints(values: number[], width: number, height: number, max?: number): string {
  if (!values.length) return "";
  const top = Math.max(max ?? Math.max(...values), Number.EPSILON);
  const step = values.length > 1 ? width / (values.length - 1) : 0;
  return values
    .map((v, i) => {
      const y = height - (Math.min(Math.max(v, 0), top) / top) * height;
      return `${round(i * step)},${round(y)}`;
    })
    .join(" ");
}

const round = (n: number) => Math.round(n * 10) / 10;

/** Bytes in a short human form (KiB, MiB, GiB). */
export function bytes(n: number): string {
  if (!Number.isFinite(n) || n < 0) return "—";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i === 0 ? n : n.toFixed(n < 10 ? 1 : 0)} ${units[i]}`;
}

/** A metrics answer as a sample (int64s arrive as strings in JSON). */
export function sampleOf(m: {
  sampleTime?: string;
  cpuUsedPct?: number;
  memUsedBytes?: string;
  memTotalBytes?: string;
  diskUsedBytes?: string;
  diskTotalBytes?: string;
}): Sample | null {
  const t = m.sampleTime ? Date.parse(m.sampleTime) : NaN;
  if (!Number.isFinite(t)) return null;
  return {
    t,
    cpuPct: m.cpuUsedPct ?? 0,
    memUsed: Number(m.memUsedBytes ?? 0),
    memTotal: Number(m.memTotalBytes ?? 0),
    diskUsed: Number(m.diskUsedBytes ?? 0),
    diskTotal: Number(m.diskTotalBytes ?? 0),
  };
}
