#!/usr/bin/env node
// The workbench in a real browser: headless Chromium (Debian's package, driven over the
// DevTools protocol by puppeteer-core) against a running `recite serve`, with an axe-core
// accessibility audit run inside the pages.
//
//   node tests/workbench/browser.mjs BASE FIXTURE SHOTS
//
// BASE is where the server listens (http://127.0.0.1:PORT), FIXTURE a transcript with a claim
// on a period that has a previous one in its study's catalog (the bundled
// examples/transcripts/a2a-v10-stream.sse: Versant, W6), SHOTS the folder the screenshots go
// to. The steps, each checked against what the server's JSON API says (never against what the
// page itself computed):
//
//   controls   the watcher catches a control page's outside request, and axe its image
//              without a text alternative (both then forgotten): neither check is blind
//   open       `/`, the fixture uploaded through the page's file input (#files), the case page
//   numbers    every highlighted number of the report frame (mark.ans, and every cited number
//              .cited) has the status the JSON report (GET /v1/cases/ID/report) gives it
//   charts     every chart's title and accessible name its measure; its axis: one scale for a
//              claim's panel, each chart starting where its values are (a flat 100% at the top,
//              W5 to W6 a visible part of the chart's height), each point where its value is
//   whatif     the claim on W6 switched to the previous wave in the what-if panel: the verdict
//              and recomputed values the page shows are POST /v1/cases/ID/whatif's, and those
//              are what POST /v1/verify answers for the fixture's own citation with its period
//              changed (edited here), and what the fixture's own W5 claim recomputed; every
//              row names a column or weight by the catalog's label (GET /v1/catalog), its
//              code in small type only
//   permalink  #permalink followed in a new page (under the page's own CSP): the same case
//   export     /cases/ID/export: a whole HTML document with no outside reference, equal to the
//              framed report, which loads nothing when rendered
//   axe        axe-core in the index page, the case page and the report: no violation of impact
//              serious or critical
//   several    two files chosen at once in the file input: one new case of both inputs, each
//              the file's bytes under its name, its report of both
//   signin     $TOKEN_BASE (a server started with --token-file, its token $TOKEN): a case page
//              sends to the form (under its CSP, its favicon answering), a wrong token is 401
//              and said, the right one opens the index and the case, sign-out ends the session
//              and the case page asks again; axe on the form (blank, refusing) and signed in
//   requests   every request any page made was to BASE or TOKEN_BASE (or data:/about:), every
//              answer < 400 but those a step asked for,
//              no script error, no console error
//
// Screenshots, in SHOTS: open-index.png (before the upload), case.png (1200×1600, as
// docs/workbench.md shows it), whatif.png (the what-if panel after the click), permalink.png,
// export.png (the exported file rendered on its own), index.png (the list with the new case);
// result.json is what is printed.
//
// Prints one JSON object, {ok, case, steps: [{step, ok, failures, …}], axe, requests}, and
// exits 0 when every step passed, 1 when one failed, 2 when the run could not start, 3 when
// puppeteer-core or axe-core is not installed. A failed step does not stop the later ones.
//
// The packages come from the cache install.sh fills: $RECITE_SDK_CACHE/workbench, by default
// ${XDG_CACHE_HOME:-$HOME/.cache}/recite-sdk/workbench. Chromium is $CHROMIUM, else the first
// `chromium` or `chromium-browser` on PATH: puppeteer's own browser download is never used.

import { createRequire } from "node:module";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const CITATION = "application/vnd.upperhand.citations+json";
// A settle runs DataFusion over the data layer: seconds warm, longer cold.
const SLOW_MS = 300_000;
const VIEWPORT = { width: 1200, height: 1100 };
const SERIOUS = new Set(["serious", "critical"]);

const [base, fixture, shots] = process.argv.slice(2);
if (!base || !fixture || !shots) {
  console.error("usage: browser.mjs BASE FIXTURE SHOTS");
  process.exit(2);
}
const origin = new URL(base).origin;

const cacheRoot =
  process.env.RECITE_SDK_CACHE ??
  path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "recite-sdk");
const jsDir = path.join(cacheRoot, "workbench");
const require = createRequire(path.join(jsDir, "package.json"));
let puppeteer, axeSource;
try {
  puppeteer = require("puppeteer-core");
  axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
} catch (e) {
  console.error(`puppeteer-core or axe-core is not installed in ${jsDir} (run tests/workbench/install.sh): ${e.message}`);
  process.exit(3);
}

