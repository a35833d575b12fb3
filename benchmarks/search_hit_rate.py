"""Find before forging, measured: does a proposal written in other words find the skill it re-invents?

The corpus is what a grown forge would hold: the shipped example skills and every HumanEval and MBPP problem
(benchmarks/datasets.py, from KAVI_DATASETS) as a skill spec: name, description, inputs from the reference
solution's parameters, examples from the dataset's literal test calls. Two sets of proposals, each run as
`kavi propose` runs it (the whole proposal as the query, kavi.search):
- the development set (below, 42 proposals): the ranking's weights were chosen on it;
- the held-out set (search_cases.yaml, 162 proposals in four styles: framed as a need, terse, with synonyms, an
  ordinary proposal), written from each problem's task by someone who never saw the original or the search code,
  before the ranking was tuned; and its proposals for tasks the corpus lacks, which should find nothing close.
Each is ranked by BM25 alone and by the hybrid ranking (BM25 and the embedder's vectors, fused), in the same run.

The index is built from the specs directly (`SearchIndex.build`): search reads only specs, never skill code, so
no skill needs to be forged or trusted for this measurement. The embedder is the packaged model, or the endpoint
KAVI_EMBEDDINGS_URL names (how the candidates were compared: README, "Search").

Run: python benchmarks/search_hit_rate.py [--no-datasets] [--verbose] [--scale N] [--calibrate]
(`--calibrate` also prints the embedder's calibration on the development set: kavi.search.index.Calibration.)
Last line: `search: held-out top-1 X/N (P%), top-5 ...` for the hybrid ranking.
"""

import argparse
import ast
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import datasets

from kavi.home import KaviHome
from kavi.search.documents import Doc, spec_query
from kavi.search.guard import warn_score
from kavi.search.index import SearchConfig, SearchIndex, open_index

ROOT = Path(__file__).resolve().parents[1]


def _spec(name: str, description: str, inputs: list[str], outputs: list[str]) -> dict[str, Any]:
    return {"name": name, "description": description, "side_effect_class": "READ_ONLY",
            "inputs": [{"name": n, "type": "json"} for n in inputs],
            "outputs": [{"name": n, "type": "json"} for n in outputs]}


# (the original's name, the paraphrased proposal)
SHIPPED_PARAPHRASES: list[tuple[str, dict[str, Any]]] = [
    ("word_count", _spec("text_stats", "Tell how many words and lines a piece of text has, and its length.",
                         ["content"], ["word_total", "line_total", "length"])),
    ("extract_emails", _spec("find_mail_addresses", "List every e-mail address that appears in a message, once each.",
                             ["message"], ["addresses"])),
    ("http_get_json", _spec("fetch_api_document", "Download a JSON response from a web URL, optionally picking out "
                            "one nested value.", ["address", "query"], ["document"])),
    ("parse_duration", _spec("duration_to_seconds", "Convert a time span written like 2h15m or 30s into seconds.",
                             ["span"], ["total_seconds"])),
    ("read_notes_by_tag", _spec("notes_with_label", "Find the markdown notes in the vault tagged with a given label.",
                                ["label"], ["notes"])),
    ("search_notes", _spec("find_notes_matching", "Look through the notes in the vault for text matching a query and "
                           "rank the best ones.", ["terms", "max_results"], ["hits"])),
    ("slugify_title", _spec("heading_to_slug", "Make a URL-friendly slug from a heading: lowercase words separated "
                            "by hyphens, accents removed.", ["heading"], ["slug_text"])),
    ("summarize_note", _spec("note_digest", "Give a short summary, a few sentences long, of one note in the vault.",
                             ["note_path"], ["digest"])),
    ("create_daily_note", _spec("make_journal_entry", "Create today's journal note (or another date's) in the daily "
                                "folder, titled with the weekday and date.", ["day", "text"], ["file", "made"])),
    ("write_note", _spec("save_markdown_note", "Save a markdown note with a title and tags into the vault as a file.",
                         ["heading", "content", "labels"], ["file_path", "saved"])),
]

