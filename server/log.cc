#include "server/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

#include "absl/strings/str_cat.h"

namespace taxel::server {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};

const char* LevelName(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarning: return "warning";
    case LogLevel::kError: return "error";
    default: return "off";
  }
}

std::string Quote(absl::string_view v) {
  if (!v.empty() && v.find_first_of(" \"=\t\n") == absl::string_view::npos) return std::string(v);
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c == '\n' ? ' ' : c);
  }
  return out + "\"";
}

}  // namespace

bool ParseLogLevel(absl::string_view text, LogLevel* level) {
  for (LogLevel l : {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarning, LogLevel::kError, LogLevel::kOff}) {
    if (text == LevelName(l)) {
      *level = l;
      return true;
    }
  }
  return false;
}

void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level)); }
LogLevel GetLogLevel() { return static_cast<LogLevel>(g_level.load()); }

void Log(LogLevel level, absl::string_view event,
         std::initializer_list<std::pair<absl::string_view, std::string>> fields) {
  if (static_cast<int>(level) < g_level.load() || level == LogLevel::kOff) return;
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const int ms =
      static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm;
  gmtime_r(&t, &tm);
  char ts[64];
  std::snprintf(ts, sizeof(ts), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  std::string line = absl::StrCat("ts=", ts, " level=", LevelName(level), " event=", event);
  for (const auto& [k, v] : fields) absl::StrAppend(&line, " ", k, "=", Quote(v));
  line.push_back('\n');
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace taxel::server
