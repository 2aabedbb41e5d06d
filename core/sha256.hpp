#pragma once
// SHA-256 (FIPS 180-4): content hashes a browser checks, such as the Content-Security-Policy
// hash of an HTML page's inline script (report/html_common).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace railkit {

/// The 32-byte SHA-256 digest of `bytes`.
std::array<std::uint8_t, 32> sha256(std::string_view bytes);

/// The digest as 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);

}  // namespace railkit
