"""Self-play and population-based training (PBT) of APPO agents on ViZDoom multiplayer duels."""
