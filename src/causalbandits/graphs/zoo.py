"""The DAGs of five classic Bayesian networks: asia, sachs, child, insurance and alarm.

Source: the bnlearn Bayesian network repository (M. Scutari,
https://www.bnlearn.com/bnrepository/), the same networks pgmpy's ``get_example_model``
loads. Only the structures are used: :data:`PARENTS` lists, per network, every node with
its parents as the ``probability ( X | P1, P2 )`` lines of the BIF file give them, nodes in
the order of the file's ``variable`` declarations; the probability tables are not used.
"""

from __future__ import annotations

import networkx as nx

PARENTS: dict[str, dict[str, tuple[str, ...]]] = {
    "asia": {
        "asia": (),
        "tub": ("asia",),
        "smoke": (),
        "lung": ("smoke",),
        "bronc": ("smoke",),
        "either": ("lung", "tub"),
        "xray": ("either",),
        "dysp": ("bronc", "either"),
    },
    "sachs": {
        "Akt": ("Erk", "PKA"),
        "Erk": ("Mek", "PKA"),
        "Jnk": ("PKA", "PKC"),
        "Mek": ("PKA", "PKC", "Raf"),
        "P38": ("PKA", "PKC"),
        "PIP2": ("PIP3", "Plcg"),
        "PIP3": ("Plcg",),
        "PKA": ("PKC",),
        "PKC": (),
        "Plcg": (),
        "Raf": ("PKA", "PKC"),
    },
    "child": {
        "BirthAsphyxia": (),
        "HypDistrib": ("DuctFlow", "CardiacMixing"),
        "HypoxiaInO2": ("CardiacMixing", "LungParench"),
        "CO2": ("LungParench",),
        "ChestXray": ("LungParench", "LungFlow"),
        "Grunting": ("LungParench", "Sick"),
        "LVHreport": ("LVH",),
        "LowerBodyO2": ("HypDistrib", "HypoxiaInO2"),
        "RUQO2": ("HypoxiaInO2",),
        "CO2Report": ("CO2",),
        "XrayReport": ("ChestXray",),
        "Disease": ("BirthAsphyxia",),
        "GruntingReport": ("Grunting",),
        "Age": ("Disease", "Sick"),
        "LVH": ("Disease",),
        "DuctFlow": ("Disease",),
        "CardiacMixing": ("Disease",),
        "LungParench": ("Disease",),
        "LungFlow": ("Disease",),
        "Sick": ("Disease",),
    },
    "insurance": {
        "GoodStudent": ("SocioEcon", "Age"),
        "Age": (),
        "SocioEcon": ("Age",),
        "RiskAversion": ("Age", "SocioEcon"),
        "VehicleYear": ("SocioEcon", "RiskAversion"),
        "ThisCarDam": ("Accident", "RuggedAuto"),
        "RuggedAuto": ("MakeModel", "VehicleYear"),
        "Accident": ("Antilock", "Mileage", "DrivQuality"),
        "MakeModel": ("SocioEcon", "RiskAversion"),
        "DrivQuality": ("DrivingSkill", "RiskAversion"),
        "Mileage": (),
        "Antilock": ("MakeModel", "VehicleYear"),
        "DrivingSkill": ("Age", "SeniorTrain"),
        "SeniorTrain": ("Age", "RiskAversion"),
        "ThisCarCost": ("ThisCarDam", "CarValue", "Theft"),
        "Theft": ("AntiTheft", "HomeBase", "CarValue"),
        "CarValue": ("MakeModel", "VehicleYear", "Mileage"),
        "HomeBase": ("RiskAversion", "SocioEcon"),
        "AntiTheft": ("RiskAversion", "SocioEcon"),
        "PropCost": ("OtherCarCost", "ThisCarCost"),
        "OtherCarCost": ("Accident", "RuggedAuto"),
        "OtherCar": ("SocioEcon",),
        "MedCost": ("Accident", "Age", "Cushioning"),
        "Cushioning": ("RuggedAuto", "Airbag"),
        "Airbag": ("MakeModel", "VehicleYear"),
        "ILiCost": ("Accident",),
        "DrivHist": ("DrivingSkill", "RiskAversion"),
    },
    "alarm": {
        "HISTORY": ("LVFAILURE",),
        "CVP": ("LVEDVOLUME",),
        "PCWP": ("LVEDVOLUME",),
        "HYPOVOLEMIA": (),
        "LVEDVOLUME": ("HYPOVOLEMIA", "LVFAILURE"),
        "LVFAILURE": (),
        "STROKEVOLUME": ("HYPOVOLEMIA", "LVFAILURE"),
        "ERRLOWOUTPUT": (),
        "HRBP": ("ERRLOWOUTPUT", "HR"),
        "HREKG": ("ERRCAUTER", "HR"),
        "ERRCAUTER": (),
        "HRSAT": ("ERRCAUTER", "HR"),
        "INSUFFANESTH": (),
        "ANAPHYLAXIS": (),
        "TPR": ("ANAPHYLAXIS",),
        "EXPCO2": ("ARTCO2", "VENTLUNG"),
        "KINKEDTUBE": (),
        "MINVOL": ("INTUBATION", "VENTLUNG"),
        "FIO2": (),
        "PVSAT": ("FIO2", "VENTALV"),
        "SAO2": ("PVSAT", "SHUNT"),
        "PAP": ("PULMEMBOLUS",),
        "PULMEMBOLUS": (),
        "SHUNT": ("INTUBATION", "PULMEMBOLUS"),
        "INTUBATION": (),
        "PRESS": ("INTUBATION", "KINKEDTUBE", "VENTTUBE"),
        "DISCONNECT": (),
        "MINVOLSET": (),
        "VENTMACH": ("MINVOLSET",),
        "VENTTUBE": ("DISCONNECT", "VENTMACH"),
        "VENTLUNG": ("INTUBATION", "KINKEDTUBE", "VENTTUBE"),
        "VENTALV": ("INTUBATION", "VENTLUNG"),
        "ARTCO2": ("VENTALV",),
        "CATECHOL": ("ARTCO2", "INSUFFANESTH", "SAO2", "TPR"),
        "HR": ("CATECHOL",),
        "CO": ("HR", "STROKEVOLUME"),
        "BP": ("CO", "TPR"),
    },
}
NAMES = tuple(PARENTS)  # by size: 8, 11, 20, 27 and 37 nodes


def structure(name: str) -> nx.DiGraph:
    """The DAG of network ``name``: nodes in the BIF file's order, edges parent -> child."""
    if name not in PARENTS:
        raise ValueError(f"unknown network {name!r}; the known ones are {', '.join(NAMES)}")
    graph = nx.DiGraph()
    graph.add_nodes_from(PARENTS[name])
    graph.add_edges_from(
        (parent, child) for child, parents in PARENTS[name].items() for parent in parents
    )
    return graph
