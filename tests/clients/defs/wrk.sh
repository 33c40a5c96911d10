# wrk: the load generator (epoll, non-blocking sockets, OpenSSL), two
# connections; bounded by a Lua script that stops the thread after five
# answers (wrk itself runs for a duration: its main thread waits out -d),
# so the number of requests varies a little from run to run, and the last
# may be on its way when wrk exits: "same" compares the kinds of request.
ZOO_NEED=(wrk) ZOO_PACKAGE=wrk
ZOO_SAME=distinct
zoo_version() { wrk --version 2>&1 | head -n 1; }
zoo_run() {
  shift
  cat > stop.lua <<'LUA'
local answers = 0
function response(status, headers, body)
  answers = answers + 1
  if answers >= 5 then wrk.thread:stop() end
end
LUA
  wrk -t1 -c2 -d1s -s stop.lua "$2" >/dev/null
}
