"""Merge many tool-result graphs: the seed's pairwise merge vs networkx vs GraphAccumulator.

Input: 20 overlapping tool results of 50k links each (1M links), generated with a fixed seed,
one at a time between merge calls (untimed), the way tool calls arrive during a chat turn. Half
of each result's links come from a shared pool, so links repeat across results with new evidence;
some results write `ncbigene:` for `NCBIGene:`; some declare HGNC nodes equivalent to NCBIGene.

- pairwise: a faithful Python port of seed 000's `mergeKnowledgeGraphs`, applied cumulatively
  (`merged = merge(merged, result)`), so each tool call costs O(accumulated graph).
- networkx: one MultiDiGraph per result (edge key = label), then `compose_all`; the time
  includes building the graphs.
- index: the seed's own rules (first node wins; links keyed by source|target|label; evidence
  unioned) kept in dicts across calls, as the brief's "incremental index" anchor, with the
  garbage collector paused during each call as the accumulator does, and the young objects
  each call made collected before it returns, as `add` collects its own. It applies none of the
  accumulator's rules (validation, CURIE normalisation, equivalent ids, property conflicts,
  provenance) and stores the input dicts as they are, so it bounds what a pure-Python
  incremental merge gains here.
- accumulator: `GraphAccumulator.add(result)` per result.

The merged graph is then serialised as the artifact's JSON content (seed 003), by both the
baseline and the accumulator. Each contender runs in its own subprocess, so its peak memory
(ru_maxrss) is its own. The step test then adds fresh 5k-link results to the 1M-link state:
p50/p99 for the accumulator, a few repetitions for the baseline.

Run: .venv/bin/python benchmarks/merge_bench.py [--quick]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

import orjson

SEED = 20240601
Index = tuple[dict[str, Any], dict[tuple[str, str, str], Any]]
PREDICATES = ("associated_with", "interacts_with", "treats", "causes", "expressed_in")


# -- the seed's algorithm (seed 000), ported line by line ----------------------------------------


def merge_knowledge_graphs(graph1: dict[str, Any], graph2: dict[str, Any]) -> dict[str, Any]:
    node_map: dict[str, Any] = {}
    link_map: dict[str, Any] = {}
    for node in graph1["nodes"]:
        node_map[node["id"]] = node
    for node in graph2["nodes"]:
        if node["id"] not in node_map:
            node_map[node["id"]] = node
    for link in graph1["links"]:
        link_key = f"{link['source']}|{link['target']}|{link.get('label') or ''}"
        link_map[link_key] = link
    for link in graph2["links"]:
        link_key = f"{link['source']}|{link['target']}|{link.get('label') or ''}"
        if link_key not in link_map:
            link_map[link_key] = link
        else:
            existing_link = link_map[link_key]
            # JavaScript: `if (link.evidence && existingLink.evidence)` -- arrays are truthy.
            if link.get("evidence") is not None and existing_link.get("evidence") is not None:
                evidence_set = dict.fromkeys(existing_link["evidence"])
                for item in link["evidence"]:
                    evidence_set[item] = None
                existing_link["evidence"] = list(evidence_set)
    return {"nodes": list(node_map.values()), "links": list(link_map.values())}


# -- input ----------------------------------------------------------------------------------------


class Universe:
    """Entities with power-law popularity (a few hub genes, as in biomedical KGs) and a pool of
    shared links that every tool result draws half its links from."""

    def __init__(self, links_per_result: int) -> None:
        scale = max(links_per_result // 1000, 1)
        self.genes = [f"NCBIGene:{n}" for n in range(1, 600 * scale + 1)]
        self.objects = [f"MONDO:{n:07d}" for n in range(1, 400 * scale + 1)]
        self.objects += [f"CHEBI:{n}" for n in range(1, 200 * scale + 1)]
        self.rng = random.Random(SEED)
        self.gene_weights = _power_law(len(self.genes))
        self.object_weights = _power_law(len(self.objects))
        self.pool = self._random_links(4 * links_per_result)

    def _random_links(self, count: int) -> list[tuple[str, str, str]]:
        rng = self.rng
        genes = rng.choices(self.genes, cum_weights=self.gene_weights, k=count)
        objects = rng.choices(self.objects, cum_weights=self.object_weights, k=count)
        return [
            (gene, rng.choice(PREDICATES), other)
            for gene, other in zip(genes, objects, strict=True)
        ]

    def result(self, links: int) -> dict[str, Any]:
        """One tool result's graph, as parsed from its artifact's JSON."""
        rng = self.rng
        triples = rng.sample(self.pool, links // 2)
        triples += self._random_links(links - len(triples))
        lower_prefix = rng.random() < 0.15  # some tools write `ncbigene:`
        nodes: dict[str, dict[str, Any]] = {}
        out_links = []
        for gene, label, other in triples:
            gene_id = gene.lower() if lower_prefix else gene
            for node_id in (gene_id, other):
                if node_id not in nodes:
                    nodes[node_id] = {"id": node_id, "name": f"entity {node_id}", "group": 1}
            evidence = [f"PMID:{rng.randrange(1, 35_000_000)}" for _ in range(rng.randrange(3))]
            out_links.append(
                {"source": gene_id, "target": other, "label": label, "evidence": evidence}
            )
        for gene in rng.sample(self.genes, len(self.genes) // 200):
            hgnc = f"HGNC:{gene.split(':')[1]}"
            nodes[hgnc] = {"id": hgnc, "name": f"entity {gene}", "equivalent_ids": [gene]}
        return {"nodes": list(nodes.values()), "links": out_links}


def _power_law(size: int, exponent: float = 0.8) -> list[float]:
    """Cumulative weights: the entity of rank r is drawn with probability ~ r ** -exponent."""
    return list(accumulate((rank + 1) ** -exponent for rank in range(size)))


def rss_now_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# -- contenders (each runs in its own process) ---------------------------------------------------


def run_pairwise(universe: Universe, sizes: Sizes) -> dict[str, Any]:
    elapsed = cpu = 0.0
    merged: dict[str, Any] | None = None
    for _ in range(sizes.results):
        graph = universe.result(sizes.links)
        tick, cpu_tick = time.perf_counter(), time.process_time()
        merged = graph if merged is None else merge_knowledge_graphs(merged, graph)
        elapsed += time.perf_counter() - tick
        cpu += time.process_time() - cpu_tick
    assert merged is not None
    tick, cpu_tick = time.perf_counter(), time.process_time()
    artifact = orjson.dumps(merged)
    serialise, serialise_cpu = time.perf_counter() - tick, time.process_time() - cpu_tick
    nodes, links = len(merged["nodes"]), len(merged["links"])
    steps = []
    for _ in range(sizes.baseline_steps):
        graph = universe.result(sizes.step_links)
        tick, cpu_tick = time.perf_counter(), time.process_time()
        merged = merge_knowledge_graphs(merged, graph)
        steps.append((time.perf_counter() - tick, time.process_time() - cpu_tick))
    return {"merge": elapsed, "cpu": cpu, "serialise": serialise, "serialise_cpu": serialise_cpu,
            "nodes": nodes, "links": links, "bytes": len(artifact), "steps": steps}  # fmt: skip


def merge_into_index(index: Index, graph: dict[str, Any]) -> float:
    """The seed's merge rules applied to maps kept between calls: O(size of `graph`).

    The cyclic garbage collector is paused during the call, as `GraphAccumulator.add` pauses
    it: left on, it rescans the growing index and more than doubles the time. Once resumed, it
    collects the young objects the call made before the call returns. `add` pays for that
    collection of its own objects inside the call (its first allocation after resuming the
    collector sets it off), so the index pays for its own too, instead of leaving it to
    whatever the process runs next. Returns the seconds that collection took.
    """
    gc.disable()
    try:
        _merge_into_index(index, graph)
    finally:
        gc.enable()
        tick = time.perf_counter()
        gc.collect(0)
    return time.perf_counter() - tick


def _merge_into_index(index: Index, graph: dict[str, Any]) -> None:
    nodes, links = index
    for node in graph["nodes"]:
        if node["id"] not in nodes:
            nodes[node["id"]] = node
    for link in graph["links"]:
        link_key = (link["source"], link["target"], link.get("label") or "")
        existing_link = links.get(link_key)
        if existing_link is None:
            links[link_key] = link
        elif link.get("evidence") is not None and existing_link.get("evidence") is not None:
            evidence_set = dict.fromkeys(existing_link["evidence"])
            evidence_set.update(dict.fromkeys(link["evidence"]))
            existing_link["evidence"] = list(evidence_set)


def run_index(universe: Universe, sizes: Sizes) -> dict[str, Any]:
    elapsed = cpu = collecting = 0.0
    index: Index = ({}, {})
    for _ in range(sizes.results):
        graph = universe.result(sizes.links)
        tick, cpu_tick = time.perf_counter(), time.process_time()
        collecting += merge_into_index(index, graph)
        elapsed += time.perf_counter() - tick
        cpu += time.process_time() - cpu_tick
    tick, cpu_tick = time.perf_counter(), time.process_time()
    artifact = orjson.dumps({"nodes": list(index[0].values()), "links": list(index[1].values())})
    serialise, serialise_cpu = time.perf_counter() - tick, time.process_time() - cpu_tick
    nodes, links = len(index[0]), len(index[1])
    steps = []
    for _ in range(sizes.steps):
        graph = universe.result(sizes.step_links)
        tick, cpu_tick = time.perf_counter(), time.process_time()
        step_collecting = merge_into_index(index, graph)
        steps.append((time.perf_counter() - tick, time.process_time() - cpu_tick,
                      step_collecting))  # fmt: skip
    return {"merge": elapsed, "cpu": cpu, "serialise": serialise, "serialise_cpu": serialise_cpu,
            "nodes": nodes, "links": links, "bytes": len(artifact), "steps": steps,
            "collecting": collecting}  # fmt: skip


def run_networkx(universe: Universe, sizes: Sizes) -> dict[str, Any]:
    import networkx as nx

    elapsed = cpu = 0.0
    graphs = []
    for _ in range(sizes.results):
        data = universe.result(sizes.links)
        tick, cpu_tick = time.perf_counter(), time.process_time()
        graph = nx.MultiDiGraph()
        graph.add_nodes_from((node["id"], node) for node in data["nodes"])
        graph.add_edges_from(
            (link["source"], link["target"], link["label"], link) for link in data["links"]
        )
        graphs.append(graph)
        elapsed += time.perf_counter() - tick
        cpu += time.process_time() - cpu_tick
    tick, cpu_tick = time.perf_counter(), time.process_time()
    merged = nx.compose_all(graphs)
    elapsed += time.perf_counter() - tick
    cpu += time.process_time() - cpu_tick
    return {"merge": elapsed, "cpu": cpu, "serialise": 0.0, "nodes": merged.number_of_nodes(),
            "links": merged.number_of_edges(), "steps": []}  # fmt: skip


def run_accumulator(universe: Universe, sizes: Sizes) -> dict[str, Any]:
    from graphwright.core.ids import normalize_curie
    from graphwright.core.merge import GraphAccumulator

    tick = time.perf_counter()
    normalize_curie("NCBIGene:1")  # loads the prefix tables (Biolink + Bioregistry), once
    tables = time.perf_counter() - tick
    tick = time.perf_counter()
    import graphwright.core.merge_json  # noqa: F401  pyarrow, which to_json() loads once

    arrow = time.perf_counter() - tick
    elapsed = cpu = 0.0
    accumulator = GraphAccumulator()
    for number in range(1, sizes.results + 1):
        graph = universe.result(sizes.links)
        tick, cpu_tick = time.perf_counter(), time.process_time()
        accumulator.add(graph, f"call-{number}")
        elapsed += time.perf_counter() - tick
        cpu += time.process_time() - cpu_tick
    distinct = accumulator.distinct_ids()
    tick = time.perf_counter()
    for raw in distinct:  # what the merge spent on ids: each distinct id normalised once
        normalize_curie(raw)
    normalising = time.perf_counter() - tick
    tick, cpu_tick = time.perf_counter(), time.process_time()
    artifact = accumulator.to_json()
    serialise, serialise_cpu = time.perf_counter() - tick, time.process_time() - cpu_tick
    nodes, links = accumulator.node_count, accumulator.link_count
    steps = []
    for number in range(1, sizes.steps + 1):
        graph = universe.result(sizes.step_links)
        tick, cpu_tick = time.perf_counter(), time.process_time()
        accumulator.add(graph, f"step-{number}")
        steps.append((time.perf_counter() - tick, time.process_time() - cpu_tick))
    tick = time.perf_counter()
    accumulator.to_graph()
    to_graph = time.perf_counter() - tick
    return {"merge": elapsed, "cpu": cpu, "serialise": serialise, "serialise_cpu": serialise_cpu,
            "nodes": nodes, "links": links, "bytes": len(artifact), "steps": steps,
            "to_graph": to_graph,
            "distinct_ids": len(distinct), "normalising": normalising,
            "tables": tables, "arrow": arrow}  # fmt: skip


CONTENDERS = {
    "pairwise": run_pairwise,
    "networkx": run_networkx,
    "index": run_index,
    "accumulator": run_accumulator,
}


@dataclass
class Sizes:
    results: int
    links: int
    step_links: int
    steps: int
    baseline_steps: int


def child(name: str, sizes: Sizes) -> None:
    universe = Universe(sizes.links)
    start_rss = rss_now_mb()
    report = CONTENDERS[name](universe, sizes)
    report.update(peak_mb=peak_rss_mb(), start_mb=start_rss)
    print(json.dumps(report))


def measure(name: str, sizes: Sizes) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", name, "--results", str(sizes.results),
               "--links", str(sizes.links), "--step-links", str(sizes.step_links),
               "--steps", str(sizes.steps),
               "--baseline-steps", str(sizes.baseline_steps)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def combined(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One contender's rounds as one run: the median of each figure, every round's steps."""
    run = {key: statistics.median(done[key] for done in runs) for key, value in runs[0].items()
           if isinstance(value, int | float)}  # fmt: skip
    run["steps"] = [step for done in runs for step in done["steps"]]
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 results of 5k links")
    parser.add_argument("--results", type=int, default=20)
    parser.add_argument("--links", type=int, default=50_000)
    parser.add_argument("--step-links", type=int, default=5_000)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--baseline-steps", type=int, default=3)
    parser.add_argument("--skip-networkx", action="store_true")
    parser.add_argument(
        "--repeat", type=int, default=3, help="rounds of every contender, interleaved (medians)"
    )
    parser.add_argument("--child", choices=sorted(CONTENDERS))
    args = parser.parse_args()
    if args.quick:
        args.links, args.step_links = 5_000, 500
    sizes = Sizes(args.results, args.links, args.step_links, args.steps, args.baseline_steps)
    if args.child:
        child(args.child, sizes)
        return

    total_links = sizes.results * sizes.links
    print(f"{sizes.results} tool results x {sizes.links:,} links = {total_links:,} links "
          f"(seed {SEED}); each contender in its own process")  # fmt: skip
    names = ["pairwise", *([] if args.skip_networkx else ["networkx"]), "index", "accumulator"]
    rounds = [{name: measure(name, sizes) for name in names} for _ in range(args.repeat)]
    runs = {name: combined([done[name] for done in rounds]) for name in names}
    if args.repeat > 1:
        print(f"each figure: the median of {args.repeat} rounds (steps: all rounds' steps)")
    acc, pair = runs["accumulator"], runs["pairwise"]

    print(f"\n{'contender':<13}{'merge s':>9}{'cpu s':>8}{'+json s':>9}{'nodes':>9}"
          f"{'links':>10}{'peak MB':>9}")  # fmt: skip
    for name, run in runs.items():
        print(f"{name:<13}{run['merge']:>9.2f}{run['cpu']:>8.2f}{run['serialise']:>9.2f}"
              f"{run['nodes']:>9,}{run['links']:>10,}{run['peak_mb']:>9.0f}")  # fmt: skip
    print("merge s: wall time of the merge calls only (results are generated between calls,")
    print("  untimed); cpu s: the same as process CPU time (the machine may be shared);")
    print("  networkx: building one MultiDiGraph per result + compose_all.")
    print("  index: the seed's rules kept in dicts between calls, none of the accumulator's.")
    print("+json s: serialising the merged graph as the artifact's JSON content (seed 003).")
    print("peak MB: ru_maxrss of the contender's process (it holds the merged graph, not the")
    print("  inputs, which are dropped after each call; the baseline keeps the input dicts it")
    print("  merged). Node/link counts differ: only the accumulator unifies `ncbigene:` with")
    print("  `NCBIGene:` and HGNC nodes declared equivalent to NCBIGene ones.")

    pair_total = pair["merge"] + pair["serialise"]
    acc_total = acc["merge"] + acc["serialise"]
    print(f"\nspeed-up vs pairwise: {pair['merge'] / acc['merge']:.1f}x merge wall, "
          f"{pair['cpu'] / acc['cpu']:.1f}x merge cpu, "
          f"{pair_total / acc_total:.1f}x merge + json wall (target >= 5x)")  # fmt: skip
    index = runs["index"]
    print(f"speed-up of the bare incremental index vs pairwise: "
          f"{pair['merge'] / index['merge']:.1f}x merge wall "
          f"(about the most a pure-Python incremental merge gains here)")  # fmt: skip
    if "networkx" in runs:
        nx_run = runs["networkx"]
        print(f"speed-up vs networkx: {nx_run['merge'] / acc['merge']:.1f}x merge wall, "
              f"{nx_run['cpu'] / acc['cpu']:.1f}x cpu")  # fmt: skip
    print(f"peak memory accumulator / pairwise: {acc['peak_mb'] / pair['peak_mb']:.2f}x "
          f"(target <= 1.5x)")  # fmt: skip
    print(f"id normalisation (curies + Biolink/Bioregistry prefix maps), cached per distinct "
          f"id: {acc['distinct_ids']:,} distinct ids of {total_links * 2:,} link ends, "
          f"{acc['normalising'] * 1000:.0f} ms for all of them "
          f"({acc['normalising'] / acc['merge'] * 100:.1f}% of the merge), prefix tables loaded "
          f"once in {acc['tables'] * 1000:.0f} ms")  # fmt: skip
    print(f"pyarrow, which to_json() loads on its first call, loaded once (untimed) in "
          f"{acc['arrow'] * 1000:.0f} ms")  # fmt: skip
    print(f"\nadd one {sizes.step_links:,}-link result to the {total_links:,}-link state:")
    for label, column in (("wall", 0), ("cpu", 1)):
        acc_steps = sorted(step[column] * 1000 for step in acc["steps"])
        p50 = statistics.median(acc_steps)
        p99 = acc_steps[round(0.99 * (len(acc_steps) - 1))]
        pair_step = statistics.median(step[column] * 1000 for step in pair["steps"])
        index_step = statistics.median(step[column] * 1000 for step in index["steps"])
        print(f"  {label:<4} accumulator p50 {p50:.1f} ms, p99 {p99:.1f} ms over "
              f"{len(acc_steps)} results; pairwise p50 {pair_step:.0f} ms over "
              f"{len(pair['steps'])} ({pair_step / p50:.0f}x); "
              f"bare index p50 {index_step:.1f} ms")  # fmt: skip
    print(f"accumulator.to_graph() (a fresh, mutable copy of the merged graph): "
          f"{acc['to_graph']:.2f} s")  # fmt: skip
    print_targets(acc, index, pair)


