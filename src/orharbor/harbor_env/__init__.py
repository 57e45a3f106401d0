"""orharbor's Harbor environment on bubblewrap (``-e orharbor.harbor_env:BubblewrapEnvironment``)."""

from orharbor.harbor_env.environment import BubblewrapEnvironment

__all__ = ["BubblewrapEnvironment"]
