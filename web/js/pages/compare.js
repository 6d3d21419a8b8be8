// Compare page: two or more jobs, per case the ratio of medians to the first job with its 95%
// interval; significant regressions and improvements marked by class and by words.
import { apiGet, describeApiError } from '../api.js';
import { VERDICT_TEXT, classifyRatio, compareWarnings, ratioRefusal, variationSummary, verdictCounts, verdictRefusal } from '../compare_model.js';
import { h, measuredBadge, messageBox, replaceChildren, scrollTable } from '../dom.js';
import { formatNumber, formatRatio, paramsText } from '../format.js';
import { appendLayerCompare } from '../layer_view.js';
import { initLayout, setTitle } from '../layout.js';
import { onReconnect, startLive } from '../live.js';
import { parseJobIds } from '../query.js';
import { loadSelection } from '../selection.js';

const layout = initLayout('compare');
setTitle('compare');
startLive(layout.setLive);

const idsInput = h('input', { type: 'text', id: 'compare-ids', name: 'jobs', inputmode: 'numeric',
  autocomplete: 'off', placeholder: 'e.g. 12, 15, 19' });
const form = h('form', { class: 'compare-form', id: 'compare-form' },
    h('label', { for: 'compare-ids' }, 'jobs (the first is the baseline)'), idsInput,
    h('button', { type: 'submit' }, 'Compare'));
const messages = h('div', { id: 'compare-message' });
const results = h('div', { id: 'compare-results' });
replaceChildren(layout.main, h('h1', {}, 'Compare jobs'), form, messages, results);

form.addEventListener('submit', (e) => {
  e.preventDefault();
  let ids;
  try {
    ids = parseJobIds(idsInput.value);
  } catch (err) {
    replaceChildren(messages, messageBox('error', err.message));
    return;
  }
  history.pushState(null, '', `${location.pathname}?jobs=${ids.join(',')}`);
  load();
});
window.addEventListener('popstate', () => load());
window.addEventListener('mculab:token', () => load());
onReconnect(() => load());

