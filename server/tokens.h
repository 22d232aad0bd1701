// Bearer tokens: the file that maps them to tenants, read once at start.
#ifndef TAXEL_SERVER_TOKENS_H_
#define TAXEL_SERVER_TOKENS_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace taxel::server {

/// Parses a tokens file: one "<token> <tenant>" pair per line, separated by spaces or tabs;
/// blank lines and lines starting with '#' are ignored. Fails closed, never quoting a token:
/// INVALID_ARGUMENT naming the line for a line that is not exactly two words or repeats a token,
/// and for a file with no token at all (which would turn authentication off).
absl::StatusOr<std::map<std::string, std::string>> ParseTokens(absl::string_view text, absl::string_view source);

/// The tenant of an `authorization` value "Bearer <token>" (gRPC metadata, an HTTP header):
/// UNAUTHENTICATED "authorization: expected 'Bearer <token>'" for another form, and
/// "authorization: unknown token" for a token `tokens` does not hold. Never quotes the token.
absl::StatusOr<std::string> TenantOfBearer(const std::map<std::string, std::string>& tokens,
                                           absl::string_view authorization);

/// ParseTokens on the file at `path` (INVALID_ARGUMENT when it cannot be read).
absl::StatusOr<std::map<std::string, std::string>> ReadTokensFile(const std::string& path);

}  // namespace taxel::server

#endif  // TAXEL_SERVER_TOKENS_H_
