// Convolution shapes: FLOP counts, the "K=512,C=256,..." text form and the
// layer zoo of 000 Fig. 8 (configs/layers.json, embedded in the binary).
#include "convtune/core/shape.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <initializer_list>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "convtune/core/embedded_data.h"
#include "convtune/core/error.h"
#include "convtune/core/text.h"

namespace convtune {
namespace {

// Limits (documented in shape.h): far above any real layer (the zoo's largest
// operand holds 2.4 million floats), low enough that every product of sizes
// stays inside int64 and one run fits in a few GiB.
constexpr int64_t kMaxExtent = int64_t(1) << 20;   // N, K, C, H, W
constexpr int64_t kMaxWindow = 1024;               // R, S, strides, pads, dilations
constexpr int64_t kMaxOperand = int64_t(1) << 28;  // floats in one operand (1 GiB)
constexpr int64_t kMaxRun = int64_t(1) << 29;      // floats in input + weights + output (2 GiB)
constexpr double kMaxFlops = double(int64_t(1) << 44);  // ~17.6 TFLOP: minutes per call on a core
constexpr int64_t kLanesBound = 16;                // widest vector: K is padded to a multiple

int64_t field_limit(const std::string& name) {
  return name == "N" || name == "K" || name == "C" || name == "H" || name == "W" || name == "groups" ? kMaxExtent
                                                                                                   : kMaxWindow;
}

// Product that saturates at INT64_MAX instead of overflowing.
int64_t product(std::initializer_list<int64_t> factors) {
  int64_t v = 1;
  for (int64_t f : factors)
    if (__builtin_mul_overflow(v, f, &v)) return std::numeric_limits<int64_t>::max();
  return v;
}

// User text inside a one-line message: escaped as every quoted input is
// (text.h escape_text) and cut at about 60 bytes, never inside a character,
// so a message stays one readable line whatever was typed.
std::string printable(const std::string& text) {
  size_t end = 0;  // about 60 bytes, never half a character
  while (end < text.size() && end < 60) end += std::max<size_t>(1, utf8_length(text, end));
  const std::string out = escape_text(text.substr(0, end));
  return end < text.size() ? out + "..." : out;
}

// The stored fields, in the text form's order; the pads may be 0, the rest must be positive.
const char* const kFieldNames[] = {"N",     "K",     "C",     "H",     "W",        "R",          "S",
                                   "stride_h", "stride_w", "pad_t", "pad_l", "pad_b", "pad_r", "dilation_h",
                                   "dilation_w", "groups"};
constexpr size_t kNumFields = sizeof(kFieldNames) / sizeof(kFieldNames[0]);

size_t field_index(const std::string& name) {
  return std::find(std::begin(kFieldNames), std::end(kFieldNames), name) -
         std::begin(kFieldNames);
}

int64_t* field_ptr(Shape& s, const std::string& name) {
  int64_t* const fields[kNumFields] = {&s.N,     &s.K,     &s.C,     &s.H,     &s.W,     &s.R,     &s.S,    &s.stride_h,
                                       &s.stride_w, &s.pad_t, &s.pad_l, &s.pad_b, &s.pad_r, &s.dil_h, &s.dil_w,
                                       &s.groups};
  const size_t i = field_index(name);
  return i < kNumFields ? fields[i] : nullptr;
}

// The text form's names that set several stored fields at once.
struct Alias {
  const char* name;
  std::vector<const char*> fields;
};
const std::vector<Alias>& aliases() {
  static const std::vector<Alias> a = {{"stride", {"stride_h", "stride_w"}},
                                       {"pad", {"pad_t", "pad_l", "pad_b", "pad_r"}},
                                       {"pad_h", {"pad_t", "pad_b"}},
                                       {"pad_w", {"pad_l", "pad_r"}},
                                       {"dilation", {"dilation_h", "dilation_w"}}};
  return a;
}

// The stored fields a text-form name sets ({} when it names none).
std::vector<std::string> fields_of(const std::string& key) {
  for (const auto& a : aliases())
    if (key == a.name) return {a.fields.begin(), a.fields.end()};
  if (field_index(key) < kNumFields) return {key};
  return {};
}

bool is_pad(const std::string& name) { return name.rfind("pad", 0) == 0; }

int64_t floor_div(int64_t a, int64_t b) {  // b > 0
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// Number of (output index, kernel index) pairs along one axis whose input
// index o*stride + k*dil - pad falls inside [0, in).
int64_t valid_pairs(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t pad, int64_t dil) {
  int64_t total = 0;
  for (int64_t k = 0; k < kernel; ++k) {
    int64_t lo = std::max<int64_t>(0, floor_div(pad - k * dil + stride - 1, stride));
    int64_t hi = std::min<int64_t>(out - 1, floor_div(in - 1 + pad - k * dil, stride));
    if (hi >= lo) total += hi - lo + 1;
  }
  return total;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
}

// Trailing integer of a name ("yolo9000-12" -> 12), or -1.
int64_t trailing_number(const std::string& s) {
  size_t i = s.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(s[i - 1]))) --i;
  if (i == s.size() || s.size() - i > 9) return -1;
  return std::stoll(s.substr(i));
}

// " (did you mean 'x'?)" for the closest candidate, or "" if none is close.
// Ties go to the nearest layer number, so 'yolo9000-7' suggests 'yolo9000-8'.
std::string suggestion(const std::string& name, const std::vector<std::string>& candidates) {
  const std::string* best = nullptr;
  size_t best_d = 0;
  int64_t best_gap = 0, num = trailing_number(name);
  for (const auto& c : candidates) {
    size_t d = edit_distance(name, c);
    int64_t n = trailing_number(c);
    int64_t gap = (num < 0 || n < 0) ? 0 : std::llabs(n - num);
    if (!best || d < best_d || (d == best_d && gap < best_gap)) {
      best = &c;
      best_d = d;
      best_gap = gap;
    }
  }
  if (!best || best_d > std::max<size_t>(2, best->size() / 2)) return "";
  return fmt::format(" (did you mean '{}'?)", *best);
}

int64_t json_int(const nlohmann::json& layer, const std::string& where, const char* key) {
  auto it = layer.find(key);
  if (it == layer.end() || !it->is_number_integer())
    throw Error(fmt::format("configs/layers.json: {}: field '{}' is missing or not an integer",
                            where, key));
  return it->get<int64_t>();
}

std::vector<Network> load_zoo() {
  const char* text = embedded_file("configs/layers.json");
  if (!text) throw Error("configs/layers.json is not embedded in this build; rebuild convtune");
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("configs/layers.json: {}", e.what()));
  }
  if (doc.value("format_version", 0) != 1 || !doc.contains("networks") ||
      !doc["networks"].is_array())
    throw Error("configs/layers.json: expected format_version 1 with a 'networks' array");
  std::vector<Network> zoo;
  for (const auto& net : doc["networks"]) {
    Network n;
    n.name = net.value("name", "");
    if (n.name.empty() || !net.contains("layers") || !net["layers"].is_array())
      throw Error("configs/layers.json: every network needs a 'name' and a 'layers' array");
    for (const auto& layer : net["layers"]) {
      Shape s;
      s.name = layer.value("name", "");
      if (s.name.empty())
        throw Error(fmt::format("configs/layers.json: a layer of '{}' has no name", n.name));
      for (const auto& [key, value] : layer.items())
        if (key != "name" && fields_of(key).empty())
          throw Error(fmt::format("configs/layers.json: {}: unknown field '{}'", s.name, key));
      // Old tables name stride and pad only; the per-axis fields, dilation and groups are optional.
      for (const char* f : {"N", "K", "C", "H", "W", "R", "S"}) *field_ptr(s, f) = json_int(layer, s.name, f);
      for (const auto& [key, value] : layer.items()) {
        if (key == "name" || key.size() == 1) continue;
        const int64_t v = json_int(layer, s.name, key.c_str());
        for (const auto& f : fields_of(key)) *field_ptr(s, f) = v;
      }
      validate_shape(s);
      n.layers.push_back(s);
    }
    zoo.push_back(std::move(n));
  }
  return zoo;
}

