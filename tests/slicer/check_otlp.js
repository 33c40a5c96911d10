// check_otlp.js - an OTLP/JSON traces (or metrics) file against OpenTelemetry's own
// protobuf definitions (the .proto files of opentelemetry-proto, read by
// protobufjs): every key is a field of its message, every value has the
// type the OTLP/JSON encoding gives that field (ids in hex, 64-bit integers
// as decimal strings, enums as integers), and the request converts to the
// protobuf message ExportTraceServiceRequest, verifies, encodes and decodes
// back to the same spans. Writes the decoded request (ids in hex again,
// 64-bit integers as strings) to OUT for tests/slicer/check_otlp.py.
// With "metrics" last, FILE is an ExportMetricsServiceRequest: the same
// checks of every key and value, and every histogram data point survives
// the round trip with its counts, buckets and attributes.
//
// usage: node check_otlp.js NODE_MODULES PROTO_DIR FILE OUT [metrics]
'use strict';
const fs = require('fs');
const path = require('path');

const [nodeModules, protoDir, file, outFile, kind] = process.argv.slice(2);
const metrics = kind === 'metrics';
const protobuf = require(path.join(nodeModules, 'protobufjs'));

const root = new protobuf.Root();
root.resolvePath = (origin, target) => path.join(protoDir, target);
root.loadSync(metrics ? 'opentelemetry/proto/collector/metrics/v1/metrics_service.proto'
  : 'opentelemetry/proto/collector/trace/v1/trace_service.proto');
root.resolveAll();
const Request = root.lookupType(metrics
  ? 'opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest'
  : 'opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');

function fail(msg) {
  console.error('check_otlp.js: ' + msg);
  process.exit(1);
}

// The OTLP/JSON encoding (OTLP specification, "JSON Protobuf Encoding"):
// proto3 JSON with lowerCamelCase keys, except that trace and span ids are
// hex (not base64) and enums are integers (not names).
const ID_BYTES = { traceId: 16, spanId: 8, parentSpanId: 8 };
const LONG = new Set(['int64', 'uint64', 'fixed64', 'sint64', 'sfixed64']);
const INT = new Set(['int32', 'uint32', 'fixed32', 'sint32', 'sfixed32']);

function checkScalar(field, value, where) {
  const t = field.type;
  if (field.resolvedType instanceof protobuf.Enum) {
    if (!Number.isInteger(value) ||
        !Object.values(field.resolvedType.values).includes(value))
      fail(`${where}: enum ${t} must be one of its integers, is ${JSON.stringify(value)}`);
  } else if (t === 'bytes') {
    const n = ID_BYTES[field.name];
    if (!n) fail(`${where}: a bytes field other than an id`);
    if (typeof value !== 'string' || !new RegExp(`^[0-9a-f]{${2 * n}}$`).test(value))
      fail(`${where}: ${n} bytes in lowercase hex expected, got ${JSON.stringify(value)}`);
    if (/^0+$/.test(value)) fail(`${where}: an all-zero id`);
  } else if (LONG.has(t)) {
    if (typeof value !== 'string' || !/^(0|[1-9][0-9]*)$/.test(value))
      fail(`${where}: ${t} as a decimal string expected, got ${JSON.stringify(value)}`);
  } else if (INT.has(t)) {
    if (!Number.isInteger(value)) fail(`${where}: ${t} must be an integer`);
  } else if (t === 'string') {
    if (typeof value !== 'string') fail(`${where}: a string expected`);
  } else if (t === 'bool') {
    if (typeof value !== 'boolean') fail(`${where}: a boolean expected`);
  } else if (t === 'double' || t === 'float') {
    if (typeof value !== 'number') fail(`${where}: a number expected`);
  } else {
    fail(`${where}: unexpected type ${t}`);
  }
}

