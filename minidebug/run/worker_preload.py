"""Imported ahead in the process the batch's workers are forked from: what an episode needs, once."""

from ..agents import load_agent  # noqa: F401
from ..core.budget import DEFAULT_ENCODING, get_encoding
from ..core.make import make  # noqa: F401
from ..core.trajectory import TrajectoryWriter  # noqa: F401
from ..runner.pool import WarmPool  # noqa: F401
from ..tasks.task import load_task  # noqa: F401
from .episode import run_episode  # noqa: F401

get_encoding(DEFAULT_ENCODING)
