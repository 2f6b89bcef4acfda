// The infera web console (docs/console.md). Plain ES module, no framework, no storage:
// the key (an API key, or the admin token) lives only in the password field and is sent
// as `Authorization: Bearer <key>` on every request, the statistics stream included,
// never in a URL.
import { LineChart, BarChart } from '/console/chart.js';

const $ = (id) => document.getElementById(id);
const state = { last: null, selected: null, updates: 0, tab: 'charts', chatBusy: false, tableStructure: '',
  keyAsked: false };

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

// One point per statistics event: the stream's default period (1 s, docs/console.md).
const STREAM_PERIOD_S = 1;
const line = (id, names, unit) => new LineChart($(id), names, { unit, periodSeconds: STREAM_PERIOD_S });
const charts = {
  throughput: line('chart-throughput', ['req/s', 'errors/s'], 'req/s'),
  latency: line('chart-latency', ['p50', 'p99'], 'ms'),
  breakdown: line('chart-breakdown', ['queue', 'infer', 'in+out'], 'ms'),
  tokens: line('chart-tokens', ['tok/s'], 'tok/s'),
  ttft: line('chart-ttft', ['ttft', 'tpot'], 'ms'),
  kv: line('chart-kv', ['kv %', 'running', 'waiting'], ''),
  errors: new BarChart($('chart-errors'), { unit: 'errors', category: 'reason' }),
  batches: new BarChart($('chart-batches'), { unit: 'executions', category: 'batch size' }),
};

// The Authorization header of every request, when a key is entered.
function authHeaders(more = {}) {
  const key = $('admin-token').value;
  return key ? { ...more, Authorization: `Bearer ${key}` } : more;
}

// Reads a Server-Sent Events body, calling onEvent(name, data) per event ("message" when
// it names none; data lines joined by "\n"), until the body ends or onEvent returns false.
async function readEvents(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const raw = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let name = 'message';
      const data = [];
      for (const line of raw.split('\n')) {
        if (line.startsWith('event:')) name = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length && onEvent(name, data.join('\n')) === false) {
        reader.cancel();
        return;
      }
    }
  }
}

async function errorText(response) {
  try {
    const body = await response.json();
    return body.error || JSON.stringify(body);
  } catch {
    return response.statusText;
  }
}

async function admin(path, label) {
  const out = $('admin-result');
  out.textContent = `${label}…`;
  out.className = '';
  const response = await fetch(path, { method: 'POST', headers: authHeaders() });
  if (response.ok) {
    out.textContent = `${label}: done`;
  } else {
    out.textContent = `${label}: refused (${response.status}) ${await errorText(response)}`;
    out.className = 'error';
  }
}

function canaryText(m) {
  if (!m.canary) return '';
  return `v${m.canary.canary_version} ${m.canary.weight_percent}% ${m.canary.state}` +
    (m.canary.reason ? ` (${m.canary.reason})` : '');
}

// "—" where a figure has no traffic behind it: a P99 of 0.00 would read as "instant".
function liveCells(m) {
  const traffic = m.counters && m.counters.requests > 0 && m.latency_ms && m.latency_ms.p99 > 0;
  return [m.queue_depth ?? '—', m.rates ? m.rates.requests.toFixed(1) : '—',
    traffic ? m.latency_ms.p99.toFixed(2) : '—'];
}
const LIVE_COLUMNS = ['queue', 'rate', 'p99'];

// What the server knows of each model beyond the statistics stream: the kind /v1/models
// gives (infera_kind: llm, embedding), the config's platform/backend and ensemble steps.
// Fetched once per model when it is first seen ready; the table regroups when it arrives.
const info = { models: {}, v1: null, asked: new Set() };

async function loadModelInfo(models) {
  let changed = false;
  if (info.v1 === null) {
    info.v1 = {};
    changed = true;
    try {
      const r = await fetch('/v1/models', { headers: authHeaders() });
      if (r.ok) for (const m of (await r.json()).data || []) info.v1[m.id] = m.infera_kind;
    } catch { /* no /v1 routes: kinds come from the configs */ }
  }
  const wanted = models.filter((m) => m.state === 'READY' && !info.asked.has(m.name));
  for (const m of wanted) info.asked.add(m.name);
  await Promise.all(wanted.map(async (m) => {
    const r = await fetch(`/v2/models/${encodeURIComponent(m.name)}/config`, { headers: authHeaders() });
    if (!r.ok) return;  // asked once: a refusal is not retried on every redraw
    const c = await r.json();
    const steps = ((c.ensemble_scheduling || {}).step || []).map((x) => x.model_name);
    const image = (c.input || []).some((i) => /image/i.test(i.name) && /STRING|BYTES/.test(i.data_type || '') ||
      /FORMAT_NCHW|FORMAT_NHWC/.test(i.format || ''));
    info.models[m.name] = { platform: c.platform || '', backend: c.backend || '', steps, image };
  }));
  if (changed || wanted.length) {
    state.tableStructure = '';
    if (state.last) modelRows(state.last.models);
  }
}

function kindOf(m) {
  const i = info.models[m.name] || {};
  const backend = m.backend || i.backend || i.platform;
  if (info.v1 && info.v1[m.name]) return info.v1[m.name];
  if (backend === 'llm') return 'llm';
  if (backend === 'ensemble' || (i.steps && i.steps.length)) return 'ensemble';
  if (i.image) return 'image';
  return 'tensor';
}