const std::vector<Network>& cached_zoo() {
  static const std::vector<Network> zoo = load_zoo();
  return zoo;
}

}  // namespace

double Shape::flops() const {
  return 2.0 * double(N) * double(K) * double(Cg()) * double(R) * double(S) * double(Ho()) *
         double(Wo());
}

double Shape::real_flops() const {
  // Rows and columns are independent, so the valid (oh,ow,r,s) count factors.
  double rows = double(valid_pairs(H, Ho(), R, stride_h, pad_t, dil_h));
  double cols = double(valid_pairs(W, Wo(), S, stride_w, pad_l, dil_w));
  return 2.0 * double(N) * double(K) * double(Cg()) * rows * cols;
}

double Shape::tensor_bytes() const {
  const double in = double(N) * double(C) * double(H) * double(W), wei = double(K) * double(Cg()) * double(R) * double(S),
               out = double(N) * double(K) * double(Ho()) * double(Wo());
  return 4.0 * (in + wei + out);
}

std::string Shape::to_string() const {
  std::string t = fmt::format("N={},K={},C={},H={},W={},R={},S={},", N, K, C, H, W, R, S);
  t += stride_h == stride_w ? fmt::format("stride={}", stride_h)
                            : fmt::format("stride_h={},stride_w={}", stride_h, stride_w);
  if (pad_t == pad_l && pad_t == pad_b && pad_t == pad_r) t += fmt::format(",pad={}", pad_t);
  else if (pad_t == pad_b && pad_l == pad_r) t += fmt::format(",pad_h={},pad_w={}", pad_t, pad_l);
  else t += fmt::format(",pad_t={},pad_l={},pad_b={},pad_r={}", pad_t, pad_l, pad_b, pad_r);
  if (dil_h != 1 || dil_w != 1)
    t += dil_h == dil_w ? fmt::format(",dilation={}", dil_h) : fmt::format(",dilation_h={},dilation_w={}", dil_h, dil_w);
  if (groups != 1) t += fmt::format(",groups={}", groups);
  return t;
}

