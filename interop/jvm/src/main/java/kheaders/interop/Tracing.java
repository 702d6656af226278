package kheaders.interop;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.instrumentation.kafkaclients.v2_6.KafkaTelemetry;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * {@code tracing BOOTSTRAP IN OUT COUNT}: a Java service on the OpenTelemetry Java SDK with
 * the kafka-clients library instrumentation (KafkaTelemetry.wrap): reads COUNT records of
 * IN, handles each in a CONSUMER span whose parent is the record's W3C context, and
 * produces one record to OUT within it. Every ended span is printed as a {@code span} event.
 */
final class Tracing {
    private Tracing() {}

    static final TextMapGetter<Headers> GETTER = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Headers carrier) {
            List<String> keys = new ArrayList<>();
            for (Header h : carrier) keys.add(h.key());
            return keys;
        }

        @Override
        public String get(Headers carrier, String key) {
            Header h = carrier == null ? null : carrier.lastHeader(key);
            return h == null || h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8);
        }
    };

    static final class Printing implements SpanExporter {
        @Override
        public CompletableResultCode export(Collection<SpanData> spans) {
            for (SpanData s : spans) {
                List<Object> links = new ArrayList<>();
                for (LinkData l : s.getLinks()) {
                    links.add(Json.obj("trace_id", l.getSpanContext().getTraceId(),
                            "span_id", l.getSpanContext().getSpanId(), "attributes", attrs(l.getAttributes())));
                }
                Json.emit(Json.obj("event", "span", "name", s.getName(), "kind", s.getKind().name(),
                        "trace_id", s.getTraceId(), "span_id", s.getSpanId(),
                        "parent_span_id", s.getParentSpanContext().isValid() ? s.getParentSpanId() : null,
                        "scope", s.getInstrumentationScopeInfo().getName(),
                        "attributes", attrs(s.getAttributes()), "links", links));
            }
            return CompletableResultCode.ofSuccess();
        }

        @Override
        public CompletableResultCode flush() {
            return CompletableResultCode.ofSuccess();
        }

        @Override
        public CompletableResultCode shutdown() {
            return CompletableResultCode.ofSuccess();
        }
    }

    static Map<String, Object> attrs(Attributes attributes) {
        Map<String, Object> out = new TreeMap<>();
        attributes.forEach((k, v) -> out.put(k.getKey(), v));
        return out;
    }

    static void run(String[] args) throws Exception {
        String bootstrap = args[0];
        SdkTracerProvider provider = SdkTracerProvider.builder()
                .addSpanProcessor(SimpleSpanProcessor.create(new Printing())).build();
        OpenTelemetrySdk otel = OpenTelemetrySdk.builder().setTracerProvider(provider)
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance())).build();
        KafkaTelemetry telemetry = KafkaTelemetry.create(otel);
        Tracer tracer = otel.getTracer("kheaders-interop");
        int count = Integer.parseInt(args[3]);
        try (Producer<byte[], byte[]> producer = telemetry.wrap(
                        new KafkaProducer<byte[], byte[]>(Clients.producer(bootstrap)));
                Consumer<byte[], byte[]> consumer = telemetry.wrap(
                        new KafkaConsumer<byte[], byte[]>(Clients.consumer(bootstrap, "interop-tracing")))) {
            TopicPartition tp = new TopicPartition(args[1], 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            int got = 0;
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (got < count && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    got++;
                    Context parent = otel.getPropagators().getTextMapPropagator()
                            .extract(Context.root(), r.headers(), GETTER);
                    Span span = tracer.spanBuilder("process " + r.topic()).setParent(parent)
                            .setSpanKind(SpanKind.CONSUMER)
                            .setAttribute("messaging.system", "kafka")
                            .setAttribute("messaging.operation.name", "process")
                            .setAttribute("messaging.operation.type", "process")
                            .setAttribute("messaging.destination.name", r.topic())
                            .setAttribute("messaging.destination.partition.id", String.valueOf(r.partition()))
                            .setAttribute(AttributeKey.longKey("messaging.kafka.offset"), r.offset())
                            .setAttribute("messaging.consumer.group.name", "interop-tracing")
                            .startSpan();
                    try (Scope ignored = span.makeCurrent()) {
                        producer.send(new ProducerRecord<>(args[2], r.key(), r.value())).get();
                    } finally {
                        span.end();
                    }
                }
            }
        }
        provider.shutdown();
    }
}
