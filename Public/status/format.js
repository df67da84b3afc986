// How the status page writes numbers, durations and times.

const clockFormat = new Intl.DateTimeFormat(undefined, {
  hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false,
});

export const number = new Intl.NumberFormat("en-US");

export function seconds(value, digits = 2) {
  if (value === undefined || value === null || !isFinite(value)) return "—";
  if (value < 60) return `${value.toFixed(digits)} s`;
  return duration(value);
}

/** 75 → "1 min 15 s", 7300 → "2 h 1 min". */
export function duration(value) {
  const total = Math.max(0, Math.round(value));
  if (total < 60) return `${total} s`;
  const h = Math.floor(total / 3600), m = Math.floor((total % 3600) / 60), sec = total % 60;
  if (h > 0) return `${h} h ${m} min`;
  return `${m} min ${sec} s`;
}

export function bytes(value) {
  if (value < 1024) return `${value} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let scaled = value / 1024, unit = 0;
  while (scaled >= 1024 && unit < units.length - 1) { scaled /= 1024; unit += 1; }
  return `${scaled.toFixed(scaled < 10 ? 2 : 1)} ${units[unit]}`;
}

export function bitrate(bitsPerSecond) {
  if (bitsPerSecond < 1000) return `${bitsPerSecond.toFixed(0)} bit/s`;
  if (bitsPerSecond < 1e6) return `${(bitsPerSecond / 1e3).toFixed(1)} kbit/s`;
  return `${(bitsPerSecond / 1e6).toFixed(2)} Mbit/s`;
}

/** Events per second: two decimals below 10, one below 100, none above. */
export function perSecond(value) {
  if (value === undefined || value === null || !isFinite(value)) return "—";
  return `${value.toFixed(value < 10 ? 2 : value < 100 ? 1 : 0)}/s`;
}

/** A wall-clock time of day from µs since the epoch. */
export function clock(microseconds) {
  return clockFormat.format(new Date(microseconds / 1000));
}
