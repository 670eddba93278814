"""What a `spark.master` URL says about where executors run: in this process (local) or elsewhere, and whether
"elsewhere" is still this machine's loopback (a test cluster) or other machines (the driver must be reachable)."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


def is_local(master: str) -> bool:
    """`local`, `local[4]`, `local[*, 3]`: executors are threads of the driver and share its disk and its Python."""
    return master == "local" or master.startswith("local[")


def standalone_hosts(master: str) -> list[str]:
    """The hosts of a standalone master URL (`spark://h1:7077,h2:7077` lists the masters of a HA pair)."""
    if not master.startswith("spark://"):
        return []
    return [urlsplit(f"spark://{part}").hostname or "" for part in master[len("spark://"):].split(",")]


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address) is this machine's loopback."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_loopback_cluster(master: str) -> bool:
    """A standalone cluster whose masters all listen on loopback: its workers are on this machine (executors reach
    a driver bound to 127.0.0.1). YARN and Kubernetes are always taken as other machines."""
    hosts = standalone_hosts(master)
    return bool(hosts) and all(is_loopback(host) for host in hosts)
