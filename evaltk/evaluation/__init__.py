"""The evaluation pipeline: a policy evaluated into a score table, and score tables read back as samples.

One side of an evaluation goes through these modules in order (``docs/architecture.md``, "One request through the
code"):

* :mod:`evaltk.evaluation.plan` resolves and checks a side (location, policy, env spec, simulator, seeds, score
  table) into an :class:`~evaltk.evaluation.plan.EvaluationPlan` before any episode runs;
* :mod:`evaltk.evaluation.run` runs a plan's episodes through an executor and writes each row as it finishes
  (``evaltk evaluate``), folding each step into the per-episode digests of :mod:`evaltk.evaluation.digests`;
* :mod:`evaltk.evaluation.scores` is the one module that writes and reads score tables and their manifest, whose
  settings are an :class:`~evaltk.evaluation.scores.EvalSettings`; a table's row is an
  :class:`~evaltk.evaluation.records.ScoreRow` (:mod:`evaltk.evaluation.records`, with the column types);
* :mod:`evaltk.evaluation.samples` reads a table back as a :class:`~evaltk.verdict.Sample` (``evaltk compare``);
* :mod:`evaltk.evaluation.validate` runs two sides and compares them (``evaltk validate``), and
  :mod:`evaltk.evaluation.until_verdict` evaluates against a baseline table until a sequential verdict
  (``evaltk evaluate --until-verdict``).

The package exports nothing itself: each name is imported from the module that defines it.
"""
