// The recite workbench's pages: no framework, no build step, nothing loaded from elsewhere.
// Every value from the server is put into the page as text (textContent), never as HTML.
'use strict';

const VERDICTS = ['REPRODUCED', 'DISCREPANT', 'BASE_MISMATCH', 'UNVERIFIABLE', 'INVALID'];

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v; else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

// A problem+json answer in words, with where in the request it was.
async function failure(r) {
  try {
    const p = await r.json();
    return `${p.title || r.status}: ${p.detail || ''}${p.location ? ` (${p.location})` : ''}`;
  } catch (_) {
    return `HTTP ${r.status}`;
  }
}

// `n` things, in the plural unless one: plural(1, 'claim') is "1 claim".
function plural(n, one, many) {
  return `${n} ${n === 1 ? one : (many || `${one}s`)}`;
}

// A stored RFC 3339 time as people read it, the stamp itself in a tooltip and in datetime.
function when(iso) {
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return el('span', {}, iso || '');
  const text = t.toLocaleString('en-GB', {
    day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', timeZone: 'UTC',
  });
  return el('time', { datetime: iso, title: iso }, `${text} UTC`);
}

// Verdict counts of claims, each badge saying what it counts.
function badges(verdicts) {
  const span = el('span', { class: 'verdict-list' });
  for (const v of VERDICTS) {
    const n = (verdicts || {})[v] || 0;
    if (n > 0) span.append(el('span', { class: `badge ${v}`, title: `${plural(n, 'claim')} ${v}` }, `${v} ${n}`));
  }
  if (!span.childNodes.length) span.append(el('span', { class: 'muted' }, 'no claims'));
  return span;
}

function claimCount(verdicts) {
  return Object.values(verdicts || {}).reduce((a, b) => a + (b || 0), 0);
}

// --- the index page: open a case, list the cases ---

// Settles one input as a case, telling the claims as they settle (`progress=1`: JSON lines,
// the case last).
async function settle(body, name) {
  const status = document.getElementById('status');
  status.textContent = `Settling ${name}…`;
  const r = await fetch(`/v1/cases?progress=1&name=${encodeURIComponent(name)}`, { method: 'POST', body });
  if (!r.ok) {
    status.replaceChildren(el('p', { class: 'error', role: 'alert' }, `${name}: ${await failure(r)}`));
    return null;
  }
  const counts = {};
  let settled = 0;
  let made = null;
  let pending = '';
  const show = (line) => {
    const x = JSON.parse(line);
    if (x.verdict) {
      counts[x.verdict] = (counts[x.verdict] || 0) + 1;
      settled = x.settled;
      status.replaceChildren(`${name}: ${plural(settled, 'claim')} settled `, badges(counts));
    } else if (x.saving) {
      status.replaceChildren(`${name}: ${plural(x.settled, 'claim')} settled, saving the case… `, badges(counts));
    } else if (x.case) {
      made = x.case;
    } else if (x.error) {
      // Refused (not a transcript) or failed: the reader's words, where; nothing was saved.
      const where = x.error.location ? ` (${x.error.location})` : '';
      status.replaceChildren(el('p', { class: 'error', role: 'alert' }, `${name}: ${x.error.title}: ${x.error.detail}${where}`));
    }
  };
  const reader = r.body.getReader();
  const text = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    pending += text.decode(value, { stream: true });
    const lines = pending.split('\n');
    pending = lines.pop();
    for (const line of lines) if (line.trim()) show(line);
  }
  if (pending.trim()) show(pending);
  return made;
}

// Settles one case and opens it.
async function open(body, name) {
  const c = await settle(body, name);
  if (c) window.location.assign(c.url);
}

async function listCases() {
  const form = document.getElementById('search');
  const q = new URLSearchParams();
  for (const [k, v] of new FormData(form)) if (v) q.set(k, v);
  const r = await fetch(`/v1/cases?${q}`);
  const body = document.querySelector('#cases tbody');
  if (!r.ok) {
    body.replaceChildren(el('tr', {}, el('td', { colspan: '5', class: 'error' }, await failure(r))));
    return;
  }
  const list = await r.json();
  const claims = claimCount(list.verdicts);
  document.getElementById('totals').replaceChildren(
    `${plural(list.count, 'case')}, ${plural(claims, 'claim')} in them: `, badges(list.verdicts));
  body.replaceChildren(...list.cases.map((c) => el('tr', { 'data-case': c.id },
    el('td', {}, el('a', { href: `/cases/${c.id}` }, el('code', {}, c.id))),
    el('td', {}, when(c.created)),
    el('td', {}, (c.inputs || []).join(', ')),
    el('td', {}, [...(c.studies || []), ...(c.periods || [])].join(' · ')),
    el('td', {}, badges(c.verdicts)))));
}