// Rows in groups: pipelines (ensembles) each followed by their steps, then LLMs, then
// the other models. A step shared by several pipelines is listed under the first.
function groupedRows(models) {
  const byName = new Map();
  for (const m of models) {
    if (!byName.has(m.name)) byName.set(m.name, []);
    byName.get(m.name).push(m);
  }
  const stepOf = new Map();
  const pipelines = [...byName.keys()].filter((n) => (info.models[n]?.steps || []).length ||
    byName.get(n).some((m) => m.backend === 'ensemble')).sort();
  for (const p of pipelines) {
    (info.models[p]?.steps || []).forEach((step, i, all) => {
      if (byName.has(step) && !stepOf.has(step) && !pipelines.includes(step)) {
        stepOf.set(step, { parent: p, index: i + 1, count: all.length });
      }
    });
  }
  const groups = [['Pipelines', []], ['LLMs', []], ['Models', []]];
  for (const p of pipelines) {
    groups[0][1].push(...byName.get(p).map((m) => ({ m })));
    for (const [step, where] of stepOf) if (where.parent === p) groups[0][1].push(...byName.get(step).map((m) => ({ m, step: where })));
  }
  for (const [name, rows] of byName) {
    if (pipelines.includes(name) || stepOf.has(name)) continue;
    groups[rows.some((m) => kindOf(m) === 'llm') ? 1 : 2][1].push(...rows.map((m) => ({ m })));
  }
  return groups.filter(([, rows]) => rows.length);
}

const COLUMN_COUNT = 10;

// The table is rebuilt only when its structure changes (rows, states, canaries, the
// buttons, the grouping); otherwise only the live figures are updated in place, so a
// click or the keyboard focus is never lost to a re-render.
function modelRows(models) {
  const tbody = $('models').tBodies[0];
  const explicit = state.last.server.control_mode === 'explicit';
  const groups = groupedRows(models);
  const structure = JSON.stringify([explicit, groups.map(([g, rows]) => [g, rows.map(({ m, step }) =>
    [m.name, m.version, m.state, m.reason, canaryText(m), kindOf(m), step ? step.parent : ''])])]);
  if (structure === state.tableStructure) {
    for (const { m } of groups.flatMap(([, rows]) => rows)) {
      const tr = tbody.querySelector(`tr[data-model="${CSS.escape(m.name)}"][data-version="${m.version ?? ''}"]`);
      if (!tr) continue;
      liveCells(m).forEach((v, j) => {
        const td = tr.querySelector(`td[data-col="${LIVE_COLUMNS[j]}"]`);
        if (td.textContent !== String(v)) td.textContent = v;
      });
    }
    return;
  }
  state.tableStructure = structure;
  const rows = [];
  const cell = (col, ...children) => el('td', { 'data-col': col }, ...children);
  for (const [group, members] of groups) {
    rows.push(el('tr', { class: 'group' }, el('th', { scope: 'colgroup', colspan: String(COLUMN_COUNT) }, group)));
    for (const { m, step } of members) {
      const name = el('button', { type: 'button', class: 'link', 'data-model': m.name,
        onclick: () => select(m.name) }, m.name);
      const nameCell = cell('name', name);
      if (step) {
        nameCell.classList.add('step');
        nameCell.append(el('span', { class: 'muted step-of' }, ` step ${step.index}/${step.count}`));
      }
      const stateCell = cell('state', el('span', { class: `state-${m.state}` }, m.state));
      if (m.reason) stateCell.append(el('div', { class: 'reason' }, m.reason));
      const actions = cell('actions');
      const path = (what) => `/v2/repository/models/${encodeURIComponent(m.name)}/${what}`;
      if (explicit) {
        actions.append(el('button', { type: 'button', 'data-action': 'load', 'data-model': m.name,
          onclick: () => admin(path('load'), `load ${m.name}`) }, 'Load'), ' ');
        actions.append(el('button', { type: 'button', 'data-action': 'unload', 'data-model': m.name,
          onclick: () => confirmed(`Unload ${m.name}? Requests to it will fail until it is loaded again.`) &&
            admin(path('unload'), `unload ${m.name}`) }, 'Unload'));
      }
      if (m.canary && m.canary.state === 'ACTIVE') {
        actions.append(' ', el('button', { type: 'button', 'data-action': 'promote', 'data-model': m.name,
          onclick: () => confirmed(`Promote the canary of ${m.name}? All its traffic moves to version ${m.canary.canary_version}.`) &&
            admin(path('canary/promote'), `promote ${m.name}`) }, 'Promote'));
      }
      const i = info.models[m.name] || {};
      rows.push(el('tr', { 'data-model': m.name, 'data-version': String(m.version ?? '') },
        nameCell, cell('kind', kindOf(m)), cell('backend', m.backend || i.backend || i.platform || '—'),
        cell('version', m.version ?? '–'), stateCell,
        ...liveCells(m).map((v, j) => cell(LIVE_COLUMNS[j], v)), cell('canary', canaryText(m)), actions));
    }
  }
  // Keep the keyboard focus on the same control across a rebuild.
  const focused = document.activeElement;
  const key = focused && tbody.contains(focused) ?
    [focused.dataset.model, focused.dataset.action || 'select'] : null;
  tbody.replaceChildren(...rows);
  if (key) {
    const sel = key[1] === 'select' ? `button.link[data-model="${CSS.escape(key[0])}"]` :
      `button[data-action="${key[1]}"][data-model="${CSS.escape(key[0])}"]`;
    const again = tbody.querySelector(sel);
    if (again) again.focus();
  }
  loadModelInfo(models);
}

