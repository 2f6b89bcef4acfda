// The official `openai` npm client's structured-output and tool-calling calls against a
// real infera (driven by tests/integration/test_openai_tools.py). Usage:
//   node openai_tools_client.mjs <base URL, e.g. http://127.0.0.1:PORT/v1> <scenario> <model>
// Scenarios: "shapes" (needs no grammar engine: tool_choice auto's wire shape, a tool
// message round trip, refusals as the client's BadRequestError naming the field) and
// "constrained" (needs the grammar engine: response_format json_schema, tool_choice
// required and a named function, whole and streamed — on a random-weights model, so
// only the constraint makes the output valid).
// Each check throws on a mismatch (exit 1, the message on stderr); on success the script
// prints one JSON object with what it saw, which the test checks again.
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const [baseURL, scenario, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0, timeout: 120_000 });
const report = {};

const weather = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city now',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string', enum: ['Paris', 'Oslo'] }, celsius: { type: 'boolean' } },
      required: ['city', 'celsius'],
      additionalProperties: false,
    },
  },
};
const time = {
  type: 'function',
  function: {
    name: 'get_time',
    parameters: { type: 'object', properties: { utc: { type: 'boolean' } }, required: ['utc'],
                  additionalProperties: false },
  },
};
const ask = [{ role: 'user', content: 'What is the weather in Paris?' }];

function checkWeatherArgs(args) {
  const a = JSON.parse(args);
  assert.ok(['Paris', 'Oslo'].includes(a.city), args);
  assert.equal(typeof a.celsius, 'boolean', args);
  assert.deepEqual(Object.keys(a).sort(), ['celsius', 'city'], args);
}

async function shapes() {
  // tool_choice auto (the default with tools): whatever the model writes, in OpenAI's shape.
  const auto = await client.chat.completions.create({
    model, messages: ask, tools: [weather, time], max_tokens: 8, temperature: 0,
  });
  const m = auto.choices[0].message;
  assert.equal(m.role, 'assistant');
  assert.ok(typeof m.content === 'string' || Array.isArray(m.tool_calls), JSON.stringify(m));
  assert.ok(['stop', 'length', 'tool_calls'].includes(auto.choices[0].finish_reason));
  report.auto = { message: m, finish_reason: auto.choices[0].finish_reason };

  // A round trip: the assistant's call and the tool's result go back through the template.
  const roundTrip = await client.chat.completions.create({
    model, tools: [weather], max_tokens: 4, temperature: 0, ignore_eos: true,
    messages: [...ask,
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function',
        function: { name: 'get_weather', arguments: '{"city": "Paris", "celsius": true}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '21 degrees, sunny' }],
  });
  assert.equal(roundTrip.choices[0].finish_reason, 'length');
  report.round_trip = { usage: roundTrip.usage };

  // Refusals: the client's BadRequestError, the message naming the field.
  for (const [body, field] of [
    [{ tools: [{ type: 'function', function: { name: 'bad name' } }] }, 'tools[0].function.name'],
    [{ tools: [weather], tool_choice: { type: 'function', function: { name: 'nope' } } }, 'tool_choice.function.name'],
    [{ response_format: { type: 'json_schema' } }, 'response_format.json_schema'],
    [{ guided_whitespace_pattern: ' ' }, 'guided_whitespace_pattern'],
  ]) {
    try {
      await client.chat.completions.create({ model, messages: ask, max_tokens: 2, ...body });
      assert.fail(`accepted ${JSON.stringify(body)}`);
    } catch (e) {
      assert.ok(e instanceof OpenAI.BadRequestError, `not a BadRequestError: ${e}`);
      assert.ok(e.message.includes(`'${field}'`), e.message);
      (report.errors ??= []).push(e.message);
    }
  }
}

async function constrained() {
  // response_format json_schema, strict: the content parses and follows the schema.
  const schema = {
    type: 'object',
    properties: { answer: { type: 'string', enum: ['yes', 'no'] }, sure: { type: 'boolean' },
                  tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, maxItems: 3 } },
    required: ['answer', 'sure', 'tags'],
    additionalProperties: false,
  };
  const json = await client.chat.completions.create({
    model, messages: ask, max_tokens: 800, temperature: 1, seed: 1,
    response_format: { type: 'json_schema', json_schema: { name: 'verdict', schema, strict: true } },
  });
  assert.equal(json.choices[0].finish_reason, 'stop');
  const v = JSON.parse(json.choices[0].message.content);
  assert.ok(['yes', 'no'].includes(v.answer) && typeof v.sure === 'boolean' && Array.isArray(v.tags));
  report.json_schema = v;

  // tool_choice required, one call (parallel_tool_calls false: bounded output): one of
  // the tools with valid arguments.
  const required = await client.chat.completions.create({
    model, messages: ask, tools: [weather, time], tool_choice: 'required', parallel_tool_calls: false,
    max_tokens: 800, temperature: 1, seed: 2,
  });
  const rc = required.choices[0];
  assert.equal(rc.finish_reason, 'tool_calls');
  assert.equal(rc.message.content, null);
  assert.equal(rc.message.tool_calls.length, 1);
  for (const call of rc.message.tool_calls) {
    assert.match(call.id, /^call_[0-9a-f]{32}$/);
    assert.equal(call.type, 'function');
    if (call.function.name === 'get_weather') checkWeatherArgs(call.function.arguments);
    else assert.equal(typeof JSON.parse(call.function.arguments).utc, 'boolean');
  }
  report.required = rc.message.tool_calls;

  // A named function: exactly that call (finish "stop", as OpenAI answers a forced call).
  const named = await client.chat.completions.create({
    model, messages: ask, tools: [weather, time], max_tokens: 800, temperature: 1, seed: 3,
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
  });
  const nc = named.choices[0];
  assert.equal(nc.finish_reason, 'stop');
  assert.equal(nc.message.tool_calls.length, 1);
  assert.equal(nc.message.tool_calls[0].function.name, 'get_weather');
  checkWeatherArgs(nc.message.tool_calls[0].function.arguments);
  report.named = nc.message.tool_calls[0];

  // Streamed: delta.tool_calls — index, id and name first, then argument pieces.
  for (const tool_choice of ['required', { type: 'function', function: { name: 'get_weather' } }]) {
    const stream = await client.chat.completions.create({
      model, messages: ask, tools: [weather], tool_choice, parallel_tool_calls: false, max_tokens: 800,
      temperature: 1, seed: 4, stream: true,
    });
    const calls = [];
    let finish = null;
    let pieces = 0;
    for await (const chunk of stream) {
      for (const c of chunk.choices) {
        if (c.finish_reason) finish = c.finish_reason;
        for (const t of c.delta.tool_calls ?? []) {
          ++pieces;
          if (t.id) {
            assert.equal(calls.length, t.index);
            calls.push({ id: t.id, name: t.function.name, arguments: t.function.arguments ?? '' });
          } else {
            calls[t.index].arguments += t.function.arguments;
          }
        }
      }
    }
    assert.equal(finish, tool_choice === 'required' ? 'tool_calls' : 'stop');
    assert.ok(calls.length >= 1);
    for (const call of calls) {
      assert.equal(call.name, 'get_weather');
      checkWeatherArgs(call.arguments);
    }
    (report.streamed ??= []).push({ calls, pieces });
  }
}

if (scenario === 'shapes') await shapes();
else if (scenario === 'constrained') await constrained();
else throw new Error(`unknown scenario ${scenario}`);
console.log(JSON.stringify(report));