function indexPage() {
  const drop = document.getElementById('drop');
  const files = document.getElementById('files');
  // Several files dropped together are one case (a multipart body, one file a part).
  const read = (list) => {
    const all = [...list];
    if (all.length === 0) return undefined;
    if (all.length === 1) return open(all[0], all[0].name);
    const form = new FormData();
    for (const f of all) form.append('input', f, f.name);
    return open(form, `${all.length} files`);
  };
  files.addEventListener('change', () => read(files.files));
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    read(e.dataTransfer.files);
  });
  document.getElementById('paste-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const text = document.getElementById('paste').value;
    if (text.trim()) open(text, 'pasted');
  });
  document.getElementById('search').addEventListener('submit', (e) => { e.preventDefault(); listCases(); });
  listCases();
}

// --- probing an agent (POST /v1/probe): its own functions, beside the index page's ---

// Probes the agent at `url` as `recite probe` does; the server saves its replies and report as
// a case, which is opened.
async function probeAgent(url) {
  const status = document.getElementById('status');
  status.textContent = `Probing ${url}…`;
  const r = await fetch('/v1/probe', {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url }),
  });
  if (!r.ok) {
    status.replaceChildren(el('span', { class: 'error' }, `${url}: ${await failure(r)}`));
    return;
  }
  const c = await r.json();
  status.replaceChildren(`${url}: ${c.probe.answered} of ${c.probe.calls} call(s) answered `, badges(c.summary.verdicts));
  window.location.assign(c.url);
}

function probeField() {
  const form = document.getElementById('probe-form');
  if (!form) return;
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const url = document.getElementById('probe-url').value.trim();
    if (url) probeAgent(url);
  });
}

// --- the case page: its facts, its report, re-running it ---

function fact(dl, name, ...value) {
  dl.append(el('dt', {}, name), el('dd', {}, ...value));
}

async function casePage(id) {
  const r = await fetch(`/v1/cases/${id}`);
  const facts = document.getElementById('facts');
  if (!r.ok) {
    facts.replaceChildren(el('dd', { class: 'error' }, await failure(r)));
    return;
  }
  const c = await r.json();
  document.getElementById('permalink').setAttribute('href', c.permalink);
  document.getElementById('verdicts').replaceChildren(
    `${plural(claimCount(c.verdicts), 'claim')}: `, badges(c.verdicts));
  fact(facts, 'Saved', when(c.created), ` by recite ${c.recite}`);
  for (const i of c.inputs) {
    fact(facts, `Input ${i.n + 1}`, i.name, ` (${plural(i.size, 'byte')}, SHA-256 `, el('code', {}, i.sha256), ')');
  }
  if (c.data_layer) fact(facts, 'Data layer', c.data_layer.path, ` (${c.data_layer.source})`);
  fact(facts, 'Its fingerprint', el('code', {}, c.fingerprint));
  dataVersionFacts(facts, c.data_versions || []);
  fact(facts, 'Re-runs', String(c.reruns.length));
  ruling(c.report);
  note(id, c.note || '');
  deletion(id, c);
  const frame = document.getElementById('report');
  // The frame as tall as the report in it, not a fixed height with empty space under it.
  const fit = () => {
    try {
      const body = frame.contentDocument.body;
      if (body) frame.style.height = `${Math.ceil(body.getBoundingClientRect().height) + 4}px`;
    } catch (_) { /* not same-origin: keep the default height */ }
  };
  frame.addEventListener('load', fit);
  fit();
  document.getElementById('rerun').addEventListener('click', () => rerun(id, 'latest'));
  document.getElementById('rerun-pinned').addEventListener('click', () => rerun(id, 'pinned'));
  whatIf(id, c.report);
}

// --- the ruling: every claim's numbers beside their re-run, in words, first on the page ---

// Every claim of a JSON report, in order over its inputs: claim K is "Claim K+1" everywhere.
function reportClaims(report) {
  return ((report && report.inputs) || []).flatMap((i) => i.claims || []);
}