// Destructive actions (unload, promote) ask first; cancelling sends nothing.
function confirmed(question) {
  if (window.confirm(question)) return true;
  const out = $('admin-result');
  out.textContent = 'cancelled';
  out.className = '';
  return false;
}

function servingRow(name) {
  const rows = state.last.models.filter((m) => m.name === name);
  return rows.filter((m) => m.counters).pop() || rows.pop();
}

function updateCharts() {
  if (!state.selected || !state.last) return;
  const m = servingRow(state.selected);
  if (!m) return;
  $('detail-summary').textContent = `${m.name} v${m.version ?? '–'} ${m.state}` +
    (m.instances ? ` · instances: ${m.instances.map((g) => `${g.name || 'group'} ${g.kind}×${g.count}`).join(', ') || 'default'}` : '') +
    (m.queue_depth !== undefined ? ` · queue depth ${m.queue_depth}` : '') +
    (m.max_batch_size !== undefined ? ` · max batch ${m.max_batch_size}` : '');
  if (!m.counters) return;
  charts.throughput.push([m.rates.requests, m.rates.errors]);
  charts.latency.push([m.latency_ms.p50, m.latency_ms.p99]);
  const b = m.breakdown_ms;
  charts.breakdown.push([b.queue, b.compute_infer, b.compute_input + b.compute_output]);
  charts.errors.draw(Object.entries(m.failures).map(([label, value]) => ({ label, value })));
  charts.batches.draw(m.batch_sizes.map((x) => ({ label: x.batch_size, value: x.executions })));
  for (const f of document.querySelectorAll('.llm-only')) f.hidden = !m.llm;
  if (m.llm) {
    charts.tokens.push([m.llm.tokens_per_s]);
    charts.ttft.push([m.llm.ttft_ms.p50, m.llm.tpot_ms.p50]);
    charts.kv.push([m.llm.kv_cache_usage * 100, m.llm.running, m.llm.waiting]);
  }
  state.updates += 1;
  $('chart-updates').textContent = `updates: ${state.updates} · requests: ${m.counters.requests}`;
}

function onStats(event) {
  state.last = JSON.parse(event.data);
  const s = state.last.server;
  $('server-status').textContent = `infera ${s.version} · ${s.ready ? 'ready' : 'not ready'} · ` +
    `control mode ${s.control_mode} · ${state.last.models.length} model rows`;
  if (!state.keyAsked) $('admin-form').hidden = !s.admin_token_required;
  modelRows(state.last.models);
  updateCharts();
}

// The statistics stream, read with fetch: EventSource cannot send the Authorization
// header API keys need. A dropped stream is reopened after a second (as EventSource
// would); a refusal (401 / 403) shows the key field and waits for a key.
let stream = null;  // the AbortController of the stream in use

async function connect() {
  if (stream) stream.abort();
  const mine = new AbortController();
  stream = mine;
  let ended = false;
  try {
    const r = await fetch('/v2/console/stream', { headers: authHeaders(), signal: mine.signal });
    if (r.status === 401 || r.status === 403) {
      state.keyAsked = true;
      $('admin-form').hidden = false;
      $('server-status').textContent = `this server needs a key (${r.status}): enter an API key`;
      return;
    }
    if (!r.ok) throw new Error(`stream refused (${r.status})`);
    await readEvents(r, (name, data) => {
      if (name === 'stats') onStats({ data });
      if (name !== 'end') return true;
      ended = true;
      $('server-status').textContent = 'server shut down';
      return false;
    });
  } catch {
    // dropped or refused: reconnect below
  }
  if (ended || mine.signal.aborted) return;
  $('server-status').textContent = 'stream interrupted, reconnecting…';
  setTimeout(() => { if (stream === mine) connect(); }, 1000);
}

function showTab(tab) {
  state.tab = tab;
  for (const b of document.querySelectorAll('.tabs button')) b.setAttribute('aria-pressed', String(b.dataset.tab === tab));
  for (const t of document.querySelectorAll('.tab')) t.hidden = t.id !== `tab-${tab}`;
  if (tab === 'config') loadConfig();
  if (tab === 'playground') buildPlayground();
  if (tab === 'diagnosis') {
    diagnosis.announced = '';
    loadDiagnosis();
  }
  scheduleDiagnosis();
}

function select(name) {
  if (state.selected !== name) resetChat();
  state.selected = name;
  // The chat is for LLMs (backend "llm"); the other views for every model.
  const row = state.last && servingRow(name);
  const llm = !!row && row.backend === 'llm';
  document.querySelector('.tabs button[data-tab="chat"]').hidden = !llm;
  if (state.tab === 'chat' && !llm) state.tab = 'charts';
  state.updates = 0;
  for (const c of Object.values(charts)) if (c.clear) c.clear();
  $('detail').hidden = false;
  $('detail-heading').textContent = `Model ${name}`;
  showTab(state.tab);
  updateCharts();
}

async function loadConfig() {
  const r = await fetch(`/v2/models/${encodeURIComponent(state.selected)}/config`, { headers: authHeaders() });
  $('config-view').textContent = r.ok ? JSON.stringify(await r.json(), null, 2) : `config: ${await errorText(r)}`;
}

// ---- Playground: a form generated from the model's metadata ----
const NUMERIC = new Set(['BOOL', 'UINT8', 'UINT16', 'UINT32', 'UINT64', 'INT8', 'INT16', 'INT32', 'INT64',
  'FP16', 'FP32', 'FP64', 'BF16']);

