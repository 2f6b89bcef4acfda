-- wrk script: POST a KServe v2 JSON infer request for `simple` (add_sub, two INT32
-- [1,16] inputs) and check every response: HTTP 200 and a body carrying both outputs.
-- Prints one `RESULT {...}` line (same fields as infera_grpc_load) from done().
--
--   wrk -t2 -c8 -d10s -s bench/grpc/simple_infer.lua http://127.0.0.1:8000/v2/models/simple/infer

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"inputs":[' ..
  '{"name":"INPUT0","shape":[1,16],"datatype":"INT32","data":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]},' ..
  '{"name":"INPUT1","shape":[1,16],"datatype":"INT32","data":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}]}'

-- OUTPUT0 = INPUT0 + INPUT1 and OUTPUT1 = INPUT0 - INPUT1, as the server writes them.
local expected0 = '"data":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]'
local expected1 = '"data":[-1,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14]'

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  bad = 0        -- globals: read back per thread in done()
  first_bad = ""
end

function response(status, headers, body)
  if status ~= 200 or not string.find(body, expected0, 1, true)
      or not string.find(body, expected1, 1, true) then
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