// A proportion as a percent with one decimal; another value with up to four significant places.
function value(unit, v) {
  if (typeof v !== 'number') return 'not computed';
  return unit === 'proportion' ? `${(v * 100).toFixed(1)}%` : String(Number(v.toPrecision(5)));
}

// A claimed number as written, and as a percent when it is a share written as a fraction.
function claimedText(unit, x) {
  const c = x.claimed;
  if (unit === 'proportion' && !c.percent) return `${c.text} (${(c.value * 100).toFixed(Math.max(0, c.decimals - 2))}%)`;
  return c.text;
}

const GAPS = {
  within_rounding: 'within rounding',
  within_sampling_error: 'within sampling error',
  outside_sampling_error: 'outside sampling error',
};

// One claim's ruling: for each number it claims, what the agent said and what the data says,
// the interval, both base n, the gap and the likely cause, all in view (no click).
function rulingClaim(rc, k) {
  const div = el('div', { class: 'ruling-claim', id: `ruling-claim-${k}`, 'data-claim': String(k), 'data-verdict': rc.verdict });
  const r = rc.rerun || {};
  const where = [r.study, r.period].filter(Boolean).join(', ');
  div.append(el('h3', {},
    el('span', { class: `badge ${rc.verdict}` }, rc.verdict), ` Claim ${k + 1}`,
    where ? el('span', { class: 'muted' }, ` · ${where}`) : '',
    ' ', el('a', { href: `#whatif-claim-${k}`, class: 'to-whatif' }, 'what if…')));
  const base = rc.base || {};
  // Both base n, always, once for the claim: the recomputed and the claimed.
  if (base.n !== undefined) {
    const claimedBase = base.claimed_n === undefined || base.claimed_n === null
      ? 'none claimed' : base.matched === false ? `not the ${base.claimed_n} claimed` : `as claimed (${base.claimed_n})`;
    div.append(el('p', { class: `ruling-base${base.matched === false ? ' disputed' : ''}` },
      el('strong', {}, 'Base: '), `${base.name || 'the base'}, base n ${base.n}, ${claimedBase}`));
  }
  const claimed = (rc.measures || []).filter((m) => (m.claims || []).length);
  const list = el('ul', { class: 'ruling-numbers' });
  for (const m of claimed) {
    const e = m.estimate || {};
    for (const x of m.claims) {
      const disputed = !x.matched || base.matched === false;
      const interval = typeof e.ci_low === 'number' ? ` [${value(m.unit, e.ci_low)}, ${value(m.unit, e.ci_high)}]` : '';
      const gap = x.matched ? '' : `; off by ${x.difference > 0 ? '+' : ''}${Number(x.difference.toFixed(2))}${m.unit === 'proportion' ? ' pp' : ''}, ${GAPS[x.gap] || x.gap}`;
      const li = el('li', { class: disputed ? 'disputed' : 'reproduced', 'data-measure': m.name },
        el('span', { class: 'measure-name' }, m.name), ': the agent said ',
        el('strong', { class: 'claimed' }, claimedText(m.unit, x)), '; the data says ',
        el('strong', { class: 'recomputed' }, value(m.unit, e.value)),
        el('span', { class: 'interval' }, interval),
        gap);
      list.append(li);
    }
  }
  if (claimed.length) div.append(list);
  if (rc.verdict !== 'REPRODUCED') {
    const why = el('p', { class: 'cause' });
    const first = (rc.explanations || [])[0];
    if (first) why.append(el('strong', {}, 'Most likely: '), first.message);
    else if ((rc.reasons || []).length) why.append(el('strong', {}, 'Why: '), rc.reasons.join('; '));
    div.append(why);
    if (first && first.alternative) {
      div.append(el('p', { class: 'likely-result muted', 'aria-live': 'polite' }, 'Re-running the likely computation…'));
    }
  }
  return div;
}

function ruling(report) {
  const box = document.getElementById('ruling-claims');
  const claims = reportClaims(report);
  if (!claims.length) {
    box.replaceChildren(el('p', { class: 'muted' }, 'The case has no claim.'));
    return;
  }
  // The disputed ones first; each keeps its number.
  const order = claims.map((rc, k) => [rc, k]);
  order.sort((a, b) => (a[0].verdict === 'REPRODUCED') - (b[0].verdict === 'REPRODUCED') || a[1] - b[1]);
  box.replaceChildren(...order.map(([rc, k]) => rulingClaim(rc, k)));
}

