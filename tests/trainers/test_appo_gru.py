"""``gru_sequence`` computes the ``nn.GRUCell`` loop with resets, in values and in every gradient."""

from __future__ import annotations

import torch
from hypothesis import given
from hypothesis import strategies as st

from trainers.appo.gru import gru_sequence


def _cell_loop(cell: torch.nn.GRUCell, x: torch.Tensor, h0: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """Run the definition: one ``GRUCell`` call per step, from the state times ``keep``."""
    h, outs = h0, []
    for t in range(x.shape[0]):
        h = cell(x[t], h * keep[t])
        outs.append(h)
    return torch.stack(outs)


def _outputs_and_grads(run: object, cell: torch.nn.GRUCell, x: torch.Tensor, h0: torch.Tensor,
                       keep: torch.Tensor, probe: torch.Tensor) -> dict[str, torch.Tensor]:
    leaves = {"x": x, "h0": h0, **dict(cell.named_parameters())}
    for leaf in leaves.values():
        leaf.grad = None
    out = run(cell, x, h0, keep)  # type: ignore[operator]
    (out * probe).sum().backward()
    result = {"out": out.detach()}
    result.update({name: leaf.grad.clone() for name, leaf in leaves.items() if leaf.grad is not None})
    return result


@given(steps=st.integers(1, 6), batch=st.integers(1, 4), sizes=st.sampled_from([(3, 5), (8, 4), (16, 16)]),
       reset_bits=st.integers(0, 2**24 - 1), seed=st.integers(0, 2**16))
def test_gru_sequence_equals_the_cell_loop(steps: int, batch: int, sizes: tuple[int, int], reset_bits: int,
                                           seed: int) -> None:
    torch.manual_seed(seed)
    inputs, rnn = sizes
    cell = torch.nn.GRUCell(inputs, rnn)
    x = torch.randn(steps, batch, inputs, requires_grad=True)
    h0 = torch.randn(batch, rnn, requires_grad=True)
    bits = [(reset_bits >> i) & 1 for i in range(steps * batch)]
    keep = 1.0 - torch.tensor(bits, dtype=torch.float32).view(steps, batch, 1)
    probe = torch.randn(steps, batch, rnn)

    want = _outputs_and_grads(_cell_loop, cell, x, h0, keep, probe)
    got = _outputs_and_grads(gru_sequence, cell, x, h0, keep, probe)
    assert got.keys() == want.keys() == {"out", "x", "h0", "weight_ih", "weight_hh", "bias_ih", "bias_hh"}
    for name in want:
        torch.testing.assert_close(got[name], want[name], rtol=1e-5, atol=1e-5, msg=name)


def test_a_reset_cuts_every_gradient_to_earlier_steps() -> None:
    torch.manual_seed(0)
    cell = torch.nn.GRUCell(6, 5)
    x = torch.randn(4, 2, 6, requires_grad=True)
    h0 = torch.randn(2, 5, requires_grad=True)
    keep = torch.ones(4, 2, 1)
    keep[2, 0] = 0.0  # trajectory 0 starts an episode at step 2
    out = gru_sequence(cell, x, h0, keep)
    out[2:, 0].sum().backward()
    assert x.grad is not None
    assert h0.grad is not None
    assert torch.count_nonzero(x.grad[:2, 0]) == 0
    assert torch.count_nonzero(h0.grad[0]) == 0
    assert torch.count_nonzero(x.grad[2:, 0]) > 0
    assert torch.count_nonzero(x.grad[:, 1]) == 0  # trajectory 1's outputs were not in the loss


def test_the_learner_shape_matches_the_cell_loop_and_skips_unneeded_gradients() -> None:
    torch.manual_seed(1)
    cell = torch.nn.GRUCell(512, 512)
    x = torch.randn(32, 32, 512, requires_grad=True)
    h0 = torch.randn(32, 512)  # the stored state before a trajectory: no gradient wanted
    keep = (torch.rand(32, 32, 1) > 0.05).float()
    probe = torch.randn(32, 32, 512)
    want = _outputs_and_grads(_cell_loop, cell, x, h0, keep, probe)
    got = _outputs_and_grads(gru_sequence, cell, x, h0, keep, probe)
    assert "h0" not in got
    assert got.keys() == want.keys()
    for name in want:
        torch.testing.assert_close(got[name], want[name], rtol=1e-4, atol=1e-4, msg=name)
