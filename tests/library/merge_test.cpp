// `convtune merge`: logs of many machines and runs into one store, one log
// per (machine, ISA, threads, shape), one record per candidate (the better
// kept whole), best first; idempotent and independent of the input order;
// bad input refused with one line before anything is written.
#include "convtune/library/merge.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "convtune/core/file_lock.h"
#include "convtune/tune/records.h"
#include "test_util.h"

namespace fs = std::filesystem;

namespace convtune::merge_test {
namespace {

using test::error_of;

const std::string kX = "N=1,K=16,C=8,H=8,W=8,R=3,S=3,stride=1,pad=1";
const std::string kY = "N=1,K=32,C=8,H=8,W=8,R=1,S=1,stride=1,pad=0";

MachineId machine(const std::string& model) { return test::test_machine(model, 2); }
const MachineId kM1 = machine("CPU one"), kM2 = machine("CPU two");

Record rec(const std::string& layer, const std::string& shape, const std::string& config, Status status,
           double ms, const MachineId& m, int threads = 1) {
  Record r;
  r.layer = layer;
  r.shape = shape;
  r.config = config;
  r.status = status;
  r.isa = "avx2";
  r.table_fingerprint = "CPU one | avx2,fma";
  r.seconds = status == Status::ok ? ms * 1e-3 : 0;
  r.gflops = status == Status::ok ? 1.0 / ms : 0;
  r.machine = m;
  r.threads = threads;
  r.timestamp = "2026-11-23T20:00:00Z";
  return r;
}

void write_log(const std::string& path, const std::vector<Record>& recs) {
  fs::create_directories(fs::path(path).parent_path());
  for (const auto& r : recs) append_record(path, r);
}

std::vector<std::string> configs(const std::string& log) {
  std::vector<std::string> v;
  for (const auto& r : read_records(log)) v.push_back(r.config + " " + to_string(r.status));
  return v;
}

// Every file of a directory tree with its bytes.
std::map<std::string, std::string> tree(const std::string& dir) {
  std::map<std::string, std::string> m;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) m[fs::relative(e.path(), dir).string()] = test::read_file(e.path().string());
  return m;
}

// Two runs: A (layers x and y) and B (layer x again, a 2-thread x, an old record).
struct Runs {
  test::TempDir td;
  std::string a = td.file("a"), b = td.file("b");
  std::string b_c2_line;
  Runs() {
    write_log(a + "/x/log.jsonl", {rec("x", kX, "c1", Status::ok, 2, kM1), rec("x", kX, "c2", Status::ok, 1.5, kM1),
                                   rec("x", kX, "c4", Status::crash, 0, kM1)});
    write_log(a + "/y/log.jsonl", {rec("y", kY, "d1", Status::ok, 1, kM2)});
    // B measured c2 faster, c4 correctly, c1 timed out; its c2 line carries a key of a newer version.
    nlohmann::json c2 = rec("x", kX, "c2", Status::ok, 1.0, kM1).to_json();
    c2["from_a_newer_version"] = 1;
    b_c2_line = c2.dump();
    write_log(b + "/x/log.jsonl", {rec("x", kX, "c3", Status::ok, 3, kM1), rec("x", kX, "c4", Status::ok, 5, kM1),
                                   rec("x", kX, "c1", Status::timeout, 0, kM1)});
    test::write_file(b + "/x/log.jsonl", test::read_file(b + "/x/log.jsonl") + b_c2_line + "\n");
    write_log(b + "/x-t2/log.jsonl", {rec("x", kX, "c1", Status::ok, 1, kM1, 2)});
    write_log(b + "/old/log.jsonl", {rec("old", kY, "e1", Status::ok, 1, MachineId{})});
  }
};

TEST(Merge, OneLogPerMachineIsaThreadsAndShapeBestFirst) {
  Runs runs;
  const std::string store = runs.td.file("store");
  MergeResult r = merge_logs({{runs.a, runs.b}, store});
  EXPECT_EQ(r.logs_read, 5u);
  EXPECT_EQ(r.records_read, 10u);
  EXPECT_EQ(r.duplicates, 3u);  // c1, c2 and c4 of x measured twice on one machine
  EXPECT_EQ(r.records, 7u);
  std::vector<std::string> dirs, want{kM1.key + "/avx2-t1/x", kM1.key + "/avx2-t2/x", kM2.key + "/avx2-t1/y",
                                       "unknown/avx2-t1/old"};
  for (const auto& s : r.logs) dirs.push_back(s.dir);
  std::sort(want.begin(), want.end());  // by directory: the keys' order
  EXPECT_EQ(dirs, want);
  // The faster c2 (B's line as written), the correct c4 and c1 over their failures; fastest first.
  const std::string x = store + "/" + kM1.key + "/avx2-t1/x/log.jsonl";
  EXPECT_EQ(configs(x), (std::vector<std::string>{"c2 ok", "c1 ok", "c3 ok", "c4 ok"}));
  EXPECT_EQ(test::read_file(x).substr(0, runs.b_c2_line.size() + 1), runs.b_c2_line + "\n");
  const StoreLog& sx = *std::find_if(r.logs.begin(), r.logs.end(),
                                     [](const StoreLog& s) { return s.layer == "x" && s.threads == 1; });
  EXPECT_EQ(sx.best_config, "c2");
  EXPECT_EQ(sx.ok, 4u);
  EXPECT_EQ(sx.records, 4u);
  EXPECT_TRUE(sx.written);
  EXPECT_EQ(read_records(store + "/unknown/avx2-t1/old/log.jsonl").size(), 1u);
  const auto meta = nlohmann::json::parse(test::read_file(store + "/store.json"));
  EXPECT_EQ(meta["format"], "convtune-store");
  EXPECT_EQ(meta["logs"].size(), 4u);
  EXPECT_EQ(meta["machines"][kM2.key], kM2.to_json());
  EXPECT_TRUE(meta["logs"][3]["machine"].is_null());
  // A failure kept when it is all there is.
  EXPECT_EQ(error_of([&] { merge_logs({{runs.a}, runs.td.file("s2")}); }), "no error");
  EXPECT_EQ(configs(runs.td.file("s2") + "/" + kM1.key + "/avx2-t1/x/log.jsonl"),
            (std::vector<std::string>{"c2 ok", "c1 ok", "c4 crash"}));
}

// One machine's sessions run at other clocks (its peak loop a fifth slower
// in one session than in the next): records compare by their share of their
// own process's peak. c1's first record is faster in GFLOP/s at a peak twice
// as high; c2 beats both on GFLOP/s but at four times c1's second peak.
TEST(Merge, RecordsCompareAtTheirOwnPeak) {
  test::TempDir td;
  auto at = [](Record r, double peak) {
    r.peak_gflops = peak;
    return r;
  };
  write_log(td.file("a/x/log.jsonl"), {at(rec("x", kX, "c1", Status::ok, 1.0, kM1), 4),     // 1/ms 1.0: 25 %
                                       at(rec("x", kX, "c2", Status::ok, 0.5, kM1), 8)});    // 2.0: 25 %
  write_log(td.file("b/x/log.jsonl"), {at(rec("x", kX, "c1", Status::ok, 1.25, kM1), 2)});  // 0.8: 40 %
  const std::string store = td.file("store");
  MergeResult r = merge_logs({{td.file("a"), td.file("b")}, store});
  EXPECT_EQ(r.duplicates, 1u);
  const auto kept = read_records(store + "/" + kM1.key + "/avx2-t1/x/log.jsonl");
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0].config, "c1");  // b's, at 40 % of its peak, over a's at 25 %
  EXPECT_DOUBLE_EQ(kept[0].peak_gflops, 2);
  EXPECT_EQ(kept[1].config, "c2");
  EXPECT_EQ(r.logs.at(0).best_config, "c1");
}

