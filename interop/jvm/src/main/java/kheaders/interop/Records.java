package kheaders.interop;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * Records read from stdin, one a line: {@code KEY VALUE [HKEY:HVALUE ...]}, each field base64
 * (header keys too: base64 of their UTF-8), {@code ~} for null and {@code .} for empty.
 */
final class Records {
    private Records() {}

    static byte[] field(String token) {
        if (token.equals("~")) return null;
        if (token.equals(".")) return new byte[0];
        return Base64.getDecoder().decode(token);
    }

    static ProducerRecord<byte[], byte[]> parse(String topic, String line) {
        String[] parts = line.trim().split(" ");
        RecordHeaders headers = new RecordHeaders();
        for (int i = 2; i < parts.length; i++) {
            int colon = parts[i].indexOf(':');
            byte[] key = field(parts[i].substring(0, colon));
            headers.add(new String(key, StandardCharsets.UTF_8), field(parts[i].substring(colon + 1)));
        }
        return new ProducerRecord<>(topic, null, null, field(parts[0]), field(parts[1]), headers);
    }

    static List<ProducerRecord<byte[], byte[]>> readStdin(String topic) throws IOException {
        List<ProducerRecord<byte[], byte[]>> out = new ArrayList<>();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (!line.isBlank()) out.add(parse(topic, line));
        }
        return out;
    }

    static java.util.Map<String, Object> describe(String event, ConsumerRecord<byte[], byte[]> r) {
        return Json.obj(
                "event", event,
                "topic", r.topic(),
                "partition", r.partition(),
                "offset", r.offset(),
                "timestamp", r.timestamp(),
                "timestamp_type", r.timestampType().name,
                "key", Json.b64(r.key()),
                "value", Json.b64(r.value()),
                "headers", Json.headers(r.headers()));
    }
}
