package kheaders.interop;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.ConsumerInterceptor;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerInterceptor;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;

/** Interceptors that report each call (hook, interceptor, thread, what they saw) as JSON. */
final class Interceptors {
    private Interceptors() {}

    /** Offsets a {@link Stamp} consumer interceptor drops from the batch it returns. */
    static final Set<Long> DROP = ConcurrentHashMap.newKeySet();

    static String thread() {
        return Thread.currentThread().getName();
    }

    static Map<String, Object> offsets(Map<TopicPartition, OffsetAndMetadata> offsets) {
        Map<String, Object> out = new HashMap<>();
        offsets.forEach((tp, om) -> out.put(tp.topic() + ":" + tp.partition(), om.offset()));
        return out;
    }

    /** Reports every producer hook; with {@code stamp}, adds {@code seen.by: NAME}. */
    abstract static class Producing implements ProducerInterceptor<byte[], byte[]> {
        abstract String name();

        boolean stamp() {
            return true;
        }

        @Override
        public ProducerRecord<byte[], byte[]> onSend(ProducerRecord<byte[], byte[]> record) {
            Json.emit(Json.obj("event", "on_send", "interceptor", name(), "thread", thread(),
                    "headers", Json.headers(record.headers())));
            if (stamp()) record.headers().add("seen.by", name().getBytes(StandardCharsets.UTF_8));
            return record;
        }

        @Override
        public void onAcknowledgement(RecordMetadata metadata, Exception exception) {
            Json.emit(Json.obj("event", "on_ack", "interceptor", name(), "thread", thread(),
                    "partition", metadata == null ? null : metadata.partition(),
                    "offset", metadata == null ? null : metadata.offset(),
                    "error", exception == null ? null : exception.getClass().getSimpleName()));
        }

        @Override
        public void close() {}

        @Override
        public void configure(Map<String, ?> configs) {}
    }

    public static final class Watch extends Producing {
        @Override String name() { return "watch"; }
        @Override boolean stamp() { return false; }
    }

    public static final class A extends Producing {
        @Override String name() { return "a"; }
    }

    public static final class B extends Producing {
        @Override String name() { return "b"; }
    }

    /** Throws from onSend. */
    public static final class SendRaiser extends Producing {
        @Override String name() { return "send-raiser"; }

        @Override
        public ProducerRecord<byte[], byte[]> onSend(ProducerRecord<byte[], byte[]> record) {
            record.headers().add("half.done", new byte[] {1});
            throw new IllegalStateException("on_send failed");
        }
    }

    /** Returns null from onSend. */
    public static final class SendNull extends Producing {
        @Override String name() { return "send-null"; }

        @Override
        public ProducerRecord<byte[], byte[]> onSend(ProducerRecord<byte[], byte[]> record) {
            return null;
        }
    }

    /** Throws from onAcknowledgement. */
    public static final class AckRaiser extends Producing {
        @Override String name() { return "ack-raiser"; }
        @Override boolean stamp() { return false; }

        @Override
        public void onAcknowledgement(RecordMetadata metadata, Exception exception) {
            super.onAcknowledgement(metadata, exception);
            throw new IllegalStateException("on_acknowledgement failed");
        }
    }

    /** Reports every consumer hook; drops the offsets in {@link #DROP} from the batch. */
    abstract static class Consuming implements ConsumerInterceptor<byte[], byte[]> {
        abstract String name();

        @Override
        public ConsumerRecords<byte[], byte[]> onConsume(ConsumerRecords<byte[], byte[]> records) {
            List<Object> seen = new ArrayList<>();
            Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> kept = new HashMap<>();
            for (ConsumerRecord<byte[], byte[]> r : records) {
                seen.add(Records.describe("seen", r));
                if (!DROP.contains(r.offset())) {
                    kept.computeIfAbsent(new TopicPartition(r.topic(), r.partition()),
                            tp -> new ArrayList<>()).add(r);
                }
            }
            Json.emit(Json.obj("event", "on_consume", "interceptor", name(), "thread", thread(),
                    "records", seen));
            return new ConsumerRecords<>(kept, records.nextOffsets());
        }

        @Override
        public void onCommit(Map<TopicPartition, OffsetAndMetadata> offsets) {
            Json.emit(Json.obj("event", "on_commit", "interceptor", name(), "thread", thread(),
                    "offsets", offsets(offsets)));
        }

        @Override
        public void close() {}

        @Override
        public void configure(Map<String, ?> configs) {}
    }

    public static final class WatchC extends Consuming {
        @Override String name() { return "watch"; }
    }

    /** Throws from onConsume and onCommit (after reporting the call). */
    public static final class ConsumeRaiser extends Consuming {
        @Override String name() { return "consume-raiser"; }

        @Override
        public ConsumerRecords<byte[], byte[]> onConsume(ConsumerRecords<byte[], byte[]> records) {
            Json.emit(Json.obj("event", "on_consume", "interceptor", name(), "thread", thread(),
                    "count", records.count()));
            throw new IllegalStateException("on_consume failed");
        }

        @Override
        public void onCommit(Map<TopicPartition, OffsetAndMetadata> offsets) {
            super.onCommit(offsets);
            throw new IllegalStateException("on_commit failed");
        }
    }
}
