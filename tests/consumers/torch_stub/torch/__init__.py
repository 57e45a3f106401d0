"""Stand-in for torch, for scripts/profile_episodes only.

tinker-cookbook's renderers module (which its Harbor reward code imports) imports torch at module
level for training code the reward never calls; this lets the reward code load without a 2 GB
install. Nothing here computes anything.
"""


class Tensor:
    pass


class dtype:
    pass
