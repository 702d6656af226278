package kheaders.interop;

import io.cloudevents.CloudEvent;
import io.cloudevents.core.builder.CloudEventBuilder;
import io.cloudevents.core.message.Encoding;
import io.cloudevents.jackson.JsonFormat;
import io.cloudevents.kafka.CloudEventDeserializer;
import io.cloudevents.kafka.CloudEventSerializer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * {@code cloudevents BOOTSTRAP PRODUCE_TOPIC CONSUME_TOPIC COUNT}: the CloudEvents Java SDK's
 * Kafka binding. Produces {@link #events()} (binary and structured, with extensions, with and
 * without data) to PRODUCE_TOPIC, then reads COUNT events of CONSUME_TOPIC's partition 0 with
 * the SDK's deserializer, printing each event's attributes, extensions and data.
 */
final class CloudEvents {
    private CloudEvents() {}

    static final OffsetDateTime TIME = OffsetDateTime.parse("2018-04-05T03:56:24Z");

    /** (id, encoding, event): the same events tests/interop/test_cloudevents_java.py writes. */
    static List<Object[]> events() {
        List<Object[]> out = new ArrayList<>();
        for (Encoding encoding : new Encoding[] {Encoding.BINARY, Encoding.STRUCTURED}) {
            String mode = encoding == Encoding.BINARY ? "binary" : "structured";
            out.add(new Object[] {encoding, base(mode + "-json")
                    .withDataContentType("application/json")
                    .withData("{\"amount\": 12.5, \"name\": \"caf\u00e9\"}".getBytes(StandardCharsets.UTF_8))
                    .withSubject("order/1")
                    .withDataSchema(URI.create("https://example.com/order.json"))
                    .withExtension("comexampleextension1", "value")
                    .withExtension("myint", 42)
                    .withExtension("mybool", true)
                    .build()});
            out.add(new Object[] {encoding, base(mode + "-bytes")
                    .withDataContentType("application/octet-stream")
                    .withData(new byte[] {0, 1, (byte) 0xfe, (byte) 0xff})
                    .withExtension("partitionkey", "order-1")
                    .build()});
            out.add(new Object[] {encoding, base(mode + "-nodata")
                    .withExtension("comexampleextension1", "value")
                    .build()});
        }
        return out;
    }

    private static CloudEventBuilder base(String id) {
        return CloudEventBuilder.v1()
                .withId(id)
                .withSource(URI.create("/interop/java"))
                .withType("com.example.interop")
                .withTime(TIME);
    }

    static Map<String, Object> describe(String event, CloudEvent e) {
        Map<String, Object> attrs = new TreeMap<>();
        for (String name : e.getAttributeNames()) {
            Object v = e.getAttribute(name);
            if (v != null) attrs.put(name, v.toString());
        }
        Map<String, Object> ext = new TreeMap<>();
        for (String name : e.getExtensionNames()) {
            Object v = e.getExtension(name);
            ext.put(name, Json.obj("value", v.toString(), "type", v.getClass().getSimpleName()));
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("event", event);
        out.put("attributes", attrs);
        out.put("extensions", ext);
        out.put("data", e.getData() == null ? null : Json.b64(e.getData().toBytes()));
        return out;
    }

    static void run(String[] args) throws Exception {
        String bootstrap = args[0];
        for (Object[] pair : events()) {
            Encoding encoding = (Encoding) pair[0];
            CloudEvent event = (CloudEvent) pair[1];
            Map<String, Object> c = new LinkedHashMap<>();
            c.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            c.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
            c.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, CloudEventSerializer.class);
            c.put(CloudEventSerializer.ENCODING_CONFIG, encoding);
            c.put(CloudEventSerializer.EVENT_FORMAT_CONFIG, JsonFormat.CONTENT_TYPE);
            try (KafkaProducer<byte[], CloudEvent> p = new KafkaProducer<>(c)) {
                p.send(new ProducerRecord<>(args[1], event.getId().getBytes(StandardCharsets.UTF_8), event)).get();
            }
            Json.emit(describe("sent", event));
        }
        int count = Integer.parseInt(args[3]);
        Map<String, Object> c = new LinkedHashMap<>();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, CloudEventDeserializer.class);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, "interop-cloudevents");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        try (KafkaConsumer<byte[], CloudEvent> consumer = new KafkaConsumer<>(c)) {
            TopicPartition tp = new TopicPartition(args[2], 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            int got = 0;
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (got < count && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], CloudEvent> r : consumer.poll(Duration.ofMillis(200))) {
                    got++;
                    Map<String, Object> d = r.value() == null ? Json.obj("event", "received") : describe("received", r.value());
                    d.put("offset", r.offset());
                    d.put("headers", Json.headers(r.headers()));
                    Json.emit(d);
                }
            }
        }
    }
}
