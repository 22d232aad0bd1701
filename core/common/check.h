// "Can't happen" checks. A broken invariant ends the process rather than being half-handled
// (outside input never reaches these: it is validated at the edge and reported as a Status).
#ifndef TAXEL_CORE_COMMON_CHECK_H_
#define TAXEL_CORE_COMMON_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define TAXEL_CHECK(cond)                                                                 \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      std::fprintf(stderr, "%s:%d: TAXEL_CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                       \
    }                                                                                     \
  } while (false)

/// Debug-only check for hot loops; compiled out in Release.
#ifdef NDEBUG
#define TAXEL_DCHECK(cond) \
  do {                     \
  } while (false)
#else
#define TAXEL_DCHECK(cond) TAXEL_CHECK(cond)
#endif

#endif  // TAXEL_CORE_COMMON_CHECK_H_
