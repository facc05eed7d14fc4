"""The RFC 9162 tree: roots against the recursive definition, inclusion and consistency proofs
for every size and position up to 70, and an inclusion check written with ``hashlib`` alone
(what the other side can run without snap)."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from records.attest import merkle


def standalone_inclusion(
    index: int, size: int, leaf_data: bytes, path: list[str], root: str
) -> bool:
    """RFC 9162 section 2.1.3.2, with hashlib only: as the other side would write it."""

    def h(data: bytes) -> bytes:
        return hashlib.sha256(data).digest()

    if index >= size:
        return False
    fn, sn, r = index, size - 1, h(b"\x00" + leaf_data)
    for p in (bytes.fromhex(item) for item in path):
        if sn == 0:
            return False
        if fn % 2 == 1 or fn == sn:
            r = h(b"\x01" + p + r)
            while fn % 2 == 0 and fn != 0:
                fn, sn = fn // 2, sn // 2
        else:
            r = h(b"\x01" + r + p)
        fn, sn = fn // 2, sn // 2
    return sn == 0 and r.hex() == root


def recursive_root(leaves: list[bytes]) -> bytes:
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return leaves[0]
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return merkle.node_hash(recursive_root(leaves[:k]), recursive_root(leaves[k:]))


def leaves_of(n: int) -> tuple[list[bytes], list[bytes]]:
    data = [f"record {i}".encode() for i in range(n)]
    return data, [merkle.leaf_hash(d) for d in data]


def test_every_inclusion_and_consistency_proof_up_to_70() -> None:
    for n in range(1, 71):
        data, leaves = leaves_of(n)
        root = merkle.root(leaves)
        assert root == recursive_root(leaves)
        for i in range(n):
            path = merkle.inclusion_proof(i, leaves)
            assert merkle.verify_inclusion(i, n, leaves[i], path, root)
            assert standalone_inclusion(i, n, data[i], [p.hex() for p in path], root.hex())
            assert not standalone_inclusion(
                i, n, data[i] + b"x", [p.hex() for p in path], root.hex()
            )
            if n > 1:
                other = (i + 1) % n
                assert not merkle.verify_inclusion(other, n, leaves[i], path, root)
        for m in range(1, n + 1):
            proof = merkle.consistency_proof(m, leaves)
            old = merkle.root(leaves[:m])
            assert merkle.verify_consistency(m, n, old, root, proof)
            if m < n:
                assert not merkle.verify_consistency(m, n, merkle.leaf_hash(b"x"), root, proof)


def test_leaf_and_node_hashes_are_separated() -> None:
    a, b = merkle.leaf_hash(b"a"), merkle.leaf_hash(b"b")
    assert merkle.root([a, b]) != merkle.leaf_hash(a + b)


@given(st.integers(2, 200), st.data())
def test_a_changed_leaf_breaks_consistency(n: int, data: st.DataObject) -> None:
    _data, leaves = leaves_of(n)
    m = data.draw(st.integers(1, n - 1))
    changed = data.draw(st.integers(0, m - 1))
    old_root = merkle.root(leaves[:m])
    leaves[changed] = merkle.leaf_hash(b"changed")
    proof = merkle.consistency_proof(m, leaves)
    assert not merkle.verify_consistency(m, n, old_root, merkle.root(leaves), proof)


@given(st.integers(0, 300), st.data())
def test_tree_and_prefix_roots_are_both_roots(size: int, data: st.DataObject) -> None:
    """One pass gives the whole tree's root and any prefix's, as the recursive definition
    does: what a new checkpoint signs and what the checkpoint before it signed."""
    _, leaves = leaves_of(size)
    prefix_size = data.draw(st.integers(0, size))
    assert merkle.tree_and_prefix_roots(leaves, prefix_size) == (
        recursive_root(leaves),
        recursive_root(leaves[:prefix_size]),
    )


def recursive_path(index: int, leaves: list[bytes]) -> list[bytes]:
    """PATH(m, D[n]) as RFC 9162 section 2.1.3.1 writes it, leaf first."""
    if len(leaves) == 1:
        return []
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    if index < k:
        return [*recursive_path(index, leaves[:k]), recursive_root(leaves[k:])]
    return [*recursive_path(index - k, leaves[k:]), recursive_root(leaves[:k])]


@given(st.integers(1, 300), st.data())
def test_one_tree_proves_every_leaf_of_every_prefix(size: int, data: st.DataObject) -> None:
    """A tree built once over all the leaves gives, for any tree size up to its own (a
    checkpoint older than the log), the root and each leaf's path of the definition."""
    _, leaves = leaves_of(size)
    tree = merkle.MerkleTree(leaves)
    prefix = data.draw(st.integers(1, size))
    index = data.draw(st.integers(0, prefix - 1))
    assert tree.root(prefix) == recursive_root(leaves[:prefix])
    assert tree.inclusion_proof(index, prefix) == recursive_path(index, leaves[:prefix])
    start = data.draw(st.integers(0, size - 1))
    end = data.draw(st.integers(start + 1, size))
    assert tree.subtree_root(start, end) == recursive_root(leaves[start:end])


@pytest.mark.parametrize(("index", "size"), [(5, 5), (0, 6), (-1, 3), (3, 3)])
def test_a_tree_refuses_a_leaf_or_size_it_does_not_hold(index: int, size: int) -> None:
    tree = merkle.MerkleTree(leaves_of(5)[1])
    with pytest.raises(ValueError, match="is not in a tree of"):
        tree.inclusion_proof(index, size)


def test_an_empty_prefix_has_the_empty_root() -> None:
    assert merkle.MerkleTree(leaves_of(3)[1]).root(0) == merkle.empty_root()
