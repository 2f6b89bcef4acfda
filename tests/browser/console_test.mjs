// Drives the web console in Debian's chromium (headless, via playwright-core) against a
// running infera. Run by tests/integration/test_console.py, which starts the server
// (explicit model control, an admin token) and checks the JSON this prints last.
//
//   node console_test.mjs <base url> <admin token> <image file> <expected top label> [plain base url]
//                         [keyed base url] [API key]
// The first server runs in explicit mode with the admin token and serves identity_fp32,
// resnet18_classify (+ its steps), fortune, `canaried` (versions 1 and 2, a canary) and
// `queued` (fault injection: 30 ms per execution, one instance);
// the optional second one has no admin API (model control mode none).
//   SCREENSHOT_DIR=docs/images node console_test.mjs ...   also writes console-*.png
//
// Every step waits on a condition in the page (bounded by STEP_TIMEOUT), never on a
// fixed sleep. Exits non-zero naming the failed step.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [base, token, imagePath, expectedTopLabel, plainBase, keyedBase, apiKey] = process.argv.slice(2);
const STEP_TIMEOUT = 15000;
const shots = process.env.SCREENSHOT_DIR;
const results = {};
let step = 'launch';

async function api(path, init) {
  const r = await fetch(base + path, init);
  return { status: r.status, body: await r.json().catch(() => null) };
}