def print_targets(acc: dict[str, Any], index: dict[str, Any], pair: dict[str, Any]) -> None:
    """The four targets of issue 15, each as wall and CPU ratios of the same run."""
    p50 = {
        run: [statistics.median(step[column] for step in data["steps"]) for column in (0, 1)]
        for run, data in (("acc", acc), ("index", index))
    }
    rows = [
        ("merge time / bare index", acc["merge"] / index["merge"], acc["cpu"] / index["cpu"], 2.0),
        ("JSON / baseline orjson.dumps", acc["serialise"] / pair["serialise"],
         acc["serialise_cpu"] / pair["serialise_cpu"], 1.5),
        ("5k-link step p50 / bare index", p50["acc"][0] / p50["index"][0],
         p50["acc"][1] / p50["index"][1], 2.0),
        ("peak memory / pairwise", acc["peak_mb"] / pair["peak_mb"], None, 1.5),
    ]  # fmt: skip
    print(f"\n{'issue 15 target':<32}{'wall':>7}{'cpu':>7}{'target':>9}  met")
    for name, wall, cpu, target in rows:
        cpu_text = f"{cpu:>6.2f}x" if cpu is not None else f"{'':>7}"
        cpu_met = wall <= target if cpu is None else cpu <= target  # memory has no cpu ratio
        met = {(True, True): "yes", (True, False): "by wall only", (False, True): "by cpu only",
               (False, False): "no"}[(wall <= target, cpu_met)]  # fmt: skip
        print(f"{name:<32}{wall:>6.2f}x{cpu_text}{target:>8.1f}x  {met}")
    print("(cpu: process CPU time, the fairer ratio when other work shares the machine: wall")
    print(" ratios swing when the load changes between the contenders' processes)")
    without = index["merge"] - index["collecting"]
    step_without = statistics.median(wall - collecting for wall, _, collecting in index["steps"])
    print(f"the bare index's time includes the collection of the young objects it made "
          f"({index['collecting']:.2f} s of {index['merge']:.2f} s), as the accumulator's "
          f"includes its own; left out, merge {acc['merge'] / without:.2f}x and step p50 "
          f"{p50['acc'][0] / step_without:.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
