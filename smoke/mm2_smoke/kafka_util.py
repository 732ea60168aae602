"""kafka-python clients from Java-style client properties (the same keys MM2's clusters use)."""

import re

# Java client key -> kafka-python keyword
_DIRECT = {
    "security.protocol": "security_protocol",
    "sasl.mechanism": "sasl_mechanism",
    "ssl.endpoint.identification.algorithm": None,   # handled below
    "ssl.truststore.location": "ssl_cafile",          # PEM only (ssl.truststore.type=PEM)
    "ssl.keystore.location": "ssl_certfile",          # PEM only
    "ssl.key.password": "ssl_password",
    "request.timeout.ms": "request_timeout_ms",
}
_JAAS_OPT = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')


def python_client_kwargs(props):
    """(kwargs, ignored keys) for kafka-python from Java client properties."""
    kwargs, ignored = {}, []
    for key, value in (props or {}).items():
        value = "" if value is None else str(value)
        if key == "sasl.jaas.config":
            opts = dict(_JAAS_OPT.findall(value))
            if "username" in opts:
                kwargs["sasl_plain_username"] = opts["username"]
            if "password" in opts:
                kwargs["sasl_plain_password"] = opts["password"]
        elif key == "ssl.endpoint.identification.algorithm":
            kwargs["ssl_check_hostname"] = value.strip().lower() == "https"
        elif _DIRECT.get(key):
            kwargs[_DIRECT[key]] = int(value) if key.endswith(".ms") else value
        else:
            ignored.append(key)
    return kwargs, ignored


def admin(bootstrap, props, client_id="mm2-smoke"):
    from kafka.admin import KafkaAdminClient
    kwargs, _ignored = python_client_kwargs(props)
    return KafkaAdminClient(bootstrap_servers=bootstrap.split(","), client_id=client_id, **kwargs)


def producer(bootstrap, props, client_id="mm2-smoke"):
    from kafka import KafkaProducer
    kwargs, _ignored = python_client_kwargs(props)
    return KafkaProducer(bootstrap_servers=bootstrap.split(","), client_id=client_id, acks="all",
                         linger_ms=5, **kwargs)


def consumer(bootstrap, props, client_id="mm2-smoke", group_id=None):
    from kafka import KafkaConsumer
    kwargs, _ignored = python_client_kwargs(props)
    return KafkaConsumer(bootstrap_servers=bootstrap.split(","), client_id=client_id, group_id=group_id,
                         enable_auto_commit=False, auto_offset_reset="earliest", **kwargs)


def partitions_of(adm, topic):
    """Partition count of a topic, None when it does not exist."""
    try:
        desc = adm.describe_topics([topic])
    except Exception:  # noqa: BLE001 - UnknownTopicOrPartition and friends
        return None
    for item in desc:
        if item.get("name") == topic and item.get("error_code", 0) == 0:
            return len(item.get("partitions") or [])
    return None


def end_offsets(adm, topic, partitions, spec="latest"):
    from kafka import TopicPartition
    from kafka.admin import OffsetSpec
    want = OffsetSpec.LATEST if spec == "latest" else OffsetSpec.EARLIEST
    res = adm.list_partition_offsets({TopicPartition(topic, p): want for p in range(partitions)})
    return {tp.partition: v.offset for tp, v in res.items()}


def assign_all(adm, cons, topic, back=None):
    """Assign every partition of ``topic`` to ``cons``, from the beginning or ``back`` records
    before each end; False (nothing assigned) while the topic does not exist."""
    from kafka import TopicPartition
    parts = partitions_of(adm, topic)
    if not parts:
        return False
    tps = [TopicPartition(topic, p) for p in range(parts)]
    cons.assign(tps)
    if back is None:
        cons.seek_to_beginning()
    else:
        ends = end_offsets(adm, topic, parts)
        for tp in tps:
            cons.seek(tp, max(0, ends[tp.partition] - back))
    return True


def poll_decoded(cons, decode, skip_error):
    """One poll's records decoded with ``decode(key, value)``; records raising ``skip_error`` are skipped."""
    for records in cons.poll(timeout_ms=500).values():
        for rec in records:
            try:
                yield decode(rec.key, rec.value)
            except skip_error:
                continue


def offsets_for_timestamp(adm, topic, partitions, timestamp_ms):
    """First offset with timestamp >= timestamp_ms per partition (end offset when none)."""
    from kafka import TopicPartition
    res = adm.list_partition_offsets({TopicPartition(topic, p): int(timestamp_ms) for p in range(partitions)})
    ends = end_offsets(adm, topic, partitions)
    out = {}
    for tp, val in res.items():
        out[tp.partition] = val.offset if val is not None and val.offset is not None and val.offset >= 0 \
            else ends[tp.partition]
    return out


def topic_config(adm, topic, key):
    from kafka.admin import ConfigResource, ConfigResourceType
    res = adm.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs={key: None})],
                               config_filter="all")
    entry = ((res.get("topic") or {}).get(topic) or {}).get(key)
    return entry.get("value") if entry else None
