"""NDC-SEM (Ghoorchian & Maghsudi, arXiv 2307.09093): the synthetic and COVID-19 experiments."""

from causalbandits.papers.ndc_sem.covid import covid
from causalbandits.papers.ndc_sem.synthetic import synthetic

EXPERIMENTS = {"ndc-sem-synthetic": synthetic, "ndc-sem-covid": covid}