// WCAG contrast of every visible element's own text against its effective background
// (the nearest ancestor with an opaque background); returns the ones under 4.5:1.
function lowContrast(page) {
  return page.evaluate(() => {
    const rgb = (c) => (c.match(/[\d.]+/g) || []).map(Number);
    const lum = ([r, g, b]) => {
      const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const background = (e) => {
      for (; e; e = e.parentElement) {
        const c = rgb(getComputedStyle(e).backgroundColor);
        if (c.length === 3 || (c.length === 4 && c[3] === 1)) return c.slice(0, 3);
      }
      return [255, 255, 255];
    };
    const bad = [];
    for (const e of document.querySelectorAll('body *')) {
      const own = [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
      if (!own || !e.getClientRects().length || e.closest('[hidden]')) continue;
      const a = lum(rgb(getComputedStyle(e).color).slice(0, 3)), b = lum(background(e));
      const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
      if (ratio < 4.5) bad.push(`${e.tagName}#${e.id}.${e.className} '${e.textContent.trim().slice(0, 20)}' ${ratio.toFixed(2)}`);
    }
    return bad;
  });
}

async function shoot(page, name) {
  if (shots) await page.screenshot({ path: join(shots, `console-${name}.png`), fullPage: true });
}

const profile = mkdtempSync(join(tmpdir(), 'infera-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1280, height: 900 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const consoleErrors = [];
try {
  const page = context.pages()[0] || await context.newPage();
  page.setDefaultTimeout(STEP_TIMEOUT);
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(`${step}: ${m.text()}`); });
  page.on('pageerror', (e) => consoleErrors.push(`${step}: uncaught ${e.message}`));

  // 1. The page loads from / (redirect) and lists what the repository index lists.
  step = 'load';
  const response = await page.goto(base + '/');
  if (!page.url().endsWith('/console')) throw new Error(`/ did not land on /console: ${page.url()}`);
  if (!response.headers()['content-security-policy']) throw new Error('no Content-Security-Policy');
  await page.waitForSelector('#models tbody tr[data-model]');
  const index = (await api('/v2/repository/index', { method: 'POST', body: '{}' })).body;
  const want = index.map((m) => `${m.name}|${m.version ?? ''}|${m.state}`).sort();
  await page.waitForFunction((w) => {
    const rows = [...document.querySelectorAll('#models tbody tr[data-model]')].map((tr) =>
      `${tr.dataset.model}|${tr.dataset.version}|${tr.querySelector('td[data-col="state"] span').textContent}`);
    return JSON.stringify(rows.sort()) === JSON.stringify(w);
  }, want);
  results.models = want.length;

  // The list is grouped: the pipeline, then its steps (nested), LLMs, other models; each
  // row has its kind and backend; no traffic reads "—", not 0.00.
  step = 'groups';
  await page.waitForFunction(() => document.querySelector('#models tr[data-model="fortune"] td[data-col="kind"]')
    ?.textContent === 'llm' && document.querySelector('#models tr[data-model="resnet18"] td.step'));
  const table = await page.evaluate(() => [...document.querySelectorAll('#models tbody tr')].map((tr) =>
    tr.classList.contains('group') ? `# ${tr.textContent}` :
      `${tr.dataset.model}|${tr.querySelector('td[data-col="kind"]').textContent}|` +
      `${tr.querySelector('td[data-col="backend"]').textContent}|${tr.querySelector('td.step') ? 'step' : ''}|` +
      `${tr.querySelector('td[data-col="p99"]').textContent}`));
  results.table = table;
  const at = (prefix) => table.findIndex((r) => r.startsWith(prefix));
  const expectRow = (name, kind, backend, stepRow) => {
    const r = table[at(`${name}|`)];
    if (!r || !r.startsWith(`${name}|${kind}|${backend}|${stepRow ? 'step' : ''}|`)) {
      throw new Error(`row ${name}: '${r}', want kind ${kind} backend ${backend}${stepRow ? ' as a step' : ''}`);
    }
  };
  expectRow('resnet18_classify', 'ensemble', 'ensemble', false);
  expectRow('resnet18_preprocess', 'image', 'image_preprocess', true);
  expectRow('fortune', 'llm', 'llm', false);
  expectRow('identity_fp32', 'tensor', 'identity', false);
  const order = ['# Pipelines', 'resnet18_classify|', 'resnet18_preprocess|', 'resnet18|', 'resnet18_top5|',
    '# LLMs', 'fortune|', '# Models', 'identity_fp32|'].map(at);
  if (order.some((i, k) => i < 0 || (k > 0 && i <= order[k - 1]))) throw new Error(`grouping: ${table.join(' / ')}`);
  if (!table[at('identity_fp32|')].endsWith('|—')) throw new Error(`P99 without traffic: ${table[at('identity_fp32|')]}`);

  // Accessibility basics: every field has a label, controls are buttons, Tab reaches them.
  step = 'a11y';
  const unlabelled = await page.evaluate(() => [...document.querySelectorAll('input, textarea, select')]
    .filter((e) => !e.closest('[hidden]') && e.labels.length === 0).map((e) => e.id));
  if (unlabelled.length) throw new Error(`fields without a label: ${unlabelled}`);
  const lowOnLoad = await lowContrast(page);
  if (lowOnLoad.length) throw new Error(`text under 4.5:1 contrast: ${lowOnLoad.join('; ')}`);
  await page.keyboard.press('Tab');
  const focused = await page.evaluate(() => document.activeElement.tagName);
  if (!['BUTTON', 'INPUT', 'A'].includes(focused)) throw new Error(`first Tab stop is a ${focused}`);
  // Keyboard focus is visible, and a model opens from the keyboard alone.
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  if (outline === 'none') throw new Error('no visible focus outline');
  await page.focus('button.link[data-model="identity_fp32"]');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#detail:not([hidden])');
  await shoot(page, 'models');

  // 2. A chart updates under load.
  step = 'chart';
  await page.click('button.link[data-model="identity_fp32"]');
  if (await page.isVisible('.tabs button[data-tab="chat"]')) throw new Error('a chat tab for a non-LLM model');
  await page.waitForFunction(() => /requests: \d+/.test(document.querySelector('#chart-updates').textContent));
  const before = await page.evaluate(() => ({
    updates: parseInt(document.querySelector('#chart-updates').textContent.match(/updates: (\d+)/)[1], 10),
    pixels: document.querySelector('#chart-throughput').toDataURL(),
  }));
  let loading = true;
  const load = (async () => {
    let sent = 0;
    while (loading) {
      await fetch(base + '/v2/models/identity_fp32/infer', { method: 'POST',
        body: JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [2], data: [1, 2] }] }) });
      sent += 1;
    }
    return sent;
  })();
  try {
    await page.waitForFunction((b) => {
      const text = document.querySelector('#chart-updates').textContent;
      const updates = parseInt(text.match(/updates: (\d+)/)[1], 10);
      const rate = parseFloat(document.querySelector('#models tr[data-model="identity_fp32"] td[data-col="rate"]').textContent);
      return updates >= b.updates + 2 && rate > 0 &&
        document.querySelector('#chart-throughput').toDataURL() !== b.pixels;
    }, before);
  } finally {
    loading = false;
  }
  results.load_requests = await load;
  // Both axes are labelled: the value axis in the chart's unit, the time axis in seconds.
  const axes = await page.evaluate(() => ['throughput', 'latency', 'breakdown'].map((c) => {
    const d = document.querySelector(`#chart-${c}`).dataset;
    return `${d.unit}/${d.spanSeconds}`;
  }));
  if (JSON.stringify(axes) !== '["req/s/59","ms/59","ms/59"]') throw new Error(`chart axes ${axes}`);
  const p99 = await page.textContent('#models tr[data-model="identity_fp32"] td[data-col="p99"]');
  if (!(parseFloat(p99) > 0)) throw new Error(`P99 under traffic reads '${p99}'`);
  await shoot(page, 'charts');

  // 3. An inference round-trips from the playground (identity: out = in).
  step = 'playground';
  await page.click('.tabs button[data-tab="playground"]');
  await page.waitForSelector('#playground-form fieldset[data-input="INPUT0"]');
  // identity_fp32 has max_batch_size 0: no rows control, its one -1 dimension is what
  // the values make it; the fieldset labels name, datatype and shape.
  const identityForm = await page.evaluate(() => ({
    rows: !!document.querySelector('#pg-rows'), dims: document.querySelectorAll('#playground-form input[data-dim]').length,
    fields: [...document.querySelectorAll('#playground-form fieldset dd')].map((d) => `${d.dataset.field}=${d.textContent}`) }));
  if (identityForm.rows || identityForm.dims || identityForm.fields.join(' ') !== 'name=INPUT0 datatype=FP32 shape=[-1]') {
    throw new Error(`identity form ${JSON.stringify(identityForm)}`);
  }
  await page.fill('#playground-form textarea[data-role="data"]', '1.5, 2, -3');
  await page.click('#playground-run');
  await page.waitForSelector('#playground-outputs');
  const out = await page.textContent('#playground-outputs .output-data');
  if (JSON.stringify(JSON.parse(out)) !== '[1.5,2,-3]') throw new Error(`identity answered ${out}`);
  results.playground = out;
  await shoot(page, 'playground');

  // 4. Image classification: a JPEG through the resnet18_classify pipeline.
  step = 'image';
  await page.click('button.link[data-model="resnet18_classify"]');
  await page.waitForSelector('#playground-form fieldset[data-input="IMAGE"] input[data-role="file"]');
  // max_batch_size 8: the batch is a rows control (1), the fields show one row's shape.
  const classifyForm = await page.evaluate(() => [document.querySelector('#pg-rows').value,
    document.querySelector('#playground-form dd[data-field="shape"]').textContent]);
  if (classifyForm.join(' ') !== '1 [1]') throw new Error(`classify form ${classifyForm}`);
  await page.setInputFiles('#playground-form input[type="file"]', imagePath);
  await page.waitForSelector('#playground-form img.preview:not([hidden])');  // the upload's preview
  await page.click('#playground-run');
  await page.waitForFunction(() => {
    const row = [...document.querySelectorAll('#playground-outputs tbody tr')].find((r) => r.cells[0].textContent === 'LABELS');
    return row && row.cells[3].textContent.length > 2;
  });
  const labels = await page.evaluate(() => JSON.parse([...document.querySelectorAll('#playground-outputs tbody tr')]
    .find((r) => r.cells[0].textContent === 'LABELS').cells[3].textContent));
  if (labels[0] !== expectedTopLabel) throw new Error(`top label ${labels[0]}, the server says ${expectedTopLabel}`);
  results.image_top = labels[0];
  // ... and shown as a ranked label / score table (labels and scores paired).
  const topk = await page.evaluate(() => [...document.querySelectorAll('#playground-topk tbody tr')]
    .map((tr) => [tr.cells[1].textContent, Number(tr.cells[2].textContent)]));
  if (topk.length !== labels.length || topk[0][0] !== expectedTopLabel ||
      topk.some(([, v], i) => i > 0 && v > topk[i - 1][1])) throw new Error(`top-k table ${JSON.stringify(topk)}`);
  results.topk_rows = topk.length;
  await shoot(page, 'image');

  // 4b. Detection: the JPEG as the detector's FP32 [3, 128, 128] row; its boxes are drawn
  //     over the picture, one labelled box per detection (NUM_DETECTIONS), at DET_BOXES.
  step = 'detection';
  await page.click('button.link[data-model="detector"]');
  await page.waitForSelector('#playground-form input[data-role="picture"]');
  const detectorShape = await page.textContent('#playground-form dd[data-field="shape"]');
  if (detectorShape !== '[3, 128, 128]') throw new Error(`detector row shape ${detectorShape}`);
  await page.setInputFiles('#playground-form input[data-role="picture"]', imagePath);
  await page.waitForSelector('#playground-form canvas.pg-picture');
  const outputOf = (name) => page.evaluate((n) => {
    const tr = [...document.querySelectorAll('#playground-outputs tbody tr')].find((r) => r.cells[0].textContent === n);
    return { shape: tr.cells[2].textContent, data: JSON.parse(tr.cells[3].textContent) };
  }, name);
  await page.click('#playground-run');
  await page.waitForSelector('#playground-detections');
  const numDetections = (await outputOf('NUM_DETECTIONS')).data[0];
  const detBoxes = (await outputOf('DET_BOXES')).data;
  const detClasses = (await outputOf('DET_CLASSES')).data;
  const drawnBoxes = await page.evaluate(() => [...document.querySelectorAll('#playground-boxes g.det')].map((g) => {
    const r = g.querySelector('rect');
    return { box: ['x', 'y', 'width', 'height'].map((a) => Number(r.getAttribute(a))),
      cls: g.dataset.class, label: g.querySelector('text').textContent };
  }));
  const hasPicture = await page.evaluate(() => !!document.querySelector('#playground-boxes image'));
  if (numDetections < 1 || drawnBoxes.length !== numDetections || !hasPicture) {
    throw new Error(`detections: ${numDetections} answered, ${drawnBoxes.length} drawn, picture ${hasPicture}`);
  }
  drawnBoxes.forEach((d, k) => {
    const [x1, y1, x2, y2] = detBoxes.slice(4 * k, 4 * k + 4);
    const want = [x1, y1, x2 - x1, y2 - y1];
    if (d.box.some((v, i) => Math.abs(v - want[i]) > 1e-3) || d.cls !== String(detClasses[k]) ||
        !d.label.startsWith(`class ${detClasses[k]} `)) {
      throw new Error(`detection ${k} drawn ${JSON.stringify(d)}, answered ${want} class ${detClasses[k]}`);
    }
  });
  results.detections = numDetections;
  await shoot(page, 'detection');
  // Two rows: the batch dimension of every output is 2.
  await page.fill('#pg-rows', '2');
  await page.click('#playground-run');
  await page.waitForFunction(() => {
    const tr = [...document.querySelectorAll('#playground-outputs tbody tr')].find((r) => r.cells[0].textContent === 'DET_SCORES');
    return tr && tr.cells[2].textContent === '[2, 20]';
  });

  // 4c. An LLM in the playground points to the chat tab (infer cannot stream tokens).
  step = 'playground-llm';
  await page.click('button.link[data-model="fortune"]');
  await page.waitForSelector('#playground-llm');
  await page.click('#playground-to-chat');
  await page.waitForSelector('#tab-chat:not([hidden])');

  // 5. The chat streams a reply token by token (several DOM updates).
  step = 'chat';
  await page.click('button.link[data-model="fortune"]');
  await page.click('.tabs button[data-tab="chat"]');
  await page.fill('#chat-max-tokens', '24');
  await page.fill('#chat-temperature', '0');
  await page.evaluate(() => {
    window.__chatUpdates = 0;
    new MutationObserver((records) => { window.__chatUpdates += records.length; })
      .observe(document.querySelector('#chat-log'), { childList: true, subtree: true, characterData: true });
  });
  await page.fill('#chat-system', 'You are a fortune teller.');
  await page.click('#chat-send');
  await page.waitForSelector('#chat-log .assistant[data-done="true"]');
  results.chat_updates = await page.evaluate(() => window.__chatUpdates);
  results.chat_text = await page.textContent('#chat-log .assistant');
  if (results.chat_updates < 4 || !results.chat_text.trim()) {
    throw new Error(`chat: ${results.chat_updates} updates, text '${results.chat_text}'`);
  }
  // Per-reply TTFT and tokens/s under the reply.
  const stats = await page.evaluate(() => ({ ...document.querySelector('#chat-log .chat-stats').dataset }));
  if (!(Number(stats.ttftMs) > 0 && Number(stats.tokensPerS) > 0 && Number(stats.tokens) >= 1)) {
    throw new Error(`reply stats ${JSON.stringify(stats)}`);
  }
  results.chat_stats = stats;
  // Multi-turn: the second message carries the system prompt and the first exchange.
  await page.fill('#chat-input', 'And another one.');
  const [second] = await Promise.all([
    page.waitForRequest((r) => r.url().endsWith('/v1/chat/completions')),
    page.click('#chat-send'),
  ]);
  const sent = second.postDataJSON().messages.map((m) => `${m.role}:${m.content}`);
  const wantSent = ['system:You are a fortune teller.', 'user:Tell me a fortune.',
    `assistant:${results.chat_text}`, 'user:And another one.'];
  if (JSON.stringify(sent) !== JSON.stringify(wantSent)) throw new Error(`second turn sent ${JSON.stringify(sent)}`);
  await page.waitForFunction(() => document.querySelectorAll('#chat-log .assistant[data-done="true"]').length === 2);
  // Stop aborts the request in flight: the server's answer is held back until Stop is
  // pressed, so the abort is certain to happen before the stream ends.
  let releaseChat;
  const chatGate = new Promise((resolve) => { releaseChat = resolve; });
  await page.route('**/v1/chat/completions', async (route) => { await chatGate; await route.continue().catch(() => {}); });
  await page.fill('#chat-input', 'A third.');
  await Promise.all([page.waitForRequest((r) => r.url().endsWith('/v1/chat/completions')), page.click('#chat-send')]);
  if (!(await page.isEnabled('#chat-stop'))) throw new Error('Stop is disabled while a reply streams');
  await page.click('#chat-stop');
  await page.waitForFunction(() => document.querySelectorAll('#chat-log .assistant[data-done="true"]').length === 3);
  releaseChat();
  await page.unroute('**/v1/chat/completions');
  results.chat_stopped = await page.evaluate(() => document.querySelectorAll('#chat-log .assistant')[2].dataset.stopped);
  if (results.chat_stopped !== 'true') throw new Error('Stop did not abort the reply');
  if (!(await page.isEnabled('#chat-send'))) throw new Error('Send stays disabled after Stop');
  await shoot(page, 'chat');
  if (shots) {  // the LLM's charts (tokens/s, TTFT/TPOT, KV cache) under load, for the docs only
    await page.click('.tabs button[data-tab="charts"]');
    await page.waitForFunction(() => !document.querySelector('#chart-tokens').closest('figure').hidden);
    let generating = true;
    const generate = async () => {
      while (generating) {
        await fetch(base + '/v1/chat/completions', { method: 'POST', headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ model: 'fortune', max_tokens: 48, messages: [{ role: 'user', content: 'a fortune' }] }) });
      }
    };
    const generators = [generate(), generate(), generate()];
    await page.waitForFunction(() => parseInt(document.querySelector('#chart-updates').textContent.match(/updates: (\d+)/)[1], 10) >= 12);
    await shoot(page, 'llm');
    generating = false;
    await Promise.all(generators);
  }
  if (consoleErrors.length) throw new Error(`console errors: ${consoleErrors.join(' | ')}`);

  // 6. Admin actions need the token: refused without it, unload + load with it.
  step = 'admin';
  const row = (name) => `#models tr[data-model="${name}"]`;
  const stateOf = (name) => page.evaluate((sel) => document.querySelector(`${sel} td[data-col="state"] span`)?.textContent, row(name));
  await page.waitForSelector('#admin-token');
  // Unload asks first; cancelling sends nothing.
  const adminRequests = [];
  page.on('request', (r) => { if (r.url().includes('/v2/repository/models/')) adminRequests.push(r.url()); });
  page.once('dialog', (d) => d.dismiss());
  await page.click(`${row('identity_fp32')} button[data-action="unload"]`);
  await page.waitForFunction(() => document.querySelector('#admin-result').textContent === 'cancelled');
  if (adminRequests.length || (await stateOf('identity_fp32')) !== 'READY') {
    throw new Error(`a cancelled unload sent ${adminRequests} / state ${await stateOf('identity_fp32')}`);
  }
  results.unload_cancelled = true;
  page.on('dialog', (d) => { results.dialogs = (results.dialogs || 0) + 1; d.accept(); });
  await page.click(`${row('identity_fp32')} button[data-action="unload"]`);
  await page.waitForFunction(() => /refused \(401\)/.test(document.querySelector('#admin-result').textContent));
  results.without_token = await page.textContent('#admin-result');
  if ((await stateOf('identity_fp32')) !== 'READY') throw new Error('unload without the token changed the model');
  await page.fill('#admin-token', token);
  await page.click(`${row('identity_fp32')} button[data-action="unload"]`);
  await page.waitForFunction((sel) => {
    const span = document.querySelector(`${sel} td[data-col="state"] span`);
    return span && span.textContent !== 'READY';
  }, row('identity_fp32'));
  results.after_unload = await stateOf('identity_fp32');
  await shoot(page, 'admin');
  await page.click(`${row('identity_fp32')} button[data-action="load"]`);
  await page.waitForFunction((sel) => document.querySelector(`${sel} td[data-col="state"] span`)?.textContent === 'READY',
    row('identity_fp32'));
  results.after_load = 'READY';
  // The canary's Promote button (with the token): the verdict becomes PROMOTED.
  await page.click(`${row('canaried')} button[data-action="promote"]`);
  await page.waitForFunction((sel) => /PROMOTED/.test(document.querySelector(`${sel} td[data-col="canary"]`)?.textContent || ''),
    row('canaried'));
  results.canary_after_promote = await page.textContent(`${row('canaried')} td[data-col="canary"]`);
  // The token never reached a URL or the browser's storage.
  const leaked = await page.evaluate((t) => location.href.includes(t) ||
    JSON.stringify({ ...localStorage }).includes(t) || JSON.stringify({ ...sessionStorage }).includes(t), token);
  if (leaked) throw new Error('the admin token was stored or put in a URL');

  // 7. The diagnosis panel against the real endpoint. The load shape of
  // test_diagnosis.py's queueing case: `queued` (fault injection, 30 ms per execution,
  // one instance) under 8 concurrent clients, so requests wait for the instance.
  step = 'diagnosis';
  const diagnosisPath = '/v2/models/queued/diagnosis';
  const infer = () => fetch(base + '/v2/models/queued/infer', { method: 'POST',
    body: JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [2], data: [1, 2] }] }) })
    .then(async (r) => { if (r.status !== 200) throw new Error(`queued answered ${r.status}: ${await r.text()}`); });
  await Promise.all(Array.from({ length: 8 }, async () => { for (let i = 0; i < 10; i += 1) await infer(); }));
  const diagBefore = (await api(diagnosisPath)).body;
  if (!diagBefore || diagBefore.bottleneck.class !== 'queueing') {
    throw new Error(`the load shape did not produce queueing: ${JSON.stringify(diagBefore)}`);
  }
  await page.click('button.link[data-model="queued"]');
  await page.click('.tabs button[data-tab="diagnosis"]');  // opening the tab fetches it
  await page.waitForFunction(() => document.querySelector('#diagnosis-view').dataset.model === 'queued' &&
    document.querySelector('#diagnosis-class'));
  // Keyboard only: untick auto-refresh (Space), then Refresh (Enter); the answer the
  // page received is what the panel must show.
  await page.focus('#diagnosis-auto');
  await page.keyboard.press('Space');
  if (await page.isChecked('#diagnosis-auto')) throw new Error('Space did not untick auto-refresh');
  const seq0 = await page.evaluate(() => Number(document.querySelector('#diagnosis-view').dataset.seq));
  await page.focus('#diagnosis-refresh');
  const [answer] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith(`${diagnosisPath}?window=60`)),
    page.keyboard.press('Enter'),
  ]);
  const shown = await answer.json();
  await page.waitForFunction((s) => {
    const view = document.querySelector('#diagnosis-view');
    return Number(view.dataset.seq) > s && view.getAttribute('aria-busy') === 'false';
  }, seq0);
  const diagAfter = (await api(diagnosisPath)).body;
  const panel = await page.evaluate(() => ({
    class: document.querySelector('#diagnosis-class').textContent,
    summary: document.querySelector('#diagnosis-summary').textContent,
    window: (({ textContent, dataset }) => ({ text: textContent, requests: dataset.requests,
      seconds: dataset.windowSeconds }))(document.querySelector('#diagnosis-window')),
    status: document.querySelector('#diagnosis-status').textContent,
    evidence: [...document.querySelectorAll('#diagnosis-evidence tbody tr')].map((tr) => ({
      name: tr.cells[0].textContent, value: JSON.parse(tr.cells[1].dataset.value),
      unit: tr.cells[1].dataset.unit, detail: tr.cells[2].textContent })),
    actions: [...document.querySelectorAll('#diagnosis-actions li')].map((li) => ({
      action: li.querySelector('.action').textContent,
      expected_effect: li.querySelector('.effect').textContent.replace(/^ — /, '') })),
  }));
  // The panel equals the answer it received, field by field.
  const wantPanel = {
    class: shown.bottleneck.class, summary: shown.bottleneck.summary,
    evidence: shown.evidence.map((e) => ({ name: e.name, value: e.value, unit: e.unit || '', detail: e.detail || '' })),
    actions: shown.actions.map((a) => ({ action: a.action, expected_effect: a.expected_effect || '' })),
  };
  const got = { class: panel.class, summary: panel.summary, evidence: panel.evidence, actions: panel.actions };
  if (JSON.stringify(got) !== JSON.stringify(wantPanel)) {
    throw new Error(`panel ${JSON.stringify(got)} != endpoint ${JSON.stringify(wantPanel)}`);
  }
  if (panel.window.requests !== String(shown.requests) || panel.window.seconds !== String(shown.window_seconds) ||
      !panel.window.text.startsWith(`${shown.requests} requests over ${shown.window_seconds.toFixed(1)} s`)) {
    throw new Error(`window line ${JSON.stringify(panel.window)} for ${shown.requests} requests / ${shown.window_seconds} s`);
  }
  if (!panel.status.includes('queueing')) throw new Error(`status line '${panel.status}'`);
  // The stage breakdown the CLI prints: each stage's mean equals the answer's.
  const stageRows = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('#diagnosis-stages tbody tr')]
    .map((tr) => [tr.dataset.stage, Number(tr.cells[1].dataset.us)])));
  for (const [stage, us] of Object.entries(stageRows)) {
    const want = stage === 'server' ? shown.stages.server_us : shown.stages[stage].mean_us;
    if (us !== want) throw new Error(`stage ${stage}: panel ${us} us, answer ${want}`);
  }
  if (!('queue' in stageRows && 'compute_infer' in stageRows && 'server' in stageRows)) {
    throw new Error(`stage rows ${JSON.stringify(stageRows)}`);
  }
  results.diagnosis_stages = Object.keys(stageRows);
  // ... and the endpoint asked independently just before and after says the same: the
  // same class, evidence and actions; each figure between the two (utilisation and
  // rate fall as the window grows after the load; the shares stay).
  const shape = (d) => JSON.stringify([d.bottleneck.class, d.evidence.map((e) => [e.name, e.unit]),
    d.actions.map((a) => a.action)]);
  if (shape(diagBefore) !== shape(shown) || shape(diagAfter) !== shape(shown)) {
    throw new Error(`the endpoint changed its answer: ${shape(diagBefore)} / ${shape(shown)} / ${shape(diagAfter)}`);
  }
  shown.evidence.forEach((e, i) => {
    const a = diagBefore.evidence[i].value, b = diagAfter.evidence[i].value;
    const lo = Math.min(a, b), hi = Math.max(a, b), slack = 0.02 * Math.max(Math.abs(lo), Math.abs(hi));
    if (e.value < lo - slack || e.value > hi + slack) {
      throw new Error(`${e.name} ${e.value} outside [${lo}, ${hi}] of the endpoint's answers around it`);
    }
  });
  if (shown.requests !== 80) throw new Error(`${shown.requests} requests in the window, 80 sent`);
  // Auto-refresh back on (Space): a periodic fetch redraws the panel without a click.
  const seq1 = await page.evaluate(() => Number(document.querySelector('#diagnosis-view').dataset.seq));
  await page.focus('#diagnosis-auto');
  await page.keyboard.press('Space');
  await page.waitForFunction((s) => Number(document.querySelector('#diagnosis-view').dataset.seq) > s, seq1);
  results.diagnosis = { class: panel.class, evidence: panel.evidence.map((e) => e.name),
    actions: panel.actions.map((a) => a.action), requests: shown.requests, auto_refreshed: true };
  await shoot(page, 'diagnosis');
  // A shorter window: the panel asks for it and shows the span the server covered.
  await page.selectOption('#diagnosis-window-select', '10');
  await page.waitForFunction(() => {
    const w = document.querySelector('#diagnosis-window');
    return w && Number(w.dataset.windowSeconds) <= 10.5;
  });
  await page.selectOption('#diagnosis-window-select', '60');
  // A late answer for a model no longer selected is dropped: identity_fp32's diagnosis is
  // held in the network until queued has been selected again, then let through.
  let release;
  const gate = new Promise((resolve) => { release = resolve; });
  let heldResolve;
  const held = new Promise((resolve) => { heldResolve = resolve; });
  await page.route('**/v2/models/identity_fp32/diagnosis*', async (route) => {
    heldResolve();
    await gate;
    await route.continue();
  });
  await page.evaluate(() => {
    window.__diagnosisModels = [];
    // Every value data-model held (each record's old value): the models drawn in between.
    new MutationObserver((records) => records.forEach((m) => window.__diagnosisModels.push(m.oldValue)))
      .observe(document.querySelector('#diagnosis-view'),
        { attributes: true, attributeFilter: ['data-model'], attributeOldValue: true });
  });
  await page.click('button.link[data-model="identity_fp32"]');
  await held;  // the panel asked for identity_fp32's diagnosis; it waits in the network
  await page.click('button.link[data-model="queued"]');
  const identityAnswer = page.waitForResponse((r) => r.url().includes('/v2/models/identity_fp32/diagnosis'));
  release();
  await identityAnswer;
  await page.waitForFunction(() => document.querySelector('#diagnosis-view').dataset.model === 'queued' &&
    document.querySelector('#diagnosis-class')?.textContent === 'queueing');
  await page.unroute('**/v2/models/identity_fp32/diagnosis*');
  const drawn = await page.evaluate(() => window.__diagnosisModels);
  if (drawn.includes('identity_fp32')) throw new Error(`a stale answer was drawn: ${drawn}`);
  results.diagnosis.stale_dropped = true;
  const lowLater = await lowContrast(page);
  if (lowLater.length) throw new Error(`text under 4.5:1 contrast: ${lowLater.join('; ')}`);
  // Only the refusals this test provoked may appear as failed loads.
  const unexpected = consoleErrors.filter((e) => !/status of (401|404)/.test(e));
  if (unexpected.length) throw new Error(`console errors: ${unexpected.join(' | ')}`);

  // 480 px wide (a phone): the page never scrolls sideways on any tab; the model table
  // scrolls inside its own box.
  step = 'narrow';
  await page.setViewportSize({ width: 480, height: 900 });
  results.narrow = {};
  for (const tab of ['diagnosis', 'charts', 'playground', 'config']) {
    await page.click(`.tabs button[data-tab="${tab}"]`);
    await page.waitForSelector(`#tab-${tab}:not([hidden])`);
    const widths = await page.evaluate(() => ({ page: document.scrollingElement.scrollWidth,
      table: document.querySelector('.table-scroll').clientWidth }));
    results.narrow[tab] = widths.page;
    if (widths.page > 481 || widths.table > 480) throw new Error(`at 480 px the ${tab} tab is ${JSON.stringify(widths)} wide`);
  }
  await shoot(page, 'narrow');
  await page.setViewportSize({ width: 1280, height: 900 });

  // 8. A server without the admin API: no admin buttons, no token field.
  if (plainBase) {
    step = 'no-admin';
    await page.goto(plainBase + '/console');
    await page.waitForFunction(() => /control mode none/.test(document.querySelector('#server-status').textContent));
    await page.waitForSelector('#models tbody tr');
    results.plain_action_buttons = await page.locator('#models button[data-action]').count();
    if (results.plain_action_buttons !== 0) throw new Error('admin buttons without the admin API');
    if (await page.isVisible('#admin-token')) throw new Error('token field without an admin token');
  }

  // 9. A server with API keys: the stream is refused until a key is typed, then the page
  //    lists the models and its requests (metadata, playground) carry the key.
  if (keyedBase) {
    step = 'api-key';
    await page.goto(keyedBase + '/console');
    await page.waitForFunction(() => /needs a key \(401\)/.test(document.querySelector('#server-status').textContent));
    results.keyed_rows_before = await page.locator('#models tbody tr[data-model]').count();
    await page.fill('#admin-token', apiKey);
    await page.press('#admin-token', 'Enter');
    await page.waitForFunction(() => /control mode/.test(document.querySelector('#server-status').textContent));
    await page.waitForSelector('#models tbody tr');
    results.keyed_rows_after = await page.locator('#models tbody tr[data-model]').count();
    await page.click('button.link[data-model="identity_fp32"]');
    await page.click('.tabs button[data-tab="config"]');
    await page.waitForFunction(() => /"name"/.test(document.querySelector('#config-view').textContent));
    results.keyed_config = (await page.textContent('#config-view')).includes('identity_fp32');
  }
  step = 'done';
} catch (e) {
  console.log(JSON.stringify({ ok: false, step, error: String(e && e.message || e), results, consoleErrors }));
  process.exitCode = 1;
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
if (step === 'done') console.log(JSON.stringify({ ok: true, results }));
