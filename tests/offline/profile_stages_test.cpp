// run_profile's stages alone (profile_stages.h): the setup refuses an
// unfinished journal without --resume, a resumed journal's measurements are
// counted against their forms, the units group forms of one reduction
// length. Nothing here compiles or measures.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

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

// The depthwise family is profiled with the dense ones, from its ISA data;
// the quick subset takes its square filters only (profile.h quick_subset).
TEST(ProfileDepthwise, TheFamilyIsEnumeratedWithTheDenseOnes) {
  for (const char* name : {"avx512", "avx2", "neon"}) {
    const Isa isa = load_isa(name);
    const std::vector<UkSizes> dense = enumerate_ukernels(isa), dw = enumerate_ukernels(isa, "depthwise");
    ASSERT_FALSE(dw.empty()) << name;
    std::vector<UkSizes> both = dense;
    both.insert(both.end(), dw.begin(), dw.end());
    EXPECT_EQ(profiled_ukernels(isa), both) << name;
    EXPECT_EQ(profiled_families(isa), (std::vector<std::string>{"paper", "taps", "depthwise"})) << name;
    std::map<int, std::set<std::string>> quick;  // per filter: the depthwise sizes
    size_t quick_dense = 0;
    for (const UkSizes& u : quick_subset(isa)) {
      if (!u.dw) {
        ++quick_dense;
        continue;
      }
      EXPECT_EQ(ukernel_family(isa, u), "depthwise") << sizes_text(u);
      EXPECT_EQ(u.r, u.s) << sizes_text(u);
      quick[u.r].insert(sizes_text(u));
    }
    EXPECT_GT(quick_dense, 0u) << name;
    ASSERT_EQ(quick.size(), 3u) << name;  // 3x3, 5x5, 7x7
    for (const auto& r_set : quick) {
      const std::string rs = fmt::format("r{0}s{0}", r_set.first);
      EXPECT_TRUE(r_set.second.count("k1c1w1h1" + rs)) << name << " " << rs;  // tiles any shape
      EXPECT_TRUE(r_set.second.count("k2c1w4h1" + rs)) << name << " " << rs;  // the class k2w4
      // The edges of k, w, h and the class k2w4: h 1..3 on 32 registers, 1 on AVX2's 16 (docs/profile.md).
      EXPECT_EQ(r_set.second.size(), std::string(name) == "avx2" ? 5u : 7u) << name << " " << rs;
    }
  }
}

// A depthwise step reads r*s new weight vectors per channel vector: its
// reduction is shortened as a taps microkernel's is (profile.h profile_nc).
TEST(ProfileDepthwise, ItsReductionKeepsTheWeightsInHalfOfL2) {
  const Isa isa = load_isa("avx512");
  const UkSizes small{1, 1, 1, 1, 3, 3, true}, big{16, 1, 1, 1, 7, 7, true};
  EXPECT_EQ(profile_nc(isa, small, 1 << 20), 512);  // 512 steps of 9 vectors: 288 KiB
  EXPECT_EQ(profile_nc(isa, small, 256 << 10), 128);
  EXPECT_EQ(profile_nc(isa, big, 1 << 20), 16);     // 49 KiB a step: at least 16 steps
  UkSizes dense = small;
  dense.dw = false;
  EXPECT_EQ(profile_nc(isa, dense, 256 << 10), 512);  // no family's: the paper's reduction
}

