"""A real MIT Kerberos KDC for the live-broker tests (Debian's krb5-kdc; kadmin.local from
krb5-admin-server; lab/host-setup.sh installs both).

The KDC runs as a process of the test session, in a directory of its own: its own realm database,
kdc.conf and krb5.conf, a free TCP/UDP port on 127.0.0.1, nothing under /etc. Principals get
random keys and are written to keytabs; Java reads the realm from ``-Djava.security.krb5.conf``
(``krb5_conf``), MIT's tools from ``KRB5_CONFIG`` (``env``).
"""

import os
import shutil
import subprocess

from harness import free_ports, log, new_password, start_process, stop_process, wait_for_log

REALM = "KAFKAOPS.LAB"
# Every Kerberos host name the tests use: brokers advertise "localhost", so a client asks the KDC
# for kafka/localhost (Kafka's service principal is <sasl.kerberos.service.name>/<broker host>).
BROKER_HOST = "localhost"
SBIN = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])


def tool(name):
    path = shutil.which(name, path=SBIN)
    if not path:
        raise RuntimeError("%s not found: the live-broker tests' KDC needs Debian's krb5-kdc and krb5-admin-server "
                           "(bash lab/host-setup.sh)" % name)
    return path


class Kdc(object):
    """One realm served by krb5kdc.  ``keytab(principal)`` creates a principal with a random key and
    returns a keytab holding it; ``krb5_conf`` is the client configuration for that realm."""

    def __init__(self, root, realm=REALM):
        self.realm = realm
        self.dir = os.path.join(root, "kdc")
        os.makedirs(self.dir)
        self.port = free_ports(1)[0]
        self.krb5_conf = os.path.join(self.dir, "krb5.conf")
        self.kdc_conf = os.path.join(self.dir, "kdc.conf")
        self.log_file = os.path.join(self.dir, "kdc.log")
        with open(self.kdc_conf, "w") as fh:
            fh.write("\n".join([
                "[kdcdefaults]",
                " kdc_listen = 127.0.0.1:%d" % self.port,
                " kdc_tcp_listen = 127.0.0.1:%d" % self.port,
                "[realms]",
                " %s = {" % realm,
                "  database_name = %s/principal" % self.dir,
                "  key_stash_file = %s/stash" % self.dir,
                "  acl_file = %s/kadm5.acl" % self.dir,
                "  max_life = 2h",
                "  supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal",
                " }",
                "[logging]",
                " kdc = FILE:%s" % self.log_file,
                ""]))
        with open(self.krb5_conf, "w") as fh:
            fh.write("\n".join([
                "[libdefaults]",
                " default_realm = %s" % realm,
                " dns_lookup_kdc = false",
                " dns_lookup_realm = false",
                " rdns = false",
                " dns_canonicalize_hostname = false",
                # TCP only: Java and MIT both fall back to it for large tickets anyway
                " udp_preference_limit = 1",
                " ticket_lifetime = 2h",
                "[realms]",
                " %s = {" % realm,
                "  kdc = 127.0.0.1:%d" % self.port,
                " }",
                "[domain_realm]",
                " %s = %s" % (BROKER_HOST, realm),
                ""]))
        self.env = dict(os.environ, KRB5_CONFIG=self.krb5_conf, KRB5_KDC_PROFILE=self.kdc_conf)
        subprocess.run([tool("kdb5_util"), "create", "-s", "-r", realm, "-P", new_password()], check=True,
                       capture_output=True, timeout=60, env=self.env)
        self.proc = start_process([tool("krb5kdc"), "-n", "-r", realm], os.path.join(self.dir, "stdout.log"),
                                  env=self.env)
        wait_for_log(self.log_file, r"commencing operation", 30, self.proc)
        log("KDC for realm %s on 127.0.0.1:%d" % (realm, self.port))

    def principal(self, name):
        return name if "@" in name else "%s@%s" % (name, self.realm)

    def kadmin(self, query):
        return subprocess.run([tool("kadmin.local"), "-r", self.realm, "-q", query], check=True,
                              capture_output=True, text=True, timeout=60, env=self.env)

    def keytab(self, name, path=None):
        """Principal ``name`` (in this realm unless it names one) with a random key, written to a
        keytab (0600) at ``path`` or next to the database; returns the keytab's path."""
        principal = self.principal(name)
        path = path or os.path.join(self.dir, principal.split("@")[0].replace("/", "_") + ".keytab")
        self.kadmin("addprinc -randkey %s" % principal)
        self.kadmin("ktadd -k %s %s" % (path, principal))
        os.chmod(path, 0o600)
        return path

    def rotate(self, name):
        """A new random key for ``name``: keytabs written before hold a key the KDC no longer accepts."""
        self.kadmin("cpw -randkey %s" % self.principal(name))

    def log_lines(self):
        with open(self.log_file, errors="replace") as fh:
            return fh.read().splitlines()

    def stop(self):
        stop_process(self.proc, 10)
