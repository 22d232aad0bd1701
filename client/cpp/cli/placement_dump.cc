// taxel-placement-dump: placements in the cross-language format of taxel.placement.dump.
//
// stdin: the replica ids on the first line, separated by spaces; then one scene a line,
// "tenant<TAB>name". stdout: one line a scene, "tenant/name<TAB>ranking<TAB>scores" (the ids by
// decreasing score, comma-separated, and each one's score as 16 hex digits).
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "taxel/placement.h"

int main() {
  std::string line;
  if (!std::getline(std::cin, line)) {
    std::fprintf(stderr, "taxel-placement-dump: expected the replica ids on the first line\n");
    return 2;
  }
  const std::vector<std::string> replicas = absl::StrSplit(line, ' ', absl::SkipEmpty());
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    const std::vector<std::string> parts = absl::StrSplit(line, '\t');
    if (parts.size() != 2) {
      std::fprintf(stderr, "taxel-placement-dump: expected 'tenant<TAB>name', got '%s'\n", line.c_str());
      return 2;
    }
    const std::vector<std::string> order = taxel::RankReplicas(replicas, parts[0], parts[1]);
    std::vector<std::string> scores;
    for (const std::string& r : order) {
      scores.push_back(absl::StrFormat("%016x", taxel::PlacementScore(r, parts[0], parts[1])));
    }
    std::cout << parts[0] << '/' << parts[1] << '\t' << absl::StrJoin(order, ",") << '\t' << absl::StrJoin(scores, ",")
              << '\n';
  }
  return 0;
}
