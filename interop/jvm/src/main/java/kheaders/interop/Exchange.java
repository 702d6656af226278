package kheaders.interop;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * {@code exchange BOOTSTRAP PRODUCE_TOPIC CONSUME_TOPIC COUNT}: produce the records on stdin
 * (see {@link Records}) through a watching ProducerInterceptor, then read COUNT records of
 * CONSUME_TOPIC's partition 0 from its start through a watching ConsumerInterceptor.
 */
final class Exchange {
    private Exchange() {}

    static void run(String[] args) throws Exception {
        String bootstrap = args[0];
        List<ProducerRecord<byte[], byte[]>> records = Records.readStdin(args[1]);
        if (!records.isEmpty()) {
            try (KafkaProducer<byte[], byte[]> p =
                    new KafkaProducer<>(Clients.producer(bootstrap, Interceptors.Watch.class))) {
                for (ProducerRecord<byte[], byte[]> r : records) {
                    RecordMetadata md = p.send(r).get();
                    Json.emit(Json.obj("event", "sent", "partition", md.partition(), "offset", md.offset()));
                }
            }
        }
        consume(bootstrap, args[2], Integer.parseInt(args[3]), "interop-exchange");
    }

    static List<ConsumerRecord<byte[], byte[]>> consume(String bootstrap, String topic, int count, String group) {
        List<ConsumerRecord<byte[], byte[]>> got = new java.util.ArrayList<>();
        if (count == 0) return got;
        Map<String, Object> config = Clients.consumer(bootstrap, group, Interceptors.WatchC.class);
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(config)) {
            TopicPartition tp = new TopicPartition(topic, 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (got.size() < count && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    got.add(r);
                    Json.emit(Records.describe("record", r));
                }
            }
        }
        return got;
    }
}
