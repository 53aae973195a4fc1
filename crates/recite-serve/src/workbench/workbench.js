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

// A problem+json answer in words.
async function failure(r) {
  try {
    const p = await r.json();
    return `${p.title || r.status}: ${p.detail || ''}`;
  } catch (_) {
    return `HTTP ${r.status}`;
  }
}

function badges(verdicts) {
  const span = el('span', { class: 'verdict-list' });
  for (const v of VERDICTS) {
    const n = (verdicts || {})[v] || 0;
    if (n > 0) span.append(el('span', { class: `badge ${v}` }, `${v} ${n}`));
  }
  if (!span.childNodes.length) span.append(el('span', { class: 'muted' }, 'no claims'));
  return span;
}

// --- the index page: open a case, list the cases ---

// Settles one input as a case, telling the claims as they settle (`progress=1`: JSON lines,
// the case last).
async function settle(body, name) {
  const status = document.getElementById('status');
  status.textContent = `Settling ${name}…`;
  const r = await fetch(`/v1/cases?progress=1&name=${encodeURIComponent(name)}`, { method: 'POST', body });
  if (!r.ok) {
    status.replaceChildren(el('span', { class: 'error' }, `${name}: ${await failure(r)}`));
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
      status.replaceChildren(`${name}: ${settled} claim(s) settled `, badges(counts));
    } else if (x.saving) {
      status.replaceChildren(`${name}: ${x.settled} claim(s) settled, saving the case… `, badges(counts));
    } else if (x.case) {
      made = x.case;
    } else if (x.error) {
      status.replaceChildren(el('span', { class: 'error' }, `${name}: ${x.error.title}: ${x.error.detail}`));
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
  document.getElementById('totals').replaceChildren(`${list.count} case(s): `, badges(list.verdicts));
  body.replaceChildren(...list.cases.map((c) => el('tr', { 'data-case': c.id },
    el('td', {}, el('a', { href: `/cases/${c.id}` }, el('code', {}, c.id))),
    el('td', {}, c.created),
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
  document.getElementById('verdicts').replaceChildren(badges(c.verdicts));
  fact(facts, 'Saved', c.created, ` by recite ${c.recite}`);
  for (const i of c.inputs) {
    fact(facts, `Input ${i.n + 1}`, i.name, ` (${i.size} bytes, SHA-256 `, el('code', {}, i.sha256), ')');
  }
  if (c.data_layer) fact(facts, 'Data layer', c.data_layer.path, ` (${c.data_layer.source})`);
  fact(facts, 'Its fingerprint', el('code', {}, c.fingerprint));
  fact(facts, 'Re-runs', String(c.reruns.length));
  const frame = document.getElementById('report');
  const fit = () => {
    try {
      frame.style.height = `${frame.contentDocument.documentElement.scrollHeight + 20}px`;
    } catch (_) { /* not same-origin: keep the default height */ }
  };
  frame.addEventListener('load', fit);
  fit();
  document.getElementById('rerun').addEventListener('click', () => rerun(id));
  whatIf(id);
}

// --- what if: each claim's alternatives, re-run on click ---

// A recomputed value as the reports show it: proportions as percents.
function shown(m) {
  const v = m.estimate && m.estimate.value;
  if (typeof v !== 'number') return 'not computed';
  return m.unit === 'proportion' ? `${(v * 100).toFixed(1)}%` : v.toPrecision(5).replace(/\.?0+$/, '');
}

async function whatIf(id) {
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
  box.replaceChildren(...list.claims.map((c) => whatIfClaim(id, c)));
  if (list.truncated) box.append(el('p', { class: 'muted' }, 'Only the first claims are listed.'));
}

function whatIfClaim(id, c) {
  const n = c.claim + 1;
  const div = el('div', { class: 'whatif-claim', 'data-claim': String(c.claim) });
  if (c.reason) {
    div.append(el('h3', {}, `Claim ${n}`), el('p', { class: 'muted' }, c.reason));
    return div;
  }
  div.dataset.study = c.study;
  div.dataset.period = c.period;
  const claimed = c.claimed.length ? ` — claimed ${c.claimed.join(', ')}` : '';
  const title = `Claim ${n}: ${c.study} · ${c.period} · ${c.column}${claimed}`;
  const tryAll = el('button', { type: 'button', class: 'try-all secondary' }, 'Re-run every alternative');
  const runs = [];
  const rows = c.alternatives.map((a) => {
    const button = el('button', { type: 'button', class: 'try', 'aria-label': `Re-run claim ${n} ${a.label}` }, 'Re-run');
    const head = el('th', { scope: 'row' });
    if (a.likely) head.append(el('span', { class: 'likely-tag' }, 'Most likely computed instead'));
    head.append(a.label);
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
  div.append(el('h3', {}, title));
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
}

async function rerun(id) {
  const out = document.getElementById('rerun-result');
  out.textContent = 'Re-running…';
  const r = await fetch(`/v1/cases/${id}/rerun`, { method: 'POST' });
  if (!r.ok) {
    out.replaceChildren(el('span', { class: 'error' }, await failure(r)));
    return;
  }
  const x = await r.json();
  const head = x.data_layer_changed
    ? el('p', { class: 'changed' }, 'The data layer changed since the case was saved.')
    : el('p', {}, 'The data layer is the one the case was settled on.');
  const parts = [head];
  if (x.files_changed.length) {
    parts.push(el('p', {}, 'Files: ', x.files_changed.map((f) => `${f.name} (${f.change})`).join(', ')));
  }
  if (x.moved.length) {
    const rows = x.moved.map((m) => el('tr', {},
      el('td', {}, m.claim === undefined ? '' : `claim ${m.claim + 1}`),
      el('td', {}, m.measure ? `${m.what}: ${m.measure}` : m.what),
      el('td', {}, JSON.stringify(m.before)),
      el('td', {}, JSON.stringify(m.after))));
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
