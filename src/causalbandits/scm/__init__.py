"""Structural causal models and noise models."""

from causalbandits.scm.linear import LinearSEM, uniform_column_weights
from causalbandits.scm.noise import GaussianNoise, NoiseModel, UniformNoise

__all__ = ["GaussianNoise", "LinearSEM", "NoiseModel", "UniformNoise", "uniform_column_weights"]
