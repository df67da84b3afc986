-- wrk script for `headwater-bench ssai`: requests the paths listed in the file named by
-- $HEADWATER_PATHS one after another, round-robin (one path per session, so each request is a
-- different viewer), with Accept-Encoding: gzip. Counts responses that are not 2xx or not gzip,
-- and prints one machine-readable line at the end for the benchmark to parse.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  local file = assert(io.open(os.getenv("HEADWATER_PATHS"), "r"))
  prepared = {}
  for path in file:lines() do
    if #path > 0 then
      prepared[#prepared + 1] = wrk.format("GET", path, { ["Accept-Encoding"] = "gzip" })
    end
  end
  file:close()
  assert(#prepared > 0, "no paths in " .. os.getenv("HEADWATER_PATHS"))
  index = 0
  non2xx = 0
  plain = 0
end

function request()
  index = index % #prepared + 1
  return prepared[index]
end

function response(status, headers, body)
  if status < 200 or status > 299 then non2xx = non2xx + 1 end
  local encoding = headers["Content-Encoding"] or headers["content-encoding"]
  if encoding ~= "gzip" then plain = plain + 1 end
end

function done(summary, latency, requests)
  local bad, uncompressed = 0, 0
  for _, thread in ipairs(threads) do
    bad = bad + thread:get("non2xx")
    uncompressed = uncompressed + thread:get("plain")
  end
  local errors = summary.errors
  io.write(string.format(
    "HEADWATER requests=%d duration_us=%d bytes=%d p50_us=%d p99_us=%d non2xx=%d plain=%d "
      .. "connect=%d read=%d write=%d timeout=%d status=%d\n",
    summary.requests, summary.duration, summary.bytes, latency:percentile(50), latency:percentile(99),
    bad, uncompressed, errors.connect, errors.read, errors.write, errors.timeout, errors.status))
end
