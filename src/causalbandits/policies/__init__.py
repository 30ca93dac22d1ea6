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
from causalbandits.policies.random_policy import RandomPolicy, RandomSearch
from causalbandits.policies.registry import Registry
from causalbandits.policies.semibandit import CTS, CUCB, RandomSuperArm
from causalbandits.policies.sgb import SGB
from causalbandits.policies.ssem_ucb import SSEMUCBJO
from causalbandits.policies.ssem_ucb_dag import SSEMUCB
from causalbandits.policies.ssem_ucb_norm import SSEMUCBNorm
from causalbandits.policies.taylor_oracle import TaylorOracle
from causalbandits.policies.ucb import UCB1

#: Every policy by its unique short name (:class:`~causalbandits.policies.registry.Registry`).
#: The oracles and IGP-UCB's paper settings need the truth: they are built by their
#: ``from_environment``. The causal-BO optimisers need PyTorch (the ``gp`` extra): imported
#: when first built.
POLICIES = Registry(
    {
        "robust-lcb": RobustLCB,
        "linsem-ucb": LinSEMUCB,
        "linsem-ts": LinSEMTS,
        "ucb": UCB1,
        "csl-ucb": CSLUCB,
        "golem-mab": GolemMAB,
        "golem-mab-cd": GolemMABCD,
        "random": RandomPolicy,
        "random-search": RandomSearch,
        "ndc-sem": NDCSEM,
        "sem-ucb": SEMUCB,
        "cucb": CUCB,
        "cts": CTS,
        "ftrl": FTRLHybrid,
        "random-super-arm": RandomSuperArm,
        "oracle": Oracle,
        "sgb": SGB,
        "mets": METS,
        "igp-ucb": IGPUCB,
        "ssem-ucb": SSEMUCB,
        "ssem-ucb-jo": SSEMUCBJO,
        "ssem-ucb-norm": SSEMUCBNorm,
        "ssem-ucb-q-search": SSEMUCBQSearch,
        "taylor-oracle": TaylorOracle,
        "excbo": "causalbandits.policies.excbo:EXCBO",
        "gp-ucb": "causalbandits.policies.bo_baselines:GPUCB",
        "eicf": "causalbandits.policies.bo_baselines:EICF",
        "mcbo": "causalbandits.policies.bo_baselines:MCBO",
        "nmcbo": "causalbandits.policies.nmcbo:NMCBO",
    }
)

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
    "RandomSearch",
    "RobustLCB",
    "SGB",
    "SSEMUCB",
    "SSEMUCBJO",
    "SSEMUCBNorm",
    "SSEMUCBQSearch",
    "TaylorOracle",
    "UCB1",
]
