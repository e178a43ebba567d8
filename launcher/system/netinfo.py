"""The addresses at which phones on the same Wi-Fi can reach the page.

Read from the machine's own interfaces (no packet is sent anywhere), plus `<hostname>.local` for mDNS, which
Raspberry Pi OS answers out of the box.
"""

from __future__ import annotations

import fcntl
import ipaddress
import socket
import struct

_SIOCGIFADDR = 0x8915  # Linux: the IPv4 address of an interface


def lan_addresses() -> list[str]:
    """IPv4 addresses of this machine's interfaces, loopback excluded."""
    found: list[str] = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        for _, name in socket.if_nameindex():
            request = struct.pack("256s", name.encode()[:15])
            try:
                reply = fcntl.ioctl(sock.fileno(), _SIOCGIFADDR, request)
            except OSError:
                continue  # no IPv4 address on this interface
            address = socket.inet_ntoa(reply[20:24])
            if not ipaddress.ip_address(address).is_loopback and address not in found:
                found.append(address)
    return found


def loopback_only(host: str) -> bool:
    """Listening on `host` reaches this machine alone: no phone can open the page there."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name: it may be the machine's name on the Wi-Fi


def public_urls(host: str, port: int) -> list[str]:
    """Where to point a browser: the LAN addresses when listening on every interface, else the host itself."""
    if host in ("0.0.0.0", "::", ""):
        hosts = [f"{socket.gethostname()}.local", *lan_addresses()]
    elif ":" in host:
        hosts = [f"[{host}]"]
    else:
        hosts = [host]
    return [f"http://{h}:{port}/" for h in hosts]
