package kheaders.interop;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.annotation.BackOff;
import org.springframework.kafka.annotation.DltHandler;
import org.springframework.kafka.annotation.EnableKafka;
import org.springframework.kafka.annotation.EnableKafkaRetryTopic;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.annotation.RetryableTopic;
import org.springframework.kafka.config.ConcurrentKafkaListenerContainerFactory;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.KafkaAdmin;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * {@code spring-retry BOOTSTRAP GROUP DLT_COUNT TIMEOUT_S TOPIC=MODE...}: a plain Spring
 * (no Boot) {@code @RetryableTopic} listener on the main topics given, with Spring's
 * defaults except the back-off (system properties {@code interop.attempts}, {@code
 * interop.delay}, {@code interop.multiplier}, {@code interop.max.delay}). MODE says where
 * the listener throws: {@code main} (only on the main topic), {@code retry} (only on retry
 * topics), {@code all}. Every delivery prints an {@code attempt} event, every dead letter a
 * {@code dlt} event; the run ends after DLT_COUNT dead letters (or TIMEOUT_S seconds).
 */
@Configuration
@EnableKafka
@EnableKafkaRetryTopic
public class SpringRetry {
    static final Map<String, String> MODES = new HashMap<>();
    static CountDownLatch dlts;

    static void run(String[] args) throws Exception {
        System.setProperty("interop.bootstrap", args[0]);
        System.setProperty("interop.group", args[1]);
        dlts = new CountDownLatch(Integer.parseInt(args[2]));
        long timeout = Long.parseLong(args[3]);
        StringBuilder topics = new StringBuilder();
        for (int i = 4; i < args.length; i++) {
            String[] tm = args[i].split("=", 2);
            MODES.put(tm[0], tm[1]);
            if (topics.length() > 0) topics.append(',');
            topics.append(tm[0]);
        }
        System.setProperty("interop.topics", topics.toString());
        try (AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext(SpringRetry.class)) {
            boolean all = dlts.await(timeout, TimeUnit.SECONDS);
            Json.emit(Json.obj("event", "stopping", "all_dead_letters", all));
        }
    }

    static String mainTopic(String topic) {
        for (String main : MODES.keySet()) {
            if (topic.equals(main) || topic.startsWith(main + "-")) return main;
        }
        return topic;
    }

    @Bean
    public Listener listener() {
        return new Listener();
    }

    @Bean
    public TaskScheduler taskScheduler() {
        ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
        scheduler.setThreadNamePrefix("retry-scheduler-");
        return scheduler;
    }

    @Bean
    public KafkaAdmin kafkaAdmin() {
        return new KafkaAdmin(Map.of("bootstrap.servers", System.getProperty("interop.bootstrap")));
    }

    @Bean
    public KafkaTemplate<byte[], byte[]> kafkaTemplate() {
        Map<String, Object> c = new HashMap<>();
        c.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, System.getProperty("interop.bootstrap"));
        c.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        c.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        return new KafkaTemplate<>(new DefaultKafkaProducerFactory<>(c));
    }

    @Bean
    public ConcurrentKafkaListenerContainerFactory<byte[], byte[]> kafkaListenerContainerFactory() {
        Map<String, Object> c = new HashMap<>();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, System.getProperty("interop.bootstrap"));
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, 2000);
        ConcurrentKafkaListenerContainerFactory<byte[], byte[]> f = new ConcurrentKafkaListenerContainerFactory<>();
        f.setConsumerFactory(new DefaultKafkaConsumerFactory<>(c));
        return f;
    }

    /** The listener: reports each delivery, then throws where its topic's mode says. */
    public static class Listener {
        @RetryableTopic(
                attempts = "${interop.attempts:3}",
                backOff = @BackOff(delayString = "${interop.delay:1000}",
                        multiplierString = "${interop.multiplier:2.0}",
                        maxDelayString = "${interop.max.delay:2000}"),
                kafkaTemplate = "kafkaTemplate")
        @KafkaListener(topics = "#{'${interop.topics}'.split(',')}", groupId = "${interop.group}")
        public void listen(ConsumerRecord<byte[], byte[]> record) {
            Map<String, Object> event = Records.describe("attempt", record);
            event.put("thread", Thread.currentThread().getName());
            event.put("received_ms", System.currentTimeMillis());
            Json.emit(event);
            String main = mainTopic(record.topic());
            String mode = MODES.getOrDefault(main, "all");
            boolean onMain = record.topic().equals(main);
            if (mode.equals("all") || (mode.equals("main") && onMain) || (mode.equals("retry") && !onMain)) {
                throw new IllegalStateException("spring listener failed on " + record.topic());
            }
        }

        @DltHandler
        public void dlt(ConsumerRecord<byte[], byte[]> record) {
            Map<String, Object> event = Records.describe("dlt", record);
            event.put("received_ms", System.currentTimeMillis());
            Json.emit(event);
            dlts.countDown();
        }
    }
}
