// The offline stage's choices of what to profile (profile.h): the families
// and microkernels, the quick subset and each microkernel's reduction
// length. run_profile is the sequence of stages in profile_stages.cpp.
#include "convtune/offline/profile.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "convtune/ukernel/ukernel.h"

namespace convtune {

namespace {

constexpr int64_t kProfileNc = 512;  // T(512,c) around the block (000 §4.1)

}  // namespace

// Half of L2 for the weights, and why: profile.h.
int64_t profile_nc(const Isa& isa, const UkSizes& u, int64_t l2_bytes) {
  const std::string family = ukernel_family(isa, u);
  if (family != "taps" && family != "depthwise") return kProfileNc;
  const int64_t budget = l2_bytes > 0 ? l2_bytes / 2 : int64_t(1) << 20;  // unknown L2: taken as 2 MiB (profile.h)
  const int64_t step_bytes = int64_t(u.r) * u.s * u.c * u.k * isa.lanes * int64_t(sizeof(float));
  int64_t nc = kProfileNc;
  while (nc > 16 && nc * step_bytes > budget) nc /= 2;
  return nc;
}

std::vector<std::string> profiled_families(const Isa& isa) {
  std::vector<std::string> f = ukernel_families();
  if (!enumerate_ukernels(isa, "depthwise").empty()) f.push_back("depthwise");
  return f;
}

std::vector<UkSizes> profiled_ukernels(const Isa& isa) {
  std::vector<UkSizes> all = enumerate_ukernels(isa);
  std::vector<UkSizes> dw = enumerate_ukernels(isa, "depthwise");
  all.insert(all.end(), dw.begin(), dw.end());
  return all;
}

namespace {

// The depthwise part of the quick subset. Square filters only: the
// depthwise layers of MobileNet, EfficientNet and ConvNeXt are 3x3, 5x5
// and 7x7 (and 1x1 has no taps to unroll); the 16 (r, s) pairs of
// rs_values would about double the quick profile. Per filter the edges of k, w
// and h (k1w1h1 tiles any shape), and the class k2w4 over every h it
// admits, so that the quick table has a depthwise class of several members.
void add_depthwise_quick(const Isa& isa, std::set<UkSizes>& pick) {
  std::map<int, std::vector<UkSizes>> by_filter;
  for (const UkSizes& u : enumerate_ukernels(isa, "depthwise"))
    if (u.r == u.s && u.r > 1) by_filter[u.r].push_back(u);
  for (auto& f_v : by_filter) {
    const std::vector<UkSizes>& v = f_v.second;
    auto edge = [&](auto key) {
      pick.insert(*std::min_element(v.begin(), v.end(), [&](auto& a, auto& b) { return key(a) < key(b); }));
      pick.insert(*std::max_element(v.begin(), v.end(), [&](auto& a, auto& b) { return key(a) < key(b); }));
    };
    edge([](const UkSizes& u) { return u.k; });
    edge([](const UkSizes& u) { return u.w; });
    edge([](const UkSizes& u) { return u.h; });
    for (const UkSizes& u : v)
      if (u.k == 2 && u.w == 4) pick.insert(u);
  }
}

}  // namespace

std::vector<UkSizes> quick_subset(const Isa& isa) {
  std::vector<UkSizes> all = enumerate_ukernels(isa);
  std::set<UkSizes> pick;
  // Per family too, so that every family's edges are measured, not only
  // those of the union (the 3x3 edges would mostly be the taps family's).
  std::map<std::tuple<std::string, int, int>, std::vector<UkSizes>> by_rs;
  for (const auto& u : all) by_rs[{ukernel_family(isa, u), u.r, u.s}].push_back(u);
  for (auto& rs_v : by_rs) {
    std::vector<UkSizes>& v = rs_v.second;  // not a structured binding: clang < 16 cannot capture one
    // Edges of every size for this (r, s): min and max of k, c, w, h.
    auto edge = [&](auto key) {
      pick.insert(*std::min_element(v.begin(), v.end(), [&](auto& a, auto& b) { return key(a) < key(b); }));
      pick.insert(*std::max_element(v.begin(), v.end(), [&](auto& a, auto& b) { return key(a) < key(b); }));
    };
    edge([](const UkSizes& u) { return u.k; });
    edge([](const UkSizes& u) { return u.c; });
    edge([](const UkSizes& u) { return u.w; });
    edge([](const UkSizes& u) { return u.h; });
  }
  // The BLIS-like kernel and the paper's class [U(h), U(2,k), V(k)] (000 §4.1).
  for (const auto& u : all)
    if ((u.k == 2 && u.c == 1 && u.w == 12 && u.h == 1 && u.r == 1 && u.s == 1) ||
        (u.k == 2 && u.c == 1 && u.w == 1 && u.r == 1 && u.s == 1 && u.h >= 7))
      pick.insert(u);
  add_depthwise_quick(isa, pick);
  return {pick.begin(), pick.end()};
}

}  // namespace convtune
