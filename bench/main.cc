#include <malloc.h>
// taxel-bench: runs the registered benchmark cases and prints one JSON record per line.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_registry.h"

namespace taxel::bench {
namespace {

constexpr int kDefaultRepeats = 10;
constexpr int kQuickRepeats = 3;

void PrintUsage(FILE* out) {
  std::fprintf(out,
               "usage: taxel-bench [--list] [--case PREFIX]... [--quick] [--threads N] [--repeats N]\n"
               "\n"
               "Runs benchmark cases and prints one JSON object per line:\n"
               "  {\"case\", \"threads\", \"unit\", \"median\", \"min\", \"max\", \"repeats\", ...extra}\n"
               "\n"
               "  --list          print the case names, one per line, and exit\n"
               "  --case PREFIX   run only cases whose name starts with PREFIX (repeatable)\n"
               "  --quick         %d timed repeats instead of %d\n"
               "  --threads N     threaded cases run with N threads only (default: 1 and 2)\n"
               "  --repeats N     timed repeats (overrides --quick)\n"
               "  --help          this text\n",
               kQuickRepeats, kDefaultRepeats);
}

bool ParsePositiveInt(const char* s, int* out) {
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (end == s || *end != '\0' || v < 1 || v > 1024) return false;
  *out = static_cast<int>(v);
  return true;
}

bool StartsWith(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

int Main(int argc, char** argv) {
  bool list = false, quick = false;
  int threads = 0, repeats = 0;
  std::vector<std::string> prefixes;
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    auto value = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "taxel-bench: %s needs a value\n", flag);
        std::exit(2);
      }
      return argv[++i];
    };
    if (!std::strcmp(arg, "--help") || !std::strcmp(arg, "-h")) {
      PrintUsage(stdout);
      return 0;
    } else if (!std::strcmp(arg, "--list")) {
      list = true;
    } else if (!std::strcmp(arg, "--quick")) {
      quick = true;
    } else if (!std::strcmp(arg, "--case")) {
      prefixes.emplace_back(value("--case"));
    } else if (!std::strcmp(arg, "--threads")) {
      const char* v = value("--threads");
      if (!ParsePositiveInt(v, &threads)) {
        std::fprintf(stderr, "taxel-bench: --threads must be an integer in [1, 1024], got \"%s\"\n", v);
        return 2;
      }
    } else if (!std::strcmp(arg, "--repeats")) {
      const char* v = value("--repeats");
      if (!ParsePositiveInt(v, &repeats)) {
        std::fprintf(stderr, "taxel-bench: --repeats must be an integer in [1, 1024], got \"%s\"\n", v);
        return 2;
      }
    } else {
      std::fprintf(stderr, "taxel-bench: unknown argument \"%s\"\n", arg);
      PrintUsage(stderr);
      return 2;
    }
  }

  const std::vector<Case> cases = RegisteredCases();
  if (list) {
    for (const Case& c : cases) std::printf("%s\n", c.name.c_str());
    return 0;
  }

  std::vector<const Case*> selected;
  for (const Case& c : cases) {
    bool match = prefixes.empty();
    for (const std::string& p : prefixes) match = match || StartsWith(c.name, p);
    if (match) selected.push_back(&c);
  }
  for (const std::string& p : prefixes) {
    bool any = false;
    for (const Case* c : selected) any = any || StartsWith(c->name, p);
    if (!any) std::fprintf(stderr, "taxel-bench: no case matches \"%s\" (see --list)\n", p.c_str());
  }
  if (selected.empty()) return 2;

  if (repeats == 0) repeats = quick ? kQuickRepeats : kDefaultRepeats;
  const std::vector<int> thread_counts = threads > 0 ? std::vector<int>{threads} : std::vector<int>{1, 2};
  for (const Case* c : selected) {
    Context ctx(c->name, repeats, quick, thread_counts);
    c->run(ctx);
  }
  return 0;
}

}  // namespace
}  // namespace taxel::bench

int main(int argc, char** argv) {
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  return taxel::bench::Main(argc, argv);
}
