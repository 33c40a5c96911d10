# nginx.sh - start a real nginx (Debian's /usr/sbin/nginx) on a free
# loopback port, for the demo, the benchmark and the integration tests.
# shellcheck shell=bash
#
# Source tests/lib/common.sh first (free_port, wait_port, at_exit, fail, $WORK).
#
# nginx_start SITE_DIR [NAME|DIR]
#   Writes DIR/nginx.conf (DIR defaults to $WORK/NAME, NAME to "nginx"; an
#   argument containing a slash is taken as DIR itself) and starts nginx as a
#   daemon with one worker, serving SITE_DIR on 127.0.0.1:PORT, and on
#   [::1]:PORT too when IPv6 loopback works. Waits (60 s at most) until the
#   port answers. Stopped automatically when the script exits.
#   Sets NGINX_PORT, NGINX_URL (http://127.0.0.1:PORT), NGINX_IPV6 (1 or 0),
#   NGINX_DIR, NGINX_LOG (the access log), NGINX_ERROR_LOG.
#   keepalive_timeout 65 s, keepalive_requests 100000 (so that a long ab -k
#   run stays on one connection). NGINX_EXTRA, if set, goes into the server
#   block as it is (e.g. a TLS listen line and its certificate);
#   NGINX_HTTP_EXTRA, if set, goes into the http block (e.g. a log_format).
#
# The access log has one line per request, fields separated by tabs:
#   1 $remote_addr   2 $remote_port   3 $connection   4 $connection_requests
#   5 $request_method   6 $request_uri   7 $status   8 $body_bytes_sent
#   9 $request_time (s, ms resolution)   10 $msec (epoch s.ms, at log time)
# nginx writes the line after the response is sent: use nginx_wait_log N
# (or nginx_settle) before reading it. /.nginx-status (stub_status, not
# logged) tells nginx_settle what nginx is still doing.
#
# nginx_stop DIR: stop the nginx started in DIR (TERM, then KILL after 2.5 s).

# _nginx_free_port: a port free on 127.0.0.1 and, when IPv6 loopback works,
# on ::1 too. Prints "PORT IPV6".
_nginx_free_port() { "$PYTHON" "$REPO/tests/lib/free_port.py" --ipv6 "$WORK/ports"; }

nginx_start() {
  local site=$1 where=${2:-nginx}
  [ -d "$site" ] || fail "nginx_start: no site directory $site"
  command -v nginx >/dev/null 2>&1 || PATH=$PATH:/usr/sbin
  command -v nginx >/dev/null 2>&1 || fail "nginx is not installed (scripts/deps.sh)"
  case $where in
    */*) NGINX_DIR=$where ;;
    *) NGINX_DIR=$WORK/$where ;;
  esac
  site=$(cd "$site" && pwd)
  mkdir -p "$NGINX_DIR/tmp" "$NGINX_DIR/logs"
  NGINX_DIR=$(cd "$NGINX_DIR" && pwd)
  read -r NGINX_PORT NGINX_IPV6 < <(_nginx_free_port)
  NGINX_URL=http://127.0.0.1:$NGINX_PORT
  NGINX_LOG=$NGINX_DIR/logs/access.log
  NGINX_ERROR_LOG=$NGINX_DIR/logs/error.log
  export NGINX_PORT NGINX_URL NGINX_IPV6 NGINX_DIR NGINX_LOG NGINX_ERROR_LOG
  local user_line="" listen6=""
  [ "$(id -u)" -eq 0 ] && user_line="user root;"
  [ "$NGINX_IPV6" = 1 ] && listen6="listen [::1]:$NGINX_PORT;"
  cat > "$NGINX_DIR/nginx.conf" <<CONF
$user_line
worker_processes 1;
daemon on;
pid $NGINX_DIR/nginx.pid;
error_log $NGINX_ERROR_LOG;
events { worker_connections 1024; }
http {
  log_format observe "\$remote_addr\t\$remote_port\t\$connection\t\$connection_requests\t\$request_method\t\$request_uri\t\$status\t\$body_bytes_sent\t\$request_time\t\$msec";
  access_log $NGINX_LOG observe;
  client_body_temp_path $NGINX_DIR/tmp;
  proxy_temp_path $NGINX_DIR/tmp;
  fastcgi_temp_path $NGINX_DIR/tmp;
  uwsgi_temp_path $NGINX_DIR/tmp;
  scgi_temp_path $NGINX_DIR/tmp;
  types { text/html html; text/css css; application/javascript js;
          image/png png; image/svg+xml svg; }
  default_type text/plain;
  keepalive_timeout 65;
  keepalive_requests 100000;
  ${NGINX_HTTP_EXTRA:-}
  server {
    listen 127.0.0.1:$NGINX_PORT;
    $listen6
    root $site;
    location = /.nginx-status { stub_status; access_log off; }
    ${NGINX_EXTRA:-}
  }
}
CONF
  nginx -p "$NGINX_DIR" -c "$NGINX_DIR/nginx.conf" 2>> "$NGINX_ERROR_LOG" ||
    fail "nginx did not start (see $NGINX_ERROR_LOG: $(tail -n 1 "$NGINX_ERROR_LOG"))"
  at_exit "nginx_stop '$NGINX_DIR'"
  wait_port "$NGINX_PORT"
  : > "$NGINX_LOG"  # the readiness probe sends no request; start clean anyway
}

nginx_stop() {
  local dir=$1 pid
  [ -s "$dir/nginx.pid" ] || return 0
  pid=$(cat "$dir/nginx.pid")
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.05; done
  kill -9 "$pid" 2>/dev/null || true
}

# nginx_wait_log N: until the access log has at least N lines (60 s at most).
_nginx_log_has() { [ "$(wc -l < "$NGINX_LOG")" -ge "$1" ]; }
nginx_wait_log() {
  local want=$1
  wait_until 60 _nginx_log_has "$want" ||
    fail "the access log has $(wc -l < "$NGINX_LOG") lines after 60 s, expected $want"
}

# _nginx_idle: nginx's stub_status says that it is reading no request and
# writing none but the status request itself. Its one worker handles events
# one after another, so every request it began before this one has been
# answered and logged (the log line is written when a request ends).
_nginx_idle() {
  curl -s -m 10 "http://127.0.0.1:$NGINX_PORT/.nginx-status" 2>/dev/null |
    grep -q '^Reading: 0 Writing: 1 '
}

# nginx_settle: until nginx has logged every request it has received (60 s
# at most): call it after the clients have ended, before reading the log.
nginx_settle() {
  wait_until 60 _nginx_idle ||
    fail "nginx is still busy after 60 s: $(curl -s -m 10 "http://127.0.0.1:$NGINX_PORT/.nginx-status" | tail -n 1)"
}
