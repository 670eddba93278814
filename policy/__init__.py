"""The policy point: the one package that answers "what may this user run?".

Every statement passes here before anything reaches Spark, the filesystem or the JVM: its kind by the one rule
`decide.RULES` holds for it (a kind without one is refused), against the user's ownership and grants (`rules`,
`grants`); the text Spark would run against an allow-list applied to Spark's own parsed plan (`spark_plans`); the
analysed plan of every query against what no user may run (`spark_plans`); every path a user names against the
allowed roots (`paths`); and every setting against the session-safe list (`settings`). `Policy` (in `policy`) holds
the checks, `decide` is the one decision per statement; deny by default.
"""

from sluicegate.policy.errors import PolicyError
from sluicegate.policy.policy import Policy, Principal, SecuritySettings

__all__ = ["Policy", "PolicyError", "Principal", "SecuritySettings"]
