-- wrk script: POST a KServe v2 JSON infer request for the demo repository's
-- `identity_fp32` with one image-sized FP32 input (INFERA_BENCH_ELEMENTS values, default
-- 150528 = 1x3x224x224, decimals like -1.23) and check every response (see response()).
-- Prints one `RESULT {...}` line from done().
--
--   wrk -t2 -c8 -d10s -s bench/grpc/identity_fp32_infer.lua \
--       http://127.0.0.1:8000/v2/models/identity_fp32/infer

local n = tonumber(os.getenv("INFERA_BENCH_ELEMENTS") or "150528")
local values = {}
for i = 0, n - 1 do
  values[#values + 1] = string.format("%.2f", (i % 1000) / 100 - 5)
end
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"inputs":[{"name":"INPUT0","shape":[' .. n .. '],"datatype":"FP32","data":[' ..
  table.concat(values, ",") .. ']}]}'
local expected_shape = '"shape":[' .. n .. ']'

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  bad = 0
  first_bad = ""
end

-- Comparing every value would cost the client more than the server: the answer must be
-- 200 with OUTPUT0 of the right shape, and every answer the same length (the same values
-- written the same way) as this thread's first one.
function response(status, headers, body)
  local ok = status == 200 and string.find(body, '"name":"OUTPUT0"', 1, true)
      and string.find(body, expected_shape, 1, true)
  if ok then
    if not expected_length then expected_length = #body end
    ok = #body == expected_length
  end
  if not ok then
    if bad == 0 then first_bad = status .. " " .. string.sub(body, 1, 200) end
    bad = bad + 1
  end
end

function done(summary, latency, requests)
  local bad_total, first = 0, ""
  for _, thread in ipairs(threads) do
    bad_total = bad_total + thread:get("bad")
    if first == "" then first = thread:get("first_bad") end
  end
  local socket_errors = summary.errors.connect + summary.errors.read + summary.errors.write +
                        summary.errors.timeout
  local seconds = summary.duration / 1e6
  io.write(string.format(
    'RESULT {"protocol": "http", "requests": %d, "errors": %d, "throughput_rps": %.1f, ' ..
    '"mean_ms": %.3f, "p50_ms": %.3f, "p90_ms": %.3f, "p99_ms": %.3f}\n',
    summary.requests, bad_total + socket_errors, summary.requests / seconds, latency.mean / 1000,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000))
  if bad_total + socket_errors > 0 then
    io.write("first bad response: " .. first .. "\n")
  end
end