Shape parse_shape(const std::string& text) {
  // Only spaces and tabs are blanks here: a control character stays in the
  // field and shows as '?' in the error (MessagesStayOneLine).
  const auto trim = [](const std::string& t) { return convtune::trim(t, " \t"); };
  if (trim(text).empty())
    throw Error("shape: empty shape; give at least K, C, H and R, e.g. K=512,C=256,H=34,R=3");
  Shape s;
  std::string given[kNumFields];  // the text-form name that set each field
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string item = trim(text.substr(start, comma == std::string::npos ? std::string::npos
                                                                          : comma - start));
    if (item.empty())
      throw Error(fmt::format("shape: empty field in '{}'; separate fields with single commas",
                              printable(text)));
    size_t eq = item.find('=');
    if (eq == std::string::npos)
      throw Error(fmt::format("shape: '{}' is not a field=value pair; write e.g. K=512",
                              printable(item)));
    std::string key = trim(item.substr(0, eq)), value = trim(item.substr(eq + 1));
    const std::vector<std::string> fields = fields_of(key);
    if (fields.empty())
      throw Error(fmt::format("shape: field '{}' is unknown; use N,K,C,H,W,R,S,stride,pad,dilation,groups "
                              "(per axis: stride_h,stride_w,pad_h,pad_w,pad_t,pad_l,pad_b,pad_r,dilation_h,dilation_w)",
                              printable(key)));
    for (const auto& f : fields) {
      std::string& by = given[field_index(f)];
      if (!by.empty())
        throw Error(by == key ? fmt::format("shape: field '{}' given twice", key)
                              : fmt::format("shape: '{}' and '{}' both set {}; give one of them", by, key, f));
      by = key;
    }
    bool digits = !value.empty() && std::all_of(value.begin(), value.end(), [](char ch) {
      return std::isdigit(static_cast<unsigned char>(ch));
    });
    if (!digits || (!is_pad(key) && value.find_first_not_of('0') == std::string::npos))
      throw Error(fmt::format("shape: '{}={}' is not a {} integer", key, printable(value),
                              is_pad(key) ? "non-negative" : "positive"));
    const size_t nonzero = std::min(value.find_first_not_of('0'), value.size());
    if (value.size() - nonzero > 9)  // more than 9 digits: beyond every limit, and beyond stoll
      throw Error(fmt::format("shape: {}={} is too large; {} is at most {}", key, printable(value), key,
                              field_limit(fields[0])));
    const int64_t v = std::stoll(value);
    if (v > field_limit(fields[0]))  // named as typed, not as the field it sets
      throw Error(fmt::format("shape: {}={} is too large; {} is at most {}", key, v, key, field_limit(fields[0])));
    for (const auto& f : fields) *field_ptr(s, f) = v;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  for (const char* required : {"K", "C", "H", "R"})
    if (given[field_index(required)].empty())
      throw Error(fmt::format("shape: {} is missing; give it as {}=<int>", required, required));
  if (given[field_index("W")].empty()) s.W = s.H;
  if (given[field_index("S")].empty()) s.S = s.R;
  // "Same" padding for odd kernels, per axis, where no pad of that side was given.
  const int64_t same_h = (s.dil_h * (s.R - 1)) / 2, same_w = (s.dil_w * (s.S - 1)) / 2;
  for (auto [f, v] : {std::pair<const char*, int64_t>{"pad_t", same_h}, {"pad_b", same_h}, {"pad_l", same_w},
                      {"pad_r", same_w}})
    if (given[field_index(f)].empty()) *field_ptr(s, f) = v;
  validate_shape(s);
  return s;
}

