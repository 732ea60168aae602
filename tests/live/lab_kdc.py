"""The lab's KDC (tests/live/kdc.py) and CA (tls.Ca) for secured brokers."""

from lab_brokers import KERBEROS_SERVICE, krb5_jaas


class KdcMixin(object):
    """Lab's Kerberos KDC and certificate authority."""

    def start_kdc(self):
        """A real Kerberos KDC for this lab (kdc.Kdc); brokers started after it also offer GSSAPI."""
        import kdc
        if self.kdc is None:
            self.kdc = kdc.Kdc(self.tmp)
        return self.kdc

    def start_ca(self):
        """This lab's throw-away certificate authority (tls.Ca), made by openssl on first use; brokers
        started with ``tls=True`` present certificates it signed."""
        import tls
        if self.ca is None:
            self.ca = tls.Ca(self.tmp)
        return self.ca

    def kerberos_client_properties(self, name, keytab=None, principal=None):
        """A Java client's GSSAPI settings for cluster ``name`` (started with the lab's KDC); with
        ``keytab`` and ``principal`` also its sasl.jaas.config, else the JVM's JAAS file serves."""
        if not self.brokers[name].get("kerberos"):
            raise KeyError("cluster %s does not offer GSSAPI (start the lab's KDC first)" % name)
        props = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI",
                 "sasl.kerberos.service.name": KERBEROS_SERVICE}
        if keytab:
            props["sasl.jaas.config"] = krb5_jaas(keytab, self.kdc.principal(principal))
        return props
