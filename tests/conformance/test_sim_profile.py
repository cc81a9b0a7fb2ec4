"""``conformance.sim_profile``: per-field step counts, the mean pixel difference, episode ends, ``--compare``."""

from __future__ import annotations

import numpy as np
import pytest

from conformance.lockstep import LockstepError
from conformance.sim_profile import FIELDS, EpisodeEnds, FieldProfile, Profile, compare_problem, parse_compare


def test_a_step_counts_once_however_many_comparisons_it_holds() -> None:
    """Step 3's step and the reset after it are two comparisons of one step; the first difference is reported once."""
    f = FieldProfile()
    calls = [(0, False), (1, True), (1, True), (2, False), (3, False), (3, True), (4, True)]
    assert [f.record(step, differs) for step, differs in calls] == [False, True] + [False] * 5
    assert (f.steps, f.steps_differing, f.first_step) == (5, 3, 1)
    assert f.as_dict("reward") == {"first_step": 1, "steps_differing": 3, "steps": 5, "files": {}}


def test_the_mean_absolute_pixel_difference_is_over_every_compared_pixel() -> None:
    f = FieldProfile()
    a = np.array([[0, 255], [10, 10]], np.uint8)
    f.add_pixels(a, np.array([[255, 0], [10, 12]], np.uint8))  # |diff| 255 + 255 + 0 + 2 (no uint8 wrap-around)
    f.add_pixels(a, a)
    assert f.mean_abs_diff == pytest.approx(512 / 8)
    assert f.as_dict("obs")["mean_abs_diff"] == 64.0
    assert FieldProfile().mean_abs_diff == 0.0
    assert "mean absolute pixel difference 64.0000" in f.line("obs")


def test_episode_ends_are_counted_by_side() -> None:
    ends = EpisodeEnds()
    for reference, sim in ((True, True), (False, True), (False, True), (True, False), (False, False)):
        ends.count(reference, sim)
    assert ends.as_dict() == {"both": 1, "reference_only": 1, "sim_only": 2}


def test_profile_summary_names_each_field() -> None:
    profile = Profile.of(("obs", "lives"))
    profile.fields["obs"].record(0, True)
    profile.fields["lives"].record(1, False)
    assert profile.summary() == "steps differing: obs 1/1 from step 0 (mean |diff| 0.0000), lives 0/1"
    assert list(profile.as_dict()) == ["obs", "lives"]


def test_compare_names_known_fields_once() -> None:
    assert parse_compare("reward, terminated,lives") == ("reward", "terminated", "lives")
    assert compare_problem(list(FIELDS)) is None
    with pytest.raises(LockstepError, match=r"--compare 'reward,rewards' names 'rewards', not a field: use one or "
                                            r"more of obs, reward, terminated, truncated, lives"):
        parse_compare("reward,rewards")
    with pytest.raises(LockstepError, match="names no field"):
        parse_compare(" , ")
    with pytest.raises(LockstepError, match="names a field twice"):
        parse_compare("obs,obs")
