// The taxel-bench case registry: named cases, the context they run in, and the records they emit.
//
// Output contract (docs/reference.md#benchmarks): one JSON object per line and per record,
//   {"case": "...", "threads": N, "unit": "ms"|"us"|"qps"|"taxels_per_s"|"bytes",
//    "median": x, "min": x, "max": x, "repeats": n, ...extra fields}
// median/min/max are over the timed repeats (a warm-up run is never counted). Case names are a
// contract: never rename one, add new ones freely.
//
// Adding a case — one new .cc file in bench/, listed in bench/CMakeLists.txt:
//
//   #include "bench/bench_registry.h"
//   namespace taxel::bench {
//   namespace {
//   void RunMyThing(Context& ctx) {
//     for (int threads : ctx.thread_counts()) {      // {1, 2} unless --threads N
//       ThreadPool pool(threads);                     // built outside the timed region
//       Record r = ctx.NewRecord(threads, "ms");
//       r.samples = TimeRepeats(ctx.repeats(), [&] { /* the work, once */ });
//       ScaleSamples(&r, 1e3);                        // seconds -> ms
//       r.AddInt("probes", 512);
//       ctx.Emit(r);
//     }
//   }
//   TAXEL_BENCH_CASE("my_group/my_case", RunMyThing);
//   }  // namespace
//   }  // namespace taxel::bench
//
// Cases run grouped by the part of their name before '/', groups in alphabetical order, cases of
// one group in registration order (top to bottom of their file).
#ifndef TAXEL_BENCH_BENCH_REGISTRY_H_
#define TAXEL_BENCH_BENCH_REGISTRY_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace taxel::bench {

/// One output line. `samples` holds one value per timed repeat, already in `unit`.
struct Record {
  std::string case_name;
  int threads = 1;
  std::string unit;  ///< "ms", "us", "qps", "taxels_per_s" or "bytes"
  std::vector<double> samples;

  /// Extra fields, in insertion order; values are stored already encoded as JSON.
  std::vector<std::pair<std::string, std::string>> extra;
  void AddNumber(const std::string& key, double value);  ///< non-finite values print as null
  void AddInt(const std::string& key, int64_t value);
  void AddString(const std::string& key, const std::string& value);
};

/// Median of the values (mean of the two middle ones for an even count); NaN when empty.
double Median(std::vector<double> values);
/// Median over the timed repeats of numerators[i] / denominators[i]: the ratio of two cases timed
/// in turn, repeat by repeat. On a shared machine it follows the load less than the ratio of the
/// two medians does (both halves of a pair see the same load). NaN when the sizes differ or are 0.
double MedianRatio(const std::vector<double>& numerators, const std::vector<double>& denominators);

/// Runs fn once untimed (warm-up), then `repeats` times timed with std::chrono::steady_clock;
/// returns the wall time of each timed run, in seconds.
std::vector<double> TimeRepeats(int repeats, const std::function<void()>& fn);

/// Wall time of one call of fn, in seconds (steady_clock).
double TimeOnce(const std::function<void()>& fn);

/// Two cases timed in the same loop: a and b once each untimed (warm-ups), then `repeats` rounds
/// timing both, the order swapped every round (a b, b a, ...) so that drift in the machine's load
/// hits both alike. Appends the wall times in seconds to *a_s and *b_s (for MedianRatio).
void TimeInTurn(int repeats, const std::function<void()>& a, const std::function<void()>& b, std::vector<double>* a_s,
                std::vector<double>* b_s);

/// Multiplies every sample by `factor` (e.g. 1e3 for seconds -> ms).
void ScaleSamples(Record* r, double factor);

/// Replaces every sample s (seconds for `count` items) by the rate count / s (e.g. qps).
void SamplesToRate(Record* r, double count);

/// What a case sees of the command line, and where its records go.
class Context {
 public:
  Context(std::string case_name, int repeats, bool quick, std::vector<int> thread_counts)
      : case_name_(std::move(case_name)), repeats_(repeats), quick_(quick), thread_counts_(std::move(thread_counts)) {}

  const std::string& case_name() const { return case_name_; }
  /// Number of timed repeats (the warm-up run comes on top).
  int repeats() const { return repeats_; }
  /// True with --quick: cases may also shrink their inputs, but must say so in a field.
  bool quick() const { return quick_; }
  /// Thread counts a threaded case runs, ascending: {1, 2} by default, {N} with --threads N.
  const std::vector<int>& thread_counts() const { return thread_counts_; }

  /// A record for this case with the given thread count and unit.
  Record NewRecord(int threads, const std::string& unit) const;
  /// Prints the record as one JSON line on stdout and flushes. Records with more than one thread
  /// get "speedup_vs_1thread" (time or rate units) against the case's 1-thread record, if any.
  void Emit(const Record& r) const;

 private:
  std::string case_name_;
  int repeats_;
  bool quick_;
  std::vector<int> thread_counts_;
  mutable double one_thread_median_ = std::numeric_limits<double>::quiet_NaN();
};

using CaseFn = std::function<void(Context& ctx)>;

struct Case {
  std::string name;
  CaseFn run;
};

/// Adds a case; called from static initialisers through TAXEL_BENCH_CASE. A duplicate name ends
/// the process. Returns true (so that it can initialise a static).
bool RegisterCase(const std::string& name, CaseFn run);

/// Every registered case, in run order (see the file comment).
std::vector<Case> RegisteredCases();

/// JSON string literal for s (quotes included), with the required escapes.
std::string JsonString(const std::string& s);

}  // namespace taxel::bench

#define TAXEL_BENCH_CONCAT_INNER(a, b) a##b
#define TAXEL_BENCH_CONCAT(a, b) TAXEL_BENCH_CONCAT_INNER(a, b)

/// Registers the callable (anything callable as void(Context&); variadic so that a lambda with
/// top-level commas needs no extra parentheses) under the case name `name`.
#define TAXEL_BENCH_CASE(name, ...)                                                    \
  [[maybe_unused]] static const bool TAXEL_BENCH_CONCAT(taxel_bench_case_, __LINE__) = \
      ::taxel::bench::RegisterCase(name, __VA_ARGS__)

#endif  // TAXEL_BENCH_BENCH_REGISTRY_H_
