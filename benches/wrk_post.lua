-- wrk script: POST the file named by $BODY with $CTYPE; at the end, one JSON line.
local f = assert(io.open(os.getenv("BODY"), "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = os.getenv("CTYPE") or "application/json"
local extra = os.getenv("HDR")
if extra and extra ~= "" then
  local k, v = extra:match("^([^:]+):%s*(.*)$")
  wrk.headers[k] = v
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"seconds":%.3f,"rps":%.1f,"p50_ms":%.2f,"p99_ms":%.2f,"errors":%d}\n',
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    e.connect + e.read + e.write + e.status + e.timeout))
end
