"""Checkpoint fingerprints: a job resumes only a checkpoint made with its own settings and inputs."""

import logging

from ead.checkpoints import job_fingerprint, resumable, stamp

LOG = logging.getLogger("test")


def test_fingerprint_follows_settings_and_input_contents(tmp_path):
    data, model = tmp_path / "data.csv", tmp_path / "model"
    data.write_text("a,b\n1,2\n")
    model.mkdir()
    (model / "weights.bin").write_bytes(b"\x00" * 16)
    base = job_fingerprint({"tau_max": 1.2, "seed": 0}, [model, data])
    assert base == job_fingerprint({"seed": 0, "tau_max": 1.2}, [model, data])  # key order is irrelevant
    assert base != job_fingerprint({"tau_max": 1.5, "seed": 0}, [model, data])
    (model / "weights.bin").write_bytes(b"\x00" * 15 + b"\x01")  # a retrained policy, same size
    assert base != job_fingerprint({"tau_max": 1.2, "seed": 0}, [model, data])


def test_only_a_checkpoint_with_the_same_fingerprint_is_resumed(tmp_path, caplog):
    checkpoint = tmp_path / "ckpt"
    assert not resumable(checkpoint, "abc", LOG)  # nothing there
    checkpoint.mkdir()
    (checkpoint / "trainer_state.pt").write_bytes(b"state")
    stamp(checkpoint, "abc")
    assert resumable(checkpoint, "abc", LOG) and (checkpoint / "trainer_state.pt").exists()
    with caplog.at_level(logging.WARNING):
        assert not resumable(checkpoint, "def", LOG)
    assert not checkpoint.exists()
    assert "made with other settings or inputs" in caplog.text and "starting over" in caplog.text
    checkpoint.mkdir()  # a checkpoint from before fingerprints: unknown provenance, discarded too
    (checkpoint / "trainer_state.pt").write_bytes(b"state")
    assert not resumable(checkpoint, "abc", LOG) and not checkpoint.exists()


def test_discard_removes_the_checkpoint_and_the_empty_directories_it_leaves(tmp_path):
    from ead.checkpoints import discard

    root = tmp_path / "results" / "checkpoints"
    done = root / "rl" / "tiny1m" / "dapo" / "ead" / "n8" / "seed0"
    running = root / "rl" / "tiny1m" / "dapo" / "tau1.0" / "n8" / "seed0"
    for directory in (done, running):
        directory.mkdir(parents=True)
        (directory / "fingerprint.json").write_text("{}")
    discard(done)
    assert not (root / "rl" / "tiny1m" / "dapo" / "ead").exists()  # no empty directories left behind
    assert running.exists()  # another job's checkpoint (and its parents) stay
    discard(running)
    assert root.exists() and list(root.iterdir()) == []  # pruned up to results/checkpoints, not beyond
    elsewhere = tmp_path / "a" / "b"
    elsewhere.mkdir(parents=True)
    discard(elsewhere)
    assert (tmp_path / "a").exists()  # outside a checkpoints directory only the checkpoint itself goes
