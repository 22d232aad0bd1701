#include "bench/bench_registry.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

namespace taxel::bench {
namespace {

// Function-local so that registration from other files' static initialisers is safe.
std::vector<Case>& Registry() {
  static std::vector<Case>* cases = new std::vector<Case>();
  return *cases;
}

std::string JsonNumber(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.10g", v);
  return buf;
}

std::string Group(const std::string& name) { return name.substr(0, name.find('/')); }

}  // namespace

void Record::AddNumber(const std::string& key, double value) { extra.emplace_back(key, JsonNumber(value)); }

void Record::AddInt(const std::string& key, int64_t value) { extra.emplace_back(key, std::to_string(value)); }

void Record::AddString(const std::string& key, const std::string& value) { extra.emplace_back(key, JsonString(value)); }

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (const char ch : s) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(ch));
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

double Median(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  if (values.size() % 2 == 1) return values[mid];
  const double upper = values[mid];
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return 0.5 * (lower + upper);
}

double MedianRatio(const std::vector<double>& numerators, const std::vector<double>& denominators) {
  if (numerators.size() != denominators.size()) return std::numeric_limits<double>::quiet_NaN();
  std::vector<double> ratios(numerators.size());
  for (size_t i = 0; i < ratios.size(); ++i) ratios[i] = numerators[i] / denominators[i];
  return Median(std::move(ratios));
}

double TimeOnce(const std::function<void()>& fn) {
  const auto start = std::chrono::steady_clock::now();
  fn();
  const auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(stop - start).count();
}

void TimeInTurn(int repeats, const std::function<void()>& a, const std::function<void()>& b, std::vector<double>* a_s,
                std::vector<double>* b_s) {
  a();  // warm-ups, not counted
  b();
  for (int r = 0; r < repeats; ++r) {
    if (r % 2 == 0) {
      a_s->push_back(TimeOnce(a));
      b_s->push_back(TimeOnce(b));
    } else {
      b_s->push_back(TimeOnce(b));
      a_s->push_back(TimeOnce(a));
    }
  }
}

std::vector<double> TimeRepeats(int repeats, const std::function<void()>& fn) {
  fn();  // warm-up: caches, page faults, thread wake-up; not counted
  std::vector<double> seconds;
  seconds.reserve(repeats);
  for (int r = 0; r < repeats; ++r) seconds.push_back(TimeOnce(fn));
  return seconds;
}

void ScaleSamples(Record* r, double factor) {
  for (double& s : r->samples) s *= factor;
}

void SamplesToRate(Record* r, double count) {
  for (double& s : r->samples) s = count / s;
}

Record Context::NewRecord(int threads, const std::string& unit) const {
  Record r;
  r.case_name = case_name_;
  r.threads = threads;
  r.unit = unit;
  return r;
}

void Context::Emit(const Record& r) const {
  std::string line = "{\"case\": " + JsonString(r.case_name) + ", \"threads\": " + std::to_string(r.threads) +
                     ", \"unit\": " + JsonString(r.unit) + ", \"median\": " + JsonNumber(Median(r.samples));
  const double lo = r.samples.empty() ? NAN : *std::min_element(r.samples.begin(), r.samples.end());
  const double hi = r.samples.empty() ? NAN : *std::max_element(r.samples.begin(), r.samples.end());
  line += ", \"min\": " + JsonNumber(lo) + ", \"max\": " + JsonNumber(hi) +
          ", \"repeats\": " + std::to_string(r.samples.size());
  for (const auto& [key, value] : r.extra) line += ", " + JsonString(key) + ": " + value;
  // Speed-up of this record over the case's 1-thread record (emitted first: thread counts ascend).
  const double median = Median(r.samples);
  if (r.threads == 1) one_thread_median_ = median;
  const bool rate = r.unit == "qps" || r.unit == "taxels_per_s", time = r.unit == "ms" || r.unit == "us";
  if (r.threads > 1 && std::isfinite(one_thread_median_) && (rate || time)) {
    line += ", \"speedup_vs_1thread\": " + JsonNumber(rate ? median / one_thread_median_ : one_thread_median_ / median);
  }
  line += "}\n";
  std::fputs(line.c_str(), stdout);
  std::fflush(stdout);
}

bool RegisterCase(const std::string& name, CaseFn run) {
  for (const Case& c : Registry()) {
    if (c.name == name) {
      std::fprintf(stderr, "taxel-bench: case \"%s\" registered twice\n", name.c_str());
      std::abort();
    }
  }
  Registry().push_back({name, std::move(run)});
  return true;
}

std::vector<Case> RegisteredCases() {
  std::vector<Case> cases = Registry();
  std::stable_sort(cases.begin(), cases.end(),
                   [](const Case& a, const Case& b) { return Group(a.name) < Group(b.name); });
  return cases;
}

}  // namespace taxel::bench