// The likely alternative's what-if, beside the claim it explains.
function showLikely(claim, a, x) {
  const p = document.querySelector(`#ruling-claim-${claim} .likely-result`);
  if (!p) return;
  const rc = x.report_claim || {};
  const values = (rc.measures || []).filter((m) => (m.claims || []).length)
    .map((m) => `${m.name} ${value(m.unit, m.estimate && m.estimate.value)}`).join(', ');
  const base = rc.base && rc.base.n !== undefined ? `, base ${rc.base.n}` : '';
  p.className = 'likely-result';
  p.replaceChildren('Re-run ', a.label, ': ', el('span', { class: `badge ${x.verdict}` }, x.verdict),
    ` ${values}${base}`);
}

// --- the analyst's note: their ruling in words, kept with the case and in its export ---

function note(id, text) {
  const box = document.getElementById('note');
  const shown = document.getElementById('note-text');
  const status = document.getElementById('note-status');
  box.value = text;
  shown.textContent = text || 'No note yet.';
  shown.classList.toggle('muted', !text);
  document.getElementById('note-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    status.textContent = 'Saving…';
    const r = await fetch(`/v1/cases/${id}/note`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ note: box.value }),
    });
    if (!r.ok) {
      status.replaceChildren(el('span', { class: 'error' }, await failure(r)));
      return;
    }
    const x = await r.json();
    shown.textContent = x.note || 'No note yet.';
    shown.classList.toggle('muted', !x.note);
    status.textContent = 'Saved; the export carries it.';
  });
}

// --- deleting a case, once confirmed ---

function deletion(id, c) {
  const ask = document.getElementById('delete');
  const confirmBox = document.getElementById('delete-confirm');
  document.getElementById('delete-what').textContent =
    `Delete case ${id}, its ${plural(c.inputs.length, 'input')} and ${plural(c.reruns.length, 're-run')}? This cannot be undone.`;
  ask.addEventListener('click', () => {
    confirmBox.hidden = false;
    document.getElementById('delete-keep').focus();
  });
  document.getElementById('delete-keep').addEventListener('click', () => {
    confirmBox.hidden = true;
    ask.focus();
  });
  document.getElementById('delete-yes').addEventListener('click', async () => {
    const r = await fetch(`/v1/cases/${id}`, { method: 'DELETE' });
    if (!r.ok) {
      document.getElementById('delete-what').replaceChildren(el('span', { class: 'error' }, await failure(r)));
      return;
    }
    // The permalink now says the case is gone.
    window.location.assign(`/cases/${id}`);
  });
}

// --- what if: each claim's alternatives, re-run on click ---

// A recomputed value as the reports show it: proportions as percents.
function shown(m) {
  const v = m.estimate && m.estimate.value;
  if (typeof v !== 'number') return 'not computed';
  return m.unit === 'proportion' ? `${(v * 100).toFixed(1)}%` : v.toPrecision(5).replace(/\.?0+$/, '');
}

async function whatIf(id, report) {
  const box = document.getElementById('whatif-claims');
  const r = await fetch(`/v1/cases/${id}/alternatives`);
  if (!r.ok) {
    box.replaceChildren(el('p', { class: 'error' }, await failure(r)));
    return;
  }
  const list = await r.json();
  if (!list.claims.length) {
    box.replaceChildren(el('p', { class: 'muted' }, 'The case has no claim to re-run.'));
    return;
  }
  const claims = reportClaims(report);
  box.replaceChildren(...list.claims.map((c) => whatIfClaim(id, c, claims[c.claim] || {})));
  if (list.truncated) box.append(el('p', { class: 'muted' }, 'Only the first claims are listed.'));
}

// A what-if block's heading in words: the claim's number (linked to its ruling), the measures
// claimed with their values, the column's label (its code in small type), study and period.
function whatIfTitle(c, rc, n) {
  const claimedValues = (rc.measures || []).filter((m) => (m.claims || []).length)
    .map((m) => `${m.name} ${m.claims.map((x) => claimedText(m.unit, x)).join(', ')}`);
  const r = rc.rerun || {};
  const h = el('h3', {}, el('a', { href: `#ruling-claim-${c.claim}` }, `Claim ${n}`));
  if (claimedValues.length) h.append(`: claimed ${claimedValues.join(', ')}`);
  const column = r.column_label || c.column;
  if (column) h.append(` · ${column}`);
  if (c.column && column !== c.column) h.append(' ', el('code', { class: 'code' }, c.column));
  const at = [c.study || r.study, c.period || r.period].filter(Boolean).join(' · ');
  if (at) h.append(` · ${at}`);
  return h;
}