// A picture input: a float/uint8 tensor of one image per row, [3, H, W] or [H, W, 3].
function imageLayout(datatype, shape) {
  if (!/^(FP16|FP32|FP64|UINT8)$/.test(datatype) || shape.length !== 3 || shape.some((d) => d < 1)) return null;
  if (shape[0] === 3) return { chw: true, h: shape[1], w: shape[2] };
  if (shape[2] === 3) return { chw: false, h: shape[0], w: shape[1] };
  return null;
}

// Pixels of a picture file, drawn at the tensor's H x W; the tensor (RGB in [0, 1] for a
// float input, 0..255 for UINT8) is kept on the fieldset for runInference and the canvas
// for drawing the detections on.
async function pictureTensor(file, layout, datatype) {
  const bitmap = await createImageBitmap(file);
  const canvas = el('canvas', { width: String(layout.w), height: String(layout.h), class: 'pg-picture' });
  const ctx = canvas.getContext('2d');
  ctx.drawImage(bitmap, 0, 0, layout.w, layout.h);
  const px = ctx.getImageData(0, 0, layout.w, layout.h).data;
  const scale = datatype === 'UINT8' ? 1 : 1 / 255;
  const plane = layout.w * layout.h;
  const data = new Array(3 * plane);
  for (let p = 0; p < plane; p++) {
    for (let c = 0; c < 3; c++) data[layout.chw ? c * plane + p : p * 3 + c] = px[p * 4 + c] * scale;
  }
  return { canvas, data };
}

async function buildPlayground() {
  const form = $('playground-form');
  const name = state.selected;
  // An LLM is decoupled (many responses per request): /v2/.../infer cannot stream its
  // tokens, the chat tab does (/v1/chat/completions, token by token).
  const row = state.last && servingRow(name);
  if (row && kindOf(row) === 'llm') {
    const go = el('button', { type: 'button', id: 'playground-to-chat' }, 'Open the chat tab');
    go.addEventListener('click', () => showTab('chat'));
    form.replaceChildren(el('p', { id: 'playground-llm' },
      `${name} is an LLM: its answer is a token stream, which the chat tab shows as it arrives.`), go);
    $('playground-result').replaceChildren();
    return;
  }
  const [r, rc] = await Promise.all([
    fetch(`/v2/models/${encodeURIComponent(name)}`, { headers: authHeaders() }),
    fetch(`/v2/models/${encodeURIComponent(name)}/config`, { headers: authHeaders() })]);
  if (!r.ok) {
    form.replaceChildren(el('p', { class: 'error' }, `metadata: ${await errorText(r)}`));
    return;
  }
  const meta = await r.json();
  // With max_batch_size > 0 the metadata's leading -1 is the batch: a "rows" control,
  // not a dimension of each input; the fields show the shape of one row.
  const maxBatch = rc.ok ? ((await rc.json()).max_batch_size || 0) : 0;
  const batched = maxBatch > 0 && meta.inputs.every((i) => i.shape[0] === -1);
  meta.batched = batched;
  const fields = [];
  if (batched) {
    fields.push(el('p', { class: 'pg-rows' },
      el('label', { for: 'pg-rows' }, `rows (the batch, 1 to ${maxBatch}) `),
      el('input', { id: 'pg-rows', type: 'number', min: '1', max: String(maxBatch), value: '1' })));
  }
  meta.inputs.forEach((input, i) => {
    const id = `pg-${i}`;
    const perRow = batched ? input.shape.slice(1) : input.shape;
    const fs = el('fieldset', { 'data-input': input.name },
      el('legend', {}, input.name),
      el('dl', { class: 'pg-tensor' },
        el('dt', {}, 'name'), el('dd', { 'data-field': 'name' }, input.name),
        el('dt', {}, 'datatype'), el('dd', { 'data-field': 'datatype' }, input.datatype),
        el('dt', {}, batched ? 'shape of a row' : 'shape'),
        el('dd', { 'data-field': 'shape' }, `[${perRow.join(', ')}]`)));
    fields.push(fs);
    // One variable dimension is taken from the number of values given; several need sizes.
    const variable = perRow.map((d, j) => (d === -1 ? j : -1)).filter((j) => j >= 0);
    if (variable.length > 1) {
      for (const j of variable) {
        fs.append(el('label', { for: `${id}-dim${j}` }, `dimension ${j} of ${input.name}'s row`),
          el('input', { id: `${id}-dim${j}`, type: 'number', min: '1', value: '1', 'data-dim': String(j) }));
      }
    }
    if (input.datatype === 'BYTES') {
      fs.append(el('label', { for: `${id}-text` }, `${input.name} as text (one element per line)`),
        el('textarea', { id: `${id}-text`, rows: '2', 'data-role': 'text' }));
      const preview = el('img', { class: 'preview', alt: `preview of the file for ${input.name}`, hidden: '' });
      const file = el('input', { id: `${id}-file`, type: 'file', 'data-role': 'file' });
      file.addEventListener('change', () => {
        const f = file.files[0];
        if (preview.src) URL.revokeObjectURL(preview.src);
        preview.hidden = !(f && f.type.startsWith('image/'));
        if (!preview.hidden) preview.src = URL.createObjectURL(f);
      });
      fs.append(el('label', { for: `${id}-file` }, `${input.name} from a file (e.g. an image)`), file, preview);
      return;
    }
    const layout = imageLayout(input.datatype, perRow);
    if (layout) {
      const file = el('input', { id: `${id}-picture`, type: 'file', accept: 'image/*', 'data-role': 'picture' });
      const holder = el('div', { class: 'pg-picture-holder' });
      file.addEventListener('change', async () => {
        fs.picture = null;
        holder.replaceChildren();
        if (!file.files[0]) return;
        try {
          fs.picture = await pictureTensor(file.files[0], layout, input.datatype);
          holder.replaceChildren(fs.picture.canvas);
        } catch (err) {
          holder.replaceChildren(el('p', { class: 'error' }, `${input.name}: not a picture (${err.message})`));
        }
      });
      fs.append(el('label', { for: `${id}-picture` },
        `${input.name} from a picture (scaled to ${layout.w}×${layout.h}, RGB${input.datatype === 'UINT8' ? '' : ' in [0, 1]'}; every row)`),
      file, holder);
    }
    fs.append(el('label', { for: `${id}-data` }, `${input.name} values (comma separated; empty: zeros)`),
      el('textarea', { id: `${id}-data`, rows: '2', 'data-role': 'data' }));
  });
  fields.push(el('button', { type: 'submit', id: 'playground-run' }, 'Run inference'));
  form.replaceChildren(...fields);
  $('playground-result').replaceChildren();
  form.onsubmit = (e) => { e.preventDefault(); runInference(meta); };
}

