package kheaders.interop;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * {@code hooks BOOTSTRAP SEND_TOPIC CONSUME_TOPIC COUNT}: the interceptor scenarios that
 * tests/interop/test_java_interceptors.py runs on kheaders too, in one JVM. Every event
 * carries its scenario.
 */
final class Hooks {
    private Hooks() {}

    static void run(String[] args) throws Exception {
        String bootstrap = args[0];
        String sendTopic = args[1];
        send(bootstrap, sendTopic, "chain", Map.of(), 16, Interceptors.A.class, Interceptors.B.class);
        send(bootstrap, sendTopic, "send-raises", Map.of(), 16,
                Interceptors.SendRaiser.class, Interceptors.B.class);
        send(bootstrap, sendTopic, "send-null", Map.of(), 16,
                Interceptors.SendNull.class, Interceptors.B.class);
        send(bootstrap, sendTopic, "ack-raises", Map.of(), 16,
                Interceptors.AckRaiser.class, Interceptors.B.class);
        send(bootstrap, sendTopic, "too-large", Map.of(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 1024), 4096,
                Interceptors.A.class);
        consume(bootstrap, args[2], Integer.parseInt(args[3]));
        Json.scenario = null;
    }

    @SafeVarargs
    private static void send(String bootstrap, String topic, String scenario, Map<String, Object> extra,
            int size, Class<?>... interceptors) throws Exception {
        Json.scenario = scenario;
        Map<String, Object> config = Clients.producer(bootstrap, interceptors);
        config.putAll(extra);
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(config)) {
            ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, null,
                    scenario.getBytes(StandardCharsets.UTF_8), new byte[size]);
            Future<RecordMetadata> future;
            try {
                future = p.send(record);
            } catch (RuntimeException e) {
                Json.emit(Json.obj("event", "send_raised", "caller", Interceptors.thread(),
                        "error", e.getClass().getSimpleName()));
                return;
            }
            try {
                RecordMetadata md = future.get();
                Json.emit(Json.obj("event", "delivered", "caller", Interceptors.thread(),
                        "offset", md.offset()));
            } catch (ExecutionException e) {
                Json.emit(Json.obj("event", "failed", "caller", Interceptors.thread(),
                        "error", e.getCause().getClass().getSimpleName()));
            }
            p.flush();
        }
    }

    private static void consume(String bootstrap, String topic, int count) {
        Json.scenario = "consume";
        Interceptors.DROP.add(1L);
        Map<String, Object> config = Clients.consumer(bootstrap, "interop-hooks",
                Interceptors.ConsumeRaiser.class, Interceptors.WatchC.class);
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(config)) {
            TopicPartition tp = new TopicPartition(topic, 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            int got = 0;
            // the watcher drops one offset: the application sees count - 1 records
            while (got < count - 1 && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    got++;
                    Json.emit(Json.obj("event", "app_record", "caller", Interceptors.thread(),
                            "offset", r.offset()));
                }
            }
            c.commitSync();
            Json.emit(Json.obj("event", "committed", "caller", Interceptors.thread()));
        }
    }
}
