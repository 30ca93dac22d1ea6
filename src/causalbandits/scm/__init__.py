"""Structural causal models and noise models."""

from causalbandits.scm.function_network import FunctionNetwork, Mechanism
from causalbandits.scm.linear import LinearSEM, transfer_matrix, uniform_column_weights
from causalbandits.scm.noise import GaussianNoise, MixtureNoise, NoiseModel, UniformNoise

__all__ = [
    "FunctionNetwork",
    "GaussianNoise",
    "LinearSEM",
    "Mechanism",
    "MixtureNoise",
    "NoiseModel",
    "UniformNoise",
    "transfer_matrix",
    "uniform_column_weights",
]
