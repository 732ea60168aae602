// Helper for bench/mm2_throughput (kafkaops.mirrormaker). Plain Kafka clients only
// (kafka-clients from the lab archive's libs/); compiled by the bench driver with
//   javac -cp 'libs/*' -d <classes> BenchTool.java
//
//   BenchTool create  <bootstrap> <topic> <partitions>
//   BenchTool reset   <bootstrap> <keep,topics>          delete every other topic but Kafka's own "__" ones
//   BenchTool watch   <bootstrap> <topic> <target> <intervalMs> <timeoutS> [read_committed [settleMs]]
//        prints "<epochMs> <sum of end offsets>" whenever the sum changes; exits 0 at target
//        (read_committed: last stable offsets; settleMs: once at target, go on until the sum has
//        not changed for settleMs, so that a transactional topic's markers are counted too)
//   BenchTool count   <bootstrap> <topic> <timeoutS>
//        number of committed records in topic (read_committed consumer, beginning to end); not timed
//   BenchTool copy    <srcBootstrap> <dstBootstrap> <srcTopic> <dstTopic> <timeoutS> <threads> [consumer.K=V|producer.K=V ...]
//        consume srcTopic from the beginning (manual assignment, no group) and produce every
//        record to the same partition of dstTopic, the partitions dealt round-robin over <threads>
//        threads with a consumer and a producer each; prints one JSON line with the timings.
import java.time.Duration;
import java.util.*;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