// The re-measurement of a depthwise microkernel is decided against the
// fastest of its filter, once all of that filter is measured; a dense one's
// against the start peak.
TEST(ProfileDepthwise, ARemeasurementIsDecidedWithinTheFilter) {
  ProfileOptions opt = options("");
  opt.isa = "avx2";  // its quick subset's sizes, named below (any host here runs AVX2); nothing runs
  ProfileSession s(opt);
  profile_setup(s);
  s.out.table.peak_start_gflops = 100;  // dense cut: 80
  profile_enumerate_forms(s);
  auto index = [&](const UkSizes& u) {
    const auto it = std::find(s.ks.begin(), s.ks.end(), u);
    if (it == s.ks.end()) throw std::runtime_error("not in the quick subset: " + sizes_text(u));
    return size_t(it - s.ks.begin());
  };
  const size_t fast3 = index({2, 1, 4, 1, 3, 3, true}), near3 = index({1, 1, 14, 1, 3, 3, true});
  const size_t slow3 = index({7, 1, 1, 1, 3, 3, true}), dense = 0;  // the subset's dense ones come first
  const size_t open5 = index({1, 1, 1, 1, 5, 5, true}), done5 = index({2, 1, 4, 1, 5, 5, true});
  ASSERT_FALSE(s.ks[dense].dw);
  const std::map<size_t, double> figure{{fast3, 40}, {near3, 33}, {slow3, 31}, {dense, 85}};
  for (size_t f = 0; f < s.forms.size(); ++f) {
    const size_t i = s.forms[f].uk;
    s.res[f].status = Status::ok;
    s.res[f].gflops = figure.count(i) ? figure.at(i) : s.ks[i].dw ? 20 : 50;
    if (s.forms[f].fence != TapFence::none) s.res[f].gflops = 1;         // the plain form is the fastest
    s.first_done[f] = i != open5 || s.forms[f].fence != TapFence::none;  // one 5x5 form not measured yet
  }
  const std::vector<char> decided = profile_wants_again(s, AgainMode::decided),
                          possible = profile_wants_again(s, AgainMode::possible);
  // 3x3: the cut is 0.8 * 40 = 32; the other 3x3 ones at 20 are below it.
  EXPECT_FALSE(decided[fast3]);
  EXPECT_FALSE(decided[near3]);  // 33: above, though far below the dense cut
  EXPECT_TRUE(decided[slow3]);
  EXPECT_FALSE(decided[dense]);  // 85 of a 100 peak
  // 5x5: not all measured, so no decision; a resumed run prepares the measured ones.
  EXPECT_FALSE(decided[done5]);
  EXPECT_TRUE(possible[done5]);
  EXPECT_FALSE(possible[open5]);  // its first measurement comes first
  for (size_t i = 0; i < s.ks.size(); ++i) {
    if (s.ks[i].dw && s.ks[i].r == 5) continue;
    EXPECT_EQ(decided[i], possible[i]) << sizes_text(s.ks[i]);
    if (!s.ks[i].dw && i != dense) EXPECT_TRUE(decided[i]) << sizes_text(s.ks[i]);  // 50 of a 100 peak
  }
  // Once re-measured, never again.
  s.again_done[s.first_form[slow3]] = 1;
  EXPECT_FALSE(profile_wants_again(s, AgainMode::decided)[slow3]);
}

// A depthwise entry of the journal reads back as one (its name says so):
// a killed profile resumes its depthwise measurements too.
TEST(ProfileDepthwise, AJournalHoldsDepthwiseMeasurements) {
  test::TempDir td;
  const std::string journal = td.file("t.json.journal.jsonl");
  std::vector<UkSizes> dw;
  for (const UkSizes& u : quick_subset(load_isa(best_isa())))
    if (u.dw) dw.push_back(u);
  ASSERT_GE(dw.size(), 2u);
  append_journal(journal, header().to_json());
  append_journal(journal, entry(dw[0], ProfilePass::first, 20).to_json());
  append_journal(journal, entry(dw[1], ProfilePass::first, 30, TapFence::s).to_json());
  ProfileOptions opt = options(journal);
  opt.resume = true;
  ProfileSession s(opt);
  profile_setup(s);
  ASSERT_EQ(s.journal.entries.size(), 2u);
  EXPECT_EQ(s.journal.entries[0].sizes, dw[0]);
  EXPECT_TRUE(s.journal.entries[1].sizes.dw);
  s.out.table.peak_start_gflops = s.journal.header.peak_start_gflops;
  profile_enumerate_forms(s);
  EXPECT_EQ(s.out.resumed_first, 2u);
  const size_t i0 = size_t(std::find(s.ks.begin(), s.ks.end(), dw[0]) - s.ks.begin());
  EXPECT_TRUE(s.first_done[s.first_form[i0]]);
  EXPECT_EQ(s.res[s.first_form[i0]].gflops, 20);
}

}  // namespace
}  // namespace convtune::profile_stages_test
