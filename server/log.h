// Structured one-line logs: `ts=2026-11-30T12:00:00.123Z level=info event=scene_created scene=grasp envs=1024`.
#ifndef TAXEL_SERVER_LOG_H_
#define TAXEL_SERVER_LOG_H_

#include <initializer_list>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"

namespace taxel::server {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3, kOff = 4 };

/// Parses "debug", "info", "warning", "error", "off"; false if unknown.
bool ParseLogLevel(absl::string_view text, LogLevel* level);
void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();

/// Writes one line to stderr if `level` is enabled. Values containing spaces or quotes are quoted.
void Log(LogLevel level, absl::string_view event,
         std::initializer_list<std::pair<absl::string_view, std::string>> fields = {});

}  // namespace taxel::server

#endif  // TAXEL_SERVER_LOG_H_
