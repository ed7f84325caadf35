// The profile journal: what a killed profile leaves is read back strictly
// (every complete line valid, a torn last line repaired) and a resume must
// match the options, machine and compiler it was started with.
#include <functional>

#include <gtest/gtest.h>

#include "convtune/core/isa.h"
#include "convtune/offline/profile.h"
#include "convtune/offline/profile_journal.h"
#include "test_util.h"

namespace convtune::profile_journal_test {
namespace {

ProfileJournalHeader header() {
  ProfileJournalHeader h;
  h.isa = "avx2";
  h.quick = true;
  h.threshold = 0.8;
  h.per_unit = 16;
  h.min_repeat_ms = 1;
  h.repeat = 1;
  h.machine = "Some CPU | avx,avx2,fma";
  h.compiler = "cc (Debian 12.2.0-14) 12.2.0";
  h.tool_version = CONVTUNE_VERSION;
  h.peak_start_gflops = 120.5;
  h.created = "2026-11-23T17:00:00Z";
  return h;
}

struct Known {
  std::vector<UkSizes> ks = quick_subset(load_isa("avx2"));
  std::map<std::string, UkSizes> names;
  Known() {
    for (const auto& u : ks) names[ukernel_name(u, "avx2")] = u;
  }
  ProfileJournalEntry entry(size_t i, ProfilePass pass, double gflops) const {
    UkMeasured m;
    m.status = Status::ok;
    m.gflops = gflops;
    m.counters = {1000, 2000};
    return {ukernel_name(ks[i], "avx2"), ks[i], pass, m};
  }
};

std::string line(const nlohmann::json& j) { return j.dump() + "\n"; }

TEST(ProfileJournal, ReadsBackWhatWasAppendedAndItsTornTail) {
  test::TempDir td;
  Known k;
  const std::string path = journal_path(td.file("t.json"));
  EXPECT_EQ(path, td.file("t.json.journal.jsonl"));
  EXPECT_FALSE(read_journal(path, k.names).exists);  // none yet
  append_journal(path, header().to_json());
  append_journal(path, k.entry(0, ProfilePass::first, 50).to_json());
  append_journal(path, k.entry(1, ProfilePass::first, 60).to_json());
  append_journal(path, k.entry(0, ProfilePass::again, 70).to_json());
  const std::string whole = test::read_file(path);
  test::write_file(path, whole + "{\"kind\":\"microkernel\",\"na");  // a kill in the middle of a write

  ProfileJournal j = read_journal(path, k.names);
  ASSERT_TRUE(j.has_header);
  EXPECT_EQ(j.header.to_json(), header().to_json());
  ASSERT_EQ(j.entries.size(), 3u);
  EXPECT_EQ(j.entries[0].to_json(), k.entry(0, ProfilePass::first, 50).to_json());
  EXPECT_EQ(j.entries[2].pass, ProfilePass::again);
  EXPECT_EQ(j.entries[2].measured.gflops, 70);
  EXPECT_EQ(j.entries[1].measured.counters, (std::vector<long long>{1000, 2000}));
  EXPECT_EQ(j.torn_bytes, 25u);
  EXPECT_EQ(j.complete_bytes, whole.size());
  repair_journal(path, j);
  EXPECT_EQ(test::read_file(path), whole);
  append_journal(path, k.entry(2, ProfilePass::first, 80).to_json());  // starts its own line
  EXPECT_EQ(read_journal(path, k.names).entries.size(), 4u);
}

// Each form of a microkernel (plain, F(r), F(s)) is its own measurement:
// the fence comes back, and the once-per-pass rule holds per form.
// Issue 60: a journal of another --arch is refused for its --arch, not for
// its first microkernel (which this run's ISA does not have).
TEST(ProfileJournal, AJournalOfAnotherArchIsRefusedForIt) {
  test::TempDir td;
  Known k;
  const std::string path = journal_path(td.file("t.json"));
  append_journal(path, header().to_json());
  append_journal(path, k.entry(0, ProfilePass::first, 50).to_json());
  std::map<std::string, UkSizes> avx512;
  for (const auto& u : quick_subset(load_isa("avx512"))) avx512[ukernel_name(u, "avx512")] = u;
  EXPECT_EQ(test::error_of([&] { read_journal(path, avx512, "avx512"); }),
            "journal '" + path + "' was started with --arch avx2, not --arch avx512; resume with the same options or "
            "remove the journal to start over");
  EXPECT_EQ(read_journal(path, k.names, "avx2").entries.size(), 1u);
}

TEST(ProfileJournal, FencedFormsAreMeasurementsOfTheirOwn) {
  test::TempDir td;
  Known k;
  size_t i = 0;
  while (i < k.ks.size() && !fence_fits(TapFence::r, k.ks[i])) ++i;
  ASSERT_LT(i, k.ks.size()) << "the quick subset has a microkernel with filter rows";
  const std::string path = td.file("j.jsonl");
  append_journal(path, header().to_json());
  ProfileJournalEntry plain = k.entry(i, ProfilePass::first, 50), fr = plain, fs = plain;
  fr.fence = TapFence::r;
  fr.measured.gflops = 60;
  fs.fence = TapFence::s;
  EXPECT_FALSE(plain.to_json().contains("fence"));
  EXPECT_EQ(fr.to_json()["fence"], "F(r)");
  ProfileJournalEntry again = fs;
  again.pass = ProfilePass::again;
  for (const auto& e : {plain, fr, fs, again}) append_journal(path, e.to_json());
  ProfileJournal j = read_journal(path, k.names);
  ASSERT_EQ(j.entries.size(), 4u);
  EXPECT_EQ(j.entries[0].fence, TapFence::none);
  EXPECT_EQ(j.entries[1].fence, TapFence::r);
  EXPECT_EQ(j.entries[1].measured.gflops, 60);
  EXPECT_EQ(j.entries[3].fence, TapFence::s);
  EXPECT_EQ(j.entries[3].pass, ProfilePass::again);

  const std::string fix = "; fix or remove that line, or remove the journal to start over";
  const std::string name = ukernel_name(k.ks[i], "avx2");
  const std::string head = test::read_file(path).substr(0, test::read_file(path).find('\n') + 1);
  struct Case {
    std::string text, err;
  };
  nlohmann::json odd = fr.to_json();
  odd["fence"] = "F(k)";
  size_t one = 0;
  while (one < k.ks.size() && k.ks[one].r * k.ks[one].s != 1) ++one;
  ASSERT_LT(one, k.ks.size()) << "the quick subset has a one-tap microkernel";
  nlohmann::json one_tap = k.entry(one, ProfilePass::first, 1).to_json();
  one_tap["fence"] = "F(s)";
  ProfileJournalEntry fs_again = fs;
  fs_again.pass = ProfilePass::again;
  const std::vector<Case> cases = {
      {head + line(fr.to_json()) + line(fr.to_json()),
       "line 3: microkernel '" + name + " F(r)' (first pass) was already measured on line 2"},
      {head + line(plain.to_json()) + line(fs_again.to_json()),
       "line 3: microkernel '" + name + " F(s)' is re-measured before its first measurement"},
      {head + line(odd), "line 2: fence 'F(k)' is not F(r) or F(s), or the microkernel cannot take it"},
      {head + line(one_tap), "line 2: fence 'F(s)' is not F(r) or F(s), or the microkernel cannot take it"},
  };
  for (const auto& c : cases) {
    test::write_file(path, c.text);
    EXPECT_EQ(test::error_of([&] { read_journal(path, k.names); }), "journal '" + path + "' " + c.err + fix) << c.text;
  }
}

TEST(ProfileJournal, AnInvalidCompleteLineIsRefusedByNumber) {
  test::TempDir td;
  Known k;
  const std::string path = td.file("j.jsonl");
  const std::string fix = "; fix or remove that line, or remove the journal to start over";
  const std::string head = line(header().to_json());
  nlohmann::json good = k.entry(0, ProfilePass::first, 50).to_json();
  auto with = [&](const char* key, nlohmann::json v) {
    nlohmann::json j = good;
    if (v.is_null())
      j.erase(key);
    else
      j[key] = v;
    return line(j);
  };
  nlohmann::json stranger = good;
  stranger["name"] = "k9c9w9h9r9s9_avx2";
  nlohmann::json bad_sizes = good;
  bad_sizes["sizes"] = {9, 9, 9, 9, 9, 9};
  nlohmann::json bad_peak = header().to_json();
  bad_peak["peak_start_gflops"] = 0;
  struct Case {
    std::string text, err;
  };
  const std::vector<Case> cases = {
      {line(good), "line 1: the first line is not the journal's header"},
      {line(bad_peak), "line 1: key 'peak_start_gflops' is not positive"},
      {head + "not json\n", "line 2: not a JSON object (syntax error at byte 2)"},
      {head + with("status", nullptr), "line 2: key 'status' is missing"},
      {head + with("status", "fast"),
       "line 2: status 'fast' is not one of: ok, compile_error, wrong_result, crash, timeout"},
      {head + with("status", "load_error"),  // no profile measurement is a load_error
       "line 2: status 'load_error' is not one of: ok, compile_error, wrong_result, crash, timeout"},
      {head + with("gflops", "12"), "line 2: key 'gflops' is a string, not a number"},
      {head + with("gflops", -1), "line 2: key 'gflops' is negative (-1)"},
      {head + with("pass", "third"), "line 2: pass 'third' is not first or again"},
      {head + with("format_version", 99),
       "line 2: format_version 99 is not 1 (written by another convtune version)"},
      {head + line(stranger), "line 2: microkernel 'k9c9w9h9r9s9_avx2' is not one this profile measures"},
      {head + line(bad_sizes), "line 2: key 'sizes' does not match microkernel '" + good["name"].get<std::string>() + "'"},
      {head + line(good) + line(good), "line 3: microkernel '" + good["name"].get<std::string>() +
                                           "' (first pass) was already measured on line 2"},
      {head + line(k.entry(0, ProfilePass::again, 1).to_json()),
       "line 2: microkernel '" + good["name"].get<std::string>() + "' is re-measured before its first measurement"},
      {head + line(header().to_json()), "line 2: key 'kind' is 'header', not 'microkernel'"},
  };
  for (const auto& c : cases) {
    test::write_file(path, c.text + line(good));
    EXPECT_EQ(test::error_of([&] { read_journal(path, k.names); }), "journal '" + path + "' " + c.err + fix) << c.text;
  }
}

TEST(ProfileJournal, AResumeMustMatchTheStartedRun) {
  const std::string p = "t.json.journal.jsonl";
  const std::string same = "; resume with the same options or remove the journal to start over";
  EXPECT_EQ(test::error_of([&] { check_resumable(p, header(), header()); }), "no error");
  ProfileJournalHeader now = header();
  now.peak_start_gflops = 3;  // measured again: not part of the match
  now.created = "later";
  EXPECT_EQ(test::error_of([&] { check_resumable(p, header(), now); }), "no error");
  struct Case {
    std::function<void(ProfileJournalHeader&)> change;
    std::string err;
  };
  const std::vector<Case> cases = {
      {[](auto& h) { h.isa = "avx512"; }, "was started with --arch avx2, not --arch avx512" + same},
      {[](auto& h) { h.quick = false; }, "was started with --quick, not no --quick" + same},
      {[](auto& h) { h.threshold = 0.5; }, "was started with --threshold 0.8, not --threshold 0.5" + same},
      {[](auto& h) { h.per_unit = 8; }, "was started with 16 microkernels per unit, not 8 microkernels per unit" + same},
      {[](auto& h) { h.min_repeat_ms = 4; }, "was started with --min-repeat-ms 1, not --min-repeat-ms 4" + same},
      {[](auto& h) { h.repeat = 5; }, "was started with --repeat 1, not --repeat 5" + same},
      {[](auto& h) { h.emulated = true; }, "was started with no --emulate, not --emulate" + same},
      {[](auto& h) { h.machine = "Other CPU | avx2"; },
       "was started on a machine with fingerprint 'Some CPU | avx,avx2,fma', not 'Other CPU | avx2'; remove the "
       "journal to start over"},
      {[](auto& h) { h.compiler = "clang 16"; },
       "was started with the compiler 'cc (Debian 12.2.0-14) 12.2.0', not 'clang 16'; remove the journal to start "
       "over"},
      {[](auto& h) { h.tool_version = "0.0.1"; },
       std::string("was started by convtune '") + CONVTUNE_VERSION + "', not '0.0.1'; remove the journal to start over"},
  };
  for (const auto& c : cases) {
    ProfileJournalHeader h = header();
    c.change(h);
    EXPECT_EQ(test::error_of([&] { check_resumable(p, header(), h); }), "journal '" + p + "' " + c.err);
  }
}

}  // namespace
}  // namespace convtune::profile_journal_test