void validate_shape(const Shape& s) {
  Shape copy = s;
  for (const char* name : kFieldNames) {
    const int64_t v = *field_ptr(copy, name), min = is_pad(name) ? 0 : 1;
    if (v < min) throw Error(fmt::format("shape: {}={} must be >= {}", name, v, min));
    if (v > field_limit(name))
      throw Error(fmt::format("shape: {}={} is too large; {} is at most {}", name, v, name,
                              field_limit(name)));
  }
  for (auto [name, v] : {std::pair<const char*, int64_t>{"C", s.C}, {"K", s.K}})
    if (v % s.groups != 0)
      throw Error(fmt::format("shape: groups={} does not divide {}={}; groups must divide both C and K", s.groups,
                              name, v));
  // Every field is now small enough that the padded sizes and Ho, Wo cannot overflow.
  auto spans = [](const char* f, int64_t n, int64_t dil, int64_t span, const char* what, const char* padded,
                  int64_t size) {
    const std::string kernel = dil == 1 ? fmt::format("{}={} is larger than", f, n)
                                        : fmt::format("{}={} at dilation {} spans {} {}, more than", f, n, dil, span, what);
    return Error(fmt::format("shape: {} {}={}; use a smaller {}{}, or more pad", kernel, padded, size, f,
                             dil == 1 ? "" : " or dilation"));
  };
  if (s.Re() > s.Hp()) throw spans("R", s.R, s.dil_h, s.Re(), "rows", "H+pad_t+pad_b", s.Hp());
  if (s.Se() > s.Wp()) throw spans("S", s.S, s.dil_w, s.Se(), "columns", "W+pad_l+pad_r", s.Wp());
  const int64_t Kp = s.padded_K(kLanesBound);
  const int64_t input = product({s.N, s.Hp(), s.Wp(), s.C});
  const int64_t weights = product({s.R, s.S, s.Cg(), Kp});
  const int64_t output = product({s.N, s.Ho(), s.Wo(), Kp});
  auto too_big = [](const char* what, const std::string& factors, int64_t floats,
                    const char* fix) {
    return Error(fmt::format("shape: the {} ({}) holds {} floats, more than the limit of {} "
                             "(1 GiB); use a smaller {}",
                             what, factors, floats, kMaxOperand, fix));
  };
  if (input > kMaxOperand)
    throw too_big("input", fmt::format("N={} x (H+pad_t+pad_b)={} x (W+pad_l+pad_r)={} x C={}", s.N, s.Hp(),
                                       s.Wp(), s.C),
                  input, "N, H, W, C or pad");
  if (weights > kMaxOperand)
    throw too_big("weights", fmt::format("R={} x S={} x C/groups={} x K padded to {}={}", s.R, s.S, s.Cg(),
                                         kLanesBound, Kp),
                  weights, "R, S, C or K");
  if (output > kMaxOperand)
    throw too_big("output", fmt::format("N={} x Ho={} x Wo={} x K padded to {}={}", s.N, s.Ho(),
                                        s.Wo(), kLanesBound, Kp),
                  output, "N, H, W, K or pad, or a larger stride");
  if (input + weights + output > kMaxRun)
    throw Error(fmt::format("shape: input, weights and output together hold {} floats, more than "
                            "the limit of {} (2 GiB) for one run; use a smaller shape",
                            input + weights + output, kMaxRun));
  if (s.flops() > kMaxFlops)
    throw Error(fmt::format("shape: {:.3g} FLOP per convolution is more than the limit of {:.3g} "
                            "(minutes per call on one core); use a smaller shape",
                            s.flops(), kMaxFlops));
}

std::vector<Network> zoo() { return cached_zoo(); }

std::string layer_id(const Shape& s) {
  if (!s.name.empty()) return s.name;
  std::string id = fmt::format("N{}_K{}_C{}_H{}_W{}_R{}_S{}_st", s.N, s.K, s.C, s.H, s.W, s.R, s.S);
  id += s.stride_h == s.stride_w ? fmt::format("{}", s.stride_h) : fmt::format("{}x{}", s.stride_h, s.stride_w);
  id += s.pad_t == s.pad_l && s.pad_t == s.pad_b && s.pad_t == s.pad_r
            ? fmt::format("_p{}", s.pad_t)
            : fmt::format("_p{}-{}-{}-{}", s.pad_t, s.pad_l, s.pad_b, s.pad_r);
  if (s.dil_h != 1 || s.dil_w != 1)
    id += s.dil_h == s.dil_w ? fmt::format("_d{}", s.dil_h) : fmt::format("_d{}x{}", s.dil_h, s.dil_w);
  if (s.groups != 1) id += fmt::format("_g{}", s.groups);
  return id;
}

Shape zoo_layer(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& net : cached_zoo())
    for (const auto& layer : net.layers) {
      if (layer.name == name) return layer;
      names.push_back(layer.name);
    }
  throw Error(fmt::format("unknown layer {}; run 'convtune layers' to list them{}", quote_text(name),
                          suggestion(name, names)));
}

Network zoo_network(const std::string& name) {
  std::vector<std::string> names;
  std::string list;
  for (const auto& net : cached_zoo()) {
    if (net.name == name) return net;
    names.push_back(net.name);
    list += (list.empty() ? "" : ", ") + net.name;
  }
  throw Error(fmt::format("unknown network {}; the networks are {}{}", quote_text(name), list,
                          suggestion(name, names)));
}

}  // namespace convtune
