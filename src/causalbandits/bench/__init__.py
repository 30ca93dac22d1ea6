"""The benchmark: problem families and suites, policies' declared capabilities, ask/tell
entrants, the runner with its budgets, the leaderboard and its report
(``causalbandits bench``)."""
