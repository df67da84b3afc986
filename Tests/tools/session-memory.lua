-- wrk script for the session-memory row of `headwater-bench all`: starts viewer sessions as players
-- do (GET /ssai/CHANNEL/master.m3u8?device=tv|phone|other, then the v1.m3u8?session=… URI it lists,
-- with Accept-Encoding: gzip), until $HEADWATER_SESSIONS sessions have each had their stitched
-- playlist served once; then prints its counts and exits (wrk would otherwise wait out -d).
-- Run with -t1. Not a throughput test: the response() callback makes wrk parse every response.
local target = tonumber(os.getenv("HEADWATER_SESSIONS") or "1000")
local channel = os.getenv("HEADWATER_CHANNEL") or "demo"
local rendition = os.getenv("HEADWATER_RENDITION") or "v1"
local devices = { "tv", "phone", "other" }
local threads = {}
pending = {}
started, fetched, bad, missing, masters = 0, 0, 0, 0, 0

local function report(reason, s, f, b, m)
  io.write(string.format("HEADWATER_SESSIONS reason=%s started=%d fetched=%d bad=%d missing=%d\n", reason, s, f, b, m))
  io.flush()
end

function setup(thread)
  table.insert(threads, thread)
end

function request()
  local path = table.remove(pending)
  if path then
    return wrk.format("GET", path, { ["Accept-Encoding"] = "gzip" })
  end
  masters = masters + 1
  return wrk.format("GET", "/ssai/" .. channel .. "/master.m3u8?device=" .. devices[masters % 3 + 1])
end

function response(status, headers, body)
  if status ~= 200 then
    bad = bad + 1
    return
  end
  if (headers["Content-Encoding"] or headers["content-encoding"]) == "gzip" then
    fetched = fetched + 1
    if fetched >= target then
      report("done", started, fetched, bad, missing)
      os.exit(0)
    end
    return
  end
  for line in body:gmatch("[^\r\n]+") do
    if line:sub(1, 1) ~= "#" and line:find(rendition .. ".m3u8?session=", 1, true) then
      started = started + 1
      pending[#pending + 1] = line:sub(1, 1) == "/" and line or ("/ssai/" .. channel .. "/" .. line)
      return
    end
  end
  missing = missing + 1
end

function done(summary, latency, requests)
  local s, f, b, m = 0, 0, 0, 0
  for _, thread in ipairs(threads) do
    s, f = s + thread:get("started"), f + thread:get("fetched")
    b, m = b + thread:get("bad"), m + thread:get("missing")
  end
  report("time", s, f, b, m)
  local errors = summary.errors
  io.write(string.format("HEADWATER_ERRORS connect=%d read=%d write=%d timeout=%d status=%d\n",
    errors.connect, errors.read, errors.write, errors.timeout, errors.status))
end
