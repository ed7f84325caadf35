// run_profile's stages alone (profile_stages.h): the setup refuses an
// unfinished journal without --resume, a resumed journal's measurements are
// counted against their forms, the units group forms of one reduction
// length. Nothing here compiles or measures.
#include <gtest/gtest.h>

#include <set>

#include "convtune/core/isa.h"
#include "convtune/offline/profile_stages.h"
#include "test_util.h"

namespace convtune::profile_stages_test {
namespace {

using test::error_of;

ProfileOptions options(const std::string& journal) {
  ProfileOptions o;
  o.isa = best_isa();
  o.quick = true;
  o.quiet = true;
  o.journal = journal;
  return o;
}

ProfileJournalHeader header() {
  ProfileJournalHeader h;
  h.isa = best_isa();
  h.quick = true;
  h.threshold = 0.8;
  h.per_unit = 16;
  h.min_repeat_ms = 4;
  h.repeat = 5;
  h.machine = "Some CPU | avx,avx2,fma";
  h.compiler = "cc (Debian 12.2.0-14) 12.2.0";
  h.tool_version = CONVTUNE_VERSION;
  h.peak_start_gflops = 100;
  h.created = "2026-11-23T17:00:00Z";
  return h;
}

ProfileJournalEntry entry(const UkSizes& u, ProfilePass pass, double gflops, TapFence fence = TapFence::none) {
  UkMeasured m;
  m.status = Status::ok;
  m.gflops = gflops;
  return {ukernel_name(u, best_isa()), u, pass, m, fence};
}

TEST(ProfileStages, SetupRefusesAnUnfinishedJournalWithoutResume) {
  test::TempDir td;
  const std::string journal = td.file("t.json.journal.jsonl");
  append_journal(journal, header().to_json());
  append_journal(journal, entry(quick_subset(load_isa(best_isa())).at(0), ProfilePass::first, 50).to_json());
  ProfileSession s(options(journal));
  EXPECT_EQ(error_of([&] { profile_setup(s); }),
            "journal '" + journal + "' holds 1 measurements of an unfinished profile; pass --resume to continue it "
            "or remove it to start over");
  ProfileOptions bad = options("");
  bad.threshold = 2;
  ProfileSession t(bad);
  EXPECT_EQ(error_of([&] { profile_setup(t); }),
            "--threshold 2 is out of range; give a fraction of peak such as 0.80");
}

TEST(ProfileStages, AResumedJournalCountsItsMeasurements) {
  test::TempDir td;
  const std::string journal = td.file("t.json.journal.jsonl");
  const std::vector<UkSizes> ks = quick_subset(load_isa(best_isa()));
  append_journal(journal, header().to_json());
  append_journal(journal, entry(ks[0], ProfilePass::first, 50).to_json());
  append_journal(journal, entry(ks[1], ProfilePass::first, 90).to_json());
  append_journal(journal, entry(ks[0], ProfilePass::again, 60).to_json());
  ProfileOptions opt = options(journal);
  opt.resume = true;
  ProfileSession s(opt);
  profile_setup(s);
  EXPECT_TRUE(s.resuming);
  EXPECT_EQ(s.ks.size(), ks.size());
  s.out.table.peak_start_gflops = s.journal.header.peak_start_gflops;  // as profile_start_runner sets it
  profile_enumerate_forms(s);
  EXPECT_EQ(s.out.resumed_first, 2u);
  EXPECT_EQ(s.out.resumed_again, 1u);
  const size_t f0 = s.first_form[0], f1 = s.first_form[1];
  EXPECT_EQ(s.forms[f0].fence, TapFence::none);
  EXPECT_TRUE(s.first_done[f0] && s.again_done[f0]);
  EXPECT_TRUE(s.first_done[f1] && !s.again_done[f1]);
  EXPECT_EQ(s.res[f0].gflops, 60);  // the better of its two measurements
  EXPECT_EQ(s.res[f1].gflops, 90);
  EXPECT_EQ(s.below, 0.8 * 100);
}

TEST(ProfileStages, UnitsHoldConsecutiveFormsOfOneReductionLength) {
  ProfileOptions opt = options("");
  opt.per_unit = 5;
  ProfileSession s(opt);
  profile_setup(s);
  s.out.table.machine.l2_bytes = 512 * 1024;  // small enough that some taps microkernels get a shorter nc
  profile_enumerate_forms(s);
  profile_group_units(s);
  ASSERT_FALSE(s.members.empty());
  size_t next = 0;
  std::set<int64_t> ncs;
  for (size_t u = 0; u < s.members.size(); ++u) {
    ASSERT_FALSE(s.members[u].empty());
    EXPECT_LE(s.members[u].size(), 5u);
    const int64_t nc = profile_nc(s.isa, s.ks[s.forms[s.members[u].front()].uk], 512 * 1024);
    ncs.insert(nc);
    for (size_t f : s.members[u]) {
      EXPECT_EQ(f, next++);
      EXPECT_EQ(s.unit_of[f], u);
      EXPECT_EQ(profile_nc(s.isa, s.ks[s.forms[f].uk], 512 * 1024), nc);
    }
  }
  EXPECT_EQ(next, s.forms.size());
  EXPECT_GT(ncs.size(), 1u);
}

}  // namespace
}  // namespace convtune::profile_stages_test
