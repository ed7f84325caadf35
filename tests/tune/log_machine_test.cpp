// Records name the machine that measured them; logs of another machine are
// refused by name, records written before machines were named still read.
#include "convtune/tune/log_machine.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace convtune::log_machine_test {
namespace {

MachineId machine(const std::string& model, int cores) {
  MachineInfo m;
  m.cpu_model = model;
  m.isa_flags = {"avx2", "fma"};
  m.cores = cores;
  return machine_id(m);
}

Record measured_on(const MachineId& m) {
  Record r;
  r.layer = "x";
  r.shape = "N=1,K=16,C=8,H=8,W=8,R=3,S=3,stride=1,pad=1";
  r.config = "[T(1,c), V(k)]";
  r.status = Status::ok;
  r.gflops = 10;
  r.machine = m;
  return r;
}

TEST(LogMachine, RecordsNameTheirMachineAndOldOnesReadAsUnknown) {
  test::TempDir td;
  const std::string log = td.file("log.jsonl");
  const MachineId a = machine("CPU A", 8);
  append_record(log, measured_on(a));
  nlohmann::json old = measured_on(MachineId{}).to_json();
  EXPECT_FALSE(old.contains("machine"));  // as records were before
  test::write_file(log, test::read_file(log) + old.dump() + "\n");
  std::vector<Record> recs = read_records(log);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].machine.to_json(), a.to_json());
  EXPECT_EQ(recs[0].to_json()["machine"]["key"], a.key);
  EXPECT_FALSE(recs[1].machine.known());
  // A malformed machine is an error of its line.
  nlohmann::json bad = measured_on(a).to_json();
  bad["machine"]["cores"] = -1;
  test::write_file(log, bad.dump() + "\n");
  EXPECT_EQ(test::error_of([&] { read_records(log); }),
            "log '" + log + "' line 1: in key 'machine': key 'cores' is negative (-1); fix or remove that line");
}

TEST(LogMachine, AnotherMachinesLogIsRefusedNamingBoth) {
  const MachineId a = machine("CPU A", 8), b = machine("CPU B", 2);
  EXPECT_EQ(test::error_of([&] { check_log_machine("L", {measured_on(a), measured_on(MachineId{})}, a); }),
            "no error");
  EXPECT_EQ(test::error_of([&] { check_log_machine("L", {measured_on(MachineId{}), measured_on(b)}, a); }),
            "log 'L' holds records of machine " + b.key + " (CPU B; avx2 fma; 2 CPUs), not of this machine " + a.key +
                " (CPU A; avx2 fma; 8 CPUs); use this machine's directory of a merged store (<store>/" + a.key +
                "/...), or pass --any-machine to use them anyway");
}

}  // namespace
}  // namespace convtune::log_machine_test
