"""Machinery every family shares: devices, model-hub access, progress, checkpoints, training."""
