"""Test certificates made with the openssl CLI: a CA, certificates it signs (server, client,
expired), and a second CA nobody trusts. Each `Certs` lives in one directory of the test's
tmp_path; file names are returned as strings for command lines and config files.
"""

import subprocess
from pathlib import Path


def _openssl(*args, cwd):
    subprocess.run(["openssl", *map(str, args)], cwd=cwd, check=True, capture_output=True, timeout=30)


class Certs:
    def __init__(self, directory):
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.ca_cert, self.ca_key = self.make_ca("ca", "Carrier Test CA")
        self._serial = 100

    def path(self, name):
        return str(self.dir / name)

    def make_ca(self, name, cn):
        _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                 "-keyout", f"{name}.key", "-out", f"{name}.crt", "-subj", f"/CN={cn}", "-days", "2",
                 cwd=self.dir)
        return self.path(f"{name}.crt"), self.path(f"{name}.key")

    def issue(self, name, cn, san="DNS:localhost,IP:127.0.0.1", days=1, ca=None, serial=None,
              client=False):
        """A certificate for `cn` (None: a subject without CN) signed by `ca` ((cert, key);
        default this CA). days=-1: expired.
        Returns (cert, key, serial)."""
        ca_cert, ca_key = ca or (self.ca_cert, self.ca_key)
        if serial is None:
            self._serial += 1
            serial = self._serial
        _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                 "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={cn}" if cn else "/O=Carrier Tests",
                 cwd=self.dir)
        ext = self.dir / f"{name}.ext"
        lines = ["basicConstraints=CA:FALSE",
                 "extendedKeyUsage=" + ("clientAuth" if client else "serverAuth")]
        if san:
            lines.append(f"subjectAltName={san}")
        ext.write_text("\n".join(lines) + "\n")
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", ca_cert, "-CAkey", ca_key,
                 "-set_serial", serial, "-days", days, "-out", f"{name}.crt", "-extfile", ext.name,
                 cwd=self.dir)
        return self.path(f"{name}.crt"), self.path(f"{name}.key"), serial


def tls_config(cert, key, ca=None, client_certificates=None, identity=False, extra=""):
    """The [tls] section of a carrier.toml."""
    lines = ["[tls]", f'cert_file = "{cert}"', f'key_file = "{key}"']
    if ca:
        lines.append(f'ca_file = "{ca}"')
    if client_certificates:
        lines.append(f'client_certificates = "{client_certificates}"')
    if identity:
        lines.append("use_identity_as_username = true")
    return extra + "\n".join(lines) + "\n"
