"""Asynchronous PPO (APPO) on ViZDoom in the style of Sample Factory (see ``docs/appo.md``).

Importing this package is cheap on purpose: rollout worker processes import it without torch.
"""
