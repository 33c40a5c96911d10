# nginx.sh - start a real nginx (Debian's) on a free loopback port.
# shellcheck shell=bash
#
# nginx_start SITE_DIR [NAME]: sets NGINX_PORT, NGINX_LOG, NGINX_DIR.
# The access log is tab separated:
#   remote_addr remote_port connection connection_requests method uri status
#   body_bytes_sent request_time msec
# Stopped automatically when the test exits.

nginx_start() {
  local site=$1 name=${2:-nginx}
  NGINX_DIR=$WORK/$name
  mkdir -p "$NGINX_DIR/tmp" "$NGINX_DIR/logs"
  NGINX_PORT=$(free_port)
  NGINX_LOG=$NGINX_DIR/logs/access.log
  local user_line=""
  [ "$(id -u)" -eq 0 ] && user_line="user root;"
  cat > "$NGINX_DIR/nginx.conf" <<CONF
$user_line
worker_processes 1;
daemon on;
pid $NGINX_DIR/nginx.pid;
error_log $NGINX_DIR/logs/error.log;
events { worker_connections 1024; }
http {
  log_format observe "\$remote_addr\t\$remote_port\t\$connection\t\$connection_requests\t\$request_method\t\$request_uri\t\$status\t\$body_bytes_sent\t\$request_time\t\$msec";
  access_log $NGINX_LOG observe;
  client_body_temp_path $NGINX_DIR/tmp;
  proxy_temp_path $NGINX_DIR/tmp;
  fastcgi_temp_path $NGINX_DIR/tmp;
  uwsgi_temp_path $NGINX_DIR/tmp;
  scgi_temp_path $NGINX_DIR/tmp;
  types { text/html html; text/css css; application/javascript js; }
  default_type text/plain;
  keepalive_timeout 65;
  keepalive_requests 100000;
  server {
    listen 127.0.0.1:$NGINX_PORT;
    root $site;
  }
}
CONF
  nginx -p "$NGINX_DIR" -c "$NGINX_DIR/nginx.conf" || fail "nginx did not start (see $NGINX_DIR/logs/error.log)"
  at_exit "nginx_stop '$NGINX_DIR'"
  wait_port "$NGINX_PORT"
  : > "$NGINX_LOG"  # the readiness probe is no request, but start clean
}

nginx_stop() {
  local dir=$1 pid
  [ -f "$dir/nginx.pid" ] || return 0
  pid=$(cat "$dir/nginx.pid")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.05; done
  kill -9 "$pid" 2>/dev/null || true
}

# nginx_flush: nginx writes its log line after the response; give it a moment.
nginx_settle() { sleep 0.2; }
