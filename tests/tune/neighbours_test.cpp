// Transfer from tuned neighbours (neighbours.h): a neighbour's winner lifted
// to another H and W, the lifts that cannot be made and why, which layers of
// a store are neighbours, and the seed's origin in its record. Nothing here
// compiles or runs a kernel.
#include "convtune/tune/neighbours.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>

#include "convtune/core/isa.h"
#include "convtune/core/machine.h"
#include "convtune/core/machine_id.h"
#include "convtune/tune/records.h"
#include "convtune/tune/tune_stages.h"
#include "test_util.h"

namespace convtune::neighbours_test {
namespace {

using test::uk;
using test::uk_record;

// One microkernel, 2 k vectors by 4 rows: [..., T(n,c), U(4,h), U(2,k), V(k)].
ClassTable k2h4_table() { return test::table_of({uk_record(uk(2, 1, 1, 4), 90)}); }

const Shape kFrom = parse_shape("K=64,C=4,H=8,R=1");  // 4 k vectors of 16, 8x8 output

using Texts = std::vector<std::string>;

Texts texts(const std::vector<Config>& cs) {
  Texts v;
  for (const Config& c : cs) v.push_back(to_string(c));
  return v;
}

// The register tile and the loop order stay; along h and w the inner T keeps
// what still divides and the outermost takes the rest.
TEST(Neighbours, WinnerLiftedToOtherHeightAndWidthIsOfTheNewSpace) {
  const Config winner = parse_config("[T(2,h), T(4,w), T(2,k), T(2,w), T(4,c), U(4,h), U(2,k), V(k)]");
  ASSERT_GE(choice_of(build_space(kFrom, k2h4_table(), 16), winner), 0);
  const Shape to = parse_shape("K=64,C=4,H=12,R=1");
  const Space space = build_space(to, k2h4_table(), 16);
  const Lift l = lift_to_space(winner, kFrom, space);
  EXPECT_EQ(l.failure, LiftFailure::none);
  EXPECT_EQ(texts(l.configs), (Texts{"[T(3,h), T(6,w), T(2,k), T(2,w), T(4,c), U(4,h), U(2,k), V(k)]"}));
  for (const Config& c : l.configs) {
    EXPECT_NO_THROW(validate_config(c, to, 16));
    EXPECT_GE(choice_of(space, c), 0);
  }
  // Smaller: a loop left at 1 goes; larger where no T ran along w: one is added outermost.
  EXPECT_EQ(texts(lift_to_space(winner, kFrom, build_space(parse_shape("K=64,C=4,H=4,W=2,R=1"), k2h4_table(), 16))
                      .configs),
            (Texts{"[T(2,k), T(2,w), T(4,c), U(4,h), U(2,k), V(k)]"}));
  EXPECT_EQ(texts(lift_to_space(parse_config("[T(2,k), T(2,h), T(4,c), U(4,h), U(2,k), V(k)]"),
                                parse_shape("K=64,C=4,H=8,W=1,R=1"),
                                build_space(parse_shape("K=64,C=4,H=8,W=3,R=1"), k2h4_table(), 16))
                      .configs),
            (Texts{"[T(3,w), T(2,k), T(2,h), T(4,c), U(4,h), U(2,k), V(k)]"}));
}

// A 2-thread neighbour's winner on a 1-thread space: its P is the T it split.
TEST(Neighbours, ParallelWinnerLiftedToOneThread) {
  const Config winner = parse_config("[P(2,h), T(4,w), T(2,k), T(2,w), T(4,c), U(4,h), U(2,k), V(k)]");
  const Lift l = lift_to_space(winner, kFrom, build_space(parse_shape("K=64,C=4,H=16,R=1"), k2h4_table(), 16));
  EXPECT_EQ(texts(l.configs), (Texts{"[T(4,h), T(8,w), T(2,k), T(2,w), T(4,c), U(4,h), U(2,k), V(k)]"}));
}

// An Lseq keeps its two tile heights and takes the repeats of one of the new
// space's pair choices, the nearest to its old rows; the T loops along h cover the rest.
TEST(Neighbours, LseqTakesThePairChoiceNearestItsRows) {
  const ClassTable pair = test::table_of({uk_record(uk(2, 1, 1, 2), 90), uk_record(uk(2, 1, 1, 4), 90)});
  const Config winner = parse_config("[T(2,k), Lseq(h,[(2,2),(1,4)]), T(8,w), T(4,c), U(a,h), U(2,k), V(k)]");
  ASSERT_GE(choice_of(build_space(kFrom, pair, 16), winner), 0);
  // 12 rows: 1x2 + 1x4 (6 rows, nearest 8) twice.
  const Shape to = parse_shape("K=64,C=4,H=12,R=1");
  const Lift l = lift_to_space(winner, kFrom, build_space(to, pair, 16));
  EXPECT_EQ(l.failure, LiftFailure::none);
  EXPECT_EQ(texts(l.configs),
            Texts{"[T(2,h), T(2,k), Lseq(h,[(1,2),(1,4)]), T(12,w), T(4,c), U(a,h), U(2,k), V(k)]"});
  for (const Config& c : l.configs) EXPECT_NO_THROW(validate_config(c, to, 16));
  const Config tiled = parse_config("[T(2,k), T(2,h), Lseq(h,[(1,2),(1,4)]), T(8,w), T(4,c), U(a,h), U(2,k), V(k)]");
  const Shape from12 = parse_shape("K=64,C=4,H=12,W=8,R=1");
  EXPECT_EQ(texts(lift_to_space(tiled, from12, build_space(parse_shape("K=64,C=4,H=24,W=8,R=1"), pair, 16)).configs),
            Texts{"[T(2,k), T(4,h), Lseq(h,[(1,2),(1,4)]), T(8,w), T(4,c), U(a,h), U(2,k), V(k)]"});
}

TEST(Neighbours, WinnerThatCannotLiftIsSkippedWithItsReason) {
  const Config winner = parse_config("[T(2,h), T(8,w), T(2,k), T(4,c), U(4,h), U(2,k), V(k)]");
  const Lift odd = lift_to_space(winner, kFrom, build_space(parse_shape("K=64,C=4,H=10,R=1"), k2h4_table(), 16));
  EXPECT_TRUE(odd.configs.empty());
  EXPECT_EQ(odd.failure, LiftFailure::indivisible);  // U(4,h) and 10 rows
  const ClassTable other = test::table_of({uk_record(uk(1, 1, 1, 1), 90)});
  const Lift foreign = lift_to_space(winner, kFrom, build_space(parse_shape("K=64,C=4,H=16,R=1"), other, 16));
  EXPECT_TRUE(foreign.configs.empty());
  EXPECT_EQ(foreign.failure, LiftFailure::not_offered);
  // No pair choice of two 4-row tiles.
  const Lift seq = lift_to_space(parse_config("[T(2,k), Lseq(h,[(1,4),(1,4)]), T(8,w), T(4,c), U(a,h), U(2,k), V(k)]"),
                                 kFrom, build_space(parse_shape("K=64,C=4,H=10,R=1"), k2h4_table(), 16));
  EXPECT_TRUE(seq.configs.empty());
  EXPECT_EQ(seq.failure, LiftFailure::lseq);
  EXPECT_NE(lift_failure_text(LiftFailure::indivisible), lift_failure_text(LiftFailure::lseq));
}

MachineId machine(const std::string& model) { return test::test_machine(model, 4); }

void write_layer(const std::string& dir, const Shape& shape, const std::string& config, const std::string& isa,
                 const MachineId& m) {
  Record r;
  r.layer = "x";
  r.shape = shape.to_string();
  r.config = config;
  r.status = Status::ok;
  r.gflops = 10;
  r.isa = isa;
  r.machine = m;
  std::filesystem::create_directories(dir);
  append_record(dir + "/log.jsonl", r);
}

// Only layers of the same ISA, machine and C, K, R, S; nearest first, at most `most`.
TEST(Neighbours, StoreNeighboursOfThisIsaMachineAndChannels) {
  test::TempDir td;
  const MachineId here = machine("CPU A"), there = machine("CPU B");
  const std::string c = "[T(2,h), T(8,w), T(2,k), T(4,c), U(4,h), U(2,k), V(k)]";
  write_layer(td.file("far"), parse_shape("K=64,C=4,H=32,R=1"), c, "avx2", here);
  write_layer(td.file("near"), kFrom, c, "avx2", here);
  write_layer(td.file("mid"), parse_shape("K=64,C=4,H=20,R=1"), c, "avx2", here);
  write_layer(td.file("self"), parse_shape("K=64,C=4,H=12,R=1"), c, "avx2", here);
  write_layer(td.file("machine"), kFrom, c, "avx2", there);
  write_layer(td.file("isa"), kFrom, c, "avx512", here);
  write_layer(td.file("channels"), parse_shape("K=64,C=8,H=8,R=1"), c, "avx2", here);
  write_layer(td.file("filter"), parse_shape("K=64,C=4,H=8,R=3"), c, "avx2", here);
  const Shape to = parse_shape("K=64,C=4,H=12,R=1");
  std::vector<std::string> got;
  for (const Neighbour& n : store_neighbours(td.path(), "self", to, "avx2", here.key, 3)) {
    got.push_back(n.layer);
    EXPECT_EQ(n.log, td.file(n.layer + "/log.jsonl"));
    EXPECT_EQ(to_string(n.winner), c);
  }
  EXPECT_EQ(got, (Texts{"near", "mid", "far"}));
  EXPECT_EQ(store_neighbours(td.path(), "self", to, "avx2", here.key, 1).size(), 1u);
  EXPECT_TRUE(store_neighbours(td.file("none"), "self", to, "avx2", here.key).empty());
}

TEST(Neighbours, SeedOriginRoundTripsAndOldRecordsHaveNone) {
  Record r;
  r.layer = "x";
  r.shape = kFrom.to_string();
  r.config = "[T(1,c), V(k)]";
  r.status = Status::ok;
  EXPECT_FALSE(r.to_json().contains("seed_from"));
  EXPECT_FALSE(Record::from_json(r.to_json()).seed_from.has_value());
  r.seed_from = SeedOrigin{SeedOrigin::transfer, "resnet18-3", "[T(2,c), V(k)]", "store/resnet18-3/log.jsonl"};
  const nlohmann::json j = r.to_json();
  EXPECT_EQ(j["seed_from"]["by"], "transfer");
  EXPECT_EQ(j["seed_from"]["layer"], "resnet18-3");
  const Record back = Record::from_json(j);
  ASSERT_TRUE(back.seed_from.has_value());
  EXPECT_EQ(back.seed_from->by, SeedOrigin::transfer);
  EXPECT_EQ(back.seed_from->config, "[T(2,c), V(k)]");
  EXPECT_EQ(back.seed_from->log, "store/resnet18-3/log.jsonl");
  nlohmann::json bad = j;
  bad["seed_from"]["by"] = "guess";
  EXPECT_EQ(test::error_of([&] { Record::from_json(bad); }),
            "key 'seed_from.by' is 'guess'; it must be one of: start-from | transfer");
}

TuneOptions options(const std::string& store, const Shape& shape) {
  TuneOptions o;
  o.shape = shape;
  o.isa = best_isa();
  o.table = test::host_table();
  o.out_dir = store + "/" + layer_id(shape);
  o.transfer_store = store;
  o.quiet = true;
  return o;
}

// A store's neighbour measured on this machine: its lifted winner is measured
// first, and that candidate's record names the neighbour.
TEST(Neighbours, TransferSeedsTheSessionAndItsRecordSaysWhereFrom) {
  test::TempDir td;
  const Shape from = parse_shape("K=32,C=16,H=8,R=3"), to = parse_shape("K=32,C=16,H=16,R=3");
  TuneSession n(options(td.path(), from));
  tune_setup(n);
  TuneSession s(options(td.path(), to));
  tune_setup(s);
  // A winner of the neighbour's space that lifts to this one (the strategy's
  // proposals: some tile h in an Lseq or by a U that 16 rows do not fit).
  std::optional<Config> winner;
  for (const Config& c : n.strategy->propose(64))
    if (!winner && !lift_to_space(c, from, s.space).configs.empty()) winner = c;
  ASSERT_TRUE(winner.has_value()) << "no proposal of " << from.to_string() << " lifts to " << to.to_string();
  write_layer(td.file(layer_id(from)), from, to_string(*winner), n.isa.name, n.here);
  EXPECT_TRUE(tune_seed_transfer(n).empty());  // its own directory is no neighbour
  // A nearer neighbour whose 3-row register tile 16 rows do not fit: skipped, and said why.
  const Shape near = parse_shape("K=32,C=16,H=12,R=3");
  const std::string odd = "[T(4,h), T(12,w), T(2,k), T(16,c), U(3,h), U(2,k), V(k)]";
  write_layer(td.file(layer_id(near)), near, odd, n.isa.name, n.here);
  const std::vector<std::string> notes = tune_seed_transfer(s);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0], "transfer: " + layer_id(near) + "'s winner " + odd + " skipped: " +
                          lift_failure_text(LiftFailure::indivisible));
  EXPECT_NE(notes[1].find("transfer: " + layer_id(from) + "'s winner " + to_string(*winner)), std::string::npos);
  ASSERT_EQ(s.starts.size(), 1u);
  EXPECT_EQ(to_string(s.starts.front()), to_string(lift_to_space(*winner, from, s.space).configs.front()));
  EXPECT_TRUE(tune_seed_transfer(s).empty());  // once per session
  CompileResult failed;
  failed.log = "no compiler here";
  const Record r = tune_record_of(s, s.starts.front(), failed, RunResult{});
  ASSERT_TRUE(r.seed_from.has_value());
  EXPECT_EQ(r.seed_from->by, SeedOrigin::transfer);
  EXPECT_EQ(r.seed_from->layer, layer_id(from));
  EXPECT_EQ(r.seed_from->config, to_string(*winner));
  EXPECT_FALSE(tune_record_of(s, *winner, failed, RunResult{}).seed_from.has_value());
}

TEST(Neighbours, NoStoreNoTransfer) {
  test::TempDir td;
  TuneOptions o = options(td.path(), parse_shape("K=32,C=16,H=16,R=3"));
  o.transfer_store.clear();
  TuneSession s(o);
  tune_setup(s);
  EXPECT_TRUE(tune_seed_transfer(s).empty());
  EXPECT_TRUE(s.starts.empty());
}

}  // namespace
}  // namespace convtune::neighbours_test
