"""Structural causal models and noise models."""

from causalbandits.scm.linear import LinearSEM, transfer_matrix, uniform_column_weights
from causalbandits.scm.noise import GaussianNoise, NoiseModel, UniformNoise

__all__ = [
    "GaussianNoise",
    "LinearSEM",
    "NoiseModel",
    "UniformNoise",
    "transfer_matrix",
    "uniform_column_weights",
]
