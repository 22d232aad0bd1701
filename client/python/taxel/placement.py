"""Rendezvous (highest-random-weight) placement of scenes on replicas — the same rule in the C++,
Python and Node clients (docs/reference.md, "Placement").

    score(replica_id, tenant, name) = SipHash-2-4(PLACEMENT_KEY,
                                                  utf8(replica_id) + b"\\0" + utf8(tenant) + b"/" + utf8(name))

read as an unsigned 64-bit integer (SipHash's output word, little-endian bytes). Scene
"tenant/name" lives on the replica with the highest score; the others, by decreasing score, are
where it goes when that one is lost (ties, possible only for equal ids, go to the smaller id).

Run as `python3 -m taxel.placement < input` to print placements in the cross-language format
(see `dump`).
"""
import sys
from typing import Iterable, List, Sequence, TextIO

__all__ = ["PLACEMENT_KEY", "siphash24", "score", "rank", "place", "dump"]

# The fixed 128-bit key: bytes 00 01 .. 0f (the key of SipHash's reference test vectors).
PLACEMENT_KEY = bytes(range(16))

_MASK = (1 << 64) - 1


def _rotl(x: int, b: int) -> int:
    return ((x << b) | (x >> (64 - b))) & _MASK


def _sip_rounds(v: List[int], n: int) -> None:
    v0, v1, v2, v3 = v
    for _ in range(n):
        v0 = (v0 + v1) & _MASK
        v1 = _rotl(v1, 13) ^ v0
        v0 = _rotl(v0, 32)
        v2 = (v2 + v3) & _MASK
        v3 = _rotl(v3, 16) ^ v2
        v0 = (v0 + v3) & _MASK
        v3 = _rotl(v3, 21) ^ v0
        v2 = (v2 + v1) & _MASK
        v1 = _rotl(v1, 17) ^ v2
        v2 = _rotl(v2, 32)
    v[:] = [v0, v1, v2, v3]


def siphash24(key: bytes, data: bytes) -> int:
    """SipHash-2-4 of `data` under the 16-byte `key`, as an unsigned 64-bit integer."""
    if len(key) != 16:
        raise ValueError(f"siphash24: key must be 16 bytes, got {len(key)}")
    k0 = int.from_bytes(key[:8], "little")
    k1 = int.from_bytes(key[8:], "little")
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D, k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]
    n = len(data)
    end = n - n % 8
    blocks = [int.from_bytes(data[i:i + 8], "little") for i in range(0, end, 8)]
    blocks.append(((n & 0xFF) << 56) | int.from_bytes(data[end:], "little"))
    for m in blocks:
        v[3] ^= m
        _sip_rounds(v, 2)
        v[0] ^= m
    v[2] ^= 0xFF
    _sip_rounds(v, 4)
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def score(replica_id: str, tenant: str, name: str) -> int:
    """The rendezvous score of scene `tenant/name` on replica `replica_id` (unsigned 64-bit)."""
    data = replica_id.encode("utf-8") + b"\0" + tenant.encode("utf-8") + b"/" + name.encode("utf-8")
    return siphash24(PLACEMENT_KEY, data)


def rank(replica_ids: Iterable[str], tenant: str, name: str) -> List[str]:
    """`replica_ids` ordered by decreasing score for scene `tenant/name` (the first is its home)."""
    scored = [(score(r, tenant, name), r) for r in replica_ids]
    scored.sort(key=lambda sr: (-sr[0], sr[1].encode("utf-8")))
    return [r for _, r in scored]


def place(replica_ids: Sequence[str], tenant: str, name: str) -> str:
    """The replica scene `tenant/name` is placed on (ValueError without replicas)."""
    if not replica_ids:
        raise ValueError("place: no replicas")
    return rank(replica_ids, tenant, name)[0]


def dump(lines: Iterable[str], out: TextIO) -> None:
    """The cross-language format. Input: the replica ids on the first line, separated by spaces;
    then one scene a line, `tenant<TAB>name`. Output: one line a scene,
    `tenant/name<TAB>ranking (ids by decreasing score, comma-separated)<TAB>score of each, 16 hex digits`."""
    it = iter(lines)
    replicas = next(it).split()
    for line in it:
        line = line.rstrip("\n")
        if not line:
            continue
        tenant, name = line.split("\t")
        order = rank(replicas, tenant, name)
        scores = ",".join(f"{score(r, tenant, name):016x}" for r in order)
        out.write(f"{tenant}/{name}\t{','.join(order)}\t{scores}\n")


if __name__ == "__main__":
    dump(sys.stdin, sys.stdout)