function whatIfClaim(id, c, rc) {
  const n = c.claim + 1;
  const div = el('div', { class: 'whatif-claim', id: `whatif-claim-${c.claim}`, 'data-claim': String(c.claim) });
  if (c.reason) {
    div.append(whatIfTitle(c, rc, n), el('p', { class: 'muted' }, `No alternative to re-run: ${c.reason}`));
    return div;
  }
  div.dataset.study = c.study;
  div.dataset.period = c.period;
  const tryAll = el('button', { type: 'button', class: 'try-all secondary' }, 'Re-run every alternative');
  const runs = [];
  const rows = c.alternatives.map((a) => {
    const button = el('button', { type: 'button', class: 'try', 'aria-label': `Re-run claim ${n} ${a.label}` }, 'Re-run');
    const head = el('th', { scope: 'row' });
    if (a.likely) head.append(el('span', { class: 'likely-tag' }, 'Most likely computed instead'));
    // In the catalog's words; the code it names (a column, a weight) in small type.
    head.append(a.label);
    if (a.code) head.append(' ', el('code', { class: 'code' }, a.code));
    const tr = el('tr', { class: 'alternative', 'data-kind': a.kind, 'data-name': a.name, 'data-id': a.id },
      head, el('td', { class: 'verdict' }), el('td', { class: 'recomputed' }), el('td', {}, button));
    if (a.likely) tr.dataset.likely = 'true';
    const run = () => tryAlternative(id, c.claim, a, tr);
    button.addEventListener('click', run);
    runs.push([tr, run]);
    return tr;
  });
  // One at a time: each is a turn of the server's --concurrency.
  tryAll.addEventListener('click', async () => {
    tryAll.disabled = true;
    for (const [tr, run] of runs) if (!tr.dataset.verdict) await run();
    tryAll.disabled = false;
  });
  div.append(whatIfTitle(c, rc, n));
  if (!rows.length) {
    div.append(el('p', { class: 'muted' }, 'The data layer declares no alternative for this claim.'));
    return div;
  }
  const table = (caption, trs) => el('table', {},
    el('caption', { class: 'visually-hidden' }, caption),
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'What if it was computed'),
      el('th', { scope: 'col' }, 'Verdict'), el('th', { scope: 'col' }, 'Recomputed'),
      el('th', { scope: 'col' }, el('span', { class: 'visually-hidden' }, 'Action')))),
    el('tbody', {}, ...trs));
  // The likely one and the other periods in view; the rest folded, a click away.
  const first = rows.filter((tr) => tr.dataset.likely === 'true' || tr.dataset.kind === 'period');
  const rest = rows.filter((tr) => !first.includes(tr));
  div.append(el('p', {}, tryAll), table(`Claim ${n} on its likely alternative and the other periods`, first));
  if (rest.length) {
    div.append(el('details', { class: 'more' },
      el('summary', {}, `Other weights, bases, columns and measures (${rest.length})`),
      table(`Claim ${n} on other weights, bases, columns and measures`, rest)));
  }
  // What the explanation says the agent most likely computed is re-run at once.
  const likely = runs.find(([tr]) => tr.dataset.likely === 'true');
  if (likely) likely[1]();
  return div;
}

async function tryAlternative(id, claim, a, tr) {
  const verdict = tr.querySelector('td.verdict');
  const out = tr.querySelector('td.recomputed');
  verdict.textContent = 'Re-running…';
  out.replaceChildren();
  const r = await fetch(`/v1/cases/${id}/whatif`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ claim, alternative: a.id }),
  });
  if (!r.ok) {
    verdict.replaceChildren(el('span', { class: 'error' }, await failure(r)));
    return;
  }
  const x = await r.json();
  const rc = x.report_claim;
  tr.dataset.verdict = x.verdict;
  verdict.replaceChildren(el('span', { class: `badge ${x.verdict}` }, x.verdict));
  if (x.reasons && x.reasons.length) verdict.title = x.reasons.join('; ');
  const claimed = (rc.measures || []).filter((m) => (m.claims || []).length);
  for (const m of claimed) {
    const value = m.estimate && typeof m.estimate.value === 'number' ? String(m.estimate.value) : '';
    out.append(el('span', { class: 'value', 'data-measure': m.name, 'data-value': value },
      el('span', { class: 'measure-name' }, `${m.name} `), shown(m)));
  }
  if (rc.base && rc.base.n !== undefined) out.append(el('span', { class: 'base-n' }, String(rc.base.n)));
  if (!claimed.length && x.reasons) out.append(x.reasons.join('; '));
  if (a.likely) showLikely(claim, a, x);
}

