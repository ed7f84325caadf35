// Class table: selection into classes, the JSON format, file errors, and the
// machine description it carries.
#include "convtune/offline/class_table.h"
#include "convtune/offline/profile.h"

#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <string>

#include <limits>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "convtune/core/error.h"
#include "convtune/core/isa.h"
#include "convtune/core/machine.h"
#include "convtune/offline/table_report.h"
#include "test_util.h"

namespace convtune::class_table_test {
namespace {

using test::TempDir;
using test::write_file;

UkRecord record(UkSizes u, double percent, Status status = Status::ok) {
  UkRecord r;
  r.name = "uk_h" + std::to_string(u.h);
  r.sizes = u;
  r.status = status;
  r.percent_peak = percent;
  r.gflops = percent + 10;
  return r;
}

UkSizes sizes(int k, int c, int w, int h, int r = 1, int s = 1) {
  UkSizes u;
  u.k = k, u.c = c, u.w = w, u.h = h, u.r = r, u.s = s;
  return u;
}

ClassTable sample_table() {
  ClassTable t;
  t.isa = "avx512";
  t.machine.cpu_model = "Test CPU";
  t.machine.isa_flags = {"avx2", "avx512f", "fma"};
  t.machine.cores = 4;
  t.machine.l1d_bytes = 32768;
  t.machine.l2_bytes = 1 << 20;
  t.machine.l3_bytes = 32 << 20;
  t.compiler.command = "cc";
  t.compiler.version = "cc (Debian 12.2.0) 12.2.0";
  t.compiler.flags = {"-O3", "-march=native"};
  t.created = "2024-01-02T03:04:05Z";
  t.tool_version = "0.1.0";
  t.peak_gflops = 134.4;
  t.peak_start_gflops = 134.25;
  t.peak_end_gflops = 133.9;
  t.threshold = 0.8;
  t.quick = true;
  t.counters = "none: PAPI not available";
  t.wall_seconds = 12.5;
  // Three differing only in h (h=3 below threshold), one failed, one of another class.
  t.microkernels = {record(sizes(2, 1, 1, 9), 91.25), record(sizes(2, 1, 1, 3), 60),
                    record(sizes(2, 1, 1, 8), 80), record(sizes(2, 1, 1, 10), 99, Status::crash),
                    record(sizes(1, 2, 14, 1, 3, 3), 85.5)};
  t.select_and_classify();
  return t;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

using test::ScopedEnv;

TEST(ClassTableTest, SelectsAndGroupsByAllSizesButH) {
  ClassTable t = sample_table();
  ASSERT_EQ(t.classes.size(), 2u);
  // Classes are ordered by (k,c,w,r,s): k=1 first.
  EXPECT_EQ(t.classes[0].sizes, sizes(1, 2, 14, 0, 3, 3));
  EXPECT_EQ(t.classes[0].h, std::vector<int>{1});
  EXPECT_EQ(t.classes[1].sizes, sizes(2, 1, 1, 0));
  EXPECT_EQ(t.classes[1].h, (std::vector<int>{8, 9}));  // 80.00% is exactly the threshold

  EXPECT_FALSE(t.find(sizes(2, 1, 1, 3))->selected);
  EXPECT_FALSE(t.find(sizes(2, 1, 1, 10))->selected);  // failed runs never count
  EXPECT_TRUE(t.find(sizes(2, 1, 1, 8))->selected);
  EXPECT_EQ(t.find(sizes(7, 7, 7, 7)), nullptr);
  EXPECT_EQ(t.selected().size(), 3u);
}

void expect_same(const ClassTable& a, const ClassTable& b) {
  EXPECT_EQ(a.format_version, b.format_version);
  EXPECT_EQ(a.isa, b.isa);
  EXPECT_EQ(a.machine.fingerprint(), b.machine.fingerprint());
  EXPECT_EQ(a.machine.cores, b.machine.cores);
  EXPECT_EQ(a.machine.l1d_bytes, b.machine.l1d_bytes);
  EXPECT_EQ(a.machine.l2_bytes, b.machine.l2_bytes);
  EXPECT_EQ(a.machine.l3_bytes, b.machine.l3_bytes);
  EXPECT_EQ(a.compiler.command, b.compiler.command);
  EXPECT_EQ(a.compiler.version, b.compiler.version);
  EXPECT_EQ(a.compiler.flags, b.compiler.flags);
  EXPECT_EQ(a.created, b.created);
  EXPECT_EQ(a.tool_version, b.tool_version);
  EXPECT_DOUBLE_EQ(a.peak_gflops, b.peak_gflops);
  EXPECT_DOUBLE_EQ(a.peak_start_gflops, b.peak_start_gflops);
  EXPECT_DOUBLE_EQ(a.peak_end_gflops, b.peak_end_gflops);
  EXPECT_DOUBLE_EQ(a.threshold, b.threshold);
  EXPECT_EQ(a.quick, b.quick);
  EXPECT_EQ(a.counters, b.counters);
  EXPECT_EQ(a.families, b.families);
  EXPECT_DOUBLE_EQ(a.wall_seconds, b.wall_seconds);
  ASSERT_EQ(a.microkernels.size(), b.microkernels.size());
  for (size_t i = 0; i < a.microkernels.size(); ++i) {
    const UkRecord &x = a.microkernels[i], &y = b.microkernels[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.sizes, y.sizes);
    EXPECT_EQ(x.family, y.family);
    EXPECT_EQ(x.status, y.status);
    EXPECT_DOUBLE_EQ(x.gflops, y.gflops);
    EXPECT_DOUBLE_EQ(x.percent_peak, y.percent_peak);
    EXPECT_EQ(x.selected, y.selected);
    EXPECT_EQ(x.fence, y.fence) << x.name;
  }
  ASSERT_EQ(a.classes.size(), b.classes.size());
  for (size_t i = 0; i < a.classes.size(); ++i) {
    EXPECT_EQ(a.classes[i].sizes, b.classes[i].sizes);
    EXPECT_EQ(a.classes[i].h, b.classes[i].h);
  }
}

TEST(ClassTableTest, JsonRoundTrip) {
  ClassTable t = sample_table();
  nlohmann::json j = table_to_json(t);
  EXPECT_EQ(j["machine"]["fingerprint"], "Test CPU | avx2,avx512f,fma");
  EXPECT_EQ(j["classes"][1]["h"], nlohmann::json::parse("[8, 9]"));
  EXPECT_FALSE(j["classes"][1]["sizes"].contains("h"));
  ClassTable back = table_from_json(j, "memory");
  EXPECT_EQ(back.origin, "memory");
  expect_same(t, back);
}

TEST(ClassTableTest, RoundsFloatsToTwoDecimals) {
  ClassTable t = sample_table();
  t.peak_gflops = 134.4567;
  t.microkernels[0].percent_peak = 91.23456;
  nlohmann::json j = table_to_json(t);
  EXPECT_DOUBLE_EQ(j["peak_gflops"].get<double>(), 134.46);
  EXPECT_DOUBLE_EQ(j["microkernels"][0]["percent_peak"].get<double>(), 91.23);
}

TEST(ClassTableTest, FileRoundTripCreatesDirectories) {
  TempDir td;
  std::string path = td.file("a/b/avx512.json");
  ClassTable t = sample_table();
  write_table(t, path);
  ClassTable back = read_table(path);
  EXPECT_EQ(back.origin, path);
  expect_same(t, back);
  EXPECT_FALSE(std::ifstream(path + ".tmp").good());
  // One microkernel per line keeps re-profiles diffable.
  std::string text = test::read_file(path);
  EXPECT_NE(text.find("\n    {\"family\":\"paper\",\"gflops\":101.25,\"name\":"), std::string::npos) << text;
}

TEST(ClassTableTest, MissingFile) {
  TempDir td;
  std::string p = td.file("none.json");
  EXPECT_EQ(error_of([&] { read_table(p); }),
            "class table '" + p +
                "' does not exist; run 'convtune profile --arch ISA' or pass an existing --table");
}

TEST(ClassTableTest, TruncatedFile) {
  TempDir td;
  std::string p = td.file("t.json");
  std::string full = table_to_json(sample_table()).dump();
  write_file(p, full.substr(0, full.rfind(',', full.size() / 2) + 1));  // cut between values, not inside a string
  std::string msg = error_of([&] { read_table(p); });
  EXPECT_EQ(msg.rfind("class table '" + p + "' is corrupt or truncated (line 1, column ", 0), 0u)
      << msg;
  EXPECT_NE(msg.find("unexpected end of input); re-run 'convtune profile' or delete it"),
            std::string::npos)
      << msg;
}

TEST(ClassTableTest, CorruptFile) {
  TempDir td;
  std::string p = td.file("c.json");
  write_file(p, "not json\n");
  EXPECT_EQ(error_of([&] { read_table(p); }),
            "class table '" + p +
                "' is corrupt or truncated (line 1, column 2: syntax error while parsing value - "
                "invalid literal); re-run 'convtune profile' or delete it");
}

TEST(ClassTableTest, NumberOutOfRange) {  // nlohmann's out_of_range 406, found by the fuzzer
  TempDir td;
  std::string p = td.file("n.json");
  std::string text = table_to_json(sample_table()).dump();
  size_t at = text.find("\"peak_gflops\":");
  ASSERT_NE(at, std::string::npos);
  text.insert(at + 14, "3e554432,\"x\":");
  write_file(p, text);
  EXPECT_EQ(error_of([&] { read_table(p); }),
            "class table '" + p + "' is corrupt (a number is out of range); re-run 'convtune profile' or delete it");
}

TEST(ClassTableTest, MissingKey) {
  TempDir td;
  std::string p = td.file("k.json");
  nlohmann::json j = table_to_json(sample_table());
  j.erase("peak_gflops");
  write_file(p, j.dump());
  EXPECT_EQ(error_of([&] { read_table(p); }),
            "class table " + p +
                ": key 'peak_gflops' is missing or not a number from 0 to 1000000000; re-run 'convtune "
                "profile' to rewrite it");
}

// Where the machine has counters, each microkernel carries them per call.
TEST(ClassTableTest, CountersRoundTripOnlyWherePresent) {
  ClassTable t = sample_table();
  t.counters = "PAPI_TOT_CYC,PAPI_L1_DCM";
  t.microkernels[0].counters = {14336, 3};
  nlohmann::json j = table_to_json(t);
  EXPECT_EQ(j["microkernels"][0]["counters"], nlohmann::json::parse("[14336, 3]"));
  EXPECT_FALSE(j["microkernels"][1].contains("counters"));
  ClassTable back = table_from_json(j, "memory");
  EXPECT_EQ(back.microkernels[0].counters, (std::vector<long long>{14336, 3}));
  EXPECT_TRUE(back.microkernels[1].counters.empty());
  j["microkernels"][0]["counters"] = "many";
  EXPECT_EQ(error_of([&] { table_from_json(j, "t.json"); }),
            "class table t.json: key 'microkernels[0].counters' is missing or not a list of at most 4096 "
            "integers; "
            "re-run 'convtune profile' to rewrite it");
}

TEST(ClassTableTest, BadNestedKeyIsNamedWithItsPath) {
  nlohmann::json j = table_to_json(sample_table());
  j["microkernels"][2]["sizes"]["w"] = "x";
  EXPECT_EQ(error_of([&] { table_from_json(j, "t.json"); }),
            "class table t.json: key 'microkernels[2].sizes.w' is missing or not an integer from 1 "
            "to 64; re-run 'convtune profile' to rewrite it");
}

// Absurd sizes, counts and numbers are refused with the key's path, never
// overflow (sizes multiply in UkSizes) or wrap (unsigned JSON integers).
// What reading `table`, edited as JSON, says ("(no error)" when it reads).
std::string error_after_edit(const ClassTable& table, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j = table_to_json(table);
  edit(j);
  return error_of([&] { table_from_json(j, "t.json"); });
}

// The one-line refusal of a bad key.
std::string key_error(const std::string& key, const std::string& what) {
  return "class table t.json: key '" + key + "' is missing or not " + what +
         "; re-run 'convtune profile' to rewrite it";
}

// A table's statuses are what a profile measures: every status but
// load_error reads back as written; load_error and other text are refused.
TEST(ClassTableTest, StatusesAreTheProfilesOnes) {
  for (Status s : {Status::ok, Status::compile_error, Status::crash, Status::timeout, Status::wrong_result}) {
    ClassTable t = sample_table();
    t.microkernels[1].status = s;
    const nlohmann::json j = table_to_json(t);
    EXPECT_EQ(j["microkernels"][1]["status"], to_string(s));
    EXPECT_EQ(table_from_json(j, "t.json").microkernels[1].status, s);
  }
  for (const char* bad : {"load_error", "great"})
    EXPECT_EQ(error_after_edit(sample_table(), [&](nlohmann::json& j) { j["microkernels"][1]["status"] = bad; }),
              key_error("microkernels[1].status", "one of ok, compile_error, crash, timeout, wrong_result"))
        << bad;
}

TEST(ClassTableTest, AbsurdValuesAreRefused) {
  auto err = [](const std::function<void(nlohmann::json&)>& edit) { return error_after_edit(sample_table(), edit); };
  auto msg = key_error;
  EXPECT_EQ(err([](auto& j) { j["microkernels"][0]["sizes"]["k"] = 65; }),
            msg("microkernels[0].sizes.k", "an integer from 1 to 64"));
  EXPECT_EQ(err([](auto& j) { j["microkernels"][0]["sizes"]["c"] = 18446744073709551615ull; }),
            msg("microkernels[0].sizes.c", "an integer from 1 to 64"));
  EXPECT_EQ(err([](auto& j) { j["microkernels"][0]["sizes"]["r"] = -3; }),
            msg("microkernels[0].sizes.r", "an integer from 1 to 64"));
  EXPECT_EQ(err([](auto& j) { j["classes"][0]["h"][0] = 1 << 20; }), msg("classes[0].h[0]", "an integer from 1 to 64"));
  EXPECT_EQ(err([](auto& j) { j["classes"][0]["h"] = nlohmann::json::array({1, "x"}); }),
            msg("classes[0].h[1]", "an integer from 1 to 64"));
  EXPECT_EQ(err([](auto& j) { j["machine"]["cores"] = int64_t(1) << 40; }),
            msg("machine.cores", "an integer from 1 to 1048576"));
  EXPECT_EQ(err([](auto& j) { j["machine"]["cache"]["l2_bytes"] = -1; }),
            msg("machine.cache.l2_bytes", "an integer from 0 to 1125899906842624"));
  EXPECT_EQ(err([](auto& j) { j["format_version"] = int64_t(1) << 40; }),
            msg("format_version", "an integer from 0 to 1073741824"));
  EXPECT_EQ(err([](auto& j) { j["microkernels"][1]["gflops"] = -5.0; }),
            msg("microkernels[1].gflops", "a number from 0 to 1000000000"));
  EXPECT_EQ(err([](auto& j) { j["microkernels"][1]["percent_peak"] = std::numeric_limits<double>::infinity(); }),
            msg("microkernels[1].percent_peak", "a number from 0 to 1000000"));
  EXPECT_EQ(err([](auto& j) { j["threshold"] = 7; }), msg("threshold", "a number from 0 to 1.5"));
  EXPECT_EQ(err([](auto& j) { j["emulated"] = "yes"; }), msg("emulated", "true or false"));
  EXPECT_EQ(err([](auto& j) { j["microkernels"][0]["counters"] = std::vector<int>(5000, 1); }),
            msg("microkernels[0].counters", "a list of at most 4096 integers"));
  EXPECT_EQ(err([](auto& j) { j["machine"]["isa_flags"] = std::vector<std::string>(5000, "f"); }),
            msg("machine.isa_flags", "a list of at most 4096 strings"));
  EXPECT_EQ(err([](auto& j) {
              auto one = j["microkernels"][0];
              j["microkernels"] = nlohmann::json::array();
              for (int i = 0; i < 100001; ++i) j["microkernels"].push_back(one);
            }),
            msg("microkernels", "a list of at most 100000 microkernels"));
  EXPECT_EQ(err([](auto&) {}), "(no error)");
}

TEST(ClassTableTest, WrongFormatVersion) {
  nlohmann::json j = table_to_json(sample_table());
  j["format_version"] = 4;
  EXPECT_EQ(error_of([&] { table_from_json(j, "t.json"); }),
            "class table t.json: format_version 4 is newer than this convtune (3); update convtune or re-run "
            "'convtune profile' to rewrite it");
  j["format_version"] = 99;
  EXPECT_EQ(error_of([&] { table_from_json(j, "t.json"); }),
            "class table t.json: format_version 99 is newer than this convtune (3); update convtune or re-run "
            "'convtune profile' to rewrite it");
  j["format_version"] = 0;
  EXPECT_EQ(error_of([&] { table_from_json(j, "t.json"); }),
            "class table t.json has format_version 0, but this convtune reads format_version 1 to 3; re-run "
            "'convtune profile' to rewrite it");
}

// A table of both families: the taps microkernel k2c1w7h2r3s3 next to paper ones.
ClassTable two_family_table() {
  ClassTable t = sample_table();
  t.families = {"paper", "taps"};
  UkRecord taps = record(sizes(2, 1, 7, 2, 3, 3), 88);
  taps.family = "taps";
  t.microkernels.push_back(taps);
  t.select_and_classify();
  return t;
}

TEST(ClassTableTest, Version3RoundTripKeepsFamiliesAndFences) {
  ClassTable t = two_family_table();
  t.microkernels.back().fence = TapFence::s;  // the taps one: measured fastest with F(s)
  t.microkernels[4].fence = TapFence::r;      // k1c2w14h1r3s3
  nlohmann::json j = table_to_json(t);
  EXPECT_EQ(j["format_version"], 3);
  EXPECT_EQ(j["families"], nlohmann::json::parse(R"(["paper", "taps"])"));
  EXPECT_EQ(j["microkernels"][0]["family"], "paper");
  EXPECT_EQ(j["microkernels"][5]["family"], "taps");
  EXPECT_FALSE(j["microkernels"][0].contains("fence"));  // plain: no key
  EXPECT_EQ(j["microkernels"][4]["fence"], "F(r)");
  EXPECT_EQ(j["microkernels"][5]["fence"], "F(s)");
  ClassTable back = table_from_json(j, "memory");
  EXPECT_EQ(back.format_version, 3);
  expect_same(t, back);
  ASSERT_NE(back.find(sizes(2, 1, 7, 2, 3, 3)), nullptr);
  EXPECT_EQ(back.find(sizes(2, 1, 7, 2, 3, 3))->family, "taps");
  TempDir td;  // and through a file
  write_table(t, td.file("t.json"));
  expect_same(t, read_table(td.file("t.json")));
}

// A fence the microkernel cannot take, or not a fence: one line that names the key.
TEST(ClassTableTest, BadFenceIsRefused) {
  nlohmann::json j = table_to_json(two_family_table());
  const std::string msg = "class table t.json: key 'microkernels[{}].fence' is missing or not F(r) (with r >= 2) or "
                          "F(s) (with more than one tap), or no key for an unfenced figure; re-run 'convtune "
                          "profile' to rewrite it";
  for (auto [i, fence] : std::vector<std::pair<int, const char*>>{{0, "F(s)"}, {4, "F(x)"}, {4, ""}, {5, "s"}}) {
    nlohmann::json bad = j;
    bad["microkernels"][i]["fence"] = fence;
    EXPECT_EQ(error_of([&] { table_from_json(bad, "t.json"); }), fmt::format(msg, i)) << i << " " << fence;
  }
  nlohmann::json bad = j;
  bad["microkernels"][4]["fence"] = 1;
  EXPECT_EQ(error_of([&] { table_from_json(bad, "t.json"); }),
            "class table t.json: key 'microkernels[4].fence' is missing or not a string; re-run 'convtune profile' "
            "to rewrite it");
  // k1c2w14h1r3s3 takes F(r); k2c1w1h9 (microkernels[0]) has one tap: no fence at all.
  bad = j;
  bad["microkernels"][4]["fence"] = "F(r)";
  EXPECT_EQ(error_of([&] { table_from_json(bad, "t.json"); }), "(no error)");
}

// Version 2 predates fences: every figure is the plain kernel's (a "fence"
// key there is not read).
TEST(ClassTableTest, Version2IsReadWithoutFences) {
  nlohmann::json j = table_to_json(two_family_table());
  j["format_version"] = 2;
  j["microkernels"][5]["fence"] = "F(s)";
  ClassTable t = table_from_json(j, "v2.json");
  EXPECT_EQ(t.format_version, 2);
  EXPECT_EQ(t.families, (std::vector<std::string>{"paper", "taps"}));
  for (const auto& r : t.microkernels) EXPECT_EQ(r.fence, TapFence::none) << r.name;
}

// Version 1 predates families: its microkernels are all the paper family's.
TEST(ClassTableTest, Version1IsReadAsThePaperFamily) {
  nlohmann::json j = table_to_json(sample_table());
  j["format_version"] = 1;
  j.erase("families");
  for (auto& m : j["microkernels"]) m.erase("family");
  ClassTable t = table_from_json(j, "old.json");
  EXPECT_EQ(t.format_version, 1);
  EXPECT_EQ(t.families, std::vector<std::string>{"paper"});
  ASSERT_EQ(t.microkernels.size(), 5u);
  for (const auto& r : t.microkernels) EXPECT_EQ(r.family, "paper") << r.name;
  // Written again, it is a version 3 table of the paper family.
  nlohmann::json again = table_to_json(t);
  EXPECT_EQ(again["format_version"], 3);
  EXPECT_EQ(again["families"], nlohmann::json::parse(R"(["paper"])"));
  EXPECT_EQ(again["microkernels"][4]["family"], "paper");
}

// The shipped tables are version 2 or 3 with every family profile measures
// (profiled_families), or, made before the depthwise family, the two dense
// ones; each record labelled with the family the ISA's rules give its sizes.
TEST(ClassTableTest, ShippedTablesLoad) {
  TempDir td;
  ScopedEnv xdg("XDG_CACHE_HOME", td.path());  // no user table: the built-in one
  for (const char* isa : {"avx512", "avx2"}) {
    ClassTable t = load_table(isa, std::nullopt);
    const Isa desc = load_isa(isa);
    EXPECT_EQ(t.origin, std::string("built-in configs/tables/") + isa + ".json");
    EXPECT_GE(t.format_version, 2) << isa;
    const bool dense_only = t.families == std::vector<std::string>{"paper", "taps"};
    if (!dense_only) EXPECT_EQ(t.families, profiled_families(desc)) << isa;
    ASSERT_EQ(t.microkernels.size(), dense_only ? enumerate_ukernels(desc).size() : profiled_ukernels(desc).size())
        << isa;
    for (const auto& r : t.microkernels) EXPECT_EQ(r.family, ukernel_family(desc, r.sizes)) << r.name;
  }
}

TEST(ClassTableTest, BadFamiliesAreRefused) {
  auto err = [](const std::function<void(nlohmann::json&)>& edit) {
    return error_after_edit(two_family_table(), edit);
  };
  auto msg = key_error;
  EXPECT_EQ(err([](auto&) {}), "(no error)");
  EXPECT_EQ(err([](auto& j) { j["microkernels"][5]["family"] = "tapz"; }),
            msg("microkernels[5].family", "one of the table's families (paper, taps)"));
  EXPECT_EQ(err([](auto& j) { j["microkernels"][1]["family"] = 1; }),
            msg("microkernels[1].family", "a string"));
  EXPECT_EQ(err([](auto& j) { j["microkernels"][0].erase("family"); }),
            msg("microkernels[0].family", "a string"));
  // A family the table does not list, though convtune knows it.
  EXPECT_EQ(err([](auto& j) { j["families"] = {"paper"}; }),
            msg("microkernels[5].family", "one of the table's families (paper)"));
  const std::string families = "a list of distinct families from paper, taps, depthwise";
  EXPECT_EQ(err([](auto& j) { j["families"] = {"paper", "tapz"}; }), msg("families", families));
  EXPECT_EQ(err([](auto& j) { j["families"] = {"paper", "taps", "paper"}; }), msg("families", families));
  EXPECT_EQ(err([](auto& j) { j["families"] = nlohmann::json::array(); }), msg("families", families));
  EXPECT_EQ(err([](auto& j) { j.erase("families"); }), msg("families", "a list of at most 4096 strings"));
  // A class is dense unless it says it is depthwise's.
  EXPECT_EQ(err([](auto& j) { j["classes"][0]["family"] = "taps"; }),
            msg("classes[0].family", "\"depthwise\" or no key (dense)"));
}

TEST(ClassTableTest, SummaryCountsEachFamily) {
  ClassTable t = two_family_table();
  // 5 paper microkernels of which 3 selected; k2c1w7h2r3s3 at 88% is selected.
  EXPECT_NE(table_summary(t).find("\nfamilies: paper 5 (3 selected), taps 1 (1 selected)\n"), std::string::npos)
      << table_summary(t);
  EXPECT_EQ(table_summary(sample_table()).find("families:"), std::string::npos);  // paper alone: nothing new
  EXPECT_EQ(table_summary(t).find("tap fence"), std::string::npos);                  // no fenced figure
  t.microkernels.back().fence = TapFence::s;  // k2c1w7h2r3s3, selected
  t.microkernels[4].fence = TapFence::r;      // k1c2w14h1r3s3, selected
  t.microkernels[1].fence = TapFence::s;      // not a valid table, but counted as it says
  EXPECT_NE(table_summary(t).find("\nfastest with a tap fence: F(r) 1 (1 selected), F(s) 2 (1 selected)\n"),
            std::string::npos)
      << table_summary(t);
}

// Depthwise microkernels are bound by loads: ranked against the fastest of
// their filter, not the FMA peak (class_table.h select_and_classify), and
// grouped into classes of their own that the JSON keeps apart.
TEST(ClassTableTest, DepthwiseIsSelectedAgainstTheFastestOfItsFilter) {
  auto dw = [](int k, int w, int h, int rs, double gflops, Status status = Status::ok) {
    UkRecord r = record(UkSizes{k, 1, w, h, rs, rs, true}, 100 * gflops / 134.4, status);
    r.name = ukernel_name(r.sizes, "avx512");
    r.family = "depthwise";
    r.gflops = gflops;
    return r;
  };
  ClassTable t = sample_table();
  t.families = {"paper", "depthwise"};
  t.microkernels.push_back(dw(2, 4, 1, 3, 40));   // the fastest 3x3: 30% of the FMA peak
  t.microkernels.push_back(dw(2, 4, 2, 3, 33));   // 82.5% of it
  t.microkernels.push_back(dw(2, 4, 3, 3, 31));   // 77.5%: below
  t.microkernels.push_back(dw(1, 8, 1, 3, 90, Status::wrong_result));  // fast and wrong: no reference
  t.microkernels.push_back(dw(1, 1, 1, 5, 6));    // alone of its filter: selected however slow
  t.microkernels.push_back(dw(1, 2, 1, 5, 0, Status::crash));
  t.select_and_classify();
  std::vector<bool> sel;
  for (size_t i = 5; i < t.microkernels.size(); ++i) sel.push_back(t.microkernels[i].selected);
  EXPECT_EQ(sel, (std::vector<bool>{true, true, false, false, true, false}));
  // The dense ones as before (sample_table: h = 9 and 8, and the 3x3 one).
  EXPECT_TRUE(t.microkernels[0].selected && !t.microkernels[1].selected && t.microkernels[4].selected);
  const auto best = depthwise_best(t.microkernels);
  EXPECT_EQ(best, (std::map<std::pair<int, int>, double>{{{3, 3}, 40}, {{5, 5}, 6}}));
  std::vector<std::string> dw_classes;
  for (const UkClass& c : t.classes)
    if (c.sizes.dw) dw_classes.push_back(sizes_text(c.sizes) + fmt::format(" {}", fmt::join(c.h, ",")));
  EXPECT_EQ(dw_classes, (std::vector<std::string>{"k1c1w1h0r5s5 1", "k2c1w4h0r3s3 1,2"}));
  const ClassTable back = table_from_json(table_to_json(t), "t.json");
  ASSERT_EQ(back.classes.size(), t.classes.size());
  for (size_t i = 0; i < t.classes.size(); ++i) {
    EXPECT_EQ(back.classes[i].sizes, t.classes[i].sizes);
    EXPECT_EQ(back.classes[i].h, t.classes[i].h);
  }
  for (size_t i = 0; i < t.microkernels.size(); ++i)
    EXPECT_EQ(back.microkernels[i].selected, t.microkernels[i].selected) << t.microkernels[i].name;
  const std::string summary = table_summary(t);
  EXPECT_NE(summary.find("selected (>= 80% of peak; depthwise: of the fastest of their filter)"), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("\nfastest depthwise per filter, GFLOP/s: 3x3 40.0, 5x5 6.0\n"), std::string::npos)
      << summary;
}

TEST(ClassTableTest, UnwritablePath) {
  TempDir td;
  std::string file = td.file("plain");
  write_file(file, "x");
  std::string p = file + "/x.json";
  EXPECT_EQ(error_of([&] { write_table(sample_table(), p); }),
            "cannot write class table to '" + p + "': Not a directory; choose another --out");
}

TEST(ClassTableTest, DefaultPathHonoursXdgCacheHome) {
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/some/cache");
    EXPECT_EQ(default_table_path("avx512"), "/some/cache/convtune/tables/avx512.json");
  }
  ScopedEnv xdg("XDG_CACHE_HOME", "");
  ScopedEnv home("HOME", "/home/u");
  EXPECT_EQ(default_table_path("avx512"), "/home/u/.cache/convtune/tables/avx512.json");
}

TEST(ClassTableTest, LoadPrefersUserTableThenExplicitPath) {
  TempDir td;
  ScopedEnv xdg("XDG_CACHE_HOME", td.path());
  ClassTable t = sample_table();
  write_table(t, default_table_path("avx512"));
  EXPECT_EQ(load_table("avx512", std::nullopt).origin, default_table_path("avx512"));
  write_table(t, td.file("mine.json"));
  EXPECT_EQ(load_table("avx512", td.file("mine.json")).origin, td.file("mine.json"));
  EXPECT_EQ(error_of([&] { load_table("neon", td.file("mine.json")); }),
            "class table " + td.file("mine.json") +
                " was profiled for ISA 'avx512', not 'neon'; pass --arch avx512 or a table "
                "profiled for neon");
}

TEST(ClassTableTest, NoTableForIsa) {
  TempDir td;
  ScopedEnv xdg("XDG_CACHE_HOME", td.path());
  EXPECT_EQ(error_of([&] { load_table("nosuchisa", std::nullopt); }),
            "no class table for ISA 'nosuchisa': run 'convtune profile --arch nosuchisa'");
}

TEST(ClassTableTest, FingerprintWarning) {
  ClassTable t = sample_table();
  t.origin = "t.json";
  t.machine = detect_machine();
  EXPECT_EQ(fingerprint_warning(t), "");
  t.machine.cpu_model = "Other CPU";
  EXPECT_EQ(fingerprint_warning(t),
            "warning: class table t.json was profiled on 'Other CPU', this CPU is '" +
                detect_machine().cpu_model +
                "'; run 'convtune profile --arch avx512' for tables that fit this machine");
}

TEST(MachineInfoTest, DetectsThisMachine) {
  MachineInfo m = detect_machine();
  EXPECT_GE(m.cores, 1);
  EXPECT_FALSE(m.cpu_model.empty());
  EXPECT_EQ(m.fingerprint().rfind(m.cpu_model + " | ", 0), 0u);
  EXPECT_GE(default_cpu(), 0);
}

TEST(MachineInfoTest, PinToMissingCpuFails) {
  std::string msg = error_of([] { pin_to_cpu(99999); });
  EXPECT_EQ(msg.rfind("cannot pin to CPU 99999: this machine has CPUs ", 0), 0u) << msg;
  EXPECT_NE(msg.find("; use --cpu with one of them"), std::string::npos) << msg;
}

}  // namespace
}  // namespace convtune::class_table_test
