"""The FE a read or write talks to: plain, picklable data with a redacted ``repr``."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from daft_doris.errors import CompatibilityError, ConfigurationError
from daft_doris.secrets import Secret, check_picklable, resolve_secret

# ADBC's client key as PEM text in ``flight_options``: a secret that must not travel.
_MTLS_PRIVATE_KEY = "adbc.flight.sql.client_option.mtls_private_key"


@dataclass(frozen=True)
class Endpoint:
    """Host, ports, user, password and timeouts, as the native layer takes them; ``None``
    takes the default of the Rust crates (``doris_sql::ConnectionSettings``)."""

    host: str
    mysql_port: int | None
    http_port: int | None
    user: str | None
    password: Secret = field(repr=False, compare=False)
    http_secure: bool = False
    connect_timeout_seconds: float | None = None
    query_timeout_seconds: float | None = None
    flight_port: int | None = None
    flight_secure: bool = False
    flight_endpoint_rewrite: tuple[tuple[str, str], ...] = ()
    # ``flight_options`` as (key, value) pairs, mapped natively (``doris_read::options``).
    flight_options: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    flight_allowed_locations: tuple[str, ...] = ()
    # CA certificates (PEM text, read from ``tls_ca_file`` where the endpoint is made, so
    # workers need no file) and the MySQL link's TLS mode.
    ca_pem: str | None = field(default=None, repr=False)
    # The MySQL link's own CAs (``mysql_options["ssl_ca"]``), trusted there instead of
    # ``ca_pem`` and on no other link.
    mysql_ca_pem: str | None = field(default=None, repr=False)
    mysql_ssl_mode: str | None = None
    # The MySQL server's public key (PEM), pinned (`mysql_options["server_public_key"]`).
    mysql_server_public_key: str | None = field(default=None, repr=False)
    # The largest packet (row) the MySQL server may send (`mysql_options["max_allowed_packet"]`).
    mysql_max_packet_bytes: int | None = None
    # Client certificate and key files (mutual TLS): every link's, and the MySQL link's own
    # (`mysql_options` `ssl_cert`/`ssl_key`). Paths, read by each process that connects, so
    # the key itself never travels with a task.
    client_cert_file: str | None = None
    client_key_file: str | None = None
    mysql_client_cert_file: str | None = None
    mysql_client_key_file: str | None = None
    # The writer's settings: one timeout for every request (connecting: up to 30 s of it),
    # Stream Load redirect targets (hosts × ports) and policy, and the TLS switch.
    request_timeout_seconds: float | None = None
    redirect_hosts: tuple[str, ...] = ()
    redirect_ports: tuple[int, ...] = ()
    trust_reported_backends: bool | None = None
    redirect_policy: str | None = None
    verify_tls: bool = True

    def native(self) -> Any:
        """The native layer's typed connection (no password), made once per process. Its
        constructor checks every field: a bad one is a ``ConfigurationError`` naming it."""
        try:
            hash(self)
        except TypeError:
            # A field of the wrong type (a list for a port, say): not cacheable; the
            # constructor names the argument.
            return _make_native(self)
        return _native_connection(self)

    def password_value(self) -> str:
        """The password, resolved in this process."""
        return resolve_secret(self.password)

    def __getstate__(self) -> dict[str, Any]:
        self.check_travels()
        return self.__dict__.copy()

    def check_travels(self) -> None:
        """Refuses when pickling would carry a secret the user did not choose to send: a
        plain password, or a private key as text (a pickled endpoint is in every task Daft's
        Ray runner ships; ``daft_doris.secrets``)."""
        check_picklable(self.password)
        if any(key == _MTLS_PRIVATE_KEY for key, _ in self.flight_options):
            raise ConfigurationError(
                f"flight_options {_MTLS_PRIVATE_KEY} is a private key as text, which pickling (as "
                "Daft's Ray runner does with every task) would send with the tasks: give the "
                "client certificate and key as files, tls_client_cert_file and tls_client_key_file, "
                "read by each process that connects"
            )


def active_runner() -> str:
    """Daft's runner in this process, ``"native"`` or ``"ray"`` (asked without starting one)."""
    import daft

    try:
        return daft.runners.get_or_infer_runner_type()
    except Exception:
        raise CompatibilityError("this Daft version does not tell which runner is active") from None


@functools.lru_cache(maxsize=128)
def _native_connection(endpoint: Endpoint) -> Any:
    # The password is not part of it (nor of the cache key: it does not take part in
    # ``Endpoint`` equality); it is resolved and passed beside it on every call.
    return _make_native(endpoint)


def _make_native(endpoint: Endpoint) -> Any:
    from daft_doris import _native

    return _native.Connection(
        host=endpoint.host,
        mysql_port=endpoint.mysql_port,
        http_port=endpoint.http_port,
        http_secure=endpoint.http_secure,
        user=endpoint.user,
        connect_timeout_seconds=endpoint.connect_timeout_seconds,
        query_timeout_seconds=endpoint.query_timeout_seconds,
        flight_port=endpoint.flight_port,
        flight_secure=endpoint.flight_secure,
        flight_endpoint_rewrite=dict(endpoint.flight_endpoint_rewrite),
        flight_options=list(endpoint.flight_options),
        flight_allowed_locations=list(endpoint.flight_allowed_locations),
        ca_pem=endpoint.ca_pem,
        mysql_ca_pem=endpoint.mysql_ca_pem,
        mysql_ssl_mode=endpoint.mysql_ssl_mode,
        mysql_server_public_key=endpoint.mysql_server_public_key,
        mysql_max_packet_bytes=endpoint.mysql_max_packet_bytes,
        request_timeout_seconds=endpoint.request_timeout_seconds,
        redirect_hosts=endpoint.redirect_hosts,
        redirect_ports=endpoint.redirect_ports,
        trust_reported_backends=endpoint.trust_reported_backends,
        redirect_policy=endpoint.redirect_policy,
        verify_tls=endpoint.verify_tls,
        client_cert_file=endpoint.client_cert_file,
        client_key_file=endpoint.client_key_file,
        mysql_client_cert_file=endpoint.mysql_client_cert_file,
        mysql_client_key_file=endpoint.mysql_client_key_file,
    )
