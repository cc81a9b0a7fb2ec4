"""APPO's shared observation memory is channels-last under a channel-first view; inference waits for fuller batches."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator

import numpy as np
import pytest
import torch

from trainers.appo.buffers import BufferLayout, SharedBuffers
from trainers.appo.inference import Inference
from trainers.appo.learner import gather_batch
from trainers.appo.network import ActorCritic

OBS = (3, 36, 64)


@pytest.fixture
def buffers() -> Iterator[SharedBuffers]:
    layout = BufferLayout(num_workers=2, envs_per_worker=2, slots_per_env=2, rollout=3, obs_shape=OBS, num_heads=1,
                          rnn_size=16)
    buf = SharedBuffers(layout)
    yield buf
    buf.close()


def test_the_channel_first_view_writes_the_channels_last_memory(buffers: SharedBuffers) -> None:
    frame = np.random.default_rng(0).integers(0, 256, OBS, dtype=np.uint8)
    buffers.np["obs"][5, 2] = frame
    assert buffers.np["obs"].shape == (8, 4, *OBS)
    assert np.shares_memory(buffers.np["obs"], buffers.obs_hwc)
    assert buffers.obs_hwc.flags.c_contiguous
    np.testing.assert_array_equal(buffers.obs_hwc[5, 2], frame.transpose(1, 2, 0))
    np.testing.assert_array_equal(buffers.np["obs"][5, 2], frame)


def test_gather_batch_is_time_major_and_channels_last(buffers: SharedBuffers) -> None:
    buffers.np["obs"][...] = np.random.default_rng(1).integers(0, 256, buffers.np["obs"].shape, dtype=np.uint8)
    slots = [6, 1, 3]
    expected = buffers.np["obs"][slots].swapaxes(0, 1).copy()
    batch = gather_batch(buffers, slots)
    np.testing.assert_array_equal(batch.obs.numpy(), expected)
    flat = batch.obs.reshape(-1, *OBS)
    assert flat.is_contiguous(memory_format=torch.channels_last)
    assert flat.data_ptr() == batch.obs.data_ptr()  # merging time and trajectory is a view, not a copy


def test_encode_gives_the_same_features_for_either_memory_layout() -> None:
    torch.manual_seed(0)
    model = ActorCritic(OBS, [4], hidden_size=32, rnn_size=16)
    obs = torch.randint(0, 256, (5, *OBS), dtype=torch.uint8)
    channels_last = obs.contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        assert torch.equal(model.encode(obs), model.encode(channels_last))


def _inference(buffers: SharedBuffers, requests: queue.Queue[tuple[int, int, int]],
               replies: list[queue.Queue[tuple[int, int]]], wait_s: float) -> Inference:
    model = ActorCritic(OBS, [4], hidden_size=32, rnn_size=16)
    return Inference(model, buffers, requests, lambda w: replies[w], lambda w: 0,
                     worker_splits=2, seed=0, wait_s=wait_s)


def _until(condition: Callable[[], bool], what: str, limit_s: float = 60.0) -> None:
    """Wait for ``condition``; fail naming ``what`` after ``limit_s`` (only a real hang gets there)."""
    deadline = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {limit_s:g} s"
        time.sleep(0.005)


def test_serve_waits_until_half_the_splits_asked(buffers: SharedBuffers) -> None:
    # wait_s is far longer than the test: serve returns because the second request came, not at the deadline.
    requests: queue.Queue[tuple[int, int, int]] = queue.Queue()
    replies: list[queue.Queue[tuple[int, int]]] = [queue.Queue(), queue.Queue()]
    inference = _inference(buffers, requests, replies, wait_s=120.0)
    assert inference.enough_requests == 2  # 2 workers x 2 splits
    requests.put((0, 0, 0))
    first_pass_done = threading.Event()

    def later() -> None:
        _until(requests.empty, "serve taking the first request")  # serve now waits for more
        requests.put((1, 1, 0))
        first_pass_done.wait(timeout=120)
        requests.put((0, 1, 0))  # arrive after the pass: the next one serves them
        requests.put((1, 0, 0))

    thread = threading.Thread(target=later)
    thread.start()
    start = time.monotonic()
    served = inference.serve(timeout=60.0)
    took = time.monotonic() - start
    first_pass_done.set()
    assert served == 2  # it waited for the second request...
    assert took < 120.0  # ...and not for the whole wait
    assert replies[0].get_nowait() == (0, 0)
    assert replies[1].get_nowait() == (1, 0)
    thread.join()
    assert inference.serve(timeout=60.0) == 2
    assert replies[0].get_nowait() == (1, 0)
    assert replies[1].get_nowait() == (0, 0)


def test_serve_stops_waiting_at_the_deadline_and_never_waits_when_polled(buffers: SharedBuffers) -> None:
    requests: queue.Queue[tuple[int, int, int]] = queue.Queue()
    replies: list[queue.Queue[tuple[int, int]]] = [queue.Queue(), queue.Queue()]
    inference = _inference(buffers, requests, replies, wait_s=0.3)
    requests.put((0, 0, 0))
    start = time.monotonic()
    assert inference.serve(timeout=1.0) == 1  # the second request never comes: served alone at the deadline
    assert time.monotonic() - start >= 0.3
    polled = _inference(buffers, requests, replies, wait_s=120.0)
    requests.put((1, 0, 0))
    start = time.monotonic()
    assert polled.serve(timeout=0.0) == 1  # serial mode polls: no wait
    assert time.monotonic() - start < 120.0  # waiting would take the whole 120 s