# (the dataset problem's name, the paraphrased proposal): written from the problem's description only.
DATASET_PARAPHRASES: list[tuple[str, dict[str, Any]]] = [
    ("he_0_has_close_elements", _spec("any_pair_within_distance", "Report whether some two values in a list of "
                                      "floats lie nearer to one another than a given limit.", ["values", "limit"],
                                      ["found"])),
    ("he_1_separate_paren_groups", _spec("split_bracket_groups", "Split a string of several balanced, non-nested "
                                         "top-level bracket groups into a list of those groups, ignoring spaces.",
                                         ["text"], ["groups"])),
    ("he_2_truncate_number", _spec("fractional_part", "Return only the part after the decimal point of a positive "
                                   "float.", ["x"], ["fraction"])),
    ("he_3_below_zero", _spec("balance_goes_negative", "Given bank deposits and withdrawals from an empty account, "
                              "say whether the balance ever dips under zero.", ["ops"], ["negative"])),
    ("he_4_mean_absolute_deviation", _spec("average_distance_from_mean", "Compute the MAD: the mean of the absolute "
                                           "differences between each number and the average.", ["data"], ["mad"])),
    ("he_5_intersperse", _spec("insert_separator_between", "Put a separator value between each pair of adjacent "
                               "items of a list of numbers.", ["items", "sep"], ["result"])),
    ("he_6_parse_nested_parens", _spec("max_nesting_per_group", "For each space-separated group of parentheses, give "
                                       "its deepest nesting level.", ["text"], ["depths"])),
    ("he_7_filter_by_substring", _spec("keep_strings_containing", "Keep only the strings of a list that include a "
                                       "given piece of text.", ["strings", "needle"], ["kept"])),
    ("he_8_sum_product", _spec("total_and_product", "Return both the sum and the product of a list of integers "
                               "(0 and 1 for an empty list).", ["ints"], ["pair"])),
    ("he_9_rolling_max", _spec("running_maximum", "For every position of a sequence of integers, the largest value "
                               "seen so far.", ["seq"], ["maxima"])),
    ("he_10_make_palindrome", _spec("shortest_palindrome_extension", "Build the shortest palindrome that starts with "
                                    "the given string by appending characters.", ["s"], ["palindrome"])),
    ("he_11_string_xor", _spec("binary_string_xor", "XOR two strings of 0s and 1s bit by bit and return the result as "
                               "a string.", ["left", "right"], ["bits"])),
    ("he_12_longest", _spec("longest_string", "Pick the longest string of a list (the first one on ties, None for an "
                            "empty list).", ["strings"], ["winner"])),
    ("he_13_greatest_common_divisor", _spec("gcd_of_two", "Compute the greatest common divisor of two whole numbers.",
                                            ["x", "y"], ["gcd"])),
    ("he_14_all_prefixes", _spec("every_prefix", "List all prefixes of a string, shortest first.", ["word"],
                                 ["prefixes"])),
    ("he_16_count_distinct_characters", _spec("unique_letters_ignoring_case", "Count how many different characters a "
                                              "string has, treating upper and lower case as the same.", ["s"],
                                              ["count"])),
    ("mbpp_2_similar_elements", _spec("common_items", "Find the elements two lists have in common.", ["a", "b"],
                                      ["shared"])),
    ("mbpp_3_is_not_prime", _spec("is_composite", "Tell whether a number is not a prime.", ["n"], ["composite"])),
    ("mbpp_4_heap_queue_largest", _spec("top_n_numbers", "Return the n biggest integers of a list, largest first.",
                                        ["numbers", "n"], ["top"])),
    ("mbpp_6_differ_at_one_bit_pos", _spec("single_bit_difference", "Check whether two integers differ in exactly one "
                                           "bit.", ["a", "b"], ["one_bit"])),
    ("mbpp_7_find_char_long", _spec("words_of_four_or_more", "Return the words of a string that have at least four "
                                    "characters.", ["text"], ["long_words"])),
    ("mbpp_8_square_nums", _spec("square_each", "Square every number of a list.", ["nums"], ["squares"])),
    ("mbpp_9_find_rotations", _spec("min_rotations_same_string", "Find the smallest positive number of rotations "
                                    "that gives back the same string.", ["s"], ["rotations"])),
    ("mbpp_11_remove_occ", _spec("strip_first_last_char", "Remove the first and the last occurrence of a character "
                                 "from a string.", ["s", "ch"], ["result"])),
    ("mbpp_12_sort_matrix", _spec("order_rows_by_sum", "Sort the rows of a matrix by their sums, smallest first.",
                                  ["matrix"], ["sorted_rows"])),
    ("mbpp_14_find_volume", _spec("triangular_prism_volume", "Compute the volume of a prism with a triangular base.",
                                  ["base", "height", "length"], ["volume"])),
    ("mbpp_16_text_lowercase_underscore", _spec("snake_case_check", "True when a string is lowercase letter runs "
                                                "joined by underscores.", ["text"], ["matches"])),
    ("mbpp_17_square_perimeter", _spec("perimeter_of_square", "Perimeter of a square from the length of its side.",
                                       ["side"], ["perimeter"])),
    ("mbpp_18_remove_dirty_chars", _spec("drop_chars_in_other", "Delete from one string every character that occurs "
                                         "in a second string.", ["s", "banned"], ["cleaned"])),
    ("mbpp_19_test_duplicate", _spec("has_repeats", "Does an array of integers contain any value twice?", ["arr"],
                                     ["repeated"])),
    ("mbpp_20_is_woodall", _spec("woodall_number_check", "Decide if a number is a Woodall number.", ["n"],
                                 ["woodall"])),
    ("mbpp_58_opposite_signs", _spec("signs_differ", "Check if two integers have opposite signs.", ["x", "y"],
                                     ["opposite"])),
]


