// `taxel-server --help`: the flags of one source file, printed from absl's flag registry.
//
// Abseil 20220623 answers `--help` with the flags of files named after the program (none here: the
// flags live in server/main.cc) and exits 1; `--helpfull` lists every flag of every library. The
// server handles `--help` itself: this list, exit status 0.
#ifndef TAXEL_SERVER_FLAGS_HELP_H_
#define TAXEL_SERVER_FLAGS_HELP_H_

#include <ostream>

#include "absl/strings/string_view.h"

namespace taxel::server {

/// True when argv (before a `--` terminator) holds `--help`, `-help` or `-h`.
bool HelpRequested(int argc, char** argv);

/// Writes `usage`, then every flag defined in the same source file as the flag `anchor` (e.g.
/// "address" for server/main.cc's), sorted by name: `--name (default: value)` and its help text on
/// the next line. The file is compared as absl records it (leading '/' dropped), so an absolute
/// and a relative `__FILE__` work alike.
void PrintFlagsHelp(std::ostream& out, absl::string_view usage, absl::string_view anchor);

}  // namespace taxel::server

#endif  // TAXEL_SERVER_FLAGS_HELP_H_
