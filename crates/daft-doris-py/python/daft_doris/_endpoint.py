"""The FE a read or write talks to: plain, picklable data with a redacted ``repr``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from daft_doris.secrets import Secret, resolve_secret


@dataclass(frozen=True)
class Endpoint:
    """Host, ports, user, password and timeouts, as the native layer takes them."""

    host: str
    mysql_port: int
    http_port: int
    user: str
    password: Secret = field(repr=False, compare=False)
    http_secure: bool = False
    connect_timeout_seconds: float = 10.0
    query_timeout_seconds: float = 300.0
    flight_port: int = 8070
    flight_secure: bool = False
    flight_endpoint_rewrite: tuple[tuple[str, str], ...] = ()
    flight_max_parallel: int = 4
    flight_allowed_locations: tuple[str, ...] = ()
    # CA certificates (PEM text, read from ``tls_ca_file`` where the endpoint is made, so
    # workers need no file) and the MySQL link's TLS mode.
    ca_pem: str | None = field(default=None, repr=False)
    mysql_ssl_mode: str = "preferred"

    def to_json(self) -> str:
        """The connection JSON of the native layer (no password)."""
        return json.dumps(
            {
                "host": self.host,
                "mysql_port": self.mysql_port,
                "http_port": self.http_port,
                "http_secure": self.http_secure,
                "user": self.user,
                "connect_timeout_seconds": self.connect_timeout_seconds,
                "query_timeout_seconds": self.query_timeout_seconds,
                "flight_port": self.flight_port,
                "flight_secure": self.flight_secure,
                "flight_endpoint_rewrite": dict(self.flight_endpoint_rewrite),
                "flight_max_parallel": self.flight_max_parallel,
                "flight_allowed_locations": list(self.flight_allowed_locations),
                "ca_pem": self.ca_pem,
                "mysql_ssl_mode": self.mysql_ssl_mode,
            }
        )

    def password_value(self) -> str:
        """The password, resolved in this process."""
        return resolve_secret(self.password)