function jobsTable(jobs) {
  const table = h('table', { class: 'data', id: 'compare-jobs' },
      h('thead', {}, h('tr', {}, ['', 'job', 'label', 'op', 'board', 'kernels', 'unit', 'measured']
          .map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, jobs.map((j, i) => h('tr', {},
          h('td', {}, i === 0 ? h('strong', {}, 'baseline') : `vs #${jobs[0].id}`),
          h('td', {}, h('a', { href: `job.html?id=${j.id}` }, `#${j.id}`)),
          h('td', { class: 'col-label' }, j.label || ''),
          h('td', {}, j.op || '-'),
          h('td', {}, j.board || '-'),
          h('td', { class: 'col-kernels' }, j.kernel_set || '-'),
          h('td', {}, j.unit || '-'),
          h('td', {}, measuredBadge(j))))));
  return scrollTable(table, 'compared jobs');
}

function summaryList(res) {
  const list = h('ul', { class: 'verdicts', id: 'compare-summary' });
  for (let k = 1; k < res.jobs.length; k++) {
    const c = verdictCounts(res.cases, k);
    list.append(h('li', {}, `#${res.jobs[k].id} vs #${res.jobs[0].id}: `,
        h('span', { class: 'verdict-regression' }, `${c.regression} slower`), ', ',
        h('span', { class: 'verdict-improvement' }, `${c.improvement} faster`), ', ',
        `${c.unchanged} without significant change`,
        c.unclear ? `, ${c.unclear} unclear` : '',
        c.unstable ? h('span', { class: 'verdict-unstable' }, `, ${c.unstable} unstable`) : '',
        c.missing ? `, ${c.missing} missing` : ''));
  }
  return list;
}

function casesTable(res, refused, noVerdict) {
  const base = res.jobs[0];
  const others = res.jobs.slice(1);
  // Ratios first (what the page is for, and what a phone shows without scrolling), medians after.
  const head = h('tr', {},
      h('th', { scope: 'col' }, 'case'),
      others.map((j) => h('th', { scope: 'col' }, `#${j.id} / #${base.id}`, h('span', { class: 'unit' }, ' [95% interval]'))),
      res.jobs.map((j) => h('th', { scope: 'col', class: 'num' }, `#${j.id} median`, h('span', { class: 'unit' }, ` (${j.unit || '?'})`))));
  const body = h('tbody', {});
  for (const c of res.cases) {
    const medians = c.medians || [];
    const ratios = c.ratios || [];
    const tr = h('tr', { dataset: { caseId: c.id } },
        h('th', { scope: 'row', class: 'case-cell' }, h('span', { class: 'case-id' }, String(c.id)),
            h('span', { class: 'params' }, paramsText(res.param_names, c.params))));
    for (let k = 1; k < res.jobs.length; k++) {
      if (refused) {
        tr.append(h('td', { class: ['ratio', 'ratio-refused'], dataset: { verdict: 'refused' } }, 'no ratio'));
        continue;
      }
      if (c.refused) {
        tr.append(h('td', { class: ['ratio', 'ratio-refused'], dataset: { verdict: 'refused' }, title: c.refused },
            'no ratio: ', h('span', { class: 'case-refused' }, c.refused)));
        continue;
      }
      const r = ratios[k];
      const verdict = noVerdict && classifyRatio(r) !== 'missing' ? 'instructions' : classifyRatio(r);
      tr.append(h('td', { class: ['ratio', `verdict-${verdict}`], dataset: { verdict } },
          h('span', { class: 'ratio-value' }, formatRatio(r)), ' ',
          h('span', { class: 'verdict-text' }, VERDICT_TEXT[verdict])));
    }
    const variations = c.variation || [];
    for (let k = 0; k < res.jobs.length; k++) {
      const v = variationSummary(variations[k]);
      tr.append(h('td', { class: 'num' },
          formatNumber(medians[k]),
          v ? h('span', { class: ['variation', v.unstable ? 'variation-unstable' : ''], dataset: { stability: variations[k].stability } },
              ` ${v.text}`, v.notes.length ? ` · ${v.notes.join('; ')}` : '') : ''));
    }
    body.append(tr);
  }
  const table = h('table', { class: 'data compare', id: 'compare-table' }, h('thead', {}, head), body);
  return [
    refused ? h('p', { class: 'table-note' }, 'Medians side by side; no ratio (see above).') : h('p', { class: 'table-note' }, 'Ratio = median of the job / median of the baseline (above 1 is slower), ' +
        'with a bootstrap 95% interval; significant when the interval excludes 1. Beside each median its cv ' +
        '(stddev / mean; "exact" for emulated counts): a case whose cv is above the limit is unstable and gets no verdict; ' +
        'outliers are counted and kept.'),
    scrollTable(table, 'per-case ratios'),
  ];
}

async function load() {
  const raw = new URLSearchParams(location.search).get('jobs');
  let ids;
  if (raw === null) {
    const picked = loadSelection();
    idsInput.value = picked.join(', ');
    replaceChildren(results);
    replaceChildren(messages, messageBox('info', 'Enter two or more job ids above, or tick jobs on the ',
        h('a', { href: 'index.html' }, 'history'), ' page and press "Compare".'));
    return;
  }
  try {
    ids = parseJobIds(raw);
  } catch (err) {
    idsInput.value = raw;
    replaceChildren(results);
    replaceChildren(messages, messageBox('error', err.message));
    return;
  }
  idsInput.value = ids.join(', ');
  setTitle(`compare ${ids.map((i) => `#${i}`).join(' ')}`);
  document.body.classList.add('loading');
  let res;
  try {
    res = await apiGet('compare', { jobs: ids.join(',') });
  } catch (err) {
    replaceChildren(results);
    replaceChildren(messages, messageBox('error', describeApiError(err)));
    return;
  } finally {
    document.body.classList.remove('loading');
  }
  replaceChildren(messages, compareWarnings(res.jobs).map((w) =>
    messageBox('warning', h('strong', {}, 'Careful: '), w.text)));
  for (const box of messages.querySelectorAll('.message-warning')) box.classList.add('compare-warning');
  const refused = ratioRefusal(res);
  const noVerdict = refused ? '' : verdictRefusal(res);
  replaceChildren(results,
      jobsTable(res.jobs),
      refused
        ? h('div', { id: 'compare-refused' }, messageBox('error', h('strong', {}, 'No ratio: '), refused, '.'))
        : noVerdict
          ? h('div', { id: 'compare-no-verdict' }, messageBox('warning', h('strong', {}, 'No faster or slower: '), noVerdict, '.'))
          : summaryList(res),
      res.cases.length ? casesTable(res, refused, noVerdict) : messageBox('info', 'These jobs have no cases in common.'));
  if (ids.length === 2) appendLayerCompare(results, res.jobs[0], res.jobs[1]);
}

load();