function concatBytes(parts) {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(total);
  let off = 0;
  for (const p of parts) { out.set(p, off); off += p.length; }
  return out;
}

async function runInference(meta) {
  const result = $('playground-result');
  result.textContent = 'running…';
  const inputs = [];
  const binary = [];
  const rows = meta.batched ? Math.max(1, parseInt($('pg-rows').value, 10) || 1) : 1;
  let picture = null;
  for (const input of meta.inputs) {
    const fs = document.querySelector(`#playground-form fieldset[data-input="${CSS.escape(input.name)}"]`);
    const perRow = (meta.batched ? input.shape.slice(1) : input.shape).map((d, j) => {
      const v = fs.querySelector(`input[data-dim="${j}"]`);
      return d !== -1 ? d : (v ? Math.max(1, parseInt(v.value, 10) || 1) : -1);
    });
    const shape = meta.batched ? [rows, ...perRow] : perRow;
    // The one variable dimension (-1 left) is what the values given make it.
    const fill = (given) => {
      const j = shape.indexOf(-1);
      if (j < 0) return;
      const known = shape.reduce((a, d) => (d === -1 ? a : a * d), 1);
      shape[j] = Math.max(1, Math.round(given / known));
    };
    if (input.datatype === 'BYTES') {
      const file = fs.querySelector('input[data-role="file"]').files[0];
      let elements;
      if (file) {
        elements = new Array(rows).fill(new Uint8Array(await file.arrayBuffer()));
      } else {
        const text = fs.querySelector('textarea[data-role="text"]').value;
        elements = text.split('\n').map((line) => new TextEncoder().encode(line));
      }
      fill(elements.length);
      const count = shape.reduce((a, b) => a * b, 1);
      if (elements.length !== count) {
        result.replaceChildren(el('p', { class: 'error' },
          `${input.name}: ${elements.length} elements given, shape [${shape.join(', ')}] needs ${count}`));
        return;
      }
      const parts = [];
      for (const e of elements) {
        const len = new Uint8Array(4);
        new DataView(len.buffer).setUint32(0, e.length, true);
        parts.push(len, e);
      }
      const data = concatBytes(parts);
      inputs.push({ name: input.name, datatype: 'BYTES', shape, parameters: { binary_data_size: data.length } });
      binary.push(data);
    } else {
      const text = fs.querySelector('textarea[data-role="data"]').value.trim();
      let data;
      if (fs.picture && !text) {
        picture = picture || fs.picture;
        data = [];
        for (let k = 0; k < rows; k++) data.push(...fs.picture.data);
      } else {
        data = text ? text.split(/[\s,]+/).filter(Boolean).map(Number) : null;
        if (data) fill(data.length);
      }
      if (shape.includes(-1)) shape[shape.indexOf(-1)] = 1;
      const count = shape.reduce((a, b) => a * b, 1);
      if (!data) data = new Array(count).fill(0);
      if (input.datatype === 'BOOL') data = data.map((v) => v !== 0);
      if (data.length !== count) {
        result.replaceChildren(el('p', { class: 'error' },
          `${input.name}: ${data.length} values given, shape [${shape.join(', ')}] needs ${count}`));
        return;
      }
      inputs.push({ name: input.name, datatype: input.datatype, shape, data });
    }
  }
  const header = new TextEncoder().encode(JSON.stringify({ inputs }));
  const body = binary.length ? concatBytes([header, ...binary]) : header;
  const headers = authHeaders({ 'Content-Type': binary.length ? 'application/octet-stream' : 'application/json' });
  if (binary.length) headers['Inference-Header-Content-Length'] = String(header.length);
  const t0 = performance.now();
  const r = await fetch(`/v2/models/${encodeURIComponent(meta.name)}/infer`, { method: 'POST', headers, body });
  const ms = performance.now() - t0;
  if (!r.ok) {
    result.replaceChildren(el('p', { class: 'error' }, `infer failed (${r.status}): ${await errorText(r)}`));
    return;
  }
  const answer = await r.json();
  const outRows = answer.outputs.map((o) => el('tr', {}, el('td', {}, o.name), el('td', {}, o.datatype),
    el('td', {}, `[${o.shape.join(', ')}]`), el('td', { class: 'output-data' },
      JSON.stringify(o.data).slice(0, 2000))));
  result.replaceChildren(el('p', { id: 'playground-timing' }, `round trip ${ms.toFixed(1)} ms`),
    ...topK(answer.outputs),
    ...detections(answer.outputs, picture),
    el('table', { id: 'playground-outputs' },
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'output'), el('th', { scope: 'col' }, 'type'),
        el('th', { scope: 'col' }, 'shape'), el('th', { scope: 'col' }, 'data'))),
      el('tbody', {}, ...outRows)));
}

