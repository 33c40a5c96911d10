# otel.sh - what the OpenTelemetry tests share: OpenTelemetry's .proto
# files and protobufjs from npm (fetched once per build tree), and the
# test OTLP receiver (tests/servers/otlp_receiver.py).
# shellcheck shell=bash
#
# Source tests/lib/common.sh first.
#
# otel_npm_fetch: protobufjs and the .proto files of opentelemetry-proto as
#   @opentelemetry/otlp-grpc-exporter-base@0.38.0 ships them (the last
#   version to ship the .proto files themselves) into $BUILD/npm-otel; sets
#   NPM_DIR and PROTO_DIR. Status 1 when npm cannot fetch them.
# otel_check FILE OUT [metrics]: FILE (OTLP/JSON traces, or metrics) checked
#   against the .proto files by tests/slicer/check_otlp.js, decoded to OUT.
# receiver_start NAME [ARGS...]: the receiver on a free loopback port (or
#   --port N), keeping requests in $WORK/NAME; sets RECV_PORT, RECV_DIR,
#   RECV_PID. receiver_stop: ends the last one started, and waits for it.

NPM_DIR=$BUILD/npm-otel
PROTOBUFJS=protobufjs@7.6.6
PROTO_PACKAGE=@opentelemetry/otlp-grpc-exporter-base@0.38.0
PROTO_DIR=$NPM_DIR/proto/package/build/protos
otel_npm_fetch() {
  local npm_opts=(--cache "$NPM_DIR/cache" --no-audit --no-fund --ignore-scripts
                  --loglevel=error --fetch-retries=1 --fetch-timeout=30000)
  [ -f "$NPM_DIR/ready" ] && return 0
  rm -rf "$NPM_DIR/node_modules" "$NPM_DIR/proto"
  mkdir -p "$NPM_DIR/proto"
  timeout 300 npm install --prefix "$NPM_DIR" "${npm_opts[@]}" "$PROTOBUFJS" \
    >"$NPM_DIR/npm.log" 2>&1 || return 1
  (cd "$NPM_DIR/proto" && timeout 300 npm pack "${npm_opts[@]}" "$PROTO_PACKAGE") \
    >>"$NPM_DIR/npm.log" 2>&1 || return 1
  tar -xzf "$NPM_DIR"/proto/opentelemetry-otlp-grpc-exporter-base-*.tgz \
    -C "$NPM_DIR/proto" package/build/protos || return 1
  [ -f "$PROTO_DIR/opentelemetry/proto/trace/v1/trace.proto" ] || return 1
  touch "$NPM_DIR/ready"
}

otel_check() {
  node "$REPO/tests/slicer/check_otlp.js" "$NPM_DIR/node_modules" "$PROTO_DIR" "$@"
}

receiver_start() {
  local name=$1 portfile
  shift
  RECV_DIR=$WORK/$name
  portfile=$(mktemp -u "$WORK/receiver-$name.XXXXXX")
  "$PYTHON" "$REPO/tests/servers/otlp_receiver.py" "$RECV_DIR" "$portfile" --lifetime 120 "$@" &
  RECV_PID=$!
  at_exit "kill $RECV_PID 2>/dev/null"
  wait_until 60 test -s "$portfile" || fail "the OTLP receiver $name did not start in 60 s"
  RECV_PORT=$(cat "$portfile")
}

receiver_stop() {
  kill "$RECV_PID" 2>/dev/null || true
  wait "$RECV_PID" 2>/dev/null || true
}