TEST(Merge, IdempotentAndIndependentOfTheOrder) {
  Runs runs;
  const std::string s1 = runs.td.file("s1"), s2 = runs.td.file("s2"), s3 = runs.td.file("s3"), s4 = runs.td.file("s4");
  merge_logs({{runs.a, runs.b}, s1});
  const auto once = tree(s1);
  MergeResult again = merge_logs({{runs.a, runs.b}, s1});  // the store is an input too: nothing new
  for (const auto& s : again.logs) EXPECT_FALSE(s.written) << s.dir;
  EXPECT_EQ(again.records, 7u);
  EXPECT_EQ(tree(s1), once);
  merge_logs({{runs.b, runs.a, runs.b}, s2});  // another order, an input twice
  EXPECT_EQ(tree(s2), once);
  merge_logs({{s1}, s3});  // a store merged into a new one
  EXPECT_EQ(tree(s3), once);
  merge_logs({{runs.a}, s4});  // one run after the other
  merge_logs({{runs.b}, s4});
  EXPECT_EQ(tree(s4), once);
  EXPECT_EQ(tree(s1), once);
}

TEST(Merge, BadInputIsOneLineAndWritesNothing) {
  Runs runs;
  const std::string store = runs.td.file("store");
  const std::string fix = "give directories that tune wrote logs into (--out), merged stores, or log files";
  EXPECT_EQ(error_of([&] { merge_logs({{runs.a, runs.td.file("nope")}, store}); }),
            "'" + runs.td.file("nope") + "' does not exist; " + fix);
  fs::create_directories(runs.td.file("empty/sub"));
  EXPECT_EQ(error_of([&] { merge_logs({{runs.td.file("empty")}, store}); }),
            "'" + runs.td.file("empty") + "' holds no tune log (log.jsonl); " + fix);
  EXPECT_EQ(error_of([&] { merge_logs({{}, store}); }),
            "nothing to merge; give the directories of tune runs or stores: convtune merge DIR... --out STORE");
  EXPECT_EQ(error_of([&] { merge_logs({{runs.a}, ""}); }), "give the store to merge into: --out DIR");
  EXPECT_EQ(error_of([&] { merge_logs({{runs.a}, runs.b}); }),
            "--out '" + runs.b + "' is neither empty nor a convtune store (it has no store.json); give a new directory "
            "or an existing store");
  // Invalid lines name their log and line, as the tuner's reader does.
  const std::string bad = runs.td.file("bad/x/log.jsonl");
  fs::create_directories(runs.td.file("bad/x"));
  nlohmann::json j = rec("x", kX, "c9", Status::ok, 1, kM1).to_json();
  auto refused = [&](const nlohmann::json& line) {
    test::write_file(bad, rec("x", kX, "c8", Status::ok, 1, kM1).to_json().dump() + "\n" + line.dump() + "\n");
    return error_of([&] { merge_logs({{runs.a, runs.td.file("bad")}, store}); });
  };
  const std::string at = "log '" + bad + "' line 2: ", line_fix = "; fix or remove that line";
  nlohmann::json k = j;
  k.erase("status");
  EXPECT_EQ(refused(k), at + "key 'status' is missing" + line_fix);
  k = j;
  k["format_version"] = 2;
  EXPECT_EQ(refused(k), at + "format_version 2 is not 1 (written by another convtune version)" + line_fix);
  k = j;
  k["layer"] = "../x";
  EXPECT_EQ(refused(k), at + "layer '../x' cannot name a directory of the store (letters, digits, . _ + - only)" +
                            line_fix);
  k = j;
  k["machine"]["key"] = "XY/Z";
  EXPECT_EQ(refused(k), at + "in key 'machine': key 'key' is 'XY/Z', not 4 to 64 lowercase hex digits" + line_fix);
  // One layer name, two shapes, one machine: they cannot share a log.
  k = j;
  k["shape"] = kY;
  EXPECT_EQ(refused(k), "layer 'x' comes in two shapes (" + kX + " and " + kY + ") for machine " + kM1.key +
                            ", avx2, 1 threads; merge them into separate stores");
  EXPECT_FALSE(fs::exists(store));  // nothing was written, not even the directory
}