// A detection answer (boxes [..., N, 4] x1 y1 x2 y2 in the input's pixels, scores and
// classes [..., N], a detection count: the detector pipeline's DET_* / NUM_DETECTIONS)
// drawn as an SVG overlay on the input picture, first row only, each box labelled with
// its class and score; nothing for other outputs.
const SVG = 'http://www.w3.org/2000/svg';
function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

function detections(outputs, picture) {
  const boxes = outputs.find((o) => /box/i.test(o.name) && o.shape[o.shape.length - 1] === 4);
  const scores = outputs.find((o) => /score/i.test(o.name));
  if (!boxes || !scores) return [];
  const classes = outputs.find((o) => /class|label/i.test(o.name) && o.datatype !== 'BYTES');
  const count = outputs.find((o) => /^num/i.test(o.name));
  const n = boxes.shape[boxes.shape.length - 2];
  const shown = Math.min(n, count ? Number(count.data[0]) : scores.data.filter((s) => s > 0).length);
  const w = picture ? picture.canvas.width : 128;
  const h = picture ? picture.canvas.height : 128;
  // Boxes within [0, 1.5] everywhere are normalised coordinates; otherwise pixels.
  const first = boxes.data.slice(0, 4 * shown);
  const unit = first.length && first.every((v) => Math.abs(v) <= 1.5) ? [w, h] : [1, 1];
  const overlay = svg('svg', { id: 'playground-boxes', viewBox: `0 0 ${w} ${h}`, role: 'img',
    'aria-label': `${shown} detections` });
  if (picture) {
    overlay.append(svg('image', { href: picture.canvas.toDataURL(), x: 0, y: 0, width: w, height: h }));
  } else {
    overlay.append(svg('rect', { x: 0, y: 0, width: w, height: h, fill: '#888' }));
  }
  for (let k = 0; k < shown; k++) {
    const [x1, y1, x2, y2] = first.slice(4 * k, 4 * k + 4);
    const cls = classes ? String(classes.data[k]) : '';
    const score = Number(scores.data[k]);
    const label = `${cls ? `class ${cls} ` : ''}${score.toFixed(2)}`;
    const g = svg('g', { class: 'det', 'data-class': cls, 'data-score': score });
    g.append(svg('rect', { x: x1 * unit[0], y: y1 * unit[1], width: Math.max(0, (x2 - x1) * unit[0]),
      height: Math.max(0, (y2 - y1) * unit[1]), fill: 'none', stroke: '#e8590c', 'stroke-width': 0.8 }),
    svg('text', { x: Math.max(0, x1 * unit[0]) + 1, y: Math.max(5, y1 * unit[1] + 5), 'font-size': 4.5, fill: '#fff',
      stroke: '#000', 'stroke-width': 0.6, 'paint-order': 'stroke' }, label));
    overlay.append(g);
  }
  return [el('figure', { id: 'playground-detections' }, overlay,
    el('figcaption', {}, `${shown} detection${shown === 1 ? '' : 's'} of ${boxes.name}` +
      `${picture ? ' on the input picture' : ''}${boxes.shape.length > 2 && boxes.shape[0] > 1 ? ' (first row)' : ''}`))];
}

// A classification answer (a BYTES output of labels beside a floating-point output of
// the same shape: resnet18_classify's LABELS / SCORES) as a ranked label/score table,
// so labels and scores are read in pairs; nothing for other outputs.
function topK(outputs) {
  const labels = outputs.find((o) => o.datatype === 'BYTES');
  const scores = labels && outputs.find((o) => /^(FP16|FP32|FP64|BF16)$/.test(o.datatype) &&
    JSON.stringify(o.shape) === JSON.stringify(labels.shape));
  if (!scores || !Array.isArray(labels.data) || labels.data.length !== scores.data.length) return [];
  const rows = labels.data.map((label, i) => ({ label, score: scores.data[i] }))
    .sort((a, b) => b.score - a.score);
  return [el('table', { id: 'playground-topk' },
    el('caption', {}, `${labels.name} by ${scores.name}`),
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'rank'), el('th', { scope: 'col' }, labels.name.toLowerCase()),
      el('th', { scope: 'col' }, scores.name.toLowerCase()))),
    el('tbody', {}, ...rows.map((r, i) => el('tr', {}, el('td', {}, String(i + 1)), el('td', {}, r.label),
      el('td', { class: 'value' }, Number(r.score).toFixed(4))))))];
}

// ---- Chat: /v1/chat/completions, streamed ----
// A conversation: every turn (user and assistant) is kept and sent again with the next
// message, after the system prompt when one is given. Stop aborts the stream (the reply
// so far stays, marked stopped, and joins the history). Under each reply: the time to
// its first token and its tokens per second (the usage the server reports, else one
// token per streamed chunk) over the whole reply.
const conversation = { turns: [], abort: null };

function resetChat() {
  if (conversation.abort) conversation.abort.abort();
  conversation.turns = [];
  $('chat-log').replaceChildren();
}

