// Text formatting shared by every page. Pure: no DOM, no network, no clock (callers pass "now").
// Numbers are printed exactly like the CLI (cli/format.cc FormatNumber, which uses C printf), so
// the page, `mculab show` and the CSV export agree digit for digit, including printf's
// round-half-to-even on exact ties (100.25 -> "100.2"), which Number.toFixed does not do.

// The exact decimal value of a finite double, as digit strings: |v| = intDigits.fracDigits.
function exactDecimal(v) {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, v);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const neg = hi >>> 31 === 1;
  const biased = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let exp2;
  if (biased === 0) {
    exp2 = -1074;
  } else {
    mant |= 1n << 52n;
    exp2 = biased - 1075;
  }
  if (exp2 >= 0) return { neg, intDigits: (mant << BigInt(exp2)).toString(), fracDigits: '' };
  const k = -exp2;  // mant / 2^k == mant * 5^k / 10^k
  const scaled = (mant * 5n ** BigInt(k)).toString().padStart(k + 1, '0');
  return {
    neg,
    intDigits: scaled.slice(0, scaled.length - k).replace(/^0+(?=\d)/, ''),
    fracDigits: scaled.slice(scaled.length - k).replace(/0+$/, ''),
  };
}

// Rounds the integer n (BigInt) up by one when the dropped digits call for it, half to even.
function roundHalfEven(n, dropped) {
  if (!dropped) return n;
  const first = dropped.charCodeAt(0) - 48;
  const tail = /[1-9]/.test(dropped.slice(1));
  if (first > 5 || (first === 5 && (tail || (n & 1n) === 1n))) return n + 1n;
  return n;
}

// printf("%.*f", decimals, v).
export function printfFixed(v, decimals) {
  if (!Number.isFinite(v)) return String(v);
  const { neg, intDigits, fracDigits } = exactDecimal(v);
  const kept = BigInt(intDigits + fracDigits.slice(0, decimals).padEnd(decimals, '0'));
  const n = roundHalfEven(kept, fracDigits.slice(decimals));
  let s = n.toString().padStart(decimals + 1, '0');
  if (decimals > 0) s = `${s.slice(0, s.length - decimals)}.${s.slice(s.length - decimals)}`;
  return (neg ? '-' : '') + s;
}

// printf("%.*g", precision, v): shortest of %e / %f by C's rule, trailing zeros removed.
export function printfGeneral(v, precision) {
  if (!Number.isFinite(v)) return String(v);
  const p = precision === 0 ? 1 : precision;
  const { neg, intDigits, fracDigits } = exactDecimal(v);
  const all = intDigits + fracDigits;
  const firstNonZero = all.search(/[1-9]/);
  if (firstNonZero < 0) return neg ? '-0' : '0';
  let x = intDigits.length - firstNonZero - 1;  // decimal exponent before rounding
  const digits = all.slice(firstNonZero);
  let n = roundHalfEven(BigInt(digits.slice(0, p).padEnd(p, '0')), digits.slice(p));
  let sig = n.toString();
  if (sig.length > p) {  // 9.995 -> 10.0: one more digit in front
    x += 1;
    sig = sig.slice(0, p);
  }
  let s;
  if (x < -4 || x >= p) {
    let mantissa = sig.length > 1 ? `${sig[0]}.${sig.slice(1)}` : sig;
    if (mantissa.includes('.')) mantissa = mantissa.replace(/0+$/, '').replace(/\.$/, '');
    const e = Math.abs(x).toString().padStart(2, '0');
    s = `${mantissa}e${x < 0 ? '-' : '+'}${e}`;
    return (neg ? '-' : '') + s;
  }
  s = printfFixed(Math.abs(v), p - 1 - x);
  if (s.includes('.')) s = s.replace(/0+$/, '').replace(/\.$/, '');
  return (neg ? '-' : '') + s;
}

