"""Test double standing in for MirrorMaker 2's data path (NOT MirrorMaker 2).

It copies records of one topic from cluster A to a "remote" topic on cluster B the way MM2's
MirrorSourceTask does (same partition, key, value, headers and timestamp), and can be told to
show the faults real MM2 cannot be made to show: drop, corrupt, reorder, duplicate, delay,
misname (copy to a wrongly named remote topic) or extra (a record of the run that no marker is:
a copy with another sequence number).  Faults pick records by the smoke job's
``mm2-smoke-seq`` header.  Used only by tests/live.
"""

import threading
import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient

SEQ_HEADER = "mm2-smoke-seq"
# an extra record carries its marker's seq plus this: a seq the job never sent
EXTRA_SEQ = 100000


class CopierDouble(threading.Thread):
    def __init__(self, source_bootstrap, target_bootstrap, topic, remote, partitions,
                 drop=(), corrupt=(), reorder=(), duplicate=(), extra=(), delay_s=0.0, misname=None):
        super().__init__(daemon=True)
        self.topic = topic
        self.remote = misname or remote
        self.faults = {"drop": set(drop), "corrupt": set(corrupt), "reorder": set(reorder),
                       "duplicate": set(duplicate), "extra": set(extra)}
        self.delay_s = delay_s
        self.copied = 0
        self.stopping = threading.Event()
        self.error = None
        for bs, name in ((source_bootstrap, topic), (target_bootstrap, self.remote)):
            adm = KafkaAdminClient(bootstrap_servers=bs, client_id="copier-double")
            try:
                if name not in adm.list_topics():
                    adm.create_topics({name: {"num_partitions": partitions, "replication_factor": 1}})
                    adm.wait_for_topics([name], timeout_ms=30000)
            finally:
                adm.close()
        self.consumer = KafkaConsumer(bootstrap_servers=source_bootstrap, enable_auto_commit=False,
                                      client_id="copier-double")
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        self.consumer.assign(tps)
        self.consumer.seek_to_end()
        for tp in tps:
            self.consumer.position(tp)  # pin the start before the job produces
        self.producer = KafkaProducer(bootstrap_servers=target_bootstrap, acks="all",
                                      max_in_flight_requests_per_connection=1, client_id="copier-double")

    def _seq(self, rec):
        for key, val in rec.headers or []:
            if key == SEQ_HEADER:
                return int(val.decode())
        return None

    def _send(self, rec, value=None, headers=None):
        self.producer.send(self.remote, key=rec.key, value=rec.value if value is None else value,
                           headers=list(rec.headers or []) if headers is None else headers,
                           partition=rec.partition, timestamp_ms=rec.timestamp)
        self.copied += 1

    def run(self):
        held = {}
        try:
            while not self.stopping.is_set():
                batch = self.consumer.poll(timeout_ms=200)
                if batch and self.delay_s:
                    time.sleep(self.delay_s)  # each fetched batch reaches the target delay_s late
                for records in batch.values():
                    for rec in records:
                        seq = self._seq(rec)
                        if seq in self.faults["drop"]:
                            continue
                        if seq in self.faults["reorder"] and rec.partition not in held:
                            held[rec.partition] = rec  # sent after the next record of its partition
                            continue
                        if seq in self.faults["corrupt"]:
                            value = bytearray(rec.value)
                            value[0] ^= 0xFF
                            self._send(rec, bytes(value))
                        else:
                            self._send(rec)
                        if seq in self.faults["duplicate"]:
                            self._send(rec)
                        if seq in self.faults["extra"]:
                            self._send(rec, headers=[(k, str(EXTRA_SEQ + seq).encode() if k == SEQ_HEADER else v)
                                                     for k, v in rec.headers])
                        if rec.partition in held:
                            self._send(held.pop(rec.partition))
                self.producer.flush(30)
        except Exception as exc:  # noqa: BLE001 - surfaced by stop()
            self.error = exc

    def stop(self):
        self.stopping.set()
        self.join(30)
        self.consumer.close()
        self.producer.close(10)
        if self.error:
            raise self.error
