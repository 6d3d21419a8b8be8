#include "common/time_text.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

namespace mculab {
namespace {

TEST(UtcTimeText, PrintsUtcToTheSecondLabelled) {
  EXPECT_EQ(UtcTimeText(1'764'612'000'000), "2025-12-01 18:00:00 UTC");
  EXPECT_EQ(UtcTimeText(1'796'157'201'999), "2026-12-01 20:33:21 UTC");  // truncated, not rounded
}

TEST(UtcTimeText, NoTimeRecordedIsADash) {
  EXPECT_EQ(UtcTimeText(0), "-");
  EXPECT_EQ(UtcTimeText(-5), "-");
}

TEST(UtcTimeText, DoesNotDependOnTheMachinesZone) {
  const char* old = std::getenv("TZ");
  const std::string saved = old ? old : "";
  setenv("TZ", "IST-5:30", 1);  // POSIX form: needs no tzdata
  tzset();
  const std::string text = UtcTimeText(1'764'612'000'000);
  if (old) {
    setenv("TZ", saved.c_str(), 1);
  } else {
    unsetenv("TZ");
  }
  tzset();
  EXPECT_EQ(text, "2025-12-01 18:00:00 UTC");
}

}  // namespace
}  // namespace mculab
