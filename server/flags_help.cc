#include "server/flags_help.h"

#include <algorithm>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"

namespace taxel::server {

bool HelpRequested(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--") return false;  // what follows is not a flag
    if (arg == "--help" || arg == "-help" || arg == "-h") return true;
  }
  return false;
}

void PrintFlagsHelp(std::ostream& out, absl::string_view usage, absl::string_view anchor) {
  const absl::CommandLineFlag* anchor_flag = absl::FindCommandLineFlag(anchor);
  const std::string file = anchor_flag != nullptr ? anchor_flag->Filename() : std::string();
  std::vector<const absl::CommandLineFlag*> flags;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (anchor_flag != nullptr && flag->Filename() == file) flags.push_back(flag);
  }
  std::sort(flags.begin(), flags.end(),
            [](const absl::CommandLineFlag* a, const absl::CommandLineFlag* b) { return a->Name() < b->Name(); });
  out << usage << "\n\nFlags:\n";
  for (const absl::CommandLineFlag* flag : flags) {
    const std::string def = flag->DefaultValue();
    out << "  --" << flag->Name() << " (default: " << (def.empty() ? "\"\"" : def) << ")\n"
        << "      " << flag->Help() << "\n";
  }
  out << "\n--helpfull lists the flags of the libraries too.\n";
}

}  // namespace taxel::server
