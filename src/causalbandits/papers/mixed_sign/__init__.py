"""The library's own benchmark: linear-SEM bandits on random mixed-sign networks."""

from causalbandits.papers.mixed_sign.benchmark import networks, radius_tuning

EXPERIMENTS = {
    "mixed-sign-networks": networks,
    "mixed-sign-networks-radius-tuning": radius_tuning,
}
