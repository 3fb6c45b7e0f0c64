-- GET /v1/rings/bench/lookup for 10,000 different keys, replicas 3. The
-- requests are built in init: building one per call in request() costs
-- wrk (which shares the server's cores) about 8% of the rate.
local requests = {}
local n = 10000
local i = 0
init = function()
  for k = 1, n do
    requests[k] = wrk.format("GET", string.format("/v1/rings/bench/lookup?key=user:%08d&replicas=3", k))
  end
end
request = function()
  i = i % n + 1
  return requests[i]
end
