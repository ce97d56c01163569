"""``DorisConnection``, where a Doris FE is and who connects, taken by every entry point
(``read_doris(connection=…)``, ``write_doris``, ``DorisCatalog``, streaming jobs,
``diagnose``), and ``DorisTable``, a physical table."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from daft_doris import _native
from daft_doris._endpoint import Endpoint
from daft_doris.secrets import Secret, check_picklable, check_secret

# The crates' defaults (``_native.DEFAULTS``): each lives once, in the crate that applies it.
_CONNECTION: dict[str, Any] = _native.DEFAULTS["connection"]


@dataclass(frozen=True)
class DorisConnection:
    """Where a Doris FE is and who connects: its HTTP (Stream Load, ``_query_plan``) and MySQL
    ports, user, password and TLS settings.

    Stream Load follows the FE's redirect to a BE only where the connection allows, by
    the reference connector 1.1's rule: the FE's host and ``redirect_hosts``, each on one of
    ``redirect_ports``. The BEs the FE itself reports at ``/api/backends`` are trusted too
    when ``trust_reported_backends=True``, or when it is left ``None`` and neither list is
    given (where 1.1 refused every redirect); ``False`` never trusts them. ``http_secure=True``
    speaks HTTPS, always verified; ``tls_ca_file`` names a PEM file of CAs trusted besides
    the web PKI roots (on the MySQL link too); ``mysql_ssl_mode`` is the MySQL link's TLS:
    ``preferred`` (default, as MySQL clients: encrypted when offered, not verified),
    ``verify_ca``/``verify_identity`` verify the certificate. ``tls_client_cert_file`` and
    ``tls_client_key_file`` (both or neither; PEM, the key unencrypted) are the client
    certificate every TLS link presents when the server asks for one (mutual TLS); they
    are read by each process that connects, so they must be readable where tasks run.

    >>> fe = DorisConnection(host="fe.example", password=SecretRef.env("DORIS_PASSWORD"))
    >>> fe.http_port, fe.mysql_port, "password" in repr(fe)
    (8030, 9030, False)

    Every entry point takes it: ``write_doris(connection=…)``, ``DorisCatalog``, streaming
    jobs, and reads beside 1.1's flat keywords:

    >>> read_doris(connection=connection, database="demo", table="events",
    ...            transport="mysql").count_rows()
    3
    """

    host: str
    username: str = _CONNECTION["username"]
    password: Secret = field(default="", repr=False, compare=False)
    http_port: int = _CONNECTION["http_port"]
    mysql_port: int = _CONNECTION["mysql_port"]
    http_secure: bool = False
    request_timeout_seconds: float = _CONNECTION["request_timeout_seconds"]
    redirect_hosts: tuple[str, ...] = ()
    redirect_ports: tuple[int, ...] = ()
    trust_reported_backends: bool | None = None
    redirect_policy: Literal["", "direct", "random-be", "public", "private", "public-private"] = ""
    verify_tls: bool = True
    tls_ca_file: str | None = None
    mysql_ssl_mode: Literal["disabled", "preferred", "required", "verify_ca", "verify_identity"] = (
        _CONNECTION["mysql_ssl_mode"]
    )
    tls_client_cert_file: str | None = None
    tls_client_key_file: str | None = None

    def __post_init__(self) -> None:
        check_secret(self.password)
        # Lists become tuples (the connection is hashable and compares by value); anything
        # else reaches the native check, which names it.
        for name in ("redirect_hosts", "redirect_ports"):
            if isinstance(getattr(self, name), list):
                object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "_ca_pem", _native.read_ca_file("tls_ca_file", self.tls_ca_file))
        # Host, user, ports, flags, the timeout, the redirect settings and the TLS mode are
        # checked by the native connection, made now (before any I/O).
        self.endpoint().native()

    def __getstate__(self) -> dict[str, Any]:
        # A plain-string password stays in this process (daft_doris.secrets).
        check_picklable(self.password)
        return self.__dict__.copy()

    def endpoint(self) -> Endpoint:
        """The endpoint the native layer connects to."""
        return Endpoint(
            host=self.host,
            mysql_port=self.mysql_port,
            http_port=self.http_port,
            http_secure=self.http_secure,
            user=self.username,
            password=self.password,
            ca_pem=self._ca_pem,
            mysql_ssl_mode=self.mysql_ssl_mode,
            request_timeout_seconds=self.request_timeout_seconds,
            redirect_hosts=self.redirect_hosts,
            redirect_ports=self.redirect_ports,
            trust_reported_backends=self.trust_reported_backends,
            redirect_policy=self.redirect_policy,
            verify_tls=self.verify_tls,
            client_cert_file=self.tls_client_cert_file,
            client_key_file=self.tls_client_key_file,
        )


@dataclass(frozen=True)
class DorisTable:
    """A physical Doris table."""

    database: str
    name: str

    def __post_init__(self) -> None:
        _native.check_identifier("database", self.database)
        _native.check_identifier("table name", self.name)

    @property
    def qualified(self) -> str:
        """The table as Doris SQL names it: `` `db`.`name` `` (each backtick doubled).

        >>> DorisTable("sales", "order`s").qualified
        '`sales`.`order``s`'
        """
        return _native.qualified_name(self.database, self.name)