// What each table was read at when the case was settled (issue 48), one fact a table.
function dataVersionFacts(facts, versions) {
  for (const v of versions) {
    let what;
    if (v.format === 'delta') what = `Delta version ${v.version}, committed ${v.committed} (${v.chosen})`;
    else if (v.format === 'postgres') what = `PostgreSQL, unversioned: server snapshot ${v.snapshot}, taken ${v.committed}`;
    else if (v.format === 'files') what = v.files.map((f) => `${f.name} (SHA-256 ${f.sha256})`).join(', ');
    else what = v.location || v.format;
    fact(facts, `Read ${v.study} / ${v.table}`, what);
  }
}

// A pinned re-run's answer in a sentence: whether the ruling reproduced, on which versions.
// A file a re-run read, in words (its size and digest), as the command line says it.
function fileWords(f) {
  if (!f) return 'not read';
  const of = f.of === 'footer' ? 'Parquet footer' : f.of;
  return `${f.bytes} bytes, ${of} ${String(f.digest).slice(0, 8)}…`;
}

function pinnedLine(x) {
  const on = x.pinned.map((p) => `${p.table} at Delta version ${p.version}`).join(', ') || 'no versioned table';
  return x.reproduced
    ? el('p', {}, `On the versions it read (${on}): the ruling reproduced, bit for bit.`)
    : el('p', { class: 'changed' }, `On the versions it read (${on}): the ruling did not reproduce.`);
}

async function rerun(id, on) {
  const out = document.getElementById('rerun-result');
  out.textContent = 'Re-running…';
  const r = await fetch(`/v1/cases/${id}/rerun?on=${on}`, { method: 'POST' });
  if (!r.ok) {
    out.replaceChildren(el('span', { class: 'error' }, await failure(r)));
    return;
  }
  const x = await r.json();
  const head = x.data_layer_changed
    ? el('p', { class: 'changed' }, 'The data layer changed since the case was saved.')
    : el('p', {}, 'The data layer is the one the case was settled on.');
  const parts = x.on === 'pinned' ? [pinnedLine(x), head] : [head];
  if (x.files_changed.length) {
    parts.push(el('p', {}, 'Files: ', x.files_changed.map((f) => `${f.name} (${f.change})`).join(', ')));
  }
  if (x.moved.length) {
    const rows = x.moved.map((m) => el('tr', {},
      el('td', {}, m.claim === undefined ? '' : el('a', { href: `#ruling-claim-${m.claim}` }, `Claim ${m.claim + 1}`)),
      el('td', {}, m.measure ? `${m.what}: ${m.measure}` : m.file ? `file: ${m.file}` : m.what, m.why ? ` (${m.why})` : ''),
      el('td', {}, m.what === 'file' ? fileWords(m.before) : JSON.stringify(m.before)),
      el('td', {}, m.what === 'file' ? fileWords(m.after) : JSON.stringify(m.after))));
    parts.push(el('table', { class: 'moved' },
      el('caption', {}, 'What moved'),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Claim'), el('th', { scope: 'col' }, 'What'),
        el('th', { scope: 'col' }, 'Saved'), el('th', { scope: 'col' }, 'Now'))),
      el('tbody', {}, ...rows)));
  } else {
    parts.push(el('p', {}, 'Nothing moved: every verdict, base and recomputed value is as saved.'));
  }
  parts.push(el('p', {}, 'Now: ', badges(x.verdicts_after), ' ', el('a', { href: x.report }, 'the re-run\'s report')));
  out.replaceChildren(...parts);
}

document.addEventListener('DOMContentLoaded', () => {
  const page = document.body.dataset.page;
  if (page === 'index') { indexPage(); probeField(); }
  if (page === 'case') casePage(document.body.dataset.case);
});
