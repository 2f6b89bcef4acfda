-- wrk script: POST a KServe v2 JSON infer request for the `simple` model (2 x INT32 [1,16]).
-- Used by bench/tls/run.sh for TLS vs plaintext over HTTP keep-alive (docs/benchmarks.md).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local a, b = {}, {}
for i = 0, 15 do a[#a + 1] = tostring(i); b[#b + 1] = "1" end
wrk.body = '{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"INT32","data":[' .. table.concat(a, ",") ..
           ']},{"name":"INPUT1","shape":[1,16],"datatype":"INT32","data":[' .. table.concat(b, ",") .. ']}]}'
