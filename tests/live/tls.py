"""A throw-away certificate authority for the live-broker tests, made by the ``openssl`` CLI (Debian's
openssl; lab/host-setup.sh installs it).

Everything is PEM, so that one set of files serves every client: Kafka's brokers and Java clients
read them with ``ssl.keystore.type=PEM`` / ``ssl.truststore.type=PEM`` (no keytool, no store
passwords), kafka-python and the collection's modules with ``ssl_cafile`` / ``ssl.cafile``.
Private keys are unencrypted PKCS#8 files readable by their owner only: Kafka reads such a key
without ``ssl.key.password``, so the lab's TLS settings hold no secret besides the key itself.
"""

import os
import subprocess

from harness import log

# Long enough for any test session, short enough that a copy left behind is soon worthless.
DAYS = 2
# The names the lab's brokers are reached by: Kerberos labs advertise localhost, others 127.0.0.1.
BROKER_DNS = ("localhost",)
BROKER_IPS = ("127.0.0.1",)


def openssl(*args):
    done = subprocess.run(["openssl"] + list(args), capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        raise RuntimeError("openssl %s failed: %s" % (args[0], done.stderr[-2000:]))
    return done.stdout


def private_key(path):
    # umask first: the key must never exist readable by others, not even between write and chmod
    old = os.umask(0o077)
    try:
        openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", path)
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    return path


def key_material(path):
    """The base64 body of a PEM private key: what must never show in a test's output."""
    with open(path) as fh:
        return "".join(line.strip() for line in fh if not line.startswith("-----"))


class Ca(object):
    """A self-signed CA in ``<root>/tls-<name>``: ``key`` and ``cert`` (PEM).  ``issue()`` signs a
    server certificate and writes the PEM key store a broker reads."""

    def __init__(self, root, name="lab-ca"):
        self.name = name
        self.dir = os.path.join(root, "tls-" + name)
        os.makedirs(self.dir)
        os.chmod(self.dir, 0o700)
        self.key = private_key(os.path.join(self.dir, "ca.key"))
        self.cert = os.path.join(self.dir, "ca.pem")
        openssl("req", "-x509", "-new", "-key", self.key, "-sha256", "-days", str(DAYS),
                "-subj", "/O=kafkaops lab/CN=%s" % name,
                "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                "-out", self.cert)
        self.serial = 0
        log("CA %s in %s" % (name, self.dir))

    def issue(self, name, dns=BROKER_DNS, ips=BROKER_IPS):
        """A key and a certificate for ``name`` signed by this CA, valid for TLS servers and clients,
        whose subjectAltName lists ``dns`` and ``ips``.  Returns {key, cert, keystore, sans}:
        ``keystore`` is the key followed by the certificate chain (the certificate, then the CA's),
        the one file ``ssl.keystore.type=PEM`` wants; it holds the key, so it is 0600 too."""
        base = os.path.join(self.dir, name)
        key = private_key(base + ".key")
        csr, cert, ext = base + ".csr", base + ".pem", base + ".ext"
        sans = ["DNS:%s" % d for d in dns] + ["IP:%s" % i for i in ips]
        with open(ext, "w") as fh:
            fh.write("\n".join([
                "basicConstraints=critical,CA:FALSE",
                "keyUsage=critical,digitalSignature,keyEncipherment",
                "extendedKeyUsage=serverAuth,clientAuth",
                "subjectAltName=%s" % ",".join(sans),
                ""]))
        openssl("req", "-new", "-key", key, "-subj", "/O=kafkaops lab/CN=%s" % name, "-out", csr)
        self.serial += 1
        # a serial of our own: -CAcreateserial would leave a .srl file and random serials
        openssl("x509", "-req", "-in", csr, "-CA", self.cert, "-CAkey", self.key, "-set_serial", str(self.serial),
                "-sha256", "-days", str(DAYS), "-extfile", ext, "-out", cert)
        keystore = base + "-keystore.pem"
        with os.fdopen(os.open(keystore, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as out:
            for part in (key, cert, self.cert):
                with open(part) as fh:
                    out.write(fh.read())
        return {"key": key, "cert": cert, "keystore": keystore, "sans": sans}
