package kheaders.interop;

import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/** Byte-array client configs with the interceptors given. */
final class Clients {
    private Clients() {}

    static Map<String, Object> producer(String bootstrap, Class<?>... interceptors) {
        Map<String, Object> c = new HashMap<>();
        c.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        c.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        c.put(ProducerConfig.CLIENT_ID_CONFIG, "interop-java");
        c.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 30000);
        c.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 60000);
        c.put(ProducerConfig.INTERCEPTOR_CLASSES_CONFIG, names(interceptors));
        return c;
    }

    static Map<String, Object> consumer(String bootstrap, String group, Class<?>... interceptors) {
        Map<String, Object> c = new HashMap<>();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG, names(interceptors));
        return c;
    }

    private static String names(Class<?>... classes) {
        StringBuilder sb = new StringBuilder();
        for (Class<?> k : classes) {
            if (sb.length() > 0) sb.append(',');
            sb.append(k.getName());
        }
        return sb.toString();
    }
}