function chromium() {
  if (process.env.CHROMIUM) return process.env.CHROMIUM;
  for (const dir of (process.env.PATH || "").split(path.delimiter)) {
    for (const name of ["chromium", "chromium-browser"]) {
      const p = path.join(dir, name);
      if (dir && existsSync(p)) return p;
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Steps: each records its checks; a thrown error is the step's failure, and the run goes on.

const steps = [];
let current = null;

async function step(name, body) {
  current = { step: name, ok: true, failures: [] };
  steps.push(current);
  try {
    await body(current);
  } catch (e) {
    current.failures.push(`threw: ${e && e.stack ? e.stack.split("\n").slice(0, 4).join(" | ") : e}`);
  }
  current.ok = current.failures.length === 0;
  return current.ok;
}

function check(cond, what) {
  if (!cond) current.failures.push(what);
  return !!cond;
}

function equal(got, want, what) {
  const g = JSON.stringify(got);
  const w = JSON.stringify(want);
  return check(g === w, `${what}: got ${g}, want ${w}`);
}

async function api(method, target, body) {
  const r = await fetch(new URL(target, base), {
    method,
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    headers: body === undefined || typeof body === "string" ? {} : { "content-type": "application/json" },
    signal: AbortSignal.timeout(SLOW_MS),
  });
  const text = await r.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch (_) {
    /* not JSON: kept as text */
  }
  return { status: r.status, headers: r.headers, text, json };
}

// Every claim of a JSON report, in report order: the index is the claim's number K.
const claimsOf = (report) => (report.inputs || []).flatMap((i) => i.claims || []);

// The verdict the HTML report gives one cited number (crates/recite-core/src/report/html.rs,
// render_claim): the claim's own when it was not re-run; otherwise DISCREPANT when the number
// is not the data's, BASE_MISMATCH when it is but the base is not, else REPRODUCED.
function citedVerdict(claim, compared) {
  if (claim.verdict === "INVALID" || claim.verdict === "UNVERIFIABLE") return claim.verdict;
  if (!compared.matched) return "DISCREPANT";
  if (claim.base && claim.base.matched === false) return "BASE_MISMATCH";
  return "REPRODUCED";
}

// ---------------------------------------------------------------------------------------------
// The browser, every request of every page watched

const requests = { seen: [], outside: [], failed_answers: [], errors: [], notes: [] };
// Answers >= 400 a step asked for on purpose ("STATUS URL"): the permalink of a deleted case.
const expectedAnswers = new Set();

// The second server, started with --token-file (tests/it/browser.rs): the sign-in step's.
const tokenBase = process.env.TOKEN_BASE || null;
const origins = new Set([origin, ...(tokenBase ? [new URL(tokenBase).origin] : [])]);

function allowed(url) {
  if (url.startsWith("data:") || url.startsWith("about:")) return true;
  try {
    return origins.has(new URL(url).origin);
  } catch (_) {
    return false;
  }
}

// Whether a failed load Chromium logged at `url` is one a step asked for (any status).
const expectedAt = (url) => [...expectedAnswers].some((a) => a.slice(a.indexOf(" ") + 1) === url);

// Watches a page: each request is recorded, one elsewhere is refused (and counted), every
// answer from the server is < 400, and script or console errors are kept.
async function watch(page, label) {
  await page.setRequestInterception(true);
  page.on("request", (r) => {
    const url = r.url();
    requests.seen.push(`${label} ${r.method()} ${url.length > 120 ? `${url.slice(0, 120)}…` : url}`);
    if (allowed(url)) {
      r.continue().catch(() => {});
    } else {
      requests.outside.push(`${label}: ${r.method()} ${url}`);
      r.abort("blockedbyclient").catch(() => {});
    }
  });
  page.on("response", (r) => {
    if (r.status() < 400) return;
    const line = `${label}: ${r.status()} ${r.request().method()} ${r.url()}`;
    // Chromium asks for /favicon.ico by itself for a top-level page that names no icon (the
    // report, opened on its own for the audit): not the page's request, so noted, not failed.
    if (new URL(r.url()).pathname === "/favicon.ico") requests.notes.push(`${line} (the browser's own)`);
    else if (expectedAnswers.has(`${r.status()} ${r.url()}`)) requests.notes.push(`${line} (expected)`);
    else requests.failed_answers.push(line);
  });
  page.on("pageerror", (e) => requests.errors.push(`${label}: script error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() !== "error") return;
    const at = (m.location() || {}).url || "";
    if (at.endsWith("/favicon.ico")) return; // its 404, noted above
    // Chromium logs an expected answer (a deleted case's 404, a wrong token's 401) as a failed
    // resource load.
    if (expectedAt(at)) return;
    requests.errors.push(`${label}: console error: ${m.text()}${at ? ` (${at})` : ""}`);
  });
}

async function newPage(browser, label, { bypassCSP }) {
  const page = await browser.newPage();
  await page.setViewport(VIEWPORT);
  page.setDefaultTimeout(SLOW_MS);
  // axe is injected as a script of the test's: the pages' CSP (script-src 'self', and none at
  // all in the report) would refuse it. With the policy bypassed, a request the page tries that
  // its policy would have refused reaches the watcher above, so none goes unseen.
  if (bypassCSP) await page.setBypassCSP(true);
  await watch(page, label);
  return page;
}

async function shot(page, name, opts = {}) {
  const file = path.join(shots, name);
  if (opts.element) {
    const el = await page.$(opts.element);
    if (!el) throw new Error(`screenshot ${name}: no ${opts.element}`);
    await el.scrollIntoView();
    await el.screenshot({ path: file });
  } else {
    await page.screenshot({ path: file, fullPage: !!opts.fullPage });
  }
  return name;
}

// The case page is ready when its facts are listed and its report frame has loaded.
async function caseReady(page) {
  await page.waitForFunction(
    () => {
      const f = document.getElementById("report");
      const d = f && f.contentDocument;
      return document.querySelector("#facts dt") && d && d.readyState === "complete" && d.querySelector("main");
    },
    { timeout: SLOW_MS },
  );
}

// The report frame's highlighted numbers, per input section, and its cited numbers, per claim.
async function frameNumbers(page) {
  return page.evaluate(() => {
    const d = document.getElementById("report").contentDocument;
    const inputs = [...d.querySelectorAll("section.input")].map((s) => ({
      marks: [...s.querySelectorAll("mark.ans")].map((m) => ({
        text: m.textContent,
        status: m.dataset.status,
        classes: [...m.classList],
        label: m.getAttribute("aria-label") || "",
        focusable: m.tabIndex === 0,
      })),
      claims: [...s.querySelectorAll("div.claim")].map((c) => ({
        verdict: c.dataset.verdict,
        // A cited number is "NAME: <num>CLAIMED</num> <badge>VERDICT</badge>[ data: …]"; a
        // claim compared on no number has one cited span, without a number.
        cited: [...c.querySelectorAll(":scope > span.cited")].map((x) => {
          const num = x.querySelector(":scope > .num");
          return {
            verdict: x.dataset.verdict,
            head: num ? `${x.firstChild.textContent.trim()} ${num.textContent}` : null,
            badge: (x.querySelector(":scope > .badge") || {}).textContent || null,
          };
        }),
      })),
    }));
    return { inputs, html: d.documentElement.outerHTML };
  });
}

// Runs axe-core in `page`'s top document (the report frame runs no script, so it is audited on
// its own); its violations, serious and critical first.
async function audit(page, where) {
  await page.addScriptTag({ content: axeSource });
  const result = await page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const r = await axe.run(document, { iframes: false, resultTypes: ["violations"] });
    return r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      helpUrl: v.helpUrl,
      nodes: v.nodes.slice(0, 20).map((n) => ({ target: n.target.join(" "), html: n.html.slice(0, 240), summary: n.failureSummary })),
      count: v.nodes.length,
    }));
  });
  return result.map((v) => ({ where, ...v }));
}

// Every violation axe found is the step's failure, whatever its impact.
function axeFailures(found) {
  for (const v of found) {
    current.failures.push(`${v.where}: ${v.impact} ${v.id}: ${v.help} — ${v.nodes.map((n) => n.target).join(", ")}`);
  }
}

// ---------------------------------------------------------------------------------------------
// The fixture's own citation, read here from the transcript (not from recite's report): the
// A2A stream's artifact parts in order (an `append` event adds to its artifact), the citation at
// the claim's locator, its result the artifact's last JSON data part before it.

function citationPair(text, locator) {
  const events = text
    .split("\n")
    .filter((l) => l.startsWith("data:"))
    .map((l) => JSON.parse(l.slice(5)));
  const parts = [];
  for (const e of events) {
    const a = e.result && e.result.artifactUpdate && e.result.artifactUpdate.artifact;
    if (a && a.artifactId === locator.artifact_id) parts.push(...(a.parts || []));
  }
  const at = parts.findIndex((p) => p.data && p.mediaType === CITATION);
  if (at < 0) throw new Error(`no citation part in artifact ${locator.artifact_id}`);
  const before = parts.slice(0, at).reverse().find((p) => p.data && p.mediaType !== CITATION);
  if (!before) throw new Error(`no result part before the citation of artifact ${locator.artifact_id}`);
  return { citation: structuredClone(parts[at].data), result: structuredClone(before.data) };
}

// ---------------------------------------------------------------------------------------------

async function main() {
  mkdirSync(shots, { recursive: true });
  const exe = chromium();
  if (!exe) {
    console.error("chromium is not installed (Debian's `chromium`), and $CHROMIUM is not set");
    process.exit(2);
  }
  const profile = mkdtempSync(path.join(os.tmpdir(), "recite-browser-"));
  const browser = await puppeteer.launch({
    executablePath: exe,
    headless: true,
    userDataDir: profile,
    protocolTimeout: SLOW_MS,
    args: [
      "--no-sandbox", // as root in CI; the pages are this server's own
      "--disable-gpu",
      "--no-first-run",
      "--no-default-browser-check",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-extensions",
      "--disable-quic",
      "--no-proxy-server",
      // Belt and braces: no host name but loopback resolves, so a request the watcher missed
      // still could not leave the machine.
      "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
      `--window-size=${VIEWPORT.width},${VIEWPORT.height}`,
    ],
  });
  // A page the test did not open (a pop-up, a new window) is an error: it is listed at the end.
  const created = [];
  browser.on("targetcreated", (t) => created.push(t));
  const opened = new Set();
  const open = async (label, opts) => {
    const p = await newPage(browser, label, opts);
    opened.add(p.target());
    return p;
  };

  const out = { ok: false, case: null, steps, axe: [], requests };
  let id = null;
  let report = null;
  let page = null;
  const fixtureText = readFileSync(fixture, "utf8");

  try {
    // The watcher and the audit, shown to work: a page with an outside image is caught, and an
    // image without a text alternative is a critical axe violation. Then forgotten.
    await step("controls", async (s) => {
      const p = await open("control", { bypassCSP: true });
      const seen = requests.seen.length;
      await p.setContent('<!DOCTYPE html><html lang="en"><title>control</title><main><img src="http://recite-control.invalid/x.png"></main></html>', { waitUntil: "load" });
      const caught = requests.outside.filter((l) => l.includes("recite-control.invalid"));
      check(caught.length === 1, `the watcher caught the control's outside request (${requests.outside})`);
      const found = await audit(p, "control");
      check(found.some((v) => v.id === "image-alt" && SERIOUS.has(v.impact)), `axe reported the control's image-alt: ${found.map((v) => v.id)}`);
      s.caught = caught;
      requests.outside = requests.outside.filter((l) => !l.includes("recite-control.invalid"));
      requests.seen.splice(seen);
      requests.errors = requests.errors.filter((l) => !l.startsWith("control:"));
      await p.close();
    });

    // (a) Open a case from the fixture, through the page's file input.
    const opened_ = await step("open", async (s) => {
      page = await open("index", { bypassCSP: true });
      await page.goto(new URL("/", base).href, { waitUntil: "load" });
      await page.waitForFunction(() => document.getElementById("totals").textContent.trim() !== "");
      s.before = await page.$$eval("#cases tbody tr", (rows) => rows.length);
      s.shots = [await shot(page, "open-index.png")];
      const input = await page.$("#files");
      check(input, "the index page has a file input #files");
      const [nav] = await Promise.all([
        page.waitForNavigation({ waitUntil: "load", timeout: SLOW_MS }),
        input.uploadFile(path.resolve(fixture)),
      ]);
      check(nav && nav.ok(), `the case page answered ${nav && nav.status()}`);
      const m = new URL(page.url()).pathname.match(/^\/cases\/([0-9a-f]{24})$/);
      if (!check(m, `after the upload the page is a case page, not ${page.url()}`)) return;
      id = m[1];
      out.case = id;
      await caseReady(page);
      // The case the page opened is the newest in the list and holds the fixture's bytes.
      const list = await api("GET", "/v1/cases?limit=1");
      equal(list.json.cases[0].id, id, "the newest case is the one the page opened");
      const input0 = await api("GET", `/v1/cases/${id}/inputs/0`);
      check(input0.text === fixtureText, "the case's input is the fixture, byte for byte");
      const c = await api("GET", `/v1/cases/${id}`);
      equal(c.json.inputs[0].name, path.basename(fixture), "the input's name is the file's");
      const shownId = await page.$eval("header code", (e) => e.textContent);
      equal(shownId, id, "the page names its case");
      report = (await api("GET", `/v1/cases/${id}/report`)).json;
      check(report && report.inputs, "GET /v1/cases/ID/report is a JSON report");
    });
    if (!opened_ || !id || !report) throw new Error("no case page: the later steps need one");

    // (a2) The ruling, on the first screen, before any click: for every claim that is not
    // REPRODUCED, the claimed and recomputed values, the interval, both base n and the likely
    // cause in view; the likely alternative's what-if beside it (what POST …/whatif answers);
    // every REPRODUCED number's recomputed value inline.
    await step("ruling", async (s) => {
      await page.waitForSelector("#ruling .ruling-claim", { timeout: 60_000 });
      const claims = claimsOf(report);
      const alts = (await api("GET", `/v1/cases/${id}/alternatives`)).json;
      const pct = (v) => `${(v * 100).toFixed(1)}%`;
      s.checked = [];
      for (const [k, c] of claims.entries()) {
        const sel = `#ruling-claim-${k}`;
        const got = await page.$eval(sel, (e) => ({
          text: e.textContent.replace(/\s+/g, " "),
          verdict: e.dataset.verdict,
          visible: e.checkVisibility(),
          top: e.getBoundingClientRect().top,
          folded: !!e.closest("details:not([open])"),
        })).catch(() => null);
        if (!check(got, `claim ${k} has its ruling (${sel})`)) continue;
        equal(got.verdict, c.verdict, `claim ${k}'s ruling verdict`);
        check(got.visible && !got.folded, `claim ${k}'s ruling is in view, not folded`);
        for (const m of (c.measures || []).filter((x) => (x.claims || []).length)) {
          for (const x of m.claims) check(got.text.includes(x.claimed.text), `claim ${k}: the claimed ${m.name} ${x.claimed.text} in "${got.text}"`);
          const e = m.estimate || {};
          if (m.unit === "proportion" && typeof e.value === "number") {
            check(got.text.includes(pct(e.value)), `claim ${k}: ${m.name} recomputed ${pct(e.value)} in "${got.text}"`);
            if (typeof e.ci_low === "number") check(got.text.includes(`[${pct(e.ci_low)}, ${pct(e.ci_high)}]`), `claim ${k}: ${m.name}'s interval in "${got.text}"`);
          }
        }
        if (c.base && c.base.n !== undefined) {
          check(got.text.includes(`base n ${c.base.n}`), `claim ${k}: the recomputed base n ${c.base.n}`);
          if (c.base.claimed_n !== undefined && c.base.claimed_n !== null) check(got.text.includes(String(c.base.claimed_n)), `claim ${k}: the claimed base n ${c.base.claimed_n}`);
        }
        if (c.verdict === "REPRODUCED") continue;
        s.checked.push(k);
        check(got.top < VIEWPORT.height, `claim ${k} (${c.verdict}) is on the first screen (top ${got.top})`);
        const first = (c.explanations || [])[0];
        if (first) check(got.text.includes(first.message), `claim ${k}: the likely cause "${first.message}" in "${got.text}"`);
        else check((c.reasons || []).every((r) => got.text.includes(r)), `claim ${k}: its reasons in "${got.text}"`);
        const mine = alts && (alts.claims || []).find((x) => x.claim === k);
        const likely = mine && mine.alternatives.find((a) => a.likely);
        if (likely) {
          await page.waitForSelector(`${sel} .likely-result .badge`, { timeout: SLOW_MS });
          const shown = await page.$eval(`${sel} .likely-result`, (e) => ({ text: e.textContent, verdict: e.querySelector(".badge").textContent }));
          const w = await api("POST", `/v1/cases/${id}/whatif`, { claim: k, alternative: likely.id });
          equal(shown.verdict, w.json.verdict, `claim ${k}: the likely alternative's verdict beside it is POST …/whatif's`);
          check(shown.text.includes(likely.label), `claim ${k}: the likely alternative named ("${likely.label}")`);
          if (w.json.report_claim.base) check(shown.text.includes(`base ${w.json.report_claim.base.n}`), `claim ${k}: the likely alternative's base n`);
          s.likely = { claim: k, alternative: likely.id, verdict: shown.verdict };
        }
      }
      check(s.checked.length > 0, "the fixture has a claim that is not REPRODUCED");
      // The frame as tall as its report (no empty band under a short one).
      await page.waitForFunction(() => {
        const f = document.getElementById("report");
        return f.contentDocument && f.contentDocument.body && Math.abs(f.getBoundingClientRect().height - f.contentDocument.body.getBoundingClientRect().height) < 40;
      }, { timeout: 30_000 }).catch(() => {});
      const slack = await page.$eval("#report", (f) => f.getBoundingClientRect().height - f.contentDocument.body.getBoundingClientRect().height);
      check(slack >= 0 && slack < 40, `the report frame is sized to its report (${slack.toFixed(0)} px to spare)`);
      // The saved time as people read it, the stamp in the tooltip.
      const c = (await api("GET", `/v1/cases/${id}`)).json;
      const saved = await page.$eval("#facts time", (t) => ({ datetime: t.getAttribute("datetime"), title: t.title, text: t.textContent }));
      equal([saved.datetime, saved.title], [c.created, c.created], "the saved time's stamp (datetime, tooltip)");
      check(/^\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} UTC$/.test(saved.text), `the saved time in words: "${saved.text}"`);
      // case.png as docs/workbench.md shows it: the first screen, as it opens.
      s.shots = [await shot(page, "case.png")];
    });

    // (b) Every highlighted number's status, against the JSON report.
    await step("numbers", async (s) => {
      const frame = await frameNumbers(page);
      equal(frame.inputs.length, report.inputs.length, "input sections in the frame");
      let marks = 0;
      let cited = 0;
      report.inputs.forEach((inp, i) => {
        const got = (frame.inputs[i] || { marks: [], claims: [] });
        const want = (inp.answers || []).flatMap((a) => a.numbers || []);
        equal(got.marks.length, want.length, `input ${i}: highlighted numbers`);
        want.forEach((n, k) => {
          const g = got.marks[k];
          if (!check(g, `input ${i}: number ${k} (${n.text}) is not highlighted`)) return;
          equal(g.text, n.text, `input ${i}, number ${k}: its text`);
          equal(g.status, n.status, `input ${i}, number ${k} (${n.text}): data-status`);
          check(g.classes.includes(n.status), `input ${i}, number ${k} (${n.text}): class ${n.status} missing (${g.classes})`);
          check(g.label.startsWith(`${n.text} ${n.status}`), `input ${i}, number ${k}: its label "${g.label}"`);
          check(g.focusable, `input ${i}, number ${k}: not a tab stop`);
          marks++;
        });
        // The cited numbers: each claim's, as a set per input (a claim is drawn in the turn that
        // holds it, not in report order).
        const key = (c) => JSON.stringify(c);
        const wantClaims = (inp.claims || []).map((c) => ({
          verdict: c.verdict,
          cited: (c.measures || []).flatMap((m) =>
            (m.claims || []).map((x) => ({ verdict: citedVerdict(c, x), head: `${m.name}: ${x.claimed.text}` })),
          ),
        }));
        const gotClaims = got.claims.map((c) => ({
          verdict: c.verdict,
          cited: c.cited.filter((x) => x.head !== null).map((x) => ({ verdict: x.verdict, head: x.head })),
        }));
        for (const c of got.claims) {
          for (const x of c.cited) check(x.badge === x.verdict, `input ${i}: a cited number's badge ${x.badge} is not its ${x.verdict}`);
        }
        const sorted = (l) => l.map(key).sort();
        equal(sorted(gotClaims), sorted(wantClaims), `input ${i}: the claims and their cited numbers' verdicts`);
        cited += wantClaims.reduce((n, c) => n + c.cited.length, 0);
      });
      s.highlighted = marks;
      s.cited = cited;
      check(marks > 0, "the fixture's answer has highlighted numbers");
      // The statuses the fixture is known for (docs/workbench.md's case): a refuted W5 number and
      // a traced W6 one.
      const statuses = new Set(report.inputs.flatMap((i) => (i.answers || []).flatMap((a) => a.numbers.map((n) => n.status))));
      check(statuses.has("TRACED") && statuses.has("TRACED_TO_DISCREPANT"), `statuses ${[...statuses]}`);
    });


    // (b2) Every chart in the report frame: its visible title and its accessible name (the
    // SVG's title, role img) start with the measure it draws, in the order of the claims'
    // series; no empty header cell in its data table.
    await step("charts", async (s) => {
      const want = claimsOf(report).flatMap((c) => (c.series || []).map((x) => x.measure));
      const got = await page.$eval("#report", (f) => [...f.contentDocument.querySelectorAll(".chart")].map((c) => {
        const svg = c.querySelector("svg");
        return {
          title: (c.querySelector(".chart-title .chart-measure") || {}).textContent || null,
          visible: (c.querySelector(".chart-title") || {}).textContent || "",
          role: svg && svg.getAttribute("role"),
          name: svg && svg.querySelector(":scope > title") ? svg.querySelector(":scope > title").textContent : null,
          emptyHeaders: c.querySelectorAll("th:empty").length,
        };
      }));
      s.charts = got.length;
      check(want.length > 0, "the case's claims have series (settled with series on)");
      equal(got.map((c) => c.title), want, "each chart's visible title is its measure, in order");
      for (const [i, c] of got.entries()) {
        check(c.role === "img" && c.name && c.name.startsWith(want[i]), `chart ${i}: accessible name "${c.name}" starts with ${want[i]}`);
        equal(c.emptyHeaders, 0, `chart ${i}: empty header cells`);
      }
      const panels = await page.$eval("#report", (f) => [...f.contentDocument.querySelectorAll(".charts")].length);
      check(panels > 0, "the charts of a claim are one panel (.charts)");

      // Axes that start where the data says: each chart's ticks (its grid lines, top to bottom)
      // and its points' heights, read from the SVG as drawn.
      const drawn = await page.$eval("#report", (f) => [...f.contentDocument.querySelectorAll(".charts")].map((panel) =>
        [...panel.querySelectorAll(".chart svg")].map((svg) => {
          const ticks = [...svg.querySelectorAll("g.chart-axis text")].map((t) => ({
            value: parseFloat(t.textContent),
            y: parseFloat(t.getAttribute("y")) - 4,
          }));
          const points = [...svg.querySelectorAll("g.chart-points circle, g.chart-points rect")].map((e) =>
            e.tagName === "circle" ? parseFloat(e.getAttribute("cy")) : parseFloat(e.getAttribute("y")) + 4.5);
          return { ticks, points };
        })));
      // One scale per panel: the charts of a claim span the same height of values.
      let at = 0;
      const claims = claimsOf(report);
      for (const [k, c] of claims.entries()) {
        const series = c.series || [];
        if (!series.length) continue;
        const charts = drawn.shift() || [];
        const spans = charts.map((x) => (x.ticks.length ? x.ticks[x.ticks.length - 1].value - x.ticks[0].value : NaN));
        const units = new Set(series.map((x) => x.unit));
        if (units.size === 1) check(spans.every((v) => Math.abs(v - spans[0]) < 1e-6), `claim ${k}: one scale for its panel (${spans})`);
        for (const [i, x] of series.entries()) {
          const chart = charts[i];
          if (!check(chart && chart.ticks.length >= 2, `claim ${k}, ${x.measure}: its axis has ticks`)) continue;
          const top = chart.ticks[chart.ticks.length - 1];
          const bottom = chart.ticks[0];
          // A share's axis within 0–100%; a point's height is where the axis puts its value.
          const scale = (bottom.y - top.y) / (top.value - bottom.value);
          if (x.unit === "proportion") check(bottom.value >= 0 && top.value <= 100, `claim ${k}, ${x.measure}: axis ${bottom.value}–${top.value}%`);
          const values = x.points.filter((p) => typeof p.value === "number").map((p) => (x.unit === "proportion" ? p.value * 100 : p.value));
          values.forEach((v, j) => {
            const want = bottom.y - (v - bottom.value) * scale;
            check(Math.abs(chart.points[j] - want) < 1, `claim ${k}, ${x.measure}, point ${j}: drawn at ${chart.points[j]}, its value ${v} at ${want.toFixed(1)}`);
          });
          // A 100% line is drawn as such: at 100%, the top of its axis.
          if (x.unit === "proportion" && values.length && values.every((v) => v === 100)) {
            equal(top.value, 100, `claim ${k}, ${x.measure}: flat at 100%, the axis's top`);
            check(chart.points.every((y) => Math.abs(y - top.y) < 1), `claim ${k}, ${x.measure}: the points on the 100% line`);
          }
          at++;
        }
        // The W6 claim's moves: W5 against W6, on each measure that moved 2 points or more, a
        // visible part of the chart's height (on a 0–100% axis 2.5 points were 2.5% of it).
        if (c.rerun && /^W6\b/.test(c.rerun.period)) {
          for (const [i, x] of series.entries()) {
            const valued = x.points.filter((p) => typeof p.value === "number");
            const w5 = valued.findIndex((p) => /^W5\b/.test(p.period));
            const w6 = valued.findIndex((p) => p.cited);
            const chart = charts[i];
            if (x.unit !== "proportion" || w5 < 0 || w6 < 0 || !chart) continue;
            const pp = Math.abs(valued[w5].value - valued[w6].value) * 100;
            if (pp < 2) continue;
            const height = chart.ticks[0].y - chart.ticks[chart.ticks.length - 1].y;
            const gap = Math.abs(chart.points[w5] - chart.points[w6]) / height;
            s.w5_w6 = [...(s.w5_w6 || []), { claim: k, measure: x.measure, pp: Number(pp.toFixed(2)), of_height: Number(gap.toFixed(3)) }];
            check(gap >= 0.1, `claim ${k}, ${x.measure}: W5–W6 (${pp.toFixed(1)} points) is ${(gap * 100).toFixed(1)}% of the chart's height`);
          }
        }
      }
      check(s.w5_w6, "a W6 claim's move from W5 was measured on its chart");
      s.drawn = at;
      // Nothing drawn past a chart's edge: every label's box inside its drawing, as Chromium
      // lays the text out ("claimed 1.0 (100%)" on one line ran past the right edge).
      const outside = await page.$eval("#report", (f) => [...f.contentDocument.querySelectorAll(".chart svg")].flatMap((svg) => {
        const [, , w, h] = (svg.getAttribute("viewBox") || "").split(/\s+/).map(Number);
        const width = w || Number(svg.getAttribute("width"));
        const height = h || Number(svg.getAttribute("height"));
        return [...svg.querySelectorAll("text")].map((t) => ({ text: t.textContent, box: t.getBBox() }))
          .filter(({ box }) => box.x < -0.5 || box.y < -0.5 || box.x + box.width > width + 0.5 || box.y + box.height > height + 0.5)
          .map(({ text, box }) => `"${text}" at x ${box.x.toFixed(1)}–${(box.x + box.width).toFixed(1)} of ${width}`);
      }));
      s.labels_outside = outside.length;
      equal(outside, [], "every chart label lies inside its drawing");
    });

    // (c) What if: the W6 claim on the previous wave.
    await step("whatif", async (s) => {
      const claims = claimsOf(report);
      const k = claims.findIndex((c) => c.rerun && /^W6\b/.test(c.rerun.period));
      if (!check(k >= 0, "the fixture has a claim on W6")) return;
      const claim = claims[k];
      s.claim = k;
      const catalog = (await api("GET", "/v1/catalog")).json;
      const study = catalog.studies.find((x) => x.study && x.study.name === claim.rerun.study);
      if (!check(study, `GET /v1/catalog has the study ${claim.rerun.study}`)) return;
      const periods = study.periods.map((p) => p.name);
      const at = periods.indexOf(claim.rerun.period);
      if (!check(at > 0, `${claim.rerun.period} has a previous period in ${periods}`)) return;
      const previous = periods[at - 1];
      s.period = claim.rerun.period;
      s.previous = previous;

      // The page.
      const panel = await page.$("#whatif");
      if (!check(panel, "the case page has a what-if panel (section#whatif)")) return;
      await page.waitForSelector(`#whatif .whatif-claim[data-claim="${k}"]`, { timeout: 60_000 });
      const attrs = await page.$eval(`#whatif .whatif-claim[data-claim="${k}"]`, (e) => ({
        study: e.dataset.study,
        period: e.dataset.period,
      }));
      equal(attrs, { study: claim.rerun.study, period: claim.rerun.period }, `claim ${k}'s data-study and data-period`);
      const blocks = await page.$$eval("#whatif .whatif-claim", (l) => l.map((e) => e.dataset.claim));
      equal(blocks, claims.map((_, i) => String(i)), "one .whatif-claim per claim of the report, in order");
      const row = `#whatif .whatif-claim[data-claim="${k}"] tr.alternative[data-kind="period"][data-name="${CSS_escape(previous)}"]`;
      if (!check(await page.$(row), `claim ${k} offers ${previous} (tr.alternative[data-kind=period])`)) return;
      const likelyFirst = await page.$$eval(`#whatif .whatif-claim[data-claim="${k}"] tr.alternative`, (rows) =>
        rows.every((r, i) => r.dataset.likely !== "true" || i === 0),
      );
      check(likelyFirst, "only the first row may be the likely alternative");
      await page.click(`${row} button.try`);
      await page.waitForSelector(`${row}[data-verdict]`, { timeout: SLOW_MS });
      const shown = await page.$eval(row, (r) => ({
        verdict: r.dataset.verdict,
        values: [...r.querySelectorAll("td.recomputed span.value")].map((v) => ({
          measure: v.dataset.measure,
          value: v.dataset.value === "" || v.dataset.value === undefined ? null : Number(v.dataset.value),
          text: v.textContent,
        })),
        base_n: (r.querySelector("td.recomputed span.base-n") || {}).textContent || null,
      }));
      s.shown = shown;
      s.shots = [await shot(page, "whatif.png", { element: "#whatif" })];
      check(shown.values.length > 0, "the row shows recomputed values (td.recomputed span.value)");

      // The API, for the same request.
      const alts = (await api("GET", `/v1/cases/${id}/alternatives`)).json;
      const mine = alts && alts.claims && alts.claims.find((c) => c.claim === k);
      if (!check(mine, `GET /v1/cases/ID/alternatives lists claim ${k}`)) return;
      const alt = mine.alternatives.find((a) => a.kind === "period" && a.name === previous);
      if (!check(alt, `claim ${k}'s alternatives include the period ${previous}`)) return;
      const w = await api("POST", `/v1/cases/${id}/whatif`, { claim: k, alternative: alt.id });
      if (!check(w.status === 200 && w.json, `POST /v1/cases/ID/whatif answered ${w.status}: ${w.text.slice(0, 300)}`)) return;
      equal(shown.verdict, w.json.verdict, "the row's verdict is the API's");
      equal(w.json.report_claim.verdict, w.json.verdict, "the what-if's claim has its verdict");
      equal(w.json.report_claim.rerun.period, previous, "the what-if re-ran the previous period");
      const estimate = (rc, name) => ((rc.measures || []).find((m) => m.name === name) || {}).estimate;
      for (const v of shown.values) {
        const e = estimate(w.json.report_claim, v.measure);
        if (check(e, `the API's what-if has no measure ${v.measure}`)) equal(v.value, e.value, `${v.measure}: the page's data-value is the API's estimate`);
      }
      if (shown.base_n !== null && w.json.report_claim.base) {
        equal(Number(shown.base_n.replace(/[^0-9]/g, "")), w.json.report_claim.base.n, "the base n shown is the API's");
      }

      // Independently: the fixture's own citation with its period changed, through
      // POST /v1/verify; and the fixture's own claim on that period, if it has one.
      const pair = citationPair(fixtureText, claim.locator);
      pair.citation.period = previous;
      const v = await api("POST", "/v1/verify", pair);
      if (!check(v.status === 200 && v.json, `POST /v1/verify answered ${v.status}`)) return;
      const verified = claimsOf(v.json)[0];
      equal(w.json.verdict, verified.verdict, "the what-if's verdict is /v1/verify's on the edited citation");
      const names = (claim.measures || []).map((m) => m.name);
      for (const name of names) {
        const a = estimate(w.json.report_claim, name);
        const b = estimate(verified, name);
        if (check(a && b, `${name}: in both the what-if and /v1/verify`)) equal(a.value, b.value, `${name}: the what-if's estimate is /v1/verify's`);
      }
      equal(w.json.report_claim.base && w.json.report_claim.base.n, verified.base && verified.base.n, "base n: the what-if's is /v1/verify's");
      const own = claims.find(
        (c) => c.rerun && c.rerun.period === previous && c.rerun.study === claim.rerun.study &&
          c.rerun.table === claim.rerun.table && c.rerun.column === claim.rerun.column &&
          c.rerun.base === claim.rerun.base && c.rerun.weight === claim.rerun.weight,
      );
      if (own) {
        s.also_against = `the fixture's own ${previous} claim`;
        for (const name of names) {
          const a = estimate(w.json.report_claim, name);
          const b = estimate(own, name);
          if (a && b) equal(a.value, b.value, `${name}: the what-if's estimate is the fixture's own ${previous} claim's`);
        }
      }
      // And it moved: the previous wave's numbers are not the claim's own.
      check(names.some((n) => estimate(w.json.report_claim, n).value !== estimate(claim, n).value), "the previous wave's estimates differ from the claim's");

      // In words: every row of the claim names a column or a weight by the label the catalog
      // gives it (the code only in small type, code.code), a base by its name, a period by its.
      const table = (study.tables || []).find((t) => t.name === claim.rerun.table) || {};
      const columns = table.columns || {};
      const rows = await page.$$eval(`#whatif .whatif-claim[data-claim="${k}"] tr.alternative`, (l) => l.map((r) => {
        const th = r.querySelector("th").cloneNode(true);
        const code = th.querySelector("code.code");
        const tag = th.querySelector(".likely-tag");
        if (tag) tag.remove();
        if (code) code.remove();
        return { kind: r.dataset.kind, name: r.dataset.name, words: th.textContent.trim(), code: code ? code.textContent : null };
      }));
      s.rows = rows.length;
      equal(rows.map((r) => [r.kind, r.name]), mine.alternatives.map((a) => [a.kind, a.name]), "the rows are the API's alternatives");
      const bases = (study.bases || []).map((b) => b.name);
      const worded = new Set();
      for (const r of rows) {
        const label = ((columns[r.name] || {}).label || "").trim();
        if (r.kind === "column" || r.kind === "weight") {
          if (!check(label, `the catalog labels the ${r.kind} ${r.name}`)) continue;
          check(r.words.includes(label), `${r.kind} ${r.name}: its label "${label}" in "${r.words}"`);
          check(!r.words.includes(r.name), `${r.kind} ${r.name}: no code in the words "${r.words}"`);
          equal(r.code, r.name, `${r.kind} ${r.name}: its code in small type`);
        } else if (r.kind === "base") {
          check(bases.includes(r.name) && r.words.includes(r.name), `base ${r.name}: named in "${r.words}"`);
        } else if (r.kind === "period") {
          check(r.words.includes(r.name), `period ${r.name}: named in "${r.words}"`);
        }
        // No column code of the table in any row's words (s14r4, main_weight, …).
        const codes = Object.keys(columns).filter((c) => /\d|_/.test(c) && new RegExp(`\\b${c}\\b`).test(r.words));
        check(codes.length === 0, `${r.kind} ${r.name}: codes ${codes} in the words "${r.words}"`);
        worded.add(r.kind);
      }
      for (const kind of ["period", "weight", "base", "column"]) check(worded.has(kind), `a ${kind} row was checked`);
      const before = rows.find((r) => r.kind === "period" && r.name === previous);
      check(before && /the period before$/.test(before.words), `the previous period says so: "${before && before.words}"`);
    });

    // (d) The permalink, in a new page, under the page's own policy.
    await step("permalink", async (s) => {
      const href = await page.$eval("#permalink", (a) => a.href);
      s.href = href;
      equal(href, `${origin}/cases/${id}`, "the permalink");
      const first = await frameNumbers(page);
      const firstFacts = await page.$eval("#facts", (e) => e.textContent);
      const p2 = await open("permalink", { bypassCSP: false });
      const r = await p2.goto(href, { waitUntil: "load" });
      check(r.ok(), `the permalink answered ${r.status()}`);
      check(r.headers()["content-security-policy"], "the case page is sent with its CSP");
      await caseReady(p2);
      equal(await p2.$eval("header code", (e) => e.textContent), id, "the permalink's page names the case");
      equal(await p2.$eval("#facts", (e) => e.textContent), firstFacts, "the same facts");
      const again = await frameNumbers(p2);
      check(again.html === first.html, "the same report in the frame");
      s.shots = [await shot(p2, "permalink.png")];
      await p2.close();
    });


    // (d2) The analyst's note: saved with the case (the API says so), shown on the page.
    await step("note", async (s) => {
      const words = "Ruled: the W5 figure <b>relabelled</b> as W6 & sent on — J.";
      await page.$eval("#note", (e) => { e.value = ""; });
      await page.type("#note", words);
      await page.click("#note-form button[type=submit]");
      await page.waitForFunction(() => /Saved/.test(document.getElementById("note-status").textContent), { timeout: 30_000 });
      equal((await api("GET", `/v1/cases/${id}`)).json.note, words, "the note the API keeps");
      equal(await page.$eval("#note-text", (e) => e.textContent), words, "the note shown, as text");
      s.note = words;
    });

    // (e) Export: one self-contained HTML document.
    await step("export", async (s) => {
      const href = await page.$eval('a[href$="/export"]', (a) => a.href);
      equal(href, `${origin}/cases/${id}/export`, "the export link");
      const r = await api("GET", `/cases/${id}/export`);
      equal(r.status, 200, "export status");
      check((r.headers.get("content-disposition") || "").startsWith("attachment;"), "the export is a download");
      check((r.headers.get("content-type") || "").startsWith("text/html"), "the export is HTML");
      const html = r.text;
      s.bytes = html.length;
      check(/^<!DOCTYPE html>/i.test(html) && html.trimEnd().endsWith("</html>"), "a whole HTML document");
      const outside = [
        ...html.matchAll(/\b(?:src|href|action|srcset|poster|data)\s*=\s*["']?\s*(?:[a-z][a-z0-9+.-]*:)?\/\//gi),
        ...html.matchAll(/\b(?:src|href)\s*=\s*["']?\s*https?:/gi),
        ...html.matchAll(/url\(\s*["']?\s*(?:https?:)?\/\//gi),
        ...html.matchAll(/@import/gi),
        ...html.matchAll(/<(?:script|link|iframe|object|embed)\b/gi),
      ].map((m) => html.slice(Math.max(0, m.index - 40), m.index + 80));
      check(outside.length === 0, `outside references or loaders in the export: ${JSON.stringify(outside.slice(0, 5))}`);
      const framed = await api("GET", `/cases/${id}/report`);
      // The export is the framed report with the case's facts first in its <main>.
      const facts = html.match(/<section class="input case-facts" id="case-facts">[\s\S]*?<\/section>\n/);
      if (check(facts, "the export carries the case's facts (section#case-facts)")) {
        check(html.replace(facts[0], "") === framed.text, "the export is the framed report and the case's facts, byte for byte");
      }
      const c = (await api("GET", `/v1/cases/${id}`)).json;
      const esc = (t) => t.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
      // Rendered on its own, it loads nothing at all.
      const p3 = await open("export", { bypassCSP: false });
      const before = requests.seen.length;
      await p3.setContent(html, { waitUntil: "load" });
      const loads = requests.seen.slice(before).filter((l) => !/ (data|about):/.test(l));
      check(loads.length === 0, `the exported report made requests: ${loads}`);
      const shownFacts = await p3.$eval("#case-facts", (e) => ({
        id: e.querySelector("[data-case-id]").textContent,
        permalink: e.querySelector("[data-permalink]").textContent,
        saved: e.querySelector("time").getAttribute("datetime"),
        text: e.textContent,
        note: (e.querySelector("[data-note]") || {}).textContent || null,
      }));
      equal(shownFacts.id, id, "the export's case id");
      equal(shownFacts.permalink, `${origin}/cases/${id}`, "the export's permalink");
      equal(shownFacts.saved, c.created, "the export's saved time");
      check(shownFacts.text.includes(c.recite), "the export names the recite version");
      check(shownFacts.text.includes(c.fingerprint), "the export names the data's fingerprint");
      equal(shownFacts.note, c.note, "the export carries the analyst's note, as text");
      check(!html.includes("<b>relabelled</b>") && html.includes(esc(c.note)), "the note is escaped in the export");
      const marks = await p3.$$eval("mark.ans", (l) => l.length);
      const want = report.inputs.flatMap((i) => (i.answers || []).flatMap((a) => a.numbers)).length;
      equal(marks, want, "the exported report highlights every stated number");
      s.shots = [await shot(p3, "export.png", { fullPage: true })];
      await p3.close();
    });

    // (f) The accessibility audit: the index page (with its cases listed), the case page (after
    // the what-if, its rows included), and the report the frame holds.
    await step("axe", async (s) => {
      const found = [];
      found.push(...(await audit(page, "case page")));
      const rp = await open("report", { bypassCSP: true });
      await rp.goto(new URL(`/cases/${id}/report`, base).href, { waitUntil: "load" });
      found.push(...(await audit(rp, "report (the frame's document, crates/recite-core/src/report/html.rs)")));
      await rp.close();
      const ip = await open("index-audit", { bypassCSP: true });
      await ip.goto(new URL("/", base).href, { waitUntil: "load" });
      await ip.waitForFunction(() => document.querySelectorAll("#cases tbody tr[data-case]").length > 0);
      // Counts that say what they count.
      const totals = await ip.$eval("#totals", (e) => e.textContent);
      check(/^\d+ cases?, \d+ claims? in them: /.test(totals) && !/\(s\)/.test(totals), `the totals: "${totals}"`);
      found.push(...(await audit(ip, "index page")));
      s.shots = [await shot(ip, "index.png")];
      await ip.close();
      out.axe = found;
      s.violations = found.map((v) => `${v.where}: ${v.impact} ${v.id} (${v.count})`);
      axeFailures(found);
    });

    // (g) Several files chosen at once are one case: the three bundled transcripts, each input
    // the file's bytes under its name, and the case's report the one `recite check` makes of
    // them (its inputs in the order sent).
    let several = null;
    await step("several", async (s) => {
      const dir = path.dirname(path.resolve(fixture));
      const files = ["a2a-v03-task.json", path.basename(fixture), "agui-run.sse"].map((f) => path.join(dir, f));
      const p4 = await open("several", { bypassCSP: true });
      await p4.goto(new URL("/", base).href, { waitUntil: "load" });
      await p4.waitForFunction(() => document.getElementById("totals").textContent.trim() !== "");
      const input = await p4.$("#files");
      const [nav] = await Promise.all([
        p4.waitForNavigation({ waitUntil: "load", timeout: SLOW_MS }),
        input.uploadFile(...files),
      ]);
      check(nav && nav.ok(), `the case page answered ${nav && nav.status()}`);
      const m = new URL(p4.url()).pathname.match(/^\/cases\/([0-9a-f]{24})$/);
      if (!check(m, `after the upload the page is a case page, not ${p4.url()}`)) return;
      check(m[1] !== id, "the two files made a new case");
      await caseReady(p4);
      const c = await api("GET", `/v1/cases/${m[1]}`);
      equal(c.json.inputs.length, files.length, "the case's inputs");
      const names = c.json.inputs.map((i) => i.name);
      equal(names, files.map((f) => path.basename(f)), "the inputs' names");
      const bytes = files.map((f) => readFileSync(f, "utf8"));
      for (const k of bytes.keys()) {
        const got = await api("GET", `/v1/cases/${m[1]}/inputs/${k}`);
        check(got.text === bytes[k], `input ${k} is ${names[k]}, byte for byte`);
      }
      const r = (await api("GET", `/v1/cases/${m[1]}/report`)).json;
      equal(r.inputs.length, files.length, "the report's inputs");
      s.case = m[1];
      several = m[1];
      await p4.waitForSelector("#ruling .ruling-claim");
      s.shots = [await shot(p4, "three.png")];
      s.axe = await audit(p4, "case page of three transcripts");
      axeFailures(s.axe);
      await p4.close();
    });

    // (h) Junk is refused in the page, with the reader's message and where, and nothing is
    // saved: a file that is not JSON, an empty one, and 30 MB of text.
    await step("junk", async (s) => {
      const dir = mkdtempSync(path.join(os.tmpdir(), "recite-junk-"));
      const junk = [
        ["notes.txt", "These are my notes, not a transcript.\n", /malformed JSON/],
        ["empty.json", "", /empty input/],
        ["big.txt", "x".repeat(30 * 1024 * 1024), /malformed/],
      ];
      const before = (await api("GET", "/v1/cases?limit=1000")).json.count;
      const p5 = await open("junk", { bypassCSP: true });
      await p5.goto(new URL("/", base).href, { waitUntil: "load" });
      await p5.waitForFunction(() => document.getElementById("totals").textContent.trim() !== "");
      s.refused = [];
      for (const [name, body, says] of junk) {
        const file = path.join(dir, name);
        writeFileSync(file, body);
        await (await p5.$("#files")).uploadFile(file);
        await p5.waitForFunction((n) => {
          const e = document.querySelector("#status .error");
          return e && e.textContent.startsWith(`${n}:`);
        }, { timeout: SLOW_MS }, name);
        const text = await p5.$eval("#status .error", (e) => e.textContent);
        s.refused.push(text.slice(0, 200));
        check(says.test(text), `${name}: the reader's message in "${text.slice(0, 200)}"`);
        check(text.includes(name) && /line 1/.test(text), `${name}: where (the file, its line) in "${text.slice(0, 200)}"`);
        check(/nothing was saved/.test(text), `${name}: the page says nothing was saved`);
        equal(new URL(p5.url()).pathname, "/", `${name}: the page stays on the index`);
        equal((await api("GET", "/v1/cases?limit=1000")).json.count, before, `${name}: the ledger's cases`);
      }
      s.axe = await audit(p5, "index page, a file refused");
      axeFailures(s.axe);
      s.shots = [await shot(p5, "junk.png")];
      await p5.close();
      rmSync(dir, { recursive: true, force: true });
    });

    // (i) Delete, confirmed: the case and its inputs are gone, and its permalink says so.
    await step("delete", async (s) => {
      if (!check(several, "the several-files case to delete")) return;
      const before = (await api("GET", "/v1/cases?limit=1000")).json.count;
      const p6 = await open("delete", { bypassCSP: true });
      const href = new URL(`/cases/${several}`, base).href;
      await p6.goto(href, { waitUntil: "load" });
      await caseReady(p6);
      await p6.click("#delete");
      check(await p6.$eval("#delete-confirm", (e) => e.checkVisibility()), "deleting asks first (#delete-confirm shown)");
      equal((await api("GET", "/v1/cases?limit=1000")).json.count, before, "nothing deleted before the confirmation");
      s.axe = await audit(p6, "case page, asking to delete");
      axeFailures(s.axe);
      expectedAnswers.add(`404 ${href}`);
      const [nav] = await Promise.all([
        p6.waitForNavigation({ waitUntil: "load", timeout: SLOW_MS }),
        p6.click("#delete-yes"),
      ]);
      equal(nav && nav.status(), 404, "the deleted case's permalink answers 404");
      const gone = await p6.$eval("#gone", (e) => e.textContent).catch(() => "");
      check(gone.includes(several) && /deleted/.test(gone), `the permalink says the case is gone: "${gone}"`);
      equal((await api("GET", `/v1/cases/${several}`)).status, 404, "GET /v1/cases/ID after the delete");
      equal((await api("GET", `/v1/cases/${several}/inputs/0`)).status, 404, "its input after the delete");
      equal((await api("GET", "/v1/cases?limit=1000")).json.count, before - 1, "the ledger's cases after the delete");
      const found = await audit(p6, "the permalink of a deleted case");
      s.axe = [...s.axe, ...found];
      axeFailures(found);
      s.shots = [await shot(p6, "gone.png")];
      await p6.close();
    });
    // (j) Sign-in and sign-out on a server started with --token-file ($TOKEN_BASE, its token
    // $TOKEN): the form under its own policy (no console error: its CSP and favicon), a wrong
    // token refused, the right one lets the analyst in (a case opens), sign-out ends the session
    // (the case page asks to sign in again); axe on the form, blank and refusing, and on the
    // signed-in index.
    await step("signin", async (s) => {
      const token = process.env.TOKEN;
      if (!check(tokenBase && token, "TOKEN_BASE and TOKEN name the server with a token")) return;
      const at = (p) => new URL(p, tokenBase).href;
      const made = await fetch(at("/v1/cases?name=discrepant.json"), {
        method: "POST",
        headers: { authorization: `Bearer ${token}` },
        body: readFileSync("examples/citations/versant-w6-discrepant.json"),
        signal: AbortSignal.timeout(SLOW_MS),
      });
      if (!check(made.status === 201, `a case saved with the bearer token: ${made.status}`)) return;
      const caseId = (await made.json()).id;
      // Under the pages' own policies: a refused load or script is a console error, counted.
      const p = await open("signin", { bypassCSP: false });
      const first = await p.goto(at(`/cases/${caseId}`), { waitUntil: "load" });
      equal(new URL(p.url()).pathname, "/signin", "a case page without the session is sent to the form");
      check(first.ok() && first.headers()["content-security-policy"], "the form is sent with its CSP");
      check(await p.$("form[action='/signin'] input#token[type=password]"), "the form asks for the token");
      const favicon = await p.$eval("link[rel=icon]", (l) => l.href);
      const icon = await fetch(favicon);
      check(icon.ok && (icon.headers.get("content-type") || "").startsWith("image/svg+xml"), `its favicon ${favicon} answers ${icon.status}`);
      // A wrong token: 401 and the form again, saying so.
      expectedAnswers.add(`401 ${at("/signin")}`);
      await p.type("#token", `${token}-not`);
      const [wrong] = await Promise.all([p.waitForNavigation({ waitUntil: "load" }), p.click("form[action='/signin'] button[type=submit]")]);
      equal(wrong && wrong.status(), 401, "a wrong token is answered 401");
      const said = await p.$eval("[role=alert]", (e) => e.textContent).catch(() => "");
      check(/not this server's token/.test(said), `the form says the token was wrong: "${said}"`);
      check(!(await p.cookies(tokenBase)).some((c) => c.name === "recite_session"), "no session for a wrong token");
      s.shots = [await shot(p, "signin-refused.png")];
      // The right one: the index, signed in, with its sign-out button; the case opens.
      await p.type("#token", token);
      const [right] = await Promise.all([p.waitForNavigation({ waitUntil: "load" }), p.click("form[action='/signin'] button[type=submit]")]);
      check(right && right.ok(), `signed in, the index answered ${right && right.status()}`);
      equal(new URL(p.url()).pathname, "/", "signed in, the analyst is on the index");
      await p.waitForFunction(() => document.querySelectorAll("#cases tbody tr[data-case]").length > 0, { timeout: 60_000 });
      const session = (await p.cookies(tokenBase)).find((c) => c.name === "recite_session");
      check(session && session.httpOnly && session.sameSite === "Strict", `the session cookie: ${JSON.stringify(session)}`);
      check(session && !session.value.includes(token), "the cookie does not hold the token");
      equal(await p.evaluate(() => document.cookie), "", "the session cookie is out of the page's scripts' reach");
      const q = await open("signin-audit", { bypassCSP: true });
      await q.goto(at("/"), { waitUntil: "load" });
      await q.waitForFunction(() => document.querySelectorAll("#cases tbody tr[data-case]").length > 0, { timeout: 60_000 });
      const found = await audit(q, "index page, signed in");
      await q.close();
      // A page in the background gets no animation frames nor clicks in headless Chromium.
      await p.bringToFront();
      await p.goto(at(`/cases/${caseId}`), { waitUntil: "load" });
      await caseReady(p);
      equal(await p.$eval("header code", (e) => e.textContent), caseId, "signed in, the case page opens");
      check(await p.$("form.signout button"), "the case page has a Sign out button");
      // Its what-if listed and the likely alternative re-run (signed in, its API answers).
      await p.waitForFunction(() => document.querySelector("#whatif-claims .whatif-claim") && document.querySelector(".likely-result .badge"), { timeout: SLOW_MS });
      // Sign out: back to the form; the case page asks for the token again. (Chromium may swap
      // the page's main frame on this POST-redirect-redirect, which detaches the frame a
      // waitForNavigation watches: the page's address is polled instead.)
      await p.click("form.signout button");
      const until = Date.now() + 60_000;
      while (new URL(p.url()).pathname !== "/signin" && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
      equal(new URL(p.url()).pathname, "/signin", "signed out, the form");
      await p.waitForFunction(() => document.readyState === "complete" && document.getElementById("token"), { timeout: 60_000 });
      check(!(await p.cookies(tokenBase)).some((c) => c.name === "recite_session"), "signed out, no session cookie");
      await p.goto(at(`/cases/${caseId}`), { waitUntil: "load" });
      equal(new URL(p.url()).pathname, "/signin", "signed out, the case page asks to sign in again");
      // The form audited, blank and refusing a token.
      await p.close();
      const f = await open("signin-form-audit", { bypassCSP: true });
      await f.goto(at("/signin"), { waitUntil: "load" });
      found.push(...(await audit(f, "sign-in form")));
      await f.type("#token", "wrong");
      await Promise.all([f.waitForNavigation({ waitUntil: "load" }), f.click("form[action='/signin'] button[type=submit]")]);
      found.push(...(await audit(f, "sign-in form, a wrong token refused")));
      s.axe = found;
      axeFailures(found);
      s.shots.push(await shot(f, "signin.png"));
      await f.close();
    });

    // (g2) Probe an A2A agent from the index page's field (POST /v1/probe): the case it opens
    // holds the agent's reply, and its report starts with the agent's card. $PROBE_AGENT is an
    // agent the server was started allowed to call (tests/it/browser.rs), when one could run.
    if (process.env.PROBE_AGENT) {
      await step("probe", async (s) => {
        const p5 = await open("probe", { bypassCSP: false });
        await p5.goto(new URL("/", base).href, { waitUntil: "load" });
        const field = await p5.$("#probe-url");
        if (!check(field, "the index page has a URL field #probe-url")) return;
        await field.type(process.env.PROBE_AGENT);
        const [nav] = await Promise.all([
          p5.waitForNavigation({ waitUntil: "load", timeout: SLOW_MS }),
          p5.click("#probe-form button[type=submit]"),
        ]);
        check(nav && nav.ok(), `the probe's case page answered ${nav && nav.status()}`);
        const m = new URL(p5.url()).pathname.match(/^\/cases\/([0-9a-f]{24})$/);
        if (!check(m, `after the probe the page is a case page, not ${p5.url()}`)) return;
        await caseReady(p5);
        const probed = (await api("GET", `/v1/cases/${m[1]}/report`)).json;
        equal(probed.inputs[0].file, "agent-card.json", "the probe's report starts with the agent's card");
        equal(probed.inputs[1].file, "01-funnel.sse", "then the call's reply");
        const input0 = await api("GET", `/v1/cases/${m[1]}/inputs/0`);
        check(input0.text.startsWith("data: "), "the case's input is the agent's stream as received");
        s.case = m[1];
        s.shots = [await shot(p5, "probe-case.png")];
        await p5.close();
      });
    }
  } catch (e) {
    steps.push({ step: "run", ok: false, failures: [String(e && e.message ? e.message : e)] });
  }

  for (const t of created) {
    if (t.type() === "page" && !opened.has(t) && t.url() !== "about:blank") {
      requests.errors.push(`a page the test did not open: ${t.url()}`);
    }
  }

  // (h) No request outside the server, no failed answer, no script error.
  await step("requests", async (s) => {
    s.count = requests.seen.length;
    check(requests.seen.length > 0, "no request was seen: the watcher watched nothing");
    check(requests.outside.length === 0, `requests outside ${origin}: ${requests.outside.join("; ")}`);
    check(requests.failed_answers.length === 0, `answers >= 400: ${requests.failed_answers.join("; ")}`);
    check(requests.errors.length === 0, `errors: ${requests.errors.join("; ")}`);
  });

  await browser.close();
  rmSync(profile, { recursive: true, force: true });
  out.ok = steps.every((s) => s.ok);
  writeFileSync(path.join(shots, "result.json"), `${JSON.stringify(out, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(out)}\n`);
  process.exit(out.ok ? 0 : 1);
}

// CSS.escape is the page's; this is the part of it an attribute value in double quotes needs.
function CSS_escape(s) {
  return s.replace(/["\\]/g, "\\$&");
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(2);
});
