"""The cycles check: no topic of an active-active pair came back with two stacked prefixes."""

from .common import finish, listed, result


def cycles(cfg, clients):
    """No topic on a cluster carries two stacked prefixes of an active-active pair (A.B.*, B.A.*)."""
    out = []
    flows = cfg["enabled_flows"]
    for f in flows:
        back = [g for g in flows if g["source"] == f["target"] and g["target"] == f["source"]]
        if f["target"] not in clients or f["source"] not in clients:
            continue
        res = result("cycles", f, "cycles")
        if not back:
            # Configured but unable to apply: a skip with its reason, so the report's counts add up.
            res["messages"].append("flow %s: no enabled flow %s->%s, so no record can come back: no cycle to look for"
                                   % (f["name"], f["target"], f["source"]))
            out.append(finish(res, "skip"))
            continue
        g = back[0]
        pf, pg = f.get("remote_topic_prefix"), g.get("remote_topic_prefix")
        if not pf or not pg:
            res["messages"].append("flow %s: cycles cannot be told from topic names with the %s policy"
                                   % (f["name"], "identity" if "" in (pf, pg) else "custom replication"))
            out.append(finish(res, "skip"))
            continue
        prefix = pf + pg
        adm = clients[f["target"]].admin()
        try:
            looped = sorted(t for t in adm.list_topics() if t.startswith(prefix))
        finally:
            adm.close()
        res["details"] = {"cluster": f["target"], "prefix": prefix, "found": looped}
        if looped:
            res["messages"].append("flow %s: replication cycle: topics %s on %s came back through %s and %s"
                                   % (f["name"], listed(looped), f["target"], g["name"], f["name"]))
        out.append(finish(res))
    return out