def _params(solution: str, entry: str) -> list[str]:
    try:
        tree = ast.parse(solution)
    except SyntaxError:
        return ["value"]
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == entry:
            return [a.arg for a in node.args.args] or ["value"]
    return ["value"]


def dataset_docs() -> list[Doc]:
    docs = []
    for p in [*datasets.load_humaneval(), *datasets.load_mbpp()]:
        names = _params(p.solution, p.entry_point)
        examples = [{"input": dict(zip(names, call, strict=False)), "expected": {}} for call in p.calls[:3]]
        spec = {"name": p.name, "description": p.description, "side_effect_class": "READ_ONLY",
                "inputs": [{"name": n, "type": "json"} for n in names], "outputs": [{"name": "result", "type": "json"}],
                "examples": examples}
        docs.append(Doc.from_spec("skill", spec, 1))
    return docs


def shipped_docs() -> list[Doc]:
    return [Doc.from_spec("skill", yaml.safe_load(f.read_text()), 1)
            for f in sorted((ROOT / "kavi" / "examples" / "proposals").glob("*.yaml"))]


def held_out() -> tuple[list[tuple[str, dict[str, Any], str]], list[dict[str, Any]]]:
    """The held-out paraphrases (original, proposal, style) and the proposals for absent tasks."""
    data = yaml.safe_load((Path(__file__).resolve().parent / "search_cases.yaml").read_text(encoding="utf-8"))
    cases = [(c["original"], _spec(c["name"], c["description"], c["inputs"], c["outputs"]), c["style"])
             for c in data["paraphrases"]]
    absent = [_spec(c["name"], c["description"], c["inputs"], c["outputs"]) for c in data["absent"]]
    return cases, absent


@dataclass
class Tally:
    n: int = 0
    top1: int = 0
    top5: int = 0
    rr: float = 0.0

    def add(self, rank: int | None) -> None:
        self.n += 1
        self.top1 += rank == 1
        self.top5 += rank is not None and rank <= 5
        self.rr += 1 / rank if rank else 0.0

    def line(self) -> str:
        if not self.n:
            return "none"
        return (f"top-1 {self.top1}/{self.n} ({100 * self.top1 / self.n:.0f}%), top-5 {self.top5}/{self.n} "
                f"({100 * self.top5 / self.n:.0f}%), MRR {self.rr / self.n:.3f}")