// The CLI's FormatNumber: integers without a fraction, others with up to 3 decimals
// ("1234", "1234.5", "0.012"); "-" for a missing or non-finite value.
export function formatNumber(v) {
  if (typeof v !== 'number' || !Number.isFinite(v)) return '-';
  if (v === Math.floor(v) && Math.abs(v) < 1e15) return printfFixed(v, 0);
  const a = Math.abs(v);
  let s;
  if (a >= 100) s = printfFixed(v, 1);
  else if (a >= 1) s = printfFixed(v, 3);
  else s = printfGeneral(v, 3);
  if (s.includes('.') && !s.includes('e')) s = s.replace(/0+$/, '').replace(/\.$/, '');
  return s;
}

// 100000 -> "100,000" (integers only; the page's counts, not measurements).
export function formatCount(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '-';
  const s = Math.trunc(Math.abs(n)).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return n < 0 ? `-${s}` : s;
}

// The coefficient of variation as the CLI shows it: cv 0.0123 -> "1.23%".
export function formatPercent(fraction) {
  if (typeof fraction !== 'number' || !Number.isFinite(fraction)) return '-';
  return `${formatNumber(fraction * 100)}%`;
}

const pad2 = (n) => String(n).padStart(2, '0');

// "YYYY-MM-DD HH:MM:SS UTC" whatever the browser's zone, as the CLI prints it
// (common/time_text.h); "-" for 0 (the API's "not yet").
export function formatTime(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0) return '-';
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())} ` +
      `${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())} UTC`;
}

// A span of time: "850 ms", "12.3 s", "4 min 05 s", "2 h 03 min", "3 d 4 h".
export function formatDuration(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) return '-';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${formatNumber(Math.round(ms / 100) / 10)} s`;
  const s = Math.floor(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${pad2(s % 60)} s`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${pad2(Math.floor((s % 3600) / 60))} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

// "in 12 min" / "5 min ago" relative to nowMs; "-" for 0.
export function formatRelative(ms, nowMs) {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0) return '-';
  const delta = ms - nowMs;
  const text = formatDuration(Math.abs(delta)).replace(/ \d+ (s|min|h)$/, '');
  return delta >= 0 ? `in ${text}` : `${text} ago`;
}

// How long a job ran (or has been running): finished - started, or now - started.
export function jobDuration(job, nowMs) {
  if (!job || !(job.started_ms > 0)) return '-';
  const end = job.finished_ms > 0 ? job.finished_ms : nowMs;
  return formatDuration(end - job.started_ms);
}

// "N=1 C=8 H=16" from the op's parameter names and one case's values.
export function paramsText(names, params) {
  if (!Array.isArray(params)) return '';
  return params.map((v, i) => (names && i < names.length ? `${names[i]}=${v}` : String(v)))
      .join(' ');
}

// "1.104 [1.08, 1.12]" for a compare ratio with its 95% interval.
export function formatRatio(r) {
  if (!r || typeof r.ratio !== 'number') return '-';
  return `${r.ratio.toFixed(3)} [${r.lo.toFixed(3)}, ${r.hi.toFixed(3)}]`;
}

// "60 / 120 (50%)" for a job's progress.
export function formatProgress(done, total) {
  if (!(total > 0)) return '-';
  const pct = Math.floor((Math.min(done, total) * 100) / total);
  return `${formatCount(done)} / ${formatCount(total)} (${pct}%)`;
}

// How a result was measured: 'emulated' (QEMU), 'host' (the runner as a native Linux process) or
// 'silicon'; from the API's `measured` field, else its older `emulated` flag. Accepts an API object
// (job, board, provenance, compared job), a kind string or a boolean.
export function measuredKind(x) {
  if (typeof x === 'string') return ['emulated', 'host', 'silicon'].includes(x) ? x : 'silicon';
  if (typeof x === 'boolean') return x ? 'emulated' : 'silicon';
  if (x && typeof x.measured === 'string') return measuredKind(x.measured);
  return x && x.emulated === true ? 'emulated' : 'silicon';
}

// The wording used everywhere: three different things, never mixed in a verdict.
export function measuredLabel(x) {
  return { emulated: 'EMULATED', host: 'HOST (native)', silicon: 'SILICON' }[measuredKind(x)];
}
