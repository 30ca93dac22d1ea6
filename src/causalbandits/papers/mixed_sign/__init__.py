"""The library's own benchmark: linear-SEM bandits on random mixed-sign networks."""

from causalbandits.papers.mixed_sign.benchmark import networks

EXPERIMENTS = {"mixed-sign-networks": networks}
