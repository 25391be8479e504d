"""Who listens where, read from /proc: listening TCP sockets and the processes that hold them."""

from __future__ import annotations

import ipaddress
from pathlib import Path


def _address(hex_addr: str) -> str:
    """/proc/net/tcp{,6} writes addresses as little-endian hex words."""
    raw = bytes.fromhex(hex_addr)
    if len(raw) == 4:
        return ".".join(str(b) for b in reversed(raw))
    words = [raw[i : i + 4][::-1] for i in range(0, 16, 4)]
    packed = b"".join(words)
    if packed[:12] == b"\0" * 10 + b"\xff\xff":  # IPv4-mapped
        return ".".join(str(b) for b in packed[12:])
    return str(ipaddress.IPv6Address(packed))


def listening_sockets() -> dict[int, tuple[str, int]]:
    """inode -> (address, port) of every listening TCP socket on the machine."""
    found: dict[int, tuple[str, int]] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] != "0A":  # TCP_LISTEN
                continue
            addr, port = fields[1].split(":")
            found[int(fields[9])] = (_address(addr), int(port, 16))
    return found


def descendants(pids: set[int]) -> set[int]:
    """pids and all their descendants."""
    parent: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                text = (entry / "stat").read_text()
            except OSError:
                continue
            parent[int(entry.name)] = int(text[text.rindex(")") + 2 :].split()[1])
    found = set(pids)
    grew = True
    while grew:
        more = {pid for pid, ppid in parent.items() if ppid in found} - found
        found |= more
        grew = bool(more)
    return found


def socket_inodes(pid: int) -> set[int]:
    """The inodes of the sockets a process holds (empty when it is gone or not ours to read)."""
    try:
        links = [str(p.readlink()) for p in Path(f"/proc/{pid}/fd").iterdir()]
    except OSError:
        return set()
    return {int(link[8:-1]) for link in links if link.startswith("socket:[")}


def listeners_of_port(port: int) -> list[tuple[int, str]]:
    """(pid, command line) of each process listening on a TCP port (any address)."""
    inodes = {inode for inode, (_, p) in listening_sockets().items() if p == port}
    found: list[tuple[int, str]] = []
    if not inodes:
        return found
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and socket_inodes(int(entry.name)) & inodes:
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
            except OSError:
                command = "?"
            found.append((int(entry.name), command))
    return found
