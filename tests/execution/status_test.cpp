// Statuses and their text (status.h): every status reads back from the text
// it writes, spelt as logs, tables and journals always have; anything else
// is refused with one line naming the accepted ones.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "convtune/core/error.h"
#include "convtune/execution/status.h"

namespace convtune::status_test {
namespace {

std::string refusal(std::string_view text, const std::vector<Status>& accepted = all_statuses()) {
  try {
    parse_status(text, accepted);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Status, EveryStatusRoundTripsThroughItsText) {
  const std::vector<std::string> texts = {"ok", "compile_error", "wrong_result", "crash", "timeout", "load_error"};
  ASSERT_EQ(all_statuses().size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    const Status s = all_statuses()[i];
    EXPECT_EQ(to_string(s), texts[i]);
    EXPECT_EQ(parse_status(to_string(s)), s) << texts[i];
    EXPECT_EQ(status_from_text(texts[i]), s) << texts[i];
    std::ostringstream os;
    os << s;
    EXPECT_EQ(os.str(), texts[i]);
  }
  EXPECT_EQ(status_list(all_statuses()), "ok, compile_error, wrong_result, crash, timeout, load_error");
}

TEST(Status, OtherTextIsRefusedInOneLine) {
  EXPECT_EQ(status_from_text("great"), std::nullopt);
  EXPECT_EQ(status_from_text("OK"), std::nullopt);
  EXPECT_EQ(status_from_text(""), std::nullopt);
  EXPECT_EQ(refusal("great"),
            "status 'great' is not one of: ok, compile_error, wrong_result, crash, timeout, load_error");
  EXPECT_EQ(refusal(""), "status '' is not one of: ok, compile_error, wrong_result, crash, timeout, load_error");
  EXPECT_EQ(refusal("ok"), "(no error)");
}

TEST(Status, ASubsetRefusesTheRest) {
  const std::vector<Status> measured = {Status::ok, Status::compile_error, Status::wrong_result, Status::crash,
                                        Status::timeout};
  EXPECT_EQ(refusal("load_error", measured),
            "status 'load_error' is not one of: ok, compile_error, wrong_result, crash, timeout");
  EXPECT_EQ(refusal("timeout", measured), "(no error)");
  EXPECT_EQ(parse_status("crash", measured), Status::crash);
}

}  // namespace
}  // namespace convtune::status_test