TEST(Merge, ATornLastLineIsLeftOutWithANote) {
  Runs runs;
  const std::string log = runs.a + "/x/log.jsonl";
  const std::string torn = rec("x", kX, "c7", Status::ok, 1, kM1).to_json().dump().substr(0, 30);
  test::write_file(log, test::read_file(log) + torn);
  MergeResult r = merge_logs({{runs.a}, runs.td.file("store")});
  EXPECT_EQ(r.records_read, 4u);
  EXPECT_EQ(r.notes, std::vector<std::string>{"log '" + log + "' ends in a torn line (30 bytes: a killed tune, or one "
                                                                "still running); left out of the merge"});
  EXPECT_EQ(test::read_file(log).substr(test::read_file(log).size() - 30), torn);  // the input is left as it is
}

TEST(Merge, AStoreLogThatATuneHoldsIsRefused) {
  Runs runs;
  const std::string store = runs.td.file("store");
  merge_logs({{runs.a}, store});
  const std::string log = store + "/" + kM1.key + "/avx2-t1/x/log.jsonl";
  const auto before = tree(store);
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // a tuner resuming the store's log: it holds the lock
    FileLock lock(log, "log", "--out");
    if (write(ready[1], "x", 1) != 1) _exit(1);
    pause();
    _exit(0);
  }
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  const std::string err = error_of([&] { merge_logs({{runs.b}, store}); });
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  close(ready[0]);
  close(ready[1]);
  EXPECT_EQ(err.rfind("log '" + log + "' is in use by convtune pid " + std::to_string(child) + " on ", 0), 0u) << err;
  const std::string tail = "; wait for it to finish or use another --out";
  ASSERT_GE(err.size(), tail.size());
  EXPECT_EQ(err.substr(err.size() - tail.size()), tail) << err;
  fs::remove(log + ".lock");  // the killed holder's
  EXPECT_EQ(tree(store), before);
}

