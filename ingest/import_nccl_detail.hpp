#pragma once
// What the nccl-tests readers share: the text reader (import_nccl_text.cpp) and the -J JSON reader
// (import_nccl_tests.cpp). Private to ingest/.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/import.hpp"

namespace railkit::ingest::nccl_detail {

/// The collective named by a program name or path ("./build/all_reduce_perf", "sendrecv_perf_mpi");
/// "" when none. Sets *foreign for nccl-tests programs railkit has no collective for (gather_perf ...).
std::string op_of_program(std::string_view name, bool* foreign);
/// nccl-tests' type names as railkit dtypes; "" for the types railkit lacks (fp8).
std::string dtype_of(std::string_view t);
std::size_t element_size(std::string_view dtype);
/// NCCL's version code (22809) as "NCCL 2.28.9".
std::string nccl_version_name(long long code);

/// What a table row shows of its collective when no line names it.
struct RowShape {
  bool has_redop = false, has_root = false;  ///< the table prints these columns
  std::string redop;                         ///< as printed ("" when no column)
  int root = -1;
  std::uint64_t size = 0, count = 0;
  std::size_t esize = 1;
  int nranks = 0;                            ///< 0: unknown (no device lines)
};
/// The collectives whose nccl-tests table prints a row of this shape (columns of the format the
/// table has, count x type size against size); more than one when the shape cannot tell.
std::vector<std::string> op_candidates(const RowShape& s);

/// The nccl-tests text reader (import_nccl_text.cpp); documents not yet named or labelled.
ImportResult import_text(std::string_view text, const std::string& file, const ImportOptions& o);

}  // namespace railkit::ingest::nccl_detail
