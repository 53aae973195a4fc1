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

async function settle(body, name) {
  const status = document.getElementById('status');
  status.textContent = `Settling ${name}…`;
  const r = await fetch(`/v1/cases?name=${encodeURIComponent(name)}`, { method: 'POST', body });
  if (!r.ok) {
    status.replaceChildren(el('span', { class: 'error' }, `${name}: ${await failure(r)}`));
    return null;
  }
  return r.json();
}

async function settleAll(items) {
  let last = null;
  for (const [body, name] of items) {
    const c = await settle(body, name);
    if (!c) return;
    last = c;
  }
  if (items.length === 1 && last) {
    window.location.assign(last.url);
  } else {
    document.getElementById('status').textContent = `${items.length} cases saved.`;
    listCases();
  }
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
  const read = (list) => settleAll([...list].map((f) => [f, f.name]));
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
    if (text.trim()) settleAll([[text, 'pasted']]);
  });
  document.getElementById('search').addEventListener('submit', (e) => { e.preventDefault(); listCases(); });
  listCases();
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
  if (page === 'index') indexPage();
  if (page === 'case') casePage(document.body.dataset.case);
});