// every key a field of type (by its JSON name), every value of its type;
// at most one member of a oneof
function checkMessage(type, obj, where) {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj))
    fail(`${where}: an object expected for ${type.fullName}`);
  for (const [key, value] of Object.entries(obj)) {
    const field = type.fields[key];
    if (!field) fail(`${where}: ${type.fullName} has no field "${key}"`);
    const values = field.repeated ? value : [value];
    if (field.repeated && !Array.isArray(value)) fail(`${where}.${key}: an array expected`);
    values.forEach((v, i) => {
      const at = field.repeated ? `${where}.${key}[${i}]` : `${where}.${key}`;
      if (field.resolvedType instanceof protobuf.Type) checkMessage(field.resolvedType, v, at);
      else checkScalar(field, v, at);
    });
  }
  for (const oneof of type.oneofsArray) {
    const set = oneof.fieldsArray.filter((f) => f.name in obj);
    if (set.length > 1) fail(`${where}: more than one of ${oneof.name}`);
  }
}

const text = fs.readFileSync(file, 'utf8');
const json = JSON.parse(text);
checkMessage(Request, json, 'request');

// the ids to base64, as protobufjs's fromObject takes bytes
const asProto = JSON.parse(text, (key, value) =>
  key in ID_BYTES ? Buffer.from(value, 'hex').toString('base64') : value);
const message = Request.fromObject(asProto);
const problem = Request.verify(message);
if (problem) fail(`verify: ${problem}`);
const wire = Request.encode(message).finish();
const decoded = Request.toObject(Request.decode(wire), {
  longs: String, enums: Number, bytes: String, defaults: false, arrays: true,
});
const back = JSON.parse(JSON.stringify(decoded), (key, value) =>
  key in ID_BYTES ? Buffer.from(value, 'base64').toString('hex') : value);

if (metrics) {
  // the round trip keeps every data point, its counts and attributes
  const points = (r) => r.resourceMetrics.flatMap((x) => x.scopeMetrics.flatMap(
    (y) => y.metrics.flatMap((m) => m.histogram.dataPoints.map((p) => [m.name, p]))));
  const before = points(json), after = points(back);
  if (before.length !== after.length) fail('data points lost in the round trip');
  before.forEach(([name, p], i) => {
    const [name2, q] = after[i];
    for (const k of ['count', 'startTimeUnixNano', 'timeUnixNano'])
      if (String(p[k]) !== String(q[k])) fail(`${name} point ${i}: ${k} changed`);
    if (JSON.stringify(p.bucketCounts) !== JSON.stringify(q.bucketCounts) ||
        JSON.stringify(p.explicitBounds) !== JSON.stringify(q.explicitBounds) ||
        JSON.stringify(p.attributes) !== JSON.stringify(q.attributes) || name !== name2)
      fail(`${name} point ${i}: buckets or attributes changed`);
    const sum = p.bucketCounts.reduce((a, b) => a + Number(b), 0);
    if (sum !== Number(p.count) || p.bucketCounts.length !== p.explicitBounds.length + 1)
      fail(`${name} point ${i}: bucket counts do not add up to count`);
  });
  fs.writeFileSync(outFile, JSON.stringify(back));
  console.log(`otlp: ${before.length} histogram points, ${wire.length} bytes of protobuf, round trip intact`);
  process.exit(0);
}

// the round trip keeps every span, id, time and attribute
function spans(request) {
  return request.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
}
const before = spans(json), after = spans(back);
if (before.length !== after.length)
  fail(`${before.length} spans written, ${after.length} after the round trip`);
before.forEach((s, i) => {
  const t = after[i];
  for (const k of ['traceId', 'spanId', 'name', 'kind', 'startTimeUnixNano', 'endTimeUnixNano'])
    if (s[k] !== t[k]) fail(`span ${i}: ${k} ${s[k]} became ${t[k]}`);
  if ((s.parentSpanId || '') !== (t.parentSpanId || '')) fail(`span ${i}: parentSpanId changed`);
  if (JSON.stringify(s.attributes || []) !== JSON.stringify(t.attributes || []))
    fail(`span ${i}: attributes changed in the round trip`);
});
fs.writeFileSync(outFile, JSON.stringify(back));
console.log(`otlp: ${before.length} spans in ${json.resourceSpans.length} resources, ` +
            `${wire.length} bytes of protobuf, round trip intact`);