// Issue 60: a first merge killed while it created the store (kill -9: its
// lock file, its owner file, a partial log and a temporary one left) is made
// again by the same command, which the README promises; before, the
// directory was "neither empty nor a convtune store" for good.
TEST(Merge, AFirstMergeKilledWhileCreatingTheStoreIsMadeAgain) {
  Runs runs;
  const std::string whole = runs.td.file("whole"), store = runs.td.file("store");
  merge_logs({{runs.a}, whole});
  const std::string x = store + "/" + kM1.key + "/avx2-t1/x";
  fs::create_directories(x);
  test::write_file(store + "/store.json.lock", "{\"pid\": 999999999}\n");  // nobody holds it: the holder died
  test::write_file(store + "/.convtune-store-creating", "999999999 1 pid:[0]\n");
  test::write_file(x + "/log.jsonl", test::read_file(whole + "/" + kM1.key + "/avx2-t1/x/log.jsonl").substr(0, 10));
  test::write_file(x + "/log.jsonl.tmp-AbC123", "partial");
  test::write_file(x + "/log.jsonl.lock", "{}");
  MergeResult r = merge_logs({{runs.a}, store});
  EXPECT_EQ(r.notes, std::vector<std::string>{"--out '" + store + "' was a store a killed merge (pid 999999999) had "
                                                                  "begun; made again from the inputs"});
  EXPECT_EQ(tree(store), tree(whole));  // nothing left of the killed run
  // And a merge killed before its first file (only the lock file) counts as an empty directory.
  const std::string early = runs.td.file("early");
  fs::create_directories(early);
  test::write_file(early + "/store.json.lock", "");
  merge_logs({{runs.a}, early});
  EXPECT_EQ(tree(early), tree(whole));
}

// Issue 60: a second merge while the first creates the store is told whose it is.
TEST(Merge, ASecondMergeWhileTheFirstCreatesTheStoreNamesIt) {
  Runs runs;
  const std::string store = runs.td.file("store");
  fs::create_directories(store);
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // the first merge, between its lock and its store.json
    FileLock lock(store + "/store.json", "store", "--out");
    test::write_file(store + "/.convtune-store-creating", "1 1 pid:[0]\n");
    if (write(ready[1], "x", 1) != 1) _exit(1);
    pause();
    _exit(0);
  }
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  const std::string err = error_of([&] { merge_logs({{runs.a}, store}); });
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  close(ready[0]);
  close(ready[1]);
  EXPECT_EQ(err.rfind("store '" + store + "/store.json' is in use by convtune pid " + std::to_string(child) + " on ",
                      0),
            0u)
      << err;
  const std::string tail = "; wait for it to finish or use another --out";
  ASSERT_GE(err.size(), tail.size());
  EXPECT_EQ(err.substr(err.size() - tail.size()), tail) << err;
}

// Issue 60: the temporary logs and lock files of a killed merge are removed
// by the next one; a directory where a tune holds its log is left alone.
TEST(Merge, TheRerunRemovesWhatAKilledMergeLeft) {
  Runs runs;
  const std::string store = runs.td.file("store");
  merge_logs({{runs.a}, store});
  const auto before = tree(store);
  const std::string x = store + "/" + kM1.key + "/avx2-t1/x", y = store + "/" + kM2.key + "/avx2-t1/y";
  test::write_file(x + "/log.jsonl.tmp-AbC123", "partial");
  test::write_file(x + "/log.jsonl.lock", "{}");
  test::write_file(store + "/store.json.tmp-XyZ789", "{");
  test::write_file(y + "/finalists.json.tmp-QwE456", "{");  // y's log is held below: this one is the tune's
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    FileLock lock(y + "/log.jsonl", "log", "--out");
    if (write(ready[1], "x", 1) != 1) _exit(1);
    pause();
    _exit(0);
  }
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  merge_logs({{runs.a}, store});
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  close(ready[0]);
  close(ready[1]);
  auto after = tree(store);
  EXPECT_EQ(after.erase(kM2.key + "/avx2-t1/y/finalists.json.tmp-QwE456"), 1u);
  EXPECT_EQ(after.erase(kM2.key + "/avx2-t1/y/log.jsonl.lock"), 1u);  // the killed holder's
  EXPECT_EQ(after, before);
}

// Issue 60: an empty or cut store.json is corrupt, and says how to rebuild the store.
TEST(Merge, ACorruptStoreJsonSaysHowToRebuild) {
  Runs runs;
  const std::string store = runs.td.file("store");
  merge_logs({{runs.a}, store});
  for (const std::string text : {"", "{\"format\": \"convtune-st"}) {
    test::write_file(store + "/store.json", text);
    EXPECT_EQ(error_of([&] { merge_logs({{runs.b}, store}); }),
              "--out '" + store + "': store.json is corrupt (" + (text.empty() ? "empty" : "not JSON, cut short?") +
                  "); the logs are intact: rebuild the store from them with 'convtune merge " + store +
                  " --out NEW' and use NEW");
  }
}

}  // namespace
}  // namespace convtune::merge_test
