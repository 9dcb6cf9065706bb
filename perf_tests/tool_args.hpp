#pragma once
// What the small perf_tests tools (int8_rates, int8_algos) share: MxNxK shape lists, positive
// integer arguments and medians.  Plain C++ (int8_algos does not link Kokkos).
#include <algorithm>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace perf_tool {

struct Shape {
  std::int64_t m, n, k;
};

/// The non-empty items of s between separators.
inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

/// s as an integer >= 1, or std::invalid_argument naming `what`.
inline std::int64_t positive(const std::string& s, const char* what) {
  std::size_t used = 0;
  long long v = -1;
  try {
    v = std::stoll(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || v < 1) throw std::invalid_argument(std::string(what) + " '" + s + "'");
  return v;
}

/// "MxNxK,MxNxK,..." as shapes.
inline std::vector<Shape> parse_shapes(const std::string& list) {
  std::vector<Shape> shapes;
  for (const auto& item : split(list, ',')) {
    const auto d = split(item, 'x');
    if (d.size() != 3) throw std::invalid_argument("shape '" + item + "' (expected MxNxK)");
    shapes.push_back({positive(d[0], "M"), positive(d[1], "N"), positive(d[2], "K")});
  }
  return shapes;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace perf_tool