def rank_of(index: SearchIndex, original: str, proposal: dict[str, Any], times: list[float]) -> tuple[int | None,
                                                                                                     list[str]]:
    t = time.perf_counter()
    ranked = index.query(spec_query(proposal), limit=10, exclude=(proposal["name"],))
    times.append(time.perf_counter() - t)
    order = [h.name for h in ranked]
    return (order.index(original) + 1 if original in order else None), order


def evaluate(index: SearchIndex, label: str, dev: list[tuple[str, dict[str, Any]]],
             test: list[tuple[str, dict[str, Any], str]], absent: list[dict[str, Any]], verbose: bool
             ) -> tuple[Tally, Tally]:
    times: list[float] = []
    dev_t, test_t = Tally(), Tally()
    styles: dict[str, Tally] = {}
    for original, proposal in dev:
        dev_t.add(rank_of(index, original, proposal, times)[0])
    for original, proposal, style in test:
        rank, order = rank_of(index, original, proposal, times)
        test_t.add(rank)
        styles.setdefault(style, Tally()).add(rank)
        if verbose and rank != 1:
            print(f"  miss [{label}] {proposal['name']} -> {order[:3]} (wanted {original}, rank {rank})")
    threshold = index.config.duplicate_score
    warned = candidates = 0
    for proposal in absent:
        t = time.perf_counter()
        hits = index.query(spec_query(proposal), limit=3, exclude=(proposal["name"],))
        times.append(time.perf_counter() - t)
        best = hits[0].score if hits else 0.0
        warned += best >= warn_score(threshold)
        candidates += best >= threshold
        if verbose and best >= warn_score(threshold):
            print(f"  absent [{label}] {proposal['name']} -> {hits[0].name} {best:.2f}")
    times.sort()
    print(f"{label}:")
    print(f"  development ({dev_t.n}): {dev_t.line()}")
    print(f"  held-out ({test_t.n}): {test_t.line()}")
    for style, t in sorted(styles.items()):
        print(f"    {style:9} {t.line()}")
    print(f"  absent tasks ({len(absent)}): {warned} warned (score >= {warn_score(threshold):.2f}), {candidates} at "
          f"the refusal score {threshold:.2f} (a refusal also needs the evidence: benchmarks/duplicate_guard.py)")
    print(f"  query: median {times[len(times) // 2] * 1000:.1f} ms, p95 {times[int(len(times) * 0.95)] * 1000:.1f} ms")
    return dev_t, test_t


class CopiedVectors:
    """An embedder for the grown corpus: a copy's passage gets its original's stored vector (encoding 10,000
    passages is not what is measured here; the index and the query are). Queries are encoded for real."""

    def __init__(self, inner: Any, by_passage: dict[str, list[float]]) -> None:
        self.inner, self.by_passage = inner, by_passage
        self.model_id, self.label = inner.model_id + "|copies", inner.label

    def queries(self, texts: list[str]) -> list[list[float]]:
        return self.inner.queries(texts)  # type: ignore[no-any-return]

    def passages(self, texts: list[str]) -> list[list[float]]:
        return [self.by_passage[t] for t in texts]


def calibrate(index: SearchIndex, docs: list[Doc], dev: list[tuple[str, dict[str, Any]]]) -> None:
    """The development set's cosines, as kavi.search.index.Calibration takes them: the median cosine of a proposal
    to every skill of the corpus (unrelated tasks, the floor) and of a proposal to the skill it re-invents (the
    ceiling)."""
    assert index.embedder is not None
    names = [d.name for d in docs]

    def unit(v: list[float]) -> list[float]:
        norm = sum(x * x for x in v) ** 0.5 or 1.0
        return [x / norm for x in v]

    skills = [unit(v) for v in index.embedder.passages([d.passage for d in docs])]
    queries = [unit(v) for v in index.embedder.queries([spec_query(p).semantic for _, p in dev])]
    everything, own = [], []
    for (original, _), q in zip(dev, queries, strict=True):
        cosines = [sum(a * b for a, b in zip(q, v, strict=True)) for v in skills]
        everything += cosines
        own.append(cosines[names.index(original)])
    print(f"  calibration on the development set: floor (median cosine to the corpus) "
          f"{statistics.median(everything):.3f}, ceiling (median cosine to the original) {statistics.median(own):.3f}")


