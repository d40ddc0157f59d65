"""The knowledge miner: a deep agent that finds, enriches, validates and publishes assets."""
