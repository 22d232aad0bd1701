"""Rendezvous placement (taxel.placement) and taxel.ReplicaSet over real servers, failover included.

The hash is SipHash-2-4 with the key 00 01 .. 0f, the key of SipHash's reference vectors, so the
reference vectors test the very function placement uses."""
import math
import socket

import numpy as np
import pytest

import taxel
from conftest import BALL_R, BALL_Z, EXPECTED_DEPTH, PROBE_R, ServerProcess, pad_and_ball_spec, poses_xyzw, server_binary
from taxel import placement

# SipHash-2-4 reference vectors (key 00..0f, message 00 01 .. n-1), from the reference
# implementation's vectors.h (n = 0 and n = 15 are also in the paper, Appendix A).
SIPHASH_VECTORS = {
    0: 0x726FDB47DD0E0E31,
    1: 0x74F839C593DC67FD,
    7: 0xAB0200F58B01D137,
    8: 0x93F5F5799A932462,
    15: 0xA129CA6149BE45E5,
    63: 0x958A324CEB064572,
}

# Placement scores computed with another implementation: OpenSSL 3's SIPHASH MAC
# (`openssl mac -macopt hexkey:000102030405060708090a0b0c0d0e0f -macopt size:8 SIPHASH` over
# replica_id NUL tenant "/" name; its 8 output bytes read little-endian).
OPENSSL_SCORES = [
    ("taxel-0", "", "grasp", 0xE6D25CAC3D524A2A),
    ("taxel-1", "alice", "scene-7", 0x1D3CEDDF8080A2B4),
    ("taxel-2", "bob", "humanoid-\u00fc", 0xE444A3EB82DC9AD1),
]


def scene_names():
    """100 scene names over four tenants (the set of the cross-language test)."""
    tenants = ["", "alice", "bob", "team-7"]
    return [(tenants[i % 4], f"scene-{i:03d}") for i in range(100)]


@pytest.mark.parametrize("n", sorted(SIPHASH_VECTORS))
def test_siphash24_reference_vectors(n):
    assert placement.siphash24(placement.PLACEMENT_KEY, bytes(range(n))) == SIPHASH_VECTORS[n]


@pytest.mark.parametrize("replica, tenant, name, expected", OPENSSL_SCORES)
def test_scores_equal_openssl(replica, tenant, name, expected):
    assert placement.score(replica, tenant, name) == expected


def test_rank_orders_by_decreasing_score():
    ids = ["taxel-0", "taxel-1", "taxel-2"]
    order = placement.rank(ids, "", "grasp")
    scores = [placement.score(r, "", "grasp") for r in order]
    assert sorted(order) == ids and scores == sorted(scores, reverse=True)
    assert placement.place(ids, "", "grasp") == order[0]
    assert placement.rank(["b", "a", "b"], "", "x")[:0] == []  # duplicates are allowed by rank itself
    with pytest.raises(ValueError, match="place: no replicas"):
        placement.place([], "", "grasp")


def test_the_tenant_is_part_of_the_key():
    # "alice/x" with tenant "" is not scene "x" of tenant "alice": the NUL separates the id.
    assert placement.score("r", "alice", "x") != placement.score("r", "", "alice/x")
    assert placement.score("r", "", "x") == placement.siphash24(placement.PLACEMENT_KEY, b"r\0/x")


def test_a_fourth_replica_takes_about_a_quarter_and_nothing_else_moves():
    three = ["taxel-0", "taxel-1", "taxel-2"]
    four = three + ["taxel-3"]
    names = scene_names()
    before = {k: placement.place(three, *k) for k in names}
    after = {k: placement.place(four, *k) for k in names}
    moved = [k for k in names if before[k] != after[k]]
    # Each scene moves with probability 1/4 (the new replica wins one key in four): the count is
    # Binomial(100, 1/4), mean 25, sigma = sqrt(100 * 1/4 * 3/4) = 4.33; within 3 sigma: 12..38.
    assert 12 <= len(moved) <= 38, len(moved)
    assert all(after[k] == "taxel-3" for k in moved)
    # And taking the replica away again restores the old placement exactly.
    assert {k: placement.place(three, *k) for k in names} == before
    # Every replica gets some scenes (each expects 25 of 100; 3 sigma below is 12).
    counts = {r: sum(1 for k in names if after[k] == r) for r in four}
    assert min(counts.values()) >= 12, counts


