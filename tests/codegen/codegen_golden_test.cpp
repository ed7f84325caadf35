// Generated C is a function of the configuration alone: for every zoo layer,
// both x86 ISAs, one and two threads and configurations of every kind of
// choice (flat, Winograd, pairs), the source and header that generate_conv
// writes hash to the digests in tests/data/codegen-golden.tsv. A refactor must
// keep them; a change to the generated code regenerates the file in the same
// commit:
//   CONVTUNE_WRITE_GOLDEN=tests/data/codegen-golden.tsv build/convtune_unit_test \
//     --gtest_filter='CodegenGolden.*'
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "convtune/core/epilogue.h"
#include "convtune/core/isa.h"
#include "convtune/core/shape.h"
#include "convtune/codegen/conv.h"
#include "convtune/space/config.h"
#include "convtune/offline/class_table.h"
#include "convtune/space/space.h"

namespace convtune::codegen_golden_test {
namespace {

const char* kGolden = CONVTUNE_SOURCE_DIR "/tests/data/codegen-golden.tsv";

// FNV-1a, 64 bits: a stable digest with no library behind it.
uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

struct Case {
  std::string layer, isa, epilogue, config;
  std::string digest;  // 16 hex digits
};

std::string digest_of(const Case& c) {
  CodegenInput in;
  in.shape = zoo_layer(c.layer);
  in.config = parse_config(c.config);
  in.epilogue = parse_epilogue(c.epilogue);
  const GeneratedKernel k = generate_conv(load_isa(c.isa), in);
  return fmt::format("{:016x}", fnv1a(k.header, fnv1a(k.c_source)));
}

// The shipped table of an ISA, never the user's profiled one.
ClassTable shipped_table(const std::string& isa) {
  return load_table(isa, std::string(CONVTUNE_SOURCE_DIR) + "/configs/tables/" + isa + ".json");
}

// Up to six direct and three Winograd choices spread over the space, one draw each.
std::vector<Case> draw_cases() {
  std::vector<Case> cases;
  const std::vector<std::string> epilogues = {"none", "bias,relu", "bias,add"};
  for (const std::string isa_name : {"avx512", "avx2"}) {
    const Isa isa = load_isa(isa_name);
    const ClassTable table = shipped_table(isa_name);
    std::mt19937_64 rng(7);
    for (const Network& net : zoo())
      for (const Shape& layer : net.layers)
        for (int threads : {1, 2}) {
          const Space space = build_space(layer, table, isa.lanes, threads);
          std::vector<size_t> direct, wino;
          for (size_t i = 0; i < space.choices.size(); ++i)
            (to_string(space.choices[i].view).rfind("Wino", 0) == 0 ? wino : direct).push_back(i);
          std::set<size_t> picks;
          for (const auto& [kind, most] : {std::pair{&direct, size_t{6}}, std::pair{&wino, size_t{3}}})
            for (size_t i = 0; i < most && i < kind->size(); ++i)
              picks.insert((*kind)[i * kind->size() / std::min(kind->size(), most)]);
          for (size_t i : picks) {
            Space one = space;
            one.choices = {space.choices[i]};
            const Config c = sample_config(one, rng);
            cases.push_back({layer.name, isa_name, epilogues[cases.size() % epilogues.size()], to_string(c), ""});
          }
        }
  }
  return cases;
}

std::vector<Case> read_golden() {
  std::ifstream f(kGolden);
  std::vector<Case> cases;
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    Case c;
    std::getline(s, c.layer, '\t');
    std::getline(s, c.isa, '\t');
    std::getline(s, c.epilogue, '\t');
    std::getline(s, c.config, '\t');
    std::getline(s, c.digest, '\t');
    cases.push_back(c);
  }
  return cases;
}

TEST(CodegenGolden, EveryZooLayerGeneratesTheSameC) {
  if (const char* out = std::getenv("CONVTUNE_WRITE_GOLDEN")) {
    std::ofstream f(out);
    f << "# layer\tisa\tepilogue\tconfiguration\tdigest of generate_conv's source and header "
         "(tests/codegen/codegen_golden_test.cpp)\n";
    for (Case c : draw_cases()) f << c.layer << '\t' << c.isa << '\t' << c.epilogue << '\t' << c.config
                                  << '\t' << digest_of(c) << '\n';
    GTEST_SKIP() << "wrote " << out;
  }
  const std::vector<Case> cases = read_golden();
  std::set<std::string> layers;
  for (const Case& c : cases) layers.insert(c.layer);
  size_t zoo_layers = 0;
  for (const Network& net : zoo()) zoo_layers += net.layers.size();
  ASSERT_EQ(layers.size(), zoo_layers) << kGolden << " must name every zoo layer";
  int wrong = 0;
  for (const Case& c : cases) {
    const std::string d = digest_of(c);
    if (d != c.digest && ++wrong <= 10)
      ADD_FAILURE() << c.layer << " " << c.isa << " " << c.epilogue << " " << c.config << ": " << d
                    << ", golden " << c.digest;
  }
  EXPECT_EQ(wrong, 0) << "of " << cases.size() << " configurations";
}

}  // namespace
}  // namespace convtune::codegen_golden_test
