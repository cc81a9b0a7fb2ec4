"""A GRU over a whole trajectory as one autograd node, with episode resets, for the learner's unroll.

:func:`gru_sequence` computes what a loop of ``nn.GRUCell`` calls computes (``h_t = cell(x_t, h_{t-1} * keep_t)``),
with the same gate equations and fp32 arithmetic, but it is one :class:`torch.autograd.Function` whose backward
is written out. What that buys, at the learner's shape (32 steps x 32 trajectories, 512 -> 512):

* the input projection of every step is one ``[T*B, I] x [I, 3R]`` product in the forward pass, and its
  gradients (input and weight) one product each in the backward pass, instead of one small product per step;
* the recurrent weight's gradient is one ``[3R, T*B] x [T*B, R]`` product instead of 32 products of 32 rows and
  31 additions of a 3 MB matrix (autograd accumulates a per-step gradient for a weight used at every step);
* no autograd graph of about 15 nodes per step is built and walked.

Only the ``h @ W_hh`` products stay sequential (32 rows each, forward and backward). The gates follow torch's
GRU cell (r, z, n in that order): ``r = sigmoid(i_r + h_r)``, ``z = sigmoid(i_z + h_z)``,
``n = tanh(i_n + r * h_n)``, ``h' = (h - n) * z + n``. Sums run in another order than the cell loop's (one large
product instead of many small ones), so results equal it to float rounding, not bit for bit
(``tests/trainers/test_appo_gru.py`` checks outputs and every gradient against the cell loop).
"""

from __future__ import annotations

from typing import Any

import torch


class _GRUSequence(torch.autograd.Function):
    """Autograd node of :func:`gru_sequence` (inputs and outputs as documented there)."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, h0: torch.Tensor, keep: torch.Tensor, w_ih: torch.Tensor,
                w_hh: torch.Tensor, b_ih: torch.Tensor, b_hh: torch.Tensor) -> torch.Tensor:
        steps, batch, _ = x.shape
        rnn = w_hh.shape[1]
        gi = torch.addmm(b_ih, x.reshape(steps * batch, -1), w_ih.t()).view(steps, batch, 3 * rnn)
        out = x.new_empty(steps, batch, rnn)
        h_in = x.new_empty(steps, batch, rnn)  # the state each step starts from (after its reset)
        gates = x.new_empty(steps, batch, 4 * rnn)  # r, z, n and the recurrent part of n (h_n), per step
        w_hh_t = w_hh.t()
        h = h0
        for t in range(steps):
            start = torch.mul(h, keep[t], out=h_in[t])
            gh = torch.addmm(b_hh, start, w_hh_t)
            i_r, i_z, i_n = gi[t].chunk(3, 1)
            h_r, h_z, h_n = gh.chunk(3, 1)
            r, z, n, hn = gates[t].chunk(4, 1)
            torch.sigmoid(torch.add(i_r, h_r), out=r)
            torch.sigmoid(torch.add(i_z, h_z), out=z)
            hn.copy_(h_n)
            torch.tanh(torch.addcmul(i_n, h_n, r), out=n)
            h = torch.sub(start, n, out=out[t]).mul_(z).add_(n)
        ctx.save_for_backward(x, keep, w_ih, w_hh, h_in, gates)
        return out

    @staticmethod
    def backward(ctx: Any, grad_out: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        x, keep, w_ih, w_hh, h_in, gates = ctx.saved_tensors
        steps, batch, _ = x.shape
        rnn = w_hh.shape[1]
        d_gi = x.new_empty(steps, batch, 3 * rnn)  # gradient of the input projection (pre-activation gates)
        d_gh = x.new_empty(steps, batch, 3 * rnn)  # gradient of the recurrent projection
        carry = torch.zeros_like(grad_out[0])
        for t in range(steps - 1, -1, -1):
            r, z, n, hn = gates[t].chunk(4, 1)
            dh = grad_out[t] + carry
            d_ar, d_az, d_an = d_gi[t].chunk(3, 1)
            g_r, g_z, g_hn = d_gh[t].chunk(3, 1)
            # h' = (h_in - n) * z + n
            d_n = dh * (1.0 - z)
            torch.mul(dh * (h_in[t] - n), z * (1.0 - z), out=d_az)  # through z = sigmoid(a_z)
            torch.mul(d_n, 1.0 - n * n, out=d_an)  # through n = tanh(a_n), a_n = i_n + r * h_n
            torch.mul(d_an, r, out=g_hn)
            torch.mul(d_an * hn, r * (1.0 - r), out=d_ar)  # through r = sigmoid(a_r)
            g_r.copy_(d_ar)
            g_z.copy_(d_az)
            carry = torch.addmm(dh * z, d_gh[t], w_hh).mul_(keep[t])
        flat_gi = d_gi.view(steps * batch, 3 * rnn)
        flat_gh = d_gh.view(steps * batch, 3 * rnn)
        d_x = torch.mm(flat_gi, w_ih).view_as(x) if ctx.needs_input_grad[0] else None
        d_h0 = carry if ctx.needs_input_grad[1] else None
        d_w_ih = torch.mm(flat_gi.t(), x.reshape(steps * batch, -1)) if ctx.needs_input_grad[3] else None
        d_w_hh = torch.mm(flat_gh.t(), h_in.view(steps * batch, rnn)) if ctx.needs_input_grad[4] else None
        d_b_ih = flat_gi.sum(0) if ctx.needs_input_grad[5] else None
        d_b_hh = flat_gh.sum(0) if ctx.needs_input_grad[6] else None
        return d_x, d_h0, None, d_w_ih, d_w_hh, d_b_ih, d_b_hh


def gru_sequence(cell: torch.nn.GRUCell, x: torch.Tensor, h0: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """Run ``cell`` over ``x float[T, B, I]`` from ``h0 float[B, R]``; returns every step's state ``float[T, B, R]``.

    ``keep float[T, B, 1]`` (0 or 1) multiplies the state before each step: 0 where an episode starts there.
    Equal to ``h = cell(x[t], h * keep[t])`` for ``t = 0 .. T-1`` (to float rounding), with the cell's weights.
    """
    if cell.bias_ih is None or cell.bias_hh is None:
        raise ValueError("gru_sequence needs a GRUCell with biases")
    out: torch.Tensor = _GRUSequence.apply(  # type: ignore[no-untyped-call]
        x, h0, keep, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)
    return out
