"""Record what the JMX exporter serves from a real dedicated-mode MirrorMaker 2 with the mirrormaker
role's rules: the fixture of tests/unit/plugins/filter/test_status.py.

    . scripts/env.sh && python3 tests/live/record_exporter.py OUT.txt

Starts the lab's brokers A and B and MM2 (A->B, B->A) with the exporter agent of
.cache/jmx-exporter in KAFKA_OPTS, the rules rendered from
roles/mirrormaker/templates/jmx_exporter.yml.j2, copies records A -> B on a topic with two
partitions and a consumer group, and writes the exporter's text without the JVM's series.
"""

import glob
import os
import sys
import time
import urllib.request

import jinja2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

TEMPLATE = os.path.join(harness.REPO, "roles", "mirrormaker", "templates", "jmx_exporter.yml.j2")
FLOWS = [{"source": "A", "target": "B", "topics": ["orders"], "groups": ["g1"], "sync_group_offsets": True},
         {"source": "B", "target": "A", "topics": ["orders"]}]


def rules(path):
    env = jinja2.Environment(keep_trailing_newline=True)
    env.filters["comment"] = lambda text: "# " + text
    with open(TEMPLATE) as fh:
        text = env.from_string(fh.read()).render(ansible_managed="recorded by tests/live/record_exporter.py")
    with open(path, "w") as fh:
        fh.write(text)


def scrape(port):
    return urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=20).read().decode()


def main(out):
    jar = sorted(glob.glob(os.path.join(harness.REPO, ".cache", "jmx-exporter", "jmx_prometheus_javaagent-*.jar")))[-1]
    lab = harness.Lab()
    try:
        lab.start_brokers()
        config = os.path.join(lab.tmp, "jmx-exporter.yml")
        rules(config)
        port = harness.free_ports(1)[0]
        os.environ["KAFKA_OPTS"] = "-javaagent:%s=127.0.0.1:%d:%s" % (jar, port, config)
        from kafka import KafkaProducer
        from kafka.admin import KafkaAdminClient, NewTopic
        admin = KafkaAdminClient(bootstrap_servers=lab.bootstrap("A"))
        admin.create_topics([NewTopic("orders", 2, 1)])
        lab.start_mm2(FLOWS, wait_for=("B", "A.orders"))
        producer = KafkaProducer(bootstrap_servers=lab.bootstrap("A"))
        from kafka import KafkaConsumer
        consumer = KafkaConsumer("orders", bootstrap_servers=lab.bootstrap("A"), group_id="g1",
                                 auto_offset_reset="earliest", consumer_timeout_ms=3000)
        # A steady flow for 70 s: the windowed rates and latencies (2 x 30 s) hold it.
        for second in range(70):
            for i in range(20):
                producer.send("orders", b"record-%d-%d" % (second, i))
            producer.flush()
            if second % 10 == 0:
                # Read what is there (the iterator ends after consumer_timeout_ms) and commit it.
                list(consumer)
                consumer.commit()
            time.sleep(1)
        text = scrape(port)
        kept = []
        for line in text.splitlines():
            name = line.split(" ")[2] if line.startswith("# ") else line
            if name.startswith(("jvm", "process", "jmx_")):
                continue
            kept.append(line)
        with open(out, "w") as fh:
            fh.write("# Recorded by tests/live/record_exporter.py from MirrorMaker 2 (%s, dedicated mode, flows A->B\n"
                     "# and B->A, topic orders with 2 partitions, group g1) with %s and\n"
                     "# roles/mirrormaker/templates/jmx_exporter.yml.j2; JVM series dropped.\n"
                     % (os.path.basename(lab.archive), os.path.basename(jar)))
            fh.write("\n".join(kept) + "\n")
        print("written %s (%d lines)" % (out, len(kept)))
    finally:
        lab.stop()


if __name__ == "__main__":
    main(sys.argv[1])
