"""An object store's endpoint and credentials. The secret is kept out of every text the object can be turned into
(repr, str, logs): it reaches delta-rs as a storage option, pyarrow as a constructor argument and executors inside
the function Spark pickles, never Spark conf."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ObjectStoreSettings:
    endpoint: str = ""             # http(s)://host:port of an S3-compatible store; "" = AWS's own endpoints
    region: str = "us-east-1"
    access_key: str = ""
    secret_key: str = field(default="", repr=False)
    allow_http: bool = False       # a plain-http endpoint (a store on loopback or a private network)
    conditional_put: str = "etag"  # how delta-rs makes a commit atomic: "etag" (If-None-Match), or "" = unsafe rename

    def __str__(self) -> str:
        return f"object store {self.endpoint or 'AWS'} ({self.region}, key {self.access_key or 'none'})"

    def storage_options(self) -> dict[str, str]:
        """delta-rs (object_store) options."""
        options = {"AWS_REGION": self.region}
        if self.endpoint:
            options["AWS_ENDPOINT_URL"] = self.endpoint
        if self.allow_http:
            options["AWS_ALLOW_HTTP"] = "true"
        if self.access_key:
            options["AWS_ACCESS_KEY_ID"] = self.access_key
            options["AWS_SECRET_ACCESS_KEY"] = self.secret_key
        if self.conditional_put:
            options["aws_conditional_put"] = self.conditional_put
        else:
            options["AWS_S3_ALLOW_UNSAFE_RENAME"] = "true"
        return options

    def arrow_filesystem(self) -> Any:
        """A pyarrow S3FileSystem for this store (created where it is called: on the driver or an executor)."""
        from pyarrow.fs import S3FileSystem

        endpoint, scheme = self.endpoint, "https"
        if "://" in endpoint:
            scheme, _, endpoint = endpoint.partition("://")
        return S3FileSystem(access_key=self.access_key or None, secret_key=self.secret_key or None,
                            region=self.region, endpoint_override=endpoint or None, scheme=scheme,
                            allow_bucket_creation=False, allow_bucket_deletion=False)
