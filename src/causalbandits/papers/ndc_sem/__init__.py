"""NDC-SEM (Ghoorchian & Maghsudi, arXiv 2307.09093): the synthetic and COVID-19 experiments."""

from causalbandits.papers.ndc_sem import synthetic_tuning
from causalbandits.papers.ndc_sem.covid import covid
from causalbandits.papers.ndc_sem.synthetic import synthetic

EXPERIMENTS = {
    "ndc-sem-synthetic": synthetic,
    **synthetic_tuning.EXPERIMENTS,
    "ndc-sem-covid": covid,
}
