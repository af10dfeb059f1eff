"""Many envs at once from asyncio (as RL trainers run rollouts), and construction from a plain dict."""

import asyncio
import threading

import minidebug
from minidebug.agents.oracle import OracleAgent
from tests.conftest import processes_left


async def rollout(spec):
    env = minidebug.make(**spec)
    try:
        obs, info = await env.areset(seed=0)
        agent = OracleAgent()
        agent.start(env, obs, info)
        done, reward = False, 0.0
        while not done:
            obs, reward, terminated, truncated, info = await env.astep(agent.act(obs, info))
            done = terminated or truncated
        return reward
    finally:
        await env.aclose()


def test_eight_episodes_concurrently(cache_dir):
    tasks = ["sum_tree", "late_handlers", "report_stats", "off_by_one"] * 2
    specs = [{"task": task, "max_steps": 20, "cache_dir": cache_dir} for task in tasks]

    async def main():
        return await asyncio.gather(*(rollout(spec) for spec in specs))

    assert asyncio.run(main()) == [1.0] * 8
    assert not processes_left()


def test_one_env_shared_by_threads_is_serialised(make_env, calc_task):
    env = make_env(calc_task, max_steps=1000)
    env.reset()
    seen = []

    def worker():
        for _ in range(25):
            seen.append(env.step({"name": "view", "arguments": {"path": "calc.py"}})[4]["step"])

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(seen) == list(range(1, 101))