public class BenchTool {
    static Admin admin(String bootstrap) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
        return Admin.create(p);
    }

    public static void main(String[] a) throws Exception {
        switch (a[0]) {
            case "create": create(a[1], a[2], Integer.parseInt(a[3])); break;
            case "reset": reset(a[1], new HashSet<>(Arrays.asList(a[2].split(",")))); break;
            case "watch": System.exit(watch(a[1], a[2], Long.parseLong(a[3]), Long.parseLong(a[4]), Long.parseLong(a[5]),
                                            a.length > 6 ? a[6] : "read_uncommitted", a.length > 7 ? Long.parseLong(a[7]) : 0)); break;
            case "count": count(a[1], a[2], Long.parseLong(a[3])); break;
            case "copy": copy(a); break;
            default: throw new IllegalArgumentException("unknown mode " + a[0]);
        }
    }

    static void create(String bootstrap, String topic, int partitions) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
            long deadline = System.currentTimeMillis() + 30000;
            while (true) {  // wait until every partition has a leader
                try {
                    TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic);
                    if (d.partitions().size() == partitions && d.partitions().stream().allMatch(p -> p.leader() != null)) break;
                } catch (Exception e) { /* not visible yet */ }
                if (System.currentTimeMillis() > deadline) throw new RuntimeException("topic " + topic + " not ready");
                Thread.sleep(200);
            }
        }
    }

    static void reset(String bootstrap, Set<String> keep) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            // Kafka's own "__" topics stay; a Connect worker's ("__connect-...": mm2_connect.names) go
            Set<String> del = admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get(20, TimeUnit.SECONDS)
                .stream().filter(t -> (!t.startsWith("__") || t.startsWith("__connect-")) && !keep.contains(t))
                .collect(Collectors.toSet());
            if (!del.isEmpty()) admin.deleteTopics(del).all().get(30, TimeUnit.SECONDS);
            long deadline = System.currentTimeMillis() + 60000;
            while (true) {
                Set<String> left = new HashSet<>(admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get(20, TimeUnit.SECONDS));
                left.retainAll(del);
                if (left.isEmpty()) break;
                if (System.currentTimeMillis() > deadline) throw new RuntimeException("topics not deleted: " + left);
                Thread.sleep(200);
            }
            System.out.println("deleted " + new TreeSet<>(del));
        }
    }

    static int watch(String bootstrap, String topic, long target, long intervalMs, long timeoutS,
                     String isolation, long settleMs) throws Exception {
        long deadline = System.currentTimeMillis() + timeoutS * 1000;
        long last = -1, lastChange = 0;
        ListOffsetsOptions options = new ListOffsetsOptions("read_committed".equals(isolation)
            ? IsolationLevel.READ_COMMITTED : IsolationLevel.READ_UNCOMMITTED);
        try (Admin admin = admin(bootstrap)) {
            Map<TopicPartition, OffsetSpec> spec = null;
            while (System.currentTimeMillis() < deadline) {
                long t = System.currentTimeMillis();
                try {
                    if (spec == null) {
                        TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(5, TimeUnit.SECONDS).get(topic);
                        Map<TopicPartition, OffsetSpec> s = new HashMap<>();
                        d.partitions().forEach(p -> s.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest()));
                        spec = s;
                    }
                    long sum = 0;
                    for (ListOffsetsResult.ListOffsetsResultInfo i : admin.listOffsets(spec, options).all().get(5, TimeUnit.SECONDS).values())
                        sum += i.offset();
                    long now = System.currentTimeMillis();
                    if (sum != last) {
                        // timestamp: midpoint of the request, the best estimate of when the sum was true
                        System.out.println(((t + now) / 2) + " " + sum);
                        System.out.flush();
                        last = sum;
                        lastChange = now;
                    }
                    if (sum >= target && now - lastChange >= settleMs) return 0;
                } catch (Exception e) {
                    spec = null;  // topic not there yet (or metadata changing): describe again
                }
                long sleep = intervalMs - (System.currentTimeMillis() - t);
                if (sleep > 0) Thread.sleep(sleep);
            }
        }
        System.out.println("timeout " + last);
        return 3;
    }

    static void count(String bootstrap, String topic, long timeoutS) throws Exception {
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        cp.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, "10485760");
        cp.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, "52428800");
        cp.put(ConsumerConfig.CLIENT_ID_CONFIG, "bench-count");
        long deadline = System.currentTimeMillis() + timeoutS * 1000;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(cp)) {
            List<TopicPartition> tps = consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
                .map(p -> new TopicPartition(topic, p.partition())).collect(Collectors.toList());
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> end = consumer.endOffsets(tps);  // last stable offsets (read_committed)
            long n = 0;
            while (true) {
                boolean done = true;
                for (TopicPartition tp : tps) done &= consumer.position(tp) >= end.get(tp);
                if (done) break;
                if (System.currentTimeMillis() > deadline) throw new RuntimeException("count: timeout after " + n);
                n += consumer.poll(Duration.ofMillis(500)).count();
            }
            long sum = 0;
            for (long e : end.values()) sum += e;
            System.out.println("{\"records\": " + n + ", \"end_offsets\": " + sum + "}");
        }
    }

    static void copy(String[] a) throws Exception {
        String src = a[1], dst = a[2], srcTopic = a[3], dstTopic = a[4];
        long timeoutS = Long.parseLong(a[5]);
        int threads = Integer.parseInt(a[6]);
        Properties cp = new Properties(), pp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, src);
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, dst);
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, "org.apache.kafka.common.serialization.ByteArraySerializer");
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, "org.apache.kafka.common.serialization.ByteArraySerializer");
        for (int i = 7; i < a.length; i++) {
            String[] kv = a[i].split("=", 2);
            if (kv[0].startsWith("consumer.")) cp.put(kv[0].substring(9), kv[1]);
            else if (kv[0].startsWith("producer.")) pp.put(kv[0].substring(9), kv[1]);
            else throw new IllegalArgumentException(a[i]);
        }
        List<TopicPartition> all;
        Map<TopicPartition, Long> begin, end;
        try (KafkaConsumer<byte[], byte[]> probe = new KafkaConsumer<>(cp)) {
            all = probe.partitionsFor(srcTopic, Duration.ofSeconds(30)).stream()
                .map(p -> new TopicPartition(srcTopic, p.partition()))
                .sorted(Comparator.comparingInt(TopicPartition::partition)).collect(Collectors.toList());
            begin = probe.beginningOffsets(all);
            end = probe.endOffsets(all);
        }
        // Partitions dealt round-robin, one consumer and one producer per thread: how
        // MirrorSourceConnector splits a flow's partitions over its tasks, each task with its own clients.
        List<CopyThread> workers = new ArrayList<>();
        for (int t = 0; t < Math.min(threads, all.size()); t++) {
            List<TopicPartition> mine = new ArrayList<>();
            for (int i = t; i < all.size(); i += threads) mine.add(all.get(i));
            Properties c = (Properties) cp.clone(), p = (Properties) pp.clone();
            c.put(ConsumerConfig.CLIENT_ID_CONFIG, "bench-copy-consumer-" + t);
            p.put(ProducerConfig.CLIENT_ID_CONFIG, "bench-copy-producer-" + t);
            long total = 0;
            for (TopicPartition tp : mine) total += end.get(tp) - begin.get(tp);
            workers.add(new CopyThread(c, p, mine, dstTopic, total, timeoutS));
        }
        for (CopyThread w : workers) w.open();  // clients and metadata before the clock starts, as MM2 has them too
        long t0 = System.nanoTime(), t0Epoch = System.currentTimeMillis();
        for (CopyThread w : workers) { w.t0 = t0; w.start(); }
        for (CopyThread w : workers) w.join();
        long total = 0, consumed = 0, acked = 0, failed = 0, bytes = 0, firstAck = Long.MAX_VALUE, lastAck = 0,
             firstRecord = Long.MAX_VALUE;
        for (CopyThread w : workers) {
            if (w.error != null) throw w.error;
            total += w.total; consumed += w.consumed; acked += w.acked.get(); failed += w.failed.get(); bytes += w.bytes;
            firstAck = Math.min(firstAck, w.firstAck.get());
            lastAck = Math.max(lastAck, w.lastAck.get());
            firstRecord = Math.min(firstRecord, w.firstRecord);
        }
        System.out.printf(Locale.ROOT,
            "{\"threads\": %d, \"total\": %d, \"consumed\": %d, \"acked\": %d, \"failed\": %d, \"payload_bytes\": %d, "
            + "\"t0_epoch_ms\": %d, \"seconds_first_poll_to_last_ack\": %.4f, \"seconds_first_ack_to_last_ack\": %.4f, "
            + "\"seconds_first_poll_to_first_record\": %.4f}%n",
            workers.size(), total, consumed, acked, failed, bytes, t0Epoch, (lastAck - t0) / 1e9, (lastAck - firstAck) / 1e9,
            (firstRecord - t0) / 1e9);
        if (acked != total) System.exit(4);
    }

    /** One copy thread: its partitions from their beginning to the end offsets read before the start. */
    static class CopyThread extends Thread {
        final Properties cp, pp;
        final List<TopicPartition> tps;
        final String dstTopic;
        final long total, timeoutS;
        final AtomicLong acked = new AtomicLong(), failed = new AtomicLong(), firstAck = new AtomicLong(Long.MAX_VALUE),
                         lastAck = new AtomicLong();
        long consumed, bytes, firstRecord = Long.MAX_VALUE, t0;
        Exception error;
        KafkaConsumer<byte[], byte[]> consumer;
        KafkaProducer<byte[], byte[]> producer;

        CopyThread(Properties cp, Properties pp, List<TopicPartition> tps, String dstTopic, long total, long timeoutS) {
            this.cp = cp; this.pp = pp; this.tps = tps; this.dstTopic = dstTopic; this.total = total; this.timeoutS = timeoutS;
        }

        void open() {
            consumer = new KafkaConsumer<>(cp);
            producer = new KafkaProducer<>(pp);
            producer.partitionsFor(dstTopic);
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
        }

        @Override
        public void run() {
            Callback cb = (md, ex) -> {
                if (ex != null) { failed.incrementAndGet(); return; }
                long now = System.nanoTime();
                firstAck.accumulateAndGet(now, Math::min);
                lastAck.set(now);
                acked.incrementAndGet();
            };
            long deadline = t0 + timeoutS * 1_000_000_000L;
            try {
                while (consumed < total && System.nanoTime() < deadline) {
                    ConsumerRecords<byte[], byte[]> recs = consumer.poll(Duration.ofMillis(500));
                    if (firstRecord == Long.MAX_VALUE && !recs.isEmpty()) firstRecord = System.nanoTime();
                    for (ConsumerRecord<byte[], byte[]> r : recs) {
                        producer.send(new ProducerRecord<>(dstTopic, r.partition(), r.timestamp(), r.key(), r.value(), r.headers()), cb);
                        consumed++;
                        bytes += (r.value() == null ? 0 : r.value().length) + (r.key() == null ? 0 : r.key().length);
                    }
                }
                producer.flush();
            } catch (Exception e) {
                error = e;
            } finally {
                producer.close();
                consumer.close();
            }
        }
    }
}
