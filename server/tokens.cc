#include "server/tokens.h"

#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "core/common/field_error.h"

namespace taxel::server {

absl::StatusOr<std::map<std::string, std::string>> ParseTokens(absl::string_view text, absl::string_view source) {
  std::map<std::string, std::string> tokens;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    const std::vector<absl::string_view> words = absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipWhitespace());
    if (words.size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(source, " line ", line_number, ": expected '<token> <tenant>' (",
                                                     words.size(), " words found)"));
    }
    if (!tokens.emplace(std::string(words[0]), std::string(words[1])).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, " line ", line_number, ": this token is already given on an earlier line"));
    }
  }
  if (tokens.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source,
                     ": no tokens (every line is blank or a comment); an empty tokens file would turn "
                     "authentication off, so the server refuses to start. Remove the flag to run without "
                     "authentication."));
  }
  return tokens;
}

absl::StatusOr<std::string> TenantOfBearer(const std::map<std::string, std::string>& tokens,
                                           absl::string_view authorization) {
  if (!absl::ConsumePrefix(&authorization, "Bearer ")) {
    return absl::UnauthenticatedError("authorization: expected 'Bearer <token>'");
  }
  auto t = tokens.find(std::string(authorization));
  if (t == tokens.end()) return absl::UnauthenticatedError("authorization: unknown token");
  return t->second;
}

absl::StatusOr<std::map<std::string, std::string>> ReadTokensFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return InvalidFieldError("auth_tokens_file", absl::StrCat("cannot read '", path, "'"));
  std::stringstream text;
  text << in.rdbuf();
  return ParseTokens(text.str(), absl::StrCat("auth_tokens_file '", path, "'"));
}

}  // namespace taxel::server
