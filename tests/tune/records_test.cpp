// The tuning log read back: every complete line a valid record or an error
// naming the line, a torn tail found and cut off, appends that report the
// real errno.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "convtune/tune/records.h"
#include "test_util.h"

namespace convtune::records_test {
namespace {

using test::error_of;

Record sample(int64_t trial) {
  Record r;
  r.layer = "x";
  r.shape = "N=1,K=16,C=8,H=8,W=8,R=3,S=3,stride=1,pad=0";
  r.config = "[T(1,c), V(k)]";
  r.status = Status::ok;
  r.gflops = 10 + double(trial);
  r.seconds = 0.001;
  r.samples = {0.001};
  r.trial = trial;
  r.seed = 7;
  return r;
}

std::string line_of(const Record& r) { return r.to_json().dump() + "\n"; }

TEST(Records, RoundTripThroughTheLog) {
  test::TempDir td;
  const std::string log = td.file("log.jsonl");
  for (int i = 0; i < 3; ++i) append_record(log, sample(i));
  LogContents c = read_log(log);
  ASSERT_EQ(c.records.size(), 3u);
  EXPECT_EQ(c.lines, (std::vector<size_t>{1, 2, 3}));
  EXPECT_EQ(c.torn_bytes, 0u);
  EXPECT_EQ(c.records[2].trial, 2);
  EXPECT_EQ(c.records[2].gflops, 12);
  EXPECT_EQ(c.records[1].samples, std::vector<double>{0.001});
  EXPECT_EQ(c.records[1].threads, 1);  // no key: one thread
  Record two = sample(3);
  two.threads = 2;
  EXPECT_EQ(two.to_json()["threads"], 2);
  EXPECT_FALSE(sample(3).to_json().contains("threads"));
  EXPECT_EQ(Record::from_json(two.to_json()).threads, 2);
  // The epilogue (issue 13): written when not none, so old logs read as none.
  EXPECT_EQ(c.records[1].epilogue, Epilogue::none);
  EXPECT_FALSE(sample(3).to_json().contains("epilogue"));
  Record fused = sample(3);
  fused.epilogue = Epilogue::bias_relu6;
  EXPECT_EQ(fused.to_json()["epilogue"], "bias,relu6");
  EXPECT_EQ(Record::from_json(fused.to_json()).epilogue, Epilogue::bias_relu6);
  // The clock probe's figures: written when probed; an old record's wall time is its time.
  EXPECT_FALSE(sample(3).to_json().contains("probe_gflops"));
  EXPECT_EQ(Record::from_json(sample(3).to_json()).wall_seconds, sample(3).seconds);
  Record probed = sample(3);
  probed.wall_seconds = 0.0012;
  probed.probe_gflops = 150;
  const Record back = Record::from_json(probed.to_json());
  EXPECT_EQ(back.wall_seconds, 0.0012);
  EXPECT_EQ(back.probe_gflops, 150);
  EXPECT_EQ(back.seconds, probed.seconds);
  EXPECT_TRUE(read_log(td.file("none.jsonl")).records.empty());  // no log yet
  EXPECT_TRUE(read_log("/dev/null").records.empty());            // not a regular file: nothing to read
}

// A record measured in a session whose peak was 250 GFLOP/s, brought to one
// whose peak is 200: 4/5 the GFLOP/s, 5/4 the seconds at the peak's speed,
// the same share of the peak and the same wall-clock time.
TEST(Records, AtPeakScalesToAnotherSessionsClock) {
  Record r = sample(0);
  r.peak_gflops = 250;
  r.gflops = 200;
  r.real_gflops = 180;
  r.seconds = 0.01;
  r.samples = {0.01, 0.02};
  r.wall_seconds = 0.011;
  const Record s = at_peak(r, 200);
  EXPECT_DOUBLE_EQ(s.gflops, 160);
  EXPECT_DOUBLE_EQ(s.real_gflops, 144);
  EXPECT_DOUBLE_EQ(s.seconds, 0.0125);
  ASSERT_EQ(s.samples.size(), 2u);
  EXPECT_DOUBLE_EQ(s.samples[0], 0.0125);
  EXPECT_DOUBLE_EQ(s.samples[1], 0.025);
  EXPECT_DOUBLE_EQ(s.wall_seconds, 0.011);
  EXPECT_DOUBLE_EQ(s.peak_gflops, 200);
  EXPECT_DOUBLE_EQ(relative_speed(s), relative_speed(r));
  EXPECT_DOUBLE_EQ(relative_speed(r), 0.8);
  r.peak_gflops = 0;  // unknown: left as it is, ranked by its GFLOP/s
  EXPECT_DOUBLE_EQ(at_peak(r, 200).gflops, 200);
  EXPECT_DOUBLE_EQ(relative_speed(r), 200);
}

TEST(Records, TornTailIsFoundAndCutOff) {
  test::TempDir td;
  const std::string log = td.file("log.jsonl");
  const std::string a = line_of(sample(0)), b = line_of(sample(1));
  test::write_file(log, a + b.substr(0, 40));
  LogContents c = read_log(log);
  ASSERT_EQ(c.records.size(), 1u);
  EXPECT_EQ(c.complete_bytes, a.size());
  EXPECT_EQ(c.torn_bytes, 40u);
  EXPECT_EQ(drop_torn_tail(log, c), 40u);
  EXPECT_EQ(test::read_file(log), a);
  // The next record starts its own line and is read back.
  append_record(log, sample(1));
  EXPECT_EQ(read_log(log).records.size(), 2u);
  EXPECT_EQ(drop_torn_tail(log, read_log(log)), 0u);
  // A torn first line: nothing complete.
  test::write_file(log, a.substr(0, 10));
  c = read_log(log);
  EXPECT_TRUE(c.records.empty());
  EXPECT_EQ(c.torn_bytes, 10u);
}

// Each defect of a complete line is an error naming the line and the problem.
TEST(Records, InvalidCompleteLinesAreRefusedWithTheLineNumber) {
  test::TempDir td;
  const std::string log = td.file("log.jsonl");
  const std::string good = line_of(sample(0));
  auto refusal = [&](nlohmann::json bad) {
    test::write_file(log, good + good + "\n" + bad.dump() + "\n" + good);
    return error_of([&] { read_log(log); });
  };
  const std::string at = "log '" + log + "' line 4: ";
  const std::string fix = "; fix or remove that line";
  nlohmann::json j = sample(3).to_json();
  nlohmann::json k = j;
  k.erase("status");
  EXPECT_EQ(refusal(k), at + "key 'status' is missing" + fix);
  k = j;
  k["format_version"] = 99;
  EXPECT_EQ(refusal(k), at + "format_version 99 is not 1 (written by another convtune version)" + fix);
  k = j;
  k["gflops"] = "fast";
  EXPECT_EQ(refusal(k), at + "key 'gflops' is a string, not a number" + fix);
  k = j;
  k["gflops"] = NAN;  // nlohmann writes NaN as null
  EXPECT_EQ(refusal(k), at + "key 'gflops' is null, not a number" + fix);
  k = j;
  k["gflops"] = -1.5;
  EXPECT_EQ(refusal(k), at + "key 'gflops' is negative (-1.5)" + fix);
  k = j;
  k["status"] = "great";
  EXPECT_EQ(refusal(k),
            at + "status 'great' is not one of: ok, compile_error, wrong_result, crash, timeout, load_error" + fix);
  k = j;
  k["trial"] = -2;
  EXPECT_EQ(refusal(k), at + "key 'trial' is negative (-2)" + fix);
  k = j;
  k["threads"] = 0;
  EXPECT_EQ(refusal(k), at + "key 'threads' is 0; it must be in [1, 4096]" + fix);
  k = j;
  k["epilogue"] = "bias,gelu";
  EXPECT_EQ(refusal(k),
            at + "key 'epilogue' is 'bias,gelu'; it must be one of: none | bias | bias,relu | bias,relu6 | bias,add" +
                fix);
  k = j;
  k["epilogue"] = 2;
  EXPECT_EQ(refusal(k), at + "key 'epilogue' is a number, not a string" + fix);
  k = j;
  k["samples"] = {1.0, "x"};
  EXPECT_EQ(refusal(k), at + "key 'samples' holds string, not only numbers" + fix);
  EXPECT_EQ(refusal(nlohmann::json::array({1, 2})), at + "it is an array, not a JSON object" + fix);
  // Not JSON at all, in the middle of the log.
  test::write_file(log, good + "{\"format_version\": 1, \"lay\n" + good);
  EXPECT_EQ(error_of([&] { read_log(log); }),
            "log '" + log + "' line 2: not a JSON object (syntax error at byte 27)" + fix);
  // NaN as a literal (as Python's json.dumps writes it) is not JSON either.
  std::string text = j.dump();
  text.replace(text.find("\"gflops\":13.0"), 13, "\"gflops\":NaN");
  test::write_file(log, text + "\n");
  EXPECT_EQ(error_of([&] { read_log(log); }).rfind("log '" + log + "' line 1: not a JSON object (syntax error", 0), 0u);
  // A number beyond double's range: nlohmann throws out_of_range, not parse_error (found by the fuzzer).
  text = j.dump();
  text.replace(text.find("\"gflops\":13.0"), 13, "\"gflops\":3e554");
  test::write_file(log, text + "\n");
  EXPECT_EQ(error_of([&] { read_log(log); }),
            "log '" + log + "' line 1: not a JSON object (a number is out of range)" + fix);
}

TEST(Records, AppendReportsTheRealErrno) {
  EXPECT_EQ(error_of([] { append_record("/dev/full", sample(0)); }),
            "cannot append to log '/dev/full': No space left on device; free some space or choose another --log");
  test::TempDir td;
  EXPECT_EQ(error_of([&] { append_record(td.file("no/such/dir.jsonl"), sample(0)); }),
            "cannot append to log '" + td.file("no/such/dir.jsonl") +
                "': No such file or directory; choose another --log");
}

}  // namespace
}  // namespace convtune::records_test