async function chat(e) {
  e.preventDefault();
  if (state.chatBusy) return;
  state.chatBusy = true;
  $('chat-send').disabled = true;
  $('chat-stop').disabled = false;
  const log = $('chat-log');
  const text = $('chat-input').value;
  const system = $('chat-system').value.trim();
  log.append(el('p', { class: 'user' }, `you: ${text}`));
  const reply = el('p', { class: 'assistant' });
  const stats = el('p', { class: 'chat-stats muted' });
  log.append(reply, stats);
  const messages = [...(system ? [{ role: 'system', content: system }] : []), ...conversation.turns,
    { role: 'user', content: text }];
  const abort = new AbortController();
  conversation.abort = abort;
  const t0 = performance.now();
  let first = null, chunks = 0, usageTokens = null, content = '';
  try {
    const r = await fetch('/v1/chat/completions', {
      method: 'POST', headers: authHeaders({ 'Content-Type': 'application/json' }), signal: abort.signal,
      body: JSON.stringify({ model: state.selected, stream: true, stream_options: { include_usage: true },
        messages, temperature: Number($('chat-temperature').value), top_p: Number($('chat-top-p').value),
        max_tokens: parseInt($('chat-max-tokens').value, 10) }),
    });
    if (!r.ok) {
      reply.textContent = `error (${r.status}): ${await errorText(r)}`;
      reply.classList.add('error');
      return;
    }
    await readEvents(r, (name, data) => {
      if (data === '[DONE]') return false;
      const chunk = JSON.parse(data);
      if (chunk.usage && Number.isFinite(chunk.usage.completion_tokens)) usageTokens = chunk.usage.completion_tokens;
      const delta = chunk.choices && chunk.choices[0] && chunk.choices[0].delta;
      if (delta && delta.content) {
        if (first === null) first = performance.now();
        chunks += 1;
        content += delta.content;
        reply.append(document.createTextNode(delta.content));
      }
      return true;
    });
  } catch (err) {
    if (err.name !== 'AbortError') throw err;
    reply.dataset.stopped = 'true';
    reply.append(el('span', { class: 'muted' }, ' [stopped]'));
  } finally {
    const end = performance.now();
    if (first !== null) {
      const tokens = usageTokens ?? chunks;
      const ttft = first - t0;
      // Over the whole reply, send to last token: chunks that arrive together (one read)
      // would make a rate over the time after the first token meaningless.
      const rate = end > t0 ? tokens / ((end - t0) / 1000) : 0;
      stats.dataset.ttftMs = ttft.toFixed(1);
      stats.dataset.tokensPerS = rate.toFixed(1);
      stats.dataset.tokens = String(tokens);
      stats.textContent = `TTFT ${ttft.toFixed(0)} ms · ${tokens} tokens in ${(end - t0).toFixed(0)} ms · ${rate.toFixed(1)} tok/s`;
    }
    if (!reply.classList.contains('error')) {
      conversation.turns.push({ role: 'user', content: text }, { role: 'assistant', content });
    }
    reply.dataset.done = 'true';
    conversation.abort = null;
    state.chatBusy = false;
    $('chat-send').disabled = false;
    $('chat-stop').disabled = true;
  }
}

// ---- Diagnosis ----
// Fetched (over the chosen window: 10, 60 or 300 s) when the tab opens, by the Refresh
// button, when the window changes, and every DIAGNOSIS_PERIOD_MS while the tab is shown
// with auto-refresh ticked. One request at a time; each carries a
// sequence number and an answer is drawn only if it is the newest asked for and still
// for the selected model. The aria-live status line changes only when the class (or an
// error) does, so a screen reader is not told the same verdict every 5 s.
const DIAGNOSIS_PERIOD_MS = 5000;
const diagnosis = { seq: 0, inFlight: false, again: false, timer: null, announced: '' };

function formatEvidence(value, unit) {
  if (typeof value !== 'number') return `${value}${unit ? ` ${unit}` : ''}`;
  if (unit === 'ratio') return `${(value * 100).toFixed(1)} %`;
  const digits = Math.abs(value) >= 100 || Number.isInteger(value) ? 0 : 2;
  return `${value.toFixed(digits)}${unit ? ` ${unit}` : ''}`;
}

function announceDiagnosis(text) {
  if (text === diagnosis.announced) return;
  diagnosis.announced = text;
  $('diagnosis-status').textContent = text;
}

function renderDiagnosis(d) {
  const b = d.bottleneck || {};
  announceDiagnosis(`${d.model} v${d.version}: ${b.class || 'unknown'}`);
  $('diagnosis-view').replaceChildren(
    el('p', {}, el('strong', { id: 'diagnosis-class' }, b.class || 'unknown'), ' — ',
      el('span', { id: 'diagnosis-summary' }, b.summary || '')),
    el('p', { class: 'muted', id: 'diagnosis-window', 'data-requests': String(d.requests),
      'data-window-seconds': String(d.window_seconds) },
      `${d.requests ?? 0} requests over ${Number(d.window_seconds).toFixed(1)} s (version ${d.version ?? '–'})`),
    el('table', { id: 'diagnosis-evidence' },
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'evidence'), el('th', { scope: 'col' }, 'value'),
        el('th', { scope: 'col' }, 'detail'))),
      el('tbody', {}, ...(d.evidence || []).map((e) => el('tr', { 'data-name': e.name },
        el('td', {}, e.name),
        el('td', { class: 'value', 'data-value': JSON.stringify(e.value), 'data-unit': e.unit || '' },
          formatEvidence(e.value, e.unit)),
        el('td', {}, e.detail || ''))))),
    ...stageBreakdown(d),
    el('h3', {}, 'Actions'),
    (d.actions || []).length ?
      el('ul', { id: 'diagnosis-actions' }, ...d.actions.map((a) => el('li', {},
        el('strong', { class: 'action' }, a.action),
        el('span', { class: 'effect' }, a.expected_effect ? ` — ${a.expected_effect}` : '')))) :
      el('p', { id: 'diagnosis-actions', class: 'muted' }, 'no action suggested'));
}

