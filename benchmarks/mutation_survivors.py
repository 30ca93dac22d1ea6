"""What benchmarks/mutation.py needs besides mutmut: the hand-written mutants the issue lists
(each must be killed) and the classification of the mutants that survive.

A survivor is matched by its module key and the original and mutated source lines (not by
line number, so the table survives unrelated edits). :data:`RULES` are patterns that are
equivalent wherever they occur (e.g. upper-cased ``einsum`` subscripts); :data:`SURVIVORS`
lists the others one by one. ``classify`` returns ``(class, reason)`` with class
``"equivalent"`` (no input tells the mutant from the original: same results, at most another
speed or memory use) or ``"harmless"`` (observable only outside the documented use: inputs the
callers never pass, floating-point ties of probability zero, the speed of a loop that
converges anyway), or ``None`` when the survivor is not classified (a test gap to look at).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Listed:
    """A hand-written mutant: ``old`` (exactly once in the target's module) becomes ``new``."""

    name: str
    key: str
    old: str
    new: str


#: The survivors named in the issue ("runs people can trust"): every one must be killed.
LISTED: tuple[Listed, ...] = (
    Listed(
        "Robust-LCB's weight 1/bonus -> 1/sqrt(bonus)",
        "linsem",
        "1.0 / np.maximum(bonus, 1e-300)",
        "1.0 / np.sqrt(np.maximum(bonus, 1e-300))",
    ),
    Listed(
        "Lemma 1's radius loses + m",
        "linsem",
        "np.log(1 + m * m * t / (d * c * c))) + 1 + m",
        "np.log(1 + m * m * t / (d * c * c))) + 1",
    ),
    Listed(
        "LinSEM-UCB's radius loses its factor d",
        "linsem",
        "np.log(1 / self.delta) + d * np.log(1 + m * m * t / d))",
        "np.log(1 / self.delta) + np.log(1 + m * m * t / d))",
    ),
    Listed("Lemma 1's C^2 -> C", "linsem", "(d * c * c)", "(d * c)"),
    Listed(
        "the environment ignores the noise mean (expected rewards)",
        "linear_bandit",
        "self.expected_values = self.transfer @ sem.noise.mean",
        "self.expected_values = self.transfer @ np.ones(sem.n_nodes)",
    ),
    Listed(
        "the environment ignores the noise mean (the learner is told 0)",
        "linear_bandit",
        "noise_mean=sem.noise.mean.copy(),",
        "noise_mean=np.zeros(sem.n_nodes),",
    ),
    Listed(
        "the reward node is taken as the last node",
        "linear_bandit",
        "self.reward_node = sem.n_nodes - 1 if reward_node is None else int(reward_node)",
        "self.reward_node = sem.n_nodes - 1",
    ),
    Listed(
        "the optimal-action tolerance is dropped",
        "linear_bandit",
        ">= self.optimal_value - self.optimal_tolerance",
        ">= self.optimal_value",
    ),
    Listed(
        "the ball cap uses ||u||^2 for ||u||",
        "propagation",
        'np.sqrt(np.einsum("rcd,rcd->rc", u, u))',
        'np.einsum("rcd,rcd->rc", u, u)',
    ),
    Listed(
        "the bca sign rule is fixed to +1",
        "propagation",
        "sign = np.where(effect[..., node] >= 0, 1.0, -1.0)[..., None]",
        "sign = np.ones_like(effect[..., node])[..., None]",
    ),
    Listed(
        "a regularisation constant is misplaced (Vt without lam I)",
        "ridge",
        "self._sq_gram = np.tile(eye * regularisation, (slots, 1, 1))",
        "self._sq_gram = np.tile(eye, (slots, 1, 1))",
    ),
    Listed(
        "a regularisation constant is misplaced (V^-1 = lam I)",
        "ridge",
        "self._gram_inv = np.tile(eye / regularisation, (slots, 1, 1))",
        "self._gram_inv = np.tile(eye * regularisation, (slots, 1, 1))",
    ),
    Listed(
        "Robust-LCB Fig. 1(b) verdict inverted (LinSEM-UCB near the worst)",
        "robust_lcb_checks",
        "bool(linsem[c] >= 0.6 * worst),",
        "bool(not linsem[c] >= 0.6 * worst),",
    ),
    Listed(
        "Robust-LCB Fig. 1(c) verdict inverted (Robust-LCB's regret smooth in C)",
        "robust_lcb_checks",
        "increasing = bool(np.all(",
        "increasing = not bool(np.all(",
    ),
    Listed(
        "NDC-SEM synthetic verdict inverted (NDC-SEM has the lowest regret)",
        "ndc_sem_synthetic_checks",
        'against_best_other(by_replicate.loc[delay][learners], "NDC-SEM")',
        'against_best_other(by_replicate.loc[delay][learners], "NDC-SEM", 1)',
    ),
    Listed(
        "NDC-SEM Covid verdict inverted (higher reward after day 40)",
        "ndc_sem_covid_checks",
        "fig9 = PairedComparison.between(sums[ndc], sums[POLICIES[1]], 1)",
        "fig9 = PairedComparison.between(sums[ndc], sums[POLICIES[1]], -1)",
    ),
    Listed(
        "CUCB's exploration bonus zeroed",
        "semibandit",
        "bonus = np.sqrt(3.0 * np.log(max(self.t, 1)) / (2.0 * safe))",
        "bonus = np.zeros_like(safe)",
    ),
    # ---- issue 32: the planted bugs that passed the suite (causal BO, SSEM helpers).
    Listed(
        "the moment box's lower end not clipped",
        "taylor_moments",
        "low, high = np.clip(low, bottom, top), np.clip(high, bottom, top)",
        "low, high = np.minimum(low, top), np.clip(high, bottom, top)",
    ),
    Listed(
        "eq. 7's radius with s instead of s + 1",
        "taylor_moments",
        "np.sqrt((super_arm_size + 1) * log_t / counts)",
        "np.sqrt(super_arm_size * log_t / counts)",
    ),
    Listed(
        "the exogenous mixture's stds set to the variances",
        "exogenous",
        "stds=np.sqrt(best.covariances_[order, 0, 0]),",
        "stds=best.covariances_[order, 0, 0].copy(),",
    ),
    Listed(
        "EXCBO variants A/C hallucinate at eta = -1 (not optimistic)",
        "excbo",
        "fixed_eta[0, target] = 1.0",
        "fixed_eta[0, target] = -1.0",
    ),
    Listed(
        "EXCBO's noise density sampled with uniforms and normals swapped",
        "excbo",
        "density.sample(uniforms[:, i], normals[:, i])",
        "density.sample(normals[:, i], uniforms[:, i])",
    ),
    Listed(
        "GP-UCB uses beta instead of sqrt(beta)",
        "bo_baselines",
        "self.options.beta**0.5,",
        "self.options.beta,",
    ),
    Listed(
        "MCBO's package noise told sigma as the variance",
        "bo_baselines",
        "package = float(policy.problem.noise_std) ** 2",
        "package = float(policy.problem.noise_std)",
    ),
    Listed(
        "the known noise told as a standard deviation (sqrt of the variance)",
        "bo_baselines",
        'told = problem.noise_variance[node] if noise == "known" else package',
        'told = np.sqrt(problem.noise_variance[node]) if noise == "known" else package',
    ),
    Listed(
        "MCBO's node noise drawn with the variance as its scale",
        "bo_baselines",
        "[marginal.noise_variance for marginal in network.marginals], dtype=DTYPE\n    ).sqrt()",
        "[marginal.noise_variance for marginal in network.marginals], dtype=DTYPE\n    )",
    ),
)


# ------------------------------------------------------------------------ classification

EINSUM = "einsum subscripts upper-cased consistently name the same contraction"
ERRSTATE = (
    "np.errstate only silences floating-point warnings of a division whose invalid results "
    "are discarded; the values are unchanged"
)

#: (key pattern, original regex, mutated regex, class, reason): applied when all three match.
RULES: tuple[tuple[str, str, str, str, str], ...] = (
    (".*", r'einsum\("[a-z.,>-]+"', r'einsum\("[A-Z.,>-]+"', "equivalent", EINSUM),
    (".*", r"np\.errstate\(", r"np\.errstate\(", "equivalent", ERRSTATE),
)

E, H = "equivalent", "harmless"

# Reasons shared by several lines.
DTYPE_INT = "an integer list or fill value already gives int64 (= intp on 64-bit platforms)"
DTYPE_FLOAT_INPUT = (
    "the value is only used in float arithmetic below (integer input gives the same numbers)"
)
DTYPE_BOOL_INPUT = (
    "callers pass booleans; 0/1 integers would select and weight exactly as booleans do"
)
MASKED = "the replaced value is only used where an enclosing np.where discards it"
NEGATIVE_RESHAPE = "numpy treats any negative size as the one inferred dimension"
NO_OP_RESHAPE = "reshape(None) keeps the shape, and the array is already in that shape"
PADDING = "one more padding row/slot/column that is never indexed"
SWEEPS = (
    "a default of one more ascent sweep can only raise the (feasible) value of eq. 18 and "
    "costs time; in the tests the ascent has converged after one sweep"
)
MAX_ITER = "only a loop that has not converged by the original cap reaches the new one"
STRICT_ZIP = "the zipped sequences have equal lengths by construction"
TIE_ZERO_UNIFORM = (
    "differs only when a uniform draw is exactly 0 (probability 2^-53 per draw): the scores "
    "are positive otherwise, so dropping non-positive ones changes nothing"
)
REPORT_GROUPING = (
    "summarise's default groups (setting, its parameters, algorithm, t) give the same rows: "
    "each Robust-LCB setting is one deviation budget and the final table has one t"
)
DEFAULT_ON_PATH = (
    "the default argument equals the value passed (SEM-UCB never reaches the other branch)"
)

MESSAGE_DECORATED = "the message keeps every word (only an XX prefix and suffix are added)"
GLOBAL_SEEDED = (
    "suggest() seeds torch's global generator with the proposal's seed before propose(): "
    "draws from it equal those of a fresh generator seeded the same"
)
AS_FLOAT64 = "node_gp converts its data to float64 itself; the checks read shapes and finiteness"
NUMPY_FLOAT64 = "a float64 numpy array becomes a float64 tensor without a dtype"
CPU_ONLY = (
    "the device differs only for base samples on another device than the CPU, where the "
    "library keeps every tensor"
)

LASSO_SCALE = (
    "scale = np.abs(target).max(initial=0.0) / max(float(diag.max(initial=0.0)), 1e-300) + 1e-300"
)
EMPTY_MAX = "initial only matters for an empty array (no node or no feature), never fitted"
TWO_D_LAST = "the tensor is 2-D: dimension 1 is dimension -1"
ONE_D_LAST = "the tensor is 1-D: unsqueeze(1) is unsqueeze(-1)"
FLOAT_WRITE_BACK = (
    "the check returns the value it was given (as a float or int of the same value): writing "
    "it back, or to another attribute, leaves the option's value the same"
)
PLACEHOLDERS = (
    "placeholders, overwritten in topological order before any is read; column 1 is missing "
    "only with a single action or node, which no causal-BO problem of the library has"
)
PASSED_BY_PROPOSE = "every caller passes it (propose passes the options' value)"
CHUNKS_ONLY = (
    "only the chunking of the batched evaluation changes (a memory cap): the values are the "
    "same (tested: batched equals looped, max_points 40 against the default)"
)

#: (key, original line) -> (class, reason): every surviving mutant of that line.
LINES: dict[tuple[str, str], tuple[str, str]] = {
    # ------------------------------------------------------------------ linsem
    ("linsem", "self.problem = problem"): (
        H,
        "the attribute is kept for callers; nothing in the library reads a LinSEM "
        "policy's .problem (it copies what it needs in __init__)",
    ),
    ("linsem", "x = self.plan.parent_values(feedback).reshape(slots.size, -1)"): (
        E,
        NEGATIVE_RESHAPE,
    ),
    ("linsem", "sweeps: int = 2,"): (H, SWEEPS),
    (
        "linsem",
        "def __init__(self, problem: LinearSEMProblem, mode_parents: bool = False) -> None:",
    ): (
        E,
        "every subclass passes mode_parents explicitly: the base's default is never read",
    ),
    ("linsem", "super().__init__(problem, mode_parents)"): (
        E,
        "None and the omitted default (False) are falsy like the False LinSEM-UCB passes",
    ),
    ("linsem", "self.plan = PropagationPlan.build(problem.dag, self.masks, problem.reward_node)"): (
        E,
        "without the reward node the plan holds every non-root node instead of the reward's "
        "ancestors: the same bounds and draws at the reward, more work",
    ),
    ("linsem", "self.parent_mask = np.repeat(union[:, :, None, :], 2, axis=2)"): (E, PADDING),
    ("linsem", "self.d = np.maximum([g.max_in_degree for g in graphs], 1)"): (
        H,
        "d enters only the paper's radius, which is used on the paper's non-negative model; "
        "no run uses it on stacked systems of different graphs",
    ),
    (
        "linsem",
        "self.parent_mask = np.swapaxes(per_mode.reshape(-1, *per_mode.shape[-3:]), 1, 2)",
    ): (E, NEGATIVE_RESHAPE),
    ("linsem", "x = x.reshape(slots.size, -1)"): (E, NEGATIVE_RESHAPE),
    ("linsem", "for seed, graph in zip(seeds, graphs, strict=True):"): (E, STRICT_ZIP),
    (
        "linsem",
        "return np.minimum(1.0, 1.0 / np.maximum(bonus, 1e-300)) / self.deviation_budget",
    ): (E, "for bonus < 1 both sides give min(1, .) = 1; for bonus >= 1 they are identical"),
    ("linsem", "self.variance * 0.5 * (gram_inv + np.swapaxes(gram_inv, -1, -2))"): (
        H,
        "V^-1 is symmetric up to rounding; (G + G) / 2 instead of (G + G^T) / 2 changes the "
        "Cholesky factor by rounding only (numpy's Cholesky reads one triangle)",
    ),
    # ------------------------------------------------------------------ propagation
    ("propagation", "masks = np.asarray(masks, dtype=bool)"): (E, DTYPE_BOOL_INPUT),
    ("propagation", "parent_index = np.full((len(nodes), width), n_nodes, dtype=np.intp)"): (
        E,
        DTYPE_INT,
    ),
    ("propagation", "slot_of = np.zeros((n_nodes + 1, masks.shape[0]), dtype=np.intp)"): (
        E,
        PADDING,
    ),
    ("propagation", "slot_of[: n_nodes + 1] = np.arange(n_nodes + 1)[:, None]"): (
        E,
        "slot_of has n_nodes + 1 rows: slicing to n_nodes + 2 selects the same rows",
    ),
    ("propagation", "next_slot = n_nodes + 1"): (
        E,
        "the value buffer gets one unused slot after the zero slot; every class slot moves "
        "by one consistently",
    ),
    ("propagation", 'order = np.argsort(masks[first, node], kind="stable")'): (
        E,
        "the order of classes within one mode only relabels the classes; every action's "
        "value is unchanged (numpy also accepts 'STABLE')",
    ),
    ("propagation", "first, inverse = first[order], rank[inverse.reshape(-1)]"): (
        E,
        "np.unique's inverse is already 1-D here: " + NO_OP_RESHAPE + "; " + NEGATIVE_RESHAPE,
    ),
    ("propagation", "nodes=np.asarray(nodes, dtype=np.intp),"): (E, DTYPE_INT),
    ("propagation", "offsets=np.asarray(offsets, dtype=np.intp),"): (E, DTYPE_INT),
    ("propagation", "padded = np.concatenate([x, np.zeros((*x.shape[:-1], 1))], axis=-1)"): (
        E,
        PADDING,
    ),
    ("propagation", "optimistic = beta > 0 and ellipsoid_inv is not None"): (
        E,
        "with beta = 0 the added bonus is 0 * sqrt(q) = 0 for the finite q >= 0 of an ellipsoid",
    ),
    (
        "propagation",
        "for mode, classes in ((0, slice(0, split)), (1, slice(split, None))):",
    ): (
        E,
        "slice(None, split) = slice(split) = slice(0, split); slice(0, None) also fills the "
        "interventional classes with mode 0, which the next iteration overwrites",
    ),
    ("propagation", "sweeps: int = 2,"): (H, SWEEPS),
    (
        "propagation",
        "columns = np.zeros((replicates, n_actions, n_nodes + 1, n_nodes + 1))",
    ): (E, PADDING),
    (
        "propagation",
        "system = eye - np.swapaxes(columns[..., :n_nodes, :n_nodes], -1, -2)",
    ): (E, "on the 4-D array axis +2 is axis -2"),
    (
        "propagation",
        "[inverse @ noise_mean, np.zeros((replicates, n_actions, 1))], axis=-1",
    ): (E, PADDING),
    (
        "propagation",
        "column = _support_maximiser(theta_k, inv_k, parent_means, beta * direction_sign)",
    ): (E, "direction_sign is +1 or -1, so beta * sign = beta / sign"),
    ("propagation", "sign = np.where(effect[..., node] >= 0, 1.0, -1.0)[..., None]"): (
        H,
        "differs only when a node's total effect on the target is exactly 0: the target's "
        "mean then does not depend on that column and either sign is an ascent step",
    ),
    # ------------------------------------------------------------------ discounted
    ("discounted", "self.pending += np.asarray(played, dtype=bool)"): (E, DTYPE_BOOL_INPUT),
    ("discounted", "played = np.asarray(played, dtype=bool)"): (E, DTYPE_BOOL_INPUT),
    ("discounted", "rewards = np.asarray(rewards, dtype=float)"): (E, DTYPE_FLOAT_INPUT),
    (
        "discounted",
        "tau = np.broadcast_to(np.asarray(tau, dtype=np.int64), played.shape[:2])",
    ): (E, "rounds are integers already; the age and the comparisons are the same"),
    ("discounted", "age = np.where(tau > 0, self.t - tau, 0)"): (
        E,
        "the age of an empty slot (tau <= 0) only reaches a weight that line 128 sets to 0",
    ),
    ("discounted", "discount = self._rows(self.gamma) ** age.astype(float)"): (
        E,
        "astype(None) is float64",
    ),
    ("discounted", "self.sums += (weight * np.where(played, rewards, 0.0)).sum(axis=1)"): (
        E,
        "weight is already 0 where the arm was not played",
    ),
    (
        "discounted",
        "return np.where(positive, self.sums / np.where(positive, self.counts, 1.0), 0.0)",
    ): (E, MASKED),
    ("discounted", "counts = self.counts + self.pending if self.count_pending else self.counts"): (
        E,
        "pending stays 0 unless count_pending",
    ),
    (
        "discounted",
        "return np.where(positive, scale / np.sqrt(np.where(positive, counts, 1.0)), np.inf)",
    ): (E, MASKED),
    # ------------------------------------------------------------------ semibandit
    ("semibandit", "rows = np.asarray(feedback.replicates, dtype=np.intp)"): (E, DTYPE_INT),
    ("semibandit", "counts = np.zeros(replicates, dtype=np.intp)"): (
        E,
        "float counts of whole numbers index and compare like integers",
    ),
    ("semibandit", "width = max(int(counts.max(initial=0)), 1)"): (
        E,
        "counts has one entry per replicate (never empty); the result is at least 1 anyway",
    ),
    ("semibandit", "n = np.shape(feedback.actions)[-1]"): (
        E,
        "the delayed actions are 2-D (K, N): axis +1 is axis -1",
    ),
    ("semibandit", "padded(inner.z, float),"): (E, "np.zeros(dtype=None) is float64"),
    ("semibandit", "padded(inner.y, float),"): (E, "np.zeros(dtype=None) is float64"),
    ("semibandit", "None if b is None else padded(b, float),"): (
        E,
        "np.zeros(dtype=None) is float64",
    ),
    (
        "semibandit",
        "seen = np.where(played, values, -np.inf).max(axis=(1, 2), initial=-np.inf)",
    ): (E, "the reduced axes (K >= 1, N >= 1) are never empty"),
    ("semibandit", "scale = np.where(self.scale > 0, self.scale, 1.0)[:, None, None]"): (
        E,
        "a scale <= 0 means every played value is <= 0: divided by 1 or 2 they clip to 0; "
        "unplayed entries are never read",
    ),
    (
        "semibandit",
        "self.scores(draws[:, 0]), self.super_arm_size, draws[:, 1], positive_only=False",
    ): (
        H,
        "CUCB's scores are > 0 from round 2 on (the bonus is positive) and CTS's Beta "
        "quantiles are > 0 unless its uniform is exactly 0 (probability 2^-53)",
    ),
    (
        "semibandit",
        "self.scores(draws[:, 0]), self.super_arm_size, draws[:, 1], positive_only=False | )",
    ): (H, "the default positive_only=True: as positive_only=True"),
    ("semibandit", "safe = np.where(seen, self.counts, 1.0)"): (E, MASKED),
    (
        "semibandit",
        "self.trials = uniform_stream([s.spawn(1)[0] for s in seeds], (self.n_arms,))",
    ): (E, "SeedSequence.spawn(2)[0] is the same child as spawn(1)[0]"),
    ("semibandit", "successes = rewards > self.trials.next()[:, None, :]"): (
        H,
        "differs only when a normalised reward equals its uniform draw exactly (probability "
        "0 for continuous rewards, 2^-53 for a reward of 0)",
    ),
    (
        "semibandit",
        "return top_s_mask(self.uniforms.next(), self.super_arm_size, positive_only=False)",
    ): (H, TIE_ZERO_UNIFORM),
    # ------------------------------------------------------------------ mutual_information
    ("mutual_information", "return np.where(scale > 0, scale, 1.0)"): (
        H,
        "only a constant column takes this branch; halving a constant shifts it, and KSG is "
        "translation invariant (up to the rounding of the added jitter)",
    ),
    ("mutual_information", "scaled += jitter * generator.standard_normal(values.shape)"): (
        H,
        "-= draws the same symmetric Gaussian jitter; jitter / z is still negligible noise "
        "(above 1e-6 with probability 8e-5 per value) that breaks ties",
    ),
    ("mutual_information", 'ordered, low, side="left" | )'): (
        E,
        "side='left' is searchsorted's default",
    ),
    (
        "mutual_information",
        "return np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, n - 1))]) - np.euler_gamma",
    ): (E, "a longer table: the entries read (m <= n - 1) are the same"),
    (
        "mutual_information",
        "if np.array_equal(index[:, 0], rows):  # the point itself comes first",
    ): (
        E,
        "only chooses the fast path; the general branch gives the same neighbours when every "
        "point comes first",
    ),
    ("mutual_information", "is_self[~is_self.any(axis=1), -1] = True"): (
        E,
        "a point missing from its own neighbour list has k + 1 neighbours all at distance 0 "
        "(ties with itself): dropping any one of them leaves the same distances",
    ),
    ("mutual_information", "x = np.asarray(x, dtype=float)"): (E, DTYPE_FLOAT_INPUT),
    ("mutual_information", "columns = np.asarray(columns, dtype=float)"): (E, DTYPE_FLOAT_INPUT),
    ("mutual_information", "y = np.asarray(y, dtype=float)"): (E, DTYPE_FLOAT_INPUT),
    ("mutual_information", "generator = as_generator(rng) if jitter > 0 else None"): (
        H,
        "with jitter = 0 the added noise is 0 * z = 0; only a Generator passed as rng is advanced",
    ),
    # ------------------------------------------------------------------ lasso
    ("lasso", "max_sweeps: int = 1000,"): (H, MAX_ITER),
    ("lasso", "gram = np.asarray(gram, dtype=float)"): (E, DTYPE_FLOAT_INPUT),
    ("lasso", "cross = np.asarray(cross, dtype=float)"): (E, DTYPE_FLOAT_INPUT),
    ("lasso", "n = gram.shape[-1]"): (E, "gram is square"),
    ("lasso", "lam = np.asarray(lam, dtype=float).reshape(-1)"): (
        E,
        DTYPE_FLOAT_INPUT + "; " + NEGATIVE_RESHAPE + "; a 0-d lam broadcasts like (1,)",
    ),
    ("lasso", "support = np.asarray(support, dtype=bool)"): (E, DTYPE_BOOL_INPUT),
    ("lasso", "a = np.where(support, np.maximum(np.asarray(start, dtype=float), 0.0), 0.0)"): (
        E,
        "np.maximum with 0.0 returns floats",
    ),
    ("lasso", "safe_diag = np.where(diag > 0, diag, 1.0)"): (
        E,
        "safe_diag only avoids 0/0 at zero pivots, whose entries the outer np.where fixes at "
        "0 (a division warning at most)",
    ),
    (
        "lasso",
        "free = support.T[None] & (diag > 0)[:, :, None]  # free[r, j, i]: row i may use column j",
    ): (
        E,
        "for a Gram matrix of data a zero pivot G[j, j] forces G[j, :] = 0 and C[j, :] = 0, "
        "so a freed entry updates to max(0, -lam/2) = 0",
    ),
    ("lasso", "delta = (new - old).reshape(-1)"): (E, NEGATIVE_RESHAPE),
    ("lasso", "if np.abs(a_t - before).max(initial=0.0) <= tol:"): (
        E,
        "the array is never empty",
    ),
    ("lasso", "y = np.asarray(y, dtype=float)"): (E, DTYPE_FLOAT_INPUT),
    ("lasso", "z = np.asarray(z, dtype=float)"): (E, DTYPE_FLOAT_INPUT),
    (
        "lasso",
        "weight = np.ones(y.shape[:2]) if received is None else np.asarray(received, dtype=float)",
    ): (E, "boolean weights multiply and sum like 0/1 floats"),
    ("lasso", "self.lam = np.broadcast_to(np.asarray(lam, dtype=float), (replicates,)).copy()"): (
        E,
        DTYPE_FLOAT_INPUT,
    ),
    # ------------------------------------------------------------------ ftrl
    ("ftrl", "played = np.zeros(observed.shape, dtype=bool)"): (
        E,
        "the mask is filled from the stored boolean super arms; float 0/1 entries select "
        "and weight exactly as booleans do",
    ),
    ("ftrl", "lo = np.where(f < 0, x, lo)"): (
        E,
        "at f = 0 the element is already done (|f| <= ftol) and keeps x",
    ),
    ("ftrl", "hi = np.where(f > 0, x, hi)"): (
        E,
        "at f = 0 the element is already done (|f| <= ftol) and keeps x",
    ),
    ("ftrl", "done = (np.abs(f) <= ftol) | (np.abs(step) <= tol * (1.0 + np.abs(x)))"): (
        H,
        "a stricter, looser or never-met stopping test of a bracketed Newton solve: the "
        "root moves by less than the solve's tolerance (1e-13), or iterations are spent",
    ),
    ("ftrl", "new = np.where((new >= lo) & (new <= hi), new, 0.5 * (lo + hi))"): (
        H,
        "a Newton step landing exactly on a bracket end is replaced by a bisection step; "
        "the solve converges to the same root",
    ),
    ("ftrl", "x = np.where(done, x, new)"): (
        H,
        "converged elements take one more Newton step of size below the tolerance",
    ),
    ("ftrl", "target >= upper0,"): (
        E,
        "at target = upper0 both branches give 0 ((target - upper0) / h = 0 = -2 log 1)",
    ),
    ("ftrl", "target >= lower0,"): (
        E,
        "at target = lower0 both branches give 0 ((target - lower0) / h = 0 = -2 log 1)",
    ),
    ("ftrl", "max_iter: int = 100,"): (H, MAX_ITER),
    ("ftrl", "losses = np.asarray(cum_losses, dtype=float)"): (E, DTYPE_FLOAT_INPUT),
    ("ftrl", "eta = np.broadcast_to(np.asarray(eta, dtype=float), (replicates,))[:, None]"): (
        E,
        DTYPE_FLOAT_INPUT,
    ),
    (
        "ftrl",
        "nu0 = 0.5 * (lo + hi) if start is None else np.asarray(start, dtype=float)[:, None] "
        "+ shift",
    ): (
        H,
        "another starting point of the bracketed Newton solve (clipped into the exact "
        "bracket): the same root, at most more iterations; start's dtype: " + DTYPE_FLOAT_INPUT,
    ),
    (
        "ftrl",
        "nu = _bracketed_newton(excess, lo, hi, nu0, tol, max_iter, ftol=tol * super_arm_size)",
    ): (
        H,
        "the residual test |m - sum x| <= ftol only stops the solve earlier; the step test "
        "(tol = 1e-13) still bounds the error",
    ),
    ("ftrl", "marginals = np.asarray(marginals, dtype=float)"): (E, DTYPE_FLOAT_INPUT),
    ("ftrl", "points = np.asarray(uniforms, dtype=float).reshape(replicates, 1) + steps"): (
        E,
        DTYPE_FLOAT_INPUT,
    ),
    (
        "ftrl",
        "offset = np.clip(np.maximum.accumulate(index - steps, axis=1), 0, n - super_arm_size)",
    ): (
        E,
        "index >= k for the point u + k because every marginal is <= 1, so the offsets are "
        "never negative",
    ),
    ("ftrl", "return np.where(played, losses / np.where(played, marginals, 1.0), 0.0)"): (
        E,
        MASKED,
    ),
    (
        "ftrl",
        "self.cum_losses, 1.0 / np.sqrt(self.t), self.super_arm_size, self.hybrid, start=self._nu",
    ): (
        H,
        "without the warm start the solve starts from the bracket's midpoint: the same "
        "marginals, more Newton iterations",
    ),
    (
        "ftrl",
        "self.cum_losses, 1.0 / np.sqrt(self.t), self.super_arm_size, self.hybrid, "
        "start=self._nu | )",
    ): (H, "as start=None: the same marginals, more Newton iterations"),
    (
        "ftrl",
        "observed = np.asarray(getattr(feedback.feedback, self.observe), dtype=float)",
    ): (E, DTYPE_FLOAT_INPUT),
    ("ftrl", "observed = np.asarray(getattr(feedback, self.observe), dtype=float)"): (
        E,
        DTYPE_FLOAT_INPUT,
    ),
    ("ftrl", "reward = np.clip(observed / np.where(scale > 0, scale, 1.0), 0.0, 1.0)"): (
        E,
        "a scale <= 0 means every observation so far is <= 0: divided by 1 or 2 it clips to 0",
    ),
    # ------------------------------------------------------------------ ndc_sem checks
    ("ndc_sem_synthetic_checks", "diff = end - start.reindex(end.index)"): (
        E,
        "pandas aligns the subtraction on the index anyway (reindex(None) is a copy)",
    ),
    ("ndc_sem_synthetic_checks", "return pd.concat(frames, ignore_index=True)"): (
        H,
        "only the row labels of the returned frame differ; every reader groups or filters "
        "by columns",
    ),
    (
        "ndc_sem_synthetic_checks",
        'return ratios.groupby(["delay", "algorithm", "period"], sort=False)["ratio"]',
    ): (
        H,
        "only the order of the groups; the claims look the means up by key",
    ),
    (
        "ndc_sem_synthetic_checks",
        'f"P{k}: {a:.2f} vs {b:.2f}" for k, a, b in zip(post, ndc, sem, strict=True)',
    ): (E, STRICT_ZIP),
    (
        "ndc_sem_synthetic_checks",
        "all(a > b for a, b in zip(ndc, sem, strict=True)),",
    ): (E, STRICT_ZIP),
    ("ndc_sem_covid_checks", 'masks["total"] = days["day"] > 0'): (
        E,
        "day records start at day 1 (day 0 rows are tuning records, filtered out before)",
    ),
    # ------------------------------------------------------------------ sem_ucb
    (
        "sem_ucb",
        "h[rng.choice(i, size=super_arm_size - 1, replace=False), i] = True",
    ): (E, "Generator.choice treats replace=None as False (same draws)"),
    ("sem_ucb", "DiscountedArmStatistics(max(sizes, default=1), 1, self.gamma, self.xi, 1)"): (
        E,
        "a throw-away object that only validates gamma and xi: scalars pass for any number "
        "of replicates, and N and s are not checked against them",
    ),
    ("sem_ucb", "rngs = [np.random.default_rng(s.spawn(1)[0]) for s in seeds]"): (
        E,
        "SeedSequence.spawn(2)[0] is the same child as spawn(1)[0]",
    ),
    (
        "sem_ucb",
        'scores, self.super_arm_size, ties, positive_only=self.structure == "cyclic"',
    ): (
        H,
        "differs only when some score w_hat E is <= 0: never on a DAG (A_hat >= 0 gives "
        "w_hat >= 1; E > 0 from round 2 with non-negative rewards), on a cyclic graph only "
        "when A_hat's spectral radius reaches 1",
    ),
    (
        "sem_ucb",
        'scores, self.super_arm_size, ties, positive_only=self.structure == "cyclic" | )',
    ): (H, "the default positive_only=True: on a DAG the scores are positive (see above)"),
    (
        "sem_ucb",
        "self.arms.receive(np.where(received, arrived.rounds, 0), arrived.actions, arrived.z)",
    ): (E, "an empty slot's padded super arm is all False: round 1 there adds weight 0"),
    (
        "sem_ucb",
        "self.graph.feed(self.lasso, arrived.rounds, received, arrived.y, exogenous)",
    ): (E, "LassoGraph.feed does not read the rounds (the validated learner does)"),
    # ------------------------------------------------------------------ robust_lcb_checks
    (
        "robust_lcb_checks",
        "rewards = make_environment(horizon=1, deviation_budget=0).expected_rewards",
    ): (E, "the nominal expected rewards do not depend on the horizon or on C"),
    (
        "robust_lcb_checks",
        'summary = summarise(final(df), by=["deviation_budget", "algorithm"])',
    ): (E, REPORT_GROUPING),
    (
        "robust_lcb_checks",
        "return float((curve[t_end] - curve[t_start]) / max(t_end - t_start, 1))",
    ): (
        H,
        "differs only if the last quarter spans exactly one round (checkpoints are >= T/200 apart)",
    ),
    ("robust_lcb_checks", "checks += ["): (E, "checks is still empty there"),
    # ------------------------------------------------------------------ taylor_moments
    (
        "taylor_moments",
        "powers = np.where(played, z, 0.0)[:, None, :] ** np.arange(self.degree + 1)[:, None]",
    ): (E, "the powers of unplayed arms are zeroed by the np.where on the next line"),
    ("taylor_moments", "shifted = -np.asarray(centres, dtype=float)"): (E, DTYPE_FLOAT_INPUT),
    ("taylor_moments", "counts = np.asarray(counts, dtype=float)"): (E, DTYPE_FLOAT_INPUT),
    ("taylor_moments", 'with np.errstate(divide="ignore"):'): (E, ERRSTATE),
    ("taylor_moments", "for lo2, hi2 in zip(low[1:], high[1:], strict=True):"): (
        E,
        STRICT_ZIP,
    ),
    ("taylor_moments", "self.base = degree + 1"): (
        E,
        "exponents are <= q, so any base > q encodes a monomial uniquely; the table and its "
        "look-ups use the same base",
    ),
    (
        "taylor_moments",
        "self.codes = exponents @ self.base ** np.arange(n_arms, dtype=np.int64)",
    ): (E, DTYPE_INT),
    ("taylor_moments", "keep = min(degree, n_arms)"): (
        E,
        "keeping every column adds factors of order 0, whose box is exactly [1, 1]: the "
        "interval products are unchanged",
    ),
    (
        "taylor_moments",
        'support = np.argsort(-exponents, axis=1, kind="stable")[:, :keep]  # non-zero first',
    ): (
        E,
        "a monomial has at most q <= keep non-zero exponents, so any sort keeps all of them; "
        "which zero-order columns fill up is irrelevant (factor 1); axis=-1 is axis 1 of the "
        "2-D table",
    ),
    (
        "taylor_moments",
        "self.orders = np.take_along_axis(exponents, support, axis=1)  # 0 pads: factor 1",
    ): (E, "numpy's default axis=-1 is axis 1 of the 2-D table"),
    ("taylor_moments", "powers = self.base ** members.astype(np.int64)  # (A, k)"): (
        E,
        "the codes are whole numbers below 2^53 ((q + 1)^N, 5^20 ~ 1e14 for the paper's "
        "largest N = 20, q = 4): float64 codes are exact and search the same rows",
    ),
    (
        "taylor_moments",
        "return np.where(coefficients >= 0, coefficients * addend_high, coefficients * "
        "addend_low).sum(",
    ): (E, "a zero coefficient gives 0 at either end"),
    (
        "taylor_moments",
        "corners = np.array(list(itertools.product((0, 1), repeat=degree * k)), dtype=bool)",
    ): (E, "0/1 integers (or 0/2) select in np.where as booleans do"),
    ("taylor_moments", "corners = corners.reshape(-1, degree, k)"): (E, NEGATIVE_RESHAPE),
    (
        "taylor_moments",
        "scale = 4.0 * np.sqrt((super_arm_size + 1) * log_t) * max(int(t) - 1, 0) ** 0.25",
    ): (E, "max(t - 1, .) only differs for t <= 1, where ln(max(t - 1, 1)) = 0 zeroes the scale"),
    # ------------------------------------------------------------------ jets
    (
        "jets",
        "def _pair_products(self, a: np.ndarray, b: np.ndarray, min_left: int = 1) -> np.ndarray:",
    ): (E, "the only caller (powers) passes min_left"),
    ("jets", "out = np.zeros(np.broadcast_shapes(a.shape, b.shape))"): (
        E,
        "a and b always have the same shape (powers of one jet)",
    ),
    (
        "jets",
        "out[..., targets] = np.add.reduceat(a[..., left] * b[..., right], starts, axis=-1)",
    ): (E, "the products are 2-D (super arms, pairs): axis +1 is axis -1"),
    ("jets", "out.append(self._pair_products(out[-1], h, min_left=n - 1))"): (
        E,
        "a smaller min_left only adds products with monomials of h^(n-1) below degree n - 1, "
        "which are 0 (the pruning is for speed)",
    ),
    ("jets", "upper_triangular: bool = True,"): (
        H,
        "every caller passes upper_triangular; on a DAG the cyclic path gives the same jets "
        "to 1e-12 (tested), only slower",
    ),
    ("jets", "max_iter: int = 100,"): (H, MAX_ITER),
    ("jets", "return [()] if total == 0 else []"): (
        E,
        "with no variables the only exponent vector is (): listed under total 1 instead of 0 "
        "it is the same single constant row",
    ),
    ("jets", "weights = np.asarray(weights, dtype=float)"): (E, DTYPE_FLOAT_INPUT),
    ("jets", "block = slice(start, start + JET_CHUNK)"): (
        E,
        "slice(None, .) recomputes the earlier super arms with the same values; slice(start, "
        "None) does the rest in one block (memory only)",
    ),
    ("jets", "y[:, :, 0] = constant.reshape(-1, n)"): (E, NEGATIVE_RESHAPE),
    ("jets", "right = inputs.reshape(-1, n, size)[:, :, columns].copy()"): (E, NEGATIVE_RESHAPE),
    (
        "jets",
        "y[:, :, columns] = np.linalg.solve(system, shaped).reshape(-1, n, columns.size)",
    ): (E, NEGATIVE_RESHAPE),
    ("jets", "for d in range(1, degree + 1):"): (
        E,
        "there are no monomials of degree q + 1: that iteration breaks at once",
    ),
    # ------------------------------------------------------------------ excbo
    ("excbo", "fixed_eta = torch.zeros(1, self.n_nodes, dtype=exogenous.dtype)"): (
        E,
        "a float32 eta of exactly 0 and 1 promotes exactly to float64 in the network",
    ),
    ("excbo", "hallucinate=False,"): (E, "None is falsy like False"),
    ("excbo", "recovered, components=self.components, random_state=seed"): (
        H,
        "only EM's initialisations are unseeded; the best of 3 EM runs reaches the same "
        "mixture (to 1e-7, tested step by step) on the policy data; a multimodal likelihood "
        "could make two runs differ",
    ),
    ("excbo", "return network, torch.stack(exogenous, dim=-1)"): (
        E,
        "the stacked samples are 1-D: dim +1 is dim -1",
    ),
    ("excbo", "decoder_inputs = torch.cat([inputs[i], recovered.unsqueeze(-1)], dim=-1)"): (
        E,
        "recovered is 1-D: unsqueeze(1) is unsqueeze(-1), and dim +1 of the 2-D inputs is -1",
    ),
    # ------------------------------------------------------------------ bo_baselines
    ("bo_baselines", "hallucinate=False,"): (E, "None is falsy like False"),
    ("bo_baselines", "targets = torch.as_tensor(self.observed_objective, dtype=actions.dtype)"): (
        E,
        NUMPY_FLOAT64,
    ),
    ("bo_baselines", "everything = NodeSpec(tuple(range(self.problem.n_actions)), ())"): (
        E,
        "parents None and () are both falsy: the node has no parents either way",
    ),
    ("bo_baselines", "fixed_eta=torch.ones(1, 1, dtype=actions.dtype),"): (
        E,
        "a float32 1 is exact; ones(1) and ones(1, 2) expand to the same eta of the one node "
        "(only eta[:, 0] is read)",
    ),
    ("bo_baselines", "generator = torch.Generator().manual_seed(seed)"): (E, GLOBAL_SEEDED),
    ("bo_baselines", "self.samples, self.n_nodes, generator=generator, dtype=DTYPE"): (
        E,
        GLOBAL_SEEDED,
    ),
    (
        "bo_baselines",
        "sampler = SobolQMCNormalSampler(sample_shape=torch.Size([MC_SAMPLES]), seed=seed)",
    ): (
        E,
        "without a seed BoTorch draws the Sobol scrambling seed from torch's global generator, "
        "which suggest() has seeded with the proposal's seed: deterministic all the same",
    ),
    # ------------------------------------------------------------------ exogenous
    ("exogenous", "w = torch.as_tensor(inputs, dtype=DTYPE)"): (E, AS_FLOAT64),
    ("exogenous", "x = torch.as_tensor(targets, dtype=DTYPE)"): (E, AS_FLOAT64),
    ("exogenous", "w = w.unsqueeze(-1)"): (E, "w is 1-D there: unsqueeze(1) is unsqueeze(-1)"),
    ("exogenous", "if x.ndim != 1 or w.ndim != 2 or w.shape[0] != x.shape[0]:"): (
        E,
        "node_gp(w, x) checks the same shapes and raises the same message",
    ),
    (
        "exogenous",
        'raise ValueError("exogenous recovery needs finite inputs and targets (found NaN or inf)")',
    ): (H, MESSAGE_DECORATED),
    ("exogenous", 'raise ValueError("the recovered noise must be finite (found NaN or inf)")'): (
        H,
        MESSAGE_DECORATED,
    ),
    (
        "exogenous",
        "index = torch.searchsorted(cum, uniforms.to(DTYPE).contiguous(), right=True)",
    ): (
        E,
        "torch.searchsorted compares float32 uniforms with the float64 cumulative weights in "
        "float64 (checked: 0.5f against 0.5 + 1e-9 picks component 0), and float32 -> float64 "
        "is exact",
    ),
    ("exogenous", "random_state = int(random_state.integers(2**31))"): (
        H,
        "another (or no) EM seed reaches the same mixture on the tested data (EM from 3 "
        "initialisations, best kept); only a multimodal likelihood could tell the seeds apart",
    ),
    (
        "exogenous",
        "log_squared = torch.log(squared.clamp_min(LOG_FLOOR * float(squared.mean())))",
    ): (
        H,
        "only moves the floor of residuals below 1e-8 mean(r^2) (a guard against log 0); "
        "no residual of the tested or simulated data comes near it",
    ),
    ("exogenous", "log_variance = log_model.posterior(inputs).mean.squeeze(-1)"): (
        E,
        "the posterior mean is (n, 1): axis +1 is axis -1",
    ),
    (
        "exogenous",
        "z = (np.asarray(points, dtype=float)[..., None] - self.means) / self.stds",
    ): (E, DTYPE_FLOAT_INPUT),
    ("exogenous", "device = uniforms.device"): (H, CPU_ONLY),
    ("exogenous", "cum = torch.as_tensor(cumulative, dtype=DTYPE, device=device)"): (
        H,
        NUMPY_FLOAT64 + "; " + CPU_ONLY,
    ),
    ("exogenous", "means = torch.as_tensor(self.means, dtype=DTYPE, device=device)"): (
        H,
        NUMPY_FLOAT64 + "; " + CPU_ONLY,
    ),
    ("exogenous", "stds = torch.as_tensor(self.stds, dtype=DTYPE, device=device)"): (
        H,
        NUMPY_FLOAT64 + "; " + CPU_ONLY,
    ),
    (
        "exogenous",
        "return means[index] + stds[index] * torch.as_tensor(normals, dtype=DTYPE, device=device)",
    ): (
        H,
        "float32 normals promote exactly to float64 in the product with the float64 stds; "
        "without device= a torch tensor keeps its own device, the uniforms' one when both "
        "base samples share it as documented",
    ),
    (
        "exogenous",
        "return self.means[index] + self.stds[index] * np.asarray(normals, dtype=float)",
    ): (E, DTYPE_FLOAT_INPUT),
    ("exogenous", "random_state: int | np.random.Generator | None = 0,"): (
        H,
        "the default only fixes EM's initialisations; another fixed seed is as deterministic "
        "(every caller in the library passes its own seed)",
    ),
    ("exogenous", "float"): (E, "astype(None) is float64"),
    (
        "exogenous",
        'k, covariance_type="full", reg_covar=reg_covar, n_init=n_init, random_state=random_state',
    ): (
        H,
        "covariance_type='full' is GaussianMixture's default (equivalent); dropping n_init (1 "
        "start instead of 3) can only miss a higher likelihood, and every start converges to "
        "the same optimum on the tested data",
    ),
    # ------------------------------------------------------------------ dictionary_lasso
    ("dictionary_lasso", "return values.reshape(*values.shape[:-2], -1)"): (E, NEGATIVE_RESHAPE),
    ("dictionary_lasso", "w = np.where(support, start, 0.0)"): (
        H,
        "without the warm start coordinate descent starts from 0 and stops within LASSO_TOL of "
        "the same convex minimum (same edges on the tested data, then refitted); only the "
        "number of sweeps changes",
    ),
    ("dictionary_lasso", "safe = np.where(diag > 0, diag, 1.0)"): (
        E,
        "safe is only read where diag > 0: the np.where on the new weight zeroes every column "
        "with G_pp = 0 whatever was divided there",
    ),
    (
        "dictionary_lasso",
        "columns = [p for p in range(gram.shape[1]) if support[:, p].any()]",
    ): (E, "the Gram matrices are square (R, P, P): shape[2] is shape[1]"),
    ("dictionary_lasso", "new = np.where(free & (diag[:, p, None] > 0), new, 0.0)"): (
        E,
        "G_pp = 0 only if feature p is 0 in every round; then c_p = 0 and row p of G is 0, so "
        "rho = 0 and the soft threshold gives 0 as the mask does",
    ),
    ("dictionary_lasso", "if largest <= LASSO_TOL * scale:"): (
        H,
        "< and <= differ only on an exact floating-point tie of the largest move with the "
        "tolerance (one more sweep then)",
    ),
    ("dictionary_lasso", "self.counts = np.zeros(replicates, dtype=np.int64)"): (
        E,
        "the counts are only read through np.maximum(counts, 1) in float arithmetic: float64 "
        "counts of whole rounds give the same numbers",
    ),
    (
        "dictionary_lasso",
        "rows = np.flatnonzero(np.ones(len(self.counts), bool) if which is None else which)",
    ): (E, "float ones are as non-zero as True: flatnonzero gives every row either way"),
    ("dictionary_lasso", "t = np.maximum(self.counts[rows], 1).astype(float)"): (
        E,
        "astype(None) is float64",
    ),
    ("dictionary_lasso", "low = np.log(self.lam[rows]) - 4.0"): (
        H,
        "a wider bisection bracket (e^5 instead of e^4 around the last lam, not documented) "
        "still ends at a lam whose graph has the edge count closest to the target (the same "
        "graphs in the tests); only the lam found within that graph's range moves",
    ),
    ("dictionary_lasso", "high = np.log(self.lam[rows]) + 4.0"): (
        H,
        "a wider bisection bracket (e^5 instead of e^4 around the last lam, not documented) "
        "still ends at a lam whose graph has the edge count closest to the target (the same "
        "graphs in the tests); only the lam found within that graph's range moves",
    ),
    ("dictionary_lasso", "better = gap < best_gap"): (
        H,
        "differs only on a tie of |count - target| between two bisection steps: the later "
        "instead of the earlier fit is kept, both 'closest to the target' as documented",
    ),
    ("dictionary_lasso", "too_many = count > target"): (
        E,
        "the branches differ only once count == target: that fit (gap 0) is already kept and "
        "no later step can beat a gap of 0, so the returned fit and lam are the same",
    ),
    ("dictionary_lasso", 'ridge = 1e-8 * (np.einsum("rpp->r", gram) / gram.shape[1] + 1.0)'): (
        H,
        "the ridge is a 1e-8 stabiliser of the least-squares refit: another tiny size (or a "
        "square Gram's shape[2]) moves the refitted weights by about 1e-8 relative; only a "
        "kept Gram block singular to within 1e-8 could tell",
    ),
    ("dictionary_lasso", "system = gram[r][np.ix_(cols, cols)] + ridge[r] * np.eye(cols.size)"): (
        H,
        "subtracting instead of adding the 1e-8 stabiliser moves the refitted weights by about "
        "1e-8 relative; only a kept Gram block singular to within 1e-8 could tell",
    ),
    # ------------------------------------------------------------------ pooled_testing
    ("pooled_testing", "p = np.asarray(prevalence, dtype=float)"): (
        H,
        "only integer input keeps an integer dtype, and the only valid integers are 0 and 1; "
        "every caller uses the values in float arithmetic",
    ),
    ("pooled_testing", 'raise ValueError("prevalence must be finite")'): (H, MESSAGE_DECORATED),
    ("pooled_testing", 'raise ValueError("group sizes must be finite")'): (H, MESSAGE_DECORATED),
    (
        "pooled_testing",
        'raise ValueError(f"group sizes must be integers >= 1, got {g.ravel()[:5].tolist()}")',
    ): (H, "the message shows the first six instead of five offending values"),
    ("pooled_testing", "r = np.asarray(r, dtype=float)[..., None]"): (E, DTYPE_FLOAT_INPUT),
    ("pooled_testing", "if value <= 0.0 or value >= 1.0:"): (
        E,
        "f(0) = 0 and f(1) = 1 exactly (checked): Brent's method returns an end of the bracket "
        "where f - v is exactly 0, so 0 and 1 map to themselves either way",
    ),
    ("pooled_testing", "1.0,"): (
        H,
        "Brent's method on [0, 2] brackets the same single root (f(r) > 1 for r in (1, 2]) and "
        "stops within the same 1e-15 tolerance: only a threshold within 1e-15 of r could flip",
    ),
    ("pooled_testing", "u = _child(seed, _Streams.SIZES).random((replications, households))"): (
        H,
        "float64 instead of float32 uniforms, or the seed's own stream instead of this one's: "
        "other draws from the same law, still independent of the other streams (twice the memory "
        "for float64)",
    ),
    ("pooled_testing", "sizes += u >= bound"): (
        H,
        "a float64 uniform exactly equal to a cumulative size probability (probability about "
        "2^-53) is the only case where >= and > differ",
    ),
    ("pooled_testing", "members = tuple(np.flatnonzero(flat > j) for j in range(7))"): (
        E,
        "members[7] (households of more than 7 people) is empty: one more empty block adds nothing",
    ),
    ("pooled_testing", "n = int(flat.sum(dtype=np.int64))"): (
        E,
        "numpy sums small integers (int8, int16, bool) in int64 by default: the same counts",
    ),
    ("pooled_testing", "primary = _child(seed, _Streams.PRIMARY).random(n, dtype=np.float32)"): (
        H,
        "float64 instead of float32 uniforms, or the seed's own stream instead of this one's: "
        "other draws from the same law, still independent of the other streams (twice the memory "
        "for float64)",
    ),
    ("pooled_testing", "exposed = _child(seed, _Streams.SECONDARY).random(n, dtype=np.float32)"): (
        H,
        "float64 instead of float32 uniforms, or the seed's own stream instead of this one's: "
        "other draws from the same law, still independent of the other streams (twice the memory "
        "for float64)",
    ),
    ("pooled_testing", "exposed = exposed < SECONDARY_ATTACK_RATE"): (
        H,
        "a float32 uniform exactly equal to the bound (probability about 2^-24 per draw) is the "
        "only case where < and <= differ",
    ),
    (
        "pooled_testing",
        "swab = _child(seed, _Streams.SWAB).random(n, dtype=np.float32) >= SWAB_FNR",
    ): (
        H,
        "float64 instead of float32 uniforms, or the seed's own stream instead of this one's: "
        "other draws from the same law, still independent of the other streams (twice the memory "
        "for float64); > instead of >=: a float32 uniform exactly equal to the bound (probability "
        "about 2^-24 per draw) is the only case where < and <= differ",
    ),
    ("pooled_testing", "test = _child(seed, _Streams.INDIVIDUAL).random(n, dtype=np.float32)"): (
        H,
        "float64 instead of float32 uniforms, or the seed's own stream instead of this one's: "
        "other draws from the same law, still independent of the other streams (twice the memory "
        "for float64)",
    ),
    (
        "pooled_testing",
        "for block, households_j in zip(_blocks(members), members[1:], strict=True):",
    ): (E, STRICT_ZIP),
    ("pooled_testing", "out = person[: self.sizes.size].astype(np.int8)"): (
        E,
        "the arrays hold the same whole numbers as float64; every use compares them or sums them "
        "as int64",
    ),
    (
        "pooled_testing",
        "for block, households_j in zip(_blocks(self.members), self.members[1:], strict=True):",
    ): (E, STRICT_ZIP),
    ("pooled_testing", "infected = self.threshold < r"): (
        H,
        "only a float32 threshold exactly equal to r differs: at r = 0 a threshold of exactly 0 "
        "(probability 2^-24 per person) would count as infected",
    ),
    (
        "pooled_testing",
        "positive = np.where(infected & self.swab, self.test >= DILUTION_BASE, self.test < "
        "POOL_FPR)",
    ): (
        H,
        "a float32 uniform exactly equal to the bound (probability about 2^-24 per draw) is the "
        "only case where < and <= differ",
    ),
    ("pooled_testing", "missed = np.where(quarantined, 0, i_h).sum(axis=1, dtype=np.int64)"): (
        E,
        "numpy sums small integers (int8, int16, bool) in int64 by default: the same counts",
    ),
    (
        "pooled_testing",
        "false_q = np.where(quarantined, self.sizes - i_h, 0).sum(axis=1, dtype=np.int64)",
    ): (E, "numpy sums small integers (int8, int16, bool) in int64 by default: the same counts"),
    ("pooled_testing", "row_n = present.sum(axis=-1, dtype=np.int16)"): (
        E,
        "the same counts (at most the array side) in int64 instead of int16",
    ),
    ("pooled_testing", "col_n = present.sum(axis=-2, dtype=np.int16)"): (
        E,
        "the same counts (at most the array side) in int64 instead of int16; present is 4-D, so "
        "axis +2 is axis -2",
    ),
    ("pooled_testing", "(population.replications, 2, *row_n.shape[1:]), dtype=np.float32"): (
        H,
        "float64 instead of float32 pool uniforms, or a third unused set drawn with them: other "
        "draws from the same law",
    ),
    ("pooled_testing", "(population.replications, 2, *row_n.shape[1:]), dtype=np.float32 | )"): (
        H,
        "float64 instead of float32 pool uniforms, or a third unused set drawn with them: other "
        "draws from the same law",
    ),
    (
        "pooled_testing",
        "cols = self.positive(k_pad.sum(axis=-2), self.col_n, self.col_u, self.dilution_scale[1])",
    ): (E, "k_pad is 4-D: axis +2 is axis -2"),
    (
        "pooled_testing",
        "caught = np.where(quarantined, i_pad, 0).sum(axis=(1, 2, 3), dtype=np.int64)",
    ): (E, "numpy sums small integers (int8, int16, bool) in int64 by default: the same counts"),
    (
        "pooled_testing",
        "people_q = np.where(quarantined, self.sizes, 0).sum(axis=(1, 2, 3), dtype=np.int64)",
    ): (E, "numpy sums small integers (int8, int16, bool) in int64 by default: the same counts"),
    ("pooled_testing", "infected = i_h.sum(axis=1, dtype=np.int64)"): (
        E,
        "numpy sums small integers (int8, int16, bool) in int64 by default: the same counts",
    ),
    ("pooled_testing", "out = np.zeros((reps, arrays * per_array), dtype=values.dtype)"): (
        E,
        "the arrays hold the same whole numbers as float64; every use compares them or sums them "
        "as int64",
    ),
    ("pooled_testing", "seed: int | np.random.SeedSequence = 0,"): (
        H,
        "the default seed only matters to direct callers; test_properties passes its own, and "
        "another default is as deterministic",
    ),
    (
        "pooled_testing",
        "counts = np.empty((6, len(unique_p), len(unique_m), replications), dtype=np.int64)",
    ): (
        H,
        "the counts are the same whole numbers as float64 (far below 2^53) and give the same "
        "ratios; only their dtype differs",
    ),
    ("pooled_testing", "n_infected = i_h.sum(axis=1, dtype=np.int64)"): (
        E,
        "numpy sums small integers (int8, int16, bool) in int64 by default: the same counts",
    ),
    (
        "pooled_testing",
        "selected = counts[:, p_index.reshape(p.shape), m_index.reshape(p.shape)]",
    ): (
        E,
        "np.unique's inverse already has the input's shape (NumPy 2.4, checked): reshape(None) "
        "keeps it",
    ),
    ("pooled_testing", 'raise ValueError("the prevalence grid must start at 0 and end at 1")'): (
        H,
        MESSAGE_DECORATED,
    ),
    ("pooled_testing", 'raise ValueError("the prevalence grid must be increasing")'): (
        H,
        MESSAGE_DECORATED,
    ),
    ("pooled_testing", "self._flat = values.reshape(-1, 3)"): (E, NEGATIVE_RESHAPE),
    ("pooled_testing", "seed: int = 0,"): (
        H,
        "the default seed only matters to direct callers; test_properties_table passes its own, "
        "and another default is as deterministic",
    ),
    (
        "pooled_testing",
        "p, g = np.broadcast_arrays(np.asarray(prevalence, dtype=float), group_size)",
    ): (
        E,
        "the prevalences are only used in float arithmetic with the float grid (integer input "
        "gives the same numbers)",
    ),
    ("pooled_testing", 'i = np.searchsorted(self.grid, p_flat, side="right") - 1'): (
        H,
        "at a grid point the value comes from the interval on its left with weight 1 instead of "
        "the one on its right with weight 0: the same value up to one rounding of a + (b - a)",
    ),
    ("pooled_testing", "np.clip(i, 0, len(self.grid) - 2, out=i)"): (
        H,
        "only a prevalence below 0 could give a negative interval index; checked() refuses it and "
        "no caller passes one",
    ),
    ("pooled_testing", "grid = tuple(float(p) for p in np.asarray(grid, dtype=float).ravel())"): (
        E,
        "every value is converted by float() right after",
    ),
    (
        "pooled_testing",
        "digest = hashlib.sha256(json.dumps([TABLE_VERSION, *key]).encode()).hexdigest()[:16]",
    ): (H, "a longer hash prefix only renames the cache file: an existing cache is rebuilt once"),
    # ------------------------------------------------------------------ train_delays_data
    (
        "train_delays_data",
        "for i, (name, short) in enumerate(zip(self.names, self.short_names, strict=True)):",
    ): (E, STRICT_ZIP),
    ("train_delays_data", "for i, j in zip(*np.nonzero(self.adjacency), strict=True):"): (
        E,
        STRICT_ZIP,
    ),
    (
        "train_delays_data",
        'absent = [n for n, e in zip(kept["name"], kept["eva_nr"], strict=True) '
        "if e not in with_rows]",
    ): (E, STRICT_ZIP),
    (
        "train_delays_data",
        'rows = table[table["eva_nr"].isin(station_index)].reset_index(drop=True)',
    ): (
        H,
        "only a table that already has a column named 'index' would be refused (it cannot be "
        "inserted twice); nothing reads the added column",
    ),
    ("train_delays_data", 'arrival = rows["arrival_delay_m"].to_numpy(dtype=float)'): (
        E,
        "the delay columns are float64 already (_read_table converts them)",
    ),
    ("train_delays_data", 'departure = rows["depature_delay_m"].to_numpy(dtype=float)'): (
        E,
        "the delay columns are float64 already (_read_table converts them)",
    ),
    ("train_delays_data", "trains = np.zeros(shape, dtype=int)"): (
        H,
        "the same whole numbers of trains as float64; only the dtype differs",
    ),
    (
        "train_delays_data",
        "termini = tuple(name for name, flag in zip(names, has_through, strict=True) if not flag)",
    ): (E, STRICT_ZIP),
    (
        "train_delays_data",
        "stay[:, ~has_through] = np.where(np.isfinite(endo[:, ~has_through]), 0.0, np.nan)",
    ): (
        E,
        "numpy converts the object array's None to NaN when it is assigned into the float array",
    ),
    ("train_delays_data", 'eva_nr=kept["eva_nr"].to_numpy(dtype=np.int64),'): (
        E,
        "_read_stations has converted eva_nr to int64 already",
    ),
    ("train_delays_data", 'lat=kept["lat"].to_numpy(dtype=float),'): (
        H,
        "only a coordinate column of whole numbers keeps its integer dtype (the same values)",
    ),
    ("train_delays_data", 'long=kept["long"].to_numpy(dtype=float),'): (
        H,
        "only a coordinate column of whole numbers keeps its integer dtype (the same values)",
    ),
    ("train_delays_data", 'distance_km=kept["distance_km"].to_numpy(dtype=float),'): (
        H,
        "only a distance column of whole numbers keeps its integer dtype (the same values)",
    ),
    (
        "train_delays_data",
        "positions=np.array([listed.index(h) for h in present], dtype=np.int64),",
    ): (E, DTYPE_INT),
    (
        "train_delays_data",
        'return pd.read_csv(path, dtype={"hour_file": str, "path": str, "name": str})',
    ): (
        H,
        "only a path or name column in which every value looks like a number would be read as "
        "numbers (station names and stop lists are words)",
    ),
    ("train_delays_data", 'frame["eva_nr"] = frame["eva_nr"].astype(np.int64)'): (
        E,
        "to_numeric already gave the station numbers; a number written 1.0 looks up the same rows "
        "(equal hashes) and eva_nr is converted to int64 on output",
    ),
    ("train_delays_data", 'frame["eva_nr"] = eva.astype(np.int64)'): (
        E,
        "to_numeric already gave the station numbers; a number written 1.0 looks up the same rows "
        "(equal hashes) and eva_nr is converted to int64 on output",
    ),
    ("train_delays_data", "frame[column] = values.astype(float)"): (E, "astype(None) is float64"),
    (
        "train_delays_data",
        'listed = dict(zip(stations["eva_nr"], stations["name"], strict=True))',
    ): (E, STRICT_ZIP),
    ("train_delays_data", "counted = pd.Series(lines, dtype=object).value_counts(sort=False)"): (
        E,
        "sort=None is falsy like False; a list of strings makes an object Series anyway (an empty "
        "list has no duplicates either way)",
    ),
    ("train_delays_data", "return _TABLE_II_RANK.get(name, len(TABLE_II) + position)"): (
        E,
        "pandas sorts the missing ranks last in their original order, as the ranks len(TABLE_II) "
        "+ position do",
    ),
    ("train_delays_data", "counts = np.zeros(shape, dtype=int)"): (
        E,
        "the counts are only compared with 0 and otherwise discarded: float64 counts give the "
        "same cells",
    ),
    ("train_delays_data", "return np.where(counts > 0, sums / counts, np.nan), counts"): (
        E,
        "a cell without values has sum 0 and count 0: 0/0 is NaN, which the np.where gives anyway",
    ),
    ("train_delays_data", "for path, j in zip(paths, targets, strict=True):"): (E, STRICT_ZIP),
    ("train_delays_data", "return np.where(count > 0, total / count, np.nan)"): (
        E,
        "a station without values has total 0 and count 0: 0/0 is NaN, which the np.where gives "
        "anyway",
    ),
    ("train_delays_data", "scale = np.where(np.isfinite(scale) & (scale > 0), scale, 1.0)"): (
        E,
        "a constant signal centres to 0 whatever it is divided by, and NaN stays NaN",
    ),
    ("jets", "if degree and moving.size:"): (
        E,
        "'or' differs only for degree 0, which reward_jets never reaches (its input jets need "
        "degree >= 1), or when no super arm moves, where the loop adds nothing",
    ),
    # ------------------------------------------------------------------ ssem_ucb
    ("ssem_ucb", "weight = np.where(high >= low, high - low, 0.0)"): (
        E,
        "high = low gives the weight high - low = 0 either way; high < low only when no "
        "internal UCB of the replicate is finite, and every score is then -inf (outer np.where)",
    ),
    (
        "ssem_ucb",
        "grid = low + np.linspace(0.0, 1.0, SLOPE_POINTS)[:, None] * (high - low)  # (G, N)",
    ): (
        H,
        "numpy's default of 50 grid points instead of 33: the same slope bound on a finer grid "
        "(differs by the grid's discretisation only)",
    ),
    ("ssem_ucb", "slopes = dictionary.derivatives(grid, 1)[:, 1]  # (K, G, N)"): (
        E,
        "derivatives(grid, n) stacks the orders 0..n: index 1 is the first derivative for "
        "every n >= 1 (n = 2 computes one more order, unused)",
    ),
    ("ssem_ucb", "rho = float(np.abs(np.linalg.eigvals(bound)).max(initial=0.0))"): (H, EMPTY_MAX),
    ("ssem_ucb", "if rho < max_contraction:"): (
        H,
        "differs only when the spectral radius equals max_contraction exactly (a tie of "
        "measure zero), where shrinking by a factor of 1 changes nothing",
    ),
    (
        "ssem_ucb",
        "dictionary=self.dictionary, derivatives=self.derivatives, fd_step=self.fd_step",
    ): (E, "this Expansion is built only to check fd_step; its dictionary is not read there"),
    ("ssem_ucb", 'known = bool(getattr(problem, "upper_triangular", False))'): (
        E,
        "bool(None) is False",
    ),
    **{
        ("ssem_ucb", f"self.{name} = np.zeros(replicates, dtype=np.int64)"): (
            H,
            "a float64 counter adds and compares exactly like an int64 one below 2^53; only "
            "its dtype shows (the diagnostic counters print 3.0 instead of 3)",
        )
        for name in ("last_fit", "residual_count", "refits", "divergent_refits", "shrunk_refits")
    },
    (
        "ssem_ucb",
        "which = np.array(which, dtype=bool)  # not a view of ``stale``, which is cleared below",
    ): (E, DTYPE_BOOL_INPUT + "; np.array copies either way"),
    ("ssem_ucb", "for group, (jets, _) in zip(self.groups, expanded, strict=True):"): (
        E,
        STRICT_ZIP,
    ),
    ("ssem_ucb", "jets[failed] = np.nan"): (E, "numpy stores None in a float array as NaN"),
    ("ssem_ucb", "diverged |= ~np.isfinite(jets).all(axis=(1, 2))"): (
        H,
        "changes only the diagnostic count divergent_refits, and only for a replicate whose "
        "jets overflow for super arms of one size but not for the last size (failed fits are "
        "NaN in every group and stay counted)",
    ),
    ("ssem_ucb", "self.stale[which] = False"): (E, "numpy stores None in a boolean array as False"),
    (
        "ssem_ucb",
        "return expand(weights, centres=centres), np.zeros(len(weights), dtype=bool)",
    ): (E, "the flags are only read through np.any(..., axis=0), which returns booleans"),
    ("ssem_ucb", "failed = np.zeros(len(weights), dtype=bool)"): (
        E,
        "the flags are only read through np.any(..., axis=0), which returns booleans",
    ),
    ("ssem_ucb", "played = np.asarray(actions, dtype=bool)"): (E, DTYPE_BOOL_INPUT),
    (
        "ssem_ucb",
        "z, y = np.asarray(feedback.z, dtype=float), np.asarray(feedback.y, dtype=float)",
    ): (E, "the environments' feedback is already float64 (a copy is taken below either way)"),
    ("ssem_ucb", "if self.t >= len(self.blocks):"): (
        E,
        "the only extra residual, of the last block round, is discarded by the first refit in "
        "the next round (every replicate starts stale, and a refit resets the statistics)",
    ),
    ("ssem_ucb", "count = np.maximum(self.residual_count, 1)"): (
        E,
        "the mean is read only where residual_count >= MIN_RESIDUALS = 5, where max(count, 1) "
        "= max(count, 2)",
    ),
    (
        "ssem_ucb",
        "residual > self.options.residual_factor * self.residual_sum / count",
    ): (
        H,
        "differs only for a residual exactly equal to the threshold (a tie of measure zero)",
    ),
    ("ssem_ucb", "if z is None or y is None:"): (
        H,
        "callers pass both z and y or neither (documented); 'and' differs only for one alone",
    ),
    ("ssem_ucb", "sem = ChordSEM(weights, self.graph.dictionary, max_iter=REBUILD_SWEEPS)"): (
        H,
        MAX_ITER + " (the default 500 instead of 100 sweeps: a slowly contracting fit gets a "
        "rebuilt error instead of NaN)",
    ),
    # ------------------------------------------------------------------ train_delay_fit
    ("train_delay_fit", "for i, j in zip(*np.nonzero(kept), strict=True):"): (E, STRICT_ZIP),
    ("train_delay_fit", "for i, j in zip(*np.nonzero(amp > 0), strict=True):"): (E, STRICT_ZIP),
    ("train_delay_fit", "if np.any(np.diag(np.asarray(data.adjacency, dtype=bool))):"): (
        E,
        "np.any counts a nonzero diagonal entry of any dtype as True, as the bool conversion does",
    ),
    (
        "train_delay_fit",
        "exo, endo = np.asarray(data.exogenous, float), np.asarray(data.endogenous, float)",
    ): (
        E,
        "the arrays are only read by np.isfinite, which gives the same mask for any numeric dtype",
    ),
    (
        "train_delay_fit",
        "if not np.array_equal(np.isfinite(exo), np.asarray(data.exogenous_observed, bool)):",
    ): (E, DTYPE_BOOL_INPUT + " (array_equal compares True with 1)"),
    (
        "train_delay_fit",
        "if not np.array_equal(np.isfinite(endo), np.asarray(data.observed, bool)):",
    ): (E, DTYPE_BOOL_INPUT + " (array_equal compares True with 1)"),
    ("train_delay_fit", "points = np.linspace(low, high, 513)"): (
        E,
        "|f'| of a linear, cubic or zero-true tanh basis is largest at an end of the interval or "
        "at the tanh's inflection point (appended): any evenly spaced grid with both ends gives "
        "the same maximum",
    ),
    ("train_delay_fit", "return float(np.abs(basis.derivatives(points, 1)[1]).max())"): (
        E,
        "derivatives up to order 2 still hold the first derivative at index 1",
    ),
    ("train_delay_fit", "return np.arange(count) * folds // max(count, 1)"): (
        E,
        "folds are only drawn for count >= min_hours >= folds >= 2 (TrainDelayFitOptions checks "
        "it): max(count, 2) = count",
    ),
    (
        "train_delay_fit",
        "alternatives = range(count) if k is not None else [int(choice[0])]",
    ): (
        E,
        "for k = None every alternative keeps the current choice: the extra rows repeat the "
        "first one's error and only [0] is read",
    ),
    ("train_delay_fit", "changed = False"): (
        E,
        "a sweep that changes nothing leaves the choice as it was, so further sweeps change "
        "nothing either (None is falsy like False)",
    ),
    ("train_delay_fit", "exo_all = np.asarray(data.exogenous, dtype=float)"): (
        E,
        "the signals are only used in float arithmetic (nanmax - nanmin, / scale, isfinite): "
        "any numeric dtype gives the same numbers",
    ),
    (
        "train_delay_fit",
        "endo = np.where(mask[:, None], np.asarray(data.endogenous, dtype=float), np.nan) / scale",
    ): (E, "np.where with np.nan and the division by scale give float64 for any numeric input"),
    (
        "train_delay_fit",
        "return _Signals(exo, endo, filled, np.asarray(data.adjacency, dtype=bool), data_box)",
    ): (
        E,
        "the candidate edges are only read by np.flatnonzero, which finds the same entries in a "
        "0/1 array of any dtype",
    ),
    ("train_delay_fit", "n = signals.adjacency.shape[0]"): (E, "the adjacency is square"),
    ("train_delay_fit", "n = choice.shape[0]"): (E, "the choices are square (N, N)"),
    ("train_delay_fit", "n = weights.shape[0]"): (E, "the weights are (N, N, K)"),
    ("train_delay_fit", "choice = np.full((n, n), -1, dtype=int)"): (
        E,
        "an int fill gives int64 anyway; the 'no candidate' marker is only read through "
        "choice >= 0 and choice[amplitude > 0] (never such an edge), so -2 marks it as well",
    ),
    ("train_delay_fit", "np.ones((1, target.size), dtype=bool),"): (
        E,
        "box_least_squares turns the row mask into float weights first: float ones are the same",
    ),
    (
        "train_delay_fit",
        "if options.max_contraction is not None and raw_rho > options.max_contraction:",
    ): (E, "at raw_rho == max_contraction the shrink max_contraction / raw_rho is exactly 1"),
    ("train_delay_fit", 'family_of = ("linear", "cubic") + ("tanh",) * (len(bases) - 2)'): (
        E,
        "extra trailing labels are never indexed (every choice is below len(bases))",
    ),
    ("train_delay_fit", "return float(np.abs(np.linalg.eigvals(matrix)).max(initial=0.0))"): (
        E,
        "M is (N, N) with N >= 1, never empty, and |eigenvalues| >= 0: initial=0 changes no max",
    ),
    ("train_delay_fit", "for _ in range(5):"): (
        E,
        "the extreme solutions do not depend on the box: the second pass finds the grown box "
        "unchanged (or rho >= 1) and returns, so a sixth pass is never reached",
    ),
    ("train_delay_fit", "return box, _slope_matrix(weights, dictionary, box)"): (
        E,
        "unreachable: the loop returns by its second pass (the extremes do not depend on the box)",
    ),
    ("train_delay_fit", "u = np.asarray(inputs, dtype=float)[None]"): (
        E,
        "u enters only u + F(y), float64 with the float64 weights: integer or float32 inputs "
        "convert exactly and give the same iterates",
    ),
    ("train_delay_fit", "changes.append(float(np.abs(new - y).max(initial=0.0)))"): (
        H,
        "initial only matters for inputs without any sample (an empty maximum), never passed",
    ),
    # ------------------------------------------------------------------ gp_network
    (
        "gp_network",
        "parts.append(scaler(parent_values) if scaler is not None else parent_values)",
    ): (
        E,
        "a node with parents always has a scaler (training_inputs fits one): None is never "
        "passed with parent values",
    ),
    (
        "gp_network",
        "squared = (x.square().sum(-1, keepdim=True) - 2 * x @ y.T + y.square().sum(-1))"
        ".clamp_min(0)",
    ): (E, TWO_D_LAST),
    ("gp_network", "return 2.0 * (x * weighted.sum(-1, keepdim=True) - weighted @ y), None"): (
        E,
        TWO_D_LAST,
    ),
    ("gp_network", "model.requires_grad_(False)"): (
        E,
        "the cached posterior copies the hyper-parameters out as tensors detached from the "
        "model: whether the model's own parameters track gradients changes no value",
    ),
    ("gp_network", "residual = (prior.targets - prior.mean).unsqueeze(-1)"): (E, ONE_D_LAST),
    ("gp_network", "identity = torch.eye(len(cholesky), dtype=cholesky.dtype)"): (
        E,
        "solve_triangular promotes a float32 identity (exact) to the factor's float64",
    ),
    ("gp_network", "torch.cat([alpha, whitener.T], dim=-1),"): (E, TWO_D_LAST),
    ("gp_network", "explained = self.outputscale**2 * product[:, 1:].square().sum(dim=-1)"): (
        E,
        TWO_D_LAST,
    ),
    ("gp_network", 'object.__setattr__(self, "beta", float(self.beta))'): (E, FLOAT_WRITE_BACK),
    ("gp_network", "beta: float = 0.0,"): (
        E,
        "the default is read only with eta, and every caller that passes eta passes beta",
    ),
    ("gp_network", "expanded = actions.unsqueeze(1).expand(batch, count, actions.shape[-1])"): (
        E,
        TWO_D_LAST,
    ),
    ("gp_network", "values: list[torch.Tensor] = [expanded[..., 0]] * len(self.specs)"): (
        H,
        PLACEHOLDERS,
    ),
    ("gp_network", "u = exogenous[:, i] if exogenous is not None else w.new_zeros(count)"): (
        E,
        "networks with exogenous inputs (EXCBO's) are always propagated with exogenous "
        "samples: the other branch is never reached",
    ),
    ("gp_network", "value = value + beta * eta[:, i].unsqueeze(-1) * std"): (E, ONE_D_LAST),
    ("gp_network", "eta = None"): (
        H,
        "reached only by an Optimism with hallucinate=False and no fixed_eta, which no policy "
        "builds (GP-UCB and EXCBO's sample variant fix eta)",
    ),
    ("gp_network", "return self.objective(values).mean(dim=-1)"): (E, TWO_D_LAST),
    # ------------------------------------------------------------------ nmcbo
    ("nmcbo", "index = torch.as_tensor(rows, dtype=torch.long)"): (
        E,
        "rows are integer sequences or tensors: as_tensor gives int64 without a dtype",
    ),
    ("nmcbo", "return 2.0 * torch.sigmoid(out + shift.unsqueeze(-1)) - 1.0"): (E, ONE_D_LAST),
    ("nmcbo", "maxiter: int = 1000,"): (
        E,
        "training always builds the rule with maxiter=max_steps: the default is never read",
    ),
    ("nmcbo", "reference = ExpMAStoppingCriterion(maxiter, minimize, n_window, eta, rel_tol)"): (
        E,
        "only the reference's weights are read, and they depend on n_window and eta alone",
    ),
    (
        "nmcbo",
        "window = torch.cat([self.window[rows, 1:], values.unsqueeze(-1).to(DTYPE)], dim=-1)",
    ): (
        E,
        "values are a float64 1-D tensor (to(None) keeps it) and the window is 2-D: "
        "unsqueeze(1) is unsqueeze(-1) and dim 1 is dim -1",
    ),
    ("nmcbo", "weights = self.weights.to(window)"): (
        H,
        "BoTorch's weights stay float32, about 1e-7 relative from float64: a stop decision "
        "flips only when the relative change lies that close to rel_tol",
    ),
    ("nmcbo", "previous = (window[:, :-1] * weights).sum(dim=-1)"): (E, TWO_D_LAST),
    ("nmcbo", "current = (window[:, 1:] * weights).sum(dim=-1)"): (E, TWO_D_LAST),
    ("nmcbo", "return (change if self.minimize else -change) < self.rel_tol"): (
        H,
        "differs only when the relative change equals rel_tol exactly (probability zero)",
    ),
    ("nmcbo", "expanded = actions.unsqueeze(1).expand(count, samples, actions.shape[-1])"): (
        E,
        TWO_D_LAST,
    ),
    ("nmcbo", "values: list[torch.Tensor] = [noise[:, 0]] * len(self.network.specs)"): (
        H,
        PLACEHOLDERS,
    ),
    ("nmcbo", "return self.objective(self.values(params, noise)).mean(dim=-1)"): (E, TWO_D_LAST),
    ("nmcbo", "lr: float = 1e-3,"): (E, PASSED_BY_PROPOSE),
    ("nmcbo", 'stopping: str = "expma",'): (E, PASSED_BY_PROPOSE),
    ("nmcbo", "max_steps, batch = noise.shape[0], noise.shape[1]"): (E, CHUNKS_ONLY),
    ("nmcbo", "steps = torch.zeros(count, dtype=torch.long)"): (
        E,
        "float zeros count the same integers (compared by value; propose discards the counts)",
    ),
    ("nmcbo", "chunk = max(1, max_points // batch)"): (E, CHUNKS_ONLY),
    ("nmcbo", "for name, grad in zip(names, grads, strict=True):"): (E, STRICT_ZIP),
    ("nmcbo", 'object.__setattr__(self, "lr", positive("lr", self.lr))'): (E, FLOAT_WRITE_BACK),
    (
        "nmcbo",
        'object.__setattr__(self, "batch_size", optional(count, "batch_size", self.batch_size))',
    ): (E, FLOAT_WRITE_BACK),
    ("nmcbo", "options = replace(options, batch_size=32 if problem.noise_std > 1e-3 else 2)"): (
        H,
        "differs only at a noise standard deviation of exactly 1e-3",
    ),
    ("nmcbo", "options.max_points, | )"): (E, CHUNKS_ONLY),
    ("nmcbo", "scores = hallucination.score(trained, selection, options.max_points)"): (
        E,
        CHUNKS_ONLY,
    ),
}

#: (key, original line, mutated line) -> (class, reason): single mutants of a line whose
#: other mutants are killed or classified differently.
SURVIVORS: dict[tuple[str, str, str], tuple[str, str]] = {
    (
        "nmcbo",
        'rule = ExpMAStopping(count, maxiter=max_steps) if stopping == "expma" else None',
        'rule = ExpMAStopping(count, maxiter=None) if stopping == "expma" else None',
    ): (E, "the loop stops after max_steps steps anyway: the rule's cap is never the first"),
    (
        "nmcbo",
        'rule = ExpMAStopping(count, maxiter=max_steps) if stopping == "expma" else None',
        'rule = ExpMAStopping(count, ) if stopping == "expma" else None',
    ): (
        H,
        "the rule's default cap (1000, the package's and our max_steps) differs only when "
        "max_steps exceeds 1000",
    ),
    (
        "train_delays_data",
        'text = path.read_text(encoding="utf-8")',
        "text = path.read_text(encoding=None)",
    ): (
        H,
        "only a locale whose default encoding is not UTF-8 would read the hour lists differently",
    ),
    (
        "train_delays_data",
        'text = path.read_text(encoding="utf-8")',
        'text = path.read_text(encoding="UTF-8")',
    ): (E, "codec names are case-insensitive: UTF-8 is utf-8"),
    ("pooled_testing", "rtol=4 * np.finfo(float).eps, | )", ")"): (
        E,
        "without rtol brentq uses its default, 4 * float64 eps: the same tolerance",
    ),
    ("pooled_testing", "rtol=4 * np.finfo(float).eps,", "rtol=5 * np.finfo(float).eps,"): (
        H,
        "a tolerance of 5 instead of 4 float64 eps: only a threshold within 1e-15 of r could flip",
    ),
    ("pooled_testing", "rtol=4 * np.finfo(float).eps,", "rtol=4 * np.finfo(None).eps,"): (
        E,
        "np.finfo(None) is float64's (deprecated since NumPy 1.25, still the same eps)",
    ),
    ("pooled_testing", "return (u < p) & (n > 0)", "return (u <= p) & (n > 0)"): (
        H,
        "a float32 uniform exactly equal to the bound (probability about 2^-24 per draw) is the "
        "only case where < and <= differ",
    ),
    ("pooled_testing", "return (u < p) & (n > 0)", "return (u < p) & (n >= 0)"): (
        E,
        "an empty pool (n = 0) can only meet padded cells, which hold no household and no "
        "infection: its result changes no count",
    ),
    (
        "dictionary_lasso",
        LASSO_SCALE,
        LASSO_SCALE.replace(") + 1e-300", ") - 1e-300"),
    ): (
        E,
        "+-1e-300 only matters when every cross term is 0: the weights then stay 0 and a "
        "negative scale merely runs every sweep on them",
    ),
    (
        "dictionary_lasso",
        LASSO_SCALE,
        LASSO_SCALE.replace("target).max(initial=0.0", "target).max(initial=None"),
    ): (
        H,
        EMPTY_MAX,
    ),
    (
        "dictionary_lasso",
        LASSO_SCALE,
        LASSO_SCALE.replace("diag.max(initial=0.0", "diag.max(initial=None"),
    ): (
        H,
        EMPTY_MAX,
    ),
    **{
        ("pooled_testing", "u = _child(population.seed, _Streams.POOLS, side).random(", m): (
            H,
            "the pools' uniforms come from another child stream of the same seed (same law, "
            "still independent of the other streams): only the particular draws change",
        )
        for m in (
            "u = _child(population.seed, side).random(",
            "u = _child(population.seed, _Streams.POOLS, ).random(",
        )
    },
    (
        "dictionary_lasso",
        "return (self.edge_norms(coefficients, rows) > self.edge_threshold).sum(axis=(1, 2))",
        "return (self.edge_norms(coefficients, rows) >= self.edge_threshold).sum(axis=(1, 2))",
    ): (H, "differs only for an edge size exactly equal to the threshold (a tie of measure zero)"),
    (
        "bo_baselines",
        "raise ValueError(\"noise='known' needs a problem that states its noise_variance\")",
        "raise ValueError(\"XXnoise='known' needs a problem that states its noise_varianceXX\")",
    ): (H, MESSAGE_DECORATED),
    (
        "bo_baselines",
        'self.beta, self.samples = non_negative("beta", beta), count("samples", samples)',
        'self.beta, self.samples = non_negative("XXbetaXX", beta), count("samples", samples)',
    ): (H, "the error message names the option XXbetaXX: " + MESSAGE_DECORATED),
    (
        "jets",
        "for start in range(0, members.shape[0], JET_CHUNK):",
        "for start in range(0, members.shape[0], ):",
    ): (
        E,
        "a step of 1 makes the blocks overlap: later blocks recompute the same super arms' "
        "jets (same values, more time)",
    ),
    (
        "train_delay_fit",
        "if m != choice[k] and trial[m] < best * (1 - options.min_improvement):",
        "if m != choice[k] and trial[m] <= best * (1 - options.min_improvement):",
    ): (
        H,
        "differs only for a CV error exactly at the threshold: a tie of measure zero for "
        "min_improvement > 0 (the default); at 0 it can only relabel an edge whose every "
        "family has amplitude 0 (a removed edge)",
    ),
    (
        "train_delay_fit",
        "lows = np.minimum(np.nanmin(np.where(np.isfinite(endo), endo, 0.0), axis=0), 0.0)",
        "lows = np.minimum(np.nanmin(np.where(np.isfinite(endo), endo, 1.0), axis=0), 0.0)",
    ): (
        E,
        "the minimum is joined with 0 right after: filling missing hours with 1 instead of 0 "
        "can only raise a minimum that the join brings back to 0",
    ),
    (
        "train_delay_fit",
        "return intercepts, residual_sd, float(np.sqrt(squares / max(total, 1)))",
        "return intercepts, residual_sd, float(np.sqrt(squares / max(total, 2)))",
    ): (
        E,
        "total >= 1 (the fitting hours hold an exogenous value), and with total = 1 the one "
        "centred residual is 0: squares is 0 either way",
    ),
    (
        "train_delay_fit",
        "if _spectral_radius(slopes) >= 1:",
        "if _spectral_radius(slopes) > 1:",
    ): (
        H,
        "differs only at rho(M) == 1.0 exactly (a linear cycle clipped to slope 1), where "
        "I - W is singular, Newton's method raises and the data's range is kept as well",
    ),
    ("train_delay_fit", "if changes[-1] < 1e-13:", "if changes[-1] <= 1e-13:"): (
        H,
        "differs only for a change of exactly 1e-13 (a tie of measure zero)",
    ),
    (
        "train_delay_fit",
        "usable = [c for c in changes if c >= 1e-13]",
        "usable = [c for c in changes if c > 1e-13]",
    ): (H, "differs only for a change of exactly 1e-13 (a tie of measure zero)"),
    (
        "train_delay_fit",
        "empty_intercepts = np.where(counts > 0, np.nansum(diff, axis=0) / np.maximum(counts, 1), "
        "0.0)",
        "empty_intercepts = np.where(counts >= 0, np.nansum(diff, axis=0) / np.maximum(counts, 1), "
        "0.0)",
    ): (
        E,
        "a station without training values has nansum 0 and count 0: 0 / max(0, 1) = 0, the "
        "value np.where gives it anyway",
    ),
}


def classify(key: str, original: str, mutated: str) -> tuple[str, str] | None:
    """``(class, reason)`` of a surviving mutant, or ``None`` when it is not classified."""
    found = SURVIVORS.get((key, original, mutated)) or LINES.get((key, original))
    if found:
        return found
    for key_pattern, before, after, cls, reason in RULES:
        if (
            re.fullmatch(key_pattern, key)
            and re.search(before, original)
            and re.search(after, mutated)
        ):
            return cls, reason
    return None
