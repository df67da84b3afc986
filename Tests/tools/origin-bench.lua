-- wrk script for `headwater-bench all`: the same client for Headwater and nginx. It has no
-- response() callback (one makes wrk hand every response to Lua, and wrk becomes the bottleneck):
-- wrk itself counts socket errors and responses with status >= 400 (summary.errors.status), and
-- the benchmark checks bytes per response. Modes, chosen by the environment:
--
--   (nothing)              the URL's path with wrk's -H headers; no request() function, so wrk
--                          sends one prepared request over and over
--   HEADWATER_PATHS=FILE   the paths listed in FILE (one a line), round-robin
--   HEADWATER_RANGE=PATH,LENGTH,SIZE,ALIGN
--                          GET PATH with `Range: bytes=a-b`, SIZE bytes at random offsets that are
--                          multiples of ALIGN inside a file of LENGTH bytes (4096 ranges, seeded)
--
-- In every mode each request carries wrk's -H headers. done() prints one line for the benchmark.

local paths = os.getenv("HEADWATER_PATHS")
local range = os.getenv("HEADWATER_RANGE")

local function headers(extra)
  local all = {}
  for name, value in pairs(wrk.headers) do all[name] = value end
  for name, value in pairs(extra or {}) do all[name] = value end
  return all
end

if paths or range then
  function init(args)
    prepared = {}
    if paths then
      local file = assert(io.open(paths, "r"))
      for path in file:lines() do
        if #path > 0 then prepared[#prepared + 1] = wrk.format("GET", path, headers()) end
      end
      file:close()
    else
      local path, length, size, align = range:match("^([^,]+),(%d+),(%d+),(%d+)$")
      assert(path, "HEADWATER_RANGE: PATH,LENGTH,SIZE,ALIGN")
      length, size, align = tonumber(length), tonumber(size), tonumber(align)
      local slots = math.floor((length - size) / align)
      assert(slots >= 0, "HEADWATER_RANGE: the range is longer than the file")
      math.randomseed(20260101)
      for i = 1, 4096 do
        local first = math.random(0, slots) * align
        prepared[i] = wrk.format("GET", path,
          headers({ ["Range"] = string.format("bytes=%d-%d", first, first + size - 1) }))
      end
    end
    assert(#prepared > 0, "no requests prepared")
    index = 0
  end

  function request()
    index = index % #prepared + 1
    return prepared[index]
  end
end

function done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    "HEADWATER requests=%d duration_us=%d bytes=%d p50_us=%d p99_us=%d "
      .. "connect=%d read=%d write=%d timeout=%d status=%d\n",
    summary.requests, summary.duration, summary.bytes, latency:percentile(50), latency:percentile(99),
    errors.connect, errors.read, errors.write, errors.timeout, errors.status))
end
