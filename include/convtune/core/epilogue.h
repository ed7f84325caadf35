#pragma once
// What a generated convolution does to each output element after its
// reduction, in registers before the store (issue 13): a bias per output
// channel, then optionally ReLU, ReLU6 or the add of a residual tensor.
// Part of a tuning's identity (records, out dir), so one type for all stages.
#include <string>
#include <vector>

namespace convtune {

// The values are microkernels/reference.h's CT_EPILOGUE_* (the C side).
enum class Epilogue { none = 0, bias = 1, bias_relu = 2, bias_relu6 = 3, bias_add = 4 };

/// "none", "bias", "bias,relu", "bias,relu6", "bias,add" (as --epilogue spells them).
std::string to_string(Epilogue e);
/// Every spelling, in enum order.
const std::vector<std::string>& epilogue_names();
/// Parses an --epilogue value; throws Error listing the choices.
Epilogue parse_epilogue(const std::string& text);
/// "" for none, else "-bias-relu" etc.: what default out dirs append.
std::string epilogue_suffix(Epilogue e);

inline bool has_bias(Epilogue e) { return e != Epilogue::none; }
inline bool has_residual(Epilogue e) { return e == Epilogue::bias_add; }

}  // namespace convtune
