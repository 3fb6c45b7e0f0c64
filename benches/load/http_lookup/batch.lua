-- POST /v1/rings/bench/lookup with 1,000 keys, replicas 3 (the body is
-- written by http_lookup.sh).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local f = assert(io.open(os.getenv("BATCH_BODY"), "rb"))
wrk.body = f:read("*a")
f:close()