def test_losing_a_replica_moves_only_its_scenes_to_their_second_choice():
    four = ["taxel-0", "taxel-1", "taxel-2", "taxel-3"]
    for key in scene_names():
        order = placement.rank(four, *key)
        survivors = [r for r in four if r != "taxel-1"]
        expected = order[1] if order[0] == "taxel-1" else order[0]
        assert placement.place(survivors, *key) == expected


def test_resolve_targets():
    assert taxel.resolve_targets(["a:1", "b:2", "a:1"]) == ["a:1", "b:2"]
    assert taxel.resolve_targets("dns:///127.0.0.1:50051") == ["127.0.0.1:50051"]
    assert taxel.resolve_targets("dns://8.8.8.8/127.0.0.1:7") == ["127.0.0.1:7"]  # the authority is not used
    expected = sorted({ai[4][0] for ai in socket.getaddrinfo("localhost", 9, type=socket.SOCK_STREAM)})
    got = taxel.resolve_targets("dns:///localhost:9")
    assert "127.0.0.1:9" in got and len(got) == len(expected)
    with pytest.raises(ValueError, match=r"targets\[1\]: expected host:port with a port in 1..65535, got 'nohost'"):
        taxel.resolve_targets(["a:1", "dns:///nohost"])
    with pytest.raises(ValueError, match=r"targets\[0\]: expected a non-empty target string"):
        taxel.resolve_targets([""])


@pytest.fixture
def three_servers():
    servers = [ServerProcess(server_binary(), [f"--replica_id=taxel-{i}"]).start() for i in range(3)]
    yield servers
    for s in servers:
        s.stop()


def placed_where(servers, name):
    """The replica id of the server that has scene `name`, asked of each server directly."""
    found = []
    for i, s in enumerate(servers):
        if s.proc is None:
            continue
        with taxel.Client(s.target, timeout=10) as c:
            if any(info.name == name for info in c.list_scenes()):
                found.append(f"taxel-{i}")
    return found


def test_scenes_live_on_their_placed_replica(three_servers):
    targets = [s.target for s in three_servers]
    with taxel.ReplicaSet(targets, timeout=20) as rs:
        assert rs.replica_ids == ["taxel-0", "taxel-1", "taxel-2"]
        names = [f"placed-{i}" for i in range(9)]
        for n in names:
            rs.create_scene(pad_and_ball_spec(n, num_envs=1))
        for n in names:
            assert placed_where(three_servers, n) == [placement.place(rs.replica_ids, "", n)]
        assert sorted(i.name for i in rs.list_scenes()) == names
        # Another client (here the same targets in another order) finds every scene.
        with taxel.ReplicaSet(list(reversed(targets)), timeout=20) as other:
            scene = other.scene("placed-4")
            r = scene.step(poses_xyzw([(0, 0, BALL_Z)]), dt=0.01, quat_order="xyzw")
            np.testing.assert_allclose(r["depth"].depth[0], EXPECTED_DEPTH, atol=1e-6)
            other.delete_scene("placed-4")
        assert placed_where(three_servers, "placed-4") == []
        with pytest.raises(taxel.NotFoundError, match="scene: no scene named 'placed-4' on any live replica"):
            rs.scene("placed-4")


def test_the_tenant_changes_the_placement(three_servers):
    with taxel.ReplicaSet([s.target for s in three_servers], tenant="alice", timeout=20) as rs:
        rs.create_scene(pad_and_ball_spec("scene-001", num_envs=1))
        assert placed_where(three_servers, "scene-001") == [placement.place(rs.replica_ids, "alice", "scene-001")]


def test_duplicate_replica_ids_are_refused():
    servers = [ServerProcess(server_binary(), ["--replica_id=same"]).start() for _ in range(2)]
    try:
        with pytest.raises(ValueError, match="both report replica_id 'same'; replica ids must be unique"):
            taxel.ReplicaSet([s.target for s in servers])
    finally:
        for s in servers:
            s.stop()


def test_no_live_replica_is_unavailable():
    s = ServerProcess(server_binary()).start()
    target = s.target
    s.stop()
    with pytest.raises(taxel.UnavailableError, match="replica set: no replica answered GetServerInfo"):
        taxel.ReplicaSet([target], timeout=5)


def stepped_poses(t):
    """Poses at step t: the ball presses the pad in env 0 (down by 0.1 mm a step) and is out of
    reach in env 1."""
    return poses_xyzw([(0, 0, BALL_Z - 1e-4 * t), (0, 0, 1.0)])


