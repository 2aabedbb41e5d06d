#pragma once
// The NCCL log reader's cursor over one message (core/nccl_log.cpp): private to the reader.
#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>

namespace railkit::nccl_log_detail {

/// A forward-only reader over one message; every step fails softly (returns false/nullopt).
class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}
  std::string_view rest() const { return s_; }
  bool done() const { return s_.empty(); }
  void spaces() {
    while (!s_.empty() && s_.front() == ' ') s_.remove_prefix(1);
  }
  bool lit(std::string_view l) {
    if (!s_.starts_with(l)) return false;
    s_.remove_prefix(l.size());
    return true;
  }
  std::optional<int> integer() {
    int v = 0;
    auto [p, ec] = std::from_chars(s_.data(), s_.data() + s_.size(), v);
    if (ec != std::errc{}) return std::nullopt;
    s_.remove_prefix(static_cast<std::size_t>(p - s_.data()));
    return v;
  }
  /// Skips a bracketed "[...]" if one starts here.
  void bracket() {
    if (!s_.starts_with('[')) return;
    auto close = s_.find(']');
    s_.remove_prefix(close == std::string_view::npos ? s_.size() : close + 1);
  }
  /// Characters up to (not including) any of `stops`, or to the end.
  std::string_view until(std::string_view stops) {
    auto n = std::min(s_.find_first_of(stops), s_.size());
    auto out = s_.substr(0, n);
    s_.remove_prefix(n);
    return out;
  }

 private:
  std::string_view s_;
};

}  // namespace railkit::nccl_log_detail
