"""Bandit policies, vectorised over replicates, and their registry by short name."""

from causalbandits.policies.base import Policy
from causalbandits.policies.csl_ucb import CSLUCB
from causalbandits.policies.ftrl import FTRLHybrid
from causalbandits.policies.golem_mab import GolemMAB, GolemMABCD
from causalbandits.policies.igp_ucb import IGPUCB
from causalbandits.policies.linsem import LinSEMTS, LinSEMUCB, RobustLCB
from causalbandits.policies.mets import METS
from causalbandits.policies.ndc_sem import NDCSEM, SEMUCB
from causalbandits.policies.oracle import Oracle
from causalbandits.policies.q_search import SSEMUCBQSearch
from causalbandits.policies.random_policy import RandomPolicy
from causalbandits.policies.semibandit import CTS, CUCB, RandomSuperArm
from causalbandits.policies.sgb import SGB
from causalbandits.policies.ssem_ucb import SSEMUCBJO
from causalbandits.policies.ssem_ucb_dag import SSEMUCB
from causalbandits.policies.ssem_ucb_norm import SSEMUCBNorm
from causalbandits.policies.ucb import UCB1

# Oracle is not registered: it is built from the environment's optimal super arms
# (Oracle.from_environment), not from the problem a learner is told (see policies/oracle.py).
POLICIES: dict[str, type] = {
    "robust-lcb": RobustLCB,
    "linsem-ucb": LinSEMUCB,
    "linsem-ts": LinSEMTS,
    "ucb": UCB1,
    "csl-ucb": CSLUCB,
    "golem-mab": GolemMAB,
    "golem-mab-cd": GolemMABCD,
    "random": RandomPolicy,
    "ndc-sem": NDCSEM,
    "sem-ucb": SEMUCB,
    "cucb": CUCB,
    "cts": CTS,
    "ftrl": FTRLHybrid,
    "random-super-arm": RandomSuperArm,
    "sgb": SGB,
    "mets": METS,
    # IGP-UCB's paper settings need the truth: the runner builds it by IGPUCB.from_environment.
    "igp-ucb": IGPUCB,
    "ssem-ucb": SSEMUCB,
    "ssem-ucb-jo": SSEMUCBJO,
    "ssem-ucb-norm": SSEMUCBNorm,
    "ssem-ucb-q-search": SSEMUCBQSearch,
}

__all__ = [
    "CSLUCB",
    "CTS",
    "CUCB",
    "FTRLHybrid",
    "IGPUCB",
    "METS",
    "NDCSEM",
    "Oracle",
    "SEMUCB",
    "RandomSuperArm",
    "GolemMAB",
    "GolemMABCD",
    "POLICIES",
    "LinSEMTS",
    "LinSEMUCB",
    "Policy",
    "RandomPolicy",
    "RobustLCB",
    "SGB",
    "SSEMUCB",
    "SSEMUCBJO",
    "SSEMUCBNorm",
    "SSEMUCBQSearch",
    "UCB1",
]