def noisy_spec(name):
    """The common scene with white noise on the measured depth: readings depend on the seed and
    the step count, so "equal to a fresh scene's" checks that the scene restarted from step 0."""
    spec = pad_and_ball_spec(name, num_envs=2)
    spec.add_sensor(taxel.ContactDepthProbe("noisy", link="pad", probe_local_pos=[[0, 0, 0], [0.01, 0, 0]],
                                            probe_radius=0.002, noise=1e-4))
    return spec


def test_failover_after_sigkill_loses_no_scene(three_servers):
    targets = [s.target for s in three_servers]
    with taxel.ReplicaSet(targets, auto_recreate=True, timeout=20) as rs:
        names = [f"fo-{i:02d}" for i in range(30)]
        scenes = {n: rs.create_scene(noisy_spec(n), quat_order="xyzw", dt=0.01) for n in names}
        home = {n: rs.place(n) for n in names}
        for t in range(3):
            for n in names:
                assert scenes[n].step(stepped_poses(t)).step == t + 1
        streamed = names[0]
        stream = scenes[streamed].stream()
        stream.step(stepped_poses(3))  # the stream's step 4
        victim = home[streamed]  # the replica of the streamed scene: its stream breaks too
        lost = [n for n in names if home[n] == victim]
        assert 0 < len(lost) < 30
        server = three_servers[int(victim.split("-")[1])]
        server.proc.kill()  # SIGKILL: no drain, connections reset
        server.proc.wait()
        server.proc = None

        results = {}
        for n in names:  # one more step of every scene: none lost
            if n == streamed:
                results[n] = stream.step(stepped_poses(4))
            else:
                results[n] = scenes[n].step(stepped_poses(4))
        stream.close()
        assert victim not in rs.replica_ids
        for n in names:
            if n in lost:  # re-created on their second choice, from step 0
                expected_home = placement.rank(["taxel-0", "taxel-1", "taxel-2"], "", n)[1]
                assert scenes[n].recreations == 1 and results[n].step == 1, n
                assert placed_where(three_servers, n) == [expected_home], n
            else:  # untouched
                assert scenes[n].recreations == 0 and results[n].step == 4, n
                assert placed_where(three_servers, n) == [home[n]], n

        # The moved scenes read what a fresh scene reads for the same poses (its first step).
        fresh = rs.create_scene(noisy_spec("fresh"), quat_order="xyzw", dt=0.01)
        reference = fresh.step(stepped_poses(4))
        for n in lost:
            for sensor in ("skin", "depth", "touch", "noisy"):
                for channel in reference[sensor].channels:
                    np.testing.assert_array_equal(getattr(results[n][sensor], channel),
                                                  getattr(reference[sensor], channel), err_msg=f"{n} {sensor}")
        # ... and the closed form (conftest): depth = R - (|o - c| - r), the ball centre c at
        # z = BALL_Z - 0.4 mm, probe o at ((j - 1) cm, (i - 1) cm, 0).
        z = BALL_Z - 4e-4
        closed = np.array([[PROBE_R - (math.sqrt(((i - 1) * 0.01) ** 2 + ((j - 1) * 0.01) ** 2 + z ** 2) - BALL_R)
                            for j in range(3)] for i in range(3)])
        assert math.isclose(closed[1, 1], 0.0034, abs_tol=1e-12)
        for n in lost:
            np.testing.assert_allclose(results[n]["depth"].depth[0], closed, atol=1e-6)
            assert results[n]["depth"].depth[1].max() == 0.0
        # The next steps go on normally on the new replicas.
        for n in lost:
            assert scenes[n].step(stepped_poses(5)).step == 2


def test_create_skips_an_unreachable_replica_and_refresh_brings_it_back(three_servers):
    with taxel.ReplicaSet([s.target for s in three_servers], timeout=20) as rs:
        ids = ["taxel-0", "taxel-1", "taxel-2"]
        name = next(f"skip-{i}" for i in range(100) if placement.place(ids, "", f"skip-{i}") == "taxel-1")
        port = three_servers[1].port
        three_servers[1].stop()
        rs.create_scene(pad_and_ball_spec(name, num_envs=1))  # its home is down: the second choice takes it
        assert placed_where(three_servers, name) == [placement.rank(ids, "", name)[1]]
        assert rs.replica_ids == ["taxel-0", "taxel-2"]
        assert rs.refresh() == {"taxel-0": three_servers[0].target, "taxel-2": three_servers[2].target}
        three_servers[1].start(port=port)
        assert sorted(rs.refresh()) == ids and rs.replica_ids == ids
        again = name + "-again"
        if placement.place(ids, "", again) == "taxel-1":
            rs.create_scene(pad_and_ball_spec(again, num_envs=1))
            assert placed_where(three_servers, again) == ["taxel-1"]
