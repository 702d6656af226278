// Events written by the CloudEvents JavaScript SDK's own Kafka binding (Kafka.binary and
// Kafka.structured), printed as JSON records for tests/cloudevents/test_sdk_javascript.py.
//
// Each message becomes the record a Kafka client sends. kafkajs (the client the SDK's
// examples/kafka-ex uses) encodes headers in Object.keys order, a header whose value is
// null or undefined as a null header, a Buffer as its bytes and anything else as
// String(value) in UTF-8; key and value the same way (kafkajs 2.2.4,
// src/protocol/recordBatch/record/v0/index.js and src/protocol/encoder.js writeVarIntBytes).
// Output: [{case, mode, headers: [[key, base64 | null]], key, value, attributes}], where
// key and value are base64 or null and attributes is the event as the SDK itself writes it
// in JSON (toJSON), without its data.
"use strict";

const { CloudEvent, Kafka } = require("cloudevents");

function wire(v) {
  if (v === null || v === undefined) return null;
  const bytes = Buffer.isBuffer(v) ? v : Buffer.from(String(v), "utf8");
  return bytes.toString("base64");
}

const base = { source: "/mycontext", type: "com.example.someevent" };
const events = {
  // JSON data goes as text: kafkajs would send an object as "[object Object]"
  json: new CloudEvent({
    ...base,
    datacontenttype: "application/json",
    data: JSON.stringify({ a: [1, "é"] }),
    subject: "s-1",
    partitionkey: "order-7",
    comexampleext: "v",
  }),
  none: new CloudEvent({ ...base }),
  bytes: new CloudEvent({ ...base, data: Buffer.from([255, 0, 1]) }),
  text: new CloudEvent({ ...base, datacontenttype: "text/plain", data: "héllo" }),
};

const out = [];
for (const [name, event] of Object.entries(events)) {
  const attributes = JSON.parse(JSON.stringify(event));
  delete attributes.data;
  delete attributes.data_base64;
  for (const mode of ["binary", "structured"]) {
    const message = Kafka[mode](event);
    out.push({
      case: name,
      mode,
      headers: Object.keys(message.headers).map((k) => [k, wire(message.headers[k])]),
      key: wire(message.key),
      value: wire(message.value),
      attributes,
    });
  }
}
process.stdout.write(JSON.stringify(out));
