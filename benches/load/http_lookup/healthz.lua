-- GET /healthz, the HTTP floor: the request is built once, as lookup.lua's
-- are, so both scenarios cost wrk the same per request.
local req
init = function() req = wrk.format("GET", "/healthz") end
request = function() return req end
