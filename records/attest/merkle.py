"""A Merkle tree of records, as RFC 9162 (Certificate Transparency 2.0, section 2.1) defines it.

Pure functions over bytes, with only ``hashlib``: the other side can re-implement every check in
a few lines, and the tests do. Leaves and inner nodes are hashed with different one-byte
prefixes (0x00, 0x01), so a leaf can never be passed off as a node (second-preimage attacks).
The tree over ``n`` leaves splits at the largest power of two below ``n``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

LEAF_PREFIX = b"\x00"
NODE_PREFIX = b"\x01"


def leaf_hash(data: bytes) -> bytes:
    """HASH(0x00 || data)."""
    return hashlib.sha256(LEAF_PREFIX + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """HASH(0x01 || left || right)."""
    return hashlib.sha256(NODE_PREFIX + left + right).digest()


def empty_root() -> bytes:
    """The hash of an empty tree: the SHA-256 of the empty string."""
    return hashlib.sha256(b"").digest()


def _split(size: int) -> int:
    """The largest power of two smaller than ``size`` (size > 1)."""
    k = 1
    while k * 2 < size:
        k *= 2
    return k


def root(leaves: Sequence[bytes]) -> bytes:
    """MTH(D[n]) over leaf hashes (already hashed with ``leaf_hash``), computed bottom-up.

    Pairing adjacent nodes level by level and carrying an odd last node up unchanged gives the
    same tree as RFC 9162's recursive split, in linear time and without recursion."""
    if not leaves:
        return empty_root()
    level = list(leaves)
    while len(level) > 1:
        paired = [node_hash(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]


def tree_and_prefix_roots(leaves: Sequence[bytes], prefix_size: int) -> tuple[bytes, bytes]:
    """(MTH(D[n]), MTH(D[prefix_size])) in one bottom-up pass: what a new checkpoint signs,
    and the root its predecessor signed if the log still extends it, for the cost of one root.

    The prefix of ``m`` leaves splits into perfect subtrees, one per set bit of ``m`` (largest
    first, as RFC 9162's split does); the one of bit ``b`` is node ``(m >> b) - 1`` of level
    ``b``, a complete node of the whole tree too. Folded from the right they give its root."""
    if not 0 <= prefix_size <= len(leaves):
        raise ValueError(f"no prefix of {prefix_size} leaves in a tree of {len(leaves)}")
    if not leaves:
        return empty_root(), empty_root()
    perfect: list[bytes] = []  # the prefix's perfect subtrees, smallest first
    level, bit = list(leaves), 0
    while True:
        if prefix_size >> bit & 1:
            perfect.append(level[(prefix_size >> bit) - 1])
        if len(level) == 1:
            break
        paired = [node_hash(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            paired.append(level[-1])
        level, bit = paired, bit + 1
    if not perfect:
        return level[0], empty_root()
    prefix_root = perfect[0]
    for left in perfect[1:]:
        prefix_root = node_hash(left, prefix_root)
    return level[0], prefix_root


class MerkleTree:
    """Every perfect subtree of a list of leaf hashes, hashed once, so that each proof after
    that costs O(log n) hashes, where computing it from the leaves costs O(n).

    Level ``b`` holds the hash of each complete, aligned run of ``2**b`` leaves; such a node
    is the same in every tree that holds those leaves, so one tree answers for every size up
    to its own. A subtree that is not perfect (the right edge of RFC 9162's split) is folded
    from perfect ones, O(log n) of them."""

    def __init__(self, leaves: Sequence[bytes]) -> None:
        levels = [list(leaves)]
        while len(levels[-1]) > 1:
            below = levels[-1]
            levels.append([node_hash(below[i], below[i + 1]) for i in range(0, len(below) - 1, 2)])
        self._levels = levels
        self.size = len(leaves)

    def subtree_root(self, start: int, end: int) -> bytes:
        """MTH(D[start:end]) of RFC 9162."""
        if not 0 <= start < end <= self.size:
            raise ValueError(f"no subtree [{start}, {end}) in a tree of {self.size}")
        width = end - start
        if width & (width - 1) == 0 and start % width == 0:
            return self._levels[width.bit_length() - 1][start // width]
        k = _split(width)
        return node_hash(self.subtree_root(start, start + k), self.subtree_root(start + k, end))

    def root(self, size: int | None = None) -> bytes:
        """MTH(D[size]): the root of the first ``size`` leaves (all of them by default)."""
        size = self.size if size is None else size
        return empty_root() if size == 0 else self.subtree_root(0, size)

    def inclusion_proof(self, index: int, size: int | None = None) -> list[bytes]:
        """PATH(index, D[size]): the sibling hashes from leaf ``index`` up to the root of the
        first ``size`` leaves, found top-down and returned leaf first."""
        size = self.size if size is None else size
        if not 0 <= index < size <= self.size:
            raise ValueError(f"leaf {index} is not in a tree of {size}")
        siblings: list[bytes] = []
        start, end = 0, size
        while end - start > 1:
            middle = start + _split(end - start)
            if index < middle:
                siblings.append(self.subtree_root(middle, end))
                end = middle
            else:
                siblings.append(self.subtree_root(start, middle))
                start = middle
        return siblings[::-1]


def inclusion_proof(index: int, leaves: Sequence[bytes]) -> list[bytes]:
    """PATH(m, D[n]): the sibling hashes from leaf ``index`` up to the root (one proof; for
    several over the same leaves, build one ``MerkleTree``)."""
    if not 0 <= index < len(leaves):
        raise ValueError(f"leaf {index} is not in a tree of {len(leaves)}")
    return MerkleTree(leaves).inclusion_proof(index)


def verify_inclusion(
    index: int, size: int, leaf: bytes, proof: Sequence[bytes], expected_root: bytes
) -> bool:
    """RFC 9162 section 2.1.3.2: whether ``leaf`` (a leaf hash) is at ``index`` of the tree of
    ``size`` leaves whose root is ``expected_root``."""
    if not 0 <= index < size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while fn & 1 == 0 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == expected_root


def consistency_proof(old_size: int, leaves: Sequence[bytes]) -> list[bytes]:
    """PROOF(m, D[n]) of RFC 9162 section 2.1.4: the tree of ``old_size`` leaves is a prefix of
    this one."""
    if not 0 < old_size <= len(leaves):
        raise ValueError(f"no consistency proof from {old_size} to {len(leaves)} leaves")
    return _subproof(old_size, leaves, complete=True)


def _subproof(m: int, leaves: Sequence[bytes], *, complete: bool) -> list[bytes]:
    n = len(leaves)
    if m == n:
        return [] if complete else [root(leaves)]
    k = _split(n)
    if m <= k:
        return [*_subproof(m, leaves[:k], complete=complete), root(leaves[k:])]
    return [*_subproof(m - k, leaves[k:], complete=False), root(leaves[:k])]


def verify_consistency(
    old_size: int, new_size: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> bool:
    """RFC 9162 section 2.1.4.2: whether the tree of ``new_size`` leaves with ``new_root``
    extends the tree of ``old_size`` leaves with ``old_root``."""
    if old_size == new_size:
        return not proof and old_root == new_root
    if not 0 < old_size < new_size or not proof:
        return False
    path = list(proof)
    if old_size & (old_size - 1) == 0:  # a power of two: the old root is the first node
        path.insert(0, old_root)
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while fn & 1 == 0 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == old_root and sr == new_root