// The stage breakdown `infera diagnose` prints (STAGES, mean per request and share of
// the server time), and an ensemble's steps with their own class.
const STAGES = ['decode', 'queue', 'compute_input', 'compute_infer', 'compute_output', 'encode', 'write'];

function stageBreakdown(d) {
  const stages = d.stages || {};
  const out = [];
  if (STAGES.some((s) => stages[s])) {
    out.push(el('h3', {}, 'Stages (mean per request)'));
    if (d.llm) out.push(el('p', { class: 'muted' }, "an LLM: queue = the engine's wait for a batch slot, compute_infer = its generation"));
    out.push(el('table', { id: 'diagnosis-stages' },
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'stage'), el('th', { scope: 'col' }, 'mean'),
        el('th', { scope: 'col' }, 'share'))),
      el('tbody', {}, ...STAGES.filter((s) => stages[s]).map((s) => el('tr', { 'data-stage': s },
        el('td', {}, s), el('td', { class: 'value', 'data-us': String(stages[s].mean_us) }, formatEvidence(stages[s].mean_us, 'us')),
        el('td', { class: 'value' }, formatEvidence(stages[s].share, 'ratio')))),
      el('tr', { 'data-stage': 'server' }, el('td', {}, 'server time'),
        el('td', { class: 'value', 'data-us': String(stages.server_us) }, formatEvidence(stages.server_us || 0, 'us')),
        el('td', {})))));
  }
  if (Array.isArray(d.steps) && d.steps.length) {
    out.push(el('h3', {}, 'Steps'), el('table', { id: 'diagnosis-steps' },
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'step'), el('th', { scope: 'col' }, 'requests'),
        el('th', { scope: 'col' }, 'mean latency'), el('th', { scope: 'col' }, 'class'))),
      el('tbody', {}, ...d.steps.map((st) => el('tr', {}, el('td', {}, `${st.model} v${st.version}`),
        el('td', { class: 'value' }, String(st.requests)),
        el('td', { class: 'value' }, formatEvidence(st.mean_latency_us, 'us')), el('td', {}, st.class))))));
  }
  return out;
}

function showDiagnosisError(text) {
  announceDiagnosis(text);
  $('diagnosis-view').replaceChildren(el('p', { class: 'error' }, text));
}

async function loadDiagnosis() {
  if (!state.selected) return;
  if (diagnosis.inFlight) {  // one request at a time; ask again when it is back
    diagnosis.again = true;
    return;
  }
  const model = state.selected;
  const seq = ++diagnosis.seq;
  diagnosis.inFlight = true;
  const view = $('diagnosis-view');
  view.setAttribute('aria-busy', 'true');
  if (view.dataset.model !== model) {  // another model's answer is on screen: clear it
    view.dataset.model = '';
    view.replaceChildren(el('p', { class: 'muted' }, 'loading…'));
  }
  try {
    const seconds = $('diagnosis-window-select').value;  // 10 | 60 | 300
    const r = await fetch(`/v2/models/${encodeURIComponent(model)}/diagnosis?window=${seconds}`,
      { headers: authHeaders() });
    const body = r.ok ? await r.json() : await errorText(r);
    if (seq !== diagnosis.seq || model !== state.selected) return;  // stale
    view.dataset.model = model;
    if (r.ok) {
      renderDiagnosis(body);
    } else if (r.status === 404 && !/unknown model/i.test(body)) {
      showDiagnosisError('diagnosis not available on this server');
    } else {
      // An unknown model is also 404: say which.
      showDiagnosisError(`diagnosis failed (${r.status}): ${body}`);
    }
    view.dataset.seq = String(seq);
    $('diagnosis-updated').textContent = `updated ${new Date().toLocaleTimeString()}`;
  } catch (e) {
    if (seq === diagnosis.seq) showDiagnosisError(`diagnosis failed: ${e.message}`);
  } finally {
    diagnosis.inFlight = false;
    view.setAttribute('aria-busy', 'false');
    if (diagnosis.again) {
      diagnosis.again = false;
      loadDiagnosis();
    }
  }
}

// Auto-refresh runs only while the diagnosis tab is shown and the box is ticked.
function scheduleDiagnosis() {
  clearInterval(diagnosis.timer);
  diagnosis.timer = null;
  if (state.tab === 'diagnosis' && !$('detail').hidden && $('diagnosis-auto').checked) {
    diagnosis.timer = setInterval(loadDiagnosis, DIAGNOSIS_PERIOD_MS);
  }
}

for (const b of document.querySelectorAll('.tabs button')) b.addEventListener('click', () => showTab(b.dataset.tab));
$('chat-form').addEventListener('submit', chat);
$('chat-stop').addEventListener('click', () => { if (conversation.abort) conversation.abort.abort(); });
$('chat-clear').addEventListener('click', resetChat);
$('diagnosis-refresh').addEventListener('click', loadDiagnosis);
$('diagnosis-auto').addEventListener('change', scheduleDiagnosis);
$('diagnosis-window-select').addEventListener('change', loadDiagnosis);
$('admin-form').addEventListener('submit', (e) => {
  e.preventDefault();
  if (state.keyAsked) connect();
});
$('admin-token').addEventListener('change', () => { if (state.keyAsked) connect(); });
connect();