def scale_latency(index: SearchIndex, docs: list[Doc], n: int, cases: list[tuple[str, dict[str, Any], str]]) -> None:
    """Query time at n skills: the corpus repeated under other names until it holds n."""
    rng = random.Random(7)
    grown = list(docs)
    source: dict[str, Doc] = {}
    while len(grown) < n:
        d = docs[len(grown) % len(docs)]
        copy = replace(d, name=f"{d.name}_v{len(grown)}", description=d.description + " " + rng.choice(
            ["quickly", "for a report", "in place", "as a list", "for logs", "once"]))
        source[copy.passage] = d
        grown.append(copy)
    if index.embedder is not None:
        original = dict(zip([d.passage for d in docs], index.embedder.passages([d.passage for d in docs]),
                            strict=True))
        index.embedder = CopiedVectors(index.embedder, {**original, **{p: original[d.passage]
                                                                       for p, d in source.items()}})
    t = time.perf_counter()
    index.build(grown, f"scale {n}")
    build_s = time.perf_counter() - t
    times = []
    for _, proposal, _ in cases[:60]:
        t = time.perf_counter()
        index.query(spec_query(proposal), limit=10)
        times.append(time.perf_counter() - t)
    times.sort()
    print(f"  at {len(grown)} skills: index built in {build_s:.1f} s (vectors of the copies are their originals'), "
          f"query median {statistics.median(times) * 1000:.1f} ms, p95 {times[int(len(times) * 0.95)] * 1000:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-datasets", action="store_true", help="only the shipped skills and their paraphrases")
    parser.add_argument("--verbose", action="store_true", help="print every miss")
    parser.add_argument("--scale", type=int, default=0, help="also time queries at this many skills (e.g. 10000)")
    parser.add_argument("--calibrate", action="store_true", help="also print the embedder's calibration")
    args = parser.parse_args()
    docs = shipped_docs()
    dev = list(SHIPPED_PARAPHRASES)
    test: list[tuple[str, dict[str, Any], str]] = []
    absent: list[dict[str, Any]] = []
    if not args.no_datasets:
        docs += dataset_docs()
        dev += DATASET_PARAPHRASES
        test, absent = held_out()
    names = {d.name for d in docs}
    missing = [name for name, *_ in [*dev, *test] if name not in names]
    if missing:
        raise SystemExit(f"paraphrased skills not in the corpus: {', '.join(missing)}")
    config = SearchConfig.from_env()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, cfg in (("BM25 only", replace(config, embedder="none", embeddings_url=None)), ("hybrid", config)):
            home = KaviHome(Path(tmp) / label.replace(" ", "-")).ensure()
            index: SearchIndex = open_index(home, None, cfg)  # type: ignore[arg-type]  # never reads a ledger here
            if label == "hybrid" and index.embedder is None:
                print(f"hybrid: not measured ({index.note})")
                continue
            t0 = time.perf_counter()
            index.build(docs, "benchmark")
            build_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            index.build(docs, "benchmark again")
            again_s = time.perf_counter() - t0
            print(f"corpus: {len(docs)} skills, {index.describe}; index built in {build_s:.2f} s, rebuilt in "
                  f"{again_s:.2f} s (vectors reused)")
            results[label] = evaluate(index, label, dev, test, absent, args.verbose)  # (development, held-out)
            if args.calibrate and index.embedder is not None:
                calibrate(index, docs, dev)
            if args.scale:
                scale_latency(index, docs, args.scale, test)
    label = "hybrid" if "hybrid" in results else "BM25 only"
    dev_t, test_t = results[label]
    which, final = ("held-out", test_t) if test_t.n else ("development", dev_t)  # --no-datasets: no held-out set
    print(f"search: {which} top-1 {final.top1}/{final.n}, top-5 {final.top5}/{final.n}, MRR "
          f"{final.rr / max(final.n, 1):.3f} ({label})")


if __name__ == "__main__":
    main()
