"""A frozen copy of `GraphAccumulator` as it was before the issue 15 speed-up (commit f1e48bd).

It is the oracle of tests/core/test_merge_oracle.py: the current accumulator must give the same
output, byte for byte, on thousands of random inputs. Do not change it, other than to follow a
documented change of the merge rules.
"""
