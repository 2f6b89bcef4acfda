// The official `openai` npm client against a real infera (driven by
// tests/integration/test_openai_compat.py). Usage:
//   node openai_client.mjs <base URL, e.g. http://127.0.0.1:PORT/v1> <scenario> <model>
// Scenarios: "serving" (batched prompts, n, logprobs for completions and chat, a
// streamed chat through the async iterator, the embeddings error), "loading" (the
// model is still loading: the list shows it, a completion is a retryable 503) and
// "auth" (API keys, tests/integration/test_api_keys.py: the key in env
// INFERA_TEST_API_KEY works, a wrong key is the client's AuthenticationError, the key in
// INFERA_TEST_SCOPED_KEY, scoped to other models, its PermissionDeniedError).
// Each check throws on a mismatch (exit 1, the message on stderr); on success the
// script prints one JSON object with what it saw, which the test checks again.
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const [baseURL, scenario, model] = process.argv.slice(2);
// No retries: the test must see the server's first answer (the client retries 503s).
const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0, timeout: 60_000 });
const report = {};

async function serving() {
  // A batch of two prompts, two choices each: prompt-major indices, usage summed.
  const batch = await client.completions.create({
    model, prompt: ['Hello there', 'The cat'], n: 2, max_tokens: 3, temperature: 0, ignore_eos: true,
  });
  assert.match(batch.id, /^cmpl-[0-9a-f]{32}$/);
  assert.deepEqual(batch.choices.map((c) => c.index), [0, 1, 2, 3]);
  assert.equal(batch.choices[0].text, batch.choices[1].text);  // greedy: n identical choices
  assert.equal(batch.choices[2].text, batch.choices[3].text);
  assert.equal(batch.usage.completion_tokens, 12);
  report.batch = { texts: batch.choices.map((c) => c.text), usage: batch.usage };

  // Completions logprobs: the chosen token's and the top 3 at each step.
  const lp = await client.completions.create({
    model, prompt: 'Hello', max_tokens: 4, temperature: 0, ignore_eos: true, logprobs: 3,
  });
  const l = lp.choices[0].logprobs;
  assert.equal(l.tokens.length, 4);
  assert.equal(l.token_logprobs.length, 4);
  assert.equal(l.top_logprobs.length, 4);
  assert.equal(l.text_offset.length, 4);
  for (let i = 0; i < 4; ++i) {
    const top = Object.values(l.top_logprobs[i]);
    assert.ok(top.length >= 1 && top.length <= 3);
    assert.ok(Math.max(...top) >= l.token_logprobs[i] - 1e-6);  // greedy: the best is chosen
  }
  report.completion_logprobs = l;

  // Chat logprobs: content[] with bytes and top_logprobs.
  const chat = await client.chat.completions.create({
    model, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 3, temperature: 0, ignore_eos: true,
    logprobs: true, top_logprobs: 2,
  });
  assert.match(chat.id, /^chatcmpl-[0-9a-f]{32}$/);
  const content = chat.choices[0].logprobs.content;
  assert.equal(content.length, 3);
  for (const entry of content) {
    assert.equal(typeof entry.token, 'string');
    assert.ok(Array.isArray(entry.bytes));
    assert.equal(entry.top_logprobs.length, 2);
    assert.ok(entry.top_logprobs[0].logprob >= entry.top_logprobs[1].logprob);
  }
  report.chat_logprobs = content;

  // A streamed chat with two choices through the async iterator.
  const stream = await client.chat.completions.create({
    model, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 4, temperature: 0, ignore_eos: true,
    n: 2, stream: true, stream_options: { include_usage: true },
  });
  const texts = ['', ''];
  const finish = [null, null];
  let usage = null;
  let chunks = 0;
  for await (const chunk of stream) {
    ++chunks;
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      texts[c.index] += c.delta.content ?? '';
      if (c.finish_reason) finish[c.index] = c.finish_reason;
    }
  }
  assert.deepEqual(finish, ['length', 'length']);
  assert.equal(texts[0], texts[1]);
  assert.equal(usage.completion_tokens, 8);
  report.stream = { texts, usage, chunks };

  // Embeddings: not an embedding model → the client's NotFoundError.
  try {
    await client.embeddings.create({ model, input: 'x' });
    assert.fail('embeddings answered');
  } catch (e) {
    assert.ok(e instanceof OpenAI.NotFoundError, `not a NotFoundError: ${e}`);
    assert.match(e.message, /not an embedding model/);
    report.embeddings_error = { status: e.status, message: e.message };
  }
}

async function loading() {
  const list = await client.models.list();
  const entry = list.data.find((m) => m.id === model);
  assert.ok(entry, `model ${model} not listed`);
  assert.equal(entry.status, 'loading');
  try {
    await client.completions.create({ model, prompt: 'Hello', max_tokens: 1 });
    assert.fail('a completion answered while the model loads');
  } catch (e) {
    assert.ok(e instanceof OpenAI.APIError, `not an APIError: ${e}`);
    assert.equal(e.status, 503);
    assert.equal(e.type, 'ServiceUnavailableError');
    report.loading_error = { status: e.status, type: e.type, retry_after: e.headers?.get('retry-after') };
  }
}

async function auth() {
  const keyed = new OpenAI({ baseURL, apiKey: process.env.INFERA_TEST_API_KEY, maxRetries: 0, timeout: 60_000 });
  const list = await keyed.models.list();
  report.listed = list.data.map((m) => m.id);
  const done = await keyed.completions.create({ model, prompt: 'Hello', max_tokens: 2, temperature: 0,
                                                ignore_eos: true });
  report.usage = done.usage;
  for (const [apiKey, kind, status] of [['inf-wrong', OpenAI.AuthenticationError, 401],
                                        [process.env.INFERA_TEST_SCOPED_KEY, OpenAI.PermissionDeniedError, 403]]) {
    const other = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 60_000 });
    try {
      await other.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 1 });
      assert.fail(`key ${status} answered`);
    } catch (e) {
      assert.ok(e instanceof kind, `not a ${kind.name}: ${e}`);
      assert.equal(e.status, status);
      report[`error_${status}`] = { status: e.status, message: e.message };
    }
  }
}

if (scenario === 'serving') await serving();
else if (scenario === 'loading') await loading();
else if (scenario === 'auth') await auth();
else throw new Error(`unknown scenario ${scenario}`);
console.log(JSON.stringify(report));
